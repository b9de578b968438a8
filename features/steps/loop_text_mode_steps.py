"""Steps for features/loop_text_mode.feature and features/loop_streaming.feature.

The agent loop with the text tool protocol, end to end: ``tool_mode: text`` and ``auto``,
the fallback from native tools when the server refuses them, text calls in native replies,
corrections, flattened tool history, and ``astream`` never showing part of a call.

Replies in the tables are written in a small notation (see :func:`_reply`), so the
scenarios read as conversations: ``[call lookup {"key": "a"}]`` is a ```tool block,
``\\n`` a newline, ``native lookup {...}`` a native tool call, ``refuse <name>`` an
HTTP error from the server.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
import openai
from behave import given, then, when
from behave.runner import Context
from langchain_core.callbacks import AsyncCallbackHandler, AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import BaseTool, StructuredTool
from support.aio import run
from support.logs import capture_logs

from leanloop.agent import LLMAgent
from leanloop.events import TOOL_MODE_CHANGED
from leanloop.exceptions import LeanloopError, ModelError
from leanloop.loop.prompts import FINAL_ANSWER_PROMPT
from leanloop.protocol import TOOL_RESULTS_ARE_DATA, format_tool_call, is_tool_result
from leanloop.protocol.modes import is_tools_refusal
from leanloop.spec.types import AgentSpec, ModelSpec, ToolMode
from leanloop.testing import ScriptedChatModel
from leanloop.tools.loader import build_tools

# ── the test doubles ────────────────────────────────────────────────────────────────


class StreamingScriptedModel(ScriptedChatModel):
    """A scripted model that really streams: each reply arrives in ``piece``-sized chunks.

    ``ScriptedChatModel`` does not stream (LangChain would hand over the whole reply as
    one chunk), which would hide every hold-back decision the loop makes mid-reply.
    """

    piece: int = 3
    """Characters per streamed chunk."""

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        message = self._generate(messages, stop, None, **kwargs).generations[0].message
        text = message.text
        for start in range(0, len(text), self.piece):
            chunk = AIMessageChunk(content=text[start : start + self.piece])
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=None)
            yield ChatGenerationChunk(message=chunk)
        calls = getattr(message, "tool_calls", None) or []
        if calls:
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {
                            "name": c["name"],
                            "args": json.dumps(c["args"]),
                            "id": c["id"],
                            "index": i,
                            "type": "tool_call_chunk",
                        }
                        for i, c in enumerate(calls)
                    ],
                )
            )


@dataclass
class SeenRequest:
    """One request as a test sees it, whichever model served it."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]] = field(default_factory=list)


class RequestRecorder(AsyncCallbackHandler):
    """Records the messages of every chat-model request (for models that keep no log)."""

    def __init__(self) -> None:
        self.seen: list[SeenRequest] = []

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        params = kwargs.get("invocation_params") or {}
        self.seen.append(SeenRequest(list(messages[0]), list(params.get("tools") or [])))


