"""Behave hooks shared by every feature: a temporary folder per scenario, clean logging."""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
from pathlib import Path

from behave.model import Scenario, Status
from behave.runner import Context

# Shared test doubles and helpers live in features/support (importable as `support`).
sys.path.insert(0, str(Path(__file__).parent))

from support.logs import capture_logs


def before_scenario(context: Context, scenario: Scenario) -> None:
    context.tmp = Path(tempfile.mkdtemp(prefix="leanloop-test-"))
    context.cleanups = []
    # leanloop's warnings in scenarios that provoke failures on purpose are expected;
    # keep them out of the console and show them only when the scenario fails.
    context.scenario_logs = capture_logs(context)


def after_scenario(context: Context, scenario: Scenario) -> None:
    for cleanup in reversed(context.cleanups):
        cleanup()
    shutil.rmtree(context.tmp, ignore_errors=True)
    logging.getLogger("leanloop").handlers.clear()
    if scenario.status == Status.failed:
        for record in context.scenario_logs.records:
            if record.levelno >= logging.INFO:
                print(f"  log {record.levelname} {record.name}: {record.getMessage()}")
