"""The tasks of a batch: one JSON object a line, read and checked before anything runs.

Each line is ``{"id": ..., "question": ..., "agent"?: ..., "expected"?: ...}``:

- ``id``: a string or an integer, unique in the file; it keys the result line, so a
  batch run again skips the ids its results file already holds;
- ``question``: the text the agent is asked (not blank);
- ``agent``: the agent that answers; the command's ``--agent`` (or the file's only agent)
  when left out;
- ``expected``: a regular expression; a result whose answer it matches (a search, by
  the ``regex`` module, with a time limit: :mod:`leanloop.batch.runner`) is correct, and
  the summary gives the accuracy over the tasks that have one.

Blank lines are skipped; a byte order mark at the file's start is not part of the first
line. Every problem of the file is reported, each located (``tasks.jsonl:7: id: 'q3' is
also the id of line 2``), before any task runs: text that is not UTF-8 (a lone surrogate
such as ``"\\ud800"``, which JSON can spell but no results line can hold) and a line nested
too deeply to parse are problems of their line too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leanloop.exceptions import SpecError, SpecIssue

__all__ = ["MAX_ISSUES", "TASK_KEYS", "BatchTask", "TaskId", "read_tasks"]

TaskId = str | int
"""A task's id as the file gave it (a JSON string or integer)."""

MAX_ISSUES = 20
"""The most problems of a tasks file reported one by one; the rest are counted."""

TASK_KEYS = frozenset({"id", "question", "agent", "expected"})
"""The keys a task line may have."""


@dataclass(frozen=True, slots=True)
class BatchTask:
    """One checked line of a tasks file.

    Attributes:
        id: The task's id, as written (a string or an integer).
        question: What the agent is asked.
        agent: The agent that answers (resolved: never ``None``).
        expected: The regular expression a correct answer matches, or ``None``.
        line: The 1-based line of the tasks file it came from.
    """

    id: TaskId
    question: str
    agent: str
    expected: str | None
    line: int

    def to_dict(self) -> dict[str, object]:
        """The task as plain values, for a worker process (Ray ships these)."""
        return {
            "id": self.id,
            "question": self.question,
            "agent": self.agent,
            "expected": self.expected,
            "line": self.line,
        }


