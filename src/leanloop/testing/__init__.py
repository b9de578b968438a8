"""Test doubles for agents built with leanloop: a scripted chat model (here) and a scripted
HTTP model server (:mod:`leanloop.testing.server`: OpenAI-compatible, llama.cpp and Ollama
dialects with fault modes; ``python -m leanloop.testing.server`` out of process).

``class: leanloop.testing:ScriptedChatModel`` in an agents file keeps working: the names
below are re-exported from :mod:`leanloop.testing.scripted`. The server is not re-exported:
the package would then import it, and ``python -m leanloop.testing.server`` warn that its
module was imported before it ran; nor lazily with a module ``__getattr__``, which would hide
this package's names from the agents-file check that reads them without importing.
"""

from __future__ import annotations

from leanloop.testing.scripted import RecordedRequest, ScriptedChatModel, ScriptError

__all__ = ["RecordedRequest", "ScriptError", "ScriptedChatModel"]
