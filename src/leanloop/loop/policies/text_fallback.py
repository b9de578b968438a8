"""A server that refuses native tools is spoken to in text mode (the text-mode fallback).

Under ``tool_mode: auto`` the loop starts with native tool calls when the model's class
has them; a server that refuses a request for its tools (llama.cpp without ``--jinja``, a
model without a tool template: :func:`~leanloop.protocol.is_tools_refusal`) before any
round ran is answered by going on in text mode: the calls are written in the reply, the
tool list lives in the system prompt (ADR 0007). The switch happens once per run, before
the model's first round: after that, the conversation already holds native calls.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import ClassVar

from leanloop import events
from leanloop.loop.policies.hooks import (
    Attempt,
    Policy,
    Recovery,
    StepView,
    SwitchToText,
    error_line,
)
from leanloop.protocol import is_tools_refusal
from leanloop.spec.types import ToolMode

__all__ = ["TextFallback", "TextFallbackConfig"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TextFallbackConfig:
    """When the fallback applies.

    Attributes:
        tool_mode: The agent's ``tool_mode``; only ``auto`` falls back (``native`` and
            ``text`` were chosen by the user).
    """

    tool_mode: ToolMode = "auto"

    def start(self) -> TextFallback:
        """The policy for one run."""
        return TextFallback(self)


class TextFallback(Policy):
    """Answers a refusal of native tools with :class:`SwitchToText`; keeps no state (the
    view's mode says whether the run switched already)."""

    name: ClassVar[str] = "text_fallback"

    def __init__(self, config: TextFallbackConfig) -> None:
        self.config = config

    async def after_error(
        self, view: StepView, error: Exception, attempt: Attempt
    ) -> Recovery | None:
        """:class:`SwitchToText` when a native request before any round was refused for
        its tools; the report, the log and a ``leanloop.tool_mode`` event say so."""
        del attempt
        if not (
            self.config.tool_mode == "auto"
            and view.mode == "native"
            and not view.tools_ran
            and is_tools_refusal(error)
        ):
            return None
        view.event("server refused tools; switched to text mode")
        reason = error_line(error)
        _log.warning("the server refused native tools (%s); switching to text mode", reason)
        await events.emit(
            events.TOOL_MODE_CHANGED,
            {"from": "native", "to": "text", "reason": reason},
            view.config,
        )
        return SwitchToText()
