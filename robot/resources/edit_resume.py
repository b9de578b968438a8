"""One process of the pause → new process → resume check (robot/agents_that_edit_real.robot).

``python edit_resume.py start AGENTS_FILE THREAD QUESTION``: run the agent in the session
``THREAD`` with no approver; print the report (a JSON line) — the run should pause.
``python edit_resume.py resume AGENTS_FILE THREAD CALL_ID [CALL_ID ...]``: a new process
resumes the session's paused turn with each call approved; print the report. Any later
call that asks is approved too (a second edit of the same fix), by an approver that says so
in the report (``by``: ``resume-helper``).
"""

from __future__ import annotations

import asyncio
import json
import sys

from leanloop.agent import LLMAgent
from leanloop.loop.policies.approval import ApprovalRequest, Approve


async def _approve(request: ApprovalRequest) -> Approve:
    return Approve(by="resume-helper")


async def main(argv: list[str]) -> None:
    mode, path, thread = argv[:3]
    agent = LLMAgent.from_file(path, "fixer")
    if mode == "start":
        answer = await agent.ainvoke(argv[3], {"configurable": {"thread_id": thread}})
    else:
        agent = agent.with_approver(_approve)
        answer = await agent.aresume(thread, dict.fromkeys(argv[3:], "approve"))
    report = dict(answer.response_metadata.get("leanloop", {}))
    report["answer_text"] = answer.text
    print(json.dumps(report, default=str))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
