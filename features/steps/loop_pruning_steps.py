"""Steps for features/pruning/loop_pruning.feature: pruning proven on whole agent runs.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``):
a scripted main model drives the loop, ``read_file`` is the real workspace tool (its
exact arguments recorded). Here: the workspace's large log, the separate scripted
extraction model that answers the pruning calls, and the checks of what pruning did.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from behave import given, then
from behave.runner import Context
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from support import runs

from leanloop.events import PRUNED
from leanloop.pruning import META_ARGS
from leanloop.spec import load_specs
from leanloop.testing import ScriptedChatModel
from leanloop.textcap import cap_text
from leanloop.tools.workspace import workspace_tools

_INFO_START, _INFO_END = "[PRUNE_INFO_START]", "[PRUNE_INFO_END]"
_OUTPUT_START, _OUTPUT_END = "[PRUNE_OUTPUT_START]", "[PRUNE_OUTPUT_END]"
# The extraction prompt shows each output line after its own number: "  12| <line>".
_SHOWN_PREFIX = re.compile(r"\s*\d+\| ")
_WINDOW = 200_000
"""The window of the agents file's model: large, so only pruning shrinks results."""
_FILLER = "INFO worker handled a job of the nightly batch; nothing unusual to report here"


# --- the workspace's log and the extraction model -----------------------------------


@dataclass(frozen=True)
class LogFile:
    """The workspace's large log, as read_file returns it in one read of 400 lines."""

    raw: str
    word: str
    special: list[str]
    """The lines about ``word``, as the log holds them."""


def _log_lines(count: int, word: str) -> list[str]:
    """400 filler lines of 121 characters with ``count`` short lines about ``word``."""
    lines = [f"12:{i // 60 % 60:02d}:{i % 60:02d} {_FILLER} {i:>5}" for i in range(400)]
    lines = [line.ljust(121, ".") for line in lines]
    for k in range(1, count + 1):
        lines[k * 100] = f"ERROR {word} #{k}"  # line 101, 201, 301 as read_file counts
    return lines


@given('a workspace whose "{name}" reads as {kb:d} KB with {count:d} lines mentioning "{word}"')
def step_workspace(context: Context, name: str, kb: int, count: int, word: str) -> None:
    workspace = runs.setup(context).workspace
    (workspace / name).write_text("\n".join(_log_lines(count, word)) + "\n")
    reader = workspace_tools(workspace)[0]
    raw = str(reader.invoke({"path": name, "limit": 400}))
    context.pruning_log = LogFile(raw, word, [f"ERROR {word} #{k}" for k in range(1, count + 1)])
    assert len(raw) >= kb * 1024, len(raw)
    found = [line for line in raw.split("\n") if word in line]
    assert len(found) == count, found


def _log(context: Context) -> LogFile:
    found: LogFile = context.pruning_log
    return found


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
    runs.setup(context).extractor = ScriptedChatModel(replies=[reply], repeat_last=True)


def _prompt_lines(messages: Sequence[BaseMessage]) -> list[str]:
    return str(messages[-1].content).split("\n")


@given('the extraction model keeps the lines mentioning "{word}"')
def step_extractor_keeps(context: Context, word: str) -> None:
    # As the prompt shows them, with the prompt's own line numbers (the prompt allows it).
    def keep(messages: list[BaseMessage]) -> str:
        shown = [line for line in _prompt_lines(messages) if _SHOWN_PREFIX.match(line)]
        return _answer([line for line in shown if word in line])

    _extractor(context, keep)


@given(
    'the extraction model copies the lines mentioning "{word}" without the prompt\'s line numbers'
)
def step_extractor_copies(context: Context, word: str) -> None:
    def copy(messages: list[BaseMessage]) -> str:
        return _answer([line for line in _shown(messages) if word in line])

    _extractor(context, copy)


@given('the extraction model fails with "{message}"')
def step_extractor_fails(context: Context, message: str) -> None:
    _extractor(context, {"raise": message})


