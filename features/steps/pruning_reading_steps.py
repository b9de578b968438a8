"""Steps for features/pruning/pruning_reading.feature: the new reading rules meet the old promises.

The agents are the shared scripted ones (``support/runs.py``, ``run_steps.py``): a
scripted main model, the real workspace ``read_file`` (every call it received recorded),
and a separate scripted pruning model. Here: the workspace log (a few lines that matter
among hundreds of filler lines, so that reading on and windows matter), a pruning model
that keeps the lines holding one word and is declared small (chunks of at most 1,024
tokens, one window a request), a script notation for the call a pruned result named, a
session store, a sub-agent, and the checks of what each pass showed and said.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from support import runs, script
from support.aio import run as run_async

from leanloop.agent import LLMAgent
from leanloop.exceptions import LeanloopError
from leanloop.pruning.reading import NO_FOCUS_WORD
from leanloop.sessions import open_store
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.tools.workspace import workspace_tools

_CLASS = "leanloop.testing:ScriptedChatModel"
# A name the profiles read as a small model: chunks of at most 1,024 tokens, the short
# extraction prompt, one window a request (ADR 0006 amendments 2 and 5).
_SMALL_PRUNER = "tiny-pruner"
_INFO_START, _INFO_END = "[PRUNE_INFO_START]", "[PRUNE_INFO_END]"
_OUTPUT_START, _OUTPUT_END = "[PRUNE_OUTPUT_START]", "[PRUNE_OUTPUT_END]"
# An extraction request shows each output line after the prompt's own number; a
# read_file output line starts with the file's number: "  12|     130| text".
_SHOWN = re.compile(r"^\s*\d+\| (.*)$")
_NUMBERED_SHOWN = re.compile(r"^\s*(\d+)\| (.*)$")
_FILE_NUMBER = re.compile(r"^\s*(\d+)\| ")
# "lines 1-14 not read (why); read_file(offset=1, limit=14) reads them", or
# for several ranges of one reason "lines 1-14, 20-44 not read (why);
# read_file(offset=1, limit=14) reads the first".
_NAMED = re.compile(r"lines ((?:\d+-\d+)(?:, \d+-\d+)*) not read \((.*?)\); read_file")
# The common path's one info line (only parts without a focus word were left unread):
# "3/640 lines kept; unread 1-123, 136-343; output_prune=false for all".
_COMPACT = re.compile(
    r"(\d+)/(\d+) lines kept(?:; unread ((?:\d+-\d+)(?:, \d+-\d+)*)(?: and \d+ more)?)?"
    r"; output_prune=false for all"
)
_SPAN = re.compile(r"(\d+)-(\d+)")


def _named_spans(text: str) -> list[tuple[int, int, str]]:
    """Every ``(first, last, reason)`` a pruned result names as not read, in file lines.

    The compact line gives no reason: it is written only when the one reason is that the
    parts hold no focus word.
    """
    explicit = [
        (int(span[1]), int(span[2]), found[2])
        for found in _NAMED.finditer(text)
        for span in _SPAN.finditer(found[1])
    ]
    compact = _COMPACT.fullmatch(_info_block(text))
    spans = compact[3] if compact is not None and compact[3] else ""
    return explicit + [
        (int(span[1]), int(span[2]), NO_FOCUS_WORD) for span in _SPAN.finditer(spans)
    ]


def _info_block(text: str) -> str:
    """The INFO block of a pruned result (``""`` for any other text)."""
    if not text.startswith(f"{_INFO_START}\n") or f"\n{_INFO_END}\n" not in text:
        return ""
    return text[len(_INFO_START) + 1 : text.index(f"\n{_INFO_END}\n")]


_NAMED_CALL = re.compile(
    r'^call the read_file a pruned result named for line (?P<line>\d+) of "(?P<path>[^"]+)"$'
)
_READ_ON_NOTE = ": a call the pruning pass may prune sees it all"


# --- the workspace log -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ReadingLog:
    """The workspace's log: its name and its lines (without newlines), file line 1 first."""

    name: str
    lines: list[str]

    def line(self, number: int) -> str:
        return self.lines[number - 1]