class ToolTable:
    """The ``lookup`` tool the scenarios offer, and what it received."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def lookup_tool(self) -> BaseTool:
        async def lookup(key: str, limit: int = 3) -> str:
            """Look up a key in the test table."""
            self.calls.append({"key": key} if limit == 3 else {"key": key, "limit": limit})
            return f"value of {key}"

        return StructuredTool.from_function(coroutine=lookup, name="lookup")


# ── the reply notation ──────────────────────────────────────────────────────────────

_BLOCK = re.compile(r"\[call (?P<name>[\w.\-]+) (?P<args>[^\]]*)\]")

_SERVER_REFUSALS: dict[str, tuple[int, dict[str, Any]]] = {
    # What the Robot suite's scripted server sends (llama.cpp's message, a 400).
    "tools as the scripted server does": (
        400,
        {
            "error": {
                "code": 400,
                "message": "tools param requires --jinja flag",
                "type": "invalid_request_error",
            }
        },
    ),
    "tools as Ollama does": (
        400,
        {
            "error": {
                "message": "registry.ollama.ai/library/qwen2.5:0.5b does not support tools",
                "type": "api_error",
                "param": None,
                "code": None,
            }
        },
    ),
    # llama-server started without --jinja, as measured against the real binary.
    "tools as llama-server without jinja does": (
        500,
        {
            "error": {
                "code": 500,
                "message": "tools param requires --jinja flag",
                "type": "server_error",
            }
        },
    ),
    # vLLM started without --enable-auto-tool-choice: tools imply tool_choice "auto".
    "tools as vLLM without a tool parser does": (
        400,
        {
            "object": "error",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
            "message": '"auto" tool choice requires --enable-auto-tool-choice and '
            "--tool-call-parser to be set",
        },
    ),
    "tool history": (
        400,
        {
            "error": {
                "code": 400,
                "type": "invalid_request_error",
                "message": "messages with role 'tool' are not supported by this model",
            }
        },
    ),
    "the request": (
        400,
        {
            "error": {
                "code": 400,
                "type": "invalid_request_error",
                "message": "'temperature' must be between 0 and 2",
            }
        },
    ),
}


def provider_error(status: int, body: dict[str, Any]) -> openai.APIStatusError:
    """The error the ``openai`` client raises for an HTTP ``status`` answer with ``body``.

    Built as ``openai`` 3.x builds it (``_make_status_error_from_response``): the text is
    ``Error code: <status> - <the body's message>``; the whole body stays in ``.body``.
    """
    response = httpx.Response(status, json=body, request=httpx.Request("POST", "http://x"))
    kind = openai.BadRequestError if status == 400 else openai.InternalServerError
    payload = body.get("error", body)
    text = f"Error code: {status} - {payload['message']}"
    # Typed against the HTTP client openai was built with (httpx or its httpx2 fork); it
    # only reads the status and headers, which both provide.
    return kind(text, response=cast(Any, response), body=payload)


def _refusal(what: str) -> Callable[[list[BaseMessage]], Any]:
    status, body = _SERVER_REFUSALS[what]

    def refuse(messages: list[BaseMessage]) -> Any:
        raise provider_error(status, body)

    return refuse


def _expand(text: str) -> str:
    text = text.replace("\\n", "\n")
    return _BLOCK.sub(lambda m: format_tool_call(m["name"], json.loads(m["args"])), text)


def _reply(cell: str) -> Any:
    """One reply from the table notation.

    ``native name {json}`` is a native tool call; ``refuse <what>`` raises the provider
    error for ``<what>`` (see ``_SERVER_REFUSALS``); anything else is text, where ``\\n``
    is a newline and ``[call name {json}]`` the ```tool block the text prompt asks for.
    """
    if cell.startswith("native "):
        name, _, args = cell.removeprefix("native ").partition(" ")
        return {"tool_calls": [{"name": name, "args": json.loads(args or "{}")}]}
    if cell.startswith("refuse "):
        return _refusal(cell.removeprefix("refuse "))
    return _expand(cell)


def _replies(context: Context) -> list[Any]:
    return [_reply(row["reply"]) for row in context.table]


def _agent(context: Context, model: BaseChatModel, **policies: Any) -> None:
    context.tool_table = table = ToolTable()
    spec = AgentSpec(
        name="texter",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel"),
        **policies,
    )
    context.text_agent = LLMAgent.from_spec(spec, model=model, tools=[table.lookup_tool()])
    context.text_model = model
    context.text_policies = policies
    context.recorder = RequestRecorder()


def _policies(mode: str, extra: str = "") -> dict[str, Any]:
    policies: dict[str, Any] = {"tool_mode": mode}
    for part in filter(None, (p.strip() for p in extra.split(","))):
        key, _, value = part.partition(" ")
        policies[key] = int(value) if value.isdigit() else value.strip('"')
    return policies


# ── Given ───────────────────────────────────────────────────────────────────────────


@given('a text-mode agent with tool_mode "{mode:w}" replying:')
def step_agent(context: Context, mode: str) -> None:
    _agent(context, ScriptedChatModel(replies=_replies(context)), **_policies(mode))


@given('a text-mode agent with tool_mode "{mode:w}" and {extra} replying:')
def step_agent_policies(context: Context, mode: str, extra: str) -> None:
    _agent(context, ScriptedChatModel(replies=_replies(context)), **_policies(mode, extra))


@given('a text-mode agent on a model without bind_tools, tool_mode "{mode:w}", replying:')
def step_agent_generic(context: Context, mode: str) -> None:
    replies = iter([AIMessage(content=text) for text in _replies(context)])
    _agent(context, GenericFakeChatModel(messages=replies), **_policies(mode))


@given('a text-mode agent whose first request is refused for {what}, tool_mode "{mode:w}":')
def step_agent_refused(context: Context, what: str, mode: str) -> None:
    replies = [_refusal(what), *_replies(context)]
    _agent(context, ScriptedChatModel(replies=replies), **_policies(mode))
    context.refused_for = what
    context.text_logs = capture_logs(context)


@given(
    'a text-mode agent with read_file over a workspace holding "{name}", whose first request '
    'is refused for {what}, tool_mode "{mode:w}":'
)
def step_agent_workspace_refused(context: Context, name: str, what: str, mode: str) -> None:
    workspace = context.tmp / "workspace"
    workspace.mkdir()
    (workspace / name).write_text("The launch code is 4711.\n", encoding="utf-8")
    model = ScriptedChatModel(replies=[_refusal(what), *_replies(context)])
    spec = AgentSpec(
        name="texter",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel"),
        tool_mode=cast(ToolMode, mode),
        tools=("read_file",),
        workspace=workspace,
    )
    tools = build_tools(["read_file"], workspace=workspace)
    context.text_agent = LLMAgent.from_spec(spec, model=model, tools=tools)
    context.text_model = model
    context.recorder = RequestRecorder()
    context.refused_for = what
    context.text_logs = capture_logs(context)


@given('a text-mode stream agent with tool_mode "{mode:w}" in {piece:d}-character pieces replying:')
def step_stream_agent(context: Context, mode: str, piece: int) -> None:
    replies = _replies(context)
    _agent(context, StreamingScriptedModel(replies=replies, piece=piece), **_policies(mode))
    context.stream_script = (replies, piece)


@given(
    'a text-mode stream agent with tool_mode "{mode:w}" and {extra} in {piece:d}-character '
    "pieces replying:"
)
def step_stream_agent_policies(context: Context, mode: str, extra: str, piece: int) -> None:
    replies = _replies(context)
    model = StreamingScriptedModel(replies=replies, piece=piece)
    _agent(context, model, **_policies(mode, extra))
    context.stream_script = (replies, piece)


# ── When ────────────────────────────────────────────────────────────────────────────


async def _run_with_events(context: Context, question: str) -> AIMessage:
    """Run through ``astream_events`` (v2): keeps the custom events and the final answer."""
    context.custom_events = []
    final: Any = None
    config: Any = {"callbacks": [context.recorder]}
    async for event in context.text_agent.astream_events(question, config, version="v2"):
        if event["event"] == "on_custom_event":
            context.custom_events.append((event["name"], event["data"]))
        if event["event"] == "on_chain_end" and not event.get("parent_ids"):
            final = event["data"]["output"]
    assert isinstance(final, AIMessage), f"the run ended without an answer: {final!r}"
    return final


@when('the text-mode agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    try:
        context.text_answer = run(_run_with_events(context, question))
    except LeanloopError as exc:
        msg = f"the text-mode run failed instead of answering: {type(exc).__name__}: {exc}"
        if getattr(context, "refused_for", None):
            msg += "\n" + _why_no_fallback(context.refused_for, exc.__cause__)
        raise AssertionError(msg) from exc
    context.text_report = context.text_answer.response_metadata["leanloop"]


def _why_no_fallback(what: str, cause: BaseException | None) -> str:
    if cause is not None and not is_tools_refusal(cause):
        return (
            f"leanloop.protocol.modes.is_tools_refusal does not recognise the refusal of {what!r}, "
            "so auto mode did not fall back to text"
        )
    return (
        f"is_tools_refusal recognises the refusal of {what!r}, yet the loop did not fall "
        "back: AgentLoop._can_fall_back_to_text saw tools_ran (set by the prefetch of files "
        "named in the request)"
    )


@when('the text-mode agent is asked "{question}" and the run fails')
def step_ask_fails(context: Context, question: str) -> None:
    try:
        answer = run(_run_with_events(context, question))
    except LeanloopError as exc:
        context.text_failure = exc
    else:
        raise AssertionError(f"the run was expected to fail but answered {answer.text!r}")


async def _stream(agent: LLMAgent, question: str) -> list[AIMessageChunk]:
    return [chunk async for chunk in agent.astream(question)]


@when('the text-mode stream is read for "{question}"')
def step_stream(context: Context, question: str) -> None:
    context.stream_chunks = run(_stream(context.text_agent, question))
    assert context.stream_chunks, "astream yielded nothing"
    context.stream_text = "".join(c.text for c in context.stream_chunks)


@when('the same text-mode script is invoked for "{question}"')
def step_invoke_same(context: Context, question: str) -> None:
    replies, piece = context.stream_script
    model = StreamingScriptedModel(replies=replies, piece=piece)
    spec = context.text_agent.spec
    agent = LLMAgent.from_spec(spec, model=model, tools=[ToolTable().lookup_tool()])
    context.invoked_answer = run(agent.ainvoke(question))


# ── Then: the run ───────────────────────────────────────────────────────────────────


def _seen(context: Context) -> list[SeenRequest]:
    model = context.text_model
    if isinstance(model, ScriptedChatModel):
        return [SeenRequest(r.messages, r.tools) for r in model.requests]
    seen: list[SeenRequest] = context.recorder.seen
    return seen


def _request(context: Context, n: int) -> SeenRequest:
    seen = _seen(context)
    assert len(seen) >= n, f"only {len(seen)} requests were made"
    return seen[n - 1]


def _system(context: Context, n: int) -> str:
    messages = _request(context, n).messages
    assert messages and isinstance(messages[0], SystemMessage), f"no system message: {messages}"
    return messages[0].text


@then('the text-mode run answers "{text}"')
def step_answers(context: Context, text: str) -> None:
    assert context.text_answer.text == text, context.text_answer.text


@then('the text-mode run answer mentions "{text}"')
def step_answer_mentions(context: Context, text: str) -> None:
    assert text in context.text_answer.text, context.text_answer.text


@then('the text-mode run report says tool_mode "{mode:w}" and stop_reason "{reason}"')
def step_report(context: Context, mode: str, reason: str) -> None:
    report = context.text_report
    assert report["tool_mode"] == mode, f"tool_mode is {report['tool_mode']!r}"
    assert report["stop_reason"] == reason, f"stop_reason is {report['stop_reason']!r}"


@then('the text-mode run report has an event mentioning "{text}"')
def step_report_event(context: Context, text: str) -> None:
    events = context.text_report["events"]
    assert any(text in line for line in events), events


@then('the text-mode run emitted one tool-mode change from "{old}" to "{new}"')
def step_mode_event(context: Context, old: str, new: str) -> None:
    changes = [data for name, data in context.custom_events if name == TOOL_MODE_CHANGED]
    assert len(changes) == 1, f"{TOOL_MODE_CHANGED} events: {changes}"
    assert (changes[0]["from"], changes[0]["to"]) == (old, new), changes[0]
    assert changes[0]["reason"], "the event gives no reason"


@then('the text-mode run logged a warning mentioning "{text}"')
def step_logged(context: Context, text: str) -> None:
    warnings = context.text_logs.messages(logging.WARNING)
    assert any(text in line for line in warnings), warnings


@then("the text-mode run emitted no tool-mode change")
def step_no_mode_event(context: Context) -> None:
    names = [name for name, _ in context.custom_events]
    assert TOOL_MODE_CHANGED not in names, names


@then('the text-mode tool "lookup" received {args}')
def step_tool_received(context: Context, args: str) -> None:
    expected = [json.loads(part) for part in args.split(" then ")]
    assert context.tool_table.calls == expected, context.tool_table.calls


@then("the text-mode tool never ran")
def step_tool_never(context: Context) -> None:
    assert context.tool_table.calls == [], context.tool_table.calls


@then('the text-mode run report lists a read_file call of "{path}" at step {step:d}')
def step_report_read(context: Context, path: str, step: int) -> None:
    calls = [
        (c["name"], c["args"].get("path"), c["step"]) for c in context.text_report["tool_calls"]
    ]
    assert ("read_file", path, step) in calls, calls


@then("the text-mode run made {n:d} requests")
def step_request_count(context: Context, n: int) -> None:
    assert len(_seen(context)) == n, f"{len(_seen(context))} requests were made"


@then("text-mode request {n:d} offered no bound tools")
def step_no_bound(context: Context, n: int) -> None:
    assert _request(context, n).tools == [], _request(context, n).tools


@then('text-mode request {n:d} bound the tools "{names}"')
def step_bound(context: Context, n: int, names: str) -> None:
    bound = [t["function"]["name"] for t in _request(context, n).tools]
    assert bound == [s.strip() for s in names.split(",")], bound


@then('text-mode request {n:d} has a system message listing "{line}"')
def step_system_lists(context: Context, n: int, line: str) -> None:
    system = _system(context, n)
    assert line in system, f"{line!r} is not in the system message:\n{system}"


@then('text-mode request {n:d} has a system message starting "{text}"')
def step_system_starts(context: Context, n: int, text: str) -> None:
    system = _system(context, n)
    assert system.startswith(text), system


@then("text-mode request {n:d} has a system message that asks for ```tool blocks")
def step_system_fence(context: Context, n: int) -> None:
    system = _system(context, n)
    assert "```tool\n{" in system, system
    assert '"name"' in system and '"arguments"' in system, system


