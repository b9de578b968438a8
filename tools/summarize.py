"""Count Behave scenarios, pytest tests and Robot tests from their XML reports for the summary."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = ["Counts", "Tally", "count_behave", "count_pytest", "count_robot"]


@dataclass(frozen=True)
class Counts:
    """Passed, failed and skipped items of one runner."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.passed + other.passed, self.failed + other.failed, self.skipped + other.skipped
        )


def count_behave(junit_dir: Path) -> Counts:
    """Count scenarios from Behave's JUnit files (one testcase per scenario)."""
    total = Counts()
    for report in sorted(junit_dir.glob("*.xml")):
        total += _count_junit(report)
    return total


def count_pytest(junit_xml: Path) -> Counts:
    """Count tests from pytest's ``--junitxml`` file (none when it was not written)."""
    return _count_junit(junit_xml) if junit_xml.exists() else Counts()


def _count_junit(report: Path) -> Counts:
    """One JUnit file's testcases: failed (a failure or an error), skipped or passed."""
    total = Counts()
    root = ET.parse(report).getroot()  # noqa: S314 - our own runners' reports
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            total += Counts(failed=1)
        elif case.find("skipped") is not None or case.get("status") == "skipped":
            total += Counts(skipped=1)
        else:
            total += Counts(passed=1)
    return total


def count_robot(output_xml: Path) -> Counts:
    """Count tests from Robot's output.xml (its own statistics, all suites)."""
    if not output_xml.exists():
        return Counts()
    root = ET.parse(output_xml).getroot()  # noqa: S314
    stat = root.find("./statistics/total/stat")
    if stat is None:
        return Counts()
    return Counts(int(stat.get("pass", 0)), int(stat.get("fail", 0)), int(stat.get("skip", 0)))


@dataclass(frozen=True)
class Tally:
    """Everything one test run counted: Behave, pytest, Robot, and the pass/fail gates."""

    behave: Counts = field(default_factory=Counts)
    pytest: Counts = field(default_factory=Counts)
    robot: Counts = field(default_factory=Counts)
    gates: dict[str, bool] = field(default_factory=dict)
    crashed: tuple[str, ...] = ()

    @classmethod
    def from_parts(
        cls,
        *,
        behave: Counts | None = None,
        pytest: Counts | None = None,
        robot: Counts | None = None,
        gates: dict[str, bool] | None = None,
    ) -> Tally:
        return cls(behave or Counts(), pytest or Counts(), robot or Counts(), dict(gates or {}))

    def with_crash(self, runner: str) -> Tally:
        """A runner that failed without reporting a failed test still counts as a failure."""
        return replace(self, crashed=(*self.crashed, runner))

    @property
    def total(self) -> Counts:
        gates = Counts(
            passed=sum(self.gates.values()), failed=len(self.gates) - sum(self.gates.values())
        )
        runners = self.behave + self.pytest + self.robot
        return runners + gates + Counts(failed=len(self.crashed))

    @property
    def failed(self) -> int:
        return self.total.failed

    def breakdown(self) -> str:
        b, p, r = self.behave, self.pytest, self.robot
        gates = ", ".join(f"{name} {'ok' if ok else 'FAILED'}" for name, ok in self.gates.items())
        lines = [
            f"behave scenarios: {b.passed} passed, {b.failed} failed, {b.skipped} skipped",
            f"pytest tests: {p.passed} passed, {p.failed} failed, {p.skipped} skipped",
            f"robot tests: {r.passed} passed, {r.failed} failed, {r.skipped} skipped",
        ]
        if gates:
            lines.append(f"gates (each counted as one test): {gates}")
        lines.extend(f"{runner} exited non-zero without a failed test" for runner in self.crashed)
        return "\n".join(lines)

    def summary(self) -> str:
        t = self.total
        line = f"{t.passed} passed, {t.failed} failed"
        return f"{line}, {t.skipped} skipped" if t.skipped else line
