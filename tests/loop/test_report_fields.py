"""The run report's fields for the HTML page, as a run fills them (issue 29 item 8).

``agent`` and ``model`` name what ran; every request has its ``seconds`` (sending to
reply); every tool call has its ``result_preview`` (the start of what the model got) and
its own ``seconds`` (its tool and its pruning pass, not its round's).

The runs are on virtual time (``looptime``, ADR 0027): the scripted model's ``delay`` and
the tools' sleeps take no real time, and the loop's clock, which the run measures with,
says exactly how long each took, so the seconds asserted are the delays scripted.
"""

# No ``from __future__ import annotations``: pydantic resolves the tools' annotations.

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from leanloop.agent import LLMAgent
from leanloop.report import RESULT_PREVIEW_CHARS
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

pytestmark = pytest.mark.looptime

_SLEEPS = {"north": 1.5, "south": 0.5}
"""Seconds each topic's lookup takes: two calls of one round that end at different times."""

_LONG = 6_000
"""Characters of the north lookup's result: more than the report keeps of it."""


@tool
async def lookup(topic: str) -> str:
    """Look up the notes on a topic."""
    await asyncio.sleep(_SLEEPS.get(topic, 0.0))
    body = f"{topic} notes: " + "".join(f"line {i} of the {topic} notes\n" for i in range(400))
    return body[:_LONG] if topic == "north" else body[:300]


def _call(topic: str, call_id: str) -> dict[str, Any]:
    return {"name": "lookup", "args": {"topic": topic}, "id": call_id}


def _agent(model: ScriptedChatModel, *, model_name: str | None = "scripted-7b") -> LLMAgent:
    spec = AgentSpec(
        name="notes-reader",
        model=ModelSpec(
            class_path="leanloop.testing:ScriptedChatModel",
            model=model_name,
            context_window=200_000,
        ),
        max_rounds=5,
    )
    return LLMAgent.from_spec(spec, model=model, tools=[lookup])


async def _report(agent: LLMAgent, question: str) -> dict[str, Any]:
    reply = await agent.ainvoke(question)
    assert isinstance(reply, AIMessage)
    report: dict[str, Any] = reply.response_metadata["leanloop"]
    return report


def _results(model: ScriptedChatModel, index: int) -> list[str]:
    """The tool results the model got in its ``index``-th request, in order."""
    messages = model.requests[index].messages
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


async def test_a_run_names_its_agent_and_model_and_times_requests_and_calls() -> None:
    usage = {"input_tokens": 900, "output_tokens": 12}
    model = ScriptedChatModel(
        replies=[
            {
                "tool_calls": [_call("north", "c1"), _call("south", "c2")],
                "delay": 2.0,
                "usage": usage,
            },
            # The same call again: a repeat, answered with a reminder and not run.
            {"tool_calls": [_call("south", "c3")], "delay": 0.25, "usage": usage},
            {"content": "North and south agree.", "delay": 1.0, "usage": usage},
        ]
    )

    report = await _report(_agent(model), "What do the notes say?")

    assert report["stop_reason"] == "answer", report["events"]
    assert (report["agent"], report["model"]) == ("notes-reader", "scripted-7b")
    seconds = [request["seconds"] for request in report["requests"]]
    assert seconds == pytest.approx([2.0, 0.25, 1.0], abs=0.01), seconds

    north, south, repeat = report["tool_calls"]
    # Each call's own time: the round took 1.5 s, the south lookup 0.5 s of it.
    assert north["seconds"] == pytest.approx(1.5, abs=0.01), north
    assert south["seconds"] == pytest.approx(0.5, abs=0.01), south
    assert repeat["repeated"] and repeat["seconds"] is None, repeat

    # What the model got in the request after each round starts with the call's preview.
    first_round, second_round = _results(model, 1), _results(model, 2)[2:]
    for call, got in zip((north, south, repeat), [*first_round, *second_round], strict=True):
        preview = call["result_preview"]
        assert preview and got.startswith(preview), (call["name"], preview[:80], got[:80])
        assert len(preview) == min(len(got), RESULT_PREVIEW_CHARS), (len(preview), len(got))
    assert len(first_round[0]) > RESULT_PREVIEW_CHARS  # the north result was cut short
    assert "south notes" in south["result_preview"]
    # The repeat's preview is the reminder the model got (which quotes the result's start).
    assert not repeat["result_preview"].startswith("south notes"), repeat["result_preview"]


async def test_a_class_model_without_a_model_name_is_named_by_its_class() -> None:
    model = ScriptedChatModel(replies=[{"content": "Nothing to look up.", "delay": 0.5}])

    report = await _report(_agent(model, model_name=None), "Hello?")

    assert report["model"] == "ScriptedChatModel"
    assert [request["seconds"] for request in report["requests"]] == pytest.approx([0.5])


def _log_workspace(tmp_path: Path) -> Path:
    """A workspace whose app.log is long enough for the pruning pass, two lines naming
    ``deadlock``."""
    lines = [f"2026-11-30 02:{i // 60:02d}:{i % 60:02d} INFO job {i} ok" for i in range(600)]
    lines[50] = "2026-11-30 03:00:01 ERROR deadlock #1 detected"
    lines[420] = "2026-11-30 03:00:02 ERROR deadlock #2 detected"
    (tmp_path / "app.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def _kept(messages: Any) -> dict[str, Any]:
    """The pruning model's answer, after 0.6 s: the lines naming the word."""
    shown = str(messages[-1].content).split("\n")
    kept = "".join(f"{ln}\n" for ln in shown if "deadlock #" in ln and "|" in ln)
    content = (
        "[PRUNE_INFO_START]\nkept the deadlocks\n[PRUNE_INFO_END]\n"
        f"[PRUNE_OUTPUT_START]\n{kept}[PRUNE_OUTPUT_END]"
    )
    return {"delay": 0.6, "content": content}


async def test_a_pruned_call_s_seconds_hold_its_pruning_pass(tmp_path: Path) -> None:
    usage = {"input_tokens": 2000, "output_tokens": 10}
    main = ScriptedChatModel(
        replies=[
            {"tool_calls": [{"name": "read_file", "args": {"path": "app.log"}}], "usage": usage},
            {"content": "Two deadlocks.", "usage": usage},
        ]
    )
    pruning = ScriptedChatModel(replies=[_kept], repeat_last=True)
    spec = AgentSpec(
        name="log-reader",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", context_window=200_000),
        tools=("read_file",),
        workspace=_log_workspace(tmp_path),
        allow_tool_output_pruning=True,
        pruning_timeout=60,
    )
    agent = LLMAgent.from_spec(spec, model=main, pruning_model=pruning)

    reply = await agent.ainvoke("Why did the job stop?")

    report = reply.response_metadata["leanloop"]
    (call,) = report["tool_calls"]
    assert call["pruned"], (call, report["pruning_fallbacks"])
    # Reading the file takes no loop time; the pass's 0.6 s answer is the call's time.
    assert call["seconds"] >= 0.6, call
    got = _results(main, 1)[0]
    assert got.startswith(call["result_preview"]) and "deadlock #2" in call["result_preview"]
