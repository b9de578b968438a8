"""Which results of one round go through the pruning pass.

Two triggers (``pruning_trigger`` in YAML, ADR 0006 amendment 4):

- ``size``: every prunable result of at least ``pruning_min_chars`` is pruned. Right for
  a fast extraction model: a pass costs seconds, and the extract is smaller than the
  output for the rest of the run.
- ``budget``: a result is pruned only when the round's results do not fit the room left
  in the request. The largest prunable results go first, until the rest fits. Right for
  a small model on a CPU, where one pass reads the output as slowly as the main model
  does (minutes for a few thousand tokens) and a server's prompt cache makes the raw
  output cheap to keep once it fits.

Whatever the trigger, the model's own word wins: ``output_prune: false`` is never
pruned, and a call that says what it looks for (``output_prune_context``) is pruned.
A result too large for its cap (which would cut it) counts as not fitting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["KEPT_SHARE", "Candidate", "PruningTrigger", "pick_pruned"]

PruningTrigger = Literal["size", "budget"]

KEPT_SHARE = 0.25
"""The share of a result its extract is assumed to keep while the round is planned.

A guess on the safe side (extracts of the suite's logs keep 2–10%); when it is wrong the
request is trimmed as usual.
"""


@dataclass(frozen=True)
class Candidate:
    """One result of a round, as the trigger sees it."""

    chars: int
    """The characters the result takes in the request if kept whole (its cap applied to
    a result that cannot be pruned)."""
    prunable: bool = False
    """Whether the pass may prune it (a prunable tool's result of at least
    ``pruning_min_chars``, not opted out, not a repeat)."""
    asked: bool = False
    """Whether the model said what it looks for in it (``output_prune_context``)."""
    over_cap: bool = False
    """Whether it is longer than one result may be (it would be cut)."""


def pick_pruned(
    candidates: Sequence[Candidate], *, trigger: PruningTrigger, room_chars: int
) -> frozenset[int]:
    """The indices of ``candidates`` to prune.

    Args:
        candidates: The round's results, in call order.
        trigger: ``size`` prunes every prunable result; ``budget`` only what does not
            fit (see the module docstring).
        room_chars: The characters the request has left for the round's results.

    Returns:
        The positions of the results to prune; never one that is not ``prunable``.
    """
    prunable = [i for i, c in enumerate(candidates) if c.prunable]
    if trigger == "size":
        return frozenset(prunable)
    chosen = {i for i in prunable if candidates[i].asked or candidates[i].over_cap}
    total = sum(c.chars for c in candidates)
    total -= sum(_saved(candidates[i]) for i in chosen)
    for i in sorted(prunable, key=lambda i: -candidates[i].chars):
        if total <= room_chars:
            break
        if i not in chosen:
            chosen.add(i)
            total -= _saved(candidates[i])
    return frozenset(chosen)


def _saved(candidate: Candidate) -> int:
    return int(candidate.chars * (1 - KEPT_SHARE))
