"""The order of things in one run; every piece it calls lives in its own folder.

- :mod:`~leanloop.loop.driver` — :class:`AgentLoop`: step, prepare the request inside
  the budget, ask the model, read its calls, run them, finish with an honest answer;
- :mod:`~leanloop.loop.tool_round` — one round of tool calls: guard, run, cap, prune;
- :mod:`~leanloop.loop.guard` — the identical-call guard;
- :mod:`~leanloop.loop.prefetch` — files the request names, read before the first step;
- :mod:`~leanloop.loop.profiles` and :mod:`~leanloop.loop.prompts` — the wording the
  loop adds for a model family (guidance, answer turns, the final-answer prompt).
"""

from __future__ import annotations

from leanloop.loop.driver import AgentLoop, StepSink, TextSink, TurnContext

__all__ = ["AgentLoop", "StepSink", "TextSink", "TurnContext"]
