"""Steps for features/loop/prompt_prefix.feature: each request's prefix stays byte-stable.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``);
the scripted main model records every request it receives. Here each request is
serialized as the server receives it and consecutive requests are compared:

- native mode: every message as the OpenAI chat API carries it
  (``convert_to_openai_messages``: role, content, tool calls with their ids and JSON
  arguments, ``tool_call_id``), one JSON object a line; the ``tools`` field is compared
  on its own (:func:`step_same_tools`);
- text mode: the ChatML prompt that the embedded server's template
  (``src/leanloop/localmodel/qwen_tools.jinja``) renders for a request without a tools
  field, which text mode never sends: the first system message heads the prompt, each
  later message is a ``<|im_start|>role`` turn (an assistant turn with no text is
  ``<|im_start|>assistant<|im_end|>``). The generation prompt is left out: the slot also
  holds the generated reply, which the next request repeats as its assistant turn.

Request N's *prefix broke* at request N+1 when N's serialization is not a prefix of
N+1's. A failing check prints, for each pair, how many characters N+1 shares with N and
the first message that differs.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

from behave import then
from behave.runner import Context
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_openai_messages,
)
from support import runs

from leanloop.budget.fit import is_trimmed
from leanloop.protocol.text import TOOL_RESULTS_ARE_DATA
from leanloop.pruning import is_pruned

_TOOL_SECTION = "# Tools"
"""How the text protocol's tool list starts in the system message."""
_SYSTEM_HEAD = "<|im_start|>system\n"


# --- serializing a request as the server receives it ---------------------------------------


def _native_pieces(messages: list[BaseMessage]) -> list[str]:
    converted = convert_to_openai_messages(messages)
    assert len(converted) == len(messages), (converted, messages)
    return [json.dumps(m, ensure_ascii=False) + "\n" for m in converted]


def _chatml_pieces(messages: list[BaseMessage]) -> list[str]:
    assert messages and isinstance(messages[0], SystemMessage), "no system message first"
    pieces = []
    for message in messages:
        if isinstance(message, SystemMessage):
            pieces.append(f"{_SYSTEM_HEAD}{message.text}<|im_end|>\n")
        elif isinstance(message, HumanMessage):
            pieces.append(f"<|im_start|>user\n{message.text}<|im_end|>\n")
        elif isinstance(message, AIMessage):
            assert not message.tool_calls, f"a native call in a text-mode request: {message}"
            text = f"\n{message.text}" if message.text else ""
            pieces.append(f"<|im_start|>assistant{text}<|im_end|>\n")
        else:
            raise AssertionError(f"a {type(message).__name__} in a text-mode request")
    return pieces


def _pieces(context: Context, n: int) -> list[str]:
    """Request ``n``'s serialization, one piece per message (see the module docstring)."""
    run = runs.current(context)
    messages = list(run.request(n).messages)
    mode = run.report["tool_mode"]
    return _native_pieces(messages) if mode == "native" else _chatml_pieces(messages)


