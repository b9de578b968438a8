"""The prompting profile under ``auto`` follows what the server says it serves (issue 37).

``model: qwen`` on a llama.cpp serving a 0.5B got the default profile, by the name alone;
the server's ``/v1/models`` (``meta.n_params``) and ``/props`` (``model_path``) say more.
The runs at the end check the loop's glue (``AgentLoop._run_profile``): the profile a run
picks from the server's answer is the one it prompts with and the one its path repair
follows, and the server is asked once for both the window and the model.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import SystemMessage, ToolMessage

from leanloop.agent import LLMAgent
from leanloop.budget.window import WindowResolver
from leanloop.loop.profiles import DEFAULT, SMALL, pick_profile
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.testing.server import FakeModelServer


def test_the_parameter_count_decides_before_any_name() -> None:
    assert pick_profile("auto", "qwen", n_params=494_032_768) is SMALL
    assert pick_profile("auto", "qwen", n_params=7_615_616_512) is DEFAULT


def test_the_served_file_name_marks_a_small_model_the_configured_name_does_not() -> None:
    served = "qwen2.5-coder-0.5b-instruct-q8_0.gguf"
    assert pick_profile("auto", "qwen", served=served) is SMALL
    assert pick_profile("auto", "qwen", served="qwen2.5-coder-32b-q4.gguf") is DEFAULT


def test_without_a_word_from_the_server_the_name_decides_as_before() -> None:
    assert pick_profile("auto", "qwen2.5-coder-0.5b") is SMALL
    assert pick_profile("auto", "qwen") is DEFAULT


def test_a_forced_profile_is_never_overruled_by_the_server() -> None:
    assert pick_profile("default", "qwen", n_params=1) is DEFAULT
    assert pick_profile("small", "gpt-4o", n_params=10**12) is SMALL


def _llama_cpp(request: httpx.Request) -> httpx.Response:
    """A llama.cpp server serving a 0.5B file under the alias ``qwen``."""
    if request.url.path == "/props":
        body = {
            "default_generation_settings": {"n_ctx": 8192},
            "model_path": "/models/qwen2.5-coder-0.5b-instruct-q8_0.gguf",
        }
        return httpx.Response(200, content=json.dumps(body))
    if request.url.path == "/v1/models":
        entry = {"id": "qwen", "meta": {"n_ctx": 8192, "n_params": 494_032_768}}
        return httpx.Response(200, content=json.dumps({"data": [entry]}))
    return httpx.Response(404)


def test_the_resolver_reads_the_served_model_and_its_size_from_llama_cpp() -> None:
    resolver = WindowResolver(
        client_factory=lambda: httpx.AsyncClient(transport=httpx.MockTransport(_llama_cpp))
    )

    said = asyncio.run(
        resolver.served(
            provider="openai-compatible", base_url="http://127.0.0.1:8765/v1", model_name="qwen"
        )
    )

    assert said is not None
    assert (said.tokens, said.served, said.n_params) == (
        8192,
        "qwen2.5-coder-0.5b-instruct-q8_0.gguf",
        494_032_768,
    )
    assert pick_profile("auto", "qwen", served=said.served, n_params=said.n_params) is SMALL


def test_a_hosted_api_is_not_asked() -> None:
    def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"asked {request.url}")

    resolver = WindowResolver(
        client_factory=lambda: httpx.AsyncClient(transport=httpx.MockTransport(never))
    )
    said = asyncio.run(
        resolver.served(
            provider="openai", base_url="https://api.openai.com/v1", model_name="gpt-4o"
        )
    )
    assert said is None


# --- a run's profile, from what its server serves ----------------------------------------

_SMALL_PARAMS = 494_032_768
_LARGE_PARAMS = 7_615_616_512


@pytest.fixture
def served() -> Iterator[FakeModelServer]:
    """A llama.cpp stand-in serving under the alias ``qwen``; each test says which model.

    The chat goes to a scripted model: the server only answers what the run asks of it
    before its first request (the window and the served model).
    """
    server = FakeModelServer(model="qwen", n_ctx=8192, tokenizer=None, template=None)
    with server:
        yield server


def _serves(server: FakeModelServer, file: str, n_params: int) -> None:
    props = {"default_generation_settings": {"n_ctx": 8192}, "model_path": f"/models/{file}"}
    server.route("GET", "/props", props)
    entry = {"id": "qwen", "object": "model", "meta": {"n_ctx": 8192, "n_params": n_params}}
    server.route("GET", "/v1/models", {"object": "list", "data": [entry]})


def _run(
    server: FakeModelServer, workspace: Path, **fields: Any
) -> tuple[dict[str, Any], ScriptedChatModel]:
    """Ask an agent ``model: qwen`` on ``server`` about bio.txt; it reads a made-up path."""
    (workspace / "bio.txt").write_text("Ada Lovelace (1815-1852).\n", encoding="utf-8")
    model = ScriptedChatModel(
        replies=[
            {"tool_calls": [{"name": "read_file", "args": {"path": "Ada Lovelace.txt"}}]},
            "Ada Lovelace.",
        ]
    )
    spec = AgentSpec(
        name="reader",
        model=ModelSpec(
            provider="openai-compatible", model="qwen", base_url=server.base_url, api_key="x"
        ),
        tools=("read_file",),
        workspace=workspace,
        prefetch_mentioned_files=False,
        **fields,
    )
    agent = LLMAgent.from_spec(spec, model=model)
    answer = asyncio.run(agent.ainvoke("Who is described in bio.txt?"))
    report: dict[str, Any] = answer.response_metadata["leanloop"]
    return report, model


def _result(model: ScriptedChatModel) -> str:
    (result,) = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)]
    return result.text


def test_a_run_on_a_server_serving_a_small_model_prompts_and_repairs_as_small(
    served: FakeModelServer, tmp_path: Path
) -> None:
    _serves(served, "qwen2.5-coder-0.5b-instruct-q8_0.gguf", _SMALL_PARAMS)

    report, model = _run(served, tmp_path)

    assert report["prompt_profile"] == "small"
    system = model.requests[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert SMALL.guidance in system.text, system.text
    assert report["repaired_calls"] == 1, report["tool_calls"]
    assert 'read "bio.txt" (named in the request) instead' in _result(model)
    # One probe for the window and the profile both (the resolver's cache).
    assert served.paths.count("/props") == 1, served.paths
    assert served.paths.count("/v1/models") == 1, served.paths


def test_a_large_served_model_keeps_the_default_profile_and_its_missing_path(
    served: FakeModelServer, tmp_path: Path
) -> None:
    _serves(served, "qwen2.5-coder-7b-instruct-q4_k_m.gguf", _LARGE_PARAMS)

    report, model = _run(served, tmp_path)

    assert report["prompt_profile"] == "default"
    assert report["repaired_calls"] == 0, report["tool_calls"]
    assert "named in the request: bio.txt" in _result(model)


@pytest.mark.parametrize(("repair", "repaired"), [(False, 0), (True, 1)])
def test_an_explicit_repair_paths_beats_the_served_profile(
    served: FakeModelServer, tmp_path: Path, repair: bool, repaired: int
) -> None:
    # The served model says small (repair) or large (none); the file's setting wins.
    size = _LARGE_PARAMS if repair else _SMALL_PARAMS
    _serves(served, "model.gguf", size)

    report, _ = _run(served, tmp_path, repair_paths=repair)

    assert report["prompt_profile"] == ("default" if repair else "small")
    assert report["repaired_calls"] == repaired, report["tool_calls"]
