"""Loopback load test of ``leanloop serve``: concurrent streamed requests on a scripted model.

Usage::

    python benchmarks/serve_load.py [--requests 200] [--timeout 120]

It writes an agents file with one agent, ``echo``, whose scripted model answers
``Answer to <question>`` (the reply computed from the request, so every answer holds its
own request's nonce), starts ``python -m leanloop.serve`` on a free 127.0.0.1 port
(``--no-auth``, ``--max-concurrency`` the request count, so none is refused), and sends
``--requests`` streamed requests at once, each asking about a nonce of its own. It then
runs the same questions, as many at once, through the agent's ``ainvoke`` in this process.

Checks (exit 1 when one fails): every request answered 200, its stream ended with the
report and ``[DONE]``, with no error event (0 errors); every answer is exactly its own
request's (no cross-talk). It prints one table: p50 and p99 of the latency per request,
direct and through the server, and their ratios (the server's overhead, the HTTP
client's included). Everything is bounded by ``--timeout``; the server is stopped with
SIGTERM (killed if it lingers) whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

__all__ = ["LoadResult", "main", "run_load"]

_MODELS = '''
"""The scripted model of the load test: its reply is computed from the request."""

from langchain_core.messages import HumanMessage

from leanloop.testing import ScriptedChatModel


def answer(messages):
    question = [m.text for m in messages if isinstance(m, HumanMessage)][-1]
    return f"Answer to {question}"


class LoadChatModel(ScriptedChatModel):
    def __init__(self, **kwargs):
        super().__init__(**{"replies": [answer], "repeat_last": True, "report_usage": True,
                            **kwargs})
'''

_AGENTS = """version: 1
agents:
  echo:
    description: Answers with the question it was asked.
    model: {class: "load_models:LoadChatModel"}
