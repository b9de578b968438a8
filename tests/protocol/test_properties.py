"""Hypothesis: the text-protocol parser reads any reply without raising or falling back.

Moved from features/spec/properties.feature (issue 26). 700 generated inputs, derandomized (the
same inputs on every run, so a failure replays) and without an example database (nothing
is written into the checkout): arbitrary text (lone surrogates, NUL and control characters
included), soups of the tokens the parser cares about, mutations of valid replies, and
deep nesting. ``parse_tool_calls`` catches everything and logs "parser failed": a swallowed
bug is still a bug, so the log is watched too.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.text_strategies import ANY_TEXT, mutations, soup

from leanloop.protocol import CALL_FORMS, ParseResult, correction_for, parse_tool_calls

EXAMPLES = 700


def tried_at_least(count: int) -> Callable[[Any], Callable[[], None]]:
    """Run a hypothesis test, then check it tried ``count`` inputs (a narrow strategy would
    not). Wraps hypothesis's documented ``.hypothesis.inner_test`` hook."""

    def wrap(test: Any) -> Callable[[], None]:
        inner = test.hypothesis.inner_test
        tried = [0]

        def counting(*args: Any, **kwargs: Any) -> None:
            tried[0] += 1
            inner(*args, **kwargs)

        test.hypothesis.inner_test = counting

        def run() -> None:
            tried[0] = 0
            test()
            assert tried[0] >= count, f"only {tried[0]} generated inputs were tried"

        run.__name__, run.__doc__ = test.__name__, test.__doc__
        return run

    return wrap


PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_PARSER_TOOLS = {
    "read_file": ["path", "max_lines"],
    "search": ["pattern", "path"],
    "list_files": ["path"],
}
_PARSER_SAMPLES = [
    'Let me look.\n```tool\n{"name": "read_file", "arguments": {"path": "src/app.py"}}\n```',
    '```json\n{"name": "search", "parameters": {"pattern": "a\\"}b", "path": "src"}}\n```',
    '<tool_call>\n{"name": "search", "arguments": "{\\"pattern\\": \\"}\\"}"}\n</tool_call>',
    "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
    "<parameter=max_lines>\n40\n</parameter>\n</function>\n</tool_call>",
    'Checking.\n{"name": "list_files", "arguments": {"path": "."}}',
    "First read_file('a.py', 20) then search(pattern=\"x\", path=None).",
    '```tool\n[{"name": "read_file", "arguments": {"path": "日本.md"}}]\n```\n'
    '```tool\nsearch("q")\n```',
    'Sure <function=search><parameter=pattern>{"a": [1, 2]}<parameter=path>src</function> ok',
]
_PARSER_PIECES = [
    *("{", "}", "[", "]", '"', "'", "\\", ":", ",", "(", ")", "="),
    *("```", "```tool\n", "```json\n", "```tool_call\n", "<tool_call>", "</tool_call>"),
    *("<function=", "<function=read_file>", "<parameter=", "<parameter=path>"),
    *("</parameter>", "</function>", '"name"', '"arguments"', '"parameters"', '"function"'),
    *('"name": "read_file"', '"arguments": {', "read_file", "search", "list_files"),
    *("read_file(", "search {", "\n", "\n\n\n", " ", "\t", "\r\n", "null", "true"),
    *("1e999", "-0", "NaN", "Infinity", "\\u0000", "\\ud800", "\ud800", "\x00", "日本"),
]
# Deep nesting and long runs: what blows recursion limits or quadratic scans.
_PARSER_DEEP = st.tuples(
    st.sampled_from(["```tool\n", "<tool_call>", '{"name": "read_file", "arguments": ', ""]),
    st.sampled_from(["[", "{", '{"a":', "read_file(", "(", "<parameter=path>", '"', "\\"]),
    st.integers(1, 3_000),
).map(lambda t: t[0] + t[1] * t[2])
_REPLIES = st.one_of(
    ANY_TEXT, soup(_PARSER_PIECES), mutations(_PARSER_SAMPLES, _PARSER_PIECES), _PARSER_DEEP
)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


_LOG = _Records()


@pytest.fixture(autouse=True, scope="module")
def _watch_the_parser_log() -> Iterator[None]:
    logger = logging.getLogger("leanloop.protocol")
    logger.addHandler(_LOG)
    yield
    logger.removeHandler(_LOG)


def _exc_text(record: logging.LogRecord) -> str:
    if record.exc_info:
        return logging.Formatter().formatException(record.exc_info)
    return record.getMessage()


@tried_at_least(EXAMPLES)
@PROPERTY
@given(_REPLIES, st.booleans())
def test_the_parser_reads_any_reply_without_raising_or_falling_back(text: str, final: bool) -> None:
    before = len(_LOG.records)
    result = parse_tool_calls(text, tools=_PARSER_TOOLS, final=final)
    fallbacks = [r for r in _LOG.records[before:] if "parser failed" in r.getMessage()]
    assert not fallbacks, _exc_text(fallbacks[0])
    assert isinstance(result, ParseResult)
    assert isinstance(result.prose, str) and isinstance(result.calls, tuple)
    assert result.pending is False or not final
    for call in result.calls:
        assert call.form in CALL_FORMS and isinstance(call.name, str) and call.name, call
        assert isinstance(call.args, dict), call
        assert 0 <= call.start < call.end <= len(text), call
        json.dumps(call.args)
    for entry in result.broken:
        assert isinstance(entry, str) and entry and "\n" not in entry, entry
        assert "\n" not in correction_for(entry)
