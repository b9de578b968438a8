"""The order of things in one run; every piece it calls lives in its own folder.

- :mod:`~leanloop.loop.driver` — :class:`AgentLoop`: step, prepare the request inside
  the budget, ask the model, read its calls, run them, finish with an honest answer;
  the driver orders the policies and owns the run's state;
- :mod:`~leanloop.loop.ending` — the final, tool-less request and the answer's report;
- :mod:`~leanloop.loop.requests` — one request: its view inside the budget, sending it,
  recovering (the budget's refusal for size; the policies' recoveries);
- :mod:`~leanloop.loop.run_state` — what the loop keeps of one run, and the view of it
  the policies read;
- :mod:`~leanloop.loop.streaming` — a reply's text passed on as it streams;
- :mod:`~leanloop.loop.policies` — the policies, one a module, at typed hooks (ADR 0034);
- :mod:`~leanloop.loop.tool_round` — one round of tool calls: ask the policies, run,
  cap, prune;
- :mod:`~leanloop.loop.guard` — the identical-call guard's words and keys (its rule is
  the policy :mod:`~leanloop.loop.policies.repeat_guard`);
- :mod:`~leanloop.loop.prefetch` — files the request names, looked up once per run;
- :mod:`~leanloop.loop.profiles` and :mod:`~leanloop.loop.prompts` — the wording the
  loop adds for a model family (guidance, answer turns, the final-answer prompt).
"""

from __future__ import annotations

from leanloop.loop.driver import AgentLoop, StepSink, TextSink, TurnContext

__all__ = ["AgentLoop", "StepSink", "TextSink", "TurnContext"]
