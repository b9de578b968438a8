"""parse_tool_calls (src/leanloop/protocol/parse.py): every form a model writes its calls in.

Moved from features/text_protocol.feature (issue 26): the table of replies, the call spans,
a reply still streaming, a one-megabyte argument, and the one-line correction. The parser
knows the tools read_file(path, max_lines), search(pattern, path) and list_files(path).
"""

from __future__ import annotations

import json
import logging
import random
from typing import Any

import pytest

from leanloop.protocol import correction_for, parse_tool_calls

TOOLS: dict[str, tuple[str, ...]] = {
    "read_file": ("path", "max_lines"),
    "search": ("pattern", "path"),
    "list_files": ("path",),
}

PARSE_CASES = [
    # ```tool and ```json fences
    pytest.param(
        ('Let me look.\n```tool\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n```'),
        [["read_file", {"path": "src/app.py"}]],
        "fence",
        0,
        "Let me look.",
        id="tool fence after prose",
    ),
    pytest.param(
        '```tool\n{"name": "list_files", "arguments": {"path": "."}}',
        [["list_files", {"path": "."}]],
        "fence",
        0,
        "",
        id="tool fence never closed",
    ),
    pytest.param(
        (
            'First:\n```tool\n{"name": "read_file", "arguments": {"path": "a.py"}'
            '}\n```\nThen:\n```tool\n{"name": "search", "arguments": {"pattern": '
            '"main"}}\n```'
        ),
        [["read_file", {"path": "a.py"}], ["search", {"pattern": "main"}]],
        "fence,fence",
        0,
        "First:\n\nThen:",
        id="two tool fences",
    ),
    pytest.param(
        (
            '```tool\n{"name": "read_file", "arguments": {"path": "a.py"}}\n{"nam'
            'e": "read_file", "arguments": {"path": "b.py"}}\n```'
        ),
        [["read_file", {"path": "a.py"}], ["read_file", {"path": "b.py"}]],
        "fence,fence",
        0,
        "",
        id="two objects in one fence",
    ),
    pytest.param(
        (
            '```tool\n[{"name": "list_files", "arguments": {"path": "src"}}, {"na'
            'me": "search", "arguments": {"pattern": "x"}}]\n```'
        ),
        [["list_files", {"path": "src"}], ["search", {"pattern": "x"}]],
        "fence,fence",
        0,
        "",
        id="a list of calls in a fence",
    ),
    pytest.param(
        (
            '```json\n{"name": "search", "arguments": {"pattern": "createServer",'
            ' "path": "src"}}\n```'
        ),
        [["search", {"pattern": "createServer", "path": "src"}]],
        "json_fence",
        0,
        "",
        id="json fence with arguments",
    ),
    pytest.param(
        (
            '```json\n{"name": "read_file", "parameters": {"path": "README.md", "'
            'max_lines": 20}}\n```'
        ),
        [["read_file", {"path": "README.md", "max_lines": 20}]],
        "json_fence",
        0,
        "",
        id="json fence with parameters",
    ),
    pytest.param(
        ('```json\n{"name": "search", "arguments": "{\\"pattern\\": \\"TODO\\"}"}\n```'),
        [["search", {"pattern": "TODO"}]],
        "json_fence",
        0,
        "",
        id="arguments as a JSON string",
    ),
    pytest.param(
        'The config is:\n```json\n{"name": "demo", "port": 8080}\n```',
        [],
        "",
        0,
        'The config is:\n```json\n{"name": "demo", "port": 8080}\n```',
        id="json fence of plain data",
    ),
    pytest.param(
        (
            '```tool\n{"type": "function", "function": {"name": "search", "argume'
            'nts": "{\\"pattern\\": \\"q\\"}"}}\n```'
        ),
        [["search", {"pattern": "q"}]],
        "fence",
        0,
        "",
        id="OpenAI wire shape",
    ),
    pytest.param(
        "```tool\n{'name': 'read_file', 'arguments': {'path': 'a.py',},}\n```",
        [["read_file", {"path": "a.py"}]],
        "fence",
        0,
        "",
        id="single quotes, trailing comma",
    ),
    pytest.param(
        '```tool\nsearch("createServer", "src")\n```',
        [["search", {"pattern": "createServer", "path": "src"}]],
        "fence",
        0,
        "",
        id="call syntax inside a fence",
    ),
    pytest.param(
        '```json\n{"name": "read_config/app.yaml", "arguments": {}}\n```',
        [["read_config/app.yaml", {}]],
        "json_fence",
        0,
        "",
        id="a path in the tool name",
    ),
    pytest.param(
        '```tool\n{"name": "read file", "arguments": {}}\n```',
        [],
        "",
        1,
        "",
        id="a name with a space",
    ),
    # tags and bare JSON
    pytest.param(
        ('<tool_call>\n{"name": "search", "arguments": {"pattern": "createServer"}}\n</tool_call>'),
        [["search", {"pattern": "createServer"}]],
        "tool_call_tag",
        0,
        "",
        id="tool_call tag",
    ),
    pytest.param(
        ('Checking.\n<tool_call>{"name": "list_files", "arguments": {"path": "docs"}}'),
        [["list_files", {"path": "docs"}]],
        "tool_call_tag",
        0,
        "Checking.",
        id="tool_call without closing tag",
    ),
    pytest.param(
        (
            "<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n<p"
            "arameter=max_lines>\n40\n</parameter>\n</function>"
        ),
        [["read_file", {"path": "src/app.py", "max_lines": 40}]],
        "qwen_function",
        0,
        "",
        id="Qwen function form",
    ),
    pytest.param(
        (
            "Sure.\n<tool_call>\n<function=search>\n<parameter=pattern>\nfoo bar"
            "\n</parameter>\n</function>\n</tool_call>\nDone?"
        ),
        [["search", {"pattern": "foo bar"}]],
        "qwen_function",
        0,
        "Sure.\n\nDone?",
        id="Qwen form inside tool_call",
    ),
    pytest.param(
        "<function=search><parameter=pattern>foo<parameter=path>src</function>",
        [["search", {"pattern": "foo", "path": "src"}]],
        "qwen_function",
        0,
        "",
        id="Qwen without </parameter>",
    ),
    pytest.param(
        'I will read it.\n{"name": "read_file", "arguments": {"path": "a.py"}}',
        [["read_file", {"path": "a.py"}]],
        "bare_json",
        0,
        "I will read it.",
        id="bare trailing JSON",
    ),
    pytest.param(
        '{"name": "list_files", "parameters": {"path": "."}}\n',
        [["list_files", {"path": "."}]],
        "bare_json",
        0,
        "",
        id="bare JSON with parameters",
    ),
    pytest.param(
        (
            '{"name": "read_file", "arguments": {"path": "a"}}\n{"name": "read_fi'
            'le", "arguments": {"path": "b"}}'
        ),
        [["read_file", {"path": "a"}], ["read_file", {"path": "b"}]],
        "bare_json,bare_json",
        0,
        "",
        id="two bare objects at the end",
    ),
    pytest.param(
        ('{"name": "read_file", "arguments": {"path": "a.py"}} is what I would send.'),
        [],
        "",
        0,
        ('{"name": "read_file", "arguments": {"path": "a.py"}} is what I would send.'),
        id="bare JSON followed by prose",
    ),
    pytest.param(
        'The answer is\n{"path": "a.py", "lines": 3}',
        [],
        "",
        0,
        'The answer is\n{"path": "a.py", "lines": 3}',
        id="bare JSON that is just data",
    ),
    # call syntax
    pytest.param(
        'read_file("src/app.py", 20)',
        [["read_file", {"path": "src/app.py", "max_lines": 20}]],
        "call_syntax",
        0,
        "",
        id="positional arguments",
    ),
    pytest.param(
        "Let me search. search(pattern='def main', path=\"src\")",
        [["search", {"pattern": "def main", "path": "src"}]],
        "call_syntax",
        0,
        "Let me search.",
        id="keywords and single quotes",
    ),
    pytest.param(
        'search {"pattern": "foo"}',
        [["search", {"pattern": "foo"}]],
        "call_syntax",
        0,
        "",
        id="braces after the name",
    ),
    pytest.param(
        'search("x", path=None) and read_file(path="a", max_lines=-3)',
        [["search", {"pattern": "x", "path": None}], ["read_file", {"path": "a", "max_lines": -3}]],
        "call_syntax,call_syntax",
        0,
        "and",
        id="Python and JSON literals",
    ),
    pytest.param(
        "list_files()",
        [["list_files", {}]],
        "call_syntax",
        0,
        "",
        id="empty parentheses",
    ),
    pytest.param(
        'Running `list_files(".")` now.',
        [["list_files", {"path": "."}]],
        "call_syntax",
        0,
        "Running  now.",
        id="inline code around a call",
    ),
    pytest.param(
        '```python\nread_file("a.py")\n```',
        [["read_file", {"path": "a.py"}]],
        "call_syntax",
        0,
        "",
        id="call in a python fence",
    ),
    pytest.param(
        'Use print("x") or re.search("a", s) or search(pattern) to find it.',
        [],
        "",
        0,
        'Use print("x") or re.search("a", s) or search(pattern) to find it.',
        id="prose that looks like code",
    ),
    pytest.param(
        'write_file("a.py", "x")',
        [],
        "",
        0,
        'write_file("a.py", "x")',
        id="unknown tool in call syntax",
    ),
    pytest.param(
        'read_file("a", 1, 2)',
        [],
        "",
        1,
        "",
        id="too many positional arguments",
    ),
    pytest.param(
        "I have read_file {path, max_lines?} and more.",
        [],
        "",
        0,
        "I have read_file {path, max_lines?} and more.",
        id="the tool list echoed back",
    ),
    # hard cases
    pytest.param(
        '```tool\n{"name": "write_file", "arguments": {"path": "a.py"}}\n```',
        [["write_file", {"path": "a.py"}]],
        "fence",
        0,
        "",
        id="unknown tool in a fence",
    ),
    pytest.param(
        (
            '```tool\n{"name": "search", "arguments": {"pattern": "}} ``` {{ \\"q'
            'uoted\\" \\\\"}}\n```'
        ),
        [["search", {"pattern": '}} ``` {{ "quoted" \\'}]],
        "fence",
        0,
        "",
        id="braces and a fence in a string",
    ),
    pytest.param(
        (
            '<tool_call>{"name": "search", "arguments": {"pattern": "<tool_call>{'
            '\\"name\\""}}</tool_call>'
        ),
        [["search", {"pattern": '<tool_call>{"name"'}]],
        "tool_call_tag",
        0,
        "",
        id="a tag inside an argument",
    ),
    pytest.param(
        ('```tool\n{"name": "search", "arguments": {"pattern": "a\nb", "path": "c\\nd"}}\n```'),
        [["search", {"pattern": "a\nb", "path": "c\nd"}]],
        "fence",
        0,
        "",
        id="a newline written raw",
    ),
    pytest.param(
        (
            'Ich schaue nach 🔍\n```tool\n{"name": "read_file", "arguments": {"pat'
            'h": "docs/naïve-日本.md"}}\n```'
        ),
        [["read_file", {"path": "docs/naïve-日本.md"}]],
        "fence",
        0,
        "Ich schaue nach 🔍",
        id="unicode everywhere",
    ),
    pytest.param(
        ('```tool\n{"name": "read_file", "arguments": {"path": "a.py" "max_lines": 3}}\n```\nok'),
        [],
        "",
        1,
        "ok",
        id="malformed JSON in a fence",
    ),
    pytest.param(
        '<tool_call>{"name": "search", "arguments": {"pattern": "x',
        [],
        "",
        1,
        "",
        id="JSON cut off in a tag",
    ),
    pytest.param(
        "```tool\n```\nSorry.",
        [],
        "",
        1,
        "Sorry.",
        id="an empty tool fence",
    ),
    pytest.param(
        '```tool\n{"arguments": {"path": "a"}}\n```',
        [],
        "",
        1,
        "",
        id="a fence with no tool name",
    ),
    pytest.param(
        '<tool_call>{"name": "search", "arguments": ["x"]}</tool_call>',
        [],
        "",
        1,
        "",
        id="arguments that are a list",
    ),
    pytest.param(
        '```tool\n{"name": "list_files", "arguments": {}}\n```',
        [["list_files", {}]],
        "fence",
        0,
        "",
        id="empty arguments",
    ),
    pytest.param(
        '<tool_call>{"name": "list_files"}</tool_call>',
        [["list_files", {}]],
        "tool_call_tag",
        0,
        "",
        id="missing arguments",
    ),
    pytest.param(
        (
            'A\n```tool\n{"name": "list_files", "arguments": {}}\n```\nB\n<functi'
            'on=read_file><parameter=path>x</parameter></function>\nC read_file("'
            'y") D\n<tool_call>{"name": "search", "arguments": {"pattern": "z"}}<'
            "/tool_call>"
        ),
        [
            ["list_files", {}],
            ["read_file", {"path": "x"}],
            ["read_file", {"path": "y"}],
            ["search", {"pattern": "z"}],
        ],
        "fence,qwen_function,call_syntax,tool_call_tag",
        0,
        "A\n\nB\n\nC  D",
        id="every form in one reply",
    ),
    pytest.param(
        (
            '```tool\n{"name": "read_file", "arguments": {"path": }}\n```\n```too'
            'l\n{"name": "read_file", "arguments": {"path": "a"}}\n```'
        ),
        [["read_file", {"path": "a"}]],
        "fence",
        1,
        "",
        id="a broken call then a good one",
    ),
    pytest.param(
        "The answer is 42.",
        [],
        "",
        0,
        "The answer is 42.",
        id="no call at all",
    ),
]


