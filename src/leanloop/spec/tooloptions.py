"""Checks of a ``tools`` entry's own options that the JSON Schema cannot express.

The schema says what each option of a ``tools`` entry mapping is; these say which tool
may have it and how the options fit together:

- ``command_timeout``, ``allowed_commands`` and ``shell`` belong to ``run_command``;
- ``allowed_commands`` names programs (``pytest``), not paths, and cannot be kept with
  ``shell: true`` (a command line runs anything);
- ``command_timeout`` is under the call's own limit (the entry's ``timeout``, else the
  agent's ``tool_timeout``), or the call would be stopped before the command is and its
  output lost;
- ``approval: {ask_when: {ARGUMENT: REGEX}}`` holds regular expressions;
- ``approve_decisions`` belongs to a tool that asks (``approval: ask``, or a built-in that
  changes the workspace), and ``reject`` or ``approve`` is among them (a person who may
  only edit could never let a call run as the model made it, nor stop it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from leanloop.spec.schema import agent_defaults
from leanloop.spec.toolrefs import COMMAND_TOOL, EDIT_TOOLS
from leanloop.spec.yamlsource import KeyPath

__all__ = ["ASKS_BY_DEFAULT", "COMMAND_OPTIONS", "asks_approval", "tool_entry_problems"]

ASKS_BY_DEFAULT: frozenset[str] = frozenset((*EDIT_TOOLS, COMMAND_TOOL))
"""The tools whose calls a person approves unless their entry says ``approval: never``:
the built-ins that change the workspace."""

COMMAND_OPTIONS = ("command_timeout", "allowed_commands", "shell")
"""The options of a ``tools`` entry that only ``run_command`` takes."""


def asks_approval(ref: str, approval: str | None) -> bool:
    """Whether calls of the tool ``ref`` ask a person first, with the entry's ``approval``.

    Safe by default: the built-ins that change the workspace ask unless told ``never``;
    any other tool asks only when told ``ask``.
    """
    if approval is None:
        return ref in ASKS_BY_DEFAULT
    return approval == "ask"


def tool_entry_problems(
    entry: Mapping[str, Any], agent: Mapping[str, Any], path: KeyPath
) -> Iterator[tuple[KeyPath, str, bool]]:
    """The problems of one ``tools`` entry mapping at ``path``.

    Args:
        entry: The entry (``{name: run_command, shell: true}``).
        agent: The agent it belongs to (for its ``tool_timeout``).
        path: Where the entry is (``("agents", "coder", "tools", 2)``).

    Yields:
        Where each problem is, its one-line message, and whether it is about the key
        (``True``) rather than the value.
    """
    name = entry.get("name")
    yield from _approval_problems(entry, path)
    if name != COMMAND_TOOL:
        for key in COMMAND_OPTIONS:
            if key in entry:
                message = f"{key!r} is an option of {COMMAND_TOOL} only, not of {name!r}"
                yield (*path, key), message, True
        return
    allowed = entry.get("allowed_commands")
    if isinstance(allowed, list):
        for index, program in enumerate(allowed):
            if isinstance(program, str) and ("/" in program or "\\" in program):
                bare = program.replace("\\", "/").rsplit("/", 1)[-1]
                message = f"{program!r} is a path; give the program's name ({bare!r})"
                yield (*path, "allowed_commands", index), message, False
        if entry.get("shell") is True:
            message = (
                "allowed_commands cannot be enforced with shell: true (a command line can "
                "run anything); drop one of them"
            )
            yield (*path, "allowed_commands"), message, True
    yield from _timeout_problem(entry, agent, path)


def _approval_problems(
    entry: Mapping[str, Any], path: KeyPath
) -> Iterator[tuple[KeyPath, str, bool]]:
    name, approval = entry.get("name"), entry.get("approval")
    if isinstance(approval, Mapping):
        yield from _condition_problems(approval.get("ask_when"), (*path, "approval", "ask_when"))
        approval = "ask"
    decisions = entry.get("approve_decisions")
    if not isinstance(decisions, list):
        return
    known = isinstance(name, str) and approval in (None, "ask", "never")
    if known and not asks_approval(str(name), approval):
        message = (
            f"approve_decisions has no effect: calls of {name!r} never ask a person; "
            "add 'approval: ask' or drop approve_decisions"
        )
        yield (*path, "approve_decisions"), message, True
        return
    if decisions and not {"approve", "reject"} & set(decisions):
        message = (
            "approve_decisions needs 'approve' or 'reject' too: with 'edit' alone a person "
            "could neither let a call run as it is nor stop it"
        )
        yield (*path, "approve_decisions"), message, False


def _condition_problems(conditions: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str, bool]]:
    """A pattern of ``approval.ask_when`` that is no regular expression (checked at load,
    so a typo never surfaces as a call that silently runs without asking)."""
    if not isinstance(conditions, Mapping):
        return
    for argument, pattern in conditions.items():
        if not isinstance(pattern, str):
            continue
        try:
            re.compile(pattern)
        except re.error as exc:
            message = f"not a regular expression ({exc}): {pattern!r}"
            yield (*path, str(argument)), message, False


def _timeout_problem(
    entry: Mapping[str, Any], agent: Mapping[str, Any], path: KeyPath
) -> Iterator[tuple[KeyPath, str, bool]]:
    command: Any = entry.get("command_timeout")
    if not _number(command):
        return
    if _number(entry.get("timeout")):
        limit, whose = float(entry["timeout"]), "this entry's timeout"
    else:
        tool_timeout: Any = agent.get("tool_timeout", agent_defaults().get("tool_timeout"))
        if not _number(tool_timeout):
            return
        limit, whose = float(tool_timeout), "the agent's tool_timeout"
    if float(command) >= limit:
        message = (
            f"command_timeout {command:g} s is not under the call's limit ({whose}, "
            f"{limit:g} s), which would stop the call first; raise 'timeout' on this entry"
        )
        yield (*path, "command_timeout"), message, False


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
