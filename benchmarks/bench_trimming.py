"""Trimming passes on a 1,000-message history, each pass forced in turn.

The history has 499 tool steps: 497 results of 1,000 characters and, in the two newest
steps, results of 60,000 characters. The plan's trim target is placed so that trimming
stops inside pass 1, inside pass 2, or inside pass 3 (``keep_steps`` is 2), and the
setup checks that the passes that ran are exactly the ones intended.
"""

from __future__ import annotations

import functools
import math

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from benchmarks.bench_fixtures import SYSTEM_PROMPT, new_step
from leanloop.budget import ContextPlan, MessageCounter, TokenEstimator, fit_messages, trim_result

STEPS = 499
KEEP_STEPS = 2
RESULT_CHARS = 1_000
NEWEST_RESULT_CHARS = 60_000


def _trimming_history(first_index: int = 0) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(SYSTEM_PROMPT), HumanMessage("Audit the API.")]
    for step in range(STEPS):
        big = step >= STEPS - KEEP_STEPS
        chars = NEWEST_RESULT_CHARS if big else RESULT_CHARS
        messages.extend(new_step(first_index + step, result_chars=chars))
    return messages


@functools.cache
def _steady(deepest_pass: int) -> tuple[list[BaseMessage], ContextPlan, MessageCounter]:
    """A history, its plan, and a counter that has already fitted it once."""
    messages = _trimming_history()
    plan = _plan(messages, deepest_pass)
    counter = MessageCounter(TokenEstimator())
    fitted = fit_messages(messages, plan=plan, count=counter.count_fn(), keep_steps=KEEP_STEPS)
    expected = tuple(range(1, deepest_pass + 1))
    if fitted.passes != expected:
        msg = f"trimming ran passes {fitted.passes}, expected {expected}"
        raise RuntimeError(msg)
    return messages, plan, counter


def _plan(messages: list[BaseMessage], deepest_pass: int) -> ContextPlan:
    """A plan whose trim target lies between what pass ``deepest_pass - 1`` and pass
    ``deepest_pass`` can reach, so trimming stops inside that pass."""
    counter = MessageCounter(TokenEstimator())
    results = [i for i, m in enumerate(messages) if m.type == "tool"]
    newest, second = results[-1], results[-2]
    trimmed_up_to = {  # estimate once results up to each pass's reach are trimmed
        0: messages,
        1: _trimmed(messages, [i for i in results if i < second]),
        2: _trimmed(messages, [i for i in results if i < newest]),
        3: _trimmed(messages, results),
    }
    reach = {n: counter.estimate(view).tokens for n, view in trimmed_up_to.items()}
    upper = reach[deepest_pass - 1]
    if deepest_pass == 1:  # the ceiling (target / 0.65) must stay under the untrimmed size
        upper = int(upper * 0.65)
    target = (reach[deepest_pass] + upper) // 2
    # for_window: ceiling = 0.85 W - 2,048 for big windows; trim target = 65% of it.
    window = math.ceil((target / 0.65 + 2_048) / 0.85)
    return ContextPlan.for_window(window)


def _trimmed(messages: list[BaseMessage], indexes: list[int]) -> list[BaseMessage]:
    view = list(messages)
    for index in indexes:
        view[index] = trim_result(view[index])
    return view


class Trimming:
    """``fit_messages`` on the 1,000-message history, trimming through pass 1, 2 or 3.

    ``first trim``: the results have never been trimmed (fresh messages, every trimmed
    copy is made now). ``steady state``: the same history fitted again, as on every later
    step, with the trimmed copies already cached.
    """

    params = ([1, 2, 3], ["first trim", "steady state"])
    param_names = ("deepest_pass", "state")

    def setup(self, deepest_pass: int, state: str) -> None:
        messages, self.plan, counter = _steady(deepest_pass)
        if state == "first trim":
            messages = _trimming_history(first_index=_fresh_index())
            counter = MessageCounter(TokenEstimator())
            counter.estimate(messages)  # the loop has counted the history already
        self.messages, self.count = messages, counter.count_fn()

    def time_fit(self, deepest_pass: int, state: str) -> None:
        fit_messages(self.messages, plan=self.plan, count=self.count, keep_steps=KEEP_STEPS)


_counter = iter(range(10_000, 10**9, STEPS))


def _fresh_index() -> int:
    return next(_counter)