@then("text-mode request {n:d} has a system message saying tool results are data")
def step_system_data(context: Context, n: int) -> None:
    system = _system(context, n)
    assert TOOL_RESULTS_ARE_DATA in system, system


@then("text-mode request {n:d} has a system message that lists no tools")
def step_system_no_tools(context: Context, n: int) -> None:
    system = _system(context, n)
    assert "lookup {" not in system and "```tool" not in system, system


def _last_turn(context: Context, n: int) -> HumanMessage:
    last = _request(context, n).messages[-1]
    assert isinstance(last, HumanMessage), f"request {n} ends with {type(last).__name__}"
    return last


@then('text-mode request {n:d} ends with a marked user turn "{text}"')
def step_result_turn(context: Context, n: int, text: str) -> None:
    last = _last_turn(context, n)
    expected = _expand(text)
    assert last.text == expected, f"{last.text!r} != {expected!r}"
    assert is_tool_result(last), f"trimming would not recognise it: {last.additional_kwargs}"


@then('text-mode request {n:d} ends with a one-line marked correction mentioning "{text}"')
def step_correction(context: Context, n: int, text: str) -> None:
    last = _last_turn(context, n)
    assert "\n" not in last.text, f"the correction has several lines: {last.text!r}"
    assert text in last.text, last.text
    assert is_tool_result(last), f"trimming would not recognise it: {last.additional_kwargs}"


