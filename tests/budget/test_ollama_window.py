"""Ollama runs at the window leanloop budgets for (moved from features/ollama_window.feature,
issue 26).

Ollama loads a model at the num_ctx each request asks for (its own default of 2,048 or
4,096 when none does) and cuts the front of a longer prompt without a word. So for
``provider: ollama`` the window is the file's context_window, else the loaded model's
context_length from /api/ps, else the Modelfile's num_ctx, else a default of 8,192 that
says it is one; never the trained length alone. Every request of a run asks for it. The
window test server and the resolver on a fake clock are in tests/budget/conftest.py.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from langchain_core.messages import HumanMessage

from leanloop.agent import LLMAgent
from leanloop.budget import WindowResolver
from leanloop.budget.run import resolve_window, sized_model
from leanloop.budget.window import Window
from leanloop.exceptions import SpecError
from leanloop.models import build_chat_model
from leanloop.spec.types import AgentSpec, ModelSpec

Windows = Any  # tests/budget/conftest.py's Windows


async def test_the_trained_length_alone_is_never_the_window(windows: Windows) -> None:
    info = {"general.architecture": "qwen3", "qwen3.context_length": 131072}
    windows.server.answer("POST", "/api/show", {"model_info": info})

    window = await windows.at_server("ollama", "qwen3:4b")

    windows.check(window, 8192, "default:ollama")
    assert window.note
    assert "num_ctx 8,192, leanloop's default (the model was trained for 131,072)" in window.note
    assert "set context_window" in window.note


async def test_a_model_trained_for_less_than_the_default_asks_for_its_trained_length(
    windows: Windows,
) -> None:
    info = {"general.architecture": "llama", "llama.context_length": 2048}
    windows.server.answer("POST", "/api/show", {"model_info": info})

    window = await windows.at_server("ollama", "tinyllama")

    windows.check(window, 2048, "default:ollama")
    assert window.note and "the length the model was trained for" in window.note


async def test_the_modelfile_num_ctx_wins_over_the_trained_length(windows: Windows) -> None:
    info = {"general.architecture": "qwen3", "qwen3.context_length": 131072}
    windows.server.answer("POST", "/api/show", {"parameters": "num_ctx 12288", "model_info": info})

    windows.check(await windows.at_server("ollama", "qwen3:4b"), 12288, "server:ollama-show")


async def test_another_loaded_model_context_says_nothing_about_this_one(
    windows: Windows,
) -> None:
    other = {"name": "other:7b", "model": "other:7b", "context_length": 2048}
    windows.server.answer("GET", "/api/ps", {"models": [other]})

    windows.check(await windows.at_server("ollama", "qwen3:4b"), 8192, "default:ollama")


async def test_an_ollama_nothing_answers_at_gets_the_default_which_says_so(
    windows: Windows,
) -> None:
    def unreachable() -> httpx.AsyncClient:
        def refuse(request: httpx.Request) -> httpx.Response:
            raise httpx.ConnectError("no route", request=request)

        return httpx.AsyncClient(transport=httpx.MockTransport(refuse))

    windows.resolver = WindowResolver(client_factory=unreachable)

    window = await windows.resolve(
        provider="ollama", base_url="http://127.0.0.1:11434", model_name="gpt-4o"
    )

    windows.check(window, 8192, "default:ollama")
    assert window.note and "Ollama reports no loaded" in window.note


async def test_the_default_is_asked_again_soon_the_first_request_loads_the_model(
    windows: Windows,
) -> None:
    windows.check(await windows.at_server("ollama", "qwen3:4b"), 8192, "default:ollama")
    loaded = {"name": "qwen3:4b", "model": "qwen3:4b", "context_length": 8192}
    windows.server.answer("GET", "/api/ps", {"models": [loaded]})
    windows.advance(3.5)

    window = await windows.at_server("ollama", "qwen3:4b")

    assert not windows.sent_nothing_new()
    windows.check(window, 8192, "server:ollama-ps")


async def test_num_ctx_in_kwargs_is_the_configured_window_and_no_server_is_asked(
    windows: Windows,
) -> None:
    spec = ModelSpec(
        provider="ollama", model="qwen3:4b", base_url=windows.server.root, kwargs={"num_ctx": 12288}
    )

    window = await resolve_window(spec, build_chat_model(spec))

    assert isinstance(window, Window)
    assert (window.tokens, window.source, window.note) == (12288, "config", None), window
    assert windows.server.count() == 0, windows.server.seen


def _options(model: Any) -> dict[str, Any]:
    """The ``options`` ChatOllama puts into its request body for a one-message request."""
    params = model._chat_params([HumanMessage(content="hi")])
    return dict(params["options"] or {})


@pytest.mark.parametrize(
    ("configured", "window", "built"),
    [(None, 16384, None), (None, 8192, None), (6000, 6000, 6000)],
    ids=["no context_window 16384", "no context_window 8192", "context_window 6000"],
)
def test_the_run_ollama_model_asks_for_the_run_window(
    configured: int | None, window: int, built: int | None
) -> None:
    spec = ModelSpec(provider="ollama", model="qwen3:4b", context_window=configured)
    model = build_chat_model(spec)
    assert type(model).__name__ == "ChatOllama", type(model)

    sized = sized_model(spec, model, Window(window, "server:ollama-ps"))

    assert sized is not None
    assert _options(sized).get("num_ctx") == window
    assert _options(model).get("num_ctx") == built
    assert sized._async_client is model._async_client  # type: ignore[attr-defined]
    assert sized._client is model._client  # type: ignore[attr-defined]


def test_other_providers_models_are_sent_as_they_are() -> None:
    spec = ModelSpec(provider="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1")
    model = build_chat_model(spec)
    assert type(model).__name__ == "ChatOpenAI", type(model)

    assert sized_model(spec, model, Window(16384, "server:ollama-ps")) is model


def test_context_window_and_kwargs_num_ctx_together_are_one_setting_given_twice() -> None:
    spec = ModelSpec(
        provider="ollama", model="qwen3:4b", context_window=6000, kwargs={"num_ctx": 8192}
    )

    with pytest.raises(SpecError) as failed:
        build_chat_model(spec)

    assert "kwargs.num_ctx sets what 'context_window' sets; give it once" in str(failed.value)


async def test_every_request_of_a_run_asks_ollama_for_the_window_in_the_run_report(
    windows: Windows,
) -> None:
    windows.server.answer(
        "POST",
        "/api/chat",
        {
            "model": "qwen3:4b",
            "message": {"role": "assistant", "content": "Hello."},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 20,
            "eval_count": 2,
        },
    )
    spec = AgentSpec(
        name="ollama",
        model=ModelSpec(provider="ollama", model="qwen3:4b", base_url=windows.server.root),
    )

    message = await LLMAgent.from_spec(spec, tools=[]).ainvoke("Hi")

    report = dict(message.response_metadata["leanloop"])
    assert report["stop_reason"] == "answer", report
    assert (report["window"], report["window_source"]) == (8192, "default:ollama"), report
    assert "default" in (report["window_note"] or ""), report
    seen = windows.server.seen
    bodies = [json.loads(s.body) for s in seen if s.path == "/api/chat"]
    assert bodies, [(s.method, s.path) for s in seen]
    sent = [(b.get("options") or {}).get("num_ctx") for b in bodies]
    assert sent == [8192] * len(bodies), sent
