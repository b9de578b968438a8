"""The report an ``agent:NAME`` call nests says what the sub-agent answered (issue 29,
item 7): ``sub_report["answer"]`` is the sub-run's answer (``None`` when it failed), and
``sub_report["agent"]`` names the sub-agent, at every level of nesting.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from leanloop import LLMAgent


def _sub(report: dict[str, Any]) -> dict[str, Any]:
    (call,) = report["tool_calls"]
    sub = call["sub_report"]
    assert isinstance(sub, dict), call
    return sub


async def test_the_nested_reports_hold_each_sub_agents_answer_and_name(
    subagent_chain: Callable[..., LLMAgent],
) -> None:
    lead = subagent_chain()  # the researcher asks the reader, then answers

    message = await lead.ainvoke("What port?")

    report = message.response_metadata["leanloop"]
    sub = _sub(report)
    assert sub["agent"] == "researcher"
    assert sub["answer"] == "The port is 8931."
    assert sub["stop_reason"] == "answer"
    inner = _sub(sub)
    assert inner["agent"] == "reader"
    assert inner["answer"] == "The notes say 8931."
    json.dumps(report)  # still JSON-ready


async def test_a_failed_sub_run_nests_its_partial_report_with_no_answer(
    subagent_chain: Callable[..., LLMAgent],
) -> None:
    lead = subagent_chain([{"raise": "the researcher's server went away"}])

    message = await lead.ainvoke("What port?")

    sub = _sub(message.response_metadata["leanloop"])
    assert sub["agent"] == "researcher"
    assert "answer" in sub
    assert sub["answer"] is None
    assert sub["stop_reason"] == "failed"
