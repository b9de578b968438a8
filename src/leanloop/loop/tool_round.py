"""Run the calls of one reply: strip meta-arguments, ask the policies, run, prune, cap, record.

Each call goes through the same funnel: the pruning meta-arguments are split off (no tool
ever receives them); the run's policies are asked about the call before it runs
(:meth:`~leanloop.loop.policies.hooks.Policy.before_tool_call`: the repeat guard answers
a repeat from memory), every call of the reply in order before any runs; the registry
runs the tool within the agent's ``tool_timeout`` (failures and timeouts become one-line
messages, the registry-wide cap applies); a prunable result may go through the LLM
extraction pass; the plan's per-result cap keeps any one result from swamping the
window. Calls of one reply run concurrently, at most ``max_parallel_tools`` of them. What
a tool told besides its result (notes, an ``agent:NAME`` call's sub-run report) goes on
the call's record.

The reserved pruning markers are escaped in every result before the main model reads it
(a pruned result keeps only its own frame), so a tool output cannot forge an INFO block
or pose as a pruned result; whether a result is pruned travels as metadata
(:func:`mark_results`), never as text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, ToolCall
from langchain_core.runnables import RunnableConfig

from leanloop import events
from leanloop.budget import parse_overflow
from leanloop.budget.server_tokens import ServerTokenCounter, tokenize_root
from leanloop.budget.shared import PROCESS_STATE
from leanloop.loop import prompts
from leanloop.loop.policies.hooks import (
    AnswerCall,
    CallView,
    PauseCall,
    PausedCall,
    PendingCall,
    Policies,
    Round,
    StepView,
    ToolResult,
)
from leanloop.loop.profiles import PromptProfile, pick_profile
from leanloop.protocol import ToolProtocol
from leanloop.pruning import (
    Candidate,
    Pruner,
    PruneRequest,
    PruneSettings,
    PruningTrigger,
    pick_pruned,
    split_meta_arguments,
)
from leanloop.pruning.extract import CountRatio, question_about_file, task_context_from
from leanloop.pruning.markers import escape_pruned, escape_reserved, mark_pruned
from leanloop.pruning.prompt import split_raw_lines
from leanloop.report import RunReport, ToolCallRecord
from leanloop.spec.types import AgentSpec
from leanloop.textcap import cap_text
from leanloop.tools.readers import file_like_words
from leanloop.tools.registry import ToolOutcome, ToolRegistry, clean_text

__all__ = [
    "ANSWER_TURN",
    "READ",
    "CallResult",
    "Round",
    "ToolRunner",
    "make_pruner",
    "mark_results",
    "pruning_trigger",
]

ANSWER_TURN = "leanloop_answer_turn"
"""Marks the text-mode result turn that carries the profile's answer-turn line."""

READ = "leanloop_read"
"""Marks a result message that carries data a tool returned (not a failure, not a
repeat's reminder): what the loop counts as read in resumed steps."""


@dataclass(frozen=True)
class CallResult:
    """What one call produced, ready to be framed for the model."""

    call: ToolCall
    text: str
    ok: bool
    repeated: bool = False
    pruned: bool = False
    """Whether ``text`` is a pruned result (see :func:`mark_results`)."""
    answered: bool = False
    """Whether a policy answered the call instead of running it (``text`` is no data)."""


def mark_results(
    messages: Sequence[BaseMessage], results: Sequence[CallResult]
) -> list[BaseMessage]:
    """The result ``messages`` built for ``results``, each marked pruned or not.

    Native mode has one message per result; text mode one turn for all of them, pruned
    when any of its results is. :func:`leanloop.pruning.is_pruned` reads the mark.
    """
    if len(messages) == len(results):
        return [mark_pruned(m, r.pruned) for m, r in zip(messages, results, strict=True)]
    pruned = any(r.pruned for r in results)
    return [mark_pruned(m, pruned) for m in messages]


@dataclass(frozen=True)
class _Decided:
    """One call after the policies were asked about it, before it runs."""

    call: ToolCall
    asked: PendingCall
    """The call as the model made it (meta-arguments split off)."""
    pending: PendingCall
    """The call as the policies let it run (edited, with their notes)."""
    answer: AnswerCall | None = None
    """What the model gets instead of a result when a policy answered the call."""
    pause: PauseCall | None = None
    """Why a policy paused the run before this call (then no call of the reply runs)."""

    @property
    def request(self) -> PruneRequest:
        """What pruning is asked to do with the result (pruning off: the defaults)."""
        return self.pending.meta if self.pending.meta is not None else PruneRequest()


