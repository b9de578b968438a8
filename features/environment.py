"""Behave hooks shared by every feature: a temporary folder per scenario, clean logging."""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
from pathlib import Path

from behave.model import Scenario
from behave.runner import Context

# Shared test doubles and helpers live in features/support (importable as `support`).
sys.path.insert(0, str(Path(__file__).parent))


def before_scenario(context: Context, scenario: Scenario) -> None:
    context.tmp = Path(tempfile.mkdtemp(prefix="leanloop-test-"))
    context.cleanups = []


def after_scenario(context: Context, scenario: Scenario) -> None:
    for cleanup in reversed(context.cleanups):
        cleanup()
    shutil.rmtree(context.tmp, ignore_errors=True)
    logging.getLogger("leanloop").handlers.clear()
