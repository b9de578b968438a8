"""The per-step budget check of a long run past its budget, at 500 and 5,000 messages.

Issue 16: once anything was trimmed, every step re-summed the whole history (2.9 µs per
message per step) and, above 8,192 messages, the counter's bounded cache thrashed (63 ms a
check at 9,000). The check must be O(new messages): the step at 5,000 messages within 2x
of the step at 500, with trimming active.

Each timed call is one step of ``RunBudget.prepare`` (the loop's own check) as in
``bench_step.StepCheckTrimming``: a history whose ceiling is three quarters of its size,
checked once (so the view already holds trimmed results), then one reply and one tool
result appended and the check run again. The window grows with the history, so the view
at 5,000 messages also keeps ten times as many results whole: only what is new may cost.

Run it as a script for the figures without ASV::

    python benchmarks/bench_step_long.py [--samples 40]

It prints both medians and their ratio, and exits 1 when the ratio is over 2.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable as ASV does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_fixtures import StepCase, quiet_logs

PATH = "RunBudget.prepare"
SMALL, LARGE = 500, 5_000
RATIO_LIMIT = 2.0
_WARMUP = 3
_samples = itertools.count(50_000_000)


class StepCheckTrimmingLong:
    """One step's check at 500 or 5,000 messages, every check past the ceiling."""

    params = ([SMALL, LARGE],)
    param_names = ("messages",)
    timeout = 300

    def setup(self, messages: int) -> None:
        quiet_logs()
        self.case = StepCase(messages, path=PATH, over_budget=True, index=next(_samples))

    def time_step_check(self, messages: int) -> None:
        self.case.run()


class StepCheckTrimmingLongRatio:
    """The acceptance figure: median step at 5,000 messages / median step at 500."""

    timeout = 600

    def setup(self) -> None:
        quiet_logs()

    def track_ratio_5000_vs_500(self) -> float:
        at_small, at_large = measure_medians()
        return at_large / at_small

    track_ratio_5000_vs_500.unit = "ratio"  # type: ignore[attr-defined]


def measure_medians(samples: int = 40) -> tuple[float, float]:
    """Median seconds of one trimming step at 500 and at 5,000 messages.

    Samples of both sizes are interleaved (load changes hit both alike), each on a fresh
    case built untimed, with the garbage collector off while the step runs.
    """
    times: dict[int, list[float]] = {SMALL: [], LARGE: []}
    for index in range(-_WARMUP, samples):
        for count in (SMALL, LARGE):
            case = StepCase(count, path=PATH, over_budget=True, index=next(_samples))
            enabled = gc.isenabled()
            gc.disable()
            try:
                started = time.perf_counter()
                case.run()
                seconds = time.perf_counter() - started
            finally:
                if enabled:
                    gc.enable()
            if index >= 0:
                times[count].append(seconds)
    return statistics.median(times[SMALL]), statistics.median(times[LARGE])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40, help="samples of each size")
    args = parser.parse_args(argv)
    quiet_logs()
    at_small, at_large = measure_medians(args.samples)
    ratio = at_large / at_small
    print(f"| messages | median step ({PATH}, trimming active) |")
    print("|---:|---:|")
    print(f"| {SMALL:,} | {at_small * 1e6:,.0f} µs |")
    print(f"| {LARGE:,} | {at_large * 1e6:,.0f} µs |")
    verdict = "within" if ratio <= RATIO_LIMIT else "OVER"
    print(f"\nratio {LARGE:,} / {SMALL:,}: {ratio:.2f} ({verdict} the {RATIO_LIMIT:g}x limit)")
    return 0 if ratio <= RATIO_LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
