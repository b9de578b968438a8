"""``python -m benchmarks.model_quality``: run the tasks and print (and write) the report.

Starts llama-server from leanloop's cache (``leanloop local setup [--model NAME]`` first;
``--model`` picks a model of the catalog, the default one when omitted) once per
protocol mode: ``native`` with leanloop's chat template, ``text`` with the model's own
template. Runs every task once per loop, sequentially (the 2-core machine has room for
one server at a time). Takes about 15-25 minutes for the full matrix.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.local_server import free_port
from benchmarks.model_quality import runner
from benchmarks.model_quality.report import ReportInfo, markdown_report, summary_rows
from benchmarks.model_quality.runner import TaskResult, Variant, run_task
from benchmarks.model_quality.tasks import TASKS, QualityTask, write_workspace
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


def main(argv: list[str] | None = None) -> int:
    """Run the report; returns the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    tasks = [t for t in TASKS if not args.task or t.key in args.task][: args.limit]
    pin = MODEL_CATALOG[args.model]
    if args.timeout is not None:
        runner.REQUEST_TIMEOUT_S = args.timeout
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    # One event loop for all runs: langchain_openai caches its async HTTP client per
    # process, and a client opened on a closed loop fails ("Event loop is closed").
    results = asyncio.run(_run_all(args.modes, args.loops, tasks, pin))
    model = pin.description.split(",")[0]
    info = ReportInfo(
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
        command="python -m benchmarks.model_quality " + " ".join(argv or sys.argv[1:]),
        seconds=time.perf_counter() - started,
        server=f"llama-server, {model} Q4_K_M, --ctx-size {CTX_SIZE}, "
        "temperature 0, one run per task",
        load=f"1-minute load average {load_before:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores",
    )
    text = markdown_report(info, results)
    print(text)
    if args.write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        # The default model's report keeps its name; another model's gets its own files.
        stem = "model_quality" if pin.name == DEFAULT_MODEL else f"model_quality-{pin.name}"
        (RESULTS / f"{stem}.md").write_text(text, encoding="utf-8")
        rows = [r.as_dict() for r in results]
        (RESULTS / f"{stem}.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0 if summary_rows(results) else 1


async def _run_all(
    modes: list[str], loops: list[str], tasks: list[QualityTask], pin: ModelPin
) -> list[TaskResult]:
    results: list[TaskResult] = []
    with tempfile.TemporaryDirectory(prefix="model-quality-") as folder:
        workspace = write_workspace(Path(folder) / "workspace")
        for mode in modes:
            variants = [v for v in _VARIANTS[mode] if v in loops]
            if not variants:
                continue
            options = ServerOptions(
                port=free_port(),
                ctx_size=CTX_SIZE,
                template=mode == "native",
                model=cache_paths().model_path(pin.filename),
            )
            with running_server(options) as server:
                for variant in variants:
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
    return results


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.model_quality")
    modes = ["native", "text"]
    parser.add_argument("--modes", nargs="+", choices=modes, default=modes)
    parser.add_argument(
        "--loops",
        nargs="+",
        choices=["leanloop", "leanloop-off", "create_agent"],
        default=["leanloop", "leanloop-off", "create_agent"],
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
