"""Fit a conversation under the plan's ceiling by trimming old tool results in a view.

The stored history is never edited: :func:`fit_messages` returns a *request view*, a new
list holding the same messages except for trimmed copies of some tool results, and the loop
rebuilds the view before every request. Nothing is dropped, so a tool call and its result
can never be separated, and system, human and AI messages are never altered.

Trimming runs only when the estimate is over the ceiling, and then in three passes, each
oldest first, each stopping as soon as the estimate is at or under its goal:

1. raw results of steps older than the ``keep_steps`` most recent, down to the trim target;
2. raw results of any step but the newest, down to the trim target; then pruned results of
   any step but the newest, only as far as the ceiling;
3. only when no pruned result of an older step was spared: the newest step's results,
   raw ones down to the trim target, pruned ones only as far as the ceiling.

A *step* is an AI message and the results that follow it. A *result* is a
``ToolMessage``, or a human message marked ``additional_kwargs["leanloop_tool_result"]``
(how text mode hands a result back). A trimmed result keeps its first line, so the model
still knows what it asked for, and says how to get the rest back.

A *pruned* result is the extract the pruning pass made of a tool output (its text holds a
line starting with ``[PRUNE_INFO_START]``); any other result is *raw*. The trim target
is headroom, so that trimming is not needed again a step later, and only raw results pay
for it. A pruned result is already small and holds exactly the lines the model asked
for; trimming it saves little (a few hundred characters) and keeps nothing useful (its
first line is the marker), so it is trimmed only when the request would otherwise stay
over the ceiling. For the same reason the newest step, whose results the model has not
seen yet, is not trimmed for headroom while an older pruned result was spared. (On the
context suite at 4,096 tokens, trimming every result oldest first down to the target cut
five pruned pages, 130-170 tokens saved each, two of them holding answers the reader
then could not give.)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage

from leanloop.budget.plan import ContextPlan
from leanloop.protocol.marks import is_tool_result
from leanloop.pruning.markers import is_pruned

__all__ = [
    "TRIMMED_MARK",
    "TRIM_NOTE",
    "FitResult",
    "fit_messages",
    "is_trimmed",
    "trim_result",
]

TRIM_NOTE = "[trimmed to save context — run the tool again if you need it]"
TRIMMED_MARK = "leanloop_trimmed"
"""Key set to ``True`` in a trimmed copy's ``response_metadata``."""
"""Key in a human message's ``additional_kwargs`` marking a text-mode tool result."""
FIRST_LINE_MAX = 160

Count = Callable[[Sequence[BaseMessage]], int]


@dataclass(frozen=True)
class FitResult:
    """The request view and what fitting did.

    Attributes:
        messages: The request view: every message, some results trimmed.
        tokens_before: The estimate of the untrimmed messages.
        tokens_after: The estimate of the view.
        trimmed: How many results this call trimmed, plus those it kept trimmed from
            ``start``.
        passes: The passes (1, 2, 3) that trimmed at least one result.
        over: Whether the view is still above the ceiling.
    """

    messages: list[BaseMessage]
    tokens_before: int
    tokens_after: int
    trimmed: int
    passes: tuple[int, ...]
    over: bool

    @property
    def tokens_saved(self) -> int:
        """Tokens the trimming saved."""
        return self.tokens_before - self.tokens_after


def is_trimmed(message: BaseMessage) -> bool:
    """Whether ``message`` is already a trimmed copy."""
    return bool(message.response_metadata.get(TRIMMED_MARK))


