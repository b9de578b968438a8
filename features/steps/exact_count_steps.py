"""Steps for features/budget/exact_counts.feature: the budget counting with the server."""

from __future__ import annotations

from typing import Any

from behave import given, then, when
from behave.runner import Context

from leanloop import LLMAgent
from leanloop.testing.server import FakeModelServer, echo


def _server(context: Context, n_ctx: int, *, exact: bool) -> None:
    # Dense: one token a character of the rendered template (the default tokenizer, len),
    # so a character estimate is three times too low, as for logs and numbers.
    server = FakeModelServer(n_ctx=n_ctx, count_prompts=True, handler=echo(limit=40))
    if not exact:
        # The server still counts its prompts; it only will not render one for a client.
        server.route("POST", "/apply-template", {"error": "File Not Found"}, status=404)
    context.add_cleanup(server.start().stop)
    context.dense = server


def _counts(server: FakeModelServer) -> list[int | None]:
    """The prompt size of each chat request, as the server counted it."""
    return [e.prompt_tokens for e in server.exchanges]


def _refused(server: FakeModelServer) -> int:
    return sum(e.reply is not None and e.reply.status == 400 for e in server.exchanges)


@given("a dense llama.cpp server with a window of {n_ctx:d} tokens")
def step_dense(context: Context, n_ctx: int) -> None:
    _server(context, n_ctx, exact=True)


@given("a dense llama.cpp server with a window of {n_ctx:d} tokens that cannot render requests")
def step_dense_plain(context: Context, n_ctx: int) -> None:
    _server(context, n_ctx, exact=False)


@given('a dense workspace file "{name}" of {size:d} characters of digits')
def step_dense_file(context: Context, name: str, size: int) -> None:
    folder = context.tmp / "dense-ws"
    folder.mkdir(exist_ok=True)
    line = "0123456789" * 7 + "\n"
    (folder / name).write_text((line * (size // len(line) + 1))[:size], encoding="utf-8")


@given("an agent on the dense server")
def step_dense_agent(context: Context) -> None:
    folder = context.tmp / "dense-ws"
    folder.mkdir(exist_ok=True)
    path = context.tmp / "dense.yaml"
    path.write_text(
        f"""version: 1
agents:
  reader:
    model:
      provider: openai-compatible
      model: dense-{id(context.dense)}
      base_url: {context.dense.base_url}
      api_key: none
      temperature: 0
    tools: [read_file]
    workspace: {folder}
""",
        encoding="utf-8",
    )
    context.dense_agent = LLMAgent.from_file(path)


@when('the dense agent is asked "{question}"')
def step_dense_ask(context: Context, question: str) -> None:
    context.dense_answer = context.dense_agent.invoke(question)


def _report(context: Context) -> dict[str, Any]:
    return dict(context.dense_answer.response_metadata["leanloop"])


@then("every request's figure in the report equals the server's count")
def step_figures(context: Context) -> None:
    requests = _report(context)["requests"]
    assert requests, "no request"
    for record in requests:
        assert record["estimated_tokens"] == record["input_tokens"], record
    assert [r["input_tokens"] for r in requests] == _counts(context.dense)


@then("the dense server was asked to render and count each request")
def step_rendered(context: Context) -> None:
    chats = sum(p.endswith("/chat/completions") for p in context.dense.paths)
    assert context.dense.paths.count("/apply-template") >= chats >= 1, context.dense.paths
    assert context.dense.paths.count("/tokenize") >= chats, context.dense.paths


@then("the dense server refused no request")
def step_no_refusal(context: Context) -> None:
    assert _refused(context.dense) == 0, _counts(context.dense)


@then("the dense server refused {count:d} request")
def step_refused(context: Context, count: int) -> None:
    refused = _refused(context.dense)
    assert refused == count, (refused, _counts(context.dense))


@then("the run made no overflow recovery")
def step_no_recovery(context: Context) -> None:
    assert _report(context)["overflow_recoveries"] == 0, _report(context)["events"]


@then("the run made {count:d} overflow recovery")
def step_recoveries(context: Context, count: int) -> None:
    assert _report(context)["overflow_recoveries"] == count, _report(context)["events"]


@then("the prefetched read of data.log was trimmed in the request")
def step_trimmed(context: Context) -> None:
    report = _report(context)
    assert report["prefetched"] == ["data.log"], report["prefetched"]
    (call,) = [c for c in report["tool_calls"] if c["step"] == 0]
    assert call["trimmed_at"] == 1, call
    first = report["requests"][0]
    assert first["input_tokens"] <= first["ceiling"], first


@then("the dense server was asked to render at most {count:d} times")
def step_render_bounded(context: Context, count: int) -> None:
    assert context.dense.paths.count("/apply-template") <= count, context.dense.paths
