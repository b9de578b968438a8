"""What the answer check buys, step by step, on recorded first-agent answers.

Usage::

    python -m benchmarks.grounding_recheck [--runs benchmarks/results/first_agent_after.json]
        [--models qwen2.5-coder-0.5b qwen2.5-coder-1.5b] [--server URL] [--json out.json]

It replays the answers a first-agent benchmark recorded (``benchmarks/first_agent.py
--json``): for each run that ended with an answer after reading only whole files with
``read_file``, it rebuilds what those calls returned (the files are in
``first_agent_cases.py``), runs :func:`leanloop.grounding.check_answer` (step 1: the
check, no model), and, where the check doubts the answer, sends
:func:`leanloop.grounding.recheck_prompt`'s one request to the real embedded model and
settles (step 2). Each answer is judged before and after with the benchmark's own scorer.
The answers are the recorded model's; ``--models`` names the models that are asked again.
Per model and set (tuning, held out; reported apart), it prints: answers checked, flagged,
flagged that were right (false doubts), fixed (wrong → correct or honest not found),
broken (correct → not), the median seconds of the extra request.

Runs that used ``search`` or ``list_files`` are left out: their results are not recorded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from benchmarks.first_agent import model_server
from benchmarks.first_agent_cases import CASES, FILES, Case
from benchmarks.first_agent_score import classify
from leanloop.grounding import check_answer, recheck_prompt, settle, source_lines

__all__ = ["main"]

_GOOD = frozenset({"correct", "not-found"})
_READ = "read_file(path="


@dataclass
class Replay:
    """One recorded answer, checked and maybe asked again."""

    model: str
    channel: str
    case: str
    held_out: bool
    before: str
    after: str
    flagged: bool
    why: str
    answer: str
    second: str = ""
    taken: bool = False
    seconds: float = 0.0


def numbered(text: str) -> str:
    """``text`` as ``read_file`` returns a whole small file."""
    lines = text.splitlines()
    body = [f"{number:>5}| {line}" for number, line in enumerate(lines, 1)]
    return "\n".join([*body, f"[lines 1-{len(lines)} of {len(lines)}; end of file]"])


def read_files(calls: Sequence[str]) -> list[str] | None:
    """The files the run's calls read whole, or ``None`` when it called anything else."""
    files: list[str] = []
    for call in calls:
        _, _, text = call.partition("·")
        if not text.startswith(_READ) or "offset" in text or "limit" in text:
            return None
        name = text[len(_READ) :].split(")", 1)[0]
        if name not in FILES:
            return None
        if name not in files:
            files.append(name)
    return files or None


def replay(model: Any, name: str, run: dict[str, Any], case: Case) -> Replay | None:
    """Check one recorded run's answer and, when doubtful, ask the model again."""
    files = read_files(run["calls"])
    if files is None or run["stop_reason"] != "answer" or not run["answer"]:
        return None
    lines = source_lines([(file, numbered(FILES[file])) for file in files])
    before, _ = classify(case, run["answer"], run["stop_reason"])
    first = check_answer(case.question, run["answer"], lines)
    result = Replay(
        name,
        run["channel"],
        case.key,
        case.held_out,
        before,
        before,
        first.doubtful,
        first.summary(),
        run["answer"],
    )
    request = recheck_prompt(case.question, first, lines) if first.doubtful else None
    if request is None:
        return result
    started = time.perf_counter()
    reply = model.invoke([HumanMessage(request)])
    result.seconds = time.perf_counter() - started
    result.second = str(reply.content)
    result.taken = settle(first, check_answer(case.question, result.second, lines))
    if result.taken:
        result.after, _ = classify(case, result.second, "answer")
    return result


def table(rows: Sequence[Replay]) -> str:
    """Per model and set: what the check flagged and what asking again changed."""
    out = [
        "| model | set | checked | flagged | false doubts | fixed | broken | taken | "
        "good before | good after | median s (extra request) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model in dict.fromkeys(row.model for row in rows):
        for held_out in (False, True):
            part = [r for r in rows if r.model == model and r.held_out == held_out]
            if not part:
                continue
            flagged = [r for r in part if r.flagged]
            seconds = [r.seconds for r in flagged if r.seconds]
            out.append(
                f"| {model} | {'held out' if held_out else 'tuning'} | {len(part)} | "
                f"{len(flagged)} | {sum(r.before in _GOOD for r in flagged)} | "
                f"{sum(r.before not in _GOOD and r.after in _GOOD for r in part)} | "
                f"{sum(r.before in _GOOD and r.after not in _GOOD for r in part)} | "
                f"{sum(r.taken for r in part)} | {sum(r.before in _GOOD for r in part)} | "
                f"{sum(r.after in _GOOD for r in part)} | "
                f"{statistics.median(seconds) if seconds else 0:.1f} |"
            )
    return "\n".join(out)


def details(rows: Sequence[Replay]) -> str:
    """Every flagged answer: what the check said, the second answer, the verdicts."""
    out = ["| model | channel | case | set | check | second answer | taken | before → after |"]
    out.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r.flagged:
            second = r.second.replace("\n", " ").replace("|", "/")[:90]
            out.append(
                f"| {r.model} | {r.channel} | {r.case} | {'held out' if r.held_out else 'tuning'}"
                f" | {r.why[:90]} | {second} | {'yes' if r.taken else 'no'} | "
                f"{r.before} → {r.after} |"
            )
    return "\n".join(out)


@contextmanager
def chat_model(model: str, server: str | None) -> Iterator[Any]:
    """A ``ChatOpenAI`` on the embedded server for ``model`` (started here unless given)."""
    with model_server(model, server) as url:
        yield ChatOpenAI(base_url=url, api_key="not-needed", model=model, temperature=0)


def main(argv: Sequence[str] | None = None) -> int:
    """Replay the recorded answers on each model and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="benchmarks/results/first_agent_after.json")
    parser.add_argument("--models", nargs="+", default=["qwen2.5-coder-0.5b"])
    parser.add_argument("--server", default=None, help="use this /v1 URL (one model)")
    parser.add_argument("--json", default=None, help="write every replay here")
    args = parser.parse_args(argv)
    recorded = json.loads(Path(args.runs).read_text(encoding="utf-8"))["runs"]
    cases = {case.key: case for case in CASES}
    rows: list[Replay] = []
    for name in args.models:
        with chat_model(name, args.server) as model:
            for run in recorded:
                done = replay(model, name, run, cases[run["case"]])
                if done is not None:
                    rows.append(done)
    print(table(rows))
    print()
    print(details(rows))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