"""


@dataclass
class LoadResult:
    """What one load run measured."""

    requests: int
    served: list[float] = field(default_factory=list)
    """Seconds per request through the server, answered ones only."""
    direct: list[float] = field(default_factory=list)
    """Seconds per ``ainvoke`` call in this process."""
    errors: list[str] = field(default_factory=list)
    crosstalk: list[str] = field(default_factory=list)
    wall_served: float = 0.0
    wall_direct: float = 0.0

    @property
    def ok(self) -> bool:
        """No error, no cross-talk, every request answered."""
        return not self.errors and not self.crosstalk and len(self.served) == self.requests

    def table(self) -> str:
        """The results as a Markdown table."""
        d50, d99 = _percentiles(self.direct)
        s50, s99 = _percentiles(self.served)
        rows = [
            f"requests: {self.requests} at once, streamed; errors: {len(self.errors)}; "
            f"cross-talk: {len(self.crosstalk)}",
            "",
            "| path | p50 ms | p99 ms | wall s |",
            "|---|---:|---:|---:|",
            f"| agent.ainvoke, direct | {d50 * 1e3:.1f} | {d99 * 1e3:.1f} | "
            f"{self.wall_direct:.2f} |",
            f"| leanloop serve, streamed | {s50 * 1e3:.1f} | {s99 * 1e3:.1f} | "
            f"{self.wall_served:.2f} |",
            f"| ratio (serve / direct) | {_ratio(s50, d50)} | {_ratio(s99, d99)} | "
            f"{_ratio(self.wall_served, self.wall_direct)} |",
        ]
        return "\n".join(rows)


def _percentiles(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 2:
        one = values[0] if values else float("nan")
        return one, one
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[98]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b > 0 else "n/a"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _server(folder: Path, requests: int, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m leanloop.serve`` on ``port``; SIGTERM on the way out, killed if it lingers."""
    log = (folder / "serve.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "leanloop.serve",
            str(folder / "agents.yaml"),
            "--port",
            str(port),
            "--no-auth",
            "--max-concurrency",
            str(requests),
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


async def _wait_healthy(root: str, process: subprocess.Popen[bytes], seconds: float) -> None:
    ends = time.monotonic() + seconds
    async with httpx.AsyncClient() as http:
        while time.monotonic() < ends:
            if process.poll() is not None:
                msg = f"leanloop serve exited {process.returncode}"
                raise RuntimeError(msg)
            with contextlib.suppress(httpx.TransportError):
                if (await http.get(f"{root}/healthz", timeout=2)).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    msg = f"leanloop serve did not answer /healthz within {seconds:g} s"
    raise RuntimeError(msg)


async def _one_streamed(http: httpx.AsyncClient, url: str, nonce: str, result: LoadResult) -> None:
    body = {
        "model": "echo",
        "stream": True,
        "messages": [{"role": "user", "content": f"nonce {nonce}"}],
    }
    started = time.perf_counter()
    texts: list[str] = []
    done = report = False
    try:
        async with http.stream("POST", url, json=body) as response:
            if response.status_code != 200:
                result.errors.append(f"{nonce}: status {response.status_code}")
                return
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue  # blank lines and progress comments
                data = line.removeprefix("data: ")
                if data == "[DONE]":
                    done = True
                    continue
                chunk = json.loads(data)
                if "error" in chunk:
                    result.errors.append(f"{nonce}: {chunk['error'].get('code')}")
                    return
                texts.extend(c["delta"].get("content") or "" for c in chunk["choices"])
                report = report or "leanloop" in chunk
    except httpx.HTTPError as exc:
        result.errors.append(f"{nonce}: {type(exc).__name__}: {exc}")
        return
    elapsed = time.perf_counter() - started
    if not (done and report):
        result.errors.append(f"{nonce}: the stream ended without the report or [DONE]")
        return
    answer = "".join(texts)
    if answer != f"Answer to nonce {nonce}":
        result.crosstalk.append(f"{nonce}: {answer!r}")
        return
    result.served.append(elapsed)


async def _served(result: LoadResult, root: str, nonces: list[str]) -> None:
    limits = httpx.Limits(max_connections=len(nonces), max_keepalive_connections=len(nonces))
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:
        started = time.perf_counter()
        await asyncio.gather(
            *(_one_streamed(http, f"{root}/v1/chat/completions", n, result) for n in nonces)
        )
        result.wall_served = time.perf_counter() - started


async def _direct(result: LoadResult, agents_file: Path, nonces: list[str]) -> None:
    from langchain_core.messages import HumanMessage  # noqa: PLC0415 - after the server started

    from leanloop.agent import load_agents  # noqa: PLC0415

    agent = load_agents(agents_file)["echo"]

    async def one(nonce: str) -> None:
        started = time.perf_counter()
        final = await agent.ainvoke([HumanMessage(content=f"nonce {nonce}")])
        elapsed = time.perf_counter() - started
        if final.text != f"Answer to nonce {nonce}":
            result.crosstalk.append(f"direct {nonce}: {final.text!r}")
        result.direct.append(elapsed)

    await one("warm-up")  # imports and first-call set-up are not the agent's latency
    result.direct.clear()
    started = time.perf_counter()
    await asyncio.gather(*(one(n) for n in nonces))
    result.wall_direct = time.perf_counter() - started


async def run_load(requests: int, *, limit_s: float = 120.0) -> LoadResult:
    """Start the server, send ``requests`` streamed requests at once, then time ``ainvoke``.

    Raises:
        TimeoutError: The whole run took longer than ``limit_s`` seconds.
        RuntimeError: The server did not start.
    """
    result = LoadResult(requests)
    nonces = [uuid.uuid4().hex for _ in range(requests)]
    with tempfile.TemporaryDirectory(prefix="leanloop-serve-load-") as tmp:
        folder = Path(tmp)
        (folder / "load_models.py").write_text(_MODELS)
        (folder / "agents.yaml").write_text(_AGENTS)
        port = _free_port()
        root = f"http://127.0.0.1:{port}"
        async with asyncio.timeout(limit_s):
            with _server(folder, requests, port) as process:
                try:
                    await _wait_healthy(root, process, seconds=60)
                    await _served(result, root, nonces)
                except RuntimeError as exc:
                    log = (folder / "serve.log").read_text(errors="replace")
                    raise RuntimeError(f"{exc}:\n{log}") from None
            await _direct(result, folder / "agents.yaml", nonces)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Run the load test; print the table; 0 when every check passed, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=200, help="requests at once (200)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for it all (120)")
    args = parser.parse_args(argv)
    if args.requests < 1:
        parser.error("--requests must be at least 1")
    result = asyncio.run(run_load(args.requests, limit_s=args.timeout))
    print(result.table())
    for problem in [*result.errors, *result.crosstalk][:10]:
        print(f"  {problem}", file=sys.stderr)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