@dataclass(frozen=True)
class _Ran:
    """One call after its tool ran (or a policy answered for it), before pruning."""

    decided: _Decided
    outcome: ToolOutcome | None = None
    """The tool's outcome; ``None`` for a call a policy answered."""
    seconds: float = 0.0
    """The tool's own run time (the pages read on for the pruning pass too), on the
    event loop's clock; 0 for an answered call."""


KEPT_WHOLE_NOTE = "kept whole: the round's results fit the request (pruning_trigger: budget)"


def pruning_trigger(spec: AgentSpec) -> PruningTrigger:
    """The agent's pruning trigger: ``pruning_trigger``, or its pruning model's profile's.

    ``auto`` follows the profile of the model that prunes: a small model (the embedded
    one) prunes only what does not fit, any other prunes every large result.
    """
    if spec.pruning_trigger != "auto":
        return spec.pruning_trigger
    pruning = spec.pruning_model or spec.model
    return pick_profile(spec.prompt_profile, pruning.model).pruning_trigger


def make_pruner(
    spec: AgentSpec,
    model: BaseChatModel,
    *,
    window_tokens: int,
    chars_per_token: float,
    server_tokens: ServerTokenCounter | None = None,
) -> Pruner | None:
    """The agent's pruner, or ``None`` when pruning is off.

    The pruner sizes chunks with token counts from the pruning model's own server when
    it is a local llama.cpp (``/tokenize``, asked through ``server_tokens``; ``None``: the
    process's counter), and cuts a chunk in two when the server refuses it for its size
    (:func:`leanloop.budget.parse_overflow`).
    """
    if not spec.allow_tool_output_pruning:
        return None
    pruning = spec.pruning_model or spec.model
    # The extraction prompt and chunk size suit the pruning model, not the main one.
    profile = pick_profile(spec.prompt_profile, pruning.model)
    settings = PruneSettings(
        min_chars=spec.pruning_min_chars,
        timeout=spec.pruning_timeout,
        deadline=spec.pruning_deadline,
        max_chunk_tokens=profile.pruning_chunk_tokens,
        prompt_style=profile.pruning_prompt,
        concurrency=spec.pruning_concurrency,
        verify=spec.pruning_verify,
        window_tokens=window_tokens,
        chars_per_token=chars_per_token,
        reply_limit=pruning.max_tokens,
        # Measured with Qwen2.5-Coder-0.5B: shown three relevant windows in one request,
        # it copies the first line and stops; shown one window a request, it copies each.
        pack_windows=profile.pruning_prompt != "small",
    )
    count_ratio: CountRatio | None = None
    base_url, api_key = pruning.base_url, pruning.api_key
    # Ollama has no /tokenize; hosted APIs are never asked (tokenize_root says None).
    if pruning.provider not in (None, "ollama") and tokenize_root(base_url) is not None:
        counter = server_tokens if server_tokens is not None else PROCESS_STATE.server_tokens

        async def count(sample: str) -> float | None:
            return await counter.chars_per_token(base_url, sample, api_key=api_key)

        count_ratio = count

    return Pruner(
        model,
        settings,
        count_ratio=count_ratio,
        too_large=lambda exc: parse_overflow(exc) is not None,
    )


