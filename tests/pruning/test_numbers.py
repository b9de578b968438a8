"""Units of reading a small model's answer of line numbers."""

from __future__ import annotations

import pytest

from leanloop.pruning.extraction import _keeps
from leanloop.pruning.markers import PruneParse
from leanloop.pruning.numbers import MAX_RANGE_LINES, lines_named
from leanloop.pruning.prompt import Chunk, carries_own_numbers, numbered_entries, window_chunk
from leanloop.pruning.verify import RawIndex

LOG = [f"{n:6d}| event {n}" for n in range(1, 121)]


def _chunk(first: int, last: int) -> Chunk:
    entries = numbered_entries(LOG, 10_000, one_number=True)
    return window_chunk(entries, [(first - 1, last - 1)])


@pytest.mark.parametrize(
    "answer",
    [
        "[39]",
        "39",
        "[PRUNE_OUTPUT_START, 39]",
        "[PRUNE_OUTPUT_START]\n39\n[PRUNE_OUTPUT_END]",
        "line 39",
        "#39.",
    ],
)
def test_the_forms_a_small_model_writes_name_the_line(answer: str) -> None:
    assert lines_named(answer, _chunk(38, 41)) == "  39| event 39"


def test_ranges_and_lists_name_each_line_once_in_order() -> None:
    named = lines_named("40, 38-39 and 39", _chunk(38, 41))
    assert named == "  38| event 38\n  39| event 39\n  40| event 40"


def test_a_number_the_request_did_not_show_names_nothing() -> None:
    assert lines_named("[7]", _chunk(38, 41)) == ""
    assert lines_named("[2, 39]", _chunk(38, 41)) == "  39| event 39"  # 2: not a place then


def test_numbers_that_are_only_places_in_the_request_name_those_lines() -> None:
    assert lines_named("[3]", _chunk(21, 24)) == "  23| event 23"
    assert lines_named("1-2", _chunk(21, 24)) == "  21| event 21\n  22| event 22"


def test_a_number_that_ends_one_shown_number_names_that_line() -> None:
    # The 1.5B answered "25" for line 125 of a window of lines 124-126.
    assert lines_named("25", _chunk(99, 101)) == ""  # ends no shown number
    assert lines_named("19", _chunk(118, 120)) == " 119| event 119"
    assert lines_named("[10]", _chunk(108, 111)) == " 110| event 110"
    assert lines_named("9", _chunk(108, 111)) == ""  # one digit: a place, or nothing


def test_a_range_over_the_limit_is_no_choice() -> None:
    assert lines_named(f"1-{MAX_RANGE_LINES + 1}", _chunk(1, 100)) == ""


def test_copied_lines_and_empty_answers_are_not_numbers() -> None:
    assert lines_named("  39| event 39", _chunk(38, 41)) is None
    assert lines_named("[PRUNE_OUTPUT_START] [PRUNE_OUTPUT_END]", _chunk(38, 41)) is None
    assert lines_named("no line matches", _chunk(38, 41)) is None


def test_read_file_lines_are_shown_under_one_number() -> None:
    assert carries_own_numbers(LOG)
    assert numbered_entries(LOG[:2], 1_000, one_number=True)[0][1] == "   1| event 1"
    assert numbered_entries(LOG[:2], 1_000)[0][1] == "   1|      1| event 1"


def test_an_output_that_numbers_few_lines_keeps_them() -> None:
    lines = ["12| a table row", "plain text", "more text", "and more"]
    assert not carries_own_numbers(lines)
    assert numbered_entries(lines, 1_000, one_number=True)[0][1] == "   1| 12| a table row"


def test_keeping_only_read_files_closing_line_is_not_finding_something() -> None:
    raw = [f"{n:6d}| event {n}" for n in range(1, 4)] + ["[lines 1-3 of 3; end of file]"]
    footer = PruneParse(info=None, output="   4| [lines 1-3 of 3; end of file]")
    line = PruneParse(info=None, output="   2| event 2")
    assert not _keeps(footer, RawIndex(raw)) and not _keeps(footer, None)
    assert _keeps(line, RawIndex(raw)) and _keeps(line, None)
