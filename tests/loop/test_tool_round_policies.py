"""The tool round asks the policies about each call: before it runs, and once its result
is what the model reads (ADR 0034, the tool-call hooks)."""

# No ``from __future__ import annotations``: pydantic resolves the tools' annotations.

import asyncio
from collections.abc import Sequence
from typing import ClassVar

import pytest
from langchain_core.messages import AIMessage, ToolCall
from langchain_core.tools import tool

from leanloop.budget.plan import ContextPlan
from leanloop.loop.policies.hooks import (
    CallDecision,
    EditCall,
    PauseCall,
    PendingCall,
    Policies,
    Policy,
    Round,
    StepView,
    ToolResult,
)
from leanloop.loop.policies.repeat_guard import RepeatGuardConfig
from leanloop.loop.profiles import DEFAULT
from leanloop.loop.tool_round import ToolRunner
from leanloop.protocol import ToolProtocol
from leanloop.report import RunReport
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.tools.registry import ToolRegistry

pytestmark = pytest.mark.looptime

RAN: list[str] = []


@tool
async def lookup(topic: str) -> str:
    """Look up the notes on a topic."""
    RAN.append(topic)
    await asyncio.sleep(1.0)  # the calls of a reply overlap
    return f"{topic} notes: port 8125"


class Told(Policy):
    """Answers ``before_tool_call`` with ``decision``; remembers the results it is told."""

    name: ClassVar[str] = "told"

    def __init__(self, decision: CallDecision = None) -> None:
        self.decision = decision
        self.results: list[tuple[PendingCall, ToolResult]] = []

    async def before_tool_call(self, call: PendingCall) -> CallDecision:
        return self.decision

    def after_tool_result(self, call: PendingCall, result: ToolResult) -> None:
        self.results.append((call, result))


def _call(topic: str, call_id: str) -> ToolCall:
    return ToolCall(name="lookup", args={"topic": topic}, id=call_id)


async def _round(*policies: Policy, calls: Sequence[ToolCall]) -> tuple[Round, RunReport]:
    RAN.clear()
    report = RunReport()
    spec = AgentSpec(
        name="notes-reader",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", model="scripted"),
    )
    runner = ToolRunner(
        spec=spec,
        registry=ToolRegistry([lookup]),
        pruner=None,
        report=report,
        config={},
        policies=Policies(policies),
    )
    view = StepView(
        step=0,
        history=[],
        question="Which port?",
        profile=DEFAULT,
        mode="native",
        tools_ran=False,
        report=report,
        config={},
        plan=ContextPlan.for_window(8_192),
    )
    done = await runner.round(
        calls,
        step=1,
        history=[AIMessage(content="", tool_calls=list(calls))],
        result_cap=10_000,
        room_chars=None,
        protocol=ToolProtocol(mode="native", schemas=[]),
        profile=DEFAULT,
        view=view,
    )
    return done, report


async def test_twins_in_one_reply_run_once_although_the_calls_run_together() -> None:
    guard = RepeatGuardConfig().start()

    done, report = await _round(guard, calls=[_call("north", "a"), _call("north", "b")])

    assert RAN == ["north"]
    assert (done.repeated, done.calls, report.repeated_calls) == (1, 2, 1)
    assert "(in this very reply)" in done.messages[1].text
    assert report.tool_calls[1].notes == ["repeat of the call at step 1; not run"]


async def test_an_edited_call_runs_edited_and_the_policies_learn_the_call_as_asked() -> None:
    told = Told(EditCall(args={"topic": "south"}, note="edited by a person"))

    done, report = await _round(told, calls=[_call("north", "a")])

    assert RAN == ["south"] and done.messages[0].text == "south notes: port 8125"
    assert report.tool_calls[0].notes == ["edited by a person"]
    [(asked, result)] = told.results
    assert asked.args == {"topic": "north"} and asked.call_id == "a"
    assert result.record is report.tool_calls[0] and result.ok


async def test_a_pause_before_one_call_runs_no_call_of_the_reply() -> None:
    told = Told(PauseCall("approve?", preview="a diff"))

    done, report = await _round(told, calls=[_call("north", "a")])

    assert RAN == [] and done.messages == [] and report.tool_calls == []
    [paused] = done.paused
    assert (paused.call_id, paused.tool, paused.reason, paused.preview) == (
        "a",
        "lookup",
        "approve?",
        "a diff",
    )