@given('the extraction model answers "{text}"')
def step_extractor_answers(context: Context, text: str) -> None:
    _extractor(context, text)


@given("the extraction model is slower than its pruning_timeout")
def step_extractor_slow(context: Context) -> None:
    setup = runs.setup(context)
    # A minute, not a hang: these runs use the real clock (runs.ask), and a pruning_timeout
    # no longer honoured must fail the scenario (the answer arrives, unpruned), not hang it.
    setup.extractor = ScriptedChatModel(
        replies=[{"delay": 60, "content": _answer([])}], repeat_last=True
    )
    setup.presets["pruning_timeout"] = 0.05


@given("the extraction model only invents lines")
def step_extractor_invents(context: Context) -> None:
    _extractor(context, _answer(["ERROR the disk was full", "ERROR the network went away"]))


# --- then: requests and messages -------------------------------------------------------


def _tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def _tool_message(context: Context, index: int, n: int) -> str:
    messages = _tool_messages(runs.current(context).request(n).messages)
    assert len(messages) >= index, f"request {n} has {len(messages)} tool messages"
    return str(messages[index - 1].content)


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(schema["function"]["parameters"].get("properties", {}))


@then('request {n:d} offers read_file with optional "{first}" and "{second}"')
def step_offers_meta(context: Context, n: int, first: str, second: str) -> None:
    tools = {t["function"]["name"]: t for t in runs.current(context).request(n).tools}
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


@then('request {n:d} offers "{names}" without any pruning meta-argument')
def step_offers_plain(context: Context, n: int, names: str) -> None:
    run = runs.current(context)
    tools = {t["function"]["name"]: t for t in run.request(n).tools}
    wanted = [name.strip() for name in names.split(",")]
    before = {s["function"]["name"]: s for s in run.tools_before}
    for name in wanted:
        assert name in tools, f"{name} not offered: {list(tools)}"
        assert not META_ARGS & set(_properties(tools[name])), _properties(tools[name])
        assert tools[name] == before[name], f"{name} changed: {tools[name]} != {before[name]}"


@then("the agent's tool objects are unchanged by the run")
def step_tools_unchanged(context: Context) -> None:
    run = runs.current(context)
    after = [convert_to_openai_tool(t) for t in run.agent.tools]
    assert after == run.tools_before, after
    for tool in run.agent.tools:
        assert not META_ARGS & set(tool.args), (tool.name, tool.args)


@then("the result turn in request {n:d} holds a pruned block of at most {limit:d} characters")
def step_result_turn(context: Context, n: int, limit: int) -> None:
    request = runs.current(context).request(n)
    assert request.tools == [], "text mode binds no tools"
    turn = request.messages[-1]
    assert isinstance(turn, HumanMessage), turn
    text = str(turn.content)
    assert '<tool_result name="read_file">' in text, text[:500]
    inner = text[text.index(_INFO_START) : text.index(_OUTPUT_END) + len(_OUTPUT_END)]
    assert len(inner) <= limit, (len(inner), inner)
    _assert_keeps_special(context, inner)


def _assert_keeps_special(context: Context, text: str) -> None:
    kept = [line for line in text.split("\n") if _log(context).word in line]
    assert [line.split("| ", 1)[-1] for line in kept] == _log(context).special, kept


@then("request {n:d} carries {count:d} pruned tool messages")
def step_pruned_messages(context: Context, n: int, count: int) -> None:
    messages = _tool_messages(runs.current(context).request(n).messages)
    assert len(messages) == count, len(messages)
    for message in messages:
        text = str(message.content)
        assert text.startswith(_INFO_START) and text.endswith(_OUTPUT_END), text[:300]
        assert len(text) < 1_000, len(text)


@then("tool message {i:d} in request {n:d} is at most {limit:d} characters with both marker blocks")
def step_message_short(context: Context, i: int, n: int, limit: int) -> None:
    text = _tool_message(context, i, n)
    assert len(text) <= limit, (len(text), text)
    for marker in (_INFO_START, _INFO_END, _OUTPUT_START, _OUTPUT_END):
        assert text.count(marker) == 1, (marker, text)
    assert text.index(_INFO_END) < text.index(_OUTPUT_START), text


