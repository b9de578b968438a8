"""Where a pruning pass reads: the reading strategies, decided before any line is read.

A pass over an output that fits one request reads it whole. A larger one is read by one
of these strategies (:func:`plan_reading`), each a :class:`Plan` of requests in the order
to read them:

- **by the word hits' windows**: small windows around the lines that hold what the pass
  looks for, packed best first into requests (:mod:`leanloop.pruning.rank`), one window a
  request for a small model (``pack_windows`` off);
- **in order**, in chunks as large as fit: when no line holds a word looked for, or when
  the windows around the hits would cover most of the output (only the windows the
  weaker-match rule would let the pass read count);
- **by the kinds of line** the pruning model names: when no line holds a focus word at
  all, a shapes request first shows one example line of each kind the output has
  (:func:`pick_shapes`, :mod:`leanloop.pruning.shapes`); the lines of the kinds named are
  kept, and their windows read first.

While the pass reads, the plan's stop rules (:meth:`Plan.rules`,
:mod:`leanloop.pruning.reading`: the near-miss, weaker-match and allowance rules) decide
whether the next request is read at all.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.runnables import RunnableConfig

from leanloop.pruning.extraction import Extractor
from leanloop.pruning.layout import Layout
from leanloop.pruning.markers import restore_reserved
from leanloop.pruning.meaning import meaning_scores
from leanloop.pruning.numbers import Resolution, lines_named
from leanloop.pruning.prompt import Chunk, window_chunk
from leanloop.pruning.rank import Focus, pack_windows, plan_windows
from leanloop.pruning.reading import NO_FOCUS_WORD, NOT_NAMED, WEAKER_SHARE, ReadingRules
from leanloop.pruning.settings import MIN_ALLOWANCE_TOKENS, ReadingSettings
from leanloop.pruning.shapes import Shape, candidates, chosen_lines, shapes_messages

__all__ = [
    "Plan",
    "looked_for",
    "pick_shapes",
    "plan_reading",
    "wants_shapes",
]

logger = logging.getLogger(__name__)

# When windows around the hits hold more than this share of the output, it is read whole.
_DENSE_SHARE = 0.5
# Requests' worth of output a pass reads by default (see PruneSettings.read_tokens).
_ALLOWANCE_REQUESTS = 2
# Lines of one shape the model picked that are kept (the best by the word match, then
# the first): a shape of hundreds of lines is a kind, not an answer.
_PICKED_LINES = 4
# How far a rare line may stand from a picked one to be kept with it (shapes.chosen_lines).
_BURST_LINES = 8
# A shapes answer naming more than this share of the list, and more than _MAX_PICKS, is
# read as its first _MAX_PICKS names: the 0.5B answered 1, 3, 5, … 21 of 22.
_PICKED_SHARE = 1 / 3
_MAX_PICKS = 3
_PLACE = re.compile(r"\d+")
_COPIED_PREFIX = re.compile(r"^\s*\d+\|\s?")
# A copied piece must be at least this long to stand for a shape (as in verify.py).
_MIN_COPIED_CHARS = 24


@dataclass(frozen=True)
class Plan:
    """The requests of one pass, in the order to read them, and what they were planned by."""

    chunks: list[Chunk]
    """The requests, in the order to read them."""
    chars_per_token: float
    source: str
    scoring: int | None = None
    """How many of the first requests hold a word the pass looks for (``None``: one
    request, read whole; 0: no line holds one, read in order)."""
    focus: Focus | None = None
    """What the windows were scored by (``None``: not read by windows)."""
    peaks: tuple[float, ...] = ()
    """The best line score of each request (``()``: not read by windows)."""
    footer: str | None = None
    """read_file's closing line, when the windows leave it out: added to what is kept."""
    resolution: Resolution | None = None
    """What resolves a line the model names to the line it meant (``None``: taken as named)."""
    allowance: float | None = None
    """The most prompt tokens of output the pass reads (see ``PruneSettings.read_tokens``)."""
    picked: int | None = None
    """Shapes the model named in the shapes request (``None``: none was sent)."""

    def rules(self) -> ReadingRules:
        """The stop rules of a pass that reads this plan (:mod:`leanloop.pruning.reading`)."""
        return ReadingRules(
            self.scoring,
            allowance=self.allowance,
            peaks=self.peaks,
            unscored=NO_FOCUS_WORD if not self.picked else NOT_NAMED,
        )


def _allowance(settings: ReadingSettings, layout: Layout) -> float:
    """The most prompt tokens of output the pass reads (PruneSettings.read_tokens)."""
    if settings.read_tokens is not None:
        return float(settings.read_tokens)
    request = layout.budget / layout.ratio
    return max(float(MIN_ALLOWANCE_TOKENS), _ALLOWANCE_REQUESTS * request)


