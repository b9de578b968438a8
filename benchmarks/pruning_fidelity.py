"""Pruning fidelity on the real embedded models: the lines that answer, kept, every time.

``python -m benchmarks.pruning_fidelity [--models qwen2.5-coder-0.5b qwen2.5-coder-1.5b]``
(needs ``leanloop local setup`` for each model). For every case of
:mod:`benchmarks.fidelity_cases` it runs an agent whose main model is scripted: it calls
``read_file`` on the case's file with the case's focus as ``output_prune_context`` and no
``limit`` (so the call reads the whole file and goes through the pruning pass), then
answers. The pruning model is the real llama-server at ``--ctx-size 4096``. What is
measured is the tool message the main model got:

- *kept*: answering lines found verbatim, as whole lines, under their own line numbers;
- *near*: named-line misses, an answering line lost while a line one or two away was kept;
- *chars*: characters of the tool message;
- requests, prompt tokens the server evaluated and took from its cache, and seconds.

The held-out cases (written before the pass was changed) are reported apart from the
tuning cases, and the second held-out set (:mod:`benchmarks.fidelity_cases_round2`, written
on 2026-12-07 once the first had been looked at while tuning) apart from both, as
``held out 2``, and the third tuning set (:mod:`benchmarks.fidelity_cases_round3`, new
shapes) as ``tuning 3``; ``--set`` picks one set (``all``: every case). ``--list`` prints
each case's name, set, kind, focus kind, size and answering line numbers without starting a
model.
``--json FILE`` writes every figure; ``--out FILE`` the Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import yaml
from langchain_core.messages import BaseMessage

from benchmarks.fidelity_cases import CASES, Case, check_case
from benchmarks.fidelity_cases_round2 import CASES_ROUND2, check_round2
from benchmarks.fidelity_cases_round3 import CASES_ROUND3, check_round3
from benchmarks.local_server import free_port
from leanloop.agent import LLMAgent
from leanloop.events import EventRecorder
from leanloop.localmodel import cache_paths, model_pin
from leanloop.localmodel.server import ServerOptions, running_server

__all__ = ["CaseResult", "RequestLog", "main", "run_case"]

WINDOW = 4_096
_NUMBERED = re.compile(r"^\s*(\d+)\| ")
_ROUND2 = frozenset(case.name for case in CASES_ROUND2)
_ROUND3 = frozenset(case.name for case in CASES_ROUND3)
# --set's choices and the label each set has in the tables, in the summary's order.
_SETS = {
    "tuning": "tuning",
    "held-out": "held out",
    "held-out-2": "held out 2",
    "tuning-3": "tuning 3",
}


def _set_of(name: str, held_out: bool) -> str:
    """The ``--set`` choice of a case (by its name and ``held_out`` flag)."""
    if name in _ROUND2:
        return "held-out-2"
    if name in _ROUND3:
        return "tuning-3"
    return "held-out" if held_out else "tuning"


@dataclass
class CaseResult:
    """What one case's pass kept and cost."""

    model: str
    case: str
    held_out: bool
    focus_kind: str
    answers: int
    kept: int
    near: int
    chars_raw: int
    chars: int
    pruned: bool
    requests: int
    prompt_tokens: int
    evaluated: int | None
    cached: int | None
    seconds: float
    note: str


def _row(result: CaseResult) -> dict[str, Any]:
    """A result for ``--json``: the rows of the second held-out set and of the third tuning
    set also name their set."""
    row = asdict(result)
    if result.case in _ROUND2 | _ROUND3:
        row["set"] = _SETS[_set_of(result.case, result.held_out)]
    return row


