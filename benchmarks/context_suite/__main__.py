"""``python -m benchmarks.context_suite``: run the suite, print the table, write the results.

Options: ``--windows``, ``--tasks`` and ``--seed`` change the run; ``--no-write`` only
prints; ``--real`` runs the small task set against the local llama-server instead
(see :mod:`benchmarks.context_suite.real`). ``--via-batch [--concurrency N] [--ray
[ADDRESS]]`` runs leanloop's two strategies through the ``leanloop batch`` command and
serially, and compares them task by task (see :mod:`benchmarks.context_suite.via_batch`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.batch_suites import add_batch_options
from benchmarks.context_suite.metrics import probe_figures, rows_for, target_checks
from benchmarks.context_suite.report import ReportInfo, markdown_report, plot_tokens
from benchmarks.context_suite.strategies import STRATEGIES
from benchmarks.context_suite.suite import quiet_logs, run_matrix
from benchmarks.context_suite.tasks import make_tasks, probe_task
from benchmarks.context_suite.workspace import build_workspace

RESULTS = Path(__file__).resolve().parents[1] / "results"
WINDOWS = (4_096, 8_192, 32_768)
PROBE_WINDOWS = (8_192, 32_768)
"""At 8,192 leanloop trims in the probe's later steps; at 32,768 nothing needs managing."""
PROBE_RUNS = 3
"""The probe's figure is the median of this many runs (a shared machine is noisy)."""
SEED = 20_240_601
PLOT_TASK = "T01"


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.context_suite",
        description="Compare context strategies on the same tasks and windows.",
    )
    parser.add_argument("--windows", type=int, nargs="+", default=list(WINDOWS))
    parser.add_argument("--tasks", type=int, default=12, help="number of tasks (at least 1)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--strategies",
        nargs="+",
        choices=[s.key for s in STRATEGIES],
        default=[s.key for s in STRATEGIES],
        help="run only these strategies (the targets need all of them)",
    )
    parser.add_argument("--results", type=Path, default=RESULTS, help="where to write")
    parser.add_argument("--no-write", action="store_true", help="print the report only")
    parser.add_argument("--real", action="store_true", help="use the local llama-server")
    parser.add_argument("--port", type=int, default=None, help="--real: llama-server port")
    parser.add_argument(
        "--model", default=None, help="--real: a model of `leanloop local models` (default: 0.5B)"
    )
    parser.add_argument(
        "--no-prefetch",
        action="store_true",
        help="--real: leanloop does not read the files the question names first (its default)",
    )
    parser.add_argument(
        "--pruning-model",
        default=None,
        help="--real: leanloop prunes with this model of `leanloop local models` on a second "
        "server (default: the reader's server)",
    )
    parser.add_argument(
        "--reports",
        type=Path,
        default=None,
        help="--real: write each leanloop run's report here as STRATEGY-TASK.json",
    )
    add_batch_options(
        parser,
        title="through leanloop batch (leanloop's strategies, scripted)",
        via_help="run leanloop_trim and leanloop_prune with `leanloop batch` (a subprocess) and "
        "serially, and compare (writes nothing)",
        dir_help="--via-batch: keep the workspace, agents, tasks and results files in DIR",
    )
    args = parser.parse_args(argv)
    if args.via_batch and args.real:
        parser.error("--via-batch runs the scripted suite (not --real)")
    if not args.via_batch and (
        args.concurrency is not None or args.ray is not None or args.batch_dir is not None
    ):
        parser.error("--concurrency, --ray and --batch-dir go with --via-batch")
    if args.concurrency is not None and args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    if args.tasks < 1 or any(w < 512 for w in args.windows):
        parser.error("--tasks must be at least 1 and every window at least 512 tokens")
    return args


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite and print its report; returns the exit status."""
    args = _arguments(argv)
    if args.via_batch:
        return _via_batch(args)
    if args.real:
        from benchmarks.context_suite.real import run_real  # noqa: PLC0415 - needs a server

        return run_real(args)
    started = time.perf_counter()
    strategies = [s for s in STRATEGIES if s.key in args.strategies]
    with tempfile.TemporaryDirectory(prefix="context-suite-") as folder, quiet_logs():
        facts = build_workspace(Path(folder), seed=args.seed)
        tasks = make_tasks(facts, count=args.tasks, seed=args.seed)
        logs = asyncio.run(
            run_matrix(
                strategies=strategies,
                windows=args.windows,
                tasks=tasks,
                workspace=facts.root,
                progress=_progress,
            )
        )
        probe_logs = asyncio.run(
            run_matrix(
                strategies=strategies,
                windows=PROBE_WINDOWS,
                tasks=[probe_task(facts)] * PROBE_RUNS,
                workspace=facts.root,
            )
        )
    probes = probe_figures(probe_logs)
    rows = rows_for(logs, strategies)
    plot_window = min(args.windows)
    info = ReportInfo(
        title="Context-efficiency suite",
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
        windows=args.windows,
        tasks=len(tasks),
        seed=args.seed,
        seconds=time.perf_counter() - started,
        command="python -m benchmarks.context_suite",
        plot="context_suite.png",
    )
    text = markdown_report(info, rows, target_checks(rows, logs, probes), probes, strategies)
    print(text)
    if not args.no_write:
        args.results.mkdir(parents=True, exist_ok=True)
        (args.results / "context_suite.md").write_text(text, encoding="utf-8")
        plot_tokens(
            logs,
            strategies,
            task_id=PLOT_TASK,
            window=plot_window,
            target=args.results / "context_suite.png",
        )
        _progress(f"wrote {args.results / 'context_suite.md'} and context_suite.png")
    return 0


def _via_batch(args: argparse.Namespace) -> int:
    from benchmarks.context_suite.via_batch import run_via_batch  # noqa: PLC0415

    with contextlib.ExitStack() as stack, quiet_logs():
        if args.batch_dir is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cs-batch-")))
        else:
            folder = args.batch_dir.resolve()
        facts = build_workspace(folder / "workspace", seed=args.seed)
        tasks = make_tasks(facts, count=args.tasks, seed=args.seed)
        comparison = run_via_batch(
            folder,
            windows=args.windows,
            tasks=tasks,
            concurrency=args.concurrency,
            ray=args.ray,
        )
    print("\n".join(comparison.lines()))
    return 0 if comparison.batch.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
