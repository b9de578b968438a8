"""The pruning pass: keep only what the main model is looking for in one tool output.

After a prunable tool has run, :meth:`Pruner.prune` asks the pruning model, in a
stateless single-turn call without tools, to copy out verbatim the lines that matter
for the focus the main model gave (``output_prune_context``) or else for the task
context (:func:`task_context_from`). The answer is parsed from the marker format,
checked line by line against the raw output, and turned into a short tool message that
says how much was left out and how to get it all. An output too large for the pruning
model's window is split into chunks that are extracted concurrently and merged in order.

The pass never fails a run: an exception, a timeout or an unparseable answer means
the raw output is used as it is, with a warning. Only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig

from leanloop.pruning.markers import (
    PruneFormatError,
    PruneParse,
    format_pruned,
    parse_prune_response,
    restore_reserved,
)
from leanloop.pruning.prompt import (
    build_messages,
    chunk_budget,
    overhead_chars,
    plan_chunks,
    split_raw_lines,
)
from leanloop.pruning.schema import PRUNE_ARG, PruneRequest
from leanloop.pruning.verify import RawIndex, Verified, strip_line_numbers, verify_lines

__all__ = ["PruneOutcome", "PruneSettings", "Pruner", "task_context_from"]

logger = logging.getLogger(__name__)

# Longest excerpt of the model's own INFO text carried into the tool message.
_MODEL_NOTE_CHARS = 100
# Longest user request and reasoning text carried into the task context (each).
_CONTEXT_CHARS = 1_000
# Longest focus directive shown to the pruning model.
_FOCUS_CHARS = 2_000
_REASON_CHARS = 200
# Longest task context shown to the pruning model (task_context_from stays well below).
_TASK_CONTEXT_CHARS = 4_000
_THINK_END = "</think>"


@dataclass(frozen=True, kw_only=True)
class PruneSettings:
    """How the pruning pass behaves (the agent's ``pruning_*`` keys)."""

    min_chars: int = 2_000
    """Outputs shorter than this are not worth a model call and are kept whole."""
    timeout: float = 60.0
    """Seconds one extraction request may take before the raw output is used."""
    concurrency: int = 4
    """Most extraction requests in flight at once for a chunked output."""
    verify: bool = True
    """Drop extracted lines that are not in the raw output."""
    window_tokens: int = 32_768
    """The pruning model's own context window, in tokens."""
    chars_per_token: float = 3.3
    """Characters per token, to estimate what fits the window."""

    def __post_init__(self) -> None:
        """Reject settings the pass cannot work with."""
        problems = [
            f"{name} must be {rule} (got {value!r})"
            for name, value, ok, rule in (
                ("min_chars", self.min_chars, self.min_chars >= 0, ">= 0"),
                ("timeout", self.timeout, self.timeout > 0, "> 0"),
                ("concurrency", self.concurrency, self.concurrency >= 1, ">= 1"),
                ("window_tokens", self.window_tokens, self.window_tokens >= 1, ">= 1"),
                ("chars_per_token", self.chars_per_token, self.chars_per_token > 0, "> 0"),
            )
            if not ok
        ]
        if problems:
            msg = "invalid pruning settings: " + "; ".join(problems)
            raise ValueError(msg)

    @property
    def reply_tokens(self) -> int:
        """Tokens of the window kept free for the extraction answer."""
        return min(max(self.window_tokens // 4, 256), 8_192)


@dataclass(frozen=True)
class PruneOutcome:
    """What the pruning pass did with one tool output."""

    text: str
    """What goes into the ToolMessage: the pruned blocks, or the raw output."""
    pruned: bool
    """Whether ``text`` is a pruned result."""
    chars_raw: int
    """Characters of the raw output."""
    chars_out: int
    """Characters of ``text``, markers included."""
    chunks: int
    """Extraction requests the output was split into (0 when skipped)."""
    seconds: float
    """Time the pass took."""
    dropped_lines: int
    """Extracted lines dropped because they are not in the raw output."""
    fallback: str | None
    """Why the raw output was used although a pass ran (``"timeout"``, ``"unparseable"``,
    ``"nothing verifiable"``, ``"exception: ..."``, ``"not smaller"``); else ``None``."""
    skipped: str | None
    """Why no pass ran (``"opted out"``, ``"below min_chars"``); else ``None``."""


class _ExtractionFailed(Exception):
    """One extraction request failed; ``reason`` is the outcome's ``fallback``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Merged:
    output: str
    notes: list[str]
    claimed: int
    kept: int
    dropped: int


class Pruner:
    """Runs the pruning pass with one pruning model and one set of settings."""

    def __init__(self, model: BaseChatModel, settings: PruneSettings) -> None:
        """Prune with ``model`` (used without tools) under ``settings``."""
        self._model = model
        self._settings = settings

    @property
    def settings(self) -> PruneSettings:
        """The settings this pruner runs with."""
        return self._settings

    async def prune(
        self,
        *,
        tool_name: str,
        raw: str,
        request: PruneRequest,
        task_context: str,
        config: RunnableConfig | None = None,
    ) -> PruneOutcome:
        """Prune one tool output, or explain why the raw output is kept.

        Args:
            tool_name: The tool that produced ``raw``.
            raw: The tool's output (after the registry's caps).
            request: The main model's meta-arguments for this call.
            task_context: What the run is about (see :func:`task_context_from`); used
                when ``request.focus`` is not given.
            config: Passed to the pruning model so callbacks and tracing propagate.

        Returns:
            The outcome; its ``text`` goes into the ToolMessage. Never raises, except
            :class:`asyncio.CancelledError`.
        """
        skipped = self._skip_reason(raw, request)
        if skipped is not None:
            logger.debug("not pruning the %s output: %s", tool_name, skipped)
            return _raw_outcome(raw, chunks=0, seconds=0.0, fallback=None, skipped=skipped)
        started = time.perf_counter()
        try:
            return await self._run(
                tool_name=tool_name,
                raw=raw,
                request=request,
                task_context=task_context,
                config=config,
                started=started,
            )
        except Exception as exc:  # a bug in the pass must not fail the run either
            logger.debug("the pruning pass failed unexpectedly", exc_info=True)
            return self._fall_back(tool_name, raw, _exception_reason(exc), 0, started)

    async def _run(
        self,
        *,
        tool_name: str,
        raw: str,
        request: PruneRequest,
        task_context: str,
        config: RunnableConfig | None,
        started: float,
    ) -> PruneOutcome:
        focus = request.focus[:_FOCUS_CHARS] if request.focus is not None else None
        task_context = task_context[:_TASK_CONTEXT_CHARS]
        requests = self._requests(tool_name, raw, focus, task_context)
        try:
            answers = await self._extract_all(requests, config)
        except _ExtractionFailed as failed:
            return self._fall_back(tool_name, raw, failed.reason, len(requests), started)
        merged = self._merge(answers, split_raw_lines(raw))
        if merged.claimed and not merged.kept:
            return self._fall_back(tool_name, raw, "nothing verifiable", len(requests), started)
        text = format_pruned(_info(merged, len(raw), len(requests)), merged.output)
        seconds = time.perf_counter() - started
        if len(text) >= len(raw):
            logger.info("pruning the %s output saved nothing; keeping it whole", tool_name)
            return _raw_outcome(
                raw, chunks=len(requests), seconds=seconds, fallback="not smaller", skipped=None
            )
        logger.info(
            "pruned the %s output from %d to %d characters "
            "(%d chunk(s), %.2f s, %d unverifiable line(s) dropped)",
            tool_name,
            len(raw),
            len(text),
            len(requests),
            seconds,
            merged.dropped,
        )
        return PruneOutcome(
            text=text,
            pruned=True,
            chars_raw=len(raw),
            chars_out=len(text),
            chunks=len(requests),
            seconds=seconds,
            dropped_lines=merged.dropped,
            fallback=None,
            skipped=None,
        )

    def _skip_reason(self, raw: str, request: PruneRequest) -> str | None:
        if not request.prune:
            return "opted out"
        if len(raw) < self._settings.min_chars:
            return "below min_chars"
        return None

    def _requests(
        self, tool_name: str, raw: str, focus: str | None, task_context: str
    ) -> list[list[BaseMessage]]:
        settings = self._settings
        budget = chunk_budget(
            window_tokens=settings.window_tokens,
            chars_per_token=settings.chars_per_token,
            reply_tokens=settings.reply_tokens,
            overhead_chars=overhead_chars(
                tool_name=tool_name, focus=focus, task_context=task_context
            ),
        )
        chunks = plan_chunks(split_raw_lines(raw), budget)
        return [
            build_messages(
                tool_name=tool_name,
                focus=focus,
                task_context=task_context,
                chunk=chunk,
                parts=len(chunks),
                part=part,
            )
            for part, chunk in enumerate(chunks, start=1)
        ]

    async def _extract_all(
        self, requests: list[list[BaseMessage]], config: RunnableConfig | None
    ) -> list[PruneParse]:
        semaphore = asyncio.Semaphore(self._settings.concurrency)
        call_config = _call_config(config)
        try:
            # A TaskGroup cancels the remaining chunks as soon as one fails: the whole
            # pass falls back to the raw output then, so their answers would be wasted.
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(self._extract_one(messages, semaphore, call_config))
                    for messages in requests
                ]
        except ExceptionGroup as failures:
            first = failures.exceptions[0]
            if isinstance(first, _ExtractionFailed):
                raise first from None
            raise  # pragma: no cover - _extract_one turns every Exception into a failure
        return [task.result() for task in tasks]

    async def _extract_one(
        self,
        messages: list[BaseMessage],
        semaphore: asyncio.Semaphore,
        config: RunnableConfig | None,
    ) -> PruneParse:
        async with semaphore:
            try:
                async with asyncio.timeout(self._settings.timeout):
                    reply = await self._model.ainvoke(messages, config=config)
            except TimeoutError:
                raise _ExtractionFailed("timeout") from None
            except Exception as exc:  # any model failure means: use the raw output
                raise _ExtractionFailed(_exception_reason(exc)) from exc
        try:
            return parse_prune_response(_answer_text(reply))
        except PruneFormatError:
            raise _ExtractionFailed("unparseable") from None

    def _merge(self, answers: list[PruneParse], raw_lines: list[str]) -> _Merged:
        index = RawIndex(raw_lines) if self._settings.verify else None
        kept: list[str] = []
        claimed = dropped = 0
        for answer in answers:
            if not answer.output.strip():
                continue  # this chunk had nothing relevant
            lines = restore_reserved(answer.output).split("\n")
            if index is not None:
                checked = verify_lines(lines, index)
            else:
                stripped = strip_line_numbers(lines)
                checked = Verified(stripped, sum(1 for ln in stripped if ln.strip()), 0)
            kept.extend(checked.lines)
            claimed += checked.claimed
            dropped += checked.dropped
        notes = _notes(answers)
        output = _tidy(kept)
        return _Merged(output, notes, claimed, claimed - dropped, dropped)

    def _fall_back(
        self, tool_name: str, raw: str, reason: str, chunks: int, started: float
    ) -> PruneOutcome:
        logger.warning(
            "pruning the %s output failed (%s); using the raw output (%d characters)",
            tool_name,
            reason,
            len(raw),
        )
        seconds = time.perf_counter() - started
        return _raw_outcome(raw, chunks=chunks, seconds=seconds, fallback=reason, skipped=None)


def _exception_reason(exc: Exception) -> str:
    return _one_line(f"exception: {type(exc).__name__}: {exc}", _REASON_CHARS)


def _answer_text(reply: BaseMessage) -> str:
    """The reply's text without a reasoning model's ``<think>`` section."""
    text = str(reply.text)
    # Thinking models draft their answer, markers included, before the real one; the
    # draft would otherwise be read as extra blocks.
    end = text.rfind(_THINK_END)
    return text[end + len(_THINK_END) :] if end >= 0 else text


def _raw_outcome(
    raw: str, *, chunks: int, seconds: float, fallback: str | None, skipped: str | None
) -> PruneOutcome:
    return PruneOutcome(
        text=raw,
        pruned=False,
        chars_raw=len(raw),
        chars_out=len(raw),
        chunks=chunks,
        seconds=seconds,
        dropped_lines=0,
        fallback=fallback,
        skipped=skipped,
    )


def _call_config(config: RunnableConfig | None) -> RunnableConfig | None:
    if config is None:
        return None
    # The caller's run_id names the caller's own run; concurrent chunk requests must
    # not reuse it. Callbacks, tags and metadata are kept so tracing nests correctly.
    call_config = RunnableConfig(**config)
    call_config.pop("run_id", None)
    call_config["run_name"] = "leanloop.prune"
    return call_config


def _notes(answers: list[PruneParse]) -> list[str]:
    """The pruning model's own INFO texts worth passing on, each once, in order."""
    # Chunks that kept something explain the result; the others only say "nothing here".
    useful = [a.info for a in answers if a.info and a.output.strip()]
    if not useful:
        useful = [a.info for a in answers if a.info]
    return list(dict.fromkeys(useful))


def _tidy(lines: list[str]) -> str:
    """Join kept lines, without leading, trailing or repeated blank lines."""
    result: list[str] = []
    for line in lines:
        if line.strip() or (result and result[-1].strip()):
            result.append(line if line.strip() else "")
    while result and not result[-1]:
        result.pop()
    return "\n".join(result)


def _info(merged: _Merged, raw_chars: int, chunks: int) -> str:
    summary = (
        f"pruned from {raw_chars} to {len(merged.output)} characters; "
        f"call again with {PRUNE_ARG}=false for the full output"
    )
    if not merged.claimed:
        summary = f"nothing relevant was found; {summary}"
    details = []
    if merged.dropped:
        details.append(f"{merged.dropped} unverifiable line(s) dropped")
    if chunks > 1:
        details.append(f"read in {chunks} parts")
    lines = [summary]
    if details:
        lines.append("; ".join(details))
    if merged.notes:
        lines.append("notes: " + _one_line("; ".join(merged.notes), _MODEL_NOTE_CHARS))
    return "\n".join(lines)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def task_context_from(messages: Sequence[BaseMessage], *, question: str) -> str:
    """The task context for extraction: the user's question and the latest reasoning.

    Args:
        messages: The conversation so far (read for the assistant's latest reasoning).
        question: The user's current question, as the loop found it (the last human
            turn of the input, so a multi-turn input is steered by its current turn).

    Returns:
        The question and the latest non-empty AI message text (each shortened), or
        ``""`` when there is neither.
    """
    reasoning = next(
        (m for m in reversed(messages) if isinstance(m, AIMessage) and str(m.text).strip()),
        None,
    )
    parts = []
    if question.strip():
        parts.append("The user asked: " + _head(question, _CONTEXT_CHARS))
    if reasoning is not None:
        # The end of the reasoning says what the model is about to look for.
        parts.append("The assistant's latest reasoning: " + _tail(str(reasoning.text)))
    return "\n".join(parts)


def _head(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _CONTEXT_CHARS else "…" + text[-(_CONTEXT_CHARS - 1) :].lstrip()
