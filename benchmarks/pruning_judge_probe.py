"""Probe: can the pruning model rank candidate lines by a one-token yes/no judgement?

A variant of issue 36 tried on ``tuning-3`` and rejected before it reached the pass: each
candidate line (the rare kinds of line and the lines closest in meaning, as the kinds
request would show them, plus the best word hits) is sent alone with the focus, the
model answers one token, and the line's score is ``log P(yes) - log P(no)`` from the
server's ``logprobs``. A model that could judge one line at a time would not need to
name lines at all. Prints each case's candidate count, the ranks of its answering lines
among the candidates (``None``: not a candidate) and the seconds::

    python -m benchmarks.pruning_judge_probe --server http://127.0.0.1:8080/v1 --set tuning-3

Figures: ``benchmarks/results/pruning_fidelity.md`` ("Round 3 tuning").
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence

import httpx

from benchmarks.fidelity_cases import CASES, Case
from benchmarks.fidelity_cases_round3 import CASES_ROUND3
from leanloop.pruning.meaning import meaning_scores
from leanloop.pruning.rank import focus_of, line_scores
from leanloop.pruning.shapes import candidates

_SETS: dict[str, tuple[Case, ...]] = {
    "tuning-3": CASES_ROUND3,
    "tuning": tuple(case for case in CASES if not case.held_out),
}
_SYSTEM = (
    "You judge whether a line of a tool's output helps answer a question. "
    "Reply with one word: yes or no."
)
# What a candidate pool holds besides the kinds of line (as the kinds request shows them).
_BY_MEANING = 15
_BY_WORDS = 10
_PER_KIND = 2
_LINE_CHARS = 300
_ABSENT = -20.0


def candidate_lines(lines: Sequence[str], focus: str, *, kinds: int) -> list[int]:
    """The 0-based lines the probe judges: kinds of line, closest in meaning, word hits."""
    count = len(lines)
    words = line_scores(list(lines), focus_of(focus))
    similar = meaning_scores(focus, list(lines)) or [0.0] * count
    picked: dict[int, None] = {}
    for shape in candidates(list(lines), [0.0] * count, max_shapes=kinds, similar=similar):
        picked.update(dict.fromkeys(shape.lines[:_PER_KIND]))
    picked.update(dict.fromkeys(sorted(range(count), key=lambda i: -similar[i])[:_BY_MEANING]))
    best = sorted(range(count), key=lambda i: -words[i])[:_BY_WORDS]
    picked.update(dict.fromkeys(i for i in best if words[i] > 0))
    return [i for i in picked if lines[i].strip()]


async def judge(client: httpx.AsyncClient, server: str, focus: str, line: str) -> float:
    """``log P(yes) - log P(no)`` of the model's one-token answer about ``line``."""
    reply = await client.post(
        f"{server}/chat/completions",
        json={
            "model": "local",
            "messages": [
                {"role": "system", "content": _SYSTEM},
                {
                    "role": "user",
                    "content": f"Question: {focus}\n\nLine: {line[:_LINE_CHARS]}\n\n"
                    "Does this line help answer the question?",
                },
            ],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": 10,
        },
    )
    reply.raise_for_status()
    top = reply.json()["choices"][0]["logprobs"]["content"][0]["top_logprobs"]

    def best(word: str) -> float:
        return max(
            (float(t["logprob"]) for t in top if t["token"].strip().lower() == word),
            default=_ABSENT,
        )

    return best("yes") - best("no")


async def probe(server: str, cases: Sequence[Case], *, kinds: int) -> list[str]:
    """One table row per case."""
    rows = ["| case | focus | candidates | answer ranks | s |", "|---|---|---:|---|---:|"]
    async with httpx.AsyncClient(timeout=120) as client:
        for case in cases:
            started = time.monotonic()
            pool = candidate_lines(case.lines, case.focus, kinds=kinds)
            scored = [(await judge(client, server, case.focus, case.lines[i]), i) for i in pool]
            order = [i for _, i in sorted(scored, key=lambda pair: -pair[0])]
            ranks = [order.index(a) + 1 if a in order else None for a in case.answers]
            seconds = time.monotonic() - started
            rows.append(
                f"| {case.name} | {case.focus_kind} | {len(pool)} | {ranks} | {seconds:.1f} |"
            )
            print(rows[-1], flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probe against a running OpenAI-compatible server that returns logprobs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True, help="the server's /v1 URL")
    parser.add_argument("--set", choices=sorted(_SETS), default="tuning-3")
    parser.add_argument("--kinds", type=int, default=40, help="kinds of line in the pool")
    args = parser.parse_args(argv)
    asyncio.run(probe(args.server.rstrip("/"), _SETS[args.set], kinds=args.kinds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
