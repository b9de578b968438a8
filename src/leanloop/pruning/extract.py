"""The pruning pass: keep only what the main model is looking for in one tool output.

After a prunable tool has run, :meth:`Pruner.prune` asks the pruning model, in stateless
single-turn calls without tools, to copy out verbatim the lines that matter for the focus
the main model gave (``output_prune_context``) or else for the task context
(:func:`~leanloop.pruning.context.task_context_from`). The answers are checked line by
line against the raw output and turned into a short tool message that says how much was
left out and how to get it all. This module orders the pass's parts:

1. :mod:`~leanloop.pruning.layout`: the output numbered as requests show it, sized from
   its characters per token, and scored by what the pass looks for;
2. :mod:`~leanloop.pruning.strategies`: where to read (the word hits' windows, the kinds
   of line the model names, or in order) and when to stop
   (:mod:`~leanloop.pruning.reading`);
3. :mod:`~leanloop.pruning.extraction`: the requests, at most ``concurrency`` at once,
   each under a limit from the server's measured speed;
4. :mod:`~leanloop.pruning.result`: the verified lines merged and the info block.

The settings (:mod:`~leanloop.pruning.settings`) give each part its own section.

The pass never fails a run. A chunk that fails (an exception, a timeout, an
unparseable answer) costs only its own lines: the extracts of the other chunks are kept
and the info block names the lines that were not read and how to ask for them. Only
when every chunk fails is the raw output used as it is, with a warning. Only
cancellation propagates.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
from collections import OrderedDict
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from leanloop.cache_usage import RequestTally
from leanloop.pruning.context import question_about_file, task_context_from
from leanloop.pruning.extraction import (
    TIME_LIMIT,
    ChunkDone,
    Extractor,
    TooLarge,
    exception_reason,
    now,
)
from leanloop.pruning.layout import SAMPLE_CHARS, CountRatio, Layout, lay_out
from leanloop.pruning.markers import PruneParse, format_pruned
from leanloop.pruning.prompt import build_messages, split_raw_lines
from leanloop.pruning.reading import FINAL_REASONS
from leanloop.pruning.result import (
    PruneOutcome,
    UnreadRange,
    compact_info,
    info_block,
    is_final,
    merge,
    raw_outcome,
    unread_notes,
    unread_ranges,
    with_footer,
    without_end_footer,
    without_kept,
)
from leanloop.pruning.schema import PruneRequest
from leanloop.pruning.settings import MIN_ALLOWANCE_TOKENS, PruneSettings
from leanloop.pruning.strategies import (
    Plan,
    looked_for,
    pick_shapes,
    plan_reading,
    wants_shapes,
)
from leanloop.pruning.verify import RawIndex

# The names callers import from here (the pass's own, and those it re-exports from the
# modules it was split into, issue 40).
__all__ = [
    "MIN_ALLOWANCE_TOKENS",
    "SAMPLE_CHARS",
    "TIME_LIMIT",
    "ChunkDone",
    "CountRatio",
    "PruneOutcome",
    "PruneSettings",
    "Pruner",
    "TooLarge",
    "UnreadRange",
    "question_about_file",
    "task_context_from",
]

logger = logging.getLogger(__name__)

# Longest focus directive shown to the pruning model.
_FOCUS_CHARS = 2_000
# Longest task context shown to the pruning model (task_context_from stays well below).
_TASK_CONTEXT_CHARS = 4_000
# Whole extracts a pruner keeps for reuse (one run reads a few dozen files at most).
_REUSED_EXTRACTS = 64


class Pruner:
    """Runs the pruning pass with one pruning model and one set of settings."""

    def __init__(
        self,
        model: BaseChatModel,
        settings: PruneSettings,
        *,
        count_ratio: CountRatio | None = None,
        too_large: TooLarge | None = None,
    ) -> None:
        """Prune with ``model`` (used without tools) under ``settings``.

        Args:
            model: The pruning model.
            settings: How the pass behaves.
            count_ratio: Counts a sample's characters per token as the pruning model's
                server does (``None``: estimate it from the content).
            too_large: Tells a refusal for size from other failures (``None``: no
                failure is one, and a refused chunk is not read).
        """
        self._model = model
        self._settings = settings
        self._count_ratio = count_ratio
        self._too_large = too_large
        self._extractor = Extractor(model, settings.extraction, too_large=too_large)
        # Passes of one pruner run one after another (see prune()).
        self._passes = asyncio.Lock()
        # Complete extracts by (tool, output, focus, task context): a pruner lives for one
        # run, and a model that reads a trimmed file again gets the same extract at once.
        self._done: OrderedDict[tuple[str, str, str | None, str | None], PruneOutcome] = (
            OrderedDict()
        )

    @property
    def usage(self) -> RequestTally:
        """Every extraction request of this pruner's passes that got an answer, added up."""
        return self._extractor.usage

    @property
    def settings(self) -> PruneSettings:
        """The settings this pruner runs with."""
        return self._settings

    def with_settings(self, **changes: Any) -> Pruner:
        """A new pruner with this one's model, counting and refusal test, and ``changes``
        to its settings (``PruneSettings`` fields); its passes and speeds are its own."""
        return Pruner(
            self._model,
            dataclasses.replace(self._settings, **changes),
            count_ratio=self._count_ratio,
            too_large=self._too_large,
        )

    def observe_request(self, tokens: float, seconds: float) -> None:
        """Learn the server's speed from a request it answered outside the pass.

        The loop calls this with each main-model request when the pruning model talks to
        the same server, so the first chunk of a pass already gets a limit measured on
        that server rather than the long one for an unknown speed (ten floors).

        Args:
            tokens: Prompt tokens the server processed (cached ones left out).
            seconds: How long the request took.
        """
        self._extractor.observe(tokens, seconds)

    async def prune(
        self,
        *,
        tool_name: str,
        raw: str,
        request: PruneRequest,
        task_context: str,
        config: RunnableConfig | None = None,
        on_chunk: ChunkDone | None = None,
        subject: str | None = None,
    ) -> PruneOutcome:
        """Prune one tool output, or explain why the raw output is kept.

        Args:
            tool_name: The tool that produced ``raw``.
            raw: The tool's output (after the registry's caps).
            request: The main model's meta-arguments for this call.
            task_context: What the run is about (see :func:`task_context_from`); used
                when ``request.focus`` is not given.
            config: Passed to the pruning model so callbacks and tracing propagate.
            on_chunk: Told ``(done, total)`` as each chunk of a long pass finishes, so a
                person watching sees the pass move; its failures never stop the pass.
            subject: The path the output was read from, when the call names one: its
                words say nothing about where to look inside it (:meth:`Focus.without`).

        Passes of one pruner run one after another (the calls of one reply, prefetched
        files): each pass's deadline then counts its own reading, not the queue of another
        pass's chunks on a one-slot server; the chunks of one pass still overlap.

        Returns:
            The outcome; its ``text`` goes into the ToolMessage. Never raises, except
            :class:`asyncio.CancelledError`.
        """
        skipped = self.skip_reason(raw, request)
        if skipped is not None:
            logger.debug("not pruning the %s output: %s", tool_name, skipped)
            return raw_outcome(raw, chunks=0, seconds=0.0, fallback=None, skipped=skipped)
        # Measured: three prefetched files pruned at once on a CPU model cut the last
        # pass's chunks at its deadline (ADR 0006 amendment 3).
        # A focus replaces the task context in the prompt and the scoring: then the task
        # context (the model's latest reasoning) does not make a new pass.
        context = task_context if request.focus is None else None
        key = (tool_name, hashlib.sha256(raw.encode()).hexdigest(), request.focus, context)
        async with self._passes:
            done = self._done.get(key)
            if done is not None:
                logger.info(
                    "reused the extract of an identical %s output (%d to %d characters)",
                    tool_name,
                    done.chars_raw,
                    done.chars_out,
                )
                return dataclasses.replace(done, seconds=0.0, reused=True)
            started = now()
            try:
                outcome = await self._run(
                    tool_name=tool_name,
                    raw=raw,
                    request=request,
                    task_context=task_context,
                    config=config,
                    started=started,
                    on_chunk=on_chunk,
                    subject=subject,
                )
            except Exception as exc:  # a bug in the pass must not fail the run either
                logger.debug("the pruning pass failed unexpectedly", exc_info=True)
                return self._fall_back(tool_name, raw, exception_reason(exc), 0, started)
            # Only a whole extract is reused: a pass that fell back or left lines unread
            # for a reason of the moment (time, a failure) may do better when asked again.
            if outcome.pruned and all(is_final(r) for r in outcome.unread):
                self._done[key] = outcome
                while len(self._done) > _REUSED_EXTRACTS:
                    self._done.popitem(last=False)
            return outcome

    async def _run(
        self,
        *,
        tool_name: str,
        raw: str,
        request: PruneRequest,
        task_context: str,
        config: RunnableConfig | None,
        started: float,
        on_chunk: ChunkDone | None = None,
        subject: str | None = None,
    ) -> PruneOutcome:
        focus = request.focus[:_FOCUS_CHARS] if request.focus is not None else None
        task_context = task_context[:_TASK_CONTEXT_CHARS]
        lines = split_raw_lines(raw)
        layout = await self._layout(tool_name, lines, focus, task_context, subject)
        deadline = self._settings.deadline
        deadline_at = None if deadline is None else started + deadline
        scores, picked, chosen = layout.scores, None, list[int]()
        reading = self._settings.reading
        if wants_shapes(reading, layout):
            asked = focus if focus is not None else task_context
            scores, picked, chosen = await pick_shapes(
                reading,
                self._extractor,
                layout,
                tool_name=tool_name,
                focus=asked,
                config=config,
                deadline_at=deadline_at,
            )
        plan = dataclasses.replace(self._plan(tool_name, layout, scores), picked=picked)
        index = RawIndex(lines) if self._settings.verify else None
        pieces = await self._extractor.extract_all(
            plan.chunks,
            plan.rules(),
            lambda chunk, part: build_messages(
                tool_name=tool_name,
                focus=focus,
                task_context=task_context,
                chunk=chunk,
                parts=len(plan.chunks),
                part=part,
                style=self._settings.prompt_style,
            ),
            config,
            on_chunk,
            chars_per_token=plan.chars_per_token,
            resolution=plan.resolution,
            deadline_at=deadline_at,
            index=index,
        )
        read = [piece for piece in pieces if piece.answer is not None]
        # The requests sent or meant to be sent; those the reading rules left out are not.
        chunks = sum(1 for piece in pieces if piece.failure not in FINAL_REASONS)
        answers = [
            piece.answer
            for piece in sorted(read, key=lambda p: p.chunk.first_line)
            if piece.answer is not None
        ]
        failed = [piece for piece in pieces if piece.failure is not None]
        broken = [piece for piece in failed if piece.failure not in FINAL_REASONS]
        if chosen:
            # The lines the shapes answer chose, as raw lines: verified like any other.
            kept_lines = dict.fromkeys(lines[layout.entries[i][0] - 1] for i in chosen)
            answers.append(PruneParse(info=None, output="\n".join(kept_lines)))
        if not answers:
            reason = broken[0].failure if broken else "no chunks"
            return self._fall_back(tool_name, raw, reason or "failed", chunks, started, plan=plan)
        merged = merge(answers, lines, index, ordered=bool(plan.scoring))
        if merged.claimed and not merged.kept:
            return self._fall_back(tool_name, raw, "nothing verifiable", chunks, started, plan=plan)
        # Lines kept for the kind the shapes answer named were chosen, not left unread.
        unread = without_kept(unread_ranges(failed), {layout.entries[i][0] for i in chosen})
        looked = looked_for(plan)
        output = with_footer(merged.output, plan.footer)
        compact = None if looked else compact_info(merged, unread, tool_name, lines, len(raw))
        if compact is not None:
            # The one line states the total, so an "end of file" footer says nothing more.
            info, stated = compact
            output = without_end_footer(output, tool_name, lines, stated)
        else:
            info = info_block(merged, len(raw), [*looked, *unread_notes(unread, tool_name, lines)])
        text = format_pruned(info, output)
        seconds = now() - started
        if len(text) >= len(raw):
            logger.info("pruning the %s output saved nothing; keeping it whole", tool_name)
            return raw_outcome(
                raw, chunks=chunks, seconds=seconds, fallback="not smaller", skipped=None
            )
        if broken:
            logger.warning(
                "pruning the %s output: %d of %d chunk(s) failed (%s); their lines are "
                "marked as not read",
                tool_name,
                len(broken),
                chunks,
                "; ".join(dict.fromkeys(str(piece.failure) for piece in broken)),
            )
        if len(failed) > len(broken):
            logger.info(
                "pruning the %s output: read %d of %d part(s); the rest were not read (%s)",
                tool_name,
                chunks,
                len(plan.chunks),
                "; ".join(dict.fromkeys(str(p.failure) for p in failed if p not in broken)),
            )
        logger.info(
            "pruned the %s output from %d to %d characters "
            "(%d chunk(s) at %.2f characters a token from the %s, %.2f s, "
            "%d unverifiable line(s) dropped)",
            tool_name,
            len(raw),
            len(text),
            chunks,
            plan.chars_per_token,
            plan.source,
            seconds,
            merged.dropped,
        )
        return PruneOutcome(
            text=text,
            pruned=True,
            chars_raw=len(raw),
            chars_out=len(text),
            chunks=chunks,
            seconds=seconds,
            dropped_lines=merged.dropped,
            fallback=None,
            skipped=None,
            unread=tuple(unread),
            chars_per_token=plan.chars_per_token,
            ratio_source=plan.source,
        )

    def skip_reason(self, raw: str, request: PruneRequest) -> str | None:
        """Why no pass would run on ``raw`` ("opted out", "below min_chars"), or ``None``."""
        if not request.prune:
            return "opted out"
        if len(raw) < self._settings.min_chars:
            return "below min_chars"
        return None

    async def _layout(
        self,
        tool_name: str,
        lines: list[str],
        focus: str | None,
        task_context: str,
        subject: str | None = None,
    ) -> Layout:
        """The output numbered as requests show it, its chunk size and its word scores."""
        return await lay_out(
            self._settings.extraction,
            lines,
            count_ratio=self._count_ratio,
            tool_name=tool_name,
            focus=focus,
            task_context=task_context,
            subject=subject,
        )

    def _plan(self, tool_name: str, layout: Layout, scores: list[float]) -> Plan:
        """The requests of the pass, in the order to read them (see
        :func:`~leanloop.pruning.strategies.plan_reading`)."""
        return plan_reading(self._settings.reading, tool_name, layout, scores)

    def _fall_back(
        self,
        tool_name: str,
        raw: str,
        reason: str,
        chunks: int,
        started: float,
        *,
        plan: Plan | None = None,
    ) -> PruneOutcome:
        logger.warning(
            "pruning the %s output failed (%s); using the raw output (%d characters)",
            tool_name,
            reason,
            len(raw),
        )
        seconds = now() - started
        outcome = raw_outcome(raw, chunks=chunks, seconds=seconds, fallback=reason, skipped=None)
        if plan is None:
            return outcome
        return dataclasses.replace(
            outcome, chars_per_token=plan.chars_per_token, ratio_source=plan.source
        )
