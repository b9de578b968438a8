"""Robot keywords that run tasks of the model-quality report on a real server.

The tasks, the workspace and the figures come from ``benchmarks.model_quality``, so the
suite checks the same runs the report measures, on fewer tasks.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from aio import run  # noqa: E402
from benchmarks.model_quality.runner import calls_run_twice, run_task  # noqa: E402
from benchmarks.model_quality.tasks import TASKS, write_workspace  # noqa: E402


class QualityLibrary:
    """Run quality tasks with leanloop and check what the run report says."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="robot-quality-")
        self._workspace = write_workspace(Path(self._folder.name) / "workspace")

    def run_quality_task(self, key: str, base_url: str, mode: str = "native") -> dict[str, Any]:
        """Run task ``key`` with leanloop's defaults; returns the result with its report.

        Fails when the task does not exist or the run failed outright (an exception).
        """
        task = next((t for t in TASKS if t.key == key), None)
        if task is None:
            raise AssertionError(f"no quality task {key!r}: {[t.key for t in TASKS]}")
        result = run(
            run_task(
                task, variant="leanloop", mode=mode, base_url=base_url, workspace=self._workspace
            )
        )
        if result.error:
            raise AssertionError(f"task {key} failed: {result.error}")
        return {**result.as_dict(), "report": result.report, "expected_path": task.path}

    def no_call_should_have_run_twice(self, report: dict[str, Any]) -> None:
        """Fail when two calls that ran (not answered from memory) are identical."""
        twice = calls_run_twice(report["tool_calls"])
        if twice:
            shown = ", ".join(f"{c['name']}({c['args']}) at step {c['step']}" for c in twice)
            raise AssertionError(f"identical calls ran again: {shown}")

    def report_should_count_its_repairs(self, report: dict[str, Any]) -> int:
        """Fail unless ``repaired_calls`` matches the calls marked repaired, each explained.

        Returns:
            The number of repaired calls (for the log).
        """
        marked = [call for call in report["tool_calls"] if call["repaired"]]
        if report["repaired_calls"] != len(marked):
            raise AssertionError(
                f"repaired_calls is {report['repaired_calls']}, but {len(marked)} calls are "
                f"marked repaired: {marked}"
            )
        for call in marked:
            if not call["notes"]:
                raise AssertionError(f"a repaired call says nothing about the repair: {call}")
        caught = [call for call in report["tool_calls"] if call["repeated"]]
        if report["repeated_calls"] != len(caught):
            raise AssertionError(
                f"repeated_calls is {report['repeated_calls']}, but {len(caught)} calls are "
                "marked repeated"
            )
        return len(marked)
