"""Steps for features/loop_pruning.feature: pruning proven on whole agent runs.

A scripted main model drives the loop; a separate scripted pruning model answers the
extraction calls; ``read_file`` is the real workspace tool, wrapped so that the steps can
see exactly which arguments it received and what it returned.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatResult
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict
from support.aio import run
from support.logs import capture_logs

from leanloop.agent import LLMAgent
from leanloop.events import PRUNED
from leanloop.pruning import META_ARGS
from leanloop.spec import load_specs
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.textcap import cap_text
from leanloop.tools.workspace import workspace_tools

_INFO_START, _INFO_END = "[PRUNE_INFO_START]", "[PRUNE_INFO_END]"
_OUTPUT_START, _OUTPUT_END = "[PRUNE_OUTPUT_START]", "[PRUNE_OUTPUT_END]"
# The extraction prompt shows each output line after its own number: "  12| <line>".
_SHOWN_PREFIX = re.compile(r"\s*\d+\| ")
_WINDOW = 200_000
"""The main model's window unless a scenario sets one: large, so only pruning shrinks results."""
_FILLER = "INFO worker handled a job of the nightly batch; nothing unusual to report here"


# --- recording tools ---------------------------------------------------------------------


@dataclass
class ToolInbox:
    """What each tool of a pruning agent received and returned, in call order."""

    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)

    def received(self, name: str) -> list[dict[str, Any]]:
        return [args for tool, args, _ in self.calls if tool == name]

    def outputs(self, name: str) -> list[str]:
        return [out for tool, _, out in self.calls if tool == name]


