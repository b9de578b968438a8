"""Run the key benchmarks directly (without ASV) and print a Markdown table.

Usage::

    python benchmarks/print_table.py [--samples 25] [--max-seconds 3] [--only NAME]

Each row runs one ASV benchmark the way ASV does: ``setup_cache`` once, ``setup`` before
every timed call, the garbage collector off while timing. Benchmarks without ``setup``
are timed in batches (``timeit``'s autorange). The memory column is the peak that
``tracemalloc`` saw during one more call, above what was allocated before it. The
summary checks issue 4's acceptance figure: the per-step budget check at 1,000 messages
within 2x of the check at 10.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import timeit
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable as ASV does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# Modules, not classes: ASV would discover benchmark classes imported here a second time.
from benchmarks import (
    bench_fixtures,
    bench_protocol,
    bench_pruning,
    bench_run,
    bench_step,
    bench_tokens,
    bench_trimming,
)

RATIO_LIMIT = 2.0


@dataclass(frozen=True)
class Row:
    """The figures of one benchmark at one set of parameters."""

    name: str
    params: str
    median: float
    best: float
    samples: int
    peak_bytes: int


def _bench_rows() -> list[tuple[str, type, str, list[tuple[Any, ...]]]]:
    benches: list[tuple[str, type, str]] = [
        ("token estimation", bench_tokens.TokenEstimation, "time_estimate"),
        ("per-step check", bench_step.StepCheck, "time_step_check"),
        ("per-step check, trimming", bench_step.StepCheckTrimming, "time_step_check"),
        ("marker parsing", bench_pruning.MarkerParsing, "time_parse"),
        ("schema augmentation", bench_pruning.SchemaAugmentation, "time_augment"),
        ("pruning pass", bench_pruning.PruningPass, "time_prune"),
        ("text-mode parsing", bench_protocol.TextModeParsing, "time_parse"),
        ("trimming, 1,000 messages", bench_trimming.Trimming, "time_fit"),
        ("200-step run", bench_run.Run200Steps, "time_run_200_steps"),
    ]
    return [(name, bench, method, _grid(bench)) for name, bench, method in benches]


def _grid(bench: type) -> list[tuple[Any, ...]]:
    params = getattr(bench, "params", ())
    if not params:
        return [()]
    grid: list[tuple[Any, ...]] = [()]
    for values in params:
        grid = [(*combo, value) for combo in grid for value in values]
    return grid


def measure(
    bench: type, method: str, params: tuple[Any, ...], *, samples: int, max_seconds: float
) -> tuple[list[float], int]:
    """Time ``bench().method(*params)`` as ASV would; return per-call seconds and peak bytes."""
    instance = bench()
    cache = (instance.setup_cache(),) if hasattr(instance, "setup_cache") else ()
    func: Callable[..., Any] = getattr(instance, method)
    setup: Callable[..., Any] | None = getattr(instance, "setup", None)

    def call() -> None:
        func(*cache, *params)

    if setup is not None:  # one untimed call: first-use costs are not what is measured
        setup(*params)
    call()
    times: list[float] = []
    deadline = time.perf_counter() + max_seconds
    if setup is None:
        timer = timeit.Timer(call)
        number, _ = timer.autorange()
        while len(times) < samples and (len(times) < 3 or time.perf_counter() < deadline):
            times.append(timer.timeit(number) / number)
    else:
        while len(times) < samples and (len(times) < 3 or time.perf_counter() < deadline):
            setup(*params)
            times.append(_timed(call))
    if setup is not None:
        setup(*params)
    return times, _traced_peak(call)


def _timed(call: Callable[[], None]) -> float:
    enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter()
        call()
        return time.perf_counter() - started
    finally:
        if enabled:
            gc.enable()


def _traced_peak(call: Callable[[], None]) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _describe(bench: type, params: tuple[Any, ...]) -> str:
    names: Sequence[str] = getattr(bench, "param_names", ())
    return ", ".join(f"{name}={_value(value)}" for name, value in zip(names, params, strict=True))


def _value(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _seconds(value: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def _bytes(value: int) -> str:
    for unit, scale in (("MB", 1_000_000), ("KB", 1_000)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value} B"


def table(rows: Sequence[Row]) -> str:
    """The Markdown table of ``rows``."""
    lines = [
        "| benchmark | parameters | median | best | samples | peak traced memory |",
        "|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.name} | {r.params or '—'} | {_seconds(r.median)} | {_seconds(r.best)} "
        f"| {r.samples} | {_bytes(r.peak_bytes)} |"
        for r in rows
    ]
    return "\n".join(lines)


def step_summary(*, samples: int) -> str:
    """The acceptance table: per-step check at 1,000 vs 10 messages, interleaved, by path."""
    lines = [
        "",
        f"Per-step budget check, 1,000 messages vs 10, {samples} interleaved samples of each"
        " (issue 4: at most 2x):",
        "",
        "| path | median step at 10 | median step at 1,000 | ratio | at most 2x |",
        "|---|---:|---:|---:|---|",
    ]
    for path in bench_step.PATHS:
        small, large = bench_fixtures.measure_step_medians(path=path, samples=samples)
        ratio = large / small
        verdict = "yes" if ratio <= RATIO_LIMIT else "NO"
        lines.append(
            f"| {path} | {_seconds(small)} | {_seconds(large)} | {ratio:.2f}x | {verdict} |"
        )
    return "\n".join(lines)


def _environment() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"leanloop {version('leanloop')} · Python {platform.python_version()} · "
        f"{os.cpu_count()} CPUs · load average {load} at the start"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every key benchmark and print the tables; 1 when the ratio is over 2x."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=25, help="most samples per row")
    parser.add_argument("--max-seconds", type=float, default=3.0, help="time per row")
    parser.add_argument("--ratio-samples", type=int, default=200, help="interleaved samples")
    parser.add_argument("--only", default="", help="rows whose benchmark name contains this")
    args = parser.parse_args(argv)
    bench_fixtures.quiet_logs()
    environment = _environment()
    rows: list[Row] = []
    for name, bench, method, grid in _bench_rows():
        if args.only not in name:
            continue
        for params in grid:
            times, peak = measure(
                bench, method, params, samples=args.samples, max_seconds=args.max_seconds
            )
            rows.append(
                Row(
                    name,
                    _describe(bench, params),
                    statistics.median(times),
                    min(times),
                    len(times),
                    peak,
                )
            )
            print(f"  {name} {rows[-1].params}: {_seconds(rows[-1].median)}", file=sys.stderr)
    summary = step_summary(samples=args.ratio_samples)
    print(environment, "", table(rows), summary, sep="\n")
    return 1 if "| NO |" in summary else 0


if __name__ == "__main__":
    sys.exit(main())
