"""Test doubles for agents built with leanloop: a scripted chat model (and, in
:mod:`leanloop.testing.server`, a scripted HTTP model server).

``class: leanloop.testing:ScriptedChatModel`` in an agents file keeps working: the names
below are re-exported from their modules.
"""

from __future__ import annotations

from leanloop.testing.scripted import RecordedRequest, ScriptedChatModel, ScriptError

__all__ = ["RecordedRequest", "ScriptError", "ScriptedChatModel"]
