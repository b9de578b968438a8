"""An output as the pass's requests show it: numbered, sized, and scored by the focus.

Before the pass decides where to read (:mod:`leanloop.pruning.strategies`), it lays the
output out once (:func:`lay_out`): each line numbered as a request shows it
(:func:`~leanloop.pruning.prompt.numbered_entries`), the characters one request may
show, the output cut in order into requests that large, and each line's score for what
the pass looks for (:mod:`leanloop.pruning.rank`), with what resolves a line the pruning
model names to the line it meant (:mod:`leanloop.pruning.numbers`).

Chunks are sized from the output's own characters per token: counted by the pruning
model's server when the loop injects a ``count_ratio`` (llama.cpp ``/tokenize``), else
estimated from the kind of characters
(:func:`~leanloop.pruning.prompt.estimate_chars_per_token`), with a 15% margin.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from leanloop.pruning.numbers import Resolution
from leanloop.pruning.prompt import (
    Chunk,
    chunk_budget,
    estimate_chars_per_token,
    numbered_entries,
    overhead_text,
    pack_entries,
    sample_text,
)
from leanloop.pruning.rank import Focus, focus_of, line_scores, whole_word_scores
from leanloop.pruning.settings import ExtractionSettings
from leanloop.pruning.shapes import shape_of

__all__ = [
    "FOOTER",
    "READ_FILE",
    "SAMPLE_CHARS",
    "CountRatio",
    "Layout",
    "lay_out",
]

logger = logging.getLogger(__name__)

# Characters of the output (numbered, as the model sees them) whose tokens are counted.
SAMPLE_CHARS = 6_000
# Share of the window left free for the chat template and the ratio's error (the sample
# is the output's start, which need not be typical of the rest).
_MARGIN = 0.15
# Seconds the server may take to count the sample's tokens.
_COUNT_TIMEOUT_S = 5.0
READ_FILE = "read_file"
"""The tool whose numbered output the pass reads in the file's own line numbers."""
FOOTER = re.compile(r"\[lines [\d,]+-[\d,]+ of [\d,]+.*\]\Z")
"""read_file's closing line (``[lines 1-100 of 2,000; next: …]``)."""

CountRatio = Callable[[str], Awaitable[float | None]]
"""Characters per token of a sample text, as the pruning model's server counts it."""


@dataclass(frozen=True)
class Layout:
    """An output as the pass's requests show it, before it is planned."""

    entries: list[tuple[int, str]]
    """The shown lines: ``(raw number, "  12| text")``, a long line in several pieces."""
    whole: list[Chunk]
    """The output cut in order into requests as large as fit."""
    ratio: float
    source: str
    budget: int
    """Characters of output one request may show."""
    look_for: Focus
    scores: list[float]
    """Each entry's score from the word match."""
    resolution: Resolution
    """What resolves a line the model names to the line it meant."""
    footer: str | None
    """read_file's closing line, when it is the last entry (never shown to the model)."""


async def lay_out(
    settings: ExtractionSettings,
    lines: list[str],
    *,
    count_ratio: CountRatio | None,
    tool_name: str,
    focus: str | None,
    task_context: str,
    subject: str | None = None,
) -> Layout:
    """The output numbered as requests show it, its chunk size and its word scores.

    Args:
        settings: The extraction's settings (the window, the ratio's ceiling, the
            reply's reserve, the largest chunk, the prompt style).
        lines: The output's lines.
        count_ratio: Counts a sample's characters per token on the pruning model's
            server (``None``: estimate it from the content).
        tool_name: The tool that produced the output.
        focus: What the main model looks for, if it said.
        task_context: What the run is about, read when there is no focus.
        subject: The path the output was read from: its words say nothing about where
            to look inside it.

    Returns:
        The layout the pass plans its requests on.
    """
    sample = sample_text(lines, SAMPLE_CHARS)
    measured = await _measure(count_ratio, sample)
    if measured is not None:
        ratio, source = measured, "server"
    else:
        ratio = estimate_chars_per_token(sample, ceiling=settings.chars_per_token)
        source = "estimate"
    overhead = overhead_text(
        tool_name=tool_name, focus=focus, task_context=task_context, style=settings.prompt_style
    )
    budget = chunk_budget(
        window_tokens=settings.window_tokens,
        chars_per_token=ratio,
        reply_tokens=settings.reply_tokens,
        overhead_chars=len(overhead),
        margin=_MARGIN,
        overhead_chars_per_token=estimate_chars_per_token(
            overhead, ceiling=settings.chars_per_token
        ),
    )
    if settings.max_chunk_tokens is not None:
        budget = max(min(budget, int(settings.max_chunk_tokens * ratio)), 1)
    entries = numbered_entries(lines, budget, one_number=settings.prompt_style == "small")
    texts = [text.split("| ", 1)[-1] for _, text in entries]
    look_for = focus_of(focus if focus is not None else task_context).without(subject)
    # read_file's closing line (which lines of how many, what comes next) is not shown
    # to the pruning model: asked for line numbers, the 0.5B and the 1.5B both named
    # it. The pass adds it to what is kept (result.with_footer), never left unread.
    footer = tool_name == READ_FILE and bool(FOOTER.match(lines[-1])) and len(entries) > 1
    return Layout(
        entries=entries,
        whole=pack_entries(entries, budget),
        ratio=ratio,
        source=source,
        budget=budget,
        look_for=look_for,
        scores=line_scores(texts, look_for),
        resolution=Resolution(
            evidence=_line_scores(entries, whole_word_scores(texts, look_for)),
            rare=_rare_lines(entries, texts),
            literal=frozenset(
                number
                for (number, _), value in zip(
                    entries, line_scores(texts, Focus((), look_for.literals)), strict=True
                )
                if value > 0
            ),
        ),
        footer=lines[-1] if footer else None,
    )


async def _measure(count_ratio: CountRatio | None, sample: str) -> float | None:
    """The server's characters per token of ``sample``, or ``None`` (no counter, a failed
    or nonsensical count)."""
    if count_ratio is None or not sample.strip():
        return None
    try:
        async with asyncio.timeout(_COUNT_TIMEOUT_S):
            ratio = await count_ratio(sample)
    except Exception:  # a count is a nicety: the estimate is used instead
        logger.debug("counting the sample's tokens failed", exc_info=True)
        return None
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or ratio <= 0:
        return None
    return float(ratio)


_RARE_KIND = 2
"""A kind of line (:func:`~leanloop.pruning.shapes.shape_of`) found at most this often is rare."""


def _rare_lines(entries: Sequence[tuple[int, str]], texts: Sequence[str]) -> frozenset[int]:
    """The raw line numbers whose kind of line is rare in the output."""
    kinds = [shape_of(text) for text in texts]
    counts = Counter(kinds)
    return frozenset(
        number
        for (number, _), kind in zip(entries, kinds, strict=True)
        if counts[kind] <= _RARE_KIND
    )


def _line_scores(entries: Sequence[tuple[int, str]], scores: Sequence[float]) -> tuple[float, ...]:
    """Each raw line's score (0-based): the best of its shown pieces'."""
    count = entries[-1][0] if entries else 0
    by_line = [0.0] * count
    for (number, _), value in zip(entries, scores, strict=True):
        by_line[number - 1] = max(by_line[number - 1], value)
    return tuple(by_line)
