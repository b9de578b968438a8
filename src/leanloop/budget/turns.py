"""Earlier turns of a session in the request view: the oldest whole turns go first.

A session's request carries the turns before the current one. Trimming (:mod:`fit`)
already shortens their tool results first, since they are the oldest. When the view is
still over the ceiling, whole earlier turns are left out of the view, oldest first: a
turn goes with its question, its calls and results and its answer, so no call is ever
separated from its result. The current turn is never left out. The first message (the
system prompt) then says, in one line, how many turns are omitted and how to get them
back (the session's ``recall`` tool).

Omission only grows during a run: a turn left out of one request stays out of the
next, which keeps the view's prefix stable for the fitter (a step then costs what it
added). The stored history is never changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, SystemMessage

__all__ = ["OMITTED_NOTE", "EarlierTurns"]

OMITTED_NOTE = (
    "[{count} earlier turns of this conversation are omitted to save context; "
    "call recall(query) to bring back what was said in them]"
)
_NO_RECALL_NOTE = "[{count} earlier turns of this conversation are omitted to save context]"


@dataclass
class EarlierTurns:
    """Where the earlier turns sit in a run's history, and how many the view leaves out.

    Args:
        starts: The history index of each earlier turn's first message, in order.
        end: The history index where the current turn starts.
        recall: Whether the model has the ``recall`` tool (the note names it).
    """

    starts: list[int]
    end: int
    recall: bool = True
    omitted: int = 0
    """How many of the oldest earlier turns the view leaves out (only grows)."""
    _head: tuple[int, BaseMessage] | None = field(default=None, repr=False)

    def view(self, history: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
        """``history`` without the omitted turns, the first message saying so."""
        if not self.omitted:
            return history
        first = self.starts[0]
        cut = self.starts[self.omitted] if self.omitted < len(self.starts) else self.end
        system = first > 0 and isinstance(history[0], SystemMessage)
        head = history[1:first] if system else history[:first]
        return [self._noted(history[0] if system else None), *head, *history[cut:]]

    def omit_for(
        self, history: Sequence[BaseMessage], excess_chars: int, chars: Callable[[BaseMessage], int]
    ) -> bool:
        """Leave out enough more of the oldest turns to save ``excess_chars``; at least one.

        Returns:
            Whether another turn was left out (``False``: every earlier turn already is).
        """
        total = len(self.starts)
        if self.omitted >= total:
            return False
        saved = 0
        while self.omitted < total and (saved < excess_chars or not saved):
            start = self.starts[self.omitted]
            stop = self.starts[self.omitted + 1] if self.omitted + 1 < total else self.end
            saved += sum(chars(message) for message in history[start:stop])
            self.omitted += 1
        return True

    def _noted(self, base: BaseMessage | None) -> BaseMessage:
        """The system message with the omission line; the same object while it holds.

        The same object from one request to the next keeps the view an extension of the
        previous one, so the fitter and the counter pay only for new messages.
        """
        note = (OMITTED_NOTE if self.recall else _NO_RECALL_NOTE).format(count=self.omitted)
        key = hash((id(base), self.omitted))
        if self._head is not None and self._head[0] == key:
            return self._head[1]
        message = SystemMessage(content=f"{base.text}\n\n{note}" if base else note)
        self._head = (key, message)
        return message
