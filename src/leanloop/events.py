"""Custom events the loop sends through LangChain's callback system.

Every event is visible to any callback handler (``on_custom_event``) and in
``agent.astream_events(..., version="v2")`` as ``{"event": "on_custom_event", "name": ...}``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackManager
from langchain_core.callbacks.manager import adispatch_custom_event
from langchain_core.runnables import RunnableConfig

__all__ = [
    "ANSWER_CHECKED",
    "BUDGET",
    "FILE_EDITED",
    "OVERFLOW_RECOVERED",
    "PRUNED",
    "PRUNE_PROGRESS",
    "STEP",
    "SYNTHESIS",
    "TOOL_MODE_CHANGED",
    "TRIMMED",
    "EventRecorder",
    "emit",
]

STEP: Final = "leanloop.step"
"""After each tool round: ``step``, ``calls`` (name, args, chars_out)."""
BUDGET: Final = "leanloop.budget"
"""Before every request: ``estimate``, ``ceiling``, ``window``, ``window_source``,
``chars_per_token``."""
TRIMMED: Final = "leanloop.trimmed"
"""When results were trimmed in the request view: ``count``, ``tokens_before``,
``tokens_after``, ``pass``."""
SYNTHESIS: Final = "leanloop.synthesis"
"""When the budget-exhausted synthesis flow starts: ``reason``."""
OVERFLOW_RECOVERED: Final = "leanloop.overflow_recovered"
"""When a request refused for its size was trimmed and retried."""
PRUNED: Final = "leanloop.pruned"
"""After a pruning pass: ``tool``, ``chars_raw``, ``chars_out``, ``chunks``, ``seconds``,
``dropped_lines``, ``fallback``, ``unread`` (``[first, last, reason]`` line ranges no
chunk read), ``reused`` (the extract of an identical output pruned earlier in the run)."""
PRUNE_PROGRESS: Final = "leanloop.prune_progress"
"""As each chunk of a chunked pruning pass finishes: ``step``, ``tool``, ``done``,
``chunks``."""
TOOL_MODE_CHANGED: Final = "leanloop.tool_mode_changed"
"""When the loop falls back from native tool calling to the text protocol."""
ANSWER_CHECKED: Final = "leanloop.answer_checked"
"""When the answer's values were checked against what the tools returned (the report's
``answer_check``): ``step``, ``verdict``, ``check``."""

FILE_EDITED: Final = "leanloop.file_edited"
"""After an edit tool changed a file (``write_file``, ``str_replace``, ``apply_patch``,
``undo_edit`` …): ``tool``, ``path``, ``before_sha256`` and ``after_sha256`` (``None`` for
no file), ``diff`` (the whole unified diff; the model saw it capped), ``number`` (the
entry in the run's edit journal)."""

_log = logging.getLogger(__name__)


async def emit(name: str, data: Mapping[str, Any], config: RunnableConfig | None) -> None:
    """Dispatch one custom event to the run's callbacks; never fails the run."""
    callbacks = (config or {}).get("callbacks")
    if isinstance(callbacks, BaseCallbackManager) and not callbacks.handlers:
        return  # nobody listens (tracers count as handlers): skip building a manager
    try:
        await adispatch_custom_event(name, dict(data), config=config)
    except RuntimeError:
        # Only raised when there is no parent run (the loop was driven outside a Runnable
        # call); events are an observation channel, so losing one must not stop the run.
        _log.debug("no run to attach event %s to", name)


class EventRecorder(AsyncCallbackHandler):
    """A callback handler that keeps the custom events of a run, in order.

    Pass it in a run's config (``{"callbacks": [recorder]}``) and read ``events`` after
    the run; subclasses act on each event as it comes by overriding :meth:`record`.
    """

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    async def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Receive one custom event from LangChain's callback system."""
        await self.record(name, dict(data))

    async def record(self, name: str, data: dict[str, Any]) -> None:
        """Keep one event; override to act on it as it comes."""
        self.events.append((name, data))

    def named(self, name: str) -> list[dict[str, Any]]:
        """The payloads of the events called ``name``, in order."""
        return [data for event, data in self.events if event == name]
