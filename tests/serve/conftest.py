"""Fixtures of the serve tests: the scripted agents file in a fresh folder, and the app."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from leanloop.serve import ServeSettings, create_app
from leanloop.serve.main import load_served_agents

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "test-token-0123456789"  # noqa: S105 - a test token
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    """The agents file and its models module, copied so sessions are stored in tmp_path."""
    for name in ("agents.yaml", "serve_models.py"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path / "agents.yaml"


@pytest.fixture
def make_app(agents_file: Path) -> Callable[..., FastAPI]:
    """Build the app over the fixture agents; keyword arguments are ServeSettings fields."""

    def make(**settings: Any) -> FastAPI:
        return create_app(
            load_served_agents(str(agents_file)),
            ServeSettings(**{"token": TOKEN, **settings}),
        )

    return make
