"""``python -m benchmarks.model_quality``: run the tasks and print (and write) the report.

Starts llama-server from leanloop's cache (``leanloop local setup [--model NAME]`` first;
``--model`` picks a model of the catalog, the default one when omitted) once per
protocol mode: ``native`` with leanloop's chat template, ``text`` with the model's own
template. Runs every task once per loop, sequentially (the 2-core machine has room for
one server at a time). Takes about 15-25 minutes for the full matrix.

``--via-batch [--concurrency N] [--ray [ADDRESS]]`` runs the ``leanloop`` loop's tasks
through the ``leanloop batch`` command instead, on the same server, agent configuration
and checks (:mod:`benchmarks.model_quality.via_batch`), and prints the same report.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.batch_suites import add_batch_options
from benchmarks.local_server import free_port
from benchmarks.model_quality import runner
from benchmarks.model_quality.report import ReportInfo, markdown_report, summary_rows
from benchmarks.model_quality.runner import TaskResult, Variant, run_task
from benchmarks.model_quality.tasks import TASKS, QualityTask, write_workspace
from benchmarks.model_quality.via_batch import run_mode
from leanloop.localmodel import (
    DEFAULT_MODEL,
    MODEL_CATALOG,
    ModelPin,
    ServerOptions,
    cache_paths,
    running_server,
)

CTX_SIZE = 8192
RESULTS = Path(__file__).resolve().parent.parent / "results"
_VARIANTS: dict[str, tuple[Variant, ...]] = {
    "native": ("leanloop", "leanloop-off", "create_agent"),
    "text": ("leanloop", "leanloop-off"),
}


def _server_options(mode: str, pin: ModelPin) -> ServerOptions:
    """The embedded server of ``mode`` (the tool template for native calls) on a free port."""
    return ServerOptions(
        port=free_port(),
        ctx_size=CTX_SIZE,
        template=mode == "native",
        model=cache_paths().model_path(pin.filename),
    )


def main(argv: list[str] | None = None) -> int:
    """Run the report; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.via_batch:
        _check_batch_arguments(parser, args)
    elif args.concurrency is not None or args.ray is not None or args.batch_dir is not None:
        parser.error("--concurrency, --ray and --batch-dir go with --via-batch")
    elif args.loops is None:
        args.loops = ["leanloop", "leanloop-off", "create_agent"]
    logging.basicConfig(level=logging.ERROR)
    tasks = [t for t in TASKS if not args.task or t.key in args.task][: args.limit]
    pin = MODEL_CATALOG[args.model]
    if args.timeout is not None:
        runner.REQUEST_TIMEOUT_S = args.timeout
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    # One event loop for all runs: langchain_openai caches its async HTTP client per
    # process, and a client opened on a closed loop fails ("Event loop is closed").
    walls: list[str] = []
    if args.via_batch:
        results = _run_via_batch(args, tasks, pin, walls)
        how = "through `" + " ".join(["leanloop batch", *_batch_options(args)]) + "`"
    else:
        results = asyncio.run(_run_all(args.modes, args.loops, tasks, pin, walls))
        how = "serially, in this process"
    model = pin.description.split(",")[0]
    info = ReportInfo(
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
        command="python -m benchmarks.model_quality " + " ".join(argv or sys.argv[1:]),
        seconds=time.perf_counter() - started,
        server=f"llama-server, {model} Q4_K_M, --ctx-size {CTX_SIZE}, "
        f"temperature 0, one run per task, {how}",
        load=f"1-minute load average {load_before:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores",
    )
    text = markdown_report(info, results)
    print(text)
    if walls:
        print("## Wall time\n\n" + "\n".join(walls) + "\n")
    if args.write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        # The default model's report keeps its name; another model's gets its own files.
        stem = "model_quality" if pin.name == DEFAULT_MODEL else f"model_quality-{pin.name}"
        (RESULTS / f"{stem}.md").write_text(text, encoding="utf-8")
        rows = [r.as_dict() for r in results]
        (RESULTS / f"{stem}.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0 if summary_rows(results) else 1


async def _run_all(
    modes: list[str],
    loops: list[str],
    tasks: list[QualityTask],
    pin: ModelPin,
    walls: list[str],
) -> list[TaskResult]:
    results: list[TaskResult] = []
    with tempfile.TemporaryDirectory(prefix="model-quality-") as folder:
        workspace = write_workspace(Path(folder) / "workspace")
        for mode in modes:
            variants = [v for v in _VARIANTS[mode] if v in loops]
            if not variants:
                continue
            with running_server(_server_options(mode, pin)) as server:
                for variant in variants:
                    began = time.perf_counter()
                    for task in tasks:
                        result = await run_task(
                            task,
                            variant=variant,
                            mode=mode,
                            base_url=server.openai_url,
                            workspace=workspace,
                        )
                        results.append(result)
                        _progress(result)
                    seconds = time.perf_counter() - began
                    walls.append(_wall_line(f"{mode} {variant}, serial", seconds, tasks))
    return results


def _wall_line(what: str, seconds: float, tasks: Sequence[QualityTask]) -> str:
    n = len(tasks)
    return f"- {what}: {n} tasks in {seconds:.1f} s wall ({seconds / n:.1f} s/task)"


def _check_batch_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--via-batch`` runs the ``leanloop`` loop only (the others cannot go through it)."""
    if args.loops is None:
        args.loops = ["leanloop"]
    if args.loops != ["leanloop"]:
        parser.error(
            "--via-batch runs the leanloop loop only (leanloop-off patches leanloop in this "
            "process; create_agent is not leanloop)"
        )
    if args.write:
        parser.error("--via-batch does not write the report files (--batch-dir keeps its own)")
    if args.concurrency is not None and args.concurrency < 1:
        parser.error("--concurrency must be at least 1")


def _batch_options(args: argparse.Namespace) -> list[str]:
    options = []
    if args.concurrency is not None:
        options += ["--concurrency", str(args.concurrency)]
    if args.ray is not None:
        options += ["--ray", args.ray] if args.ray else ["--ray"]
    return options


def _run_via_batch(
    args: argparse.Namespace, tasks: list[QualityTask], pin: ModelPin, walls: list[str]
) -> list[TaskResult]:
    results: list[TaskResult] = []
    with contextlib.ExitStack() as stack:
        if args.batch_dir is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mq-batch-")))
        else:
            folder = args.batch_dir.resolve()
        write_workspace(folder / "workspace")
        for mode in args.modes:
            with running_server(_server_options(mode, pin)) as server:
                run = run_mode(
                    folder,
                    tasks,
                    mode=mode,
                    base_url=server.openai_url,
                    concurrency=args.concurrency,
                    ray=args.ray,
                )
            for result in run.results:
                _progress(result)
            results.extend(run.results)
            command = " ".join(run.batch.command)
            print(f"$ {command}  (exit {run.batch.returncode})", file=sys.stderr)
            for line in run.batch.summary:
                print(f"  {line}", file=sys.stderr)
            what = f"{mode} leanloop, through leanloop batch (the subprocess)"
            walls.append(
                _wall_line(what, run.batch.wall_seconds, tasks)
                + f"; the command's summary: {_summary_time(run.batch.summary)}"
            )
            walls += [f"- disagreement: {line}" for line in run.disagreements]
    return results


def _summary_time(summary: Sequence[str]) -> str:
    for line in summary:
        if line.startswith("time: "):
            return line.removeprefix("time: ")
    return "no time line"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.model_quality")
    modes = ["native", "text"]
    parser.add_argument("--modes", nargs="+", choices=modes, default=modes)
    parser.add_argument(
        "--loops",
        nargs="+",
        choices=["leanloop", "leanloop-off", "create_agent"],
        default=None,
        help="the loops to run (default: all three; with --via-batch, leanloop)",
    )
    parser.add_argument("--task", action="append", help="run only this task (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="run the first N tasks only")
    parser.add_argument(
        "--model",
        choices=list(MODEL_CATALOG),
        default=DEFAULT_MODEL,
        help=f"the catalog model to serve (default {DEFAULT_MODEL}; `leanloop local setup "
        "--model NAME` first)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"seconds per request (default {runner.REQUEST_TIMEOUT_S:g}; more on a busy machine)",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="write benchmarks/results/model_quality[-MODEL].{md,json}",
    )
    add_batch_options(
        parser,
        title="through leanloop batch (the leanloop loop only)",
        via_help="run the tasks with the `leanloop batch` command (a subprocess), same server",
        dir_help="--via-batch: write the agents, tasks and results files and the workspace to DIR "
        "and keep them (default: a temporary folder)",
    )
    return parser


def _progress(result: TaskResult) -> None:
    mark = "ok " if result.correct else "err" if result.error else "no "
    line = (
        f"{result.mode:<6} {result.variant:<12} {result.task:<11} {mark} "
        f"read={int(result.file_read)} calls={result.calls} repaired={result.repaired_calls} "
        f"caught={result.repeats_caught} rerun={result.repeats_executed} steps={result.steps} "
        f"{result.seconds:.1f}s cache2+={_cache_mark(result)}  "
        f"{(result.error or result.answer)[:70]!r}"
    )
    print(line, file=sys.stderr, flush=True)


def _cache_mark(result: TaskResult) -> str:
    cached, evaluated = result.later_prompt_cached, result.later_prompt_evaluated
    if cached is None or evaluated is None:
        return "-"
    return f"{cached}/{cached + evaluated}"


if __name__ == "__main__":
    raise SystemExit(main())