def fit_messages(
    messages: Sequence[BaseMessage],
    *,
    plan: ContextPlan,
    count: Count,
    keep_steps: int = 2,
    enabled: bool = True,
    start: Sequence[BaseMessage] | None = None,
) -> FitResult:
    """Build the request view of ``messages`` that fits ``plan``.

    Args:
        messages: The stored history (never mutated).
        plan: The window's plan (its ``ceiling`` and ``trim_target`` are used).
        count: Estimates the tokens of a list of messages, including whatever else the
            request carries (tool schemas, extra prompts), so deltas of single messages are
            savings; an incremental counter keeps this cheap.
        keep_steps: How many recent steps the first pass leaves alone (at least 0).
        enabled: ``False`` measures only (``trim_tool_results: false``).
        start: The previous request's view extended by the messages added since (same
            length as ``messages``): results trimmed before stay trimmed, so the passes
            only look at what is new, and the request's prefix stays the same from one
            request to the next (servers that cache prompt prefixes keep their cache).
            Used only while ``messages`` are over the ceiling.

    Returns:
        The view and its figures; ``over`` says whether trimming was not enough.
    """
    if keep_steps < 0:
        msg = f"trim_keep_steps must be 0 or more, got {keep_steps!r}"
        raise ValueError(msg)
    view = list(messages)
    before = count(view)
    if not enabled or before <= plan.ceiling:
        return FitResult(view, before, before, 0, (), before > plan.ceiling)
    estimate, kept_trims = before, 0
    if start is not None and len(start) == len(view):
        view = list(start)
        kept_trims = sum(
            1 for v, m in zip(view, messages, strict=True) if v is not m and is_trimmed(v)
        )
        estimate = count(view) if kept_trims else before
    steps = _step_of_each_result(view)
    ordered = sorted(set(steps.values()))
    kept = set(ordered[-keep_steps:]) if keep_steps else set()
    newest = ordered[-1:]
    whole = [i for i in steps if not is_trimmed(view[i])]
    pruned = {i for i in whole if is_pruned(view[i])}
    target, ceiling = plan.trim_target, plan.ceiling
    # (pass, which results, how far): raw results pay for the headroom down to the trim
    # target; pruned ones are trimmed only to get under the ceiling (module docstring).
    stages: tuple[tuple[int, Callable[[int], bool], int], ...] = (
        (1, lambda i: i not in pruned and steps[i] not in kept, target),
        (2, lambda i: i not in pruned and steps[i] not in newest, target),
        (2, lambda i: i in pruned and steps[i] not in newest, ceiling),
        # The newest step's results are what the model is about to read: they are trimmed
        # only when nothing else gets the request under the ceiling, never for headroom.
        (3, lambda i: i not in pruned, ceiling),
        (3, lambda i: i in pruned, ceiling),
    )
    trimmed, passes, spared = kept_trims, [], False
    for number, rule, goal in stages:
        # A raw stage that reaches its goal (the target) ends the loop, so results left
        # whole are pruned ones spared at the ceiling: then the newest step is spared too.
        if estimate <= target or (number == 3 and (spared or estimate <= ceiling)):
            break
        candidates = [i for i in whole if rule(i) and not is_trimmed(view[i])]
        done, estimate, left = _trim_oldest_first(
            view, candidates, count, estimate, goal, measure=goal == ceiling
        )
        spared = spared or left
        if done:
            trimmed += done
            if number not in passes:
                passes.append(number)
    after = count(view) if trimmed else before
    return FitResult(view, before, after, trimmed, tuple(passes), after > plan.ceiling)


def _step_of_each_result(view: Sequence[BaseMessage]) -> dict[int, int]:
    """Map each result's index to its step: the index of the AI message before it."""
    steps: dict[int, int] = {}
    step = -1  # results before any AI message form the oldest step
    for index, message in enumerate(view):
        if isinstance(message, AIMessage):
            step = index
        elif is_tool_result(message):
            steps[index] = step
    return steps


def _trim_oldest_first(
    view: list[BaseMessage],
    candidates: list[int],
    count: Count,
    estimate: int,
    target: int,
    *,
    measure: bool = False,
) -> tuple[int, int, bool]:
    """Trim ``view[i]`` for each candidate in order until ``estimate`` reaches ``target``.

    Savings are measured per message, and each may be a token off the view's own count
    (both round up): the trim target's slack absorbs that, the ceiling has none, so with
    ``measure`` the view is counted whole before stopping at ``target``.

    Returns how many it trimmed, the new estimate, and whether candidates were left whole
    because the target was reached first.
    """
    done, exact = 0, not measure
    for index in candidates:
        if estimate <= target and not exact:
            estimate, exact = count(view), True
        if estimate <= target:
            return done, estimate, True
        original = view[index]
        copy = trim_result(original)
        saved = count([original]) - count([copy])
        if saved <= 0:  # already about as short as its trimmed form
            continue
        view[index] = copy
        estimate -= saved
        done += 1
        exact = not measure
    return done, estimate, False


def trim_result(message: BaseMessage) -> BaseMessage:
    """A trimmed copy of a tool result: its first line and :data:`TRIM_NOTE`.

    The copy is cached per original, so the views of consecutive steps share it (which
    keeps incremental counting cheap); an already trimmed message is returned as is.
    """
    if is_trimmed(message):
        return message
    with _cache_lock:
        hit = _trim_cache.get(id(message))
        if hit is not None and hit[0] is message:
            _trim_cache.move_to_end(id(message))
            return hit[1]
    first = _first_line(message.text)
    copy = message.model_copy(
        update={
            "content": f"{first}\n{TRIM_NOTE}" if first else TRIM_NOTE,
            "response_metadata": {**message.response_metadata, TRIMMED_MARK: True},
            "additional_kwargs": dict(message.additional_kwargs),
        }
    )
    with _cache_lock:
        # The strong reference to the original keeps its id() from being reused meanwhile.
        _trim_cache[id(message)] = (message, copy)
        if len(_trim_cache) > _TRIM_CACHE_MAX:
            _trim_cache.popitem(last=False)
    return copy


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:FIRST_LINE_MAX]
    return ""


_TRIM_CACHE_MAX = 4_096
_trim_cache: OrderedDict[int, tuple[BaseMessage, BaseMessage]] = OrderedDict()
_cache_lock = threading.Lock()
