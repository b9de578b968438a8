"""The agent: :class:`LLMAgent`, the LangChain ``Runnable`` a caller builds from a spec.

``runnable`` (LLMAgent, ``load_agents``), ``inputs`` (what a caller may pass in),
``conversation`` (one turn of a session: load, run, store) and ``structured`` (the typed
answer, one request after the run).

The names below are imported on first use, so importing a module of this package for one
helper does not build the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from leanloop._imports import lazy_exports

if TYPE_CHECKING:
    from leanloop.agent.runnable import LLMAgent, load_agents

__all__ = ["LLMAgent", "load_agents"]

_HOME = {
    "LLMAgent": ".runnable",
    "load_agents": ".runnable",
}

__getattr__, __dir__ = lazy_exports(__name__, _HOME)
