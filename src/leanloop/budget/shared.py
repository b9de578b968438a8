"""What outlives a run: the budget's caches, and the clock they age on, in one object.

A run's budget asks four things that are worth keeping from one run to the next:

- ``windows``: what each server said of its context window (:class:`WindowResolver`:
  answers for 30 s, silence for 3 s, one probe at a time per endpoint and model);
- ``estimators``: what runs learned of each model's characters per token from the
  server's counts (:class:`TokenEstimators`);
- ``server_tokens``: what a llama.cpp server's ``/tokenize`` said, and which servers have
  none (:class:`ServerTokenCounter`);
- ``trimmed``: the trimmed copy of each tool result, while the result lives
  (:class:`TrimmedCopies`).

:class:`SharedState` holds them, with ``clock``, the monotonic seconds the caches' ages
are read on. Every agent of a process shares :data:`PROCESS_STATE` unless it is given its
own (``LLMAgent(..., shared_state=SharedState())``); everything its runs (and its
sub-agents' runs) keep beyond a run is then in that object, so two agents with states of
their own learn nothing from each other, and a test starts from nothing without
inventing a model name (ADR 0038).

A run's own times are not on ``clock``: ``elapsed_s``, each request's and tool call's
``seconds``, and every time limit (``tool_timeout``, the pruning pass's) read the running
event loop's clock, which ``asyncio.timeout`` reads too (ADR 0027). ``clock`` ages what
several event loops and threads share, which no one loop's clock can.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from leanloop.budget.copies import TrimmedCopies
from leanloop.budget.server_tokens import ServerTokenCounter
from leanloop.budget.tokens import TokenEstimators
from leanloop.budget.window import WindowResolver

__all__ = ["PROCESS_STATE", "Clock", "SharedState"]

Clock = Callable[[], float]
"""Monotonic seconds."""


class SharedState:
    """The budget's caches and their clock (see the module docstring).

    Args:
        clock: Monotonic seconds the caches' ages are read on; a fake one in tests.
        windows: The window resolver; by default a new one on ``clock``.
        estimators: The token estimators; by default new ones (nothing learned).
        server_tokens: The ``/tokenize`` counter; by default a new one on ``clock``.
        trimmed: The trimmed copies; by default a new, empty cache.
    """

    __slots__ = ("clock", "estimators", "server_tokens", "trimmed", "windows")

    def __init__(
        self,
        *,
        clock: Clock = time.monotonic,
        windows: WindowResolver | None = None,
        estimators: TokenEstimators | None = None,
        server_tokens: ServerTokenCounter | None = None,
        trimmed: TrimmedCopies | None = None,
    ) -> None:
        self.clock = clock
        self.windows = windows if windows is not None else WindowResolver(clock=clock)
        self.estimators = estimators if estimators is not None else TokenEstimators()
        self.server_tokens = (
            server_tokens if server_tokens is not None else ServerTokenCounter(clock=clock)
        )
        self.trimmed = trimmed if trimmed is not None else TrimmedCopies()

    def with_own_estimators(self) -> SharedState:
        """This state with token estimators of its own: its runs learn from nothing and
        teach no one, while the servers' answers and the trimmed copies stay shared
        (``leanloop batch`` gives each task one, ADR 0029)."""
        return SharedState(
            clock=self.clock,
            windows=self.windows,
            server_tokens=self.server_tokens,
            trimmed=self.trimmed,
        )

    def clear(self) -> None:
        """Forget everything: the servers' answers, what runs learned, the copies."""
        self.windows.clear()
        self.estimators.clear()
        self.server_tokens.clear()
        self.trimmed.clear()


PROCESS_STATE = SharedState()
"""The process's state: every agent given none of its own shares it."""
