"""ContextPlan.for_window: the shares of src/leanloop/budget/plan.py's docstring, in figures."""

from __future__ import annotations

import pytest

from leanloop.budget.plan import ContextPlan


@pytest.mark.parametrize(
    ("window", "reserve", "ceiling", "trim_target", "warn_at"),
    [
        # 20% of 4,096 is 819; 85% is 3,481 (rounded down); 3,481 - 819 = 2,662.
        (4_096, 819, 2_662, 1_730, 1_996),
        # 85% of 1,000 is exactly 850 (the epsilon keeps it from 849).
        (1_000, 200, 650, 422, 487),
        # A large window: the reply reserve stops at 2,048.
        (131_072, 2_048, 109_363, 71_085, 82_022),
        # 510 - 120 = 390 is under the 512 floor.
        (600, 120, 512, 332, 384),
        # The floor never goes past the window itself.
        (300, 60, 300, 195, 225),
    ],
)
def test_a_window_is_shared_out_by_the_documented_shares(
    window: int, reserve: int, ceiling: int, trim_target: int, warn_at: int
) -> None:
    plan = ContextPlan.for_window(window)

    assert plan.window == window
    assert plan.budget_percent == 0.85
    assert plan.reply_reserve == reserve
    assert plan.ceiling == ceiling
    assert plan.trim_target == trim_target
    assert plan.warn_at == warn_at


def test_max_tokens_is_the_reply_reserve() -> None:
    plan = ContextPlan.for_window(4_096, max_tokens=500)

    assert plan.reply_reserve == 500
    assert plan.ceiling == 3_481 - 500


def test_a_smaller_budget_share_lowers_the_ceiling() -> None:
    plan = ContextPlan.for_window(10_000, budget_percent=0.5)

    assert plan.ceiling == 5_000 - 2_000


def test_the_whole_window_may_be_the_budget() -> None:
    assert ContextPlan.for_window(1_000, budget_percent=1.0).ceiling == 800


@pytest.mark.parametrize("window", [0, -1, True, 4096.0, "4096"])
def test_a_window_that_is_not_a_positive_whole_number_is_refused(window: object) -> None:
    with pytest.raises(ValueError, match="context window must be a positive number"):
        ContextPlan.for_window(window)  # type: ignore[arg-type]


@pytest.mark.parametrize("share", [0, -0.1, 1.01])
def test_a_budget_share_outside_zero_to_one_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="token_budget_percent must be in"):
        ContextPlan.for_window(4_096, budget_percent=share)


def test_a_max_tokens_under_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_tokens must be a positive number"):
        ContextPlan.for_window(4_096, max_tokens=0)


def test_a_plan_built_by_hand_must_be_consistent() -> None:
    with pytest.raises(ValueError, match="inconsistent plan"):
        ContextPlan(
            window=1_000,
            budget_percent=0.85,
            reply_reserve=200,
            ceiling=650,
            trim_target=500,
            warn_at=400,
        )


@pytest.mark.parametrize(
    ("window", "chars_per_token", "cap"),
    [
        # 20% of 4,096 tokens is 819.2; at 4 characters a token, 3,276 characters.
        (4_096, 4.0, 3_276),
        # Under the 2,000-character floor.
        (4_096, 1.0, 2_000),
        # Over the 30,000-character cap.
        (131_072, 4.0, 30_000),
    ],
)
def test_the_result_cap_is_a_fifth_of_the_window_in_characters_clamped(
    window: int, chars_per_token: float, cap: int
) -> None:
    assert ContextPlan.for_window(window).result_cap_chars(chars_per_token) == cap