@then('tool message {i:d} in request {n:d} keeps the {count:d} lines mentioning "{word}"')
def step_message_keeps(context: Context, i: int, n: int, count: int, word: str) -> None:
    text = _tool_message(context, i, n)
    output = text[text.index(_OUTPUT_START) : text.index(_OUTPUT_END)]
    kept = [line for line in output.split("\n")[1:] if line]
    assert len(kept) == count, kept
    assert all(word in line for line in kept), kept
    raw_lines = _log(context).raw.split("\n")
    assert all(line in raw_lines for line in kept), (
        f"the kept lines {kept} are not the tool's own lines byte for byte: read_file's own "
        "line numbers were taken for copied prompt numbers and cut off. Fix in "
        "src/leanloop/pruning/verify.py RawIndex.find: before reading a leading number as "
        "the prompt's, return self._by_norm.get(_norm(line)) when the whole line is a raw line."
    )


@then('tool message {i:d} in request {n:d} says "{text}"')
def step_message_says(context: Context, i: int, n: int, text: str) -> None:
    message = _tool_message(context, i, n)
    info = message[message.index(_INFO_START) : message.index(_INFO_END)]
    assert text in info, info


@then('the info block of tool message {i:d} in request {n:d} is the one line "{line}"')
def step_info_line(context: Context, i: int, n: int, line: str) -> None:
    message = _tool_message(context, i, n)
    start = message.index(_INFO_START) + len(_INFO_START)
    info = message[start : message.index(_INFO_END)]
    assert info == f"\n{line}\n", info


@then("tool message {i:d} in request {n:d} reads, as the main model got it:")
def step_message_reads(context: Context, i: int, n: int) -> None:
    message = _tool_message(context, i, n)
    assert message == context.text, message


@then('tool message {i:d} in request {n:d} contains "{text}"')
def step_message_contains(context: Context, i: int, n: int, text: str) -> None:
    message = _tool_message(context, i, n)
    assert text in message, message[:500]


@then('tool message {i:d} in request {n:d} does not contain "{text}"')
def step_message_lacks(context: Context, i: int, n: int, text: str) -> None:
    message = _tool_message(context, i, n)
    assert text not in message, message[:500]


@then('tool message {i:d} in request {n:d} is "{text}"')
def step_message_is(context: Context, i: int, n: int, text: str) -> None:
    message = _tool_message(context, i, n)
    assert message == text, message


@then(
    "tool message {i:d} in request {n:d} is the raw read_file output capped at {cap:d} characters"
)
def step_message_raw(context: Context, i: int, n: int, cap: int) -> None:
    message = _tool_message(context, i, n)
    raw = _log(context).raw
    assert len(raw) > cap, "the raw output should need the cap"
    assert message == cap_text(raw, cap), message[-300:]
    assert _INFO_START not in message, message[:300]


# --- then: the tools and the extraction model -----------------------------------------


@then("no tool received a pruning meta-argument")
def step_no_meta_received(context: Context) -> None:
    calls = runs.current(context).box.calls
    assert calls, "no tool ran"
    for call in calls:
        assert not META_ARGS & set(call.args), (call.name, call.args)


@then("the read_file output had at least {chars:d} characters")
def step_read_size(context: Context, chars: int) -> None:
    run = runs.current(context)
    outputs = run.box.outputs("read_file")
    assert outputs and all(len(out) >= chars for out in outputs), [len(o) for o in outputs]
    record = run.report["tool_calls"][0]
    assert record["chars_raw"] == len(outputs[0]), record


@then("the report has no notes about ignored arguments")
def step_no_notes(context: Context) -> None:
    # Had the meta-arguments reached the registry, it would have dropped them with a note.
    calls = runs.current(context).report["tool_calls"]
    assert all(not call["notes"] for call in calls), [call["notes"] for call in calls]
    for call in calls:
        assert not META_ARGS & set(call["args"]), call["args"]