def wants_shapes(settings: ReadingSettings, layout: Layout) -> bool:
    """Whether the pass asks the model which kinds of line answer the focus.

    Only for an output that needs more than one request, and only when no line holds
    a literal of the focus or one of its words as a whole word: a focus in a user's
    own words ("why the checkout service crashed") names nothing in a log that says
    OutOfMemoryError, and a word inside another ("log" in ``catalog``) is no evidence
    of where to look. A focus whose words are there is read by them, as before.
    """
    if settings.shapes <= 0 or len(layout.whole) <= 1:
        return False
    return not any(layout.resolution.evidence)


def plan_reading(
    settings: ReadingSettings, tool_name: str, layout: Layout, scores: list[float]
) -> Plan:
    """The requests of the pass, in the order to read them.

    An output that fits one request is read whole (for a small model, one window a
    request, only when nothing scores or the hits are dense). A larger one is cut into
    small windows around the lines that hold what the pass looks for, packed best
    first into requests (:mod:`leanloop.pruning.rank`); the pass may stop before the
    last.
    """
    entries, whole, ratio, source = layout.entries, layout.whole, layout.ratio, layout.source
    look_for = layout.look_for
    allowance = _allowance(settings, layout)
    # A small model reads one window a request (pack_windows off) even when the
    # whole output would fit one: shown the 41 lines of a file at once, the 0.5B named
    # a wrong line; shown the best window, the right one (amendment 6).
    if len(whole) == 1 and settings.pack_windows:
        logger.debug("pruning %s: %.2f characters a token (%s)", tool_name, ratio, source)
        return Plan(
            whole,
            ratio,
            source,
            resolution=layout.resolution,
            allowance=allowance,
        )
    sizes = [len(text) + 1 for _, text in entries]
    window = max(min(int(settings.window_tokens_read * ratio), layout.budget), 1)
    if not any(scores):
        # Nothing to rank by: the output is read in order, in chunks as large as fit,
        # until the allowance is spent; the rest is named with the call that reads it.
        logger.debug(
            "pruning %s: %.2f characters a token (%s), no line holds what is looked for "
            "(%s): %d request(s) in order",
            tool_name,
            ratio,
            source,
            look_for.describe() or "nothing",
            len(whole),
        )
        return Plan(
            whole, ratio, source, scoring=0, focus=look_for, resolution=layout.resolution,
            allowance=allowance,
        )  # fmt: skip
    planned = len(entries) - 1 if layout.footer is not None else len(entries)
    windows = plan_windows(sizes[:planned], scores[:planned], window)
    # Only the windows the weaker-match rule would let the pass read count: a literal
    # on every line of a kind (rollback_id on each deploy line) makes windows around
    # all of them, but the pass reads those near the best score.
    best = max(scores[:planned], default=0.0)
    hit = sum(
        sum(sizes[w.first : w.last + 1])
        for w in windows
        if w.score > 0 and max(scores[w.first : w.last + 1]) >= WEAKER_SHARE * best
    )
    if hit > _DENSE_SHARE * sum(sizes):
        # Windows around the hits would cover most of the output: they would save
        # little reading and cost a request (and an answer) each. Read it in order.
        logger.debug(
            "pruning %s: %.2f characters a token (%s), what is looked for (%s) is on "
            "most lines: %d request(s) in order",
            tool_name,
            ratio,
            source,
            look_for.describe(),
            len(whole),
        )
        return Plan(
            whole,
            ratio,
            source,
            resolution=layout.resolution,
            allowance=allowance,
        )
    packed = layout.budget if settings.pack_windows else window
    batches = pack_windows(windows, sizes, packed)
    chunks = [window_chunk(entries, [(w.first, w.last) for w in batch]) for batch in batches]
    scoring = sum(1 for batch in batches if batch[0].score > 0)
    peaks = tuple(
        max(max(scores[w.first : w.last + 1], default=0.0) for w in batch) for batch in batches
    )
    logger.debug(
        "pruning %s: %.2f characters a token (%s), windows of %d characters in requests "
        "of %d: %d request(s), %d holding what is looked for (%s)",
        tool_name,
        ratio,
        source,
        window,
        layout.budget,
        len(chunks),
        scoring,
        look_for.describe() or "nothing",
    )
    return Plan(
        chunks,
        ratio,
        source,
        scoring=scoring,
        focus=look_for,
        peaks=peaks,
        footer=layout.footer,
        resolution=layout.resolution,
        allowance=allowance,
    )


