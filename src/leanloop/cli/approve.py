"""Who approves a tool call in ``leanloop run`` and ``chat`` (ADR 0037).

In order: ``--approve-all`` approves every call that asks; ``--approve TOOL`` approves
the calls of ``TOOL`` (repeatable); on a terminal, the person at it is asked (the tool,
its arguments and the diff an edit would make; ``y``, ``n`` with a reason for the model,
``e`` to edit the arguments as JSON); otherwise nobody can decide and the run pauses
(exit code :data:`~leanloop.cli._runs.EXIT_PAUSED`, the pending calls on stderr and in
``--json``). Every decision is on the report with who made it (``flag --approve-all``,
``flag --approve TOOL``, ``cli``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from leanloop.loop.policies.approval import (
    ApprovalRequest,
    Approve,
    Approver,
    Decision,
    EditArgs,
    Pause,
    Reject,
)

__all__ = ["cli_approver", "pending_lines", "terminal_decision"]


def cli_approver(
    *,
    tools: Sequence[str] = (),
    approve_all: bool = False,
    terminal: bool | None = None,
    ask: Callable[[ApprovalRequest], Decision] | None = None,
) -> Approver | None:
    """The CLI's approver: the flags, then the terminal; ``None`` when nobody decides.

    Args:
        tools: The tools ``--approve`` names.
        approve_all: ``--approve-all``.
        terminal: Whether a person is at a terminal (``None``: stdin and stderr are ttys).
        ask: Asks the person (default: :func:`terminal_decision` on stdin and stderr).
    """
    if terminal is None:
        terminal = sys.stdin.isatty() and sys.stderr.isatty()
    if not (tools or approve_all or terminal):
        return None
    named = frozenset(tools)
    asker = ask or terminal_decision

    async def approve(request: ApprovalRequest) -> Decision:
        if approve_all:
            return Approve(by="flag --approve-all")
        if request.tool in named:
            return Approve(by=f"flag --approve {request.tool}")
        if not terminal:
            return Pause(f"no --approve flag for {request.tool} and no terminal to ask")
        # input() blocks: off the event loop, so the run's other work goes on meanwhile.
        return await asyncio.to_thread(asker, request)

    return approve


def terminal_decision(
    request: ApprovalRequest, *, read: Callable[[str], str] = input, out: TextIO | None = None
) -> Decision:
    """Ask the person at the terminal about ``request`` (``read`` is ``input``)."""
    err = out or sys.stderr
    print(f"\nleanloop: {request.agent or 'the agent'} wants to run {request.tool}:", file=err)
    print(json.dumps(dict(request.args), indent=2, ensure_ascii=False, default=str), file=err)
    if request.preview:
        print(request.preview, file=err)
    keys = {"approve": "y", "reject": "n", "edit": "e"}
    offered = "/".join(keys[d] for d in request.decisions)
    while True:
        try:
            said = read(f"approve? [{offered}] ").strip().lower()
            if said in ("y", "yes") and "approve" in request.decisions:
                return Approve(by="cli")
            if said in ("n", "no") and "reject" in request.decisions:
                return Reject(read("reason (for the model): ").strip(), by="cli")
            if said == "e" and "edit" in request.decisions:
                edited = _edited(read("arguments as JSON: "), err)
                if edited is not None:
                    return EditArgs(edited, by="cli")
        except EOFError:
            return Pause("the terminal closed before a decision")


def _edited(text: str, err: TextIO) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError as exc:
        print(f"not JSON: {exc}", file=err)
        return None
    if not isinstance(value, dict):
        print("the arguments are a JSON object: {...}", file=err)
        return None
    return value


def pending_lines(report: Mapping[str, Any]) -> list[str]:
    """The lines that list a paused run's pending calls, for stderr."""
    lines = []
    for call in report.get("pending_calls") or []:
        args = json.dumps(call.get("args"), ensure_ascii=False, default=str)
        lines.append(f"  {call.get('id')}: {call.get('tool')} {args}")
    return lines
