"""The prompting profile under ``auto`` follows what the server says it serves (issue 37).

``model: qwen`` on a llama.cpp serving a 0.5B got the default profile, by the name alone;
the server's ``/v1/models`` (``meta.n_params``) and ``/props`` (``model_path``) say more.
"""

from __future__ import annotations

import asyncio
import json

import httpx

from leanloop.budget.window import WindowResolver
from leanloop.loop.profiles import DEFAULT, SMALL, pick_profile


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
