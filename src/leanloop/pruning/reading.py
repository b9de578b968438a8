"""When a pruning pass stops reading: the evidence stopped, or the allowance is spent.

A pass reads its requests best first (:mod:`leanloop.pruning.rank`). Before each next
request :class:`ReadingRules` says whether to read it, and if not, why; the lines of a
request not read are named in the result with that reason and the call that reads them.
The pass stops:

- when the requests left hold no word the pass looks for (there were some elsewhere):
  :data:`NO_FOCUS_WORD`;
- when :data:`PATIENCE` requests in a row yielded nothing once something was found, in
  a reading by score: :data:`NOTHING_MORE`;
- when a request's best line matches less than :data:`WEAKER_SHARE` as well as the best
  line of a request that kept something: :data:`WEAKER` (measured on the context
  suite's logs: the line asked for scores about twice what a near miss sharing most of
  its words does, so the pass reads the line and stops instead of reading every near
  miss at a request each);
- when the next request would take the pass past its token allowance
  (``pruning`` settings' ``read_tokens``; the first request is always read):
  :data:`OVER_ALLOWANCE`.

The time allowance (the pass's deadline and the server's measured speed) is judged
where each request starts (:mod:`leanloop.pruning.extraction`). A focus that matches no
line at all is read in order, until an allowance is spent.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FINAL_REASONS",
    "NOTHING_MORE",
    "NOT_NAMED",
    "NO_FOCUS_WORD",
    "OVER_ALLOWANCE",
    "PATIENCE",
    "WEAKER",
    "WEAKER_SHARE",
    "ReadingRules",
]

PATIENCE = 2
"""Requests in a row that may yield nothing, once something was found, before the pass stops."""
NO_FOCUS_WORD = "no focus word in them"
NOT_NAMED = "not of the kinds of line the pruning model named"
"""Why lines go unread after a shapes request (:mod:`leanloop.pruning.shapes`) named the
kinds of line that answer the focus."""
NOTHING_MORE = "the evidence ran out"
OVER_ALLOWANCE = "over the reading allowance"
WEAKER_SHARE = 0.6
"""A request whose best line scores under this share of the best line found is not read."""
WEAKER = "weaker matches than the lines kept"
FINAL_REASONS = frozenset({NO_FOCUS_WORD, NOT_NAMED, NOTHING_MORE, OVER_ALLOWANCE, WEAKER})
"""Reasons the same pass would give again: an extract left unread only for these is
as good as the pass can make it, so it may be reused for an identical output."""


@dataclass
class ReadingRules:
    """The stop rules of one pass, and what it has read so far.

    Args:
        scoring: How many of the pass's requests (the first ones) hold a word it looks
            for; ``None`` when the pass was not planned by score (one request, or no
            windows), so only the allowance applies.
        allowance: The most prompt tokens of output the pass reads (``None``: no limit).
        peaks: The best line score of each request, in reading order (``()``: not known,
            so the weaker-match rule does not apply).
    """

    scoring: int | None
    allowance: float | None = None
    unscored: str = NO_FOCUS_WORD
    """The reason given for the requests after the scoring ones."""
    peaks: tuple[float, ...] = ()
    found: bool = False
    """Whether a request read so far kept a line."""
    empty_in_a_row: int = 0
    """Requests finished since the last one that kept a line (once one did)."""
    tokens: float = 0.0
    """Prompt tokens of the requests started so far."""
    started: int = 0
    best_found: float = 0.0
    """The best line score of the requests that kept a line."""

    def refusal(self, position: int, tokens: float) -> str | None:
        """Why the request at ``position`` (0-based, reading order) is not read, or ``None``.

        Args:
            position: The request's place in the reading order.
            tokens: Its estimated prompt tokens.
        """
        if self.scoring and position >= self.scoring:
            return self.unscored
        # Only a ranked reading runs out of evidence: read in order (no line holds a
        # word looked for), the next part may hold the next relevant line.
        if self.scoring and self.found and self.empty_in_a_row >= PATIENCE:
            return NOTHING_MORE
        if self.scoring and self._peak(position) < WEAKER_SHARE * self.best_found:
            return WEAKER
        if self.allowance is not None and self.started and self.tokens + tokens > self.allowance:
            return OVER_ALLOWANCE
        return None

    def start(self, tokens: float) -> None:
        """Count a request that is being read."""
        self.started += 1
        self.tokens += tokens

    def finish(self, *, kept: bool, position: int | None = None) -> None:
        """Count a finished request: whether it kept a line.

        Args:
            kept: Whether the request's answer kept a verified line.
            position: The request's place in the reading order (its peak then counts
                towards the weaker-match rule).
        """
        if kept:
            self.found = True
            self.empty_in_a_row = 0
            if position is not None and position < len(self.peaks):
                self.best_found = max(self.best_found, self.peaks[position])
        elif self.found:
            self.empty_in_a_row += 1

    def _peak(self, position: int) -> float:
        # Unknown peaks never make a request weaker than another.
        return self.peaks[position] if position < len(self.peaks) else float("inf")
