"""What a session adds to a sub-agent's time: ``leanloop run`` with and without ``--session``.

Usage::

    python benchmarks/session_subagent_overhead.py [--rounds 3] [--delay 0.5]

A lead agent asks a researcher sub-agent, which reads a file and answers; the fake model
server (:class:`leanloop.testing.server.FakeModelServer`) answers each request after
``--delay`` seconds, standing in for a model's work, so each request costs the same known
time in both runs and what differs is what the session adds (its store writes) and what
the sub-run waits for. Each round runs the CLI without a session, then with
``--session`` (a new session ID each round), in fresh processes. The table gives the
medians of the sub-agent's time, the whole run's and the CLI process's; the target
(ADR 0022: a sub-run inside a turn does not wait for the turn) is the sub-agent's time
with a session within 10% of its time without. Exits 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from leanloop.testing.server import FakeModelServer, Reply

TARGET = 0.10
"""The largest relative change of the sub-agent's time that meets the target."""

AGENTS = """version: 1
models:
  m: {{provider: openai-compatible, model: scripted-model, base_url: "{base_url}",
      api_key: none, temperature: 0, context_window: 8192, max_retries: 0}}
agents:
  lead:
    model: m
    system_prompt: You lead. Ask the researcher.
    tools: ["agent:researcher"]
    tool_timeout: 3
  researcher:
    model: m
    system_prompt: You research in the notes.
    tools: [read_file]
    workspace: ./ws
"""

WITHOUT, WITH = "without a session", "with --session"


def _script(delay: float) -> list[Reply]:
    calls = [
        {"name": "researcher", "arguments": {"task": "find the port"}},
        {"name": "read_file", "arguments": {"path": "notes.txt"}},
    ]
    return [
        Reply(tool_calls=[calls[0]], delay=delay),
        Reply(tool_calls=[calls[1]], delay=delay),
        Reply(content="The port is 8931.", delay=delay),
        Reply(content="Port 8931.", delay=delay),
    ]


def _run(
    folder: Path, server: FakeModelServer, delay: float, extra: list[str]
) -> tuple[float, float, float]:
    """One CLI run: the sub-agent's seconds, the whole run's, the CLI process's."""
    server.queue(*_script(delay))
    argv = [sys.executable, "-m", "leanloop", "run", "agents.yaml", "What port?"]
    started = time.perf_counter()
    done = subprocess.run(
        [*argv, "--agent", "lead", "--json", *extra],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0 or server.remaining():
        msg = f"the run failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        raise SystemExit(msg)
    report = json.loads(done.stdout)
    (call,) = report["tool_calls"]
    return float(call["sub_report"]["elapsed_s"]), float(report["elapsed_s"]), wall


def measure(rounds: int, delay: float) -> dict[str, list[tuple[float, float, float]]]:
    """The figures of each run, ``rounds`` of each, interleaved."""
    figures: dict[str, list[tuple[float, float, float]]] = {WITHOUT: [], WITH: []}
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeModelServer(n_ctx=8192, tokenizer=None, template=None) as server,
    ):
        folder = Path(tmp)
        (folder / "ws").mkdir()
        (folder / "ws" / "notes.txt").write_text("port=8931\n", encoding="utf-8")
        (folder / "agents.yaml").write_text(
            AGENTS.format(base_url=server.base_url), encoding="utf-8"
        )
        for n in range(rounds):
            # Interleaved, so that a busy machine slows both alike.
            figures[WITHOUT].append(_run(folder, server, delay, []))
            figures[WITH].append(_run(folder, server, delay, ["--session", f"t{n}"]))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds before each answer")
    args = parser.parse_args()
    figures = measure(args.rounds, args.delay)
    medians = {
        label: [statistics.median(run[i] for run in runs) for i in range(3)]
        for label, runs in figures.items()
    }
    print(f"| run | sub-agent (s) | whole run (s) | CLI process (s) |  ({args.rounds} rounds,")
    print(f"|---|---:|---:|---:|  {args.delay} s a request)")
    for label, (sub, whole, wall) in medians.items():
        print(f"| {label} | {sub:.3f} | {whole:.3f} | {wall:.2f} |")
    change = (medians[WITH][0] - medians[WITHOUT][0]) / medians[WITHOUT][0]
    met = abs(change) <= TARGET
    verdict = "met" if met else "MISSED"
    print(f"\nthe sub-agent's time {WITH}: {change:+.1%} (target within {TARGET:.0%}): {verdict}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
