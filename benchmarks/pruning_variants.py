"""Variants of the pruning pass tried on the tuning sets and rejected (issue 36), kept runnable.

Each variant patches one rule of the pass in this process and runs
:mod:`benchmarks.pruning_fidelity` with the remaining arguments, so its figures are
comparable with the pass as it is::

    python -m benchmarks.pruning_variants shapes-always --models qwen2.5-coder-0.5b --set tuning-3
    python -m benchmarks.pruning_variants expansion --models qwen2.5-coder-0.5b --set tuning-3

- ``shapes-always``: the kinds-of-line request is sent even when focus words are on some
  lines (today only when none is), so a focus whose words hit distractors still gets
  the rare kinds shown.
- ``expansion``: one short request first asks the pruning model for words the answering
  lines would contain, shown a dozen example lines of the output; the words are added to
  the focus.
- ``expansion-words``: the same request, but its answer only adds plain words to the
  ranking (no literals, each word counting as a focus word does); the pruning model is
  shown the focus as it was.
- ``trouble``: a focus with no literal (no code, number or quoted text: how a user asks in
  their own words) gets the windows of up to two *rare trouble lines* read right after
  the best window of its words: lines that say error, failed, fatal, unreachable, refused,
  killed, a non-zero exit…, of a kind at most 1% of the output has, the two closest in
  meaning to the focus.

Figures: ``benchmarks/results/pruning_fidelity.md`` ("Round 3 tuning").
"""

from __future__ import annotations

import dataclasses
import logging
import re
import sys
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

import leanloop.pruning.extract as extract
from benchmarks import pruning_fidelity
from leanloop.pruning.layout import Layout
from leanloop.pruning.markers import OUTPUT_END, OUTPUT_START, restore_reserved
from leanloop.pruning.meaning import meaning_scores
from leanloop.pruning.rank import Focus, focus_terms, line_scores
from leanloop.pruning.settings import ReadingSettings
from leanloop.pruning.shapes import candidates, line_shapes

logger = logging.getLogger("benchmarks.pruning_variants")

VARIANTS = ("shapes-always", "expansion", "expansion-words", "trouble")
_EXAMPLES = 12
_EXPANSION_PROMPT = (
    "You help find lines in a tool output. Below are example lines of the output and a "
    "question. Write 6 to 10 words or short terms that the lines answering the question "
    "would contain literally (names of errors, keys, statuses, programs), between "
    f"{OUTPUT_START} and {OUTPUT_END}, separated by commas. Write nothing else."
)


def _shapes_always(settings: ReadingSettings, layout: Layout) -> bool:
    return settings.shapes > 0 and len(layout.whole) > 1


async def _expansion(self: extract.Pruner, kwargs: dict[str, Any]) -> str | None:
    """The words the pruning model expects on the answering lines (``None``: no answer)."""
    request, task_context = kwargs["request"], kwargs["task_context"]
    asked = request.focus if request.focus is not None else task_context
    if not asked:
        return None
    texts = [line.split("| ", 1)[-1] for line in kwargs["raw"].split("\n")]
    shown = candidates(texts, [0] * len(texts), max_shapes=_EXAMPLES, skip=[])
    examples = "\n".join(texts[shape.example][:160] for shape in shown)
    messages = [
        SystemMessage(_EXPANSION_PROMPT),
        HumanMessage(
            f"Example lines of the {kwargs['tool_name']} output:\n{examples}\n\nQuestion: {asked}"
        ),
    ]
    answer = await self._extractor.ask_alone(
        messages, chars_per_token=2.0, deadline_at=None, config=kwargs["config"]
    )
    if isinstance(answer, str):
        return None
    terms = " ".join(restore_reserved(answer.output).replace(",", " ").split())[:200]
    logger.warning("expansion %r -> %r", asked, terms)
    return terms