@then("the extraction model got {count:d} requests")
def step_extractor_count(context: Context, count: int) -> None:
    got = len(runs.current(context).extraction_requests)
    assert got == count, f"the extraction model got {got} requests"


@then("every extraction request was one system and one human message without tools")
def step_extraction_shape(context: Context) -> None:
    requests = runs.current(context).extraction_requests
    assert requests, "no extraction request was made"
    for request in requests:
        kinds = [type(m) for m in request.messages]
        assert kinds == [SystemMessage, HumanMessage], kinds
        assert request.tools == [], request.tools
        assert "verbatim" in str(request.messages[0].content)


@then("every extraction request showed exactly the lines of one raw read_file output")
def step_extraction_lines(context: Context) -> None:
    run = runs.current(context)
    raws = [out.split("\n") for out in run.box.outputs("read_file")]
    requests = run.extraction_requests
    assert len(requests) == len(raws), (len(requests), len(raws))
    for request in requests:
        shown = _shown(request.messages)
        assert shown in raws, shown[:3]


def _prompts(context: Context) -> list[str]:
    return [str(r.messages[-1].content) for r in runs.current(context).extraction_requests]


@then('the extraction prompt contains "{text}"')
def step_prompt_contains(context: Context, text: str) -> None:
    prompts = _prompts(context)
    assert prompts and all(text in p for p in prompts), prompts[0][:600] if prompts else prompts


@then('the extraction prompt does not contain "{text}"')
def step_prompt_lacks(context: Context, text: str) -> None:
    prompts = _prompts(context)
    assert prompts and not any(text in p for p in prompts), prompts[0][:600] if prompts else prompts


@then('the extraction model never saw "{text}"')
def step_extractor_never_saw(context: Context, text: str) -> None:
    for request in runs.current(context).extraction_requests:
        for message in request.messages:
            assert text not in str(message.content), str(message.content)[:500]


@then('the models were called in the order "{order}"')
def step_order(context: Context, order: str) -> None:
    wanted = [who.strip() for who in order.split(",")]
    seen = [data["model"] for name, data in runs.current(context).timeline if name == "request"]
    assert seen == wanted, seen


# --- then: criterion 4 (a pruned run against its unpruned twin) -------------------------


def _conversation(message: BaseMessage) -> tuple[Any, ...]:
    """Everything of a System/Human/AI message that reaches the model, byte for byte."""
    calls = [(c["name"], c["args"], c["id"]) for c in getattr(message, "tool_calls", [])]
    return (type(message).__name__, message.content, calls, message.additional_kwargs)


def _twins(context: Context) -> tuple[runs.AgentRun, runs.AgentRun]:
    run = runs.current(context)
    assert run.twin is not None and run.twin.answer is not None, "the twin has not answered"
    return run, run.twin


@then(
    "the System, Human and AI messages of every request are byte-identical "
    "in the agent's run and its twin's"
)
def step_twins_identical(context: Context) -> None:
    run, twin = _twins(context)
    assert len(run.requests) == len(twin.requests), (len(run.requests), len(twin.requests))
    for number, (mine, theirs) in enumerate(zip(run.requests, twin.requests, strict=True), 1):
        ours = [_conversation(m) for m in mine.messages if not isinstance(m, ToolMessage)]
        their = [_conversation(m) for m in theirs.messages if not isinstance(m, ToolMessage)]
        assert ours == their, f"request {number} differs:\n{ours}\n{their}"
        kinds = [type(m) for m in mine.messages]
        assert kinds == [type(m) for m in theirs.messages], kinds


@then("every tool message of the agent's run is shorter than its twin's")
def step_twins_shorter(context: Context) -> None:
    run, twin = _twins(context)
    mine = _tool_messages(run.requests[-1].messages)
    theirs = _tool_messages(twin.requests[-1].messages)
    assert len(mine) == len(theirs) >= 2, (len(mine), len(theirs))
    for ours, their in zip(mine, theirs, strict=True):
        assert len(str(ours.content)) < len(str(their.content)), (ours.content, len(their.content))
        assert str(ours.content).startswith(_INFO_START), ours.content


