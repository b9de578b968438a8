"""The trimmed copies of tool results, kept for as long as their originals live.

The views of consecutive requests share one trimmed copy of a result (which keeps
incremental counting cheap: the counter knows the copy by its identity), so a copy is
made once per original and looked up after that. The cache is weak on the originals: an
entry goes when its original is collected, so a run's tool outputs never outlive the run
(a strong cache of 4,096 entries kept 130 MB of old outputs alive over 100 runs of one
agent). What a trimmed copy holds is :func:`leanloop.budget.fit.trim_result`'s business;
who holds the cache is :class:`leanloop.budget.shared.SharedState`'s.
"""

from __future__ import annotations

import weakref

from langchain_core.messages import BaseMessage

__all__ = ["TrimmedCopies"]

_Entry = tuple[weakref.KeyedRef[int, BaseMessage], BaseMessage]


class TrimmedCopies:
    """Trimmed copies by ``id()`` of their original, each dropped with its original."""

    def __init__(self) -> None:
        self._copies: dict[int, _Entry] = {}

    def get(self, original: BaseMessage) -> BaseMessage | None:
        """The copy made of ``original``, or ``None`` when there is none (yet)."""
        hit = self._copies.get(id(original))
        return hit[1] if hit is not None and hit[0]() is original else None

    def put(self, original: BaseMessage, copy: BaseMessage) -> None:
        """Keep ``copy`` for as long as ``original`` lives (not at all when ``original``
        cannot be weakly referenced)."""
        key = id(original)
        try:
            ref = weakref.KeyedRef(original, self._forget, key)
        except TypeError:  # a message class that cannot be weakly referenced: not cached
            return
        self._copies[key] = (ref, copy)

    def clear(self) -> None:
        """Forget every copy (the next trim of a result makes a new one)."""
        self._copies.clear()

    def __len__(self) -> int:
        return len(self._copies)

    def _forget(self, ref: weakref.KeyedRef[int, BaseMessage]) -> None:
        """Drop the copy of an original that is being collected.

        Called while the original is deallocated, before its ``id()`` can be reused, so the
        entry found is that original's (or one already replaced, which is left alone). No
        lock: a callback can run inside any allocation, also one made while a lock is held.
        """
        hit = self._copies.get(ref.key)
        if hit is not None and hit[0] is ref:
            self._copies.pop(ref.key, None)