def read_tasks(
    path: str | os.PathLike[str], agents: Collection[str], *, default_agent: str | None = None
) -> list[BatchTask]:
    """Read and check every line of the tasks file ``path``.

    Args:
        path: The JSONL file.
        agents: The names of the agents the agents file declares.
        default_agent: The agent of a line without ``agent`` (the command's ``--agent``);
            when ``None`` and the agents file has exactly one agent, that one.

    Returns:
        The tasks in file order.

    Raises:
        SpecError: With every problem of the file, each located ``file:line``: a line that
            is not a JSON object (or is nested too deeply), a missing or wrong key, a
            duplicate id, an agent the agents file lacks, an ``expected`` that is not a
            regular expression, text that is not UTF-8 (a lone surrogate), an unreadable
            or non-UTF-8 file, a file without tasks.
    """
    source = os.fspath(path)
    try:
        # utf-8-sig: a byte order mark (Notepad, PowerShell) is no part of the first task.
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(
            [SpecIssue(source, None, None, "", f"not UTF-8 text ({exc.reason})")]
        ) from None
    except OSError as exc:
        raise SpecError([SpecIssue(source, None, None, "", str(exc.strerror or exc))]) from None
    names = list(agents)
    if default_agent is None and len(names) == 1:
        default_agent = names[0]
    issues: list[SpecIssue] = []
    tasks: list[BatchTask] = []
    first_line: dict[TaskId, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        problems: list[tuple[str, str]] = []
        task = _task(
            raw,
            number,
            names=names,
            default_agent=default_agent,
            first_line=first_line,
            problems=problems,
        )
        issues.extend(SpecIssue(source, number, None, key, message) for key, message in problems)
        if task is not None:
            tasks.append(task)
    if len(issues) > MAX_ISSUES:
        # A file of another shape (every line wrong) would bury the first, telling lines.
        more = len(issues) - MAX_ISSUES
        issues = [
            *issues[:MAX_ISSUES],
            SpecIssue(source, None, None, "", f"and {more} more problems"),
        ]
    if not issues and not tasks:
        issues.append(SpecIssue(source, None, None, "", "no tasks (every line is blank)"))
    if issues:
        raise SpecError(issues)
    return tasks


Problems = list[tuple[str, str]]
"""The problems of one line: the key (``""`` for the line) and what is wrong."""


def _task(
    raw: str,
    number: int,
    *,
    names: list[str],
    default_agent: str | None,
    first_line: dict[TaskId, int],
    problems: Problems,
) -> BatchTask | None:
    """The task of line ``number``, or ``None`` with its problems added to ``problems``."""
    try:
        item = json.loads(raw)
    except ValueError as exc:
        problems.append(("", f"not JSON ({exc})"))
        return None
    except RecursionError:
        # Arrays in arrays a thousand deep: the parser's recursion, not a traceback.
        problems.append(("", "not a task: nested too deeply to read"))
        return None
    if not isinstance(item, dict):
        problems.append(("", f"a task is a JSON object, not {_kind(item)}"))
        return None
    unknown = sorted(set(item) - TASK_KEYS)
    if unknown:
        # A misspelt key ("questoin") would otherwise be a task silently without it.
        key = unknown[0] if _utf8(unknown[0]) else ascii(unknown[0])
        problems.append((key, f"unknown key (a task has {', '.join(sorted(TASK_KEYS))})"))
    if not _text_is_utf8(item, problems):
        return None
    task_id = _task_id(item, number, first_line, problems)
    question = _question(item, problems)
    agent = _agent(item, names, default_agent, problems)
    expected = _expected(item, problems)
    if problems or task_id is None or question is None or agent is None:
        return None
    return BatchTask(task_id, question, agent, expected, number)


def _task_id(
    item: dict[str, Any], number: int, first_line: dict[TaskId, int], problems: Problems
) -> TaskId | None:
    task_id = item.get("id")
    if "id" not in item:
        problems.append(("id", "missing"))
    elif isinstance(task_id, bool) or not isinstance(task_id, str | int):
        problems.append(("id", f"must be a string or an integer, not {_kind(task_id)}"))
    elif isinstance(task_id, str) and not task_id.strip():
        problems.append(("id", "is blank"))
    elif task_id in first_line:
        problems.append(("id", f"{task_id!r} is also the id of line {first_line[task_id]}"))
    else:
        first_line[task_id] = number
        return task_id
    return None


def _question(item: dict[str, Any], problems: Problems) -> str | None:
    question = item.get("question")
    if "question" not in item:
        problems.append(("question", "missing"))
    elif not isinstance(question, str):
        problems.append(("question", f"must be a string, not {_kind(question)}"))
    elif not question.strip():
        problems.append(("question", "is blank"))
    else:
        return question
    return None


def _agent(
    item: dict[str, Any], names: list[str], default_agent: str | None, problems: Problems
) -> str | None:
    agent = item.get("agent", default_agent)
    if "agent" in item and not isinstance(agent, str):
        problems.append(("agent", f"must be a string, not {_kind(agent)}"))
    elif agent is None:
        problems.append(
            ("agent", f"missing: the agents file has {_names(names)}; give --agent or the key")
        )
    elif agent not in names:
        problems.append(
            ("agent", f"no agent named {agent!r} (the agents file has {_names(names)})")
        )
    else:
        return str(agent)
    return None


def _expected(item: dict[str, Any], problems: Problems) -> str | None:
    expected = item.get("expected")
    if expected is None:
        return None
    if not isinstance(expected, str):
        message = f"must be a string (a regular expression), not {_kind(expected)}"
        problems.append(("expected", message))
        return None
    # Checked by the engine that matches it (runner.expected_matches): one dialect. Imported
    # here: `leanloop --help` reaches this module and needs no regular expression engine.
    import regex  # type: ignore[import-untyped,unused-ignore]  # noqa: PLC0415

    try:
        regex.compile(expected)
    except (regex.error, re.error, ValueError, OverflowError, RecursionError) as exc:
        problems.append(("expected", f"not a regular expression ({exc})"))
        return None
    return expected


def _text_is_utf8(item: dict[str, Any], problems: Problems) -> bool:
    """Whether every task string of ``item`` is UTF-8 text; a problem per one that is not.

    JSON spells a lone surrogate (``"\\ud800"``) that no UTF-8 file can hold: the task's
    result line could never be written, so the task is refused now, located.
    """
    fine = True
    for key in sorted(TASK_KEYS & set(item)):
        value = item[key]
        if isinstance(value, str) and not _utf8(value):
            bad = next(char for char in value if not _utf8(char))
            problems.append((key, f"holds {bad!a}, a lone surrogate: not text (UTF-8)"))
            fine = False
    return fine


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind(value: object) -> str:
    """How JSON calls ``value``'s type, with an article (``an array``, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _names(names: list[str]) -> str:
    if not names:
        return "no agents"
    return "agents " + ", ".join(names) if len(names) > 1 else f"one agent, {names[0]}"
