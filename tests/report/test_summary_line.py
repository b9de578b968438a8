"""The summary line counts in words that agree with their numbers (issue 29: "1 steps")."""

from __future__ import annotations

from typing import Any

import pytest

from leanloop.report import summary_line


def _report(steps: int, calls: int, requests: int) -> dict[str, Any]:
    return {
        "stop_reason": "answer",
        "steps": steps,
        "tool_calls": [{"ok": True} for _ in range(calls)],
        "requests": [{} for _ in range(requests)],
    }


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((1, 1, 1), "stop: answer · 1 step · 1 tool call · 1 request"),
        ((2, 3, 4), "stop: answer · 2 steps · 3 tool calls · 4 requests"),
        ((0, 0, 1), "stop: answer · 0 steps · 0 tool calls · 1 request"),
    ],
)
def test_one_is_singular_and_other_counts_plural(
    counts: tuple[int, int, int], expected: str
) -> None:
    assert summary_line(_report(*counts)) == expected


def test_a_report_without_steps_still_reads() -> None:
    assert summary_line({"stop_reason": "failed"}).startswith("stop: failed · - steps · 0 tool")
