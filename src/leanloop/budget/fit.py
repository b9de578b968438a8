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

:class:`RunFitter` is the same fitting for one run's growing history, step after step: it
keeps the view and what the passes need (the steps, the results not trimmed yet, oldest
first, the running sums) from one request to the next, so a step costs its new messages,
not the history (the loop's check, :class:`leanloop.budget.run.RunBudget`, uses it).

Nothing here outlives a run: a trimmed copy is cached only while its original lives
(the views of consecutive steps share it, which keeps counting cheap), in the
:class:`~leanloop.budget.copies.TrimmedCopies` of the run's
:class:`~leanloop.budget.shared.SharedState`, and a :class:`RunFitter` belongs to one
run's budget.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from leanloop.budget.copies import TrimmedCopies
from leanloop.budget.plan import ContextPlan
from leanloop.budget.shared import PROCESS_STATE
from leanloop.budget.tokens import MessageCounter
from leanloop.exceptions import InvalidArgument
from leanloop.protocol.marks import is_tool_result
from leanloop.pruning.markers import is_pruned

__all__ = [
    "TRIMMED_MARK",
    "TRIM_NOTE",
    "FitResult",
    "RunFitter",
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
    copies: TrimmedCopies | None = None,
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
            Used only while ``messages`` are over the ceiling; while the kept trims leave
            the view under the ceiling nothing more is trimmed, so a request trims again
            only when its new messages need the room, not at every step.
        copies: Where the trimmed copies are kept (:func:`trim_result`); ``None``: the
            process's.

    Returns:
        The view and its figures; ``over`` says whether trimming was not enough.
    """
    if keep_steps < 0:
        msg = f"trim_keep_steps must be 0 or more, got {keep_steps!r}"
        raise InvalidArgument(msg)
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
        if kept_trims and estimate <= plan.ceiling:
            # The trims kept from the last request still leave it under the ceiling:
            # trimming more would rewrite a result that request sent whole, and the
            # server would read the prompt again from there (its cached prefix).
            return FitResult(view, before, estimate, kept_trims, (), False)
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
            view, candidates, count, estimate, goal, measure=goal == ceiling, copies=copies
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
    copies: TrimmedCopies | None = None,
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
        copy = trim_result(original, copies)
        saved = count([original]) - count([copy])
        if saved <= 0:  # already about as short as its trimmed form
            continue
        view[index] = copy
        estimate -= saved
        done += 1
        exact = not measure
    return done, estimate, False


class RunFitter:
    """:func:`fit_messages` for one run's growing history, at O(new messages) a step.

    Each call returns exactly what ``fit_messages(history, plan=plan, count=
    counter.count_fn(tools=tools), keep_steps=keep_steps, enabled=enabled, start=...)``
    returns, ``start`` being the previous call's view extended by the messages added since
    when ``history`` extends the previous call's history, and ``None`` otherwise (the
    loop's check before :class:`RunFitter` existed). Instead of rebuilding and re-summing
    the view, the fitter keeps it between calls with what the passes need: the character
    sums of the history and of the view, each result's step, the distinct steps, and the
    results not trimmed yet, oldest first (raw and pruned apart). The passes always trim
    from the oldest end of those queues, so a step looks at its new messages and at the
    few results it trims, never at the whole history.

    What remains O(history) is done in C and costs microseconds at 10,000 messages: the
    identity comparison that tells an extended history from a changed one, and the copy
    of the view that each call returns. A history that does not extend the previous one
    (a message replaced, a filtered or rebuilt list) is fitted from scratch, as before.

    One fitter belongs to one run (:class:`leanloop.budget.run.RunBudget`); it holds the
    run's messages until it is dropped with the run.

    Args:
        counter: The run's counter (its cached sizes and the learned ratio).
        keep_steps: How many recent steps the first pass leaves alone (at least 0).
        enabled: ``False`` measures only (``trim_tool_results: false``).
        copies: Where the trimmed copies are kept; ``None``: the process's.
    """

    def __init__(
        self,
        counter: MessageCounter,
        *,
        keep_steps: int = 2,
        enabled: bool = True,
        copies: TrimmedCopies | None = None,
    ) -> None:
        if keep_steps < 0:
            msg = f"trim_keep_steps must be 0 or more, got {keep_steps!r}"
            raise InvalidArgument(msg)
        self.counter = counter
        self.keep_steps = keep_steps
        self.enabled = enabled
        self.copies = copies if copies is not None else PROCESS_STATE.trimmed
        self.chars = 0
        """The characters of the last view's messages (no schemas), as the counter sums them."""
        self.fresh: list[tuple[BaseMessage, BaseMessage]] = []
        """``(original, trimmed copy)`` for each result the last call trimmed, until the
        next call or :meth:`take_fresh`."""
        self._reset(())

    def take_fresh(self) -> list[tuple[BaseMessage, BaseMessage]]:
        """:attr:`fresh`, handed over: the fitter keeps no reference to it.

        The first trim of a long history trims thousands of results; a list of them kept
        until the next call would make that call pay for freeing it.
        """
        fresh, self.fresh = self.fresh, []
        return fresh

    def fit(
        self,
        history: Sequence[BaseMessage],
        *,
        plan: ContextPlan,
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> FitResult:
        """The request view of ``history`` that fits ``plan`` (see :func:`fit_messages`).

        Args:
            history: The run's history: the previous call's history plus new messages
                (anything else is fitted from scratch). Never mutated.
            plan: The window's plan for this request.
            tools: The tool schemas sent with the request (counted as ``count_fn`` does).
        """
        self.fresh = []
        try:
            return self._fit(history, plan, self.counter.schema_chars(tools))
        except BaseException:
            self._reset(())  # a half-updated state must not be extended next time
            raise

    def _fit(self, history: Sequence[BaseMessage], plan: ContextPlan, schemas: int) -> FitResult:
        messages = history if isinstance(history, list) else list(history)
        known = len(self._history)
        if len(messages) < known:
            self._reset(messages)
        else:
            self._history.extend(messages[known:])
            # List equality compares identities first, in C: cheap when nothing changed.
            if self._history == messages:
                self._ingest(known)
            else:
                self._reset(messages)
        before = self._tokens(self._history_chars, messages, schemas)
        if not self.enabled or before <= plan.ceiling:
            if self._trims:  # the previous view trimmed: this request is sent whole
                self._reset(messages)
            self.chars = self._history_chars
            return FitResult(list(messages), before, before, 0, (), before > plan.ceiling)
        view = self._view
        estimate = self._tokens(self._view_chars, view, schemas) if self._trims else before
        if self._trims and estimate <= plan.ceiling:  # see fit_messages: the kept trims do
            self.chars = self._view_chars
            return FitResult(list(view), before, estimate, self._trims, (), False)
        steps, keep, beyond = self._steps, self.keep_steps, len(view)
        newest = steps[-1] if steps else beyond
        first_kept = steps[-min(keep, len(steps))] if keep and steps else beyond
        target, ceiling = plan.trim_target, plan.ceiling
        raw, pruned = (self._raw, self._raw_never), (self._pruned, self._pruned_never)
        # (pass, queue, results before this step only, how far): fit_messages' stages.
        stages: tuple[tuple[int, tuple[deque[int], list[int]], int, int], ...] = (
            (1, raw, first_kept, target),
            (2, raw, newest, target),
            (2, pruned, newest, ceiling),
            (3, raw, beyond, ceiling),
            (3, pruned, beyond, ceiling),
        )
        trimmed, passes, spared = self._trims, [], False
        for number, (queue, unworthy), bound, goal in stages:
            if estimate <= target or (number == 3 and (spared or estimate <= ceiling)):
                break
            done, estimate, left = self._trim(
                queue, unworthy, bound, estimate, goal, measure=goal == ceiling, schemas=schemas
            )
            spared = spared or left
            if done:
                trimmed += done
                if number not in passes:
                    passes.append(number)
        after = self._tokens(self._view_chars, view, schemas) if trimmed else before
        self.chars = self._view_chars
        return FitResult(list(view), before, after, trimmed, tuple(passes), after > ceiling)

    def _trim(
        self,
        queue: deque[int],
        unworthy: list[int],
        bound: int,
        estimate: int,
        target: int,
        *,
        measure: bool,
        schemas: int,
    ) -> tuple[int, int, bool]:
        """:func:`_trim_oldest_first` over the queued results of steps before ``bound``.

        The candidates are the front of ``queue``. A result whose copy is no shorter than
        itself can never save anything; it leaves the queue for ``unworthy`` (it is still
        a candidate of :func:`fit_messages`, which only looks at the estimate there, so one
        look stands for any of them left after the last result examined).
        """
        view, step_of = self._view, self._step_of
        chars, tokens = self.counter.chars, self.counter.estimator.tokens
        done, exact, last, spared = 0, not measure, -1, False
        held: list[int] = []  # examined, not trimmed this time, still candidates later
        while queue and step_of[queue[0]] < bound:
            if estimate <= target and not exact:
                estimate, exact = self._tokens(self._view_chars, view, schemas), True
            if estimate <= target:
                spared = True
                break
            index = last = queue.popleft()
            original = view[index]
            copy = trim_result(original, self.copies)
            size, small = chars(original), chars(copy)
            saved = tokens(size + schemas) - tokens(small + schemas)
            if saved <= 0:  # already about as short as its trimmed form
                if size <= small:
                    insort(unworthy, index)
                else:
                    held.append(index)
                continue
            view[index] = copy
            self._view_chars += small - size
            self._trims += 1
            self.fresh.append((original, copy))
            estimate -= saved
            done += 1
            exact = not measure
        if not spared:
            at = bisect_right(unworthy, last)
            if at < len(unworthy) and step_of[unworthy[at]] < bound:
                if estimate <= target and not exact:
                    estimate = self._tokens(self._view_chars, view, schemas)
                spared = estimate <= target
        queue.extendleft(reversed(held))
        return done, estimate, spared

    def _tokens(self, chars: int, messages: Sequence[BaseMessage], schemas: int) -> int:
        """What ``counter.count_fn(tools=...)`` returns for ``messages`` of ``chars``."""
        if len(messages) == 1:  # count_fn's per-message path always adds the schemas
            return self.counter.estimator.tokens(chars + schemas)
        fixed = 0 if self.counter.drops_tools(messages) else schemas
        return self.counter.estimator.tokens(chars + fixed)

    def _reset(self, history: Sequence[BaseMessage]) -> None:
        """Forget the previous view: ``history`` as if it were the first call's."""
        self._history: list[BaseMessage] = list(history)
        self._view: list[BaseMessage] = []
        self._history_chars = self._view_chars = 0
        self._step_of: dict[int, int] = {}
        """Each result's index → its step (the index of the AI message before it)."""
        self._steps: list[int] = []
        """The distinct steps of the results, ascending (results only ever come later)."""
        self._step = -1  # results before any AI message form the oldest step
        self._raw: deque[int] = deque()
        """Raw results not trimmed yet, oldest first."""
        self._pruned: deque[int] = deque()
        """Pruned results not trimmed yet, oldest first."""
        self._raw_never: list[int] = []
        """Raw results whose trimmed copy is no shorter (never trimmed), ascending."""
        self._pruned_never: list[int] = []
        """Pruned results whose trimmed copy is no shorter (never trimmed), ascending."""
        self._trims = 0
        """Results of the view that are trimmed copies of the history's."""
        self._ingest(0)

    def _ingest(self, start: int) -> None:
        """Take in ``self._history[start:]``, the messages added since the last call."""
        chars = self.counter.chars
        for index in range(start, len(self._history)):
            message = self._history[index]
            self._view.append(message)
            size = chars(message)
            self._history_chars += size
            self._view_chars += size
            if isinstance(message, AIMessage):
                self._step = index
            elif is_tool_result(message):
                step = self._step_of[index] = self._step
                if not self._steps or self._steps[-1] != step:
                    self._steps.append(step)
                if not is_trimmed(message):
                    (self._pruned if is_pruned(message) else self._raw).append(index)


def trim_result(message: BaseMessage, copies: TrimmedCopies | None = None) -> BaseMessage:
    """A trimmed copy of a tool result: its first line and :data:`TRIM_NOTE`.

    The copy is kept in ``copies`` (``None``: the process's,
    :data:`~leanloop.budget.shared.PROCESS_STATE`) for as long as the original lives, so
    the views of consecutive steps share it (which keeps incremental counting cheap); an
    already trimmed message is returned as is.
    """
    if is_trimmed(message):
        return message
    cache = copies if copies is not None else PROCESS_STATE.trimmed
    hit = cache.get(message)
    if hit is not None:
        return hit
    first = _first_line(message.text)
    copy = message.model_copy(
        update={
            "content": f"{first}\n{TRIM_NOTE}" if first else TRIM_NOTE,
            "response_metadata": {**message.response_metadata, TRIMMED_MARK: True},
            "additional_kwargs": dict(message.additional_kwargs),
        }
    )
    cache.put(message, copy)
    return copy


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:FIRST_LINE_MAX]
    return ""
