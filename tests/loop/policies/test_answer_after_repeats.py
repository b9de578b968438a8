"""The answer after repeats, alone through its hook (ADR 0011)."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import ToolMessage

from leanloop.loop.policies.answer_after_repeats import (
    ANSWER_AFTER_REPEATS,
    AnswerAfterRepeatsConfig,
    reads_in_view,
)
from leanloop.loop.policies.hooks import FinalRequest, Round, StepView
from leanloop.loop.profiles import DEFAULT, SMALL
from leanloop.report import RunReport, ToolCallRecord

ViewMaker = Callable[..., StepView]

STUCK = Round([], exhausted=True)


def _report(*records: ToolCallRecord) -> RunReport:
    report = RunReport()
    report.tool_calls.extend(records)
    return report


def _read(
    *, ok: bool = True, repeated: bool = False, pruned: bool = False, trimmed_at: int | None = None
) -> ToolCallRecord:
    return ToolCallRecord(
        step=1,
        name="read_file",
        args={},
        chars_out=10,
        chars_raw=10,
        ok=ok,
        repeated=repeated,
        pruned=pruned,
        trimmed_at=trimmed_at,
    )


def test_a_round_the_guard_did_not_stop_goes_on(make_view: ViewMaker) -> None:
    policy = AnswerAfterRepeatsConfig().start()

    assert policy.after_round(make_view(profile=SMALL), Round([], exhausted=False)) is None


def test_with_a_read_in_view_the_small_profile_asks_for_the_answer(make_view: ViewMaker) -> None:
    view = make_view(profile=SMALL, report=_report(_read()))

    final = AnswerAfterRepeatsConfig().start().after_round(view, STUCK)

    assert final == FinalRequest(
        "answer",
        prompt=SMALL.answer_after_repeats,
        unanswered="repeated_calls",
        note=ANSWER_AFTER_REPEATS,
    )


def test_without_the_profiles_prompt_or_a_read_the_run_ends_by_repeats(
    make_view: ViewMaker,
) -> None:
    policy = AnswerAfterRepeatsConfig().start()
    failed = _report(_read(ok=False), _read(repeated=True))

    assert policy.after_round(make_view(report=_report(_read())), STUCK) == FinalRequest(
        "repeated_calls"
    )  # the default profile does not ask
    assert policy.after_round(make_view(profile=SMALL, report=failed), STUCK) == FinalRequest(
        "repeated_calls"
    )


def test_the_config_may_give_its_own_prompt(make_view: ViewMaker) -> None:
    view = make_view(profile=DEFAULT, report=_report(_read(pruned=True)))

    final = AnswerAfterRepeatsConfig(prompt="answer: {question}").start().after_round(view, STUCK)

    assert final is not None and final.reason == "answer" and final.prompt == "answer: {question}"


def test_a_trimmed_result_is_no_read_but_a_resumed_one_in_view_is() -> None:
    resumed = ToolMessage(content="1| port: 8080", tool_call_id="1")
    trimmed = _read(trimmed_at=3)

    assert not reads_in_view([trimmed], [])
    assert reads_in_view([trimmed], [resumed])  # without a view: taken to be there
    assert reads_in_view([], [resumed], [resumed])
    assert not reads_in_view([], [resumed], [resumed.model_copy()])  # a trimmed copy
