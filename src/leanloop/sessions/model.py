"""What a session is (turns, steps, notes) and what every store offers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, cast, runtime_checkable

from langchain_core.messages import AIMessage, BaseMessage

from leanloop.sessions.identity import AgentIdentity
from leanloop.sessions.owner import Owner

__all__ = ["Session", "SessionStore", "Turn", "TurnStatus"]

_T = TypeVar("_T")

TurnStatus = Literal["running", "done", "failed"]
"""``running`` while its process works on it (or died doing so), then ``done`` or ``failed``."""


@dataclass(frozen=True)
class Turn:
    """One question of a session and everything the run did for it.

    Attributes:
        number: 1-based, per thread.
        question: The human message that opened the turn.
        steps: ``(step number, [AI reply, *result messages])`` in step order; step 0, the
            prefetched reads, may be present.
        answer: The final answer; ``None`` unless ``status`` is ``done``.
        status: ``running``, ``done`` or ``failed``.
        owner: The process that runs (or ran) the turn.
        orphaned: ``True`` when the turn is ``running`` but its owner was found dead when
            the session was loaded: it can be resumed.

    A store hands the same object to every later load of a finished turn (its messages are
    shared: do not change them), so what is made from it once can be kept on it
    (:meth:`derived`).
    """

    number: int
    question: BaseMessage
    steps: list[tuple[int, list[BaseMessage]]]
    answer: AIMessage | None
    status: TurnStatus
    owner: Owner | None = None
    orphaned: bool = False
    _derived: dict[str, Any] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def derived(self, key: str, make: Callable[[Turn], _T]) -> _T:
        """``make(self)``, made on the first call with ``key`` and kept on the turn.

        For what a turn's user makes of it again on every later turn (its messages as
        an earlier turn of a request, its text for ``recall``): with the store's kept
        turns (:meth:`SessionStore.load`) it is made once per process, not once per turn.
        ``make`` must depend on the turn alone; two callers at once may both make it.
        """
        try:
            return cast("_T", self._derived[key])
        except KeyError:
            value = self._derived[key] = make(self)
            return value

    @property
    def last_step(self) -> int:
        """The highest stored step number, ``-1`` when no step is stored."""
        return max((number for number, _ in self.steps), default=-1)


@dataclass(frozen=True)
class Session:
    """A conversation stored under a ``thread_id``.

    Attributes:
        thread_id: The conversation's name (LangGraph's ``configurable.thread_id``).
        turns: Its turns, in order (empty for a thread never used).
        notes: The notes the model kept, in the order they were written.
        agent: The agent the thread belongs to; ``None`` for a thread never used, or one
            stored before threads recorded their agent (ADR 0024).
    """

    thread_id: str
    turns: list[Turn]
    notes: list[str]
    agent: AgentIdentity | None = None

    def unfinished(self) -> Turn | None:
        """The last turn when it must be resumed: running with a dead owner, or failed."""
        if not self.turns:
            return None
        last = self.turns[-1]
        if last.status == "failed" or (last.status == "running" and last.orphaned):
            return last
        return None


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live; :func:`leanloop.sessions.open_store` makes one from a URL.

    Every method is safe to call from several tasks, event loops and processes at once:
    the database serialises the writes (a SQLite store runs its transactions one after
    another on the connection it keeps).
    Turns of one thread are additionally serialised in-process by
    :func:`leanloop.sessions.thread_lock`.
    """

    url: str

    async def load(self, thread_id: str) -> Session:
        """The session stored under ``thread_id`` (no turns, no notes if none is)."""
        ...

    async def begin_turn(
        self, thread_id: str, question: BaseMessage, *, agent: AgentIdentity | None = None
    ) -> int:
        """Start a new turn owned by this process and return its number.

        Args:
            thread_id: The thread.
            question: The human message that opens the turn.
            agent: The agent asking; a thread that records no agent yet becomes its own;
                ``None`` neither checks nor records one.

        Raises:
            SessionAgentMismatch: The thread belongs to another agent.
            SessionBusy: A live process (or one on another host) runs a turn of the thread.
            UnfinishedTurn: The last turn is running and its owner is dead: resume it.
        """
        ...

    async def start_turn(
        self, thread_id: str, question: BaseMessage, *, agent: AgentIdentity | None = None
    ) -> tuple[Session, int]:
        """:meth:`begin_turn` and the session as it was before the new turn, at once.

        Returns:
            The session without the new turn, and the new turn's number.

        Raises:
            SessionAgentMismatch: The thread belongs to another agent.
            SessionBusy: A live process (or one on another host) runs a turn of the thread.
            UnfinishedTurn: The last turn is running and its owner is dead: resume it.
        """
        ...

    async def reopen_turn(
        self, thread_id: str, *, force: bool = False, agent: AgentIdentity | None = None
    ) -> Turn:
        """Claim the unfinished last turn (orphaned or failed) to resume it.

        Args:
            thread_id: The thread.
            force: Take the turn over even if its owner seems alive (an owner on
                another host cannot be checked: use it once that host's run is known dead).
            agent: The agent asking, as for :meth:`begin_turn` (``force`` does not
                override it).

        Raises:
            SessionAgentMismatch: The thread belongs to another agent.
            SessionError: The thread has no unfinished turn.
            SessionBusy: Its owner lives (and ``force`` is false).
        """
        ...

    async def add_step(
        self,
        thread_id: str,
        turn: int,
        step: int,
        messages: Sequence[BaseMessage],
        *,
        replace: bool = False,
    ) -> None:
        """Store one completed step of a running turn this process owns (committed on return).

        With ``replace``, a stored step of that number is replaced (a paused reply whose
        calls were decided and ran, ADR 0037).

        Raises:
            SessionError: The turn is not running here, or the step number is taken (and
                ``replace`` is false).
        """
        ...

    async def finish_turn(
        self,
        thread_id: str,
        turn: int,
        answer: AIMessage | None,
        *,
        status: Literal["done", "failed"],
    ) -> None:
        """Mark a running turn this process owns ``done`` (with its answer) or ``failed``."""
        ...

    async def add_note(self, thread_id: str, turn: int, text: str) -> None:
        """Keep a note written during ``turn``."""
        ...

    async def close(self) -> None:
        """Release what the store holds (its connection, the sessions it keeps); a later
        call opens it again."""
        ...
