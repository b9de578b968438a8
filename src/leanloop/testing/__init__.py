"""Test doubles for agents built with leanloop: a scripted chat model
(:mod:`leanloop.testing.scripted`) and a scripted HTTP model server
(:mod:`leanloop.testing.server`: OpenAI-compatible, llama.cpp and Ollama dialects with fault
modes; ``python -m leanloop.testing.server`` out of process).

``class: leanloop.testing:ScriptedChatModel`` in an agents file keeps working: the names
below come from :mod:`leanloop.testing.scripted`, imported on first use. Importing the
package stays cheap (no LangChain), since every process the fake server runs in imports
it; the agents-file check reads the names without importing them (``__all__`` and the
type checkers' imports below).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from leanloop.testing.scripted import RecordedRequest, ScriptedChatModel, ScriptError

__all__ = ["RecordedRequest", "ScriptError", "ScriptedChatModel"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from leanloop.testing import scripted  # noqa: PLC0415 - LangChain, on first use

        return getattr(scripted, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
