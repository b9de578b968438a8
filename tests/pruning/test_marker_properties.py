"""Hypothesis: escaped tool output round-trips and never holds a live pruning marker, and
reading a pruning answer raises nothing but PruneFormatError.

Moved from features/spec/properties.feature (issue 26). 700 generated inputs each,
derandomized and without an example database: arbitrary text (lone surrogates, NUL and
control characters included), soups of marker fragments, and mutations of valid answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage
from support.text_strategies import ANY_TEXT, mutations, soup

from leanloop.pruning.markers import (
    OUTPUT_START,
    RESERVED_MARKERS,
    PruneFormatError,
    PruneParse,
    escape_reserved,
    format_pruned,
    is_pruned,
    parse_prune_response,
    restore_reserved,
)

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

_MARKER_PIECES = [
    *RESERVED_MARKERS,
    *(f"[\\{m[1:]}" for m in RESERVED_MARKERS),
    *(f"[\\\\{m[1:]}" for m in RESERVED_MARKERS),
    *(f"\n{m}\n" for m in RESERVED_MARKERS),
    *(f"\n  {m} " for m in RESERVED_MARKERS),
    *("[", "]", "\\", "[\\", "PRUNE_", "PRUNE_INFO", "PRUNE_OUTPUT", "_START]", "_END]"),
    *("\n", " ", "\t", "\r", "```", "```text\n", "~~~", "x", "日本", "\x00", "\ud800"),
]
_MARKER_TEXT = st.one_of(ANY_TEXT, soup(_MARKER_PIECES))

_PRUNE_SAMPLES = [
    format_pruned("kept 2 of 40 lines", "ERROR db: deadlock\nERROR db: retry failed"),
    "Sure!\n```text\n[PRUNE_INFO_START]\nkept 1\n[PRUNE_INFO_END]\n"
    "[PRUNE_OUTPUT_START]\nline\n[PRUNE_OUTPUT_END]\n```",
    "[PRUNE_OUTPUT_START] first line\nsecond\n```",
    "[PRUNE_OUTPUT_START]\na\n[PRUNE_OUTPUT_END]\n[PRUNE_OUTPUT_START]\nb\n[PRUNE_OUTPUT_END]",
]


@tried_at_least(EXAMPLES)
@PROPERTY
@given(_MARKER_TEXT, _MARKER_TEXT)
def test_escaped_tool_output_round_trips_and_never_holds_a_live_marker(
    output: str, info: str
) -> None:
    escaped = escape_reserved(output)
    assert restore_reserved(escaped) == output, escaped
    # Escaping twice is undone by restoring twice: a bijection, not a one-off.
    assert restore_reserved(escape_reserved(escaped)) == escaped
    live = [m for m in RESERVED_MARKERS if m in escaped]
    assert not live, (live, escaped)
    try:
        parse_prune_response(escaped)
    except PruneFormatError:
        pass
    else:
        raise AssertionError(f"escaped tool output read as a pruning answer: {escaped!r}")
    assert not is_pruned(ToolMessage(content=escaped, tool_call_id="call-1"))
    # Framed by the real markers, escaped text comes back whole: it cannot end a block
    # early or open another one.
    parsed = parse_prune_response(format_pruned(escape_reserved(info), escaped))
    assert parsed.output == escaped, (parsed.output, escaped)
    assert restore_reserved(parsed.output) == output
    assert parsed.info == escape_reserved(info).strip(), (parsed.info, info)


@tried_at_least(EXAMPLES)
@PROPERTY
@given(st.one_of(_MARKER_TEXT, mutations(_PRUNE_SAMPLES, _MARKER_PIECES)))
def test_reading_a_pruning_answer_raises_nothing_but_prune_format_error(text: str) -> None:
    opens_output = any(ln.lstrip().startswith(OUTPUT_START) for ln in text.split("\n"))
    try:
        parsed = parse_prune_response(text)
    except PruneFormatError:
        assert not opens_output, "an answer with an OUTPUT block was refused"
        return
    assert opens_output, "an answer without an OUTPUT block was accepted"
    assert isinstance(parsed, PruneParse) and isinstance(parsed.output, str)
    assert parsed.info is None or isinstance(parsed.info, str)
    restore_reserved(parsed.output)
