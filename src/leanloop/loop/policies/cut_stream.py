"""A streamed reply cut short is sent again, once (the cut-stream retry policy).

A stream that stops before the chunk saying how the reply ended (OpenAI's
``finish_reason``, Ollama's ``done_reason``, Anthropic's ``stop_reason``) carries part of a
reply, never an answer: the streaming reader raises :class:`CutStreamError`, and this
policy has the request sent again as it was. A second cut of the same request is no longer
this policy's: the run fails with it (:class:`~leanloop.exceptions.RunFailed`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import ClassVar

from langchain_core.messages import AIMessageChunk

from leanloop.exceptions import ModelError
from leanloop.loop.policies.hooks import Attempt, Policy, Recovery, Resend, StepView

__all__ = ["CutStreamConfig", "CutStreamError", "CutStreamRetry", "cut_message", "is_cut"]

_log = logging.getLogger(__name__)


class CutStreamError(ModelError, RuntimeError):
    """A streamed reply ended without the server saying it was finished.

    The connection closed (or the server stopped sending) before the chunk that carries a
    finish reason (OpenAI's ``finish_reason``, Ollama's ``done_reason``, Anthropic's
    ``stop_reason``): what arrived is part of a reply, never an answer.

    A :class:`~leanloop.exceptions.ModelError` (the model's reply cannot be used); also a
    :class:`RuntimeError`, its only base before it joined the tree (ADR 0030). The loop
    sends the request again once; a second cut becomes the run's
    :class:`~leanloop.exceptions.RunFailed`, so it never reaches a caller.
    """


_FINISH_KEYS = ("finish_reason", "done_reason", "stop_reason")
"""The response metadata that says a streamed reply was finished, per provider."""
_REPORTS_FINISH = frozenset({"BaseChatOpenAI", "ChatOllama", "ChatAnthropic"})
"""Chat model classes whose streams always end with one of :data:`_FINISH_KEYS`."""


def is_cut(model: object, whole: AIMessageChunk | None) -> bool:
    """Whether a stream of ``model`` that added up to ``whole`` ended without a finish.

    Only models whose streams always end with a finish reason are judged (an unknown model
    may never report one); their stream is cut when no chunk carried a reason.
    """
    if not any(kind.__name__ in _REPORTS_FINISH for kind in type(model).__mro__):
        return False
    metadata = whole.response_metadata if whole is not None else {}
    return not any(metadata.get(key) for key in _FINISH_KEYS)


def cut_message(whole: AIMessageChunk | None) -> str:
    """The error's words for a stream that added up to ``whole`` before it stopped."""
    got = f"{len(whole.text)} characters" if whole is not None else "nothing"
    if whole is not None and whole.tool_call_chunks:
        got += " and part of a tool call"
    return f"the streamed reply was cut off (after {got}, with no finish reason)"


@dataclass(frozen=True)
class CutStreamConfig:
    """How the cut-stream retry behaves.

    Attributes:
        resends: How many times one request whose stream was cut is sent again.
    """

    resends: int = 1

    def start(self) -> CutStreamRetry:
        """The policy for one run."""
        return CutStreamRetry(self)


class CutStreamRetry(Policy):
    """Sends a request whose stream was cut again, up to ``resends`` times; keeps no state
    (the attempt says how often this request was sent again)."""

    name: ClassVar[str] = "cut_stream"

    def __init__(self, config: CutStreamConfig) -> None:
        self.config = config

    async def after_error(
        self, view: StepView, error: Exception, attempt: Attempt
    ) -> Recovery | None:
        """:class:`Resend` for a cut stream this request has not used up its resends on."""
        if not isinstance(error, CutStreamError):
            return None
        if attempt.recoveries.count(self.name) >= self.config.resends:
            return None  # a second cut fails the run
        view.event(f"{error}; sent again")
        _log.warning("%s; sending the request again", error)
        return Resend()