class ToolRunner:
    """Runs calls for one run (see the module docstring)."""

    def __init__(
        self,
        *,
        spec: AgentSpec,
        registry: ToolRegistry,
        pruner: Pruner | None,
        report: RunReport,
        config: RunnableConfig,
        question: str = "",
        named: Callable[[], list[str]] | None = None,
        repair_paths: bool | None = None,
        policies: Policies | None = None,
    ) -> None:
        self.policies = policies or Policies()
        """The run's policies, asked about each call (the tool-call hooks of
        :class:`~leanloop.loop.policies.hooks.Policy`) and at the end of each round."""
        self.question = question
        self.request_names = file_like_words(question)
        """The request's words that look like file names (a reader's missing name)."""
        self.named = named
        """The workspace paths the request names (looked up on first use), for the
        pruning pass's question about a file and handed to the tools with each call."""
        self.repair_paths = repair_paths
        """Whether the workspace tools read the one path the request names instead of a
        missing one (handed to them with each call); ``None``: each tool's own setting."""
        self.repeat_rounds: set[int] = set()
        """Ids of the replies and results of rounds made only of repeated calls (a policy
        answered each as a repeat): the final-answer request leaves them out, since a
        model's own repeats prime more repeats."""
        self.spec = spec
        self.registry = registry
        self.pruner = pruner
        self.prunable = frozenset(spec.pruning_tools) if pruner else frozenset()
        self.trigger = pruning_trigger(spec)
        self.report = report
        self.config = config

    @classmethod
    def for_run(
        cls,
        *,
        spec: AgentSpec,
        registry: ToolRegistry,
        pruning: tuple[BaseChatModel, int] | None,
        chars_per_token: float,
        profile: PromptProfile,
        report: RunReport,
        config: RunnableConfig,
        question: str,
        named: Callable[[], list[str]] | None = None,
        policies: Policies | None = None,
        server_tokens: ServerTokenCounter | None = None,
    ) -> ToolRunner:
        """The runner of one run, with its own pruner (its state is the run's).

        ``pruning`` is the pruning model as the run sends it and the window it plans for.
        Path repair is the agent's ``repair_paths`` when set, else what the run's
        ``profile`` does: the profile may follow what the server serves (``model: qwen``
        on a server serving a 0.5B), which the agent's tools, built before any run,
        cannot know. ``server_tokens`` counts the pruning pass's tokens (``None``: the
        process's counter).
        """
        pruner = None
        if pruning is not None:
            model, window = pruning
            pruner = make_pruner(
                spec,
                model,
                window_tokens=window,
                chars_per_token=chars_per_token,
                server_tokens=server_tokens,
            )
        return cls(
            spec=spec,
            registry=registry,
            pruner=pruner,
            report=report,
            config=config,
            question=question,
            named=named,
            repair_paths=profile.repair_paths if spec.repair_paths is None else spec.repair_paths,
            policies=policies,
        )

    async def round(
        self,
        calls: Sequence[ToolCall],
        *,
        step: int,
        history: Sequence[BaseMessage],
        result_cap: int,
        room_chars: int | None,
        protocol: ToolProtocol,
        profile: PromptProfile,
        view: StepView,
        prefetch: bool = False,
    ) -> Round:
        """Run ``calls`` and carry their results back as messages; count the repeats.

        ``view`` is the run as the round begins, for the policies asked about each call.
        A prefetch round (the reads before the first request) is not a round of the
        model's: the policies are not asked at its end
        (:meth:`~leanloop.loop.policies.hooks.Policy.end_round`), and its repeats are not
        counted.
        """
        results = await self.run(
            calls,
            step=step,
            history=history,
            result_cap=result_cap,
            room_chars=room_chars,
            view=view,
        )
        if isinstance(results, tuple):  # paused: no call ran, nothing to carry back
            self.report.events.append(
                f"step {step}: paused before {len(results)} calls that wait for a decision; "
                "no call of the reply ran"
            )
            return Round([], exhausted=False, calls=len(calls), paused=results)
        messages = result_messages(
            protocol,
            profile,
            self.report,
            calls if prefetch else [r.call for r in results],
            results,
            step=step,
            question=self.question,
        )
        if prefetch:
            return Round(messages, exhausted=False)
        repeated = sum(r.repeated for r in results)
        if repeated == len(results):
            self.repeat_rounds.update(id(m) for m in (history[-1], *messages))
        self.report.repeated_calls += repeated
        done = Round(messages, exhausted=False, repeated=repeated, calls=len(results))
        return self.policies.end_round(done)

    async def run(
        self,
        calls: Sequence[ToolCall],
        *,
        step: int,
        history: Sequence[BaseMessage],
        result_cap: int,
        view: StepView,
        room_chars: int | None = None,
    ) -> list[CallResult] | tuple[PausedCall, ...]:
        """Run ``calls`` (the first ``max_parallel_tools``), in order of the calls.

        When a policy pauses before any call (:class:`PauseCall`, the approval of tool
        calls), no call runs and the calls that wait for a decision come back instead:
        the run ends paused, and a later run goes on from the reply with the decisions.

        The policies are asked about every call first, in the order of the calls, before
        any runs: a call one policy claims (the repeat guard) is known when the next is
        asked, so an identical twin in the same reply is a repeat although the calls run
        concurrently. The tools run next, all of them; then the pruning trigger picks
        which results go through the pass (:func:`leanloop.pruning.trigger.pick_pruned`),
        with ``room_chars`` the characters the next request has left for this round's
        results (``None``: unknown, so nothing is taken to fit).
        """
        limit = self.spec.max_parallel_tools
        accepted, dropped = list(calls[:limit]), list(calls[limit:])

        def context(args: dict[str, Any]) -> str:
            """The extraction's task context for a call with ``args`` (pruned calls only)."""
            question = self.question
            path = args.get("path")
            if isinstance(path, str):
                named = self.named() if self.named is not None else []
                question = question_about_file(question, path, named)
            return task_context_from(history, question=question)

        decided = [await self._decide(call, step=step, view=view) for call in accepted]
        paused = tuple(
            PausedCall(
                d.pending.call_id, d.pending.name, d.pending.args, d.pause.reason, d.pause.preview
            )
            for d in decided
            if d.pause is not None
        )
        if paused:
            return paused
        ran = await asyncio.gather(*(self._execute(d, step=step) for d in decided))
        chosen, prunable = self._choose(ran, cap=result_cap, room_chars=room_chars)
        # Under the budget trigger a result the pass could have pruned may be kept whole.
        kept = prunable - chosen if self.trigger == "budget" else frozenset()
        done = await asyncio.gather(
            *(
                self._finish(
                    r, step=step, context=context, cap=result_cap, prune=i in chosen, kept=i in kept
                )
                for i, r in enumerate(ran)
            )
        )
        # Records go in the order the model made the calls, not the order they finished.
        self.report.tool_calls.extend(record for _, record in done)
        results = [result for result, _ in done]
        note = prompts.fan_out_note(limit)
        results.extend(CallResult(call, note, ok=False) for call in dropped)
        if dropped:
            self.report.events.append(
                f"step {step}: {len(dropped)} calls over the limit of {limit} not run"
            )
        return results

    async def _decide(self, call: ToolCall, *, step: int, view: StepView) -> _Decided:
        """Strip the meta-arguments and ask the policies whether and how the call runs."""
        if self.pruner is not None:
            args, meta = split_meta_arguments(call["args"])
        else:  # pruning off changes nothing: a stray meta-argument is the registry's to drop
            args, meta = dict(call["args"]), None
        asked = PendingCall(
            name=call["name"], args=args, meta=meta, call_id=call.get("id"), step=step, run=view
        )
        pending, answer = await self.policies.before_tool_call(asked)
        if isinstance(answer, PauseCall):
            return _Decided(call, asked, pending, pause=answer)
        return _Decided(call, asked, pending, answer)

    async def _execute(self, decided: _Decided, *, step: int) -> _Ran:
        """Run the tool of a call the policies let run; an answered call does not run."""
        if decided.answer is not None:
            return _Ran(decided)
        pending, request = decided.pending, decided.request
        args = dict(pending.args)
        # Each call's own time: the calls of a round run together, so the round's time
        # would give every call the slowest one's (ADR 0027: the loop's clock).
        clock = asyncio.get_running_loop()
        started = clock.time()
        outcome = await self.registry.run(
            pending.name,
            args,
            time_limit=self.spec.tool_timeout,
            request_paths=self.named,
            request_names=self.request_names,
            repair_paths=self.repair_paths,
        )
        # A policy may change the outcome before pruning (read_file's pages read on).
        ran = CallView(
            args=args,
            prunable=outcome.name in self.prunable and request.prune,
            max_chars=self.registry.result_max_chars,
        )
        outcome = await self.policies.after_tool_call(ran, outcome, self._call_tool)
        seconds = clock.time() - started
        if outcome.timed_out:
            # The tool's own limit (tools: [{name, timeout}]) when it has one.
            timeout = (
                outcome.time_limit if outcome.time_limit is not None else self.spec.tool_timeout
            )
            self.report.events.append(
                f"step {step}: {outcome.name} timed out after {timeout:g} s; not retried"
            )
        return _Ran(decided, outcome=outcome, seconds=seconds)

    async def _call_tool(self, name: str, args: dict[str, object]) -> ToolOutcome:
        """One more call of ``name`` for a policy, as this round runs its own calls."""
        return await self.registry.run(
            name,
            args,
            time_limit=self.spec.tool_timeout,
            request_paths=self.named,
            repair_paths=self.repair_paths,
        )

    def _choose(
        self, ran: Sequence[_Ran], *, cap: int, room_chars: int | None
    ) -> tuple[frozenset[int], frozenset[int]]:
        """The positions of ``ran`` to prune, and of those the pass could prune."""
        if self.pruner is None:
            return frozenset(), frozenset()
        candidates = []
        for r in ran:
            out, answer, request = r.outcome, r.decided.answer, r.decided.request
            size = len(out.text) if out is not None else len(answer.content if answer else "")
            prunable = (
                out is not None
                and out.ok
                and out.name in self.prunable  # the tool that really ran (a repaired name)
                and self.pruner.skip_reason(out.text, request) is None
            )
            candidates.append(
                Candidate(
                    chars=size if prunable else min(size, cap),
                    prunable=prunable,
                    asked=request.focus is not None,
                    over_cap=size > cap,
                )
            )
        room = room_chars if room_chars is not None else 0
        chosen = pick_pruned(candidates, trigger=self.trigger, room_chars=room)
        return chosen, frozenset(i for i, c in enumerate(candidates) if c.prunable)

    async def _finish(
        self,
        ran: _Ran,
        *,
        step: int,
        context: Callable[[dict[str, Any]], str],
        cap: int,
        prune: bool,
        kept: bool,
    ) -> tuple[CallResult, ToolCallRecord]:
        """Prune (when chosen), escape, cap and record one call's result."""
        call, pending = ran.decided.call, ran.decided.pending
        if ran.decided.answer is not None:
            answer = ran.decided.answer
            repeated = answer.repeat_of is not None
            record = ToolCallRecord(
                step=step,
                name=pending.name,
                args=dict(pending.args),
                chars_out=len(answer.content),
                chars_raw=0,
                repeated=repeated,
                notes=[answer.note],
                result_preview=answer.content,  # what the model got instead
            )
            result = CallResult(call, answer.content, ok=True, repeated=repeated, answered=True)
            return result, record
        outcome = ran.outcome
        assert outcome is not None  # a call no policy answered ran
        notes = [*outcome.notes, *pending.notes]
        text, pruned, seconds = outcome.text, False, ran.seconds
        args = dict(pending.args)
        if prune:
            task = context(args)
            path = args.get("path")
            subject = path if isinstance(path, str) else None
            clock = asyncio.get_running_loop()
            started = clock.time()
            text, pruned = await self._prune(
                outcome.name, text, ran.decided.request, task, step, subject=subject
            )
            # The pass is part of the call's cost: its result waited for it.
            seconds += clock.time() - started
            text = clean_text(text)  # the extraction model's words are not checked text
        elif kept:
            notes.append(KEPT_WHOLE_NOTE)
        # Tool output never carries a live marker to the main model (module docstring).
        text = escape_pruned(text) if pruned else escape_reserved(text)
        capped = cap_text(text, cap)
        # Cut by the registry's cap or by the window's: either way the model saw less than
        # the tool wrote, and the report says how much there was.
        cut = outcome.ok and not pruned and len(capped) < outcome.chars_raw
        cut_from = outcome.chars_raw if cut else None
        record = ToolCallRecord(
            step=step,
            name=outcome.name,
            args=dict(outcome.args),
            chars_out=len(capped),
            chars_raw=outcome.chars_raw,
            ok=outcome.ok,
            pruned=pruned,
            repaired=outcome.repaired,
            repaired_from=outcome.repaired_from,
            notes=notes,
            cut_from=cut_from,
            timed_out=outcome.timed_out,
            retries=outcome.retries,
            # An agent:NAME call's sub-run, nested whole (its own dict: the report is dumped).
            sub_report=dict(outcome.sub_report) if outcome.sub_report is not None else None,
            seconds=round(seconds, 3),
            result_preview=capped,
        )
        # What the model will read, to the policies that remember calls (the repeat guard).
        self.policies.after_tool_result(ran.decided.asked, ToolResult(capped, outcome.ok, record))
        return CallResult(call, capped, outcome.ok, pruned=pruned), record

    async def _prune(
        self,
        tool: str,
        raw: str,
        request: PruneRequest,
        context: str,
        step: int,
        *,
        subject: str | None = None,
    ) -> tuple[str, bool]:
        assert self.pruner is not None

        async def progress(done: int, total: int) -> None:
            payload = {"step": step, "tool": tool, "done": done, "chunks": total}
            await events.emit(events.PRUNE_PROGRESS, payload, self.config)

        outcome = await self.pruner.prune(
            tool_name=tool,
            raw=raw,
            request=request,
            task_context=context,
            config=self.config,
            on_chunk=progress,
            subject=subject,
        )
        self.report.note_extraction(self.pruner.usage)  # the pass's requests so far
        if outcome.unread:
            lines = split_raw_lines(raw)  # read_file's ranges in the file's own numbers
            ranges = ", ".join(f"{r.span(tool, lines)} ({r.reason})" for r in outcome.unread)
            self.report.events.append(
                f"step {step}: pruning {tool} left lines {ranges} unread; the model was told"
            )
        if outcome.reused:
            self.report.events.append(
                f"step {step}: {tool} output identical to one pruned earlier; its extract reused"
            )
        if outcome.pruned:
            self.report.chars_saved_by_pruning += outcome.chars_raw - outcome.chars_out
        if outcome.fallback is not None:
            fallback = {"step": step, "tool": tool, "reason": outcome.fallback}
            self.report.pruning_fallbacks.append(fallback)
            self.report.events.append(
                f"step {step}: pruning {tool} fell back to the raw output ({outcome.fallback})"
            )
        if outcome.skipped is None:
            payload: dict[str, Any] = {
                "step": step,
                "tool": tool,
                "chars_raw": outcome.chars_raw,
                "chars_out": outcome.chars_out,
                "chunks": outcome.chunks,
                "seconds": round(outcome.seconds, 3),
                "reused": outcome.reused,
                "dropped_lines": outcome.dropped_lines,
                "fallback": outcome.fallback,
                "unread": [[r.first_line, r.last_line, r.reason] for r in outcome.unread],
            }
            await events.emit(events.PRUNED, payload, self.config)
        return outcome.text, outcome.pruned


