"""How close leanloop's token estimate is to what the embedded server counts.

Usage::

    python -m benchmarks.estimate_accuracy [--modes native text] [--limit N]

Runs the model-quality tasks (``benchmarks/model_quality``) with leanloop's defaults
against the embedded llama-server and prints, for every request that the server counted,
leanloop's estimate, the server's ``prompt_tokens`` and their ratio, then the worst ratio.
Target (issue 13): every estimate within 10% of the server's count.
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
from leanloop.budget.tokens import _registry as estimators
from leanloop.localmodel import ServerOptions, running_server

CTX_SIZE = 8192


async def _measure(modes: list[str], limit: int | None) -> list[tuple[str, str, int, int, int]]:
    rows: list[tuple[str, str, int, int, int]] = []
    with tempfile.TemporaryDirectory(prefix="estimate-") as folder:
        workspace = write_workspace(Path(folder) / "workspace")
        for mode in modes:
            estimators.clear()  # each mode learns from nothing, as a new process would
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
                        if est and got:
                            rows.append((mode, task.key, number, est, got))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", choices=["native", "text"], default=["native"])
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    started = time.perf_counter()
    rows = asyncio.run(_measure(args.modes, args.limit))
    print("| mode | task | request | estimated | server counted | estimate / count |")
    print("|---|---|---:|---:|---:|---:|")
    for mode, key, number, est, got in rows:
        print(f"| {mode} | {key} | {number} | {est:,} | {got:,} | {est / got:.3f} |")
    if not rows:
        print("no request was counted by the server")
        return 1
    worst = max(rows, key=lambda r: abs(r[3] / r[4] - 1))
    off = worst[3] / worst[4] - 1
    within = sum(abs(r[3] / r[4] - 1) <= 0.10 for r in rows)
    print(
        f"\n{len(rows)} requests; {within} within 10%; worst {worst[3] / worst[4]:.3f} "
        f"({off:+.1%}, {worst[0]} {worst[1]} request {worst[2]}); "
        f"{time.perf_counter() - started:.0f} s"
    )
    return 0 if within == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
