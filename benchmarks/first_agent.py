"""The first agent on the embedded 0.5B model: ten one-file questions, asked as a newcomer asks.

Usage (the embedded server running on its default port, ``leanloop local start``)::

    python benchmarks/first_agent.py [--lock /tmp/leanloop-model.lock] [--only bio,sales]
        [--leanloop .venv/bin/leanloop] [--keep DIR] [--timeout 180] [--json runs.json]

It writes the agents file of the README's first example (an ``openai-compatible`` model
``local-test`` at ``http://127.0.0.1:8765/v1``, temperature 0; one agent ``reader`` with
``read_file``, ``search`` and ``list_files`` over ``./data``, ``max_rounds: 20``) and a
workspace of ten small files (a biography, a TOML config, a changelog, a CSV, meeting
notes, a recipe, a JSON inventory, a to-do list, a log, an on-call rota) into a
temporary folder (``--keep DIR``: into ``DIR``, kept). Then, one at a time, it runs
``leanloop run agents.yaml --json "QUESTION"`` for each file's question — the command a
newcomer types — and prints one table row per run: the exit code, the stop reason, the
seconds the process took, whether the answer holds the file's fact, and the calls the
model made (``step·name(args)``, prefetched reads at step 0).

``--lock PATH`` holds an exclusive ``flock`` on ``PATH`` for each ``leanloop run`` (the
convention of a machine shared with others who take timings: ``flock PATH COMMAND``);
the seconds start once the lock is held, so waiting for it is not counted. Acceptance
(issue 25, item 6): exit 0 in at least 9 of the 10 runs, each in under 30 s.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AGENTS_YAML = """\
version: 1
models:
  local:
    provider: openai-compatible
    model: local-test
    base_url: http://127.0.0.1:8765/v1
    api_key: ${LOCAL_API_KEY:-none}
    temperature: 0
    kwargs: {max_retries: 2}
agents:
  reader:
    description: Answers questions about a workspace.
    model: local
    system_prompt: You answer questions about the files in the workspace.
    tools: [read_file, search, list_files]
    workspace: ./data
    max_rounds: ${ROUNDS:-20}
