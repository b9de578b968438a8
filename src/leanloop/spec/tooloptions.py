"""Checks of a ``tools`` entry's own options that the JSON Schema cannot express.

The schema says what each option of a ``tools`` entry mapping is; these say which tool
may have it and how the options fit together:

- ``command_timeout``, ``allowed_commands`` and ``shell`` belong to ``run_command``;
- ``allowed_commands`` names programs (``pytest``), not paths, and cannot be kept with
  ``shell: true`` (a command line runs anything);
- ``command_timeout`` is under the call's own limit (the entry's ``timeout``, else the
  agent's ``tool_timeout``), or the call would be stopped before the command is and its
  output lost.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from leanloop.spec.schema import agent_defaults
from leanloop.spec.toolrefs import COMMAND_TOOL
from leanloop.spec.yamlsource import KeyPath

__all__ = ["COMMAND_OPTIONS", "tool_entry_problems"]

COMMAND_OPTIONS = ("command_timeout", "allowed_commands", "shell")
"""The options of a ``tools`` entry that only ``run_command`` takes."""


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