class RequestLog(EventRecorder):
    """Every chat request's run name and messages, and leanloop's events, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str | None, list[BaseMessage]]] = []

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        for batch in messages:
            self.requests.append((kwargs.get("name"), list(batch)))


def _agents_file(folder: Path, case: Case, base_url: str, model: str, deadline: float) -> Path:
    call = {"name": "read_file", "args": {"path": case.path, "output_prune_context": case.focus}}
    document = {
        "version": 1,
        "models": {
            "main": {
                "class": "leanloop.testing:ScriptedChatModel",
                "kwargs": {"replies": [{"tool_calls": [call]}, "done"]},
            },
            "pruner": {
                "provider": "openai-compatible",
                "model": model,
                "base_url": base_url,
                "api_key": "none",
                "temperature": 0,
                "max_tokens": 256,
                "timeout": 900,
            },
        },
        "agents": {
            "reader": {
                "model": "main",
                "system_prompt": "You answer questions about the files in the workspace.",
                "tools": ["read_file", "list_files", "search"],
                "workspace": "./workspace",
                "max_rounds": 3,
                "allow_tool_output_pruning": True,
                "pruning_model": "pruner",
                "pruning_timeout": 300.0,
                "pruning_concurrency": 1,
                "pruning_deadline": float(deadline),
            },
        },
    }
    target = folder / "workspace" / case.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(case.text, encoding="utf-8")
    path = folder / "agents.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def score(case: Case, message: str) -> tuple[int, int]:
    """``(kept, near)``: answering lines kept whole under their own numbers, and answering
    lines lost while a line one or two away was kept (the named line's neighbour)."""
    shown: dict[int, str] = {}
    for line in message.split("\n"):
        found = _NUMBERED.match(line)
        if found is not None:
            shown[int(found[1])] = line[found.end() :]
    kept = near = 0
    for index in case.answers:
        number = index + 1
        if shown.get(number) == case.lines[index]:
            kept += 1
        elif any(number + d in shown for d in (-2, -1, 1, 2)):
            near += 1
    return kept, near


async def run_case(case: Case, base_url: str, model: str, *, deadline: float) -> CaseResult:
    """Run one case against the pruning server at ``base_url``."""
    with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp:
        agents = _agents_file(Path(tmp), case, base_url, model, deadline)
        agent = LLMAgent.from_file(agents)
        recorder = RequestLog()
        started = time.perf_counter()
        reply = await agent.ainvoke("What does the file say?", {"callbacks": [recorder]})
        seconds = time.perf_counter() - started
    main = [messages for name, messages in recorder.requests if name != "leanloop.prune"]
    tools = [m for m in main[-1] if m.type == "tool"] if main else []
    message = str(tools[0].content) if tools else ""
    report = dict(reply.response_metadata.get("leanloop", {}))
    extraction = report.get("extraction") or {}
    pruned = recorder.named("leanloop.pruned")
    event = pruned[0] if pruned else {}
    kept, near = score(case, message)
    note = ""
    if event.get("fallback"):
        note = f"fallback: {event['fallback']}"
    elif not event.get("pruned", bool(pruned)):
        note = "not pruned"
    return CaseResult(
        model=model,
        case=case.name,
        held_out=case.held_out,
        focus_kind=case.focus_kind,
        answers=len(case.answers),
        kept=kept,
        near=near,
        chars_raw=int(event.get("chars_raw") or len(case.text)),
        chars=len(message),
        pruned=bool(pruned) and not event.get("fallback"),
        requests=int(extraction.get("requests") or 0),
        prompt_tokens=int(extraction.get("prompt_tokens") or 0),
        evaluated=extraction.get("prompt_evaluated"),
        cached=extraction.get("prompt_cached"),
        seconds=round(seconds, 1),
        note=note,
    )


@contextlib.contextmanager
def _server(model: str) -> Iterator[str]:
    pin = model_pin(model)
    options = ServerOptions(
        port=free_port(),
        ctx_size=WINDOW,
        model=cache_paths().model_path(pin.filename),
        detached=False,
    )
    with running_server(options) as server:
        yield server.openai_url


def _table(results: Sequence[CaseResult]) -> str:
    rows = [
        "| model | case | set | focus | kept | near | chars | requests "
        "| prompt eval / cached | s |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        tokens = f"{r.evaluated if r.evaluated is not None else r.prompt_tokens} / {r.cached or 0}"
        rows.append(
            f"| {r.model} | {r.case} | {_SETS[_set_of(r.case, r.held_out)]} | "
            f"{r.focus_kind} | {r.kept}/{r.answers} | {r.near} | {r.chars:,} | {r.requests} | "
            f"{tokens} | {r.seconds:.1f}{' (' + r.note + ')' if r.note else ''} |"
        )
    return "\n".join(rows)


def _summary(results: Sequence[CaseResult]) -> str:
    rows = [
        "| model | cases | kept (all) | kept (shared words) | kept (own words) | near | "
        "median chars | median s | max s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model in dict.fromkeys(r.model for r in results):
        for choice, label in (*_SETS.items(), ("all", "all")):
            group = [
                r
                for r in results
                if r.model == model and choice in ("all", _set_of(r.case, r.held_out))
            ]
            if not group:
                continue

            def share(rs: Sequence[CaseResult]) -> str:
                total = sum(r.answers for r in rs)
                got = sum(r.kept for r in rs)
                return f"{got}/{total} ({100 * got / total:.0f}%)" if total else "-"

            rows.append(
                f"| {model} | {label} ({len(group)}) | {share(group)} | "
                f"{share([r for r in group if r.focus_kind == 'shared'])} | "
                f"{share([r for r in group if r.focus_kind == 'own'])} | "
                f"{sum(r.near for r in group)} | "
                f"{statistics.median(r.chars for r in group):,.0f} | "
                f"{statistics.median(r.seconds for r in group):.1f} | "
                f"{max(r.seconds for r in group):.1f} |"
            )
    return "\n".join(rows)


def _listing(cases: Sequence[Case]) -> str:
    """The cases as a table: name, set, kind, focus kind, size, answering line numbers."""
    rows = [
        "| case | set | kind | focus | chars | answering lines |",
        "|---|---|---|---|---:|---|",
    ]
    for c in cases:
        numbers = ", ".join(str(n) for n in c.answer_numbers)
        rows.append(
            f"| {c.name} | {_SETS[_set_of(c.name, c.held_out)]} | {c.kind} | {c.focus_kind} | "
            f"{len(c.text):,} | {numbers} |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cases on each model and print the tables; exit 1 when a case is unsound."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["qwen2.5-coder-0.5b"])
    parser.add_argument("--set", choices=("all", *sorted(_SETS)), default="all")
    parser.add_argument("--cases", nargs="*", help="only these cases (by name)")
    parser.add_argument("--deadline", type=float, default=240.0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument(
        "--list", action="store_true", help="print the cases and their answering lines; run nothing"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.verbose:
        logging.getLogger("leanloop.pruning").setLevel(logging.DEBUG)
    problems = [p for case in CASES for p in check_case(case)]
    problems += [p for case in CASES_ROUND2 for p in check_round2(case)]
    problems += [p for case in CASES_ROUND3 for p in check_round3(case)]
    names = [case.name for case in (*CASES, *CASES_ROUND2, *CASES_ROUND3)]
    problems += [
        f"{name}: two cases of that name" for name in sorted(set(names)) if names.count(name) > 1
    ]
    if problems:
        print("unsound cases:\n" + "\n".join(problems), file=sys.stderr)
        return 1
    cases = [
        c
        for c in (*CASES, *CASES_ROUND2, *CASES_ROUND3)
        if args.set in ("all", _set_of(c.name, c.held_out))
        and (not args.cases or c.name in args.cases)
    ]
    if args.list:
        print(_listing(cases))
        return 0
    results: list[CaseResult] = []
    loop = asyncio.new_event_loop()  # one loop: the OpenAI client is cached per base URL
    try:
        for model in args.models:
            with _server(model) as url:
                for case in cases:
                    result = loop.run_until_complete(
                        run_case(case, url, model, deadline=args.deadline)
                    )
                    results.append(result)
                    print(_table([result]).split("\n")[-1], flush=True)
                    if args.json is not None:
                        args.json.write_text(json.dumps([_row(r) for r in results], indent=1))
    finally:
        loop.close()
    text = f"{_table(results)}\n\n{_summary(results)}\n"
    print("\n" + text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
