"""Smoke run of benchmarks/serve_load.py: 20 streamed requests at once through a real
``leanloop serve`` on 127.0.0.1, no errors, no cross-talk, the table printed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "serve_load.py"


@pytest.fixture(scope="module")
def serve_load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("serve_load", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["serve_load"] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["serve_load"]
    return module


async def test_twenty_streamed_requests_at_once(serve_load: ModuleType) -> None:
    result = await serve_load.run_load(20, limit_s=90)
    assert result.errors == []
    assert result.crosstalk == []
    assert len(result.served) == 20
    assert len(result.direct) == 20
    assert result.ok
    table = result.table()
    assert "| ratio (serve / direct) |" in table
    assert "errors: 0; cross-talk: 0" in table


def test_a_wrong_answer_is_cross_talk_not_success(serve_load: ModuleType) -> None:
    result = serve_load.LoadResult(2, served=[0.1], crosstalk=["b: 'Answer to nonce a'"])
    assert not result.ok
    assert "cross-talk: 1" in result.table()