"""


@dataclass(frozen=True)
class Case:
    """One file of the workspace, the question about it and the fact its answer holds."""

    key: str
    path: str
    content: str
    question: str
    expect: tuple[str, ...]
    """Any of these in the answer (case-insensitive) counts as the fact."""


CASES = (
    Case(
        "bio",
        "bio.txt",
        "Ada Lovelace (1815-1852) was an English mathematician and writer.\n"
        "She is known for her work on Charles Babbage's proposed mechanical general-purpose "
        "computer, the Analytical Engine.\n"
        "In 1843 she published the first algorithm intended to be carried out by such a "
        "machine, and is often regarded as the first computer programmer.\n"
        "She was the only legitimate child of the poet Lord Byron.\n",
        "Who is described in bio.txt and what did she do?",
        ("Lovelace",),
    ),
    Case(
        "config",
        "service.toml",
        '# Payments service configuration\n[server]\nhost = "0.0.0.0"\nport = 7431\n'
        'workers = 6\n\n[database]\nurl = "postgres://db.internal:5432/payments"\n'
        'timeout_seconds = 45\n\n[owner]\nteam = "payments-team"\n',
        "Which port does service.toml set for the server?",
        ("7431",),
    ),
    Case(
        "changelog",
        "CHANGELOG.md",
        "# Changelog\n\n## 1.3.0 - 2026-10-02\n- Added CSV export of invoices.\n"
        "- Fixed a crash when the cart was empty.\n\n## 1.2.0 - 2026-08-14\n"
        "- Added dark mode to the dashboard.\n- Dropped support for Python 3.8.\n\n"
        "## 1.1.0 - 2026-05-30\n- First public release.\n",
        "What was added in version 1.2.0 according to CHANGELOG.md?",
        ("dark mode",),
    ),
    Case(
        "csv",
        "sales.csv",
        "region,quarter,revenue_eur\nNorth,Q1,120000\nSouth,Q1,95000\nEast,Q1,143000\n"
        "West,Q1,87000\n",
        "Which region had the highest revenue in sales.csv?",
        ("East",),
    ),
    Case(
        "meeting",
        "meeting.md",
        "# Kick-off meeting, 3 March\n\nPresent: Maria Chen (project lead), Tom Okafor, "
        "Lena Fischer.\n\nDecisions:\n- The project is called Bluebird.\n"
        "- Maria Chen leads the project; Tom Okafor owns the backend.\n"
        "- The first milestone is due on 15 April.\n",
        "Who leads the project according to meeting.md?",
        ("Maria Chen",),
    ),
    Case(
        "recipe",
        "recipe.txt",
        "Country bread\nMix 500 g flour, 350 g water, 10 g salt and 5 g yeast.\n"
        "Let the dough rise for 3 hours.\nBake at 230 degrees Celsius for 40 minutes.\n",
        "How long does the bread bake according to recipe.txt?",
        ("40",),
    ),
    Case(
        "json",
        "inventory.json",
        '{\n  "warehouse": "Lyon-2",\n  "items": [\n    {"name": "laptop", "count": 42},\n'
        '    {"name": "monitor", "count": 17},\n    {"name": "keyboard", "count": 120}\n'
        "  ]\n}\n",
        "How many laptops are in inventory.json?",
        ("42",),
    ),
    Case(
        "todo",
        "todo.md",
        "# To do\n1. Renew the TLS certificate before 20 December.\n"
        "2. Move the backups to the new bucket.\n3. Write the onboarding guide.\n",
        "What is the first task in todo.md?",
        ("TLS",),
    ),
    Case(
        "log",
        "server.log",
        "2026-11-30 08:00:01 INFO server started on port 7431\n"
        "2026-11-30 08:05:12 INFO 200 GET /health\n"
        "2026-11-30 08:07:44 ERROR database connection refused: db.internal:5432\n"
        "2026-11-30 08:07:45 INFO retrying in 5 s\n",
        "What error does server.log report?",
        ("connection refused",),
    ),
    Case(
        "oncall",
        "oncall.txt",
        "On-call rota, week 49\nPrimary: Priya Natarajan (phone 555-0142)\n"
        "Secondary: Jonas Berg\nEscalation: the infrastructure team channel #infra-oncall\n",
        "Who is the primary on-call engineer in oncall.txt?",
        ("Priya",),
    ),
)


@dataclass
class Outcome:
    """One ``leanloop run`` of one case."""

    case: Case
    exit_code: int
    seconds: float
    stop_reason: str
    answer: str
    calls: list[str]
    error: str = ""

    @property
    def correct(self) -> bool:
        return any(word.lower() in self.answer.lower() for word in self.case.expect)


def write_project(folder: Path) -> Path:
    """Write the agents file and the workspace into ``folder``; return the agents file."""
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        (data / case.path).write_text(case.content, encoding="utf-8")
    agents = folder / "agents.yaml"
    agents.write_text(AGENTS_YAML, encoding="utf-8")
    return agents


@contextlib.contextmanager
def held(lock: str | None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock`` (nothing when ``None``) while the block runs."""
    if lock is None:
        yield
        return
    with open(lock, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_case(
    case: Case, agents: Path, *, leanloop: str, lock: str | None, timeout: float
) -> Outcome:
    """Run ``leanloop run agents.yaml --json QUESTION`` once and read its report."""
    command = [leanloop, "run", str(agents), "--json", case.question]
    with held(lock):
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            seconds = time.perf_counter() - started
            return Outcome(case, 124, seconds, "timeout", "", [], f"killed after {timeout:g} s")
        seconds = time.perf_counter() - started
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        report = {"error": (done.stderr.strip().splitlines() or ["no report"])[-1]}
    calls = [
        f"{c.get('step')}·{c.get('name')}({_args(c.get('args') or {})})"
        + (" [repeat]" if c.get("repeated") else "")
        + (f" [repaired from {c['repaired_from']}]" if c.get("repaired_from") else "")
        + ("" if c.get("ok", True) else " [failed]")
        for c in report.get("tool_calls", [])
    ]
    # A report's elapsed_s leaves out the process start; the table shows the process.
    return Outcome(
        case,
        done.returncode,
        seconds,
        str(report.get("stop_reason", "?")),
        str(report.get("answer") or ""),
        calls,
        str(report.get("error") or ""),
    )


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def table(outcomes: list[Outcome]) -> str:
    """The runs as a Markdown table, with a summary line."""
    lines = [
        "| file | exit | stop | s | fact in answer | calls (step·call) |",
        "|---|---:|---|---:|---|---|",
    ]
    for o in outcomes:
        calls = "; ".join(o.calls) or "–"
        stop = o.stop_reason + (f" ({o.error[:80]})" if o.error else "")
        fact = "yes" if o.correct else "no"
        lines.append(
            f"| {o.case.path} | {o.exit_code} | {stop} | {o.seconds:.1f} | {fact} | {calls} |"
        )
    answered = sum(o.exit_code == 0 for o in outcomes)
    fast = sum(o.exit_code == 0 and o.seconds < 30 for o in outcomes)
    correct = sum(o.correct for o in outcomes)
    worst = max((o.seconds for o in outcomes), default=0.0)
    lines.append("")
    lines.append(
        f"exit 0: {answered}/{len(outcomes)} · exit 0 in under 30 s: {fast}/{len(outcomes)} "
        f"· fact in answer: {correct}/{len(outcomes)} · slowest: {worst:.1f} s"
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--leanloop", default=shutil.which("leanloop") or "leanloop")
    parser.add_argument("--lock", default=None, help="hold flock PATH for each leanloop run")
    parser.add_argument("--only", default="", help="comma-separated case keys (bio, csv, …)")
    parser.add_argument("--keep", type=Path, default=None, help="write the project here")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per run")
    parser.add_argument("--json", type=Path, default=None, help="also write the runs here")
    args = parser.parse_args()
    wanted = {k.strip() for k in args.only.split(",") if k.strip()}
    cases = [c for c in CASES if not wanted or c.key in wanted]
    with tempfile.TemporaryDirectory(prefix="first-agent-") as scratch:
        folder = args.keep or Path(scratch)
        agents = write_project(folder)
        outcomes = []
        for case in cases:
            outcome = run_case(
                case, agents, leanloop=args.leanloop, lock=args.lock, timeout=args.timeout
            )
            outcomes.append(outcome)
            print(
                f"{case.path}: exit {outcome.exit_code} · {outcome.stop_reason} · "
                f"{outcome.seconds:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    print(table(outcomes))
    if args.json is not None:
        rows = [
            {
                "file": o.case.path,
                "question": o.case.question,
                "exit": o.exit_code,
                "stop_reason": o.stop_reason,
                "seconds": round(o.seconds, 1),
                "fact_in_answer": o.correct,
                "answer": o.answer,
                "calls": o.calls,
                "error": o.error,
            }
            for o in outcomes
        ]
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
