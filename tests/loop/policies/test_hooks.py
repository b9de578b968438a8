"""How the driver asks its policies: the first answer wins, shapes and reasons fold."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import ClassVar

from langchain_core.messages import AIMessage, BaseMessage, ToolCall

from leanloop.budget.run import Prepared
from leanloop.loop.policies.hooks import (
    AddTurn,
    AnswerCall,
    Attempt,
    CallDecision,
    CallRunner,
    EditCall,
    FinalRequest,
    PauseCall,
    PendingCall,
    Policies,
    Policy,
    Recovery,
    RequestShape,
    Resend,
    Round,
    RunCall,
    StepView,
    SwitchToText,
    error_line,
)
from leanloop.pruning import PruneRequest
from leanloop.report import StopReason

ViewMaker = Callable[..., StepView]

PREPARED = Prepared(messages=[], tools=[], chars=0, tokens=0, over_budget=True, fits_window=True)
ROUND = Round([], exhausted=True)


class Quiet(Policy):
    """Overrides nothing: every hook leaves things be."""


class Loud(Policy):
    """Answers every hook, and says which policy answered."""

    name: ClassVar[str] = "loud"

    def __init__(self, tag: str) -> None:
        self.tag = tag

    async def at_start(self, view: StepView, run_calls: CallRunner) -> list[BaseMessage]:
        return [AIMessage(content=self.tag)]

    def shape_request(self, view: StepView, shape: RequestShape) -> RequestShape:
        return replace(shape, tool_list=not shape.tool_list)

    async def before_request(
        self, view: StepView, prepared: Prepared
    ) -> AddTurn | FinalRequest | None:
        return FinalRequest("max_rounds", note=self.tag)

    async def after_error(
        self, view: StepView, error: Exception, attempt: Attempt
    ) -> Recovery | None:
        return Resend() if self.tag == "first" else SwitchToText()

    def after_round(self, view: StepView, done: Round) -> FinalRequest | None:
        return FinalRequest("repeated_calls", note=self.tag)

    def at_end(self, view: StepView, reason: StopReason) -> StopReason:
        return "no_answer" if reason == "answer" else "budget_exhausted"


async def _no_calls(calls: Sequence[ToolCall]) -> Round:
    raise AssertionError(calls)


async def test_a_policy_that_overrides_nothing_changes_nothing(make_view: ViewMaker) -> None:
    view, quiet = make_view(), Policies((Quiet(),))
    shape = RequestShape(tools=True, tool_list=True)

    assert await quiet.at_start(view, _no_calls) == []
    assert quiet.shape_request(view, shape) == shape
    assert await quiet.before_request(view, PREPARED) is None
    assert await quiet.after_error(view, RuntimeError("x"), Attempt("step")) is None
    assert quiet.after_round(view, ROUND) is None
    assert quiet.at_end(view, "answer") == "answer"


async def test_where_a_hook_decides_the_first_answer_wins(make_view: ViewMaker) -> None:
    view = make_view()
    policies = Policies((Quiet(), Loud("first"), Loud("second")))

    assert [m.text for m in await policies.at_start(view, _no_calls)] == ["first"]
    before = await policies.before_request(view, PREPARED)
    assert isinstance(before, FinalRequest) and before.note == "first"
    assert await policies.after_error(view, RuntimeError("x"), Attempt("step")) == (
        "loud",
        Resend(),
    )
    after = policies.after_round(view, ROUND)
    assert after is not None and after.note == "first"


def test_where_a_hook_shapes_a_value_each_policy_has_its_say(make_view: ViewMaker) -> None:
    view = make_view()
    two = Policies((Loud("first"), Loud("second")))
    shape = RequestShape(tools=True, tool_list=True)

    assert two.shape_request(view, shape) == shape  # flipped twice
    assert two.at_end(view, "answer") == "budget_exhausted"  # answer → no_answer → budget


class Decides(Policy):
    """Answers ``before_tool_call`` with ``decision``, and remembers the calls it saw."""

    def __init__(self, decision: CallDecision) -> None:
        self.decision = decision
        self.seen: list[PendingCall] = []

    async def before_tool_call(self, call: PendingCall) -> CallDecision:
        self.seen.append(call)
        return self.decision


def _pending(view: StepView) -> PendingCall:
    return PendingCall(
        name="read_file",
        args={"path": "a.txt"},
        meta=PruneRequest(),
        call_id="call-1",
        step=1,
        run=view,
    )


async def test_before_a_call_runs_edits_fold_and_the_first_answer_decides(
    make_view: ViewMaker,
) -> None:
    call = _pending(make_view())
    edit = Decides(EditCall(args={"path": "b.txt"}, note="edited"))
    run = Decides(RunCall(note="checked"))
    answer = Decides(AnswerCall("not run", note="answered"))
    later = Decides(PauseCall("never asked"))
    policies = Policies((Quiet(), edit, Decides(None), run, answer, later))

    pending, decided = await policies.before_tool_call(call)

    assert decided == AnswerCall("not run", note="answered")
    assert run.seen[0].args == {"path": "b.txt"}  # the edited call is what later ones see
    assert run.seen[0].meta == PruneRequest()  # left as it was where the edit said nothing
    assert pending.notes == ("edited", "checked") and pending.args == {"path": "b.txt"}
    assert later.seen == []


async def test_a_call_no_policy_stops_runs_as_the_policies_left_it(make_view: ViewMaker) -> None:
    call = _pending(make_view())
    unpruned = Decides(EditCall(meta=PruneRequest(prune=False)))

    assert await Policies((Quiet(),)).before_tool_call(call) == (call, None)
    pending, decided = await Policies((unpruned,)).before_tool_call(call)
    assert decided is None and pending == replace(call, meta=PruneRequest(prune=False))
    after = Decides(None)
    pause = await Policies((Decides(PauseCall("approve?")), after)).before_tool_call(call)
    assert pause == (call, PauseCall("approve?")) and after.seen == []


class Stuck(Policy):
    """Says at the end of every round that the model is stuck."""

    def end_round(self, done: Round) -> Round:
        return replace(done, exhausted=True)


def test_the_end_of_a_round_folds_and_quiet_policies_leave_it() -> None:
    done = Round([], repeated=1, calls=1)

    assert Policies((Quiet(),)).end_round(done) is done
    assert Policies((Quiet(), Stuck())).end_round(done) == replace(done, exhausted=True)


def test_a_view_adds_event_lines_for_the_request_at_hand(make_view: ViewMaker) -> None:
    view = make_view(step=4)

    view.event("something happened")

    assert view.report.events == ["step 5: something happened"]


def test_an_error_is_one_line_with_its_type() -> None:
    assert error_line(ValueError("bad\n  request")) == "ValueError: bad request"
    assert error_line(TimeoutError()) == "TimeoutError: TimeoutError"
    assert len(error_line(RuntimeError("x" * 900))) == 500