async def pick_shapes(
    settings: ReadingSettings,
    extractor: Extractor,
    layout: Layout,
    *,
    tool_name: str,
    focus: str,
    config: RunnableConfig | None,
    deadline_at: float | None,
) -> tuple[list[float], int | None, list[int]]:
    """Ask the model which kinds of line answer ``focus``.

    Args:
        settings: The reading settings (how many shapes, whether by meaning too).
        extractor: Sends the shapes request.
        layout: The output as the requests show it.
        tool_name: The tool that produced the output.
        focus: What the pass looks for.
        config: The caller's config (passed on to the request).
        deadline_at: The event loop's time after which no request may run.

    Returns:
        The entries' scores with one line of each kind named raised above every word
        match (their windows are read first); how many kinds the model named (``None``: the
        request failed, and the word scores stand); the chosen entries
        (:func:`~leanloop.pruning.shapes.chosen_lines`), kept whatever their windows'
        answers say: the model chose them from the output's kinds of line.
    """
    texts = [text.split("| ", 1)[-1] for _, text in layout.entries]
    skip = [len(texts) - 1] if layout.footer is not None else []
    # A shapes request is sent only when no line holds a focus word as a whole word
    # (wants_shapes): a word inside others ("log" in catalog) then leads nowhere, and
    # the list is the rarest kinds of line alone.
    evidence = [layout.resolution.evidence[number - 1] for number, _ in layout.entries]
    similar = (
        await asyncio.to_thread(meaning_scores, focus, texts)
        if settings.meaning and not any(evidence)
        else None
    )
    shown = candidates(texts, evidence, max_shapes=settings.shapes, skip=skip, similar=similar)
    if not shown:
        return layout.scores, None, []
    messages = shapes_messages(tool_name=tool_name, focus=focus, lines=texts, shown=shown)
    answer = await extractor.ask_alone(
        messages, chars_per_token=layout.ratio, deadline_at=deadline_at, config=config
    )
    if isinstance(answer, str):
        logger.info("the shapes request failed (%s); reading by the words", answer)
        return layout.scores, None, []
    picked = _places_named(answer.output, texts, shown)
    logger.debug(
        "pruning %s: shown %d line shapes, the model named %s",
        tool_name,
        len(shown),
        [place + 1 for place in picked] or "none",
    )
    unsure = len(picked) > max(_MAX_PICKS, _PICKED_SHARE * len(shown))
    if unsure:
        # Most of the list named (the 0.5B answered 1, 3, 5, 7, 9 of 12): the model
        # cannot tell, so the first few rare kinds named stand (the list is rarest
        # first).
        rare = [place for place in picked if not shown[place].by_meaning]
        picked = (rare or picked)[:_MAX_PICKS]
    scores = list(layout.scores)
    lift = max(scores, default=0.0) + 1.0
    if not picked:
        return scores, 0, []
    chosen = chosen_lines(
        shown, picked, per_shape=_PICKED_LINES, scores=layout.scores, reach=_BURST_LINES
    )
    # The chosen lines are kept; a window is read around one line of each kind named
    # (its example), so the model can add the lines that go with it. Windows around
    # every chosen line cost a request each and, on the 0.5B, a named line of noise each.
    for place in picked:
        scores[shown[place].example] += lift
    if similar is not None and max(similar) > 0:
        # The window of the line closest in meaning is read too. A model that named most
        # of the kinds cannot tell (the 0.5B: 1, 3, 5, … whatever the list holds), so
        # that window comes after the kinds named, at half lift: the weaker-match rule
        # reads it only when they kept nothing. A model that named a few kinds can be
        # sure and wrong (the 1.5B named one kind of a handbook, whose window held no
        # answer): the closest line is a second opinion, read like a kind named. Lifts
        # never add up: a closest line that is a named kind's example stays level with
        # the other examples (the weaker-match rule would skip them otherwise).
        # (A model that named none gets the reading in order, as before.)
        closest = max(range(len(similar)), key=lambda i: (similar[i], -i))
        lifted = layout.scores[closest] + (lift / 2 if unsure else lift)
        scores[closest] = max(scores[closest], lifted)
    return scores, len(picked), chosen


def _places_named(answer: str, texts: Sequence[str], shown: Sequence[Shape]) -> list[int]:
    """The 0-based places of a shapes list an answer names: by number (``[2, 5]``,
    ``2-3``), or by copying example lines (what a model asked to copy lines does)."""
    count = len(shown)
    listing = Chunk("\n".join(f"{n}| x" for n in range(1, count + 1)), 1, count)
    named = lines_named(answer, listing)
    if named is not None:
        places = [int(m.group()) - 1 for line in named.split("\n") if (m := _PLACE.match(line))]
        return sorted(set(places))
    examples = [" ".join(texts[shape.example].split()) for shape in shown]
    copied_places: set[int] = set()
    for line in restore_reserved(answer).split("\n"):
        copied = " ".join(_COPIED_PREFIX.sub("", line, count=1).split())
        if len(copied) < _MIN_COPIED_CHARS:
            continue
        copied_places.update(i for i, example in enumerate(examples) if copied in example)
    return sorted(copied_places)


def looked_for(plan: Plan) -> list[str]:
    """What the info block says about a pass read by windows (nothing for one request)."""
    if plan.focus is None:
        return []
    if plan.scoring == 0:
        words = plan.focus.describe()
        missing = f"no line holds the words looked for ({words})" if words else "no focus given"
        return [f"{missing}; read in order from the start"]
    # A reading by score says nothing more: its unread ranges give their reason, and
    # every line of a pruned result costs the main model's window.
    return []
