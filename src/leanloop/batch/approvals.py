"""Who decides on the tool calls that ask a person, in ``leanloop batch`` (ADR 0037).

Nobody sits at a batch: the decisions are given before it starts, and a call they do not
cover pauses its task (``stop_reason: "paused"`` in its result line), never a prompt.
In order, for a call of ``TOOL``:

1. the ``--approvals FILE`` entry for ``TOOL``: a YAML mapping of tool names to
   ``approve``, ``reject`` or ``"reject: REASON"`` (the reason is what the model reads);
2. ``--approve TOOL`` (repeatable);
3. ``--approve-all``.

A tool the file rejects and ``--approve`` names is a contradiction, refused before a task
runs. This module only reads and checks the decisions (no LangChain: ``batch --help``
stays cheap); :func:`leanloop.batch.runner.batch_approver` makes them an approver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from leanloop.exceptions import SpecError, SpecIssue

__all__ = ["BatchApprovals", "Rule", "read_approvals"]

Rule = tuple[Literal["approve", "reject"], str]
"""A file's decision on a tool: ``approve`` or ``reject``, and the reason of a rejection."""

_FORMS = "approve, reject, or 'reject: REASON'"


@dataclass(frozen=True)
class BatchApprovals:
    """The decisions a batch was given (plain data: it travels to Ray's workers).

    Attributes:
        rules: The ``--approvals`` file's decision per tool.
        source: The file, as given (the report's ``by``).
        tools: The tools ``--approve`` names.
        approve_all: ``--approve-all``.
    """

    rules: dict[str, Rule] = field(default_factory=dict)
    source: str = ""
    tools: tuple[str, ...] = ()
    approve_all: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The decisions as JSON-ready data, which :meth:`from_dict` reads back."""
        return {
            "rules": {tool: list(rule) for tool, rule in self.rules.items()},
            "source": self.source,
            "tools": list(self.tools),
            "approve_all": self.approve_all,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchApprovals:
        """The decisions :meth:`to_dict` wrote."""
        rules: dict[str, Rule] = {
            tool: ("reject" if rule[0] == "reject" else "approve", str(rule[1]))
            for tool, rule in data.get("rules", {}).items()
        }
        return cls(
            rules=rules,
            source=str(data.get("source", "")),
            tools=tuple(data.get("tools", ())),
            approve_all=bool(data.get("approve_all", False)),
        )


def read_approvals(
    path: str | None, *, tools: Sequence[str] = (), approve_all: bool = False
) -> BatchApprovals | None:
    """The batch's decisions from its flags and ``--approvals`` file; ``None``: none given.

    Raises:
        SpecError: The file cannot be read, is no mapping of tool names to a decision, or
            rejects a tool that ``--approve`` names (one located line per problem).
    """
    rules = _read_rules(path) if path is not None else {}
    issues = [
        SpecIssue(
            "--approve",
            None,
            None,
            tool,
            f"{path} rejects {tool}: approve it in the file or leave --approve {tool} out",
        )
        for tool in tools
        if rules.get(tool, ("approve", ""))[0] == "reject"
    ]
    if issues:
        raise SpecError(issues)
    if not (rules or tools or approve_all):
        return None
    return BatchApprovals(rules, path or "", tuple(tools), approve_all)


def _read_rules(path: str) -> dict[str, Rule]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError([SpecIssue(path, None, None, "", str(exc.strerror or exc))]) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SpecError([SpecIssue(path, None, None, "", f"not YAML ({first})")]) from None
    if not isinstance(data, dict) or not data:
        msg = f"must map tool names to a decision ({_FORMS}), e.g. 'write_file: approve'"
        raise SpecError([SpecIssue(path, None, None, "", msg)])
    rules: dict[str, Rule] = {}
    issues: list[SpecIssue] = []
    for tool, value in data.items():
        rule = _rule(value) if isinstance(tool, str) and tool else None
        if rule is None:
            msg = f"{value!r} is no decision ({_FORMS})"
            if not isinstance(tool, str) or not tool:
                msg = f"{tool!r} is no tool name"
            issues.append(SpecIssue(path, None, None, str(tool), msg))
        else:
            rules[tool] = rule
    if issues:
        raise SpecError(issues)
    return rules


def _rule(value: object) -> Rule | None:
    if not isinstance(value, str):
        return None
    kind, _, reason = value.partition(":")
    kind = kind.strip()
    if kind == "approve" and not reason.strip() and ":" not in value:
        return ("approve", "")
    if kind == "reject":
        return ("reject", reason.strip())
    return None
