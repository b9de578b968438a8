"""HoldBack (src/leanloop/protocol/stream.py): a streamed reply never shows part of a call.

Moved from features/text_protocol.feature (issue 26). Each reply streams through a hold-back
for the tools read_file and list_directory_contents in deltas of every size from 1 to 7.
"""

from __future__ import annotations

import pytest

from leanloop.protocol import HoldBack, parse_tool_calls

NAMES = ["read_file", "list_directory_contents"]


def stream(hold: HoldBack, reply: str, sizes: list[int]) -> str:
    """Feed ``reply`` in deltas of the given sizes (cycled) and return all that was shown."""
    shown: list[str] = []
    pos = index = 0
    while pos < len(reply):
        size = sizes[index % len(sizes)]
        shown.append(hold.feed(reply[pos : pos + size]))
        pos += size
        index += 1
    shown.append(hold.flush())
    return "".join(shown)


def _every_size(reply: str, low: int = 1, high: int = 7) -> list[tuple[str, HoldBack]]:
    runs = []
    for size in range(low, high + 1):
        hold = HoldBack(NAMES)
        runs.append((stream(hold, reply, [size]), hold))
    return runs


CALLS_HELD_BACK = [
    pytest.param(
        ('Let me look.\n```tool\n{"name": "read_file", "arguments": {"path": "a"}}\n```'),
        "Let me look.\n",
        id="tool fence",
    ),
    pytest.param(
        'Ok ```json\n{"name": "read_file", "arguments": {}}```',
        "Ok ",
        id="json fence",
    ),
    pytest.param(
        'Checking <tool_call>{"name": "read_file"}</tool_call>',
        "Checking ",
        id="tool_call tag",
    ),
    pytest.param(
        "<function=read_file><parameter=path>a</parameter></function>",
        "",
        id="Qwen function",
    ),
    pytest.param(
        'Reading.\n{"name": "read_file", "arguments": {"path": "a"}}',
        "Reading.\n",
        id="bare JSON",
    ),
    pytest.param(
        'Reading.\n   {\n  "name": "read_file"}',
        "Reading.\n   ",
        id="indented bare JSON",
    ),
    pytest.param(
        'I checked.{"name": "read_file", "arguments": {}}',
        "I checked.",
        id="bare JSON mid-line",
    ),
    pytest.param(
        'x\n```\n{"name": "read_file"}\n```',
        "x\n",
        id="fenced bare JSON",
    ),
    pytest.param(
        'Now read_file("a.py") please',
        "Now ",
        id="call syntax",
    ),
    pytest.param(
        'Now read_file {"path": "a.py"}',
        "Now ",
        id="braces after a name",
    ),
    pytest.param(
        'See list_directory_contents("src")',
        "See ",
        id="a long tool name",
    ),
]
PLAIN_TEXT = [
    pytest.param(
        "The answer is 42.",
        id="plain prose",
    ),
    pytest.param(
        "Use `grep` and ``x`` here.",
        id="inline code",
    ),
    pytest.param(
        '```python\nprint({"a": 1})\n```',
        id="a python fence",
    ),
    pytest.param(
        "text ```",
        id="a lone fence at end",
    ),
    pytest.param(
        "<tool and <function and <tool_callx",
        id="near-miss tags",
    ),
    pytest.param(
        'a {"path": 1} b {}',
        id="braces mid-line",
    ),
    pytest.param(
        'x\n{"path": 1}\n{',
        id="brace at line start",
    ),
    pytest.param(
        'read_file is handy; myread_file("x"); obj.read_file("y")',
        id="tool names in prose",
    ),
    pytest.param(
        "naïve 日本 🔍 done",
        id="unicode",
    ),
    pytest.param(
        "ends with ``",
        id="ends in backticks",
    ),
]


@pytest.mark.parametrize(("reply", "shown"), CALLS_HELD_BACK)
def test_the_hold_back_never_shows_any_part_of_a_call_split_into_tiny_deltas(
    reply: str, shown: str
) -> None:
    for got, hold in _every_size(reply):
        assert got == shown, f"showed {got!r}, expected {shown!r}"
        assert hold.shown == len(got)
        assert hold.saw_call
        assert hold.feed("more text") == ""


@pytest.mark.parametrize("reply", PLAIN_TEXT)
def test_the_hold_back_delivers_plain_text_in_full_after_flush(reply: str) -> None:
    for got, hold in _every_size(reply):
        assert got == reply, f"showed {got!r}, expected {reply!r}"
        assert hold.shown == len(got)
        assert not hold.saw_call


def test_the_hold_back_counts_what_it_has_shown() -> None:
    reply = "Hello\n```json\n[1, 2]\n```"
    [(got, hold)] = _every_size(reply, 1, 1)

    assert got == "Hello\n"
    assert hold.shown == 6
    # So the rest can be shown after the reply is parsed.
    assert not parse_tool_calls(reply).calls
    assert reply[hold.shown :].startswith("```json")
