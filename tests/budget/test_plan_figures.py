"""The budget context plan in figures (src/leanloop/budget/plan.py), moved from
features/budget_plan.feature (issue 26).

A context window is shared out: a reserve for the reply, a ceiling for the request, a
target trimming stops at, a warning line, and a cap for any one tool result.
"""

from __future__ import annotations

from typing import Any

import pytest

from leanloop.budget import ContextPlan


@pytest.mark.parametrize(
    ("window", "reserve", "ceiling", "target", "warn", "cap"),
    [
        (2048, 409, 1331, 865, 998, 2000),
        (8192, 1638, 5325, 3461, 3993, 5406),
        (32768, 2048, 25804, 16772, 19353, 21626),
        (128000, 2048, 106752, 69388, 80064, 30000),
    ],
)
def test_the_plan_of_common_windows_at_the_default_budget_share(
    window: int, *, reserve: int, ceiling: int, target: int, warn: int, cap: int
) -> None:
    plan = ContextPlan.for_window(window)

    assert plan.window == window
    assert plan.reply_reserve == reserve, plan
    assert plan.ceiling == ceiling, plan
    assert plan.trim_target == target, plan
    assert plan.warn_at == warn, plan
    assert plan.result_cap_chars(3.3) == cap


def test_the_reply_limit_is_the_plan_reply_reserve_when_set() -> None:
    plan = ContextPlan.for_window(8192, max_tokens=512)

    assert plan.reply_reserve == 512, plan
    assert plan.ceiling == 6451, plan


def test_a_smaller_budget_share_lowers_the_plan_ceiling() -> None:
    plan = ContextPlan.for_window(32768, budget_percent=0.5)

    assert plan.budget_percent == 0.5
    assert plan.ceiling == 14336, plan
    assert plan.trim_target == 9318, plan


def test_the_whole_window_may_be_budgeted_in_the_plan() -> None:
    plan = ContextPlan.for_window(1000, budget_percent=1.0)

    assert plan.reply_reserve == 200, plan
    assert plan.ceiling == 800, plan


def test_the_plan_ceiling_never_drops_under_512_tokens() -> None:
    plan = ContextPlan.for_window(600)

    assert plan.ceiling == 512, plan
    assert plan.trim_target == 332, plan


def test_the_plan_ceiling_never_exceeds_a_tiny_window() -> None:
    assert ContextPlan.for_window(300).ceiling == 300


def test_a_reply_limit_as_big_as_the_window_leaves_the_plan_its_floor() -> None:
    assert ContextPlan.for_window(4096, max_tokens=4096).ceiling == 512


@pytest.mark.parametrize(
    ("window", "ratio", "cap"),
    [(32768, 2.0, 13107), (32768, 6.0, 30000), (4096, 2.0, 2000), (16384, 4.5, 14745)],
)
def test_the_plan_result_cap_follows_the_learned_ratio_within_2000_to_30000(
    window: int, ratio: float, cap: int
) -> None:
    assert ContextPlan.for_window(window).result_cap_chars(ratio) == cap


def _fails(text: str, **figures: Any) -> None:
    with pytest.raises(ValueError) as refused:
        ContextPlan.for_window(**figures)
    assert text in str(refused.value), str(refused.value)


@pytest.mark.parametrize(
    ("window", "share", "text"),
    [
        (0, 0.85, "the context window must be a positive number of tokens"),
        (-5, 0.85, "the context window must be a positive number of tokens"),
        (8192, 0.0, "token_budget_percent must be in (0, 1], got 0.0"),
        (8192, 1.5, "token_budget_percent must be in (0, 1], got 1.5"),
        (8192, -0.2, "token_budget_percent must be in (0, 1]"),
    ],
)
def test_a_plan_with_bad_figures_is_a_clear_error(window: int, share: float, text: str) -> None:
    _fails(text, window=window, budget_percent=share)


def test_a_plan_with_a_zero_reply_limit_is_a_clear_error() -> None:
    _fails("max_tokens must be a positive number of tokens", window=8192, max_tokens=0)


def _by_hand(**changes: Any) -> ContextPlan:
    figures: dict[str, Any] = {
        "window": 8192,
        "budget_percent": 0.85,
        "reply_reserve": 1638,
        "ceiling": 5325,
        "trim_target": 3461,
        "warn_at": 3993,
    }
    figures.update(changes)
    return ContextPlan(**figures)


@pytest.mark.parametrize(
    ("changes", "text"),
    [
        ({"ceiling": 100}, "inconsistent plan"),
        ({"window": 0}, "the context window must be a positive number"),
        ({"budget_percent": 2.0}, "token_budget_percent must be in (0, 1]"),
    ],
)
def test_a_plan_built_by_hand_is_validated_too(changes: dict[str, Any], text: str) -> None:
    assert _by_hand().ceiling == 5325

    with pytest.raises(ValueError) as refused:
        _by_hand(**changes)

    assert text in str(refused.value), str(refused.value)
