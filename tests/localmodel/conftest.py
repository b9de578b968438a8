"""Fixtures of the local-model tests: a cache folder and the fake xllamacpp wheels."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leanloop.localmodel.engine import ENGINE_ENV
from leanloop.localmodel.paths import CachePaths

HERE = Path(__file__).parent
FAKE_XLLAMACPP = HERE / "fake_xllamacpp"
"""A folder whose ``xllamacpp`` serves the fake model server (put it on PYTHONPATH)."""
BROKEN_XLLAMACPP = HERE / "broken_xllamacpp"
"""A folder whose ``xllamacpp`` fails to import, as a wheel that does not fit the system."""


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CachePaths:
    """An empty cache of the test's own, with no engine named by the environment."""
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    monkeypatch.setenv("LEANLOOP_CACHE", str(tmp_path / "cache"))
    return CachePaths(tmp_path / "cache")


def _first_on_pythonpath(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Child processes import from ``folder`` before anything installed."""
    rest = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(folder), *([rest] if rest else [])]))


@pytest.fixture
def fake_xllamacpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prebuilt engine's child processes load the fake wheel."""
    _first_on_pythonpath(monkeypatch, FAKE_XLLAMACPP)


@pytest.fixture
def broken_xllamacpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prebuilt engine's child processes find a wheel that does not load."""
    _first_on_pythonpath(monkeypatch, BROKEN_XLLAMACPP)
