"""Keywords of ``robot/fault_injection.robot``: run ``tools/fault_injection.py`` once, read it.

The script runs every case (signals during MCP calls, sessions with sub-agents and
resume, bytes that are not UTF-8) and writes each invocation with its problems to a JSON
report; each test of the suite checks its own cases in that report, so a failure names
the case, the command and what broke, and the script runs once for the whole suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["FaultInjectionLibrary"]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "fault_injection.py"
GUARD_S = 600
"""A guard against a hang of the whole script (it takes well under a minute)."""


class FaultInjectionLibrary:
    """Run the fault script; check a case, or the script's summary."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._result: dict[str, Any] | None = None

    def run_fault_injection_script(self, report: str) -> None:
        """Run ``python tools/fault_injection.py --report REPORT``; keep its outcome."""
        try:
            done = subprocess.run(
                [sys.executable, str(SCRIPT), "--report", report],
                capture_output=True,
                text=True,
                timeout=GUARD_S,
                check=False,
                cwd=ROOT,
            )
        except subprocess.TimeoutExpired as exc:
            msg = f"tools/fault_injection.py did not end within {GUARD_S} s"
            raise AssertionError(msg) from exc
        print(f"*INFO* exit status {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}")
        try:
            data = json.loads(Path(report).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {"invocations": []}
        self._result = {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
        self._result["report"] = data

    def _outcome(self) -> dict[str, Any]:
        assert self._result is not None, "the fault script has not run"
        return self._result

    def fault_case_should_have_held(self, *cases: str) -> None:
        """Each named case ran, and none of its invocations had a problem."""
        invocations = self._outcome()["report"]["invocations"]
        failures = []
        for case in cases:
            runs = [run for run in invocations if run["case"] == case]
            if not runs:
                failures.append(f"{case}: did not run")
            for run in runs:
                print(f"*INFO* {json.dumps(run, indent=1, ensure_ascii=False)}")
                failures += [f"{case}: {' '.join(run['argv'])}: {p}" for p in run["problems"]]
        assert not failures, "\n".join(failures)

    def fault_script_should_have_passed(self) -> None:
        """Exit status 0 and a summary of 0 orphans, 0 tracebacks, all JSON valid."""
        outcome = self._outcome()
        lines = outcome["stdout"].strip().splitlines()
        summary = next((ln for ln in lines if ln.startswith("fault injection:")), "")
        assert summary, f"no summary line: {outcome['stdout'][-2000:]}{outcome['stderr'][-2000:]}"
        assert outcome["rc"] == 0, f"exit status {outcome['rc']}:\n{outcome['stdout'][-4000:]}"
        assert " 0 orphan processes " in summary, summary
        assert " 0 tracebacks " in summary, summary
        valid, _, wanted = summary.split(" · ")[3].split()[0].partition("/")
        assert valid == wanted and int(wanted) > 0, summary
        assert lines[-1] == "ok", lines[-1]
