"""The loop's policies, one a module, each with its own frozen config (ADR 0034).

A policy is a rule of the run that is not the order of things. The driver owns the run's
state and asks the run's policies at fixed, typed hooks, in order; a policy reads a
:class:`~leanloop.loop.policies.hooks.StepView` and answers with a value the driver
applies.

- :mod:`~leanloop.loop.policies.hooks` — what a policy reads, the hooks it answers
  (:class:`Policy`), their decisions, and :class:`Policies` (the order they are asked in);
- :mod:`~leanloop.loop.policies.approval` — a call that waits for a person: approved,
  edited, rejected or the run paused before it (only for agents with tools that ask);
- :mod:`~leanloop.loop.policies.prefetch` — the files the request names, read as step 0;
- :mod:`~leanloop.loop.policies.cut_stream` — a cut stream is sent again, once;
- :mod:`~leanloop.loop.policies.text_fallback` — a refusal of native tools → text mode;
- :mod:`~leanloop.loop.policies.synthesis` — the budget is spent: one more round, then
  the final request;
- :mod:`~leanloop.loop.policies.repeat_guard` — a repeated call is answered from memory
  with a reminder, not run again (in the tool round, before each call);
- :mod:`~leanloop.loop.policies.answer_after_repeats` — the guard stopped the model: one
  request for the answer from what was read;
- :mod:`~leanloop.loop.policies.read_paging` — a prunable ``read_file`` page is read on
  to the end of the file (in the tool round, after the call ran);
- :mod:`~leanloop.loop.policies.answer_check` — the answer's values looked up in what
  the tools returned; in doubt, the model is asked once more from the lines in doubt.

Adding a policy: a module here with its config (a frozen dataclass whose ``start()``
makes the run's policy object) and the hooks it needs, and one line in the list
:class:`~leanloop.loop.driver.AgentLoop` builds.
"""

from __future__ import annotations

from leanloop.loop.policies.answer_after_repeats import AnswerAfterRepeatsConfig
from leanloop.loop.policies.answer_check import AnswerCheckConfig
from leanloop.loop.policies.approval import ApprovalConfig
from leanloop.loop.policies.cut_stream import CutStreamConfig, CutStreamError
from leanloop.loop.policies.hooks import Policies, Policy, PolicyConfig, StepView
from leanloop.loop.policies.prefetch import PrefetchConfig
from leanloop.loop.policies.read_paging import ReadPagingConfig
from leanloop.loop.policies.repeat_guard import RepeatGuardConfig
from leanloop.loop.policies.synthesis import SynthesisConfig
from leanloop.loop.policies.text_fallback import TextFallbackConfig

__all__ = [
    "AnswerAfterRepeatsConfig",
    "AnswerCheckConfig",
    "ApprovalConfig",
    "CutStreamConfig",
    "CutStreamError",
    "Policies",
    "Policy",
    "PolicyConfig",
    "PrefetchConfig",
    "ReadPagingConfig",
    "RepeatGuardConfig",
    "StepView",
    "SynthesisConfig",
    "TextFallbackConfig",
]
