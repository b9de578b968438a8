"""The text-mode fallback, alone through its hook: a refusal of native tools → text mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from leanloop import events
from leanloop.loop.policies.hooks import Attempt, StepView, SwitchToText
from leanloop.loop.policies.text_fallback import TextFallbackConfig

ViewMaker = Callable[..., StepView]

REFUSAL = ValueError("tools param requires --jinja flag")


async def test_a_refusal_of_tools_before_any_round_switches_to_text(
    make_view: ViewMaker, emitted: list[tuple[str, dict[str, Any]]]
) -> None:
    view = make_view()
    policy = TextFallbackConfig("auto").start()

    recovery = await policy.after_error(view, REFUSAL, Attempt("step"))

    assert recovery == SwitchToText()
    assert view.report.events == ["step 1: server refused tools; switched to text mode"]
    reason = "ValueError: tools param requires --jinja flag"
    assert emitted == [
        (events.TOOL_MODE_CHANGED, {"from": "native", "to": "text", "reason": reason})
    ]


async def test_a_mode_the_user_chose_never_falls_back(make_view: ViewMaker) -> None:
    for chosen in ("native", "text"):
        policy = TextFallbackConfig(chosen).start()

        assert await policy.after_error(make_view(), REFUSAL, Attempt("step")) is None


async def test_after_a_round_ran_or_once_in_text_mode_nothing_changes(make_view: ViewMaker) -> None:
    policy = TextFallbackConfig().start()

    assert await policy.after_error(make_view(tools_ran=True), REFUSAL, Attempt("step")) is None
    assert await policy.after_error(make_view(mode="text"), REFUSAL, Attempt("step")) is None


async def test_another_failure_is_not_this_policys(make_view: ViewMaker) -> None:
    policy = TextFallbackConfig().start()
    other = ConnectionError("connection refused")

    assert await policy.after_error(make_view(), other, Attempt("step")) is None