# --- then: report, logs, events --------------------------------------------------------


def _record(context: Context, index: int) -> dict[str, Any]:
    calls = runs.current(context).report["tool_calls"]
    assert len(calls) >= index, calls
    return dict(calls[index - 1])


@then("the report says tool call {i:d} was not pruned")
def step_record_unpruned(context: Context, i: int) -> None:
    record = _record(context, i)
    assert record["pruned"] is False, record
    assert record["ok"] is True, record


@then("the report says tool call {i:d} was pruned")
def step_record_pruned(context: Context, i: int) -> None:
    record = _record(context, i)
    assert record["pruned"] is True, record
    assert record["chars_out"] < record["chars_raw"], record


def _record_with(context: Context, args: str) -> dict[str, Any]:
    wanted = json.loads(args)
    calls = runs.current(context).report["tool_calls"]
    found = [c for c in calls if c["args"] == wanted]
    assert len(found) == 1, calls
    return dict(found[0])


@then("the report says the call with {args} was pruned to tool message {j:d} of request {n:d}")
def step_record_pruned_to(context: Context, args: str, j: int, n: int) -> None:
    record, message = _record_with(context, args), _tool_message(context, j, n)
    assert record["pruned"] is True, record
    assert message.startswith(_INFO_START), message[:200]
    assert record["chars_out"] == len(message), (record, len(message))
    raw = runs.current(context).box.outputs("read_file")
    assert record["chars_raw"] in [len(out) for out in raw], (record, [len(o) for o in raw])
    assert record["chars_raw"] > 50_000, record


@then(
    "the report says the call with {args} was not pruned, "
    "as tool message {j:d} of request {n:d} shows"
)
def step_record_unpruned_as(context: Context, args: str, j: int, n: int) -> None:
    record, message = _record_with(context, args), _tool_message(context, j, n)
    assert record["pruned"] is False, record
    assert _INFO_START not in message, message[:200]
    assert record["chars_out"] == len(message) < record["chars_raw"], (record, len(message))


@then('the report lists the read_file calls with offsets "{offsets}" in that order')
def step_record_order(context: Context, offsets: str) -> None:
    wanted = [int(o) for o in offsets.split(",")]
    calls = runs.current(context).report["tool_calls"]
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


@then("the report totals the characters saved by pruning")
def step_record_total(context: Context) -> None:
    report = runs.current(context).report
    saved = sum(c["chars_raw"] - c["chars_out"] for c in report["tool_calls"] if c["pruned"])
    assert saved > 50_000, saved
    assert report["chars_saved_by_pruning"] == saved, (report["chars_saved_by_pruning"], saved)


@then("no budget warning was logged")
def step_no_budget_warning(context: Context) -> None:
    records = context.scenario_logs.records
    logged = [r.getMessage() for r in records if r.levelname in ("WARNING", "ERROR")]
    assert not [w for w in logged if "budget" in w], logged
    # A pass that leaves lines unread names them to the model and in the report: that is
    # no budget event (ADR 0006 amendment 7 gives every pass a reading allowance).
    events = runs.current(context).report["events"]
    assert not [e for e in events if "unread; the model was told" not in e], events


@then(
    'the astream_events stream carried one "{name}" event '
    "with the report's figures for tool call {i:d}"
)
def step_streamed_event(context: Context, name: str, i: int) -> None:
    assert name == PRUNED, name
    found = [
        e["data"]
        for e in runs.current(context).stream_events
        if e["event"] == "on_custom_event" and e["name"] == name
    ]
    assert len(found) == 1, found
    data, record = found[0], _record(context, i)
    assert (data["tool"], data["step"]) == (record["name"], record["step"]), data
    assert (data["chars_raw"], data["chars_out"]) == (record["chars_raw"], record["chars_out"])
    assert (data["chunks"], data["dropped_lines"], data["fallback"]) == (1, 0, None), data
    assert isinstance(data["seconds"], float) and data["seconds"] >= 0, data


