"""The context budget of one run: the window, the plan, the estimate, the request view.

``RunBudget`` and the loop hold one conversation per step (ADR 0028): before a request
the loop asks :meth:`RunBudget.prepare_step` ("what do I send, and does it fit?"; after a
refusal for size, "and now smaller"), after the reply it tells :meth:`RunBudget.observe`
("this is what came back") and is told what the round's results may take
(:class:`Limits`). :meth:`RunBudget.open` starts the conversation: the windows, the
model as the run sends it, the limits of the prefetched reads. The budget owns the
figures, the request records, the once-per-run warnings and the budget, trimming and
overflow events; the arithmetic lives in :mod:`leanloop.budget`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, convert_to_openai_messages
from langchain_core.runnables import RunnableConfig

from leanloop import events
from leanloop.budget import (
    ContextPlan,
    MessageCounter,
    Overflow,
    Window,
    small_window_warning,
)
from leanloop.budget.fit import RunFitter
from leanloop.budget.server_tokens import tokenize_root
from leanloop.budget.shared import PROCESS_STATE, SharedState
from leanloop.budget.tokens import is_answer_turn
from leanloop.budget.turns import EarlierTurns
from leanloop.budget.window import WindowResolver
from leanloop.cache_usage import prompt_usage
from leanloop.report import RequestRecord, RunReport
from leanloop.spec.types import AgentSpec, ModelSpec

__all__ = ["Limits", "Observed", "Prepared", "RunBudget", "resolve_window", "sized_model"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    """One request, ready to send: the view and its estimated size."""

    messages: list[BaseMessage]
    tools: Sequence[Mapping[str, Any]]
    chars: int
    tokens: int
    over_budget: bool
    """Above the plan's ceiling even after trimming."""
    fits_window: bool
    """Small enough to send at all: the estimate plus the reply reserve fit the window."""
    counted: bool = False
    """``tokens`` is the server's own count of this request, not the estimate."""
    char_estimate: int | None = None
    """The character estimate of this view (``tokens`` unless the server counted it)."""


@dataclass(frozen=True)
class Limits:
    """What one round of tool results may take, as the budget stands now."""

    result_cap: int
    """The most characters one result may keep in this window."""
    room: int | None
    """Characters the next request has left for the round's results (may be negative);
    ``None`` when the loop did not ask (only the pruning pass's budget trigger reads it)."""
    chars_per_token: float
    """The estimator's ratio when the limits were set."""


@dataclass(frozen=True)
class Observed:
    """What the budget made of one reply."""

    input_tokens: int | None
    """The prompt size the server reported, if it did."""
    limits: Limits
    """What the round of results that follows the reply may take."""


async def resolve_window(
    spec: ModelSpec, model: BaseChatModel, *, resolver: WindowResolver | None = None
) -> Window:
    """The model's context window and where it came from (config ▸ server ▸ profile ▸ default).

    For Ollama, ``kwargs.num_ctx`` is configuration too: it is the window the server runs at.
    ``resolver`` asks the servers and keeps their answers (``None``: the process's, that of
    :data:`~leanloop.budget.shared.PROCESS_STATE`).
    """
    profile = getattr(model, "profile", None)
    resolver = resolver if resolver is not None else PROCESS_STATE.windows
    return await resolver.resolve(
        configured=_configured_window(spec),
        provider=spec.provider,
        base_url=spec.base_url,
        model_name=spec.model,
        profile=profile if isinstance(profile, Mapping) else None,
        api_key=spec.api_key,
    )


def sized_model(spec: ModelSpec, model: BaseChatModel, window: Window) -> BaseChatModel:
    """``model`` as one run sends its requests: for Ollama, asking for ``window`` tokens.

    Ollama loads a model at the ``num_ctx`` each request carries (its own default, 2,048 or
    4,096, when none does) and cuts the front of a longer prompt without a word, so every
    request of a run carries the window the budget was planned for. The copy shares the
    model's HTTP clients; other providers, and models without a ``num_ctx`` field (one a
    caller built), are returned as they are.
    """
    if spec.provider != "ollama" or "num_ctx" not in type(model).model_fields:
        return model
    if getattr(model, "num_ctx", None) == window.tokens:
        return model
    return model.model_copy(update={"num_ctx": window.tokens})


def _configured_window(spec: ModelSpec) -> int | None:
    if spec.context_window is not None or spec.provider != "ollama":
        return spec.context_window
    num_ctx = spec.kwargs.get("num_ctx")
    if isinstance(num_ctx, int) and not isinstance(num_ctx, bool) and num_ctx > 0:
        return num_ctx
    return None


