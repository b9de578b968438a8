"""The token budget: the real window, a learned estimate, the plan, trimming, overflows.

One step of the loop uses it like this (``state``: the agent's :class:`SharedState`, by
default :data:`PROCESS_STATE`, which holds what outlives a run)::

    window = await state.windows.resolve(configured=..., provider=..., base_url=...,
                                         model_name=..., profile=model.profile)
    plan = ContextPlan.for_window(window.tokens, budget_percent=0.85, max_tokens=None)
    counter = MessageCounter(state.estimators.for_endpoint(endpoint, model_name))
    fitted = fit_messages(history, plan=plan, count=counter.count_fn(tools=schemas),
                          copies=state.trimmed)
    sent = counter.estimate(fitted.messages, schemas)
    reply = await model.ainvoke(fitted.messages)
    counter.estimator.observe(estimated_chars=sent.chars, input_tokens=reported)

and ``parse_overflow(error)`` tells a refusal for size from any other error.
"""

from __future__ import annotations

from leanloop.budget.fit import (
    TRIM_NOTE,
    FitResult,
    fit_messages,
    is_trimmed,
    trim_result,
)
from leanloop.budget.overflow import Overflow, parse_overflow
from leanloop.budget.plan import ContextPlan
from leanloop.budget.shared import PROCESS_STATE, SharedState
from leanloop.budget.tokens import (
    Estimate,
    MessageCounter,
    TokenEstimator,
    TokenEstimators,
    message_chars,
    schema_chars,
)
from leanloop.budget.window import (
    Window,
    WindowResolver,
    small_window_warning,
)

__all__ = [
    "PROCESS_STATE",
    "TRIM_NOTE",
    "ContextPlan",
    "Estimate",
    "FitResult",
    "MessageCounter",
    "Overflow",
    "SharedState",
    "TokenEstimator",
    "TokenEstimators",
    "Window",
    "WindowResolver",
    "fit_messages",
    "is_trimmed",
    "message_chars",
    "parse_overflow",
    "schema_chars",
    "small_window_warning",
    "trim_result",
]
