"""The text-mode tool protocol under seeded fuzzing (moved from
features/text_protocol_fuzz.feature, issue 26).

Whatever a model writes, the parser returns a ParseResult and never raises (nor logs that
it fell back to prose after an error), and the hold-back never raises and only ever shows a
prefix of the reply. The inputs come from fixed seeds, so a failure replays.
"""

# ruff: noqa: S311 - seeded generators make the inputs, nothing here is a secret

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from typing import Any

import pytest

from leanloop.protocol import CALL_FORMS, HoldBack, ParseResult, correction_for, parse_tool_calls

TOOLS: dict[str, tuple[str, ...]] = {
    "read_file": ("path", "max_lines"),
    "search": ("pattern", "path"),
    "list_files": ("path",),
}
SAMPLE_REPLIES = [
    'Let me look.\n```tool\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n```',
    '```json\n{"name": "search", "parameters": {"pattern": "a\\"}b", "path": "src"}}\n```',
    '<tool_call>\n{"name": "search", "arguments": "{\\"pattern\\": \\"}\\"}"}\n</tool_call>',
    "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
    "<parameter=max_lines>\n40\n</parameter>\n</function>\n</tool_call>",
    'Checking.\n{"name": "list_files", "arguments": {"path": "."}}',
    "First read_file('a.py', 20) then search(pattern=\"x\", path=None).",
    'search {"pattern": "```tool {"} and list_files()',
    '```tool\n[{"name": "read_file", "arguments": {"path": "日本.md"}}]\n```\n'
    '```tool\nsearch("q")\n```',
    'Sure <function=search><parameter=pattern>{"a": [1, 2]}<parameter=path>src</function> ok',
    '```tool\n{"name": "search", "arguments": {"pattern": "}} ``` {{ \\"x\\" \\\\"}}\n```\n'
    'Now <tool_call>{"name": "read_file", "arguments": {"path": "<tool_call>"}}',
]
PIECES = [
    *("{", "}", "[", "]", '"', "'", "\\", ":", ",", "(", ")", "```", "```tool\n"),
    *("<tool_call>", "</tool_call>", "<function=", "<parameter=", "</parameter>"),
    *("</function>", '"name"', '"arguments"', "read_file", "search", " ", "\n", "x", "1"),
]


@pytest.fixture
def fallbacks(caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """What the parser logged as "parser failed" (a swallowed bug is still a bug)."""
    found: list[str] = []
    with caplog.at_level(logging.DEBUG, logger="leanloop.protocol"):
        yield found
        found += [r.getMessage() for r in caplog.records if "parser failed" in r.getMessage()]


def _well_formed(text: str, result: ParseResult) -> None:
    assert isinstance(result, ParseResult), (text, result)
    assert isinstance(result.prose, str) and isinstance(result.calls, tuple)
    for call in result.calls:
        assert call.form in CALL_FORMS and isinstance(call.name, str) and call.name, call
        assert isinstance(call.args, dict), (text, call)
        assert 0 <= call.start < call.end <= len(text), (text, call)
        json.dumps(call.args)
    for entry in result.broken:
        assert isinstance(entry, str) and entry and "\n" not in entry, (text, entry)
        assert "\n" not in correction_for(entry)


def _parse(text: str, *, final: bool = True) -> ParseResult:
    result = parse_tool_calls(text, tools=TOOLS, final=final)
    _well_formed(text, result)
    return result


def _call_key(call: Any) -> str:
    return json.dumps([call.name, call.args], sort_keys=True)


def test_the_samples_make_calls_in_every_form() -> None:
    forms = {call.form for s in SAMPLE_REPLIES for call in _parse(s).calls}
    assert forms == set(CALL_FORMS), forms


def test_the_parser_survives_every_truncation_of_valid_replies(fallbacks: list[str]) -> None:
    read, stray = 0, []
    for sample in SAMPLE_REPLIES:
        whole = {_call_key(c) for c in _parse(sample).calls}
        read += 1
        for cut in range(len(sample)):
            _parse(sample[:cut])
            partial = _parse(sample[:cut], final=False)
            read += 2
            # An unfinished prefix only ever holds calls that the whole reply makes.
            stray += [c for c in partial.calls if _call_key(c) not in whole]
    assert read >= 1500, read
    assert not stray, stray[:5]
    assert not fallbacks, fallbacks[:3]


def _mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randrange(1, 6)):
        where = rng.randrange(0, len(chars) + 1)
        action = rng.randrange(3)
        if action == 0 and chars:
            del chars[min(where, len(chars) - 1)]
        elif action == 1:
            chars[where:where] = list(rng.choice(PIECES))
        else:
            chars[where:where] = list(rng.choice(SAMPLE_REPLIES)[: rng.randrange(0, 60)])
    return "".join(chars)


def test_the_parser_survives_random_text_brace_soup_and_mutated_replies(
    fallbacks: list[str],
) -> None:
    rng = random.Random(20240601)
    read = 0
    for _ in range(1500):
        length = rng.randrange(0, 400)
        text = "".join(
            chr(rng.choice([rng.randrange(0, 128), rng.randrange(0, 0x3000)]))
            for _ in range(length)
        )
        _parse(text, final=rng.random() < 0.7)
        read += 1
    for _ in range(1500):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 120)))
        _parse(text, final=rng.random() < 0.7)
        read += 1
    for _ in range(1500):
        _parse(_mutate(rng, rng.choice(SAMPLE_REPLIES)))
        read += 1
    assert read >= 4500, read
    assert not fallbacks, fallbacks[:3]


def _stream(hold: HoldBack, reply: str, sizes: list[int]) -> str:
    shown: list[str] = []
    pos = index = 0
    while pos < len(reply):
        size = sizes[index % len(sizes)]
        shown.append(hold.feed(reply[pos : pos + size]))
        pos += size
        index += 1
    shown.append(hold.flush())
    return "".join(shown)


def test_the_hold_back_survives_random_replies_cut_into_random_deltas() -> None:
    rng = random.Random(7)
    markers = ["```tool", "<tool_call>", "read_file(", '{"name"', "<function=", "```json", "é"]
    alphabet = [*"`<>{}()\"' \n:=abcnmefrt_", *markers]
    plain, saw = [], []
    for _ in range(2000):
        reply = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 80)))
        sizes = [rng.randrange(1, 9) for _ in range(5)]
        hold = HoldBack(["read_file", "list_directory_contents"], max_hold=rng.randrange(1, 20))
        shown = _stream(hold, reply, sizes)
        assert reply.startswith(shown), (reply, shown)
        assert hold.shown == len(shown)
        (saw if hold.saw_call else plain).append((reply, shown))
    assert plain and all(reply == shown for reply, shown in plain)
    assert saw, "the generator should produce some calls"