def _endpoint(spec: ModelSpec, model: BaseChatModel) -> tuple[str, str]:
    endpoint = spec.base_url or spec.provider or spec.class_path or type(model).__name__
    name = spec.model or str(getattr(model, "model_name", "") or getattr(model, "model", ""))
    return endpoint, name


class RunBudget:
    """The budget of one run (see the module docstring)."""

    def __init__(
        self,
        *,
        spec: AgentSpec,
        window: Window,
        model: BaseChatModel,
        report: RunReport,
        config: RunnableConfig,
        shared_state: SharedState = PROCESS_STATE,
    ) -> None:
        self.spec = spec
        self.shared = shared_state
        """What outlives the run: the estimators it learns into, the servers' answers,
        the trimmed copies."""
        self.window = window
        self.plan = ContextPlan.for_window(
            window.tokens,
            budget_percent=spec.token_budget_percent,
            max_tokens=spec.model.max_tokens,
        )
        estimators = shared_state.estimators
        self.counter = MessageCounter(estimators.for_endpoint(*_endpoint(spec.model, model)))
        if window.drops_tools_on_answer_turns:
            self.counter.estimator.drops_tools_on_answer_turns = True
        self.report = report
        self.config = config
        self._warned = False
        self._trimmed: set[int] = set()
        self._fitter = RunFitter(
            self.counter,
            keep_steps=spec.trim_keep_steps,
            enabled=spec.trim_tool_results,
            copies=shared_state.trimmed,
        )
        """The request view from one step to the next, and the run's trimmed copies."""
        # A llama.cpp server of our own counts a request exactly (/apply-template and
        # /tokenize); Ollama has neither, hosted APIs are never asked.
        own = spec.model.provider != "ollama" and tokenize_root(spec.model.base_url)
        self._exact_url: str | None = spec.model.base_url if own else None
        self._exact_misses = 0
        self.turns: EarlierTurns | None = None
        """A session's earlier turns in the history (set by :meth:`open`), else ``None``."""
        self.sized: BaseChatModel = model
        """The chat model as this run sends its requests (set by :meth:`open`)."""
        self.pruning: tuple[BaseChatModel, int] | None = None
        """The pruning pass's model as this run sends it and the window it plans for (set
        by :meth:`open`)."""
        self.limits = Limits(self.result_cap_chars(), None, self.chars_per_token)
        """What a round of results may take: for the opening after :meth:`open`, after
        each reply once :meth:`observe` saw it."""
        report.window, report.window_source = window.tokens, window.source
        report.window_note = window.note
        report.chars_per_token = round(self.chars_per_token, 3)
        if warning := small_window_warning(window):
            _log.warning(warning)

    @classmethod
    async def open(
        cls,
        *,
        spec: AgentSpec,
        model: BaseChatModel,
        pruning_model: BaseChatModel,
        report: RunReport,
        config: RunnableConfig,
        earlier: tuple[Sequence[int], int, bool] = ((), 0, False),
        opening: Sequence[BaseMessage] = (),
        tools: Sequence[Mapping[str, Any]] = (),
        room: bool = False,
        shared_state: SharedState = PROCESS_STATE,
    ) -> RunBudget:
        """The budget of a run that starts with ``opening``: the first word of the run.

        Resolves the window (and the pruning model's, when it has its own), sizes the
        models as the run sends them (:attr:`sized`, :attr:`pruning`) and sets the
        :attr:`limits` of the reads prefetched before the first request.

        Args:
            spec: The agent.
            model: The agent's chat model as built.
            pruning_model: The pruning pass's chat model as built (``model`` when it has
                none of its own).
            report: The run's report, which the budget keeps its figures in.
            config: The run's config, for the budget's events.
            earlier: A session's earlier turns in the history: where each starts in the
                opening, where the current turn starts, and whether the model has the
                ``recall`` tool (see :class:`EarlierTurns`); no starts, no session.
            opening: The history before any request (no request yet: the prefetched
                results share the first request with all of it).
            tools: The schemas offered with the first request.
            room: Whether to work out the room the opening leaves (:attr:`Limits.room`).
            shared_state: What outlives the run: the windows the servers said, the
                estimators its estimate learns into, the trimmed copies (the process's
                by default).
        """
        resolver = shared_state.windows
        window = await resolve_window(spec.model, model, resolver=resolver)
        budget = cls(
            spec=spec,
            window=window,
            model=model,
            report=report,
            config=config,
            shared_state=shared_state,
        )
        # The model this run talks to asks the server for the window the budget rests on.
        budget.sized = sized_model(spec.model, model, window)
        starts, current, recall = earlier
        if starts:
            budget.turns = EarlierTurns(list(starts), current, recall=recall)
        own = spec.pruning_model
        if spec.allow_tool_output_pruning and own is not None:
            # A pruning model of its own plans for its own window.
            theirs = await resolve_window(own, pruning_model, resolver=resolver)
            budget.pruning = sized_model(own, pruning_model, theirs), theirs.tokens
        elif pruning_model is model:
            budget.pruning = budget.sized, window.tokens
        else:
            budget.pruning = sized_model(spec.model, pruning_model, window), window.tokens
        budget.limits = budget._limits(opening, tools, room=room)
        return budget

    def _limits(
        self, new: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]], *, room: bool
    ) -> Limits:
        return Limits(
            result_cap=self.result_cap_chars(),
            room=self.room_chars(new, tools) if room else None,
            chars_per_token=self.chars_per_token,
        )

    @property
    def chars_per_token(self) -> float:
        """The estimator's current ratio."""
        return self.counter.estimator.chars_per_token

    def result_cap_chars(self) -> int:
        """The most characters one tool result may keep in this window."""
        return self.plan.result_cap_chars(self.chars_per_token)

    def room_chars(
        self, new: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]] = ()
    ) -> int:
        """Characters the next request has left for a round's results (may be negative).

        The last request's view (as sent, trimmed results trimmed), plus ``new`` (what
        the history gained since: the reply, or before any request the whole opening),
        plus ``tools``' schemas, against the ceiling, at the estimator's ratio.
        """
        chars = (
            self._fitter.chars
            + sum(map(self.counter.chars, new))
            + self.counter.schema_chars(tools)
        )
        left = self.plan.ceiling - self.counter.estimator.tokens(chars)
        return int(left * self.chars_per_token)

    async def prepare_step(
        self,
        history: Sequence[BaseMessage],
        *,
        tools: Sequence[Mapping[str, Any]] = (),
        step: int,
        refused: tuple[Prepared, Overflow] | None = None,
    ) -> Prepared:
        """Everything the loop needs before request ``step``: the view, its size, the verdict.

        The view of ``history`` is fitted under the plan (results trimmed in the view
        only, earlier turns left out), counted exactly where the server can, announced,
        and judged: :attr:`Prepared.over_budget` (start the synthesis flow) and
        :attr:`Prepared.fits_window` (can be sent at all).

        Args:
            history: The run's messages as the request would carry them.
            tools: The schemas the request offers.
            step: The number of the request's step (for reports and events).
            refused: The attempt the server just refused for its size, with what its
                error said: the budget learns from it, records the recovery and fits the
                view under a plan that makes the retry smaller.
        """
        plan = None
        if refused is not None:
            attempt, overflow = refused
            plan = self.force_trim_plan(attempt, overflow)
            await self._note_overflow(attempt, overflow, step)
        return await self.prepare(history, tools=tools, step=step, plan=plan)

    async def _note_overflow(self, attempt: Prepared, overflow: Overflow, step: int) -> None:
        self.report.overflow_recoveries += 1
        self.report.events.append(f"step {step}: refused for size, trimmed and retried")
        _log.warning(
            "the server refused a request for its size (%s); trimming and retrying",
            overflow.message,
        )
        await events.emit(
            events.OVERFLOW_RECOVERED,
            {
                "prompt_tokens": overflow.prompt_tokens,
                "window": overflow.window,
                "estimate": attempt.tokens,
            },
            self.config,
        )

    async def prepare(
        self,
        history: Sequence[BaseMessage],
        *,
        tools: Sequence[Mapping[str, Any]] = (),
        step: int,
        plan: ContextPlan | None = None,
    ) -> Prepared:
        """Build the request view of ``history`` (trimmed to fit), measure it, report it.

        Results trimmed for the previous request stay trimmed while ``history`` extends
        the previous one, so a step costs what it added (:class:`RunFitter`). On a
        llama.cpp server of our own the view is then counted as the server will count it
        (:meth:`_count_exactly`).
        """
        plan = plan or self.plan
        prepared = await self._fit(history, tools, step, plan)
        if self._exact_url is not None:
            prepared = await self._count_exactly(history, prepared, tools, step, plan)
        await self._announce(prepared, step)
        return prepared

    async def _fit(
        self,
        history: Sequence[BaseMessage],
        tools: Sequence[Mapping[str, Any]],
        step: int,
        plan: ContextPlan,
    ) -> Prepared:
        turns = self.turns
        fitted = self._fitter.fit(turns.view(history) if turns else history, plan=plan, tools=tools)
        while fitted.over and turns is not None:
            # Still over after trimming: leave out whole earlier turns, oldest first, down
            # to the trim target (headroom, so the next steps don't omit one each).
            excess = (fitted.tokens_after - plan.trim_target) * self.chars_per_token
            if not turns.omit_for(history, int(excess), self.counter.chars):
                break
            self._note_omitted(step, turns.omitted)
            fitted = self._fitter.fit(turns.view(history), plan=plan, tools=tools)
        if fitted.trimmed:
            # A result stays trimmed from one view to the next, or is trimmed again after a
            # view sent whole: count each result once (history messages live for the run).
            trims = self._fitter.take_fresh()
            fresh = [copy for original, copy in trims if id(original) not in self._trimmed]
            new = len(fresh)
            self._trimmed |= {id(original) for original, _ in trims}
            if fresh:  # mark_trimmed reads every call of the run
                self.report.mark_trimmed({v.id for v in fresh if v.id}, step=step)
            self.report.trimmed_results += new
            self.report.tokens_saved_by_trimming += fitted.tokens_saved
            if fitted.passes:  # this request trimmed (not only kept the last one's trims)
                payload = {**_trim_payload(fitted, step), "new": new}
                await events.emit(events.TRIMMED, payload, self.config)
        # What counter.estimate(fitted.messages, tools) says, from the fitter's running sum.
        schemas = (
            0 if self.counter.drops_tools(fitted.messages) else self.counter.schema_chars(tools)
        )
        chars = self._fitter.chars + schemas
        tokens = self.counter.estimator.tokens(chars)
        prepared = Prepared(
            messages=fitted.messages,
            tools=tools,
            chars=chars,
            tokens=tokens,
            over_budget=tokens > plan.ceiling,
            fits_window=tokens + plan.reply_reserve <= plan.window,
        )
        return prepared

    async def _count_exactly(
        self,
        history: Sequence[BaseMessage],
        prepared: Prepared,
        tools: Sequence[Mapping[str, Any]],
        step: int,
        plan: ContextPlan,
    ) -> Prepared:
        """``prepared`` with the server's own count of its prompt, when the server gives one.

        The count also corrects the estimator before the request is sent (as a reply's
        ``prompt_tokens`` does after it). When the count puts a view the estimate had
        under the ceiling over it, the view is fitted again with the corrected ratio and
        counted again (twice at most); a view the estimate already had over stays as the
        fitter left it.
        """
        counter = self.shared.server_tokens
        for _ in range(2):
            counted = await counter.count_request(
                self._exact_url,
                convert_to_openai_messages(prepared.messages),
                prepared.tools,
                api_key=self.spec.model.api_key,
            )
            if counted is None:
                self._exact_misses += 1
                if self._exact_misses >= 2:  # no /apply-template here: stop asking this run
                    self._exact_url = None
                return prepared
            self._learn(prepared, counted)
            exact = dataclasses.replace(
                prepared,
                tokens=counted,
                counted=True,
                char_estimate=prepared.tokens,
                over_budget=counted > plan.ceiling,
                fits_window=counted + plan.reply_reserve <= plan.window,
            )
            if not exact.over_budget or prepared.over_budget:
                return exact
            prepared = await self._fit(history, tools, step, plan)
            if prepared.over_budget:
                return prepared
        return exact

    def _note_omitted(self, step: int, omitted: int) -> None:
        if self.report.session is not None:
            self.report.session["omitted_turns"] = omitted
        self.report.events.append(f"step {step}: {omitted} earlier turns omitted from the request")
        _log.info("%d earlier turns omitted from the request at step %d", omitted, step)

    def force_trim_plan(self, prepared: Prepared, overflow: Overflow) -> ContextPlan:
        """Learn from a refusal for size and return a plan that makes the retry smaller."""
        estimator = self.counter.estimator
        if overflow.prompt_tokens:
            estimator.observe(estimated_chars=prepared.chars, input_tokens=overflow.prompt_tokens)
        if overflow.window and overflow.window < self.plan.window:
            self.plan = ContextPlan.for_window(
                overflow.window,
                budget_percent=self.spec.token_budget_percent,
                max_tokens=self.spec.model.max_tokens,
            )
            self.report.window, self.report.window_source = overflow.window, "server:error"
        # Without figures the estimate may still look under the ceiling: aim below what
        # was just refused, so the retry is really smaller.
        now = estimator.tokens(prepared.chars)
        ceiling = max(1, min(self.plan.ceiling, int(now * 0.8)))
        target = max(1, ceiling * 65 // 100)
        return dataclasses.replace(self.plan, ceiling=ceiling, trim_target=target, warn_at=target)

    def observe(
        self,
        prepared: Prepared,
        reply: AIMessage,
        *,
        step: int | None = None,
        kind: str = "step",
        room: bool = False,
        entering: AIMessage | None = None,
        seconds: float | None = None,
    ) -> Observed:
        """Take in the reply to ``prepared``: learn, record, and set the next limits.

        The server's count of the prompt corrects the estimator; the request goes into
        the report (its figures, how much of the prompt the server's cache served); the
        :attr:`limits` of the round that follows are worked out for the history plus
        ``reply``.

        Args:
            prepared: The request as it was sent.
            reply: The model's reply to it.
            step: The request's step, for its record; ``None`` records nothing.
            kind: ``step``, ``final`` or ``retry`` (see :class:`RequestRecord`).
            room: Whether the round reads :attr:`Limits.room`.
            entering: The reply as it enters the history (its calls read), when that is
                not ``reply`` itself: the room is what is left after it.
            seconds: The time from sending ``prepared`` to its whole reply, on the event
                loop's clock, for the record; ``None``: not measured.
        """
        usage: Mapping[str, Any] = reply.usage_metadata or {}
        reported = usage.get("input_tokens")
        if not (isinstance(reported, int) and reported > 0):
            reported = None
        else:
            self._learn(prepared, reported)
        if step is not None:
            self._record(prepared, reply, reported, step=step, kind=kind, seconds=seconds)
        self.limits = self._limits([entering or reply], prepared.tools, room=room)
        return Observed(reported, self.limits)

    def _record(
        self,
        prepared: Prepared,
        reply: AIMessage,
        reported: int | None,
        *,
        step: int,
        kind: str,
        seconds: float | None,
    ) -> None:
        usage: Mapping[str, Any] = reply.usage_metadata or {}
        # How much of the prompt the server's cache served (llama.cpp reuses the slot's
        # common prefix); both None when the reply does not say.
        cache = prompt_usage(reply)
        self.report.requests.append(
            RequestRecord(
                step=step,
                messages=len(prepared.messages),
                input_tokens=reported,
                output_tokens=usage.get("output_tokens"),
                estimated_tokens=prepared.tokens,
                counted=prepared.counted,
                char_estimate_tokens=prepared.char_estimate or prepared.tokens,
                ceiling=self.plan.ceiling,
                window=self.plan.window,
                tools=kind != "final",
                kind=kind,
                prompt_evaluated=cache.evaluated if cache else None,
                prompt_cached=cache.cached if cache else None,
                # Milliseconds are all a reader (or a comparison of runs) can use.
                seconds=round(seconds, 3) if seconds is not None else None,
            )
        )
        self.report.chars_per_token = round(self.chars_per_token, 3)

    def _learn(self, prepared: Prepared, input_tokens: int) -> None:
        """Correct the estimator from the server's count of ``prepared``."""
        tools = self.counter.schema_chars(prepared.tools)
        counted = 0 if self.counter.drops_tools(prepared.messages) else tools
        self.counter.estimator.observe_request(
            message_chars=prepared.chars - counted,
            tool_chars=tools,
            answer_turn=is_answer_turn(prepared.messages),
            input_tokens=input_tokens,
        )

    async def _announce(self, prepared: Prepared, step: int) -> None:
        payload = {
            "step": step,
            "estimate": prepared.tokens,
            "ceiling": self.plan.ceiling,
            "window": self.plan.window,
            "window_source": self.report.window_source,
            "chars_per_token": round(self.chars_per_token, 3),
        }
        await events.emit(events.BUDGET, payload, self.config)
        if not self._warned and prepared.tokens >= self.plan.warn_at:
            self._warned = True
            _log.warning(
                "context is %d%% of the budget: estimate=%d ceiling=%d window=%d",
                100 * prepared.tokens // max(self.plan.ceiling, 1),
                prepared.tokens,
                self.plan.ceiling,
                self.plan.window,
            )


def _trim_payload(fitted: Any, step: int) -> dict[str, Any]:
    return {
        "step": step,
        "count": fitted.trimmed,
        "tokens_before": fitted.tokens_before,
        "tokens_after": fitted.tokens_after,
        "pass": max(fitted.passes) if fitted.passes else 0,
    }
