"""Steps for features/ollama_window.feature: the window an Ollama run asks for.

The resolver steps (the window test server, the fake clock) are those of
``budget_window_steps``; the server they start is ``context.budget_window_server``.
"""

from __future__ import annotations

import json
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import HumanMessage
from support.aio import run

from leanloop.agent import LLMAgent
from leanloop.budget.run import resolve_window, sized_model
from leanloop.budget.window import Window
from leanloop.exceptions import SpecError
from leanloop.models import build_chat_model
from leanloop.spec.types import AgentSpec, ModelSpec


def _root(context: Context) -> str:
    server = context.budget_window_server  # started by the window test server steps
    host, port = server.httpd.server_address[:2]
    return f"http://{host!s}:{port}"


def _options(model: Any) -> dict[str, Any]:
    """The ``options`` ChatOllama puts into its request body for a one-message request."""
    params = model._chat_params([HumanMessage(content="hi")])
    return dict(params["options"] or {})


@given("an Ollama chat model built with {configured}")
def step_built_ollama(context: Context, configured: str) -> None:
    window = (
        int(configured.rsplit(maxsplit=1)[-1]) if configured.startswith("context_window") else None
    )
    spec = ModelSpec(provider="ollama", model="qwen3:4b", context_window=window)
    context.ollama_spec = spec
    context.ollama_model = build_chat_model(spec)
    assert type(context.ollama_model).__name__ == "ChatOllama", type(context.ollama_model)


@given("an openai-compatible chat model")
def step_built_compat(context: Context) -> None:
    spec = ModelSpec(provider="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1")
    context.ollama_spec = spec
    context.ollama_model = build_chat_model(spec)
    assert type(context.ollama_model).__name__ == "ChatOpenAI", type(context.ollama_model)


@when("the model is sized for a window of {tokens:d} tokens")
def step_sized(context: Context, tokens: int) -> None:
    window = Window(tokens, "server:ollama-ps")
    context.ollama_sized = sized_model(context.ollama_spec, context.ollama_model, window)
    assert context.ollama_sized is not None


@when("the window of an Ollama model with kwargs num_ctx {tokens:d} is resolved at the test server")
def step_resolve_kwargs(context: Context, tokens: int) -> None:
    spec = ModelSpec(
        provider="ollama", model="qwen3:4b", base_url=_root(context), kwargs={"num_ctx": tokens}
    )
    model = build_chat_model(spec)
    context.ollama_window = run(resolve_window(spec, model))
    assert isinstance(context.ollama_window, Window)


@when("an Ollama chat model is built with context_window {window:d} and kwargs num_ctx {num:d}")
def step_build_clash(context: Context, window: int, num: int) -> None:
    spec = ModelSpec(
        provider="ollama", model="qwen3:4b", context_window=window, kwargs={"num_ctx": num}
    )
    context.ollama_error = None
    try:
        build_chat_model(spec)
    except SpecError as exc:
        context.ollama_error = exc
    assert context.ollama_error is not None, "the model was built"


@when('an agent on Ollama model "{model}" at the test server answers "{question}"')
def step_agent_run(context: Context, model: str, question: str) -> None:
    spec = AgentSpec(
        name="ollama", model=ModelSpec(provider="ollama", model=model, base_url=_root(context))
    )
    agent = LLMAgent.from_spec(spec, tools=[])
    message = run(agent.ainvoke(question))
    context.ollama_report = dict(message.response_metadata["leanloop"])
    assert context.ollama_report["stop_reason"] == "answer", context.ollama_report


@then("the sized model's request options carry num_ctx {tokens:d}")
def step_sized_options(context: Context, tokens: int) -> None:
    options = _options(context.ollama_sized)
    assert options.get("num_ctx") == tokens, options


@then("the built model still asks for num_ctx {value}")
def step_built_options(context: Context, value: str) -> None:
    expected = None if value == "none" else int(value)
    options = _options(context.ollama_model)
    assert options.get("num_ctx") == expected, options


@then("the sized model shares the built model's HTTP client")
def step_shares_client(context: Context) -> None:
    sized, built = context.ollama_sized, context.ollama_model
    assert sized._async_client is built._async_client
    assert sized._client is built._client


@then("the sized model is the built model")
def step_same_model(context: Context) -> None:
    assert context.ollama_sized is context.ollama_model


@then('the resolved model window is {tokens:d} tokens from "{source}"')
def step_resolved_window(context: Context, tokens: int, source: str) -> None:
    window = context.ollama_window
    assert (window.tokens, window.source, window.note) == (tokens, source, None), window


@then('building the model fails with "{text}"')
def step_build_failed(context: Context, text: str) -> None:
    assert text in str(context.ollama_error), context.ollama_error


@then('the run report\'s window is {tokens:d} tokens from "{source}"')
def step_report_window(context: Context, tokens: int, source: str) -> None:
    report = context.ollama_report
    assert (report["window"], report["window_source"]) == (tokens, source), report
    assert "default" in (report["window_note"] or ""), report


@then("every chat request the test server saw asked for num_ctx {tokens:d}")
def step_every_request(context: Context, tokens: int) -> None:
    server = context.budget_window_server
    bodies = [json.loads(s.body) for s in server.seen if s.path == "/api/chat"]
    assert bodies, [(s.method, s.path) for s in server.seen]
    sent = [(b.get("options") or {}).get("num_ctx") for b in bodies]
    assert sent == [tokens] * len(bodies), sent
