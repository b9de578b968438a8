"""When the identical-call guard stops the model, ask once for the answer (ADR 0011).

The guard answers a repeated call with a reminder instead of running it again; after
``max_repeated_calls`` rounds of repeats it says the model is stuck (:class:`Round`'s
``exhausted``). With a profile that asks for it (``answer_after_repeats``, the small one)
and a result of this run still whole in view, one request without tools asks for the
answer from those results, and its plain text is the model's answer (``answer``). Without
a read, or when that reply holds no text, the run ends by ``repeated_calls`` and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from langchain_core.messages import BaseMessage

from leanloop.loop.policies.hooks import FinalRequest, Policy, Round, StepView
from leanloop.report import ToolCallRecord

__all__ = [
    "ANSWER_AFTER_REPEATS",
    "AnswerAfterRepeats",
    "AnswerAfterRepeatsConfig",
    "reads_in_view",
]

ANSWER_AFTER_REPEATS = (
    "the model repeated calls whose results it already had; asked once, without tools, "
    "for the answer from what was read"
)
"""The report's event line for the answer after repeats (ADR 0011)."""

_READ_FATES = frozenset({"kept", "cut", "pruned"})
"""What became of a result the model can still read (all of it, or what the cap or the
pruning pass left of it): the fates of :attr:`leanloop.report.ToolCallRecord.fate`."""


def reads_in_view(
    calls: Sequence[ToolCallRecord],
    resumed: Sequence[BaseMessage],
    view: Sequence[BaseMessage] | None = None,
) -> bool:
    """Whether this turn read data that the request ``view`` still carries whole.

    A result counts when its tool ran and did not fail (a repeat's reminder is not data)
    and no request view has trimmed it since; prefetched reads count like any other.
    The records of this process's ``calls`` say so. The steps an earlier process of a
    resumed turn completed have no records here: their results (``resumed``) carry
    :data:`~leanloop.loop.tool_round.READ` instead, and count when ``view`` holds them
    as they are (a trimmed copy is another message); without a view they are taken to be
    there.
    """
    if any(call.fate in _READ_FATES for call in calls):
        return True
    if view is None:
        return bool(resumed)
    ids = {id(m) for m in resumed}
    return any(id(m) in ids for m in view)


@dataclass(frozen=True)
class AnswerAfterRepeatsConfig:
    """What the policy asks.

    Attributes:
        prompt: The request's instruction (``{question}`` stands for the user's request);
            ``None``: the run's profile's ``answer_after_repeats``, where "" ends the run by
            ``repeated_calls`` without asking.
    """

    prompt: str | None = None

    def start(self) -> AnswerAfterRepeats:
        """The policy for one run."""
        return AnswerAfterRepeats(self)


class AnswerAfterRepeats(Policy):
    """Ends a run the guard stopped: with a request for the answer, or by
    ``repeated_calls``; keeps no state."""

    name: ClassVar[str] = "answer_after_repeats"

    def __init__(self, config: AnswerAfterRepeatsConfig) -> None:
        self.config = config

    def after_round(self, view: StepView, done: Round) -> FinalRequest | None:
        """The final request of a run whose round says the guard has seen enough repeats."""
        if not done.exhausted:
            return None
        prompt = self.config.prompt
        if prompt is None:
            prompt = view.profile.answer_after_repeats
        if not prompt or not reads_in_view(view.report.tool_calls, view.resumed_reads):
            return FinalRequest("repeated_calls")
        return FinalRequest(
            "answer", prompt=prompt, unanswered="repeated_calls", note=ANSWER_AFTER_REPEATS
        )
