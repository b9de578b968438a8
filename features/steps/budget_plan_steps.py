"""Steps for features/budget_plan.feature: how a context window is shared out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behave import given, then
from behave.runner import Context

from leanloop.budget import ContextPlan


def _fails(build: Callable[[], Any], text: str) -> None:
    try:
        build()
    except ValueError as exc:
        assert text in str(exc), str(exc)
    else:
        raise AssertionError(f"the plan was accepted; expected an error with {text!r}")


@given("a context plan for a window of {window:d} tokens")
def step_plan(context: Context, window: int) -> None:
    context.budget_plan = ContextPlan.for_window(window)
    assert context.budget_plan.window == window


@given("a context plan for a window of {window:d} tokens with a reply limit of {limit:d} tokens")
def step_plan_limit(context: Context, window: int, limit: int) -> None:
    context.budget_plan = ContextPlan.for_window(window, max_tokens=limit)
    assert context.budget_plan.window == window


@given("a context plan for a window of {window:d} tokens at a budget share of {share:f}")
def step_plan_share(context: Context, window: int, share: float) -> None:
    context.budget_plan = ContextPlan.for_window(window, budget_percent=share)
    assert context.budget_plan.budget_percent == share


@then("the plan reserves {tokens:d} tokens for the reply")
def step_reserve(context: Context, tokens: int) -> None:
    assert context.budget_plan.reply_reserve == tokens, context.budget_plan


@then("the plan ceiling is {tokens:d} tokens")
def step_ceiling(context: Context, tokens: int) -> None:
    assert context.budget_plan.ceiling == tokens, context.budget_plan


@then("the plan trim target is {tokens:d} tokens")
def step_target(context: Context, tokens: int) -> None:
    assert context.budget_plan.trim_target == tokens, context.budget_plan


@then("the plan warns at {tokens:d} tokens")
def step_warn(context: Context, tokens: int) -> None:
    assert context.budget_plan.warn_at == tokens, context.budget_plan


@then("the plan caps one result at {chars:d} characters at {ratio:f} characters a token")
def step_cap(context: Context, chars: int, ratio: float) -> None:
    cap = context.budget_plan.result_cap_chars(ratio)
    assert cap == chars, cap


@then(
    "a context plan for a window of {window:d} tokens at a budget share of {share:f} fails with "
    '"{text}"'
)
def step_plan_fails(context: Context, window: int, share: float, text: str) -> None:
    _fails(lambda: ContextPlan.for_window(window, budget_percent=share), text)


@then(
    "a context plan for a window of {window:d} tokens with a reply limit of {limit:d} tokens "
    'fails with "{text}"'
)
def step_plan_limit_fails(context: Context, window: int, limit: int, text: str) -> None:
    _fails(lambda: ContextPlan.for_window(window, max_tokens=limit), text)


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


@then('a hand-built context plan with a ceiling under its trim target fails with "{text}"')
def step_hand_inconsistent(context: Context, text: str) -> None:
    assert _by_hand().ceiling == 5325
    _fails(lambda: _by_hand(ceiling=100), text)


@then('a hand-built context plan for a window of {window:d} tokens fails with "{text}"')
def step_hand_window(context: Context, window: int, text: str) -> None:
    _fails(lambda: _by_hand(window=window), text)


@then('a hand-built context plan at a budget share of {share:f} fails with "{text}"')
def step_hand_share(context: Context, share: float, text: str) -> None:
    _fails(lambda: _by_hand(budget_percent=share), text)
