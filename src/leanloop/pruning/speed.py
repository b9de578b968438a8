"""How fast the pruning model's server reads, and how long one extraction may take.

A fixed timeout cannot suit both a hosted API (a chunk in two seconds) and a 1.5B model
on two CPU cores (a 1,000-token chunk in 40–60 s). :class:`ServerSpeed` learns the
server's speed in prompt tokens per second, from the pass's own answers and, when the
main model talks to the same server, from the main model's requests too
(:meth:`ServerSpeed.observe`), and gives each request a limit from it:

- speed known: three times what the speed predicts for the request's tokens, at least
  the configured timeout and at most ten times it, multiplied by the most requests in
  flight at once while it waits (a llama.cpp server with one slot answers them one after
  another, in the order they reach it, not the order they were sent);
- speed unknown (the first requests of a run that has sent nothing yet, such as the
  pruning of prefetched files): ten times the configured timeout, since nothing says
  yet what "slow" is on this server; the pass's deadline still bounds it.

A request's limit is judged again whenever a speed is measured while it waits
(:meth:`ServerSpeed.limit`), so a request that was given the long "unknown" limit gets
the measured one as soon as another answer arrives, and a hung request is not waited on
for long just because it was sent first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ServerSpeed", "Waiting", "processed_tokens"]

# A request may take this many times what the measured speed predicts for its size ...
_TIMEOUT_FACTOR = 3.0
# ... but never more than this many times the configured timeout (nor, while the speed is
# unknown, less).
_TIMEOUT_CEILING = 10.0


def processed_tokens(usage: Mapping[str, Any] | None, *, default: float) -> float:
    """Prompt tokens the server really processed for a reply with ``usage``.

    The reported input tokens less the ones served from the server's prompt cache
    (``input_token_details.cache_read``): a request whose prefix was cached is answered
    faster, and counting its cached tokens would make the server look faster than it is.
    ``default`` (the request's estimated tokens) when the reply has no usage.
    """
    if not usage:
        return default
    reported = usage.get("input_tokens")
    if isinstance(reported, bool) or not isinstance(reported, int) or reported <= 0:
        return default
    details = usage.get("input_token_details") or {}
    cached = details.get("cache_read") if isinstance(details, Mapping) else None
    if isinstance(cached, int) and not isinstance(cached, bool) and 0 < cached < reported:
        return float(reported - cached)
    return float(reported)


@dataclass(eq=False)
class Waiting:
    """One request in flight: what its limit is judged from."""

    started: float
    """``loop.time()`` when it was sent."""
    tokens: float
    sharing: int
    """The most requests in flight at once while it waited, itself included."""
    floor: float
    until: float | None
    """``loop.time()`` it may never outlive (the pass's deadline)."""
    timer: asyncio.Timeout

    @property
    def at_deadline(self) -> bool:
        """Whether the pass's deadline, not the request's own limit, is what its timer is
        set to: after a ``TimeoutError``, whether the deadline ended it."""
        return self.until is not None and self.timer.when() == self.until


class ServerSpeed:
    """Prompt tokens per second the pruning model's server has handled so far."""

    def __init__(self) -> None:
        """Start with no measurement."""
        self.tokens = 0.0
        self.seconds = 0.0
        self._waiting: set[Waiting] = set()

    @property
    def known(self) -> bool:
        """Whether any request has been measured."""
        return self.tokens > 0

    def observe(self, tokens: float, seconds: float, *, sharing: int = 1) -> None:
        """Record a request of ``tokens`` prompt tokens answered in ``seconds``.

        ``sharing`` is how many requests were in flight when it was sent: a server with
        one slot answers them one after another, so it took about ``1/sharing`` of that
        time itself. Every request still waiting is judged again by the new speed.
        """
        if tokens <= 0 or seconds <= 0:
            return
        self.tokens += tokens
        self.seconds += max(seconds / max(sharing, 1), 1e-6)
        for waiting in list(self._waiting):
            if not waiting.timer.expired():  # an expired one is being cancelled already
                waiting.timer.reschedule(self._deadline(waiting))

    def expected(self, tokens: float, *, sharing: int) -> float | None:
        """Seconds a request of ``tokens`` should take at the speed so far (``None``: unknown)."""
        if not self.known:
            return None
        return tokens / (self.tokens / self.seconds) * sharing

    def timeout_for(self, tokens: float, floor: float, *, sharing: int) -> float:
        """Seconds a request of ``tokens``, sent with ``sharing`` in flight, may take."""
        expected = self.expected(tokens, sharing=1)
        if expected is None:
            return floor * _TIMEOUT_CEILING
        own = min(max(floor, _TIMEOUT_FACTOR * expected), floor * _TIMEOUT_CEILING)
        return own * sharing

    @contextlib.asynccontextmanager
    async def limit(
        self, tokens: float, floor: float, *, sharing: int, within: float | None
    ) -> AsyncIterator[Waiting]:
        """Bound the request run inside by :meth:`timeout_for`, judged again as speeds arrive.

        A request's sharing grows to the most requests in flight at once during its
        wait; the handle yielded says the final figure, for :meth:`observe`.

        Args:
            tokens: The request's prompt tokens (estimated).
            floor: The configured timeout.
            sharing: Requests in flight when it is sent, itself included.
            within: Seconds from now it may never outlive (``None``: no such bound).

        Raises:
            TimeoutError: When the limit passes first.
        """
        loop = asyncio.get_running_loop()
        started = loop.time()
        until = None if within is None else started + within
        async with asyncio.timeout(None) as timer:
            waiting = Waiting(started, tokens, sharing, floor, until, timer)
            self._waiting.add(waiting)
            # Every request in flight now shares the server with this one, whatever the
            # order they were sent in: the server may take a later one first (measured:
            # three chunks sent at once reached llama-server in another order, and the one
            # counted alone was cut at its own limit while it waited behind the others).
            for other in self._waiting:
                other.sharing = max(other.sharing, len(self._waiting))
                if not other.timer.expired():
                    other.timer.reschedule(self._deadline(other))
            try:
                yield waiting
            finally:
                self._waiting.discard(waiting)

    def _deadline(self, waiting: Waiting) -> float:
        when = waiting.started + self.timeout_for(
            waiting.tokens, waiting.floor, sharing=waiting.sharing
        )
        return when if waiting.until is None else min(when, waiting.until)
