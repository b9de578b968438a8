"""How close leanloop's token estimate is to what the embedded server counts.

Usage::

    python -m benchmarks.estimate_accuracy [--modes native text] [--limit N]

Runs the model-quality tasks (``benchmarks/model_quality``) with leanloop's defaults
against the embedded llama-server and prints, for every request that the server counted,
the figure the budget judged it by (the server's own count made before the request, on
llama.cpp: ``/apply-template`` + ``/tokenize``), the character estimate alone, the
server's ``prompt_tokens`` and the ratios, then the worst of each. Target (issue 13):
every figure within 10% of the server's count.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path

from benchmarks.local_server import free_port
from benchmarks.model_quality.runner import run_task
from benchmarks.model_quality.tasks import TASKS, write_workspace
from leanloop.budget.shared import PROCESS_STATE
from leanloop.localmodel import ServerOptions, running_server

CTX_SIZE = 8192


Row = tuple[str, str, int, int, int, int]
"""mode, task, request number, budget figure, character estimate, server count."""


async def _measure(modes: list[str], limit: int | None) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="estimate-") as folder:
        workspace = write_workspace(Path(folder) / "workspace")
        for mode in modes:
            # Each mode learns from nothing, as a new process would.
            PROCESS_STATE.estimators.clear()
            options = ServerOptions(port=free_port(), ctx_size=CTX_SIZE, template=mode == "native")
            with running_server(options) as server:
                for task in TASKS[:limit]:
                    result = await run_task(
                        task,
                        variant="leanloop",
                        mode=mode,
                        base_url=server.openai_url,
                        workspace=workspace,
                    )
                    for number, request in enumerate(result.report.get("requests", []), 1):
                        est, got = request["estimated_tokens"], request["input_tokens"]
                        chars = request.get("char_estimate_tokens") or est
                        if est and got:
                            rows.append((mode, task.key, number, est, chars, got))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", choices=["native", "text"], default=["native"])
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    started = time.perf_counter()
    rows = asyncio.run(_measure(args.modes, args.limit))
    print(
        "| mode | task | request | budget's figure | character estimate | server counted "
        "| figure / count | estimate / count |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for mode, key, number, est, chars, got in rows:
        print(
            f"| {mode} | {key} | {number} | {est:,} | {chars:,} | {got:,} "
            f"| {est / got:.3f} | {chars / got:.3f} |"
        )
    if not rows:
        print("no request was counted by the server")
        return 1
    print()
    for label, column in (("budget's figure", 3), ("character estimate", 4)):
        worst = max(rows, key=lambda r: abs(r[column] / r[5] - 1))
        ratio = worst[column] / worst[5]
        within = sum(abs(r[column] / r[5] - 1) <= 0.10 for r in rows)
        print(
            f"{label}: {len(rows)} requests, {within} within 10%; worst {ratio:.3f} "
            f"({ratio - 1:+.1%}, {worst[0]} {worst[1]} request {worst[2]})"
        )
    print(f"{time.perf_counter() - started:.0f} s")
    # The target is on the figure the budget decides by.
    return 0 if all(abs(r[3] / r[5] - 1) <= 0.10 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