def _log(context: Context) -> ReadingLog:
    found: ReadingLog = context.reading_log
    return found


def _filler(number: int) -> str:
    # No word of the scenarios' focuses or questions ("deadlocks", "nightly", "job",
    # "stop", "segfaults"): a filler line scores nothing and the pruning model keeps none.
    return (
        f"02:{number // 60 % 60:02d}:{number % 60:02d} INFO worker-{number % 8} processed "
        f"batch {10000 + number} rows={number * 37 % 5000} ok"
    )


@given('a workspace log "{name}" of {count:d} lines in which only these lines are not filler:')
def step_log(context: Context, name: str, count: int) -> None:
    lines = [_filler(n) for n in range(1, count + 1)]
    for row in context.table:
        lines[int(row["line"]) - 1] = row["text"]
    (runs.setup(context).workspace / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    context.reading_log = ReadingLog(name, lines)


def _read(context: Context, args: dict[str, Any]) -> str:
    """What read_file returns for ``args`` on the workspace, called directly."""
    reader = workspace_tools(runs.setup(context).workspace)[0]
    return str(reader.invoke(args))


# --- the pruning model -------------------------------------------------------------------


def _shown(messages: Sequence[BaseMessage]) -> list[str]:
    """The output lines an extraction request showed, without the prompt's numbers."""
    shown = []
    for line in str(messages[-1].content).split("\n"):
        found = _SHOWN.match(line)
        if found is not None:
            shown.append(found[1])
    return shown


def _file_lines(messages: Sequence[BaseMessage]) -> list[int]:
    """The file line numbers of the read_file lines an extraction request showed.

    The small prompt style shows read_file's lines under the request's numbers alone
    (ADR 0006 amendment 6); the log here is read from its first line, so those are the
    file's numbers. A line that still carries read_file's own number gives that one.
    """
    numbers = []
    for line in str(messages[-1].content).split("\n"):
        shown = _NUMBERED_SHOWN.match(line)
        if shown is None or shown[2].startswith("[lines "):  # read_file's closing line
            continue
        own = _FILE_NUMBER.match(shown[2])
        numbers.append(int(own[1]) if own is not None else int(shown[1]))
    return numbers


def _keeper(word: str, seen: list[list[BaseMessage]] | None = None) -> Callable[..., str]:
    """An extraction answer that copies the shown lines holding ``word``, in the markers."""

    def keep(messages: list[BaseMessage]) -> str:
        if seen is not None:
            seen.append(list(messages))
        kept = "".join(f"{line}\n" for line in _shown(messages) if word in line)
        return (
            f"{_INFO_START}\nkept the lines holding {word}\n{_INFO_END}\n"
            f"{_OUTPUT_START}\n{kept}{_OUTPUT_END}"
        )

    return keep


@given('the pruning model keeps the lines holding "{word}"')
def step_keeper(context: Context, word: str) -> None:
    context.reading_word = word
    runs.setup(context).extractor = ScriptedChatModel(replies=[_keeper(word)], repeat_last=True)


def _namer(word: str) -> Callable[..., str]:
    """An extraction answer that names the shown lines holding ``word`` by their numbers,
    as the small prompt asks (``[PRUNE_OUTPUT_START, 130, 350]``, a 0.5B's own form)."""

    def name(messages: list[BaseMessage]) -> str:
        numbers = [
            found[1]
            for line in str(messages[-1].content).split("\n")
            if (found := _NUMBERED_SHOWN.match(line)) is not None and word in found[2]
        ]
        return "[" + ", ".join([_OUTPUT_START.strip("[]"), *numbers]) + "]"

    return name


@given('the pruning model names the lines holding "{word}" by their numbers')
def step_namer(context: Context, word: str) -> None:
    context.reading_word = word
    runs.setup(context).extractor = ScriptedChatModel(replies=[_namer(word)], repeat_last=True)


@given("the pruning model is declared as a small model with a window of {tokens:d} tokens")
def step_small_pruner(context: Context, tokens: int) -> None:
    # Declared for its window and profile only: the agents get the scripted keeper itself.
    runs.setup(context).presets["pruning_model"] = ModelSpec(
        class_path=_CLASS, model=_SMALL_PRUNER, context_window=tokens
    )


# --- the script: a call a pruned result named -----------------------------------------


def _named_calls(messages: Sequence[BaseMessage]) -> list[tuple[int, int]]:
    """The ``read_file(offset=…, limit=…)`` calls the tool results of a request name."""
    calls = []
    for message in messages:
        if isinstance(message, ToolMessage):
            calls += [(a, b - a + 1) for a, b, _ in _named_spans(message.text)]
    return calls


class _Memory:
    """What the scripted main model has read: the calls pruned results named, in order.

    A reply is given from what the request shows; a result trimmed from the view since
    is still remembered, as a model remembers what it read in an earlier step.
    """

    def __init__(self) -> None:
        self.named: list[tuple[int, int]] = []
        self.made: list[dict[str, Any]] = []
        """The calls the notation made, each with the line it was made for."""

    def learn(self, messages: Sequence[BaseMessage]) -> None:
        for call in _named_calls(messages):
            if call not in self.named:
                self.named.append(call)

    def wrap(self, reply: Any) -> Callable[[list[BaseMessage]], Any]:
        def answer(messages: list[BaseMessage]) -> Any:
            self.learn(messages)
            return reply(messages) if callable(reply) else reply

        return answer

    def named_call(self, line: int, path: str) -> Callable[..., Any]:
        def call(messages: list[BaseMessage]) -> dict[str, Any]:
            hits = [(o, n) for o, n in self.named if o <= line < o + n]
            assert hits, f"no pruned result so far named a read_file call for line {line}"
            offset, limit = hits[0]
            args = {"path": path, "offset": offset, "limit": limit}
            self.made.append({"line": line, "args": args})
            return {"tool_calls": [{"name": "read_file", "args": args}]}

        return call


def _start(context: Context, settings: dict[str, Any]) -> None:
    """The scenario's agent; a reply ``call the read_file a pruned result named for line N
    of "PATH"`` makes the call a pruned result the model saw named for the lines around N."""
    cells = [row["reply"] for row in context.table]
    placeholders = ["(the named call)" if _NAMED_CALL.match(c) else c for c in cells]
    agent_run = runs.start(context, settings, placeholders)
    model = agent_run.model
    assert isinstance(model, ScriptedChatModel), model
    memory = _Memory()
    replies = list(model.replies)
    for i, cell in enumerate(cells):
        found = _NAMED_CALL.match(cell)
        if found is not None:
            replies[i] = memory.named_call(int(found["line"]), found["path"])
    model.replies = [memory.wrap(reply) for reply in replies]
    context.reading_memory = memory


@given("a reading agent with the script:")
def step_reading_agent(context: Context) -> None:
    _start(context, {})


@given("a reading agent with {settings} and the script:")
def step_reading_agent_settings(context: Context, settings: str) -> None:
    _start(context, runs.parse_settings(settings))


# --- sessions ---------------------------------------------------------------------------


def _store_url(context: Context) -> str:
    return f"sqlite:///{context.tmp}/reading-sessions.db"


@given("the agents keep their sessions in the scenario's store")
def step_session_store(context: Context) -> None:
    runs.setup(context).presets["session_store"] = _store_url(context)


def _turn_config(agent_run: runs.AgentRun, thread: str, *, resume: bool = False) -> Any:
    return {**agent_run.config, "configurable": {"thread_id": thread, "resume": resume}}


@when('in thread "{thread}" the agent is asked "{question}" and the turn fails')
def step_turn_fails(context: Context, thread: str, question: str) -> None:
    agent_run = runs.current(context)
    try:
        answer = run_async(agent_run.agent.ainvoke(question, _turn_config(agent_run, thread)))
    except LeanloopError as exc:
        agent_run.failure = exc
    else:
        raise AssertionError(f"the turn was expected to fail but answered {answer.text!r}")


@when('in thread "{thread}" the agent is asked "{question}"')
def step_turn(context: Context, thread: str, question: str) -> None:
    agent_run = runs.current(context)
    agent_run.answer = run_async(agent_run.agent.ainvoke(question, _turn_config(agent_run, thread)))


@when('in thread "{thread}" the agent resumes the failed turn')
def step_resume(context: Context, thread: str) -> None:
    agent_run = runs.current(context)
    agent_run.answer = run_async(
        agent_run.agent.ainvoke("", _turn_config(agent_run, thread, resume=True))
    )


async def _load(url: str, thread: str) -> Any:
    store = open_store(url)
    try:
        return await store.load(thread)
    finally:
        await store.close()


def _stored_results(context: Context, thread: str, turn: int) -> list[ToolMessage]:
    session = run_async(_load(_store_url(context), thread))
    assert len(session.turns) >= turn, f"thread {thread!r} has {len(session.turns)} turns"
    stored = session.turns[turn - 1]
    return [m for _, step in stored.steps for m in step if isinstance(m, ToolMessage)]


@then(
    'turn {turn:d} of thread "{thread}" stores its read_file result as the pruned text '
    "request {n:d} carried, without the lines it left out"
)
def step_stored_pruned(context: Context, turn: int, thread: str, n: int) -> None:
    (stored,) = _stored_results(context, thread, turn)
    carried = _tool_messages(context, n)
    assert carried, f"request {n} carries no tool result"
    assert stored.text == carried[0].text, (stored.text[:300], carried[0].text[:300])
    assert stored.text.startswith(_INFO_START), stored.text[:300]
    left_out = [ln for ln in _log(context).lines if ln.startswith("02:") and " INFO " in ln]
    assert not [ln for ln in left_out if ln in stored.text], "the store holds filler lines"


# --- the sub-agent -------------------------------------------------------------------


@given("a researcher agent with the script:")
def step_researcher(context: Context) -> None:
    bench = runs.setup(context)
    presets = {k: v for k, v in bench.presets.items() if k not in ("tools", "window")}
    pruning = presets.pop("pruning_model")
    seen: list[list[BaseMessage]] = []
    context.researcher_pruning_requests = seen
    word = context.reading_word
    cells = [row["reply"] for row in context.table]
    context.researcher_spec = AgentSpec(
        name="researcher",
        description="Reads the workspace's logs.",
        model=ModelSpec(
            class_path=_CLASS,
            context_window=200_000,
            kwargs={"replies": script.replies(cells, workspace=bench.workspace)},
        ),
        tools=("read_file",),
        workspace=bench.workspace,
        **presets,
        # Built from its spec, as an agents file builds it: its own keeper, recorded here.
        pruning_model=dataclasses.replace(
            pruning, kwargs={"replies": [_keeper(word, seen)], "repeat_last": True}
        ),
    )


@given('a lead agent with the tool "agent:researcher" and the script:')
def step_lead(context: Context) -> None:
    cells = [row["reply"] for row in context.table]
    spec = AgentSpec(
        name="lead",
        model=ModelSpec(class_path=_CLASS, model="reading-lead", context_window=200_000),
        tools=("agent:researcher",),
        sub_agents={"researcher": context.researcher_spec},
    )
    model = ScriptedChatModel(replies=script.replies(cells))
    agent = LLMAgent.from_spec(spec, model=model)
    before = [convert_to_openai_tool(t) for t in agent.tools]
    context.agent_run = runs.AgentRun(agent, model, runs.ToolBox(), {}, cells, before)


def _sub_report(context: Context, n: int) -> dict[str, Any]:
    calls = runs.current(context).report["tool_calls"]
    assert len(calls) >= n, calls
    sub = calls[n - 1].get("sub_report")
    assert isinstance(sub, dict), f"call {n} nests no sub-run: {calls[n - 1]}"
    return sub


@then(
    "the sub-run of lead call {n:d} read {path} on to line {last:d} through the pass and "
    "pruned it with lines unread"
)
def step_sub_pruned(context: Context, n: int, path: str, last: int) -> None:
    sub = _sub_report(context, n)
    (call,) = sub["tool_calls"]
    assert call["name"] == "read_file" and call["args"] == json.loads(path), call
    assert call["pruned"] and call["fate"] == "pruned", call
    assert call["chars_out"] < call["chars_raw"], call
    total = len(_log(context).lines)
    note = f"read on to line {last} of {total}{_READ_ON_NOTE}"
    assert note in call["notes"], call["notes"]
    unread = [e for e in sub["events"] if "unread; the model was told" in e]
    assert unread and "no focus word in them" in unread[0], sub["events"]
    assert sub["stop_reason"] == "answer", sub


@then(
    'the researcher\'s pruning model read {count:d} requests, each around a line holding "{word}"'
)
def step_researcher_requests(context: Context, count: int, word: str) -> None:
    seen = context.researcher_pruning_requests
    assert len(seen) == count, len(seen)
    for messages in seen:
        assert [ln for ln in _shown(messages) if word in ln], _shown(messages)[:3]


# --- the passes: what the pruning model was shown ---------------------------------------


def _pass_requests(context: Context, before: int) -> list[list[BaseMessage]]:
    """The extraction requests made after main request ``before - 1`` and before ``before``."""
    agent_run = runs.current(context)
    mains = 0
    prunes: list[int] = []
    index = 0
    for name, data in agent_run.timeline:
        if name != "request":
            continue
        if data["model"] == "main":
            mains += 1
        else:
            if mains == before - 1:
                prunes.append(index)
            index += 1
    requests = agent_run.extraction_requests
    assert index == len(requests), (index, len(requests))
    return [requests[i].messages for i in prunes]


@then(
    "the pass before request {n:d} read {count:d} request(s), one window each around a line "
    'holding "{word}"'
)
def step_pass_windows(context: Context, n: int, count: int, word: str) -> None:
    _one_window_each(_pass_requests(context, n), count, word)


def _one_window_each(requests: list[list[BaseMessage]], count: int, word: str) -> None:
    """``count`` requests, each showing one window with a line holding ``word``."""
    assert len(requests) == count, f"{len(requests)} extraction requests"
    for messages in requests:
        lines = _file_lines(messages)
        assert lines == list(range(lines[0], lines[-1] + 1)), lines  # one window
        assert [ln for ln in _shown(messages) if word in ln], _shown(messages)


@then("every line the pass before request {n:d} showed has one number, the file's")
def step_one_number(context: Context, n: int) -> None:
    for messages in _pass_requests(context, n):
        for line in str(messages[-1].content).split("\n"):
            shown = _NUMBERED_SHOWN.match(line)
            if shown is None or shown[2].startswith("[lines "):
                continue
            assert _FILE_NUMBER.match(shown[2]) is None, line  # read_file's own number
            assert _log(context).line(int(shown[1])) == shown[2], line


@then("the pass before request {n:d} never showed read_file's closing line")
def step_no_footer_shown(context: Context, n: int) -> None:
    for messages in _pass_requests(context, n):
        assert "[lines " not in str(messages[-1].content), messages[-1].content


def _kept_lines(text: str) -> list[str]:
    return text.split(_OUTPUT_START, 1)[1].split(_OUTPUT_END, 1)[0].strip().split("\n")


@then(
    "the kept lines of tool message {i:d} in request {n:d} leave out read_file's closing line, "
    "which said only that the file ended"
)
def step_footer_left_out(context: Context, i: int, n: int) -> None:
    text = _tool_message(context, i, n)
    kept = _kept_lines(text)
    assert all(_FILE_NUMBER.match(line) for line in kept), kept
    assert "[lines " not in text, text
    # What it said is on the info line: the count is the whole file's.
    compact = _COMPACT.fullmatch(_info_block(text))
    assert compact is not None, _info_block(text)
    assert int(compact[2]) == len(_log(context).lines), compact[0]


@then("the pass before request {n:d} made no extraction request")
def step_no_pass(context: Context, n: int) -> None:
    requests = _pass_requests(context, n)
    assert requests == [], f"{len(requests)} extraction requests"


@then(
    "every line of the log the pass before request {n:d} did not read is named in tool "
    'message {i:d} with the read_file call that reads it, because "{reason}"'
)
def step_named_unread(context: Context, n: int, i: int, reason: str) -> None:
    text = _tool_message(context, i, n)
    assert _COMPACT.fullmatch(_info_block(text)) is None, _info_block(text)
    named: set[int] = set()
    for first, last, why in _named_spans(text):
        assert why == reason, (first, last, why)
        named |= set(range(first, last + 1))
    _assert_read_or_named(context, n, text, named)


@then(
    "every line of the log the pass before request {n:d} did not read is named as unread on "
    "the one info line of tool message {i:d}"
)
def step_named_compact(context: Context, n: int, i: int) -> None:
    text = _tool_message(context, i, n)
    info = _info_block(text)
    compact = _COMPACT.fullmatch(info)
    assert compact is not None, info
    kept = [ln for ln in _kept_lines(text) if _FILE_NUMBER.match(ln)]
    assert (int(compact[1]), int(compact[2])) == (len(kept), len(_log(context).lines)), info
    named: set[int] = set()
    for first, last, _ in _named_spans(text):
        named |= set(range(first, last + 1))
    _assert_read_or_named(context, n, text, named)


def _assert_read_or_named(context: Context, n: int, text: str, named: set[int]) -> None:
    """Every line of the log was read by the pass before request ``n``, named as unread
    in ``text``, or kept for a kind of line a shapes answer named; no line is two of them."""
    read = {
        ln
        for messages in _pass_requests(context, n)
        if not _is_shapes(messages)  # its example lines are numbered by place
        for ln in _file_lines(messages)
    }
    # A line kept for the kind of line a shapes answer named was chosen, not read in a
    # window: it is neither read nor unread.
    output = text.split(_OUTPUT_START, 1)[-1]
    kept = {int(found[1]) for ln in output.split("\n") if (found := _FILE_NUMBER.match(ln))}
    total = len(_log(context).lines)
    seen = read | named | kept
    assert seen == set(range(1, total + 1)), sorted(set(range(1, total + 1)) - seen)
    assert not read & named, sorted(read & named)[:5]
    assert not kept & named, sorted(kept & named)[:5]


@then("the pass before request {n:d} showed the pruning model every line of the log once, in order")
def step_in_order(context: Context, n: int) -> None:
    requests = _pass_requests(context, n)
    assert len(requests) > 1, f"{len(requests)} extraction requests"
    shown = [ln for messages in requests for ln in _file_lines(messages)]
    assert shown == list(range(1, len(_log(context).lines) + 1)), shown[:5]


@then("the pass before request {n:d} showed the pruning model only lines {first:d}-{last:d}")
def step_only_lines(context: Context, n: int, first: int, last: int) -> None:
    requests = _pass_requests(context, n)
    assert requests, "no extraction request"
    shown = sorted({ln for messages in requests for ln in _file_lines(messages)})
    assert shown == list(range(first, last + 1)), (shown[:3], shown[-3:])


# --- what the main model got ------------------------------------------------------------


def _tool_messages(context: Context, n: int) -> list[ToolMessage]:
    request = runs.current(context).request(n)
    return [m for m in request.messages if isinstance(m, ToolMessage)]


def _tool_message(context: Context, i: int, n: int) -> str:
    messages = _tool_messages(context, n)
    assert len(messages) >= i, f"request {n} has {len(messages)} tool messages"
    return messages[i - 1].text


@then("tool message {i:d} in request {n:d} is exactly what read_file gives for {args}")
def step_exactly(context: Context, i: int, n: int, args: str) -> None:
    expected = _read(context, json.loads(args))
    got = _tool_message(context, i, n)
    assert got == expected, (len(got), len(expected), got[-200:])


@then("tool message {i:d} in request {n:d} shows the log's lines {numbers}")
@then("tool message {i:d} in request {n:d} shows the log's line {numbers}")
def step_shows_lines(context: Context, i: int, n: int, numbers: str) -> None:
    text = _tool_message(context, i, n)
    shown = [line.lstrip() for line in text.split("\n")]
    for number in (int(x) for x in re.split(r",\s*|\s+and\s+", numbers)):
        # As read_file numbers it (the number's width is read_file's own).
        wanted = f"{number}| {_log(context).line(number)}"
        assert wanted in shown, (wanted, text[-600:])


@then(
    "tool message {i:d} in request {n:d} names the log's line {numbers} as not read "
    'because "{reason}"'
)
@then(
    "tool message {i:d} in request {n:d} names the log's lines {numbers} as not read "
    'because "{reason}"'
)
def step_named_lines(context: Context, i: int, n: int, numbers: str, reason: str) -> None:
    spans = _named_spans(_tool_message(context, i, n))
    for number in (int(x) for x in re.split(r",\s*|\s+and\s+", numbers)):
        why = [r for first, last, r in spans if first <= number <= last]
        assert why == [reason], (number, spans)


@then("tool message {i:d} in request {n:d} is the text of tool message {j:d} in request {m:d}")
def step_same_text(context: Context, i: int, n: int, j: int, m: int) -> None:
    assert _tool_message(context, i, n) == _tool_message(context, j, m)


@then("tool message {i:d} in request {n:d} shows no filler line")
def step_no_filler(context: Context, i: int, n: int) -> None:
    text = _tool_message(context, i, n)
    filler = [ln for ln in _log(context).lines if " INFO worker-" in ln and ln in text]
    assert not filler, filler[:3]


@then("report call {n:d} was pruned and notes that it read on to line {last:d}")
def step_read_on_note(context: Context, n: int, last: int) -> None:
    call = _record(context, n)
    total = len(_log(context).lines)
    assert call["pruned"], call
    assert f"read on to line {last} of {total}{_READ_ON_NOTE}" in call["notes"], call["notes"]


@then("report call {n:d} did not read on")
def step_no_read_on(context: Context, n: int) -> None:
    call = _record(context, n)
    assert not [note for note in call["notes"] if _READ_ON_NOTE in note], call["notes"]


def _record(context: Context, n: int) -> dict[str, Any]:
    calls = runs.current(context).report["tool_calls"]
    assert len(calls) >= n, calls
    return dict(calls[n - 1])


@then("the read_file call a pruned result named for line {line:d} ran as named, and was no repeat")
def step_named_ran(context: Context, line: int) -> None:
    memory: _Memory = context.reading_memory
    made = [m for m in memory.made if m["line"] == line]
    assert len(made) == 1, memory.made
    args = made[0]["args"]
    offset, limit = args["offset"], args["limit"]
    assert (offset, limit) in memory.named, (args, memory.named)
    received = runs.current(context).box.received("read_file")
    assert received.count(args) == 1, received
    report = runs.current(context).report
    (record,) = [c for c in report["tool_calls"] if c["args"] == args]
    assert not record["repeated"] and record["ok"], record
    assert not any("ran again" in note for note in record["notes"]), record["notes"]


@then('the "leanloop.pruned" events say reused {flags}')
def step_reused_flags(context: Context, flags: str) -> None:
    wanted = [flag.strip() == "true" for flag in flags.split(",")]
    got = [event["reused"] for event in runs.current(context).events("leanloop.pruned")]
    assert got == wanted, got


# --- line shapes and named lines (ADR 0006 amendment 7) -----------------------------------


def _is_shapes(messages: Sequence[BaseMessage]) -> bool:
    """Whether an extraction request is a shapes request (one example line of each kind)."""
    return "one of each kind" in str(messages[-1].content)


def _examples(messages: Sequence[BaseMessage]) -> list[str]:
    return [
        found[2]
        for line in str(messages[-1].content).split("\n")
        if (found := _NUMBERED_SHOWN.match(line)) is not None
    ]


@given('the pruning model names every kind of line and keeps the lines holding "{word}"')
def step_names_every_kind(context: Context, word: str) -> None:
    keep = _keeper(word)

    def answer(messages: list[BaseMessage]) -> str:
        if _is_shapes(messages):
            count = len(_examples(messages))
            return f"{_OUTPUT_START}\n1-{count}\n{_OUTPUT_END}"
        return keep(messages)

    context.reading_word = word
    runs.setup(context).extractor = ScriptedChatModel(replies=[answer], repeat_last=True)


@given('the pruning model names the line after each line holding "{word}" by its number')
def step_names_the_neighbour(context: Context, word: str) -> None:
    def answer(messages: list[BaseMessage]) -> str:
        numbers = [
            str(int(found[1]) + 1)
            for line in str(messages[-1].content).split("\n")
            if (found := _NUMBERED_SHOWN.match(line)) is not None and word in found[2]
        ]
        return f"{_OUTPUT_START}\n{', '.join(numbers)}\n{_OUTPUT_END}"

    context.reading_word = word
    runs.setup(context).extractor = ScriptedChatModel(replies=[answer], repeat_last=True)


@then(
    "the pass before request {n:d} first showed the pruning model {count:d} rare kinds of "
    "line, a rare one first, and filler only as the kind closest in meaning"
)
def step_shapes_first(context: Context, n: int, count: int) -> None:
    requests = _pass_requests(context, n)
    assert requests and _is_shapes(requests[0]), "the first extraction request shows lines"
    assert sum(1 for r in requests if _is_shapes(r)) == 1, "more than one shapes request"
    examples = _examples(requests[0])
    filler = [e for e in examples if "processed batch" in e]
    # The filler is one kind of line: shown once at most, for its meaning, after a rare one.
    assert len(examples) - len(filler) == count, examples
    assert len(filler) <= 1 and "processed batch" not in examples[0], examples


@then("the pass before request {n:d} asked for no kinds of line")
def step_no_shapes(context: Context, n: int) -> None:
    requests = _pass_requests(context, n)
    assert not [r for r in requests if _is_shapes(r)], "a shapes request was sent"


@then(
    "after the kinds of line the pass before request {n:d} read {count:d} window(s), each "
    'around a line holding "{word}"'
)
def step_windows_after_shapes(context: Context, n: int, count: int, word: str) -> None:
    _one_window_each([r for r in _pass_requests(context, n) if not _is_shapes(r)], count, word)


@then("tool message {i:d} in request {n:d} shows {count:d} of the log's lines {numbers}")
def step_shows_some(context: Context, i: int, n: int, count: int, numbers: str) -> None:
    text = _tool_message(context, i, n)
    wanted = [int(x) for x in re.findall(r"\d+", numbers)]
    shown = [k for k in wanted if _log(context).line(k) in text]
    assert len(shown) == count, shown
