"""The run report: what one run did, step by step, and what it did to the context.

It travels with the answer as ``AIMessage.response_metadata["leanloop"]`` (a plain,
JSON-ready dict), so pipelines and the CLI read the same figures.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["RequestRecord", "RunReport", "StopReason", "ToolCallRecord"]

StopReason = Literal["answer", "max_rounds", "budget_exhausted", "repeated_calls"]


@dataclass(kw_only=True)
class ToolCallRecord:
    """One tool call the loop handled."""

    step: int
    name: str
    args: dict[str, Any]
    chars_out: int
    """Characters of the result the model saw."""
    chars_raw: int
    """Characters the tool produced, before caps and pruning."""
    ok: bool = True
    pruned: bool = False
    repeated: bool = False
    """A repeat of an earlier identical call, answered with a reminder (not run)."""
    repaired: bool = False
    """The call was mended to run (tool name, argument names or values, a missing path)."""
    repaired_from: str | None = None
    """The tool name the model wrote, when ``name`` is the repaired one."""
    notes: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class RequestRecord:
    """One request to the chat model."""

    step: int
    messages: int
    input_tokens: int | None = None
    """The prompt size the server reported (``reported_input_tokens`` in the dict)."""
    output_tokens: int | None = None
    estimated_tokens: int | None = None
    ceiling: int | None = None
    window: int | None = None
    tools: bool = True
    """Whether tools were offered on this request."""
    kind: str = "step"
    """``step``, ``final`` (the tool-less answer request) or ``retry`` (a step sent again,
    smaller or in text mode, after the server refused it)."""


@dataclass(kw_only=True)
class RunReport:
    """Everything one run did, as plain values."""

    stop_reason: StopReason = "answer"
    steps: int = 0
    tool_mode: str = "native"
    window: int | None = None
    window_source: str | None = None
    chars_per_token: float | None = None
    trimmed_results: int = 0
    """Distinct tool results trimmed in at least one request view."""
    tokens_saved_by_trimming: int = 0
    """Estimated tokens not sent, summed over every request (a result trimmed in three
    requests saves three times)."""
    chars_saved_by_pruning: int = 0
    overflow_recoveries: int = 0
    repeated_calls: int = 0
    """Identical calls answered from memory instead of being run again."""
    prefetched: list[str] = field(default_factory=list)
    """Workspace files named in the request and read before the first step."""
    prompt_profile: str = "default"
    events: list[str] = field(default_factory=list)
    """Notable things that happened, one line each (mode switches, synthesis, recoveries)."""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict (the documented field names)."""
        data = asdict(self)
        data["repaired_calls"] = self.repaired_calls
        for request in data["requests"]:
            request["reported_input_tokens"] = request["input_tokens"]
        return data

    @property
    def input_tokens(self) -> int:
        """Total prompt tokens the server reported over the run."""
        return sum(r.input_tokens or 0 for r in self.requests)

    @property
    def output_tokens(self) -> int:
        """Total reply tokens the server reported over the run."""
        return sum(r.output_tokens or 0 for r in self.requests)

    @property
    def repaired_calls(self) -> int:
        """Calls that ran only after a repair (see ``ToolCallRecord.repaired``)."""
        return sum(call.repaired for call in self.tool_calls)