class RecordingTool(BaseTool):
    """A tool that records exactly the arguments it is called with, before any defaults.

    Its schema is a plain JSON Schema, so LangChain hands the arguments over untouched
    (a pydantic schema would fill in defaults and hide what the caller really sent).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any
    """``async (args) -> result``: what the tool does."""
    inbox: Any
    """The :class:`ToolInbox` to record into."""

    def _run(self, **kwargs: Any) -> str:
        raise NotImplementedError("the pruning test tools run asynchronously only")

    async def _arun(self, **kwargs: Any) -> str:
        result = str(await self.inner(dict(kwargs)))
        self.inbox.calls.append((self.name, dict(kwargs), result))
        return result


# Behave runs step modules in a namespace pydantic cannot resolve annotations in.
RecordingTool.model_rebuild(_types_namespace={"Any": Any})


def _recording(tool: BaseTool, inbox: ToolInbox) -> BaseTool:
    """``tool`` behind the same name, description and schema, recording its exact input."""
    parameters = convert_to_openai_tool(tool)["function"]["parameters"]
    return RecordingTool(
        name=tool.name,
        description=tool.description,
        args_schema=parameters,
        inner=tool.ainvoke,
        inbox=inbox,
    )


_LOOKUP_SCHEMAS: dict[str, dict[str, Any]] = {
    "lookup": {"key": {"type": "string"}},
    # A tool that declares properties named like the pruning meta-arguments.
    "lookup_with_meta_names": {
        "key": {"type": "string"},
        "output_prune": {"type": "boolean"},
        "output_prune_context": {"type": "string"},
    },
}


def _lookup(name: str, inbox: ToolInbox) -> BaseTool:
    async def look_up(args: dict[str, Any]) -> str:
        return f"value of {args.get('key')}"

    schema = {"type": "object", "properties": _LOOKUP_SCHEMAS[name], "required": ["key"]}
    return RecordingTool(
        name=name, description="Look up a key.", args_schema=schema, inner=look_up, inbox=inbox
    )


# --- scripts ----------------------------------------------------------------------------


def _calls(text: str) -> list[dict[str, Any]]:
    calls = []
    for part in text.split(";"):
        name, _, args = part.strip().partition(" ")
        calls.append({"name": name, "args": json.loads(args or "{}")})
    return calls


def _reply(cell: str) -> Any:
    """``call n {json}; n {json}``, ``say "text" then call …``, ``write {json}`` or an answer."""
    if cell.startswith("write "):
        return f"```tool\n{cell.removeprefix('write ')}\n```"
    said = ""
    if cell.startswith('say "'):
        said, _, cell = cell.removeprefix('say "').partition('" then ')
    if cell.startswith("call "):
        return {"content": said, "tool_calls": _calls(cell.removeprefix("call "))}
    return cell


def _timed(reply: Any, timeline: list[str], who: str) -> Callable[[list[BaseMessage]], Any]:
    """A scripted reply that first notes, on the shared timeline, that ``who`` was asked."""

    def answer(messages: list[BaseMessage]) -> Any:
        timeline.append(who)
        return reply(messages) if callable(reply) else reply

    return answer


def _script(context: Context) -> list[Any]:
    return [_reply(row["reply"]) for row in context.table]


# --- the workspace and the extraction model -------------------------------------------


def _log_lines(count: int, word: str) -> list[str]:
    """400 filler lines of 121 characters with ``count`` short lines about ``word``."""
    lines = [f"12:{i // 60 % 60:02d}:{i % 60:02d} {_FILLER} {i:>5}" for i in range(400)]
    lines = [line.ljust(121, ".") for line in lines]
    for k in range(1, count + 1):
        lines[k * 100] = f"ERROR {word} #{k}"  # line 101, 201, 301 as read_file counts
    return lines


@given(
    'a pruning workspace whose "{name}" reads as {kb:d} KB with {count:d} lines mentioning "{word}"'
)
def step_workspace(context: Context, name: str, kb: int, count: int, word: str) -> None:
    context.pruning_ws = context.tmp / "ws"
    context.pruning_ws.mkdir()
    (context.pruning_ws / name).write_text("\n".join(_log_lines(count, word)) + "\n")
    reader = workspace_tools(context.pruning_ws)[0]
    context.pruning_raw = str(reader.invoke({"path": name, "limit": 400}))
    context.pruning_word = word
    context.pruning_special = [f"ERROR {word} #{k}" for k in range(1, count + 1)]
    assert len(context.pruning_raw) >= kb * 1024, len(context.pruning_raw)
    found = [line for line in context.pruning_raw.split("\n") if word in line]
    assert len(found) == count, found
    context.pruning_timeline = []


def _shown(messages: Sequence[BaseMessage]) -> list[str]:
    """The output lines an extraction request showed, without their added numbers."""
    shown = []
    for line in str(messages[-1].content).split("\n"):
        prefix = _SHOWN_PREFIX.match(line)
        if prefix is not None:
            shown.append(line[prefix.end() :])
    return shown


def _answer(kept: Sequence[str], info: str = "kept the relevant lines") -> str:
    body = "".join(f"{line}\n" for line in kept)
    return f"{_INFO_START}\n{info}\n{_INFO_END}\n{_OUTPUT_START}\n{body}{_OUTPUT_END}"


def _extractor(context: Context, reply: Any) -> None:
    timed = _timed(reply, context.pruning_timeline, "prune")
    context.pruning_extractor = ScriptedChatModel(replies=[timed], repeat_last=True)


def _prompt_lines(messages: Sequence[BaseMessage]) -> list[str]:
    return str(messages[-1].content).split("\n")


@given('the pruning agent\'s extraction model keeps the lines mentioning "{word}"')
def step_extractor_keeps(context: Context, word: str) -> None:
    # As the prompt shows them, with the prompt's own line numbers (the prompt allows it).
    def keep(messages: list[BaseMessage]) -> str:
        shown = [line for line in _prompt_lines(messages) if _SHOWN_PREFIX.match(line)]
        return _answer([line for line in shown if word in line])

    _extractor(context, keep)


@given(
    'the pruning agent\'s extraction model copies the lines mentioning "{word}" '
    "without the prompt's line numbers"
)
def step_extractor_copies(context: Context, word: str) -> None:
    _extractor(context, lambda messages: _answer([s for s in _shown(messages) if word in s]))


@given('the pruning agent\'s extraction model fails with "{message}"')
def step_extractor_fails(context: Context, message: str) -> None:
    _extractor(context, {"raise": message})


@given('the pruning agent\'s extraction model answers "{text}"')
def step_extractor_answers(context: Context, text: str) -> None:
    _extractor(context, text)


class SlowExtractor(ScriptedChatModel):
    """An extraction model that records the request, then takes a minute to answer."""

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        result = self._generate(messages, stop, None, **kwargs)
        await asyncio.sleep(60)  # cancelled by the agent's pruning_timeout long before
        return result


@given("the pruning agent's extraction model is slower than its pruning_timeout")
def step_extractor_slow(context: Context) -> None:
    answer = _timed(_answer([]), context.pruning_timeline, "prune")
    context.pruning_extractor = SlowExtractor(replies=[answer], repeat_last=True)
    context.pruning_presets = {"pruning_timeout": 0.05}


@given("the pruning agent's extraction model only invents lines")
def step_extractor_invents(context: Context) -> None:
    _extractor(context, _answer(["ERROR the disk was full", "ERROR the network went away"]))


# --- agents -----------------------------------------------------------------------------


def _tools(context: Context, inbox: ToolInbox, extra: str | None = None) -> list[BaseTool]:
    tools = [_recording(tool, inbox) for tool in workspace_tools(context.pruning_ws)]
    if extra is not None:
        assert extra in _LOOKUP_SCHEMAS, f"no pruning test tool {extra!r}"
        tools.append(_lookup(extra, inbox))
    return tools


def _settings(text: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, _, value = item.partition("=")
        try:
            settings[key.strip()] = json.loads(value)
        except ValueError:
            settings[key.strip()] = value.strip()
    return settings


def _agent(
    context: Context,
    replies: list[Any],
    *,
    tools: list[BaseTool],
    pruning: bool,
    **settings: Any,
) -> LLMAgent:
    window = settings.pop("context_window", _WINDOW)
    model_spec = ModelSpec(class_path="leanloop.testing:ScriptedChatModel", context_window=window)
    spec = AgentSpec(
        name="pruning-agent", model=model_spec, allow_tool_output_pruning=pruning, **settings
    )
    timeline = context.pruning_timeline
    main = ScriptedChatModel(replies=[_timed(r, timeline, "main") for r in replies])
    return LLMAgent.from_spec(
        spec, model=main, tools=tools, pruning_model=context.pruning_extractor
    )


def _make(context: Context, *, extra: str | None = None, **settings: Any) -> None:
    context.pruning_logs = capture_logs(context)
    context.pruning_inbox = ToolInbox()
    tools = _tools(context, context.pruning_inbox, extra)
    context.pruning_schemas_before = [convert_to_openai_tool(t) for t in tools]
    settings = {**getattr(context, "pruning_presets", {}), **settings}
    context.pruning_settings = settings
    context.pruning_replies = _script(context)
    context.pruning_agent = _agent(
        context, context.pruning_replies, tools=tools, pruning=True, **settings
    )


@given("a pruning agent with the script:")
def step_agent(context: Context) -> None:
    _make(context)


@given("a pruning agent with the {tool} tool and the script:")
def step_agent_tool(context: Context, tool: str) -> None:
    _make(context, extra=tool)


@given('a pruning agent with the settings "{settings}" and the script:')
def step_agent_settings(context: Context, settings: str) -> None:
    _make(context, **_settings(settings))


@given('a pruning agent with the system prompt "{prompt}" and the script:')
def step_agent_system(context: Context, prompt: str) -> None:
    _make(context, system_prompt=prompt)


# --- runs -------------------------------------------------------------------------------


@dataclass
class PrunedRun:
    """One finished run: its answer, report and what each model was sent."""

    answer: AIMessage
    main: ScriptedChatModel
    extractor: ScriptedChatModel | None

    @property
    def report(self) -> dict[str, Any]:
        return dict(self.answer.response_metadata["leanloop"])

    def request(self, n: int) -> Any:
        requests = self.main.requests
        assert len(requests) >= n, f"the main model got only {len(requests)} requests"
        return requests[n - 1]


def _finish(context: Context, answer: AIMessage) -> None:
    agent = context.pruning_agent
    extractor = agent.pruning_model if isinstance(agent.pruning_model, ScriptedChatModel) else None
    context.pruned_run = PrunedRun(answer, agent.model, extractor)


@when('the pruning agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    _finish(context, run(context.pruning_agent.ainvoke(question)))


@when('the pruning agent is asked "{question}" through astream_events')
def step_ask_streaming(context: Context, question: str) -> None:
    async def collect() -> list[dict[str, Any]]:
        stream = context.pruning_agent.astream_events(question, version="v2")
        return [dict(event) async for event in stream]

    context.pruning_events = run(collect())
    events = context.pruning_events
    ends = [e for e in events if e["event"] == "on_chain_end" and not e["parent_ids"]]
    assert len(ends) == 1, [e["event"] for e in context.pruning_events]
    _finish(context, ends[0]["data"]["output"])


@when('the pruning agent and its unpruned twin are each asked "{question}"')
def step_ask_twins(context: Context, question: str) -> None:
    _finish(context, run(context.pruning_agent.ainvoke(question)))
    tools = _tools(context, ToolInbox())
    twin = _agent(
        context, context.pruning_replies, tools=tools, pruning=False, **context.pruning_settings
    )
    answer = run(twin.ainvoke(question))
    context.unpruned_run = PrunedRun(answer, twin.model, None)  # type: ignore[arg-type]
    assert answer.content == context.pruned_run.answer.content, answer.content


# --- then: requests and messages -------------------------------------------------------


def _tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def _tool_message(context: Context, index: int, n: int) -> str:
    messages = _tool_messages(context.pruned_run.request(n).messages)
    assert len(messages) >= index, f"main request {n} has {len(messages)} tool messages"
    return str(messages[index - 1].content)


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(schema["function"]["parameters"].get("properties", {}))


@then(
    'main request {n:d} of the pruned run offers read_file with optional "{first}" and "{second}"'
)
def step_offers_meta(context: Context, n: int, first: str, second: str) -> None:
    tools = {t["function"]["name"]: t for t in context.pruned_run.request(n).tools}
    assert "read_file" in tools, list(tools)
    props = _properties(tools["read_file"])
    assert props.get(first) == {
        "type": "boolean",
        "default": True,
        "description": "set false to receive the full output",
    }, props.get(first)
    assert props.get(second, {}).get("type") == "string", props.get(second)
    required = tools["read_file"]["function"]["parameters"].get("required", [])
    assert first not in required and second not in required, required
    assert {"path", "offset", "limit"} <= set(props), props


@then('main request {n:d} of the pruned run offers "{names}" without any pruning meta-argument')
def step_offers_plain(context: Context, n: int, names: str) -> None:
    tools = {t["function"]["name"]: t for t in context.pruned_run.request(n).tools}
    wanted = [name.strip() for name in names.split(",")]
    before = {s["function"]["name"]: s for s in context.pruning_schemas_before}
    for name in wanted:
        assert name in tools, f"{name} not offered: {list(tools)}"
        assert not META_ARGS & set(_properties(tools[name])), _properties(tools[name])
        assert tools[name] == before[name], f"{name} changed: {tools[name]} != {before[name]}"


@then("the pruning agent's tool objects are unchanged by the run")
def step_tools_unchanged(context: Context) -> None:
    after = [convert_to_openai_tool(t) for t in context.pruning_agent.tools]
    assert after == context.pruning_schemas_before, after
    for tool in context.pruning_agent.tools:
        assert not META_ARGS & set(tool.args), (tool.name, tool.args)


@then('the system prompt of main request {n:d} of the pruned run lists "{text}"')
def step_system_lists(context: Context, n: int, text: str) -> None:
    first = context.pruned_run.request(n).messages[0]
    assert isinstance(first, SystemMessage), first
    assert text in str(first.content), str(first.content)[:2000]


@then(
    "the result turn in main request {n:d} of the pruned run holds a pruned block "
    "of at most {limit:d} characters"
)
def step_result_turn(context: Context, n: int, limit: int) -> None:
    request = context.pruned_run.request(n)
    assert request.tools == [], "text mode binds no tools"
    turn = request.messages[-1]
    assert isinstance(turn, HumanMessage), turn
    text = str(turn.content)
    assert '<tool_result name="read_file">' in text, text[:500]
    inner = text[text.index(_INFO_START) : text.index(_OUTPUT_END) + len(_OUTPUT_END)]
    assert len(inner) <= limit, (len(inner), inner)
    _assert_keeps_special(context, inner)


def _assert_keeps_special(context: Context, text: str) -> None:
    kept = [line for line in text.split("\n") if context.pruning_word in line]
    assert [line.split("| ", 1)[-1] for line in kept] == context.pruning_special, kept


@then("main request {n:d} of the pruned run carries {count:d} pruned tool messages")
def step_pruned_messages(context: Context, n: int, count: int) -> None:
    messages = _tool_messages(context.pruned_run.request(n).messages)
    assert len(messages) == count, len(messages)
    for message in messages:
        text = str(message.content)
        assert text.startswith(_INFO_START) and text.endswith(_OUTPUT_END), text[:300]
        assert len(text) < 1_000, len(text)


@then(
    "tool message {i:d} in main request {n:d} of the pruned run "
    "is at most {limit:d} characters with both marker blocks"
)
def step_message_short(context: Context, i: int, n: int, limit: int) -> None:
    text = _tool_message(context, i, n)
    assert len(text) <= limit, (len(text), text)
    for marker in (_INFO_START, _INFO_END, _OUTPUT_START, _OUTPUT_END):
        assert text.count(marker) == 1, (marker, text)
    assert text.index(_INFO_END) < text.index(_OUTPUT_START), text


@then(
    "tool message {i:d} in main request {n:d} of the pruned run "
    'keeps the {count:d} lines mentioning "{word}"'
)
def step_message_keeps(context: Context, i: int, n: int, count: int, word: str) -> None:
    text = _tool_message(context, i, n)
    output = text[text.index(_OUTPUT_START) : text.index(_OUTPUT_END)]
    kept = [line for line in output.split("\n")[1:] if line]
    assert len(kept) == count, kept
    assert all(word in line for line in kept), kept
    raw_lines = context.pruning_raw.split("\n")
    assert all(line in raw_lines for line in kept), (
        f"the kept lines {kept} are not the tool's own lines byte for byte: read_file's own "
        "line numbers were taken for copied prompt numbers and cut off. Fix in "
        "src/leanloop/pruning/verify.py RawIndex.find: before reading a leading number as "
        "the prompt's, return self._by_norm.get(_norm(line)) when the whole line is a raw line."
    )


@then('tool message {i:d} in main request {n:d} of the pruned run says "{text}"')
def step_message_says(context: Context, i: int, n: int, text: str) -> None:
    message = _tool_message(context, i, n)
    info = message[message.index(_INFO_START) : message.index(_INFO_END)]
    assert text in info, info


@then('tool message {i:d} in main request {n:d} of the pruned run contains "{text}"')
def step_message_contains(context: Context, i: int, n: int, text: str) -> None:
    message = _tool_message(context, i, n)
    assert text in message, message[:500]


@then('tool message {i:d} in main request {n:d} of the pruned run does not contain "{text}"')
def step_message_lacks(context: Context, i: int, n: int, text: str) -> None:
    message = _tool_message(context, i, n)
    assert text not in message, message[:500]


@then('tool message {i:d} in main request {n:d} of the pruned run is "{text}"')
def step_message_is(context: Context, i: int, n: int, text: str) -> None:
    message = _tool_message(context, i, n)
    assert message == text, message


@then(
    "tool message {i:d} in main request {n:d} of the pruned run is the raw read_file output "
    "capped at {cap:d} characters"
)
def step_message_raw(context: Context, i: int, n: int, cap: int) -> None:
    message = _tool_message(context, i, n)
    assert len(context.pruning_raw) > cap, "the raw output should need the cap"
    assert message == cap_text(context.pruning_raw, cap), message[-300:]
    assert _INFO_START not in message, message[:300]


@then("the last main request of the pruned run offered no tools")
def step_last_no_tools(context: Context) -> None:
    last = context.pruned_run.main.requests[-1]
    assert last.tools == [], last.tools


# --- then: the tools and the extraction model -----------------------------------------


@then('the pruned run\'s tool "{name}" received exactly {args}')
def step_tool_received(context: Context, name: str, args: str) -> None:
    received = context.pruning_inbox.received(name)
    assert received == [json.loads(args)], received
    for _, got, _ in context.pruning_inbox.calls:
        assert not META_ARGS & set(got), got


@then("the pruned run's read_file produced at least {chars:d} characters")
def step_read_size(context: Context, chars: int) -> None:
    outputs = context.pruning_inbox.outputs("read_file")
    assert outputs and all(len(out) >= chars for out in outputs), [len(o) for o in outputs]
    record = context.pruned_run.report["tool_calls"][0]
    assert record["chars_raw"] == len(outputs[0]), record


@then("the pruned run's report has no notes about ignored arguments")
def step_no_notes(context: Context) -> None:
    # Had the meta-arguments reached the registry, it would have dropped them with a note.
    notes = [call["notes"] for call in context.pruned_run.report["tool_calls"]]
    assert all(not n for n in notes), notes
    for call in context.pruned_run.report["tool_calls"]:
        assert not META_ARGS & set(call["args"]), call["args"]


def _extraction_requests(context: Context) -> list[Any]:
    extractor = context.pruned_run.extractor
    assert extractor is not None, "the agent has no separate extraction model"
    return list(extractor.requests)


@then("the pruned run's extraction model got {count:d} requests")
def step_extractor_count(context: Context, count: int) -> None:
    got = len(_extraction_requests(context))
    assert got == count, f"the extraction model got {got} requests"


@then(
    "every extraction request of the pruned run was one system and one human message without tools"
)
def step_extraction_shape(context: Context) -> None:
    requests = _extraction_requests(context)
    assert requests, "no extraction request was made"
    for request in requests:
        kinds = [type(m) for m in request.messages]
        assert kinds == [SystemMessage, HumanMessage], kinds
        assert request.tools == [], request.tools
        assert "verbatim" in str(request.messages[0].content)


@then(
    "every extraction request of the pruned run showed exactly the lines "
    "of one raw read_file output"
)
def step_extraction_lines(context: Context) -> None:
    raws = [out.split("\n") for out in context.pruning_inbox.outputs("read_file")]
    requests = _extraction_requests(context)
    assert len(requests) == len(raws), (len(requests), len(raws))
    for request in requests:
        shown = _shown(request.messages)
        assert shown in raws, shown[:3]


@then('the extraction prompt of the pruned run contains "{text}"')
def step_prompt_contains(context: Context, text: str) -> None:
    prompts = [str(r.messages[-1].content) for r in _extraction_requests(context)]
    assert prompts and all(text in p for p in prompts), prompts[0][:600] if prompts else prompts


@then('the extraction prompt of the pruned run does not contain "{text}"')
def step_prompt_lacks(context: Context, text: str) -> None:
    prompts = [str(r.messages[-1].content) for r in _extraction_requests(context)]
    assert prompts and not any(text in p for p in prompts), prompts[0][:600] if prompts else prompts


@then('the pruned run\'s extraction model never saw "{text}"')
def step_extractor_never_saw(context: Context, text: str) -> None:
    for request in _extraction_requests(context):
        for message in request.messages:
            assert text not in str(message.content), str(message.content)[:500]


@then('the pruned run\'s models were called in the order "{order}"')
def step_order(context: Context, order: str) -> None:
    wanted = [who.strip() for who in order.split(",")]
    assert context.pruning_timeline == wanted, context.pruning_timeline


# --- then: criterion 4 (pruned run against its unpruned twin) --------------------------


def _conversation(message: BaseMessage) -> tuple[Any, ...]:
    """Everything of a System/Human/AI message that reaches the model, byte for byte."""
    calls = [(c["name"], c["args"], c["id"]) for c in getattr(message, "tool_calls", [])]
    return (type(message).__name__, message.content, calls, message.additional_kwargs)


@then(
    "the System, Human and AI messages of every main request are byte-identical "
    "in the pruned run and its unpruned twin"
)
def step_twins_identical(context: Context) -> None:
    pruned, unpruned = context.pruned_run.main.requests, context.unpruned_run.main.requests
    assert len(pruned) == len(unpruned), (len(pruned), len(unpruned))
    for number, (mine, theirs) in enumerate(zip(pruned, unpruned, strict=True), start=1):
        ours = [_conversation(m) for m in mine.messages if not isinstance(m, ToolMessage)]
        twin = [_conversation(m) for m in theirs.messages if not isinstance(m, ToolMessage)]
        assert ours == twin, f"request {number} differs:\n{ours}\n{twin}"
        kinds = [type(m) for m in mine.messages]
        assert kinds == [type(m) for m in theirs.messages], kinds


@then("every tool message of the pruned run is shorter than its unpruned twin's")
def step_twins_shorter(context: Context) -> None:
    mine = _tool_messages(context.pruned_run.main.requests[-1].messages)
    theirs = _tool_messages(context.unpruned_run.main.requests[-1].messages)
    assert len(mine) == len(theirs) >= 2, (len(mine), len(theirs))
    for ours, twin in zip(mine, theirs, strict=True):
        assert len(str(ours.content)) < len(str(twin.content)), (ours.content, len(twin.content))
        assert str(ours.content).startswith(_INFO_START), ours.content


# --- then: report, logs, events --------------------------------------------------------


def _record(context: Context, index: int) -> dict[str, Any]:
    calls = context.pruned_run.report["tool_calls"]
    assert len(calls) >= index, calls
    return dict(calls[index - 1])


@then("the pruned run's report says tool call {i:d} was not pruned")
def step_record_unpruned(context: Context, i: int) -> None:
    record = _record(context, i)
    assert record["pruned"] is False, record
    assert record["ok"] is True, record


@then("the pruned run's report says tool call {i:d} was pruned")
def step_record_pruned(context: Context, i: int) -> None:
    record = _record(context, i)
    assert record["pruned"] is True, record
    assert record["chars_out"] < record["chars_raw"], record


def _record_with(context: Context, args: str) -> dict[str, Any]:
    wanted = json.loads(args)
    found = [c for c in context.pruned_run.report["tool_calls"] if c["args"] == wanted]
    assert len(found) == 1, context.pruned_run.report["tool_calls"]
    return dict(found[0])


@then(
    "the pruned run's report says the call with {args} was pruned "
    "to tool message {j:d} of main request {n:d}"
)
def step_record_pruned_to(context: Context, args: str, j: int, n: int) -> None:
    record, message = _record_with(context, args), _tool_message(context, j, n)
    assert record["pruned"] is True, record
    assert message.startswith(_INFO_START), message[:200]
    assert record["chars_out"] == len(message), (record, len(message))
    raw = context.pruning_inbox.outputs("read_file")
    assert record["chars_raw"] in [len(out) for out in raw], (record, [len(o) for o in raw])
    assert record["chars_raw"] > 50_000, record


@then(
    "the pruned run's report says the call with {args} was not pruned, "
    "as tool message {j:d} of main request {n:d} shows"
)
def step_record_unpruned_as(context: Context, args: str, j: int, n: int) -> None:
    record, message = _record_with(context, args), _tool_message(context, j, n)
    assert record["pruned"] is False, record
    assert _INFO_START not in message, message[:200]
    assert record["chars_out"] == len(message) < record["chars_raw"], (record, len(message))


@then('the pruned run\'s report lists the read_file calls with offsets "{offsets}" in that order')
def step_record_order(context: Context, offsets: str) -> None:
    wanted = [int(o) for o in offsets.split(",")]
    calls = context.pruned_run.report["tool_calls"]
    got = [c["args"].get("offset", 1) for c in calls if c["name"] == "read_file"]
    assert got == wanted, (
        f"report tool_calls are in completion order {got}, not call order {wanted}: "
        "ToolRunner._one appends each record when its call finishes, so a pruned call "
        "(which waits for the extraction model) lands after a later unpruned one. "
        "Fix in src/leanloop/toolrun.py: give _one a slot (its index in `accepted`) and a "
        "per-run list `records = [None] * len(accepted)`; store the record in that slot at "
        "both places that now call self.report.tool_calls.append; after asyncio.gather in "
        "run(), extend self.report.tool_calls with the filled slots, in call order."
    )


@then("the pruned run's report totals the characters saved by pruning")
def step_record_total(context: Context) -> None:
    report = context.pruned_run.report
    saved = sum(c["chars_raw"] - c["chars_out"] for c in report["tool_calls"] if c["pruned"])
    assert saved > 50_000, saved
    assert report["chars_saved_by_pruning"] == saved, (report["chars_saved_by_pruning"], saved)


@then('the pruned run stopped with "{reason}" after {steps:d} steps')
def step_stopped(context: Context, reason: str, steps: int) -> None:
    report = context.pruned_run.report
    assert (report["stop_reason"], report["steps"]) == (reason, steps), report["stop_reason"]


@then('the pruned run answered "{text}"')
def step_answered(context: Context, text: str) -> None:
    assert context.pruned_run.answer.content == text, context.pruned_run.answer.content


def _logged(context: Context, level: str) -> list[str]:
    return [r.getMessage() for r in context.pruning_logs.records if r.levelname == level]


@then('a pruned-run warning names "{first}" and "{second}"')
def step_warning_names(context: Context, first: str, second: str) -> None:
    warnings = _logged(context, "WARNING")
    assert any(first in w and second in w for w in warnings), warnings


@then('a pruned-run warning says "{text}"')
def step_warning_says(context: Context, text: str) -> None:
    warnings = _logged(context, "WARNING")
    assert any(text in w for w in warnings), warnings


@then('a pruned-run error says "{text}"')
def step_error_says(context: Context, text: str) -> None:
    errors = _logged(context, "ERROR")
    assert any(text in e for e in errors), errors


@then("the pruned run logged no budget warning")
def step_no_budget_warning(context: Context) -> None:
    logged = _logged(context, "WARNING") + _logged(context, "ERROR")
    assert not [w for w in logged if "budget" in w], logged
    assert not context.pruned_run.report["events"], context.pruned_run.report["events"]


@then('the pruned run streamed one "{name}" event with the report\'s figures for tool call {i:d}')
def step_streamed_event(context: Context, name: str, i: int) -> None:
    assert name == PRUNED, name
    found = [
        e["data"]
        for e in context.pruning_events
        if e["event"] == "on_custom_event" and e["name"] == name
    ]
    assert len(found) == 1, found
    data, record = found[0], _record(context, i)
    assert (data["tool"], data["step"]) == (record["name"], record["step"]), data
    assert (data["chars_raw"], data["chars_out"]) == (record["chars_raw"], record["chars_out"])
    assert (data["chunks"], data["dropped_lines"], data["fallback"]) == (1, 0, None), data
    assert isinstance(data["seconds"], float) and data["seconds"] >= 0, data


@then('the pruned run streamed the extraction call as a chat model run named "{name}"')
def step_streamed_call(context: Context, name: str) -> None:
    starts = [e for e in context.pruning_events if e["event"] == "on_chat_model_start"]
    named = [e for e in starts if e["name"] == name]
    assert len(named) == 1, [e["name"] for e in starts]
    shown = named[0]["data"]["input"]["messages"][0]
    assert any(_OUTPUT_START in str(m.content) for m in shown), shown


# --- criterion 9: agents from YAML, with and without pruning keys -----------------------


def _agents_yaml(extra: str) -> str:
    agent = {
        "model": "main",
        "system_prompt": "Answer from the logs.",
        "tools": ["read_file", "search", "list_files"],
        "workspace": "./ws",
    }
    document = {
        "version": 1,
        "models": {
            "main": {"class": "leanloop.testing:ScriptedChatModel", "context_window": _WINDOW}
        },
        "agents": {"plain": dict(agent), "off": {**agent, **yaml.safe_load(extra)}},
    }
    return yaml.safe_dump(document, sort_keys=False)


@given('a pruning agents file with an agent "plain" without pruning keys and an agent "off" with:')
def step_agents_file(context: Context) -> None:
    path = context.tmp / "agents.yaml"
    path.write_text(_agents_yaml(context.text))
    context.pruning_specs = load_specs(path)
    plain = context.pruning_specs["plain"]
    assert not plain.allow_tool_output_pruning and plain.pruning_model is None, plain
    assert context.pruning_specs["off"].pruning_model is not None


@when(
    'the pruning agents "{first}" and "{second}" each run the script with the question '
    '"{question}":'
)
def step_agents_run(context: Context, first: str, second: str, question: str) -> None:
    replies = _script(context)
    context.pruning_yaml_runs = {}
    for name in (first, second):
        model = ScriptedChatModel(replies=list(replies))
        agent = LLMAgent.from_spec(context.pruning_specs[name], model=model)
        answer = run(agent.ainvoke(question))
        context.pruning_yaml_runs[name] = (agent, PrunedRun(answer, model, None))


def _yaml_runs(context: Context, first: str, second: str) -> tuple[Any, Any]:
    return context.pruning_yaml_runs[first], context.pruning_yaml_runs[second]


@then(
    'the pruning agents "{first}" and "{second}" sent byte-identical requests, '
    "tool schemas included"
)
def step_agents_identical(context: Context, first: str, second: str) -> None:
    (_, a), (_, b) = _yaml_runs(context, first, second)
    counts = (len(a.main.requests), len(b.main.requests))
    assert counts[0] == counts[1], counts
    for number, (one, two) in enumerate(zip(a.main.requests, b.main.requests, strict=True), 1):
        assert one.tools == two.tools, f"request {number}: the tool schemas differ"
        ours = [_full(m) for m in one.messages]
        theirs = [_full(m) for m in two.messages]
        assert ours == theirs, f"request {number} differs:\n{ours}\n{theirs}"
    assert a.answer.content == b.answer.content


def _full(message: BaseMessage) -> tuple[Any, ...]:
    extra = (message.tool_call_id, message.status) if isinstance(message, ToolMessage) else ()
    return (*_conversation(message), *extra)


@then('no request of the pruning agents "{first}" and "{second}" offers a pruning meta-argument')
def step_agents_no_meta(context: Context, first: str, second: str) -> None:
    for _, result in _yaml_runs(context, first, second):
        offered = [t for r in result.main.requests for t in r.tools]
        assert offered, "the agents offered no tools at all"
        for schema in offered:
            assert not META_ARGS & set(_properties(schema)), schema


@then(
    'the pruning agents "{first}" and "{second}" made {count:d} requests each '
    "and built no extraction model"
)
def step_agents_counts(context: Context, first: str, second: str, count: int) -> None:
    for agent, result in _yaml_runs(context, first, second):
        assert len(result.main.requests) == count, len(result.main.requests)
        assert agent.pruning_model is None, agent.pruning_model


@then('the pruning agents "{first}" and "{second}" have equal reports without a pruned call')
def step_agents_reports(context: Context, first: str, second: str) -> None:
    (_, a), (_, b) = _yaml_runs(context, first, second)
    assert a.report == b.report, (a.report, b.report)
    assert a.report["chars_saved_by_pruning"] == 0, a.report
    assert a.report["tool_calls"] and not any(c["pruned"] for c in a.report["tool_calls"])
