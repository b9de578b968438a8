"""Units of the pass's stop rules."""

from __future__ import annotations

from leanloop.pruning.reading import (
    FINAL_REASONS,
    NO_FOCUS_WORD,
    NOTHING_MORE,
    OVER_ALLOWANCE,
    PATIENCE,
    ReadingRules,
)


def test_requests_without_a_focus_word_are_not_read() -> None:
    rules = ReadingRules(scoring=2)
    assert rules.refusal(1, 100) is None
    assert rules.refusal(2, 100) == NO_FOCUS_WORD


def test_the_pass_stops_after_empty_requests_once_something_was_found() -> None:
    rules = ReadingRules(scoring=10)
    rules.finish(kept=False)  # nothing found yet: no count
    assert rules.refusal(1, 10) is None
    rules.finish(kept=True)
    for _ in range(PATIENCE):
        assert rules.refusal(3, 10) is None
        rules.finish(kept=False)
    assert rules.refusal(5, 10) == NOTHING_MORE


def test_reading_in_order_never_runs_out_of_evidence() -> None:
    rules = ReadingRules(scoring=0)
    rules.finish(kept=True)
    rules.finish(kept=False)
    rules.finish(kept=False)
    assert rules.refusal(9, 10) is None


def test_the_first_request_is_read_whatever_the_allowance() -> None:
    rules = ReadingRules(scoring=None, allowance=50)
    assert rules.refusal(0, 500) is None
    rules.start(500)
    assert rules.refusal(1, 10) == OVER_ALLOWANCE


def test_final_reasons_are_the_rules_own() -> None:
    assert {NO_FOCUS_WORD, NOTHING_MORE, OVER_ALLOWANCE} == FINAL_REASONS
