"""The approval of tool calls, alone through its hooks: a person decides before a call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from leanloop.exceptions import InvalidArgument
from leanloop.loop.policies.approval import (
    ApprovalConfig,
    ApprovalRequest,
    Approve,
    Decision,
    EditArgs,
    Pause,
    Reject,
    asks_for,
    decision_from,
    decision_to_dict,
    rejection_text,
)
from leanloop.loop.policies.hooks import (
    AnswerCall,
    EditCall,
    PauseCall,
    PendingCall,
    Policies,
    RunCall,
    StepView,
)
from leanloop.loop.policies.repeat_guard import RepeatGuardConfig

ViewMaker = Callable[..., StepView]
ASKS = {"write_file": ("approve", "edit", "reject"), "run_command": ("approve", "reject")}


def _call(view: StepView, name: str = "write_file", *, step: int = 1, **args: Any) -> PendingCall:
    given = args or {"path": "a.txt", "content": "new"}
    return PendingCall(name=name, args=given, meta=None, call_id=f"c{step}", step=step, run=view)


def _approver(*decisions: Decision) -> tuple[list[ApprovalRequest], Callable[..., Decision]]:
    asked: list[ApprovalRequest] = []
    queue = list(decisions)

    def approve(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return queue.pop(0)

    return asked, approve


async def test_a_tool_that_never_asks_is_let_be_without_asking(make_view: ViewMaker) -> None:
    asked, approver = _approver()
    policy = ApprovalConfig(asks=ASKS, approver=approver).start()

    assert await policy.before_tool_call(_call(make_view(), "read_file", path="a")) is None
    assert asked == []


async def test_approve_runs_the_call_and_the_report_says_who(make_view: ViewMaker) -> None:
    view = make_view()
    asked, approver = _approver(Approve())
    config = ApprovalConfig(
        asks=ASKS, approver=approver, agent="coder", preview=lambda tool, args: f"diff {tool}"
    )

    decision = await config.start().before_tool_call(_call(view))

    assert decision == RunCall(note="approved by approver")
    [request] = asked
    assert (request.tool, request.call_id, request.agent, request.preview) == (
        "write_file",
        "c1",
        "coder",
        "diff write_file",
    )
    [record] = view.report.approvals
    assert (record["decision"], record["by"], record["call_id"]) == ("approve", "approver", "c1")


async def test_an_async_approver_edits_the_arguments(make_view: ViewMaker) -> None:
    async def approver(request: ApprovalRequest) -> Decision:
        return EditArgs({"path": "b.txt", "content": "x"}, by="me")

    view = make_view()
    decision = (
        await ApprovalConfig(asks=ASKS, approver=approver).start().before_tool_call(_call(view))
    )

    assert decision == EditCall(
        args={"path": "b.txt", "content": "x"}, note="arguments edited by me"
    )
    assert view.report.approvals[0]["args"] == {"path": "b.txt", "content": "x"}


async def test_a_rejection_tells_the_model_why_and_a_repeat_is_not_asked_again(
    make_view: ViewMaker,
) -> None:
    view = make_view()
    asked, approver = _approver(Reject("not that file"))
    policy = ApprovalConfig(asks=ASKS, approver=approver).start()

    first = await policy.before_tool_call(_call(view))
    again = await policy.before_tool_call(_call(view, step=3))

    assert isinstance(first, AnswerCall) and first.content == rejection_text("not that file")
    assert "do not repeat it" in first.content and first.repeat_of is None
    assert isinstance(again, AnswerCall) and again.content == first.content
    assert again.repeat_of == 1 and len(asked) == 1
    assert [a["by"] for a in view.report.approvals] == ["approver", "repeat"]


async def test_no_approver_pauses_with_the_preview(make_view: ViewMaker) -> None:
    policy = ApprovalConfig(asks=ASKS, preview=lambda tool, args: "+new").start()

    decision = await policy.before_tool_call(_call(make_view()))

    assert isinstance(decision, PauseCall) and decision.preview == "+new"


async def test_an_approver_that_cannot_decide_now_pauses(make_view: ViewMaker) -> None:
    _asked, approver = _approver(Pause("away"))

    decision = (
        await ApprovalConfig(asks=ASKS, approver=approver)
        .start()
        .before_tool_call(_call(make_view()))
    )

    assert decision == PauseCall("away", preview=None)


async def test_a_decision_the_tool_does_not_allow_pauses(make_view: ViewMaker) -> None:
    _asked, approver = _approver(EditArgs({"argv": ["ls"]}))

    decision = (
        await ApprovalConfig(asks=ASKS, approver=approver)
        .start()
        .before_tool_call(_call(make_view(), "run_command", argv=["rm", "-rf", "x"]))
    )

    assert isinstance(decision, PauseCall) and "'edit' is not allowed" in decision.reason


async def test_a_resume_decision_wins_over_the_approver(make_view: ViewMaker) -> None:
    asked, approver = _approver(Approve())
    config = ApprovalConfig(
        asks=ASKS, approver=approver, given={"c1": decision_from("reject", by="resume")}
    )

    decision = await config.start().before_tool_call(_call(make_view()))

    assert isinstance(decision, AnswerCall) and asked == []


async def test_approval_first_keeps_the_guard_from_claiming_a_rejected_call(
    make_view: ViewMaker,
) -> None:
    view = make_view()
    _, approver = _approver(Reject("no"), Approve())
    approval = ApprovalConfig(asks=ASKS, approver=approver).start()
    guard = RepeatGuardConfig().start()
    policies = Policies((approval, guard))

    _, first = await policies.before_tool_call(_call(view, path="a.txt", content="1"))
    # Another call (other arguments) is new to the guard: nothing was claimed for the first.
    _, second = await policies.before_tool_call(_call(view, step=2, path="b.txt", content="1"))

    assert isinstance(first, AnswerCall) and second is None


def test_decisions_read_back_what_they_write() -> None:
    for decision in (Approve(by="cli"), EditArgs({"a": 1}, by="x"), Reject("why", by="y")):
        assert decision_from(decision_to_dict(decision)) == decision
    with pytest.raises(InvalidArgument, match="a decision is"):
        decision_from("maybe")


async def test_a_condition_asks_only_for_the_calls_it_matches(make_view: ViewMaker) -> None:
    view = make_view()
    asked, approver = _approver(Reject("not on main"))
    config = ApprovalConfig(
        asks=ASKS, when={"run_command": (("argv", r"^(rm|git push)\b"),)}, approver=approver
    )
    policy = config.start()

    let_be = await policy.before_tool_call(_call(view, "run_command", argv=["pytest", "-q"]))
    stopped = await policy.before_tool_call(
        _call(view, "run_command", step=2, argv=["git", "push", "origin", "main"])
    )

    assert let_be == RunCall(note="not asked: no approval.ask_when pattern matched")
    assert isinstance(stopped, AnswerCall) and "not on main" in stopped.content
    [request] = asked
    assert request.args == {"argv": ["git", "push", "origin", "main"]}
    [record] = view.report.approvals
    assert (record["decision"], record["call_id"]) == ("reject", "c2")


@pytest.mark.parametrize(
    ("args", "asks"),
    [
        ({"argv": ["rm", "-rf", "build"]}, True),
        ({"argv": ["echo", "rm"]}, False),
        ({"argv": "rm x"}, True),
        ({"path": "rm.txt"}, False),
        ({}, False),
        ({"argv": {"program": "rm"}}, True),
    ],
)
def test_how_an_argument_is_matched(args: dict[str, Any], asks: bool) -> None:
    assert asks_for((("argv", r"^(\{\"program\": \")?rm\b"),), args) is asks