@pytest.mark.parametrize(("reply", "calls", "forms", "broken", "prose"), PARSE_CASES)
def test_the_parser_reads_calls_from_a_reply(
    reply: str, calls: list[Any], forms: str, broken: int, prose: str
) -> None:
    parsed = parse_tool_calls(reply, tools=TOOLS)

    got = [[call.name, call.args] for call in parsed.calls]
    assert got == calls, f"expected {calls}, got {got} (broken: {parsed.broken})"
    assert ",".join(call.form for call in parsed.calls) == forms
    assert len(parsed.broken) == broken, parsed.broken
    assert all("\n" not in entry and entry for entry in parsed.broken), parsed.broken
    assert parsed.prose == prose, repr(parsed.prose)


def test_the_call_spans_point_at_the_call_text() -> None:
    call_text = '<tool_call>{"name": "search", "arguments": {"pattern": "x"}}</tool_call>'
    reply = f"Look: {call_text} ok"

    call = parse_tool_calls(reply, tools=TOOLS).calls[0]

    assert reply[call.start : call.end] == call_text


def test_the_parser_waits_while_a_reply_is_still_streaming() -> None:
    bare = 'Let me check.\n{"name": "read_file", "arguments": {"path": "a.py"}}'
    parsed = parse_tool_calls(bare, tools=TOOLS, final=False)
    assert parsed.calls == () and parsed.broken == ()

    fence = '```tool\n{"name": "read_file", "arguments": {"pa'
    parsed = parse_tool_calls(fence, tools=TOOLS, final=False)
    assert parsed.calls == () and parsed.broken == ()
    assert parsed.pending, parsed

    qwen = "<function=search>\n<parameter=pattern>\nfoo\n</parameter>\n<parameter=pa"
    parsed = parse_tool_calls(qwen, tools=TOOLS, final=False)
    assert parsed.pending, parsed
    assert not parsed.calls and not parsed.broken, parsed
    # The same text as a finished reply is one broken call.
    assert len(parse_tool_calls(qwen, tools=TOOLS).broken) == 1