@dataclass(frozen=True)
class _Pair:
    """Request ``after`` compared with the request before it."""

    after: int
    before_pieces: list[str]
    after_pieces: list[str]

    @property
    def before_text(self) -> str:
        return "".join(self.before_pieces)

    @property
    def after_text(self) -> str:
        return "".join(self.after_pieces)

    @property
    def extends(self) -> bool:
        return self.after_text.startswith(self.before_text)

    @property
    def shared(self) -> int:
        """Characters of the longest common prefix."""
        before, after = self.before_text, self.after_text
        return next(
            (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
            min(len(before), len(after)),
        )

    @property
    def changed(self) -> list[int]:
        """Indexes of request ``after - 1``'s messages that request ``after`` changed."""
        pairs = itertools.zip_longest(self.before_pieces, self.after_pieces[: len(self)])
        return [i for i, (a, b) in enumerate(pairs) if a != b]

    def __len__(self) -> int:
        return len(self.before_pieces)

    def line(self) -> str:
        total = len(self.before_text)
        head = f"request {self.after} shares {self.shared:,} of the {total:,} characters"
        head += f" of request {self.after - 1}"
        if self.extends:
            return f"{head}: extends it"
        return f"{head}: changed messages {self.changed} of {len(self)}"


def _pairs(context: Context) -> list[_Pair]:
    run = runs.current(context)
    count = len(run.requests)
    answered = len(run.report["requests"])
    assert count == answered, f"{count} requests, {answered} in the report (a refusal?)"
    assert count >= 2, f"only {count} requests: nothing to compare"
    pieces = [_pieces(context, n) for n in range(1, count + 1)]
    return [_Pair(n + 2, a, b) for n, (a, b) in enumerate(itertools.pairwise(pieces))]


def _table(pairs: list[_Pair]) -> str:
    return "\n".join(pair.line() for pair in pairs)


def _breaks(pairs: list[_Pair]) -> list[int]:
    return [pair.after for pair in pairs if not pair.extends]


def _step(context: Context, n: int) -> int:
    """The step of request ``n``, as the report records it."""
    step: int = runs.current(context).report["requests"][n - 1]["step"]
    return step


def _trimmed_at(context: Context, step: int) -> set[str]:
    """The ids of the result messages the report says request ``step`` trimmed first."""
    calls = runs.current(context).report["tool_calls"]
    return {c["result_id"] for c in calls if c["trimmed_at"] == step and c["result_id"]}


def _later_copies(context: Context, n: int, index: int) -> list[tuple[int, BaseMessage]]:
    """Message ``index`` of request ``n`` as each later request carries it."""
    requests = runs.current(context).requests
    copies = []
    for later in range(n + 1, len(requests) + 1):
        messages = requests[later - 1].messages
        assert index < len(messages), f"request {later} left out message {index} of request {n}"
        copies.append((later, messages[index]))
    return copies


# --- checks -------------------------------------------------------------------------------


@then("every request's prompt extends the one before it byte for byte")
def step_all_extend(context: Context) -> None:
    pairs = _pairs(context)
    assert not _breaks(pairs), f"the prompt prefix broke at {_breaks(pairs)}:\n{_table(pairs)}"


@then('the prompt prefix broke only at requests "{numbers}"')
def step_breaks_at(context: Context, numbers: str) -> None:
    pairs = _pairs(context)
    wanted = [] if numbers == "none" else [int(n) for n in numbers.split(",")]
    assert _breaks(pairs) == wanted, f"broke at {_breaks(pairs)}, not {wanted}:\n{_table(pairs)}"


@then("the prompt prefix broke at least once")
def step_broke(context: Context) -> None:
    pairs = _pairs(context)
    assert _breaks(pairs), f"the prefix never broke (no trim?):\n{_table(pairs)}"


@then("the prompt prefix broke only at results the report says that step trimmed")
def step_breaks_are_trims(context: Context) -> None:
    """Each break is a result the request trimmed first, its trimmed copy in its place.

    Everything else of the request before is sent again byte for byte, so a trim costs
    the server the prompt from the first result it trimmed on, once.
    """
    run = runs.current(context)
    pairs = _pairs(context)
    table = _table(pairs)
    for pair in pairs:
        if pair.extends:
            continue
        step = _step(context, pair.after)
        fresh = _trimmed_at(context, step)
        assert fresh, f"request {pair.after} (step {step}) broke the prefix, no trim:\n{table}"
        before = run.request(pair.after - 1).messages
        after = run.request(pair.after).messages
        assert len(after) >= len(before), f"request {pair.after} lost messages:\n{table}"
        for index in pair.changed:
            old, new = before[index], after[index]
            where = f"request {pair.after} message {index} ({new.type}, id {new.id})"
            assert new.id in fresh, f"{where} changed; step {step} trimmed {fresh}:\n{table}"
            assert is_trimmed(new) and not is_trimmed(old), f"{where} is no fresh trim"
            assert new.id == old.id, f"{where} replaced {old.id}"
            first = new.text.splitlines()[0]
            assert old.text.lstrip().startswith(first), f"{where} lost its first line {first!r}"


@then("every result trimmed in a request is byte-identical in every later request")
def step_trimmed_stay(context: Context) -> None:
    requests = runs.current(context).requests
    seen = 0
    for n, request in enumerate(requests, start=1):
        for index, message in enumerate(request.messages):
            if not is_trimmed(message):
                continue
            seen += 1
            for later, copy in _later_copies(context, n, index):
                where = f"message {index} ({message.id}) of request {n} in request {later}"
                assert copy.id == message.id, f"{where} is now {copy.id}"
                assert is_trimmed(copy), f"{where} is no longer trimmed: {copy.text[:80]!r}"
                assert copy.text == message.text, f"{where} changed: {copy.text!r}"
    assert seen, "no request carried a trimmed result"


@then("every pruned result is whole and byte-identical in every later request")
def step_pruned_stay(context: Context) -> None:
    requests = runs.current(context).requests
    seen = 0
    for n, request in enumerate(requests, start=1):
        for index, message in enumerate(request.messages):
            if not is_pruned(message) or is_trimmed(message):
                continue
            seen += 1
            for later, copy in _later_copies(context, n, index):
                where = f"pruned message {index} ({message.id}) of request {n} in request {later}"
                assert copy.id == message.id, f"{where} is now {copy.id}"
                assert not is_trimmed(copy), f"{where} was trimmed"
                assert copy.text == message.text, f"{where} changed: {copy.text!r}"
                assert is_pruned(copy), f"{where} lost its pruned mark"
    assert seen, "no request carried a pruned result"


@then("the request after each break of the prompt prefix extends it")
def step_headroom(context: Context) -> None:
    pairs = _pairs(context)
    broke = set(_breaks(pairs))
    assert broke, f"the prefix never broke (no trim?):\n{_table(pairs)}"
    again = [pair.after for pair in pairs if pair.after - 1 in broke and not pair.extends]
    assert not again, (
        f"requests {again} broke the prefix right after a request that broke it "
        f"(a trim leaves no headroom):\n{_table(pairs)}"
    )


def _system_change(context: Context, n: int, m: int) -> tuple[str, str, _Pair]:
    """The system texts of requests ``m`` and ``n = m + 1``, checked to be all that changed."""
    assert n == m + 1, "compare a request with the one before it"
    pair = next(p for p in _pairs(context) if p.after == n)
    assert pair.changed == [0], f"request {n} changed messages {pair.changed} of request {m}"
    assert len(pair.after_pieces) > len(pair), f"request {n} added nothing to request {m}"
    run = runs.current(context)
    return run.request(m).messages[0].text, run.request(n).messages[0].text, pair


def _listed_then_not(listed: str, unlisted: str, pair: _Pair) -> None:
    """``unlisted`` is ``listed`` with its tool section replaced by the data notice."""
    assert _TOOL_SECTION in listed, f"no tool list in:\n{listed}"
    assert _TOOL_SECTION not in unlisted, f"a tool list in:\n{unlisted}"
    cut = listed.index(_TOOL_SECTION)
    assert unlisted == listed[:cut] + TOOL_RESULTS_ARE_DATA, (listed, unlisted)
    # The server reuses the prompt up to where the tool section starts, and no further.
    assert pair.shared == len(_SYSTEM_HEAD) + cut, (pair.shared, len(_SYSTEM_HEAD) + cut)


@then("request {n:d} changed only the system message of request {m:d}, which lost the tool list")
def step_lost_list(context: Context, n: int, m: int) -> None:
    before, after, pair = _system_change(context, n, m)
    _listed_then_not(before, after, pair)


@then(
    "request {n:d} changed only the system message of request {m:d}, which got the tool list back"
)
def step_got_list(context: Context, n: int, m: int) -> None:
    before, after, pair = _system_change(context, n, m)
    _listed_then_not(after, before, pair)


@then("every request that offered tools offered the same tool list")
def step_same_tools(context: Context) -> None:
    offered = [
        (n, json.dumps(r.tools, sort_keys=True))
        for n, r in enumerate(runs.current(context).requests, start=1)
        if r.tools
    ]
    assert offered, "no request offered tools"
    first = offered[0][1]
    differ = [n for n, tools in offered if tools != first]
    assert not differ, f"requests {differ} offered another tool list than request {offered[0][0]}"