@then("text-mode request {n:d} carries no ToolMessage")
def step_no_tool_messages(context: Context, n: int) -> None:
    kinds = [type(m).__name__ for m in _request(context, n).messages]
    assert "ToolMessage" not in kinds, kinds
    assert not any(
        isinstance(m, AIMessage) and m.tool_calls for m in _request(context, n).messages
    ), "an AI message still carries native tool_calls"


@then('text-mode request {n:d} has a user turn containing "{text}"')
def step_user_contains(context: Context, n: int, text: str) -> None:
    turns = [m.text for m in _request(context, n).messages if isinstance(m, HumanMessage)]
    assert any(_expand(text) in t for t in turns), turns


@then('text-mode request {n:d} pairs a ToolMessage "{text}" with a native call of "{name}"')
def step_paired(context: Context, n: int, text: str, name: str) -> None:
    messages = _request(context, n).messages
    where = max((i for i, m in enumerate(messages) if isinstance(m, ToolMessage)), default=0)
    result, call_message = messages[where], messages[where - 1]
    assert isinstance(result, ToolMessage), f"request {n} carries no ToolMessage"
    assert result.content == text, result.content
    assert isinstance(call_message, AIMessage), type(call_message).__name__
    calls = call_message.tool_calls
    assert [c["name"] for c in calls] == [name], calls
    assert calls[0]["id"] and calls[0]["id"] == result.tool_call_id, (calls, result.tool_call_id)


