"""Units of the pass's stop rules."""

from __future__ import annotations

from leanloop.pruning.reading import (
    FINAL_REASONS,
    NO_FOCUS_WORD,
    NOT_NAMED,
    NOTHING_MORE,
    OVER_ALLOWANCE,
    PATIENCE,
    WEAKER,
    WEAKER_SHARE,
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
    assert {NO_FOCUS_WORD, NOT_NAMED, NOTHING_MORE, OVER_ALLOWANCE, WEAKER} == FINAL_REASONS


def test_a_request_matching_much_less_than_the_lines_found_is_not_read() -> None:
    # The context suite's api-04.log: the line asked for scores 26.9, its near misses
    # (another service, same keys) 14.2.
    rules = ReadingRules(scoring=3, peaks=(26.9, 14.2, 20.0))
    assert rules.refusal(1, 10) is None  # nothing found yet: nothing to compare with
    rules.start(10)
    rules.finish(kept=True, position=0)
    assert rules.refusal(1, 10) == WEAKER
    assert rules.refusal(2, 10) is None  # 20.0 is over the share of 26.9


def test_the_share_is_judged_against_requests_that_kept_something() -> None:
    rules = ReadingRules(scoring=3, peaks=(30.0, 10.0, 9.0))
    rules.finish(kept=False, position=0)  # the best request kept nothing
    assert rules.refusal(1, 10) is None
    rules.finish(kept=True, position=1)
    assert rules.refusal(2, 10) is None  # 9.0 is over the share of 10.0
    assert WEAKER_SHARE * 10.0 < 9.0


def test_unknown_peaks_never_stop_a_reading() -> None:
    rules = ReadingRules(scoring=3)
    rules.finish(kept=True, position=0)
    assert rules.refusal(2, 10) is None


def test_reading_in_order_has_no_weaker_match() -> None:
    rules = ReadingRules(scoring=0, peaks=(0.0, 0.0))
    rules.finish(kept=True, position=0)
    assert rules.refusal(1, 10) is None
