"""The per-step budget check: what the loop does before each request.

Each timed call appends one reply and its tool result to a history that was already
checked once, then checks again (fit the request view, measure it). With the incremental
counter this should cost O(new messages): the check at 1,000 messages is required to stay
within 2x of the check at 10 (issue 4).
"""

from __future__ import annotations

import itertools

from benchmarks.bench_fixtures import StepCase, measure_step_ratio, quiet_logs

PATHS = ["fit+estimate", "RunBudget.prepare"]
_samples = itertools.count()


class StepCheck:
    """One step's check on a history that fits the window (nothing is trimmed).

    10,000 messages is past the issue's range; it shows what remains O(history) (list
    copies and identity comparisons done in C).
    """

    params = ([10, 100, 1_000, 10_000], PATHS)
    param_names = ("messages", "path")

    def setup(self, messages: int, path: str) -> None:
        quiet_logs()
        self.case = StepCase(messages, path=path, index=next(_samples))

    def time_step_check(self, messages: int, path: str) -> None:
        self.case.run()


class StepCheckTrimming:
    """One step's check when the history is a third over the ceiling, so every check trims.

    Trimmed copies are cached per original, so this is the steady state of a long run
    past its budget, not the first trim (see ``bench_trimming``).
    """

    params = ([10, 100, 1_000], PATHS)
    param_names = ("messages", "path")

    def setup(self, messages: int, path: str) -> None:
        quiet_logs()
        self.case = StepCase(messages, path=path, over_budget=True, index=next(_samples))

    def time_step_check(self, messages: int, path: str) -> None:
        self.case.run()


class StepCheckRatio:
    """The acceptance figure itself: median step at 1,000 messages / median step at 10."""

    params = (PATHS,)
    param_names = ("path",)
    timeout = 120

    def setup(self, path: str) -> None:
        quiet_logs()

    def track_ratio_1000_vs_10(self, path: str) -> float:
        return measure_step_ratio(path=path)

    track_ratio_1000_vs_10.unit = "ratio"  # type: ignore[attr-defined]