@then('text-mode request {n:d} keeps only "{prose}" as the text of the call\'s reply')
def step_call_prose(context: Context, n: int, prose: str) -> None:
    messages = _request(context, n).messages
    call_message = next(m for m in reversed(messages) if isinstance(m, AIMessage))
    assert call_message.text == prose, repr(call_message.text)


@then("text-mode request {n:d} ends with the final-answer prompt")
def step_final_prompt(context: Context, n: int) -> None:
    assert _last_turn(context, n).text == FINAL_ANSWER_PROMPT


@then('the text-mode failure is a leanloop ModelError mentioning "{text}"')
def step_failure(context: Context, text: str) -> None:
    failure = context.text_failure
    assert isinstance(failure, ModelError), type(failure).__mro__
    assert text in str(failure), str(failure)
    assert "\n" not in str(failure), f"the error is not one line: {failure}"


@then('the text-mode failure\'s report says tool_mode "{mode:w}" after {steps:d} steps')
def step_failure_report(context: Context, mode: str, steps: int) -> None:
    report = context.text_failure.report
    assert report.tool_mode == mode and report.steps == steps, report


# ── Then: the stream ────────────────────────────────────────────────────────────────


def _text_chunks(context: Context) -> list[str]:
    return [c.text for c in context.stream_chunks if c.text]