def result_messages(
    protocol: ToolProtocol,
    profile: PromptProfile,
    report: RunReport,
    calls: Sequence[ToolCall],
    results: Sequence[CallResult],
    *,
    step: int,
    question: str,
) -> list[BaseMessage]:
    """The messages carrying ``results`` back, with the profile's answer-turn line in text mode.

    Each message gets an id the step's call records share (``result_id``), so the report
    can say which results a later request trimmed.
    """
    messages = protocol.results(calls, [r.text for r in results], [r.ok for r in results])
    # Pruned results are known by this mark, never by their text (tool output may forge it).
    messages = mark_results(messages, results)
    # Which messages carry data, for a later process of this turn (a resume).
    read = [r.ok and not (r.repeated or r.answered) for r in results]
    flags = read if len(messages) == len(read) else [any(read)] * len(messages)
    messages = [
        m.model_copy(update={"additional_kwargs": {**m.additional_kwargs, READ: True}})
        if flag
        else m
        for m, flag in zip(messages, flags, strict=True)
    ]
    records = [c for c in report.tool_calls if c.step == step]
    for index, message in enumerate(messages):
        message.id = f"leanloop-result-{step}-{index}"
    for index, record in enumerate(records):
        record.result_id = messages[min(index, len(messages) - 1)].id if messages else None
    nudge = profile.answer_turn
    if nudge and protocol.mode == "text" and messages:
        last = messages[-1]
        line = profile.with_question(nudge, question)
        kwargs = {**last.additional_kwargs, ANSWER_TURN: True}
        messages[-1] = last.model_copy(
            update={"content": f"{last.text}\n\n{line}", "additional_kwargs": kwargs}
        )
    return messages
