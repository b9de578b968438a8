"""The report an ``agent:NAME`` call nests says what the sub-agent answered (issue 29,
item 7): ``sub_report["answer"]`` is the sub-run's answer (``None`` when it failed), and
``sub_report["agent"]`` names the sub-agent, at every level of nesting.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from leanloop import LLMAgent

_FILE = """
version: 1
agents:
  lead:
    model:
      class: leanloop.testing:ScriptedChatModel
      kwargs:
        replies:
          - tool_calls: [{name: researcher, args: {task: "find the port"}}]
          - Port 8931.
    tools: ["agent:researcher"]
  researcher:
    model:
      class: leanloop.testing:ScriptedChatModel
      kwargs:
        replies: RESEARCHER
    tools: ["agent:reader"]
  reader:
    model:
      class: leanloop.testing:ScriptedChatModel
      kwargs:
        replies:
          - tool_calls: [{name: read_file, args: {path: notes.txt}}]
          - The notes say 8931.
    tools: [read_file]
    workspace: ./ws
"""


def _lead(tmp_path: Path, researcher: list[Any]) -> LLMAgent:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("The port is 8931.\n", encoding="utf-8")
    text = textwrap.dedent(_FILE).replace("RESEARCHER", json.dumps(researcher))
    (tmp_path / "agents.yaml").write_text(text, encoding="utf-8")
    return LLMAgent.from_file(tmp_path / "agents.yaml", "lead")


def _sub(report: dict[str, Any]) -> dict[str, Any]:
    (call,) = report["tool_calls"]
    sub = call["sub_report"]
    assert isinstance(sub, dict), call
    return sub


async def test_the_nested_reports_hold_each_sub_agents_answer_and_name(tmp_path: Path) -> None:
    researcher = [
        {"tool_calls": [{"name": "reader", "args": {"task": "read the notes"}}]},
        "The port is 8931.",
    ]
    lead = _lead(tmp_path, researcher)

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


async def test_a_failed_sub_run_nests_its_partial_report_with_no_answer(tmp_path: Path) -> None:
    lead = _lead(tmp_path, [{"raise": "the researcher's server went away"}])

    message = await lead.ainvoke("What port?")

    sub = _sub(message.response_metadata["leanloop"])
    assert sub["agent"] == "researcher"
    assert "answer" in sub
    assert sub["answer"] is None
    assert sub["stop_reason"] == "failed"