@then('the text-mode stream shows "{text}" before the answer')
def step_stream_before(context: Context, text: str) -> None:
    shown = context.stream_text
    expected = _expand(text)
    assert shown.startswith(expected), f"the stream starts {shown[: len(expected) + 20]!r}"


@then("no text-mode stream chunk holds any part of a call")
def step_stream_no_call(context: Context) -> None:
    shown = context.stream_text
    for marker in ("`", "{", '"name"', "tool", "lookup", '"key"'):
        assert marker not in shown, f"{marker!r} reached the user: {shown!r}"


@then('the text-mode stream ends with "{text}"')
def step_stream_ends(context: Context, text: str) -> None:
    expected = _expand(text)
    assert context.stream_text.endswith(expected), repr(context.stream_text)


@then('the text-mode stream text is exactly "{text}"')
def step_stream_exact(context: Context, text: str) -> None:
    assert context.stream_text == _expand(text), repr(context.stream_text)


@then("the text-mode stream came in more than {n:d} text chunks")
def step_stream_chunks(context: Context, n: int) -> None:
    chunks = _text_chunks(context)
    assert len(chunks) > n, chunks


@then('the last text-mode stream chunk has no text and carries a report with stop_reason "{r}"')
def step_stream_report(context: Context, r: str) -> None:
    last = context.stream_chunks[-1]
    assert last.text == "", repr(last.text)
    report = last.response_metadata.get("leanloop")
    assert isinstance(report, dict), last.response_metadata
    assert report["stop_reason"] == r, report["stop_reason"]
    context.text_report = report
    others = [c for c in context.stream_chunks[:-1] if c.response_metadata.get("leanloop")]
    assert not others, "an earlier chunk already carried a report"


@then("the text-mode stream text equals the invoked answer")
def step_stream_equals(context: Context) -> None:
    answer = context.invoked_answer.text
    assert context.stream_text == answer, f"stream {context.stream_text!r} != {answer!r}"


@then('the text-mode stream shows "{text}" exactly once')
def step_stream_once(context: Context, text: str) -> None:
    count = context.stream_text.count(text)
    assert count == 1, (
        f"{text!r} was streamed {count} times: {context.stream_text!r}. The composed final "
        "answer repeats prose already streamed: AgentLoop._finish compares the answer with "
        "run.streamed, which still ends with the whitespace shown before the held-back call"
    )


@then("text-mode request {n:d} carries {k:d} model replies")
def step_reply_count(context: Context, n: int, k: int) -> None:
    replies = [m for m in _request(context, n).messages if isinstance(m, AIMessage)]
    assert len(replies) == k, [m.text for m in replies]