def _with_expansion_words() -> None:
    run, lay_out = extract.Pruner._run, extract.Pruner._layout
    pending: dict[int, str] = {}

    async def run_expanded(self: extract.Pruner, **kwargs: Any) -> extract.PruneOutcome:
        terms = await _expansion(self, kwargs)
        if terms:
            pending[id(self)] = terms
        try:
            return await run(self, **kwargs)
        finally:
            pending.pop(id(self), None)

    async def layout_expanded(self: extract.Pruner, *args: Any, **kwargs: Any) -> Layout:
        layout = await lay_out(self, *args, **kwargs)
        terms = pending.get(id(self))
        if not terms:
            return layout
        asked = layout.look_for
        words = tuple(w for w in focus_terms(terms) if w not in asked.words)
        texts = [text.split("| ", 1)[-1] for _, text in layout.entries]
        extra = line_scores(texts, Focus(words, ()))
        scores = [a + b for a, b in zip(layout.scores, extra, strict=True)]
        return dataclasses.replace(layout, scores=scores)

    extract.Pruner._run = run_expanded  # type: ignore[method-assign]
    extract.Pruner._layout = layout_expanded  # type: ignore[method-assign]


def _with_expansion() -> None:
    original = extract.Pruner._run

    async def run(self: extract.Pruner, **kwargs: Any) -> extract.PruneOutcome:
        terms = await _expansion(self, kwargs)
        if terms:
            request = kwargs["request"]
            if request.focus is not None:
                kwargs["request"] = dataclasses.replace(request, focus=f"{request.focus} ({terms})")
            else:
                kwargs["task_context"] = f"{kwargs['task_context']} ({terms})"
        return await original(self, **kwargs)

    extract.Pruner._run = run  # type: ignore[method-assign]


_TROUBLE = re.compile(
    r"\b(?:error|errors|fail\w*|fatal|unreachable|denied|refused|killed|oomkilled|exception"
    r"|panic\w*|abort\w*|timed out|timeout|rejected|crash\w*|critical|segfault|traceback"
    r"|outofmemory\w*|unhealthy|evicted|exit (?:status|code)[ =:]*[1-9]\d*"
    r"|exit_code=[1-9]\d*)\b",
    re.IGNORECASE,
)
_TROUBLE_WINDOWS = 2


def trouble_lines(texts: list[str], focus: str) -> list[int]:
    """Up to two rare trouble lines, closest in meaning to ``focus`` first."""
    sizes: dict[int, int] = {}
    for shape in line_shapes(texts):
        sizes.update(dict.fromkeys(shape.lines, len(shape.lines)))
    rare = max(3, len(texts) // 100)
    found = [i for i, t in enumerate(texts) if sizes.get(i, 1) <= rare and _TROUBLE.search(t)]
    similar = meaning_scores(focus, texts) or [0.0] * len(texts)
    return sorted(found, key=lambda i: -similar[i])[:_TROUBLE_WINDOWS]


def _with_trouble() -> None:
    run, lay_out = extract.Pruner._run, extract.Pruner._layout
    pending: dict[int, str] = {}

    async def run_asked(self: extract.Pruner, **kwargs: Any) -> extract.PruneOutcome:
        request, task_context = kwargs["request"], kwargs["task_context"]
        asked = request.focus if request.focus is not None else task_context
        if asked:
            pending[id(self)] = asked
        try:
            return await run(self, **kwargs)
        finally:
            pending.pop(id(self), None)

    async def layout_lifted(self: extract.Pruner, *args: Any, **kwargs: Any) -> Layout:
        layout = await lay_out(self, *args, **kwargs)
        asked = pending.get(id(self))
        if not asked or layout.look_for.literals or not any(layout.scores):
            return layout
        texts = [text.split("| ", 1)[-1] for _, text in layout.entries]
        best = max(layout.scores)
        scores = list(layout.scores)
        for place in trouble_lines(texts, asked):
            scores[place] = max(scores[place], best * 0.999)
        logger.warning("trouble %r -> %s", asked, trouble_lines(texts, asked))
        return dataclasses.replace(layout, scores=scores)

    extract.Pruner._run = run_asked  # type: ignore[method-assign]
    extract.Pruner._layout = layout_lifted  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    """Patch in the variant named first, then run the fidelity benchmark with the rest."""
    if not argv or argv[0] not in VARIANTS:
        print(f"usage: python -m benchmarks.pruning_variants {{{','.join(VARIANTS)}}} ARGS…")
        return 2
    if argv[0] == "shapes-always":
        extract.wants_shapes = _shapes_always  # type: ignore[attr-defined]
    elif argv[0] == "expansion-words":
        _with_expansion_words()
    elif argv[0] == "trouble":
        _with_trouble()
    else:
        _with_expansion()
    return pruning_fidelity.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