def test_a_reply_with_a_one_megabyte_argument_is_read_whole() -> None:
    rng = random.Random(1_000_000)  # noqa: S311 - a fixed seed, not a secret
    pattern = "".join(rng.choice('{}[]"\\`<>\n xyz') for _ in range(1_000_000))
    call = json.dumps({"name": "search", "arguments": {"pattern": pattern}})

    parsed = parse_tool_calls(f"Searching.\n```tool\n{call}\n```\n", tools=TOOLS)

    assert len(parsed.calls) == 1 and parsed.calls[0].name == "search", parsed.broken
    assert parsed.calls[0].args["pattern"] == pattern
    assert parsed.prose == "Searching."


def test_the_correction_for_a_broken_call_is_one_line_with_an_example() -> None:
    reply = '```tool\n{"name": "read_file", "arguments": {"path": "a.py",, }\n```'
    parsed = parse_tool_calls(reply, tools=TOOLS)
    assert len(parsed.broken) == 1, parsed.broken

    correction = correction_for(parsed.broken[0])

    assert "\n" not in correction
    assert correction.startswith("Your tool call could not be read (")
    assert parsed.broken[0] in correction
    example = correction.split("```tool block: ", 1)[1]
    calls = parse_tool_calls(f"```tool\n{example}\n```", tools=TOOLS).calls
    assert [c.name for c in calls] == ["read_file"], calls
    custom = correction_for("x\ny", example='{"name": "search", "arguments": {}}')
    assert "(x y)" in custom and custom.endswith('{"name": "search", "arguments": {}}')


def test_no_reply_of_the_table_falls_back_to_prose_after_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """parse_tool_calls catches everything and logs "parser failed": none of these may."""
    with caplog.at_level(logging.DEBUG, logger="leanloop.protocol"):
        for case in PARSE_CASES:
            parse_tool_calls(case.values[0], tools=TOOLS)  # type: ignore[arg-type]
    assert not [r for r in caplog.records if "parser failed" in r.getMessage()]