@then('the astream_events stream carried the extraction call as a chat model run named "{name}"')
def step_streamed_call(context: Context, name: str) -> None:
    events = runs.current(context).stream_events
    starts = [e for e in events if e["event"] == "on_chat_model_start"]
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


@given('an agents file with an agent "plain" without pruning keys and an agent "off" with:')
def step_agents_file(context: Context) -> None:
    path = context.tmp / "agents.yaml"
    path.write_text(_agents_yaml(context.text))
    specs = runs.setup(context).specs
    specs.update(load_specs(path))
    assert specs["plain"].workspace == runs.setup(context).workspace, specs["plain"].workspace
    assert not specs["plain"].allow_tool_output_pruning and specs["plain"].pruning_model is None
    assert specs["off"].pruning_model is not None


@then("the agent and its twin sent byte-identical requests, tool schemas included")
def step_agents_identical(context: Context) -> None:
    a, b = _twins(context)
    assert len(a.requests) == len(b.requests), (len(a.requests), len(b.requests))
    for number, (one, two) in enumerate(zip(a.requests, b.requests, strict=True), 1):
        assert one.tools == two.tools, f"request {number}: the tool schemas differ"
        ours = [_full(m) for m in one.messages]
        theirs = [_full(m) for m in two.messages]
        assert ours == theirs, f"request {number} differs:\n{ours}\n{theirs}"
    assert a.answer is not None and b.answer is not None
    assert a.answer.content == b.answer.content


def _full(message: BaseMessage) -> tuple[Any, ...]:
    extra = (message.tool_call_id, message.status) if isinstance(message, ToolMessage) else ()
    return (*_conversation(message), *extra)


@then("no request of the agent or its twin offers a pruning meta-argument")
def step_agents_no_meta(context: Context) -> None:
    for run in _twins(context):
        offered = [t for r in run.requests for t in r.tools]
        assert offered, "the agents offered no tools at all"
        for schema in offered:
            assert not META_ARGS & set(_properties(schema)), schema


@then("the agent and its twin made {count:d} requests each and built no extraction model")
def step_agents_counts(context: Context, count: int) -> None:
    for run in _twins(context):
        assert len(run.requests) == count, len(run.requests)
        assert run.agent.pruning_model is None, run.agent.pruning_model


def _untimed(report: dict[str, Any]) -> dict[str, Any]:
    """A report without its agent's name and its seconds (the run's, requests', calls')."""
    out = {k: v for k, v in report.items() if k not in ("elapsed_s", "agent")}
    for key in ("requests", "tool_calls"):
        out[key] = [{k: v for k, v in item.items() if k != "seconds"} for item in out[key]]
    return out


@then("the agent and its twin have equal reports without a pruned call")
def step_agents_reports(context: Context) -> None:
    a, b = _twins(context)
    # Equal but for the agents' names and the times each run took (the first run of a
    # process is slower): the run's own seconds, each request's and each call's.
    ours, theirs = (_untimed(r.report) for r in (a, b))
    assert ours == theirs, (ours, theirs)
    assert a.report["chars_saved_by_pruning"] == 0, a.report
    assert a.report["tool_calls"] and not any(c["pruned"] for c in a.report["tool_calls"])


@then("every chunked pruning pass told its progress chunk by chunk")
def step_prune_progress(context: Context) -> None:
    run = runs.current(context)
    passes = [p for p in run.events("leanloop.pruned") if p["chunks"] > 1]
    assert passes, f"no chunked pass: {run.events('leanloop.pruned')}"
    progress = run.events("leanloop.prune_progress")
    for done in passes:
        told = [p["done"] for p in progress if p["step"] == done["step"]]
        assert told == list(range(1, done["chunks"] + 1)), (done, told)
