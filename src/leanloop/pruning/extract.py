"""The pruning pass: keep only what the main model is looking for in one tool output.

After a prunable tool has run, :meth:`Pruner.prune` asks the pruning model, in a
stateless single-turn call without tools, to copy out verbatim the lines that matter
for the focus the main model gave (``output_prune_context``) or else for the task
context (:func:`task_context_from`). The answer is parsed from the marker format,
checked line by line against the raw output, and turned into a short tool message that
says how much was left out and how to get it all. An output too large for the pruning
model's window is split into chunks that are extracted concurrently and merged in order.

Chunks are sized from the output's own characters per token: counted by the pruning
model's server when the loop injects a ``count_ratio`` (llama.cpp ``/tokenize``), else
estimated from the kind of characters (:func:`estimate_chars_per_token`), with a 15%
margin. A chunk the server refuses for its size (the injected ``too_large`` predicate)
is cut in two and retried, at most four times deep. Each request has its own limit,
from the server's measured speed (:mod:`leanloop.pruning.speed`: the pass's answers and,
on a shared server, the main model's requests), multiplied by the requests in flight,
since a llama.cpp server with one slot answers them one after another.

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
import re
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig

from leanloop.cache_usage import RequestTally
from leanloop.exceptions import InvalidArgument
from leanloop.pruning.markers import (
    INFO_END,
    INFO_START,
    OUTPUT_END,
    OUTPUT_START,
    PruneFormatError,
    PruneParse,
    format_pruned,
    parse_prune_response,
    restore_reserved,
)
from leanloop.pruning.meaning import meaning_scores
from leanloop.pruning.numbers import Resolution, lines_named
from leanloop.pruning.prompt import (
    Chunk,
    PromptStyle,
    build_messages,
    chunk_budget,
    estimate_chars_per_token,
    numbered_entries,
    overhead_text,
    pack_entries,
    sample_text,
    split_chunk,
    split_raw_lines,
    window_chunk,
)
from leanloop.pruning.rank import (
    Focus,
    focus_of,
    line_scores,
    pack_windows,
    plan_windows,
    whole_word_scores,
)
from leanloop.pruning.reading import (
    FINAL_REASONS,
    NO_FOCUS_WORD,
    NOT_NAMED,
    WEAKER_SHARE,
    ReadingRules,
)
from leanloop.pruning.schema import FOCUS_ARG, PRUNE_ARG, PruneRequest
from leanloop.pruning.shapes import Shape, candidates, chosen_lines, shape_of, shapes_messages
from leanloop.pruning.speed import ServerSpeed, Waiting, processed_tokens
from leanloop.pruning.verify import RawIndex, Verified, strip_line_numbers, verify_lines

__all__ = [
    "ChunkDone",
    "CountRatio",
    "PruneOutcome",
    "PruneSettings",
    "Pruner",
    "TooLarge",
    "UnreadRange",
    "task_context_from",
]

logger = logging.getLogger(__name__)

# Longest excerpt of the pruning model's own INFO text kept in the debug log.
_MODEL_NOTE_CHARS = 100
# Longest user request and reasoning text carried into the task context (each).
_CONTEXT_CHARS = 1_000
# Longest focus directive shown to the pruning model.
_FOCUS_CHARS = 2_000
_REASON_CHARS = 200
# Longest task context shown to the pruning model (task_context_from stays well below).
_TASK_CONTEXT_CHARS = 4_000
_THINK_END = "</think>"
_RESERVED = (INFO_START, INFO_END, OUTPUT_START, OUTPUT_END)
# Characters of the output (numbered, as the model sees them) whose tokens are counted.
SAMPLE_CHARS = 6_000
# Share of the window left free for the chat template and the ratio's error (the sample
# is the output's start, which need not be typical of the rest).
_MARGIN = 0.15
# How often a chunk refused for its size is cut in two again (1/16 of it at most).
_MAX_SPLITS = 4
# Seconds the server may take to count the sample's tokens.
_COUNT_TIMEOUT_S = 5.0
# When windows around the hits hold more than this share of the output, it is read whole.
_DENSE_SHARE = 0.5
# A pruned result that keeps more than this share of the output says the focus did not
# narrow it (a result that is most of the output is hardly pruned).
_BROAD_SHARE = 0.25
# Unread ranges listed one by one in the info block; the rest are counted.
_UNREAD_LISTED = 12
# Whole extracts a pruner keeps for reuse (one run reads a few dozen files at most).
_REUSED_EXTRACTS = 64
_READ_FILE = "read_file"
MIN_ALLOWANCE_TOKENS = 2_000
"""The least default reading allowance of a pass, in prompt tokens of output (measured on
the embedded 0.5B on two cores: 60-300 prompt tokens a second, so 10-35 s)."""
# Requests' worth of output a pass reads by default (see PruneSettings.read_tokens).
_ALLOWANCE_REQUESTS = 2
# Lines of one shape the model picked that are kept (the best by the word match, then
# the first): a shape of hundreds of lines is a kind, not an answer.
_PICKED_LINES = 4
# How far a rare line may stand from a picked one to be kept with it (shapes.chosen_lines).
_BURST_LINES = 8
# A shapes answer naming more than this share of the list, and more than _MAX_PICKS, is
# read as its first _MAX_PICKS names: the 0.5B answered 1, 3, 5, … 21 of 22.
_PICKED_SHARE = 1 / 3
_MAX_PICKS = 3
TIME_LIMIT = "past the pass's time limit"
_READ_FILE_NUMBER = re.compile(r"^\s*(\d+)\|")
_FOOTER = re.compile(r"\[lines [\d,]+-[\d,]+ of [\d,]+.*\]\Z")
# read_file's closing line for a read of the whole file: lines 1-N of N, nothing more.
_WHOLE_FILE = re.compile(r"\[lines 1-([\d,]+) of \1; end of file\]")

CountRatio = Callable[[str], Awaitable[float | None]]
"""Characters per token of a sample text, as the pruning model's server counts it."""
TooLarge = Callable[[BaseException], bool]
"""Whether a failed extraction request was refused for its size."""


@dataclass(frozen=True, kw_only=True)
class PruneSettings:
    """How the pruning pass behaves (the agent's ``pruning_*`` keys)."""

    min_chars: int = 2_000
    """Outputs shorter than this are not worth a model call and are kept whole."""
    timeout: float = 60.0
    """Seconds one extraction request may take at least. Once the server's speed is
    measured a request may take three times what it predicts for its size (ten times this
    at most); until then, ten times this. Either is multiplied by the requests in flight,
    which a one-slot server queues (:mod:`leanloop.pruning.speed`)."""
    concurrency: int = 4
    """Most extraction requests in flight at once for a chunked output."""
    verify: bool = True
    """Drop extracted lines that are not in the raw output."""
    window_tokens: int = 32_768
    """The pruning model's own context window, in tokens."""
    chars_per_token: float = 3.3
    """Characters per token, the most the content-aware estimate may assume."""
    reply_limit: int | None = None
    """The pruning model's ``max_tokens``, if set: the reply reserve is no larger."""
    prompt_style: PromptStyle = "default"
    """``small``: the extraction prompt for small models (see ``SMALL_SYSTEM_PROMPT``)."""
    max_chunk_tokens: int | None = None
    """The most output tokens one request shows (``None``: as many as the window allows);
    small models extract better from small chunks."""
    deadline: float | None = None
    """Seconds the whole pass may take (``None``: no limit). A request is not started
    when the measured speed says it cannot finish in time, and none outlives the limit;
    the lines not read are named in the result with the call that reads them."""
    window_tokens_read: int = 256
    """Tokens of one window around a line that holds what the pass looks for, when the
    output needs more than one request (:mod:`leanloop.pruning.rank`): the pass reads
    the best windows first and stops when the evidence stops
    (:mod:`leanloop.pruning.reading`)."""
    read_tokens: int | None = None
    """The most prompt tokens of output one pass reads (``None``: twice a request's size,
    and at least :data:`MIN_ALLOWANCE_TOKENS`); the first request is always read.
    What is not read is named in the result with the call that reads it."""
    pack_windows: bool = True
    """Whether one request shows several windows (as many as its chunk size holds), or
    one each: a 0.5B model copies the first relevant line of a request and stops."""
    shapes: int = 12
    """The most line shapes one shapes request shows (0: no shapes request). When an
    output needs more than one request and no literal of the focus is in it, the pruning
    model first sees one example line of each kind the output has and names those that
    answer the focus (:mod:`leanloop.pruning.shapes`); their lines are read first."""
    meaning: bool = True
    """Whether a shapes request for a focus no line shares a word with also shows the
    kinds of line closest to it in meaning (:mod:`leanloop.pruning.meaning`; needs the
    ``wordllama`` package, else only the rarest kinds are shown)."""

    def __post_init__(self) -> None:
        """Reject settings the pass cannot work with."""
        problems = [
            f"{name} must be {rule} (got {value!r})"
            for name, value, ok, rule in (
                ("min_chars", self.min_chars, self.min_chars >= 0, ">= 0"),
                ("timeout", self.timeout, self.timeout > 0, "> 0"),
                ("concurrency", self.concurrency, self.concurrency >= 1, ">= 1"),
                ("shapes", self.shapes, self.shapes >= 0, ">= 0"),
                ("window_tokens", self.window_tokens, self.window_tokens >= 1, ">= 1"),
                ("chars_per_token", self.chars_per_token, self.chars_per_token > 0, "> 0"),
                ("deadline", self.deadline, self.deadline is None or self.deadline > 0, "> 0"),
                (
                    "window_tokens_read",
                    self.window_tokens_read,
                    self.window_tokens_read >= 1,
                    ">= 1",
                ),
                (
                    "read_tokens",
                    self.read_tokens,
                    self.read_tokens is None or self.read_tokens >= 1,
                    ">= 1",
                ),
                (
                    "max_chunk_tokens",
                    self.max_chunk_tokens,
                    self.max_chunk_tokens is None or self.max_chunk_tokens >= 1,
                    ">= 1",
                ),
                (
                    "reply_limit",
                    self.reply_limit,
                    self.reply_limit is None or self.reply_limit >= 1,
                    ">= 1",
                ),
            )
            if not ok
        ]
        if problems:
            msg = "invalid pruning settings: " + "; ".join(problems)
            raise InvalidArgument(msg)

    @property
    def reply_tokens(self) -> int:
        """Tokens of the window kept free for the extraction answer."""
        reserve = min(max(self.window_tokens // 4, 256), 8_192)
        return reserve if self.reply_limit is None else min(reserve, self.reply_limit)


ChunkDone = Callable[[int, int], Awaitable[None]]
"""Told ``(done, total)`` as each chunk of a chunked pass finishes."""


@dataclass(frozen=True)
class UnreadRange:
    """Lines of a raw output whose chunk failed, so no extract of them was kept."""

    first_line: int
    """1-based number of the first raw output line not read."""
    last_line: int
    """1-based number of the last raw output line not read."""
    reason: str
    """Why (``"timeout"``, ``"unparseable"``, ``"exception: ..."``)."""

    def span(self, tool_name: str, raw_lines: Sequence[str]) -> str:
        """``12-40``: the range in the file's own numbers for ``read_file``, else the output's."""
        if tool_name == _READ_FILE:
            first, last = self._file_lines(raw_lines)
            if first is not None and last is not None:
                return f"{first}-{last}"
        return f"{self.first_line}-{self.last_line}"

    def _file_lines(self, raw_lines: Sequence[str]) -> tuple[int | None, int | None]:
        """The file numbers of the range's first and last numbered lines (read_file).

        Looked for from each end only: the range of a 50 KB file's unread middle holds
        thousands of lines, and every pruned result names its ranges (a scan of each cost
        a few milliseconds a result).
        """
        inward = range(self.first_line, self.last_line + 1)
        first = next((n for i in inward if (n := _file_line(raw_lines, i)) is not None), None)
        if first is None:
            return None, None
        last = next(n for i in reversed(inward) if (n := _file_line(raw_lines, i)) is not None)
        return first, last

    def describe(self, tool_name: str, raw_lines: Sequence[str]) -> str:
        """One line for the info block: which lines, why, and how to ask for them.

        A ``read_file`` output numbers its lines (``  201| text``), so the range is given
        in the file's own numbers with the call that reads it; other tools' ranges are
        lines of the output.
        """
        if tool_name == _READ_FILE:
            # The range may begin or end on a line without a number (read_file's own
            # "[lines …]" footer): the file lines are those of the numbered lines inside it.
            first, last = self._file_lines(raw_lines)
            if first is not None and last is not None and last >= first:
                return (
                    f"lines {first}-{last} not read ({self.reason}); "
                    f"read_file(offset={first}, limit={last - first + 1}) reads them"
                )
        return (
            f"lines {self.first_line}-{self.last_line} of the output not read "
            f"({self.reason}); {PRUNE_ARG}=false shows them"
        )


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
    """Extraction requests that read the output's lines (0 when skipped); a shapes request
    (:mod:`leanloop.pruning.shapes`) is not one of them, while the report's tally counts it."""
    seconds: float
    """Time the pass took."""
    dropped_lines: int
    """Extracted lines dropped because they are not in the raw output."""
    fallback: str | None
    """Why the raw output was used although a pass ran (``"timeout"``, ``"unparseable"``,
    ``"nothing verifiable"``, ``"exception: ..."``, ``"not smaller"``); else ``None``."""
    skipped: str | None
    """Why no pass ran (``"opted out"``, ``"below min_chars"``); else ``None``."""
    unread: tuple[UnreadRange, ...] = ()
    """Lines of a pruned result whose chunk failed; the info block names them."""
    chars_per_token: float | None = None
    """Characters per token the chunks were sized with (``None`` when no pass ran)."""
    ratio_source: str | None = None
    """Where ``chars_per_token`` came from: ``"server"`` (counted) or ``"estimate"``."""
    reused: bool = False
    """Whether this is the extract of an identical earlier pass of the run (no request)."""


class _ExtractionFailed(Exception):
    """One extraction request failed; ``reason`` is the outcome's ``fallback``."""

    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large


@dataclass(frozen=True)
class _Piece:
    """What became of one chunk: its answer, or why it has none."""

    chunk: Chunk
    answer: PruneParse | None
    failure: str | None


@dataclass(frozen=True)
class _Plan:
    chunks: list[Chunk]
    """The requests, in the order to read them."""
    chars_per_token: float
    source: str
    scoring: int | None = None
    """How many of the first requests hold a word the pass looks for (``None``: one
    request, read whole; 0: no line holds one, read in order)."""
    focus: Focus | None = None
    """What the windows were scored by (``None``: not read by windows)."""
    peaks: tuple[float, ...] = ()
    """The best line score of each request (``()``: not read by windows)."""
    footer: str | None = None
    """read_file's closing line, when the windows leave it out: added to what is kept."""
    resolution: Resolution | None = None
    """What resolves a line the model names to the line it meant (``None``: taken as named)."""
    allowance: float | None = None
    """The most prompt tokens of output the pass reads (see ``PruneSettings.read_tokens``)."""
    picked: int | None = None
    """Shapes the model named in the shapes request (``None``: none was sent)."""


@dataclass(frozen=True)
class _Layout:
    """An output as the pass's requests show it, before it is planned."""

    entries: list[tuple[int, str]]
    """The shown lines: ``(raw number, "  12| text")``, a long line in several pieces."""
    whole: list[Chunk]
    """The output cut in order into requests as large as fit."""
    ratio: float
    source: str
    budget: int
    """Characters of output one request may show."""
    look_for: Focus
    scores: list[float]
    """Each entry's score from the word match."""
    resolution: Resolution
    """What resolves a line the model names to the line it meant."""
    footer: str | None
    """read_file's closing line, when it is the last entry (never shown to the model)."""


def _now() -> float:
    """The running event loop's clock: the pass's deadline and measured speeds are judged on
    it because its timeouts (``asyncio.timeout`` in :mod:`leanloop.pruning.speed`) fire on it;
    tests that give the loop virtual time (ADR 0027) then see the same seconds everywhere."""
    return asyncio.get_running_loop().time()


@dataclass(frozen=True)
class _Limits:
    """What bounds the requests of one pass: how many at once, and until when."""

    semaphore: asyncio.Semaphore
    deadline_at: float | None
    """The event loop's ``loop.time()`` after which no request may run."""
    chars_per_token: float
    """The pass's ratio: a request's tokens are estimated from its characters with it."""


@dataclass(frozen=True)
class _Merged:
    output: str
    notes: list[str]
    claimed: int
    kept: int
    dropped: int


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
        self._speed = ServerSpeed()
        self.usage = RequestTally()
        """Every extraction request of this pruner's passes that got an answer, added up."""
        self._in_flight = 0
        # Passes of one pruner run one after another (see prune()).
        self._passes = asyncio.Lock()
        # Complete extracts by (tool, output, focus, task context): a pruner lives for one
        # run, and a model that reads a trimmed file again gets the same extract at once.
        self._done: OrderedDict[tuple[str, str, str | None, str | None], PruneOutcome] = (
            OrderedDict()
        )

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
        self._speed.observe(tokens, seconds)

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
            return _raw_outcome(raw, chunks=0, seconds=0.0, fallback=None, skipped=skipped)
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
            started = _now()
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
                return self._fall_back(tool_name, raw, _exception_reason(exc), 0, started)
            # Only a whole extract is reused: a pass that fell back or left lines unread
            # for a reason of the moment (time, a failure) may do better when asked again.
            if outcome.pruned and all(_final(r) for r in outcome.unread):
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
        if self._wants_shapes(layout):
            asked = focus if focus is not None else task_context
            scores, picked, chosen = await self._pick_shapes(
                tool_name, layout, asked, config, deadline_at
            )
        plan = dataclasses.replace(self._plan(tool_name, layout, scores), picked=picked)
        index = RawIndex(lines) if self._settings.verify else None
        pieces = await self._extract_all(
            plan,
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
        merged = self._merge(answers, lines, index, ordered=bool(plan.scoring))
        if merged.claimed and not merged.kept:
            return self._fall_back(tool_name, raw, "nothing verifiable", chunks, started, plan=plan)
        # Lines kept for the kind the shapes answer named were chosen, not left unread.
        unread = _without(_unread(failed), {layout.entries[i][0] for i in chosen})
        looked = _looked_for(plan)
        output = _with_footer(merged.output, plan.footer)
        compact = None if looked else _compact_info(merged, unread, tool_name, lines, len(raw))
        if compact is not None:
            # The one line states the total, so an "end of file" footer says nothing more.
            info, stated = compact
            output = _without_end_footer(output, tool_name, lines, stated)
        else:
            info = _info(merged, len(raw), [*looked, *_unread_notes(unread, tool_name, lines)])
        text = format_pruned(info, output)
        seconds = _now() - started
        if len(text) >= len(raw):
            logger.info("pruning the %s output saved nothing; keeping it whole", tool_name)
            return _raw_outcome(
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
    ) -> _Layout:
        """The output numbered as requests show it, its chunk size and its word scores."""
        settings = self._settings
        sample = sample_text(lines, SAMPLE_CHARS)
        measured = await self._measure(sample)
        if measured is not None:
            ratio, source = measured, "server"
        else:
            ratio = estimate_chars_per_token(sample, ceiling=settings.chars_per_token)
            source = "estimate"
        overhead = overhead_text(
            tool_name=tool_name, focus=focus, task_context=task_context, style=settings.prompt_style
        )
        budget = chunk_budget(
            window_tokens=settings.window_tokens,
            chars_per_token=ratio,
            reply_tokens=settings.reply_tokens,
            overhead_chars=len(overhead),
            margin=_MARGIN,
            overhead_chars_per_token=estimate_chars_per_token(
                overhead, ceiling=settings.chars_per_token
            ),
        )
        if settings.max_chunk_tokens is not None:
            budget = max(min(budget, int(settings.max_chunk_tokens * ratio)), 1)
        entries = numbered_entries(lines, budget, one_number=settings.prompt_style == "small")
        texts = [text.split("| ", 1)[-1] for _, text in entries]
        look_for = focus_of(focus if focus is not None else task_context).without(subject)
        # read_file's closing line (which lines of how many, what comes next) is not shown
        # to the pruning model: asked for line numbers, the 0.5B and the 1.5B both named
        # it. The pass adds it to what is kept (_with_footer), never left unread.
        footer = tool_name == _READ_FILE and bool(_FOOTER.match(lines[-1])) and len(entries) > 1
        return _Layout(
            entries=entries,
            whole=pack_entries(entries, budget),
            ratio=ratio,
            source=source,
            budget=budget,
            look_for=look_for,
            scores=line_scores(texts, look_for),
            resolution=Resolution(
                evidence=_line_scores(entries, whole_word_scores(texts, look_for)),
                rare=_rare_lines(entries, texts),
                literal=frozenset(
                    number
                    for (number, _), value in zip(
                        entries, line_scores(texts, Focus((), look_for.literals)), strict=True
                    )
                    if value > 0
                ),
            ),
            footer=lines[-1] if footer else None,
        )

    def _allowance(self, layout: _Layout) -> float:
        """The most prompt tokens of output the pass reads (PruneSettings.read_tokens)."""
        if self._settings.read_tokens is not None:
            return float(self._settings.read_tokens)
        request = layout.budget / layout.ratio
        return max(float(MIN_ALLOWANCE_TOKENS), _ALLOWANCE_REQUESTS * request)

    def _wants_shapes(self, layout: _Layout) -> bool:
        """Whether the pass asks the model which kinds of line answer the focus.

        Only for an output that needs more than one request, and only when no line holds
        a literal of the focus or one of its words as a whole word: a focus in a user's
        own words ("why the checkout service crashed") names nothing in a log that says
        OutOfMemoryError, and a word inside another ("log" in ``catalog``) is no evidence
        of where to look. A focus whose words are there is read by them, as before.
        """
        if self._settings.shapes <= 0 or len(layout.whole) <= 1:
            return False
        return not any(layout.resolution.evidence)

    def _plan(self, tool_name: str, layout: _Layout, scores: list[float]) -> _Plan:
        """The requests of the pass, in the order to read them.

        An output that fits one request is read whole (for a small model, one window a
        request, only when nothing scores or the hits are dense). A larger one is cut into
        small windows around the lines that hold what the pass looks for, packed best
        first into requests (:mod:`leanloop.pruning.rank`); the pass may stop before the
        last.
        """
        settings = self._settings
        entries, whole, ratio, source = layout.entries, layout.whole, layout.ratio, layout.source
        look_for = layout.look_for
        allowance = self._allowance(layout)
        # A small model reads one window a request (pack_windows off) even when the
        # whole output would fit one: shown the 41 lines of a file at once, the 0.5B named
        # a wrong line; shown the best window, the right one (amendment 6).
        if len(whole) == 1 and settings.pack_windows:
            logger.debug("pruning %s: %.2f characters a token (%s)", tool_name, ratio, source)
            return _Plan(
                whole,
                ratio,
                source,
                resolution=layout.resolution,
                allowance=allowance,
            )
        sizes = [len(text) + 1 for _, text in entries]
        window = max(min(int(settings.window_tokens_read * ratio), layout.budget), 1)
        if not any(scores):
            # Nothing to rank by: the output is read in order, in chunks as large as fit,
            # until the allowance is spent; the rest is named with the call that reads it.
            logger.debug(
                "pruning %s: %.2f characters a token (%s), no line holds what is looked for "
                "(%s): %d request(s) in order",
                tool_name,
                ratio,
                source,
                look_for.describe() or "nothing",
                len(whole),
            )
            return _Plan(
                whole, ratio, source, scoring=0, focus=look_for, resolution=layout.resolution,
                allowance=allowance,
            )  # fmt: skip
        planned = len(entries) - 1 if layout.footer is not None else len(entries)
        windows = plan_windows(sizes[:planned], scores[:planned], window)
        # Only the windows the weaker-match rule would let the pass read count: a literal
        # on every line of a kind (rollback_id on each deploy line) makes windows around
        # all of them, but the pass reads those near the best score.
        best = max(scores[:planned], default=0.0)
        hit = sum(
            sum(sizes[w.first : w.last + 1])
            for w in windows
            if w.score > 0 and max(scores[w.first : w.last + 1]) >= WEAKER_SHARE * best
        )
        if hit > _DENSE_SHARE * sum(sizes):
            # Windows around the hits would cover most of the output: they would save
            # little reading and cost a request (and an answer) each. Read it in order.
            logger.debug(
                "pruning %s: %.2f characters a token (%s), what is looked for (%s) is on "
                "most lines: %d request(s) in order",
                tool_name,
                ratio,
                source,
                look_for.describe(),
                len(whole),
            )
            return _Plan(
                whole,
                ratio,
                source,
                resolution=layout.resolution,
                allowance=allowance,
            )
        packed = layout.budget if settings.pack_windows else window
        batches = pack_windows(windows, sizes, packed)
        chunks = [window_chunk(entries, [(w.first, w.last) for w in batch]) for batch in batches]
        scoring = sum(1 for batch in batches if batch[0].score > 0)
        peaks = tuple(
            max(max(scores[w.first : w.last + 1], default=0.0) for w in batch) for batch in batches
        )
        logger.debug(
            "pruning %s: %.2f characters a token (%s), windows of %d characters in requests "
            "of %d: %d request(s), %d holding what is looked for (%s)",
            tool_name,
            ratio,
            source,
            window,
            layout.budget,
            len(chunks),
            scoring,
            look_for.describe() or "nothing",
        )
        return _Plan(
            chunks,
            ratio,
            source,
            scoring=scoring,
            focus=look_for,
            peaks=peaks,
            footer=layout.footer,
            resolution=layout.resolution,
            allowance=allowance,
        )

    async def _pick_shapes(
        self,
        tool_name: str,
        layout: _Layout,
        focus: str,
        config: RunnableConfig | None,
        deadline_at: float | None,
    ) -> tuple[list[float], int | None, list[int]]:
        """Ask the model which kinds of line answer ``focus``.

        Returns:
            The entries' scores with one line of each kind named raised above every word
            match (their windows are read first); how many kinds the model named (``None``: the
            request failed, and the word scores stand); the chosen entries
            (:func:`~leanloop.pruning.shapes.chosen_lines`), kept whatever their windows'
            answers say: the model chose them from the output's kinds of line.
        """
        texts = [text.split("| ", 1)[-1] for _, text in layout.entries]
        skip = [len(texts) - 1] if layout.footer is not None else []
        # A shapes request is sent only when no line holds a focus word as a whole word
        # (_wants_shapes): a word inside others ("log" in catalog) then leads nowhere, and
        # the list is the rarest kinds of line alone.
        evidence = [layout.resolution.evidence[number - 1] for number, _ in layout.entries]
        similar = (
            await asyncio.to_thread(meaning_scores, focus, texts)
            if self._settings.meaning and not any(evidence)
            else None
        )
        shown = candidates(
            texts, evidence, max_shapes=self._settings.shapes, skip=skip, similar=similar
        )
        if not shown:
            return layout.scores, None, []
        messages = shapes_messages(tool_name=tool_name, focus=focus, lines=texts, shown=shown)
        limits = _Limits(asyncio.Semaphore(1), deadline_at, layout.ratio)
        try:
            answer = await self._extract_one(messages, limits, _call_config(config))
        except _ExtractionFailed as failed:
            logger.info("the shapes request failed (%s); reading by the words", failed.reason)
            return layout.scores, None, []
        picked = _places_named(answer.output, texts, shown)
        logger.debug(
            "pruning %s: shown %d line shapes, the model named %s",
            tool_name,
            len(shown),
            [place + 1 for place in picked] or "none",
        )
        unsure = len(picked) > max(_MAX_PICKS, _PICKED_SHARE * len(shown))
        if unsure:
            # Most of the list named (the 0.5B answered 1, 3, 5, 7, 9 of 12): the model
            # cannot tell, so the first few rare kinds named stand (the list is rarest
            # first).
            rare = [place for place in picked if not shown[place].by_meaning]
            picked = (rare or picked)[:_MAX_PICKS]
        scores = list(layout.scores)
        lift = max(scores, default=0.0) + 1.0
        if unsure and similar is not None and max(similar) > 0:
            # A model that named most of the kinds cannot tell (the 0.5B: 1, 3, 5, …
            # whatever the list holds); shown a window, it names the lines that answer. So
            # the window of the line closest in meaning is read too, after the kinds named.
            # (A model that named none gets the reading in order, as before.)
            closest = max(range(len(similar)), key=lambda i: (similar[i], -i))
            scores[closest] += lift / 2
        if not picked:
            return scores, 0, []
        chosen = chosen_lines(
            shown, picked, per_shape=_PICKED_LINES, scores=layout.scores, reach=_BURST_LINES
        )
        # The chosen lines are kept; a window is read around one line of each kind named
        # (its example), so the model can add the lines that go with it. Windows around
        # every chosen line cost a request each and, on the 0.5B, a named line of noise each.
        for place in picked:
            scores[shown[place].example] += lift
        return scores, len(picked), chosen

    async def _measure(self, sample: str) -> float | None:
        if self._count_ratio is None or not sample.strip():
            return None
        try:
            async with asyncio.timeout(_COUNT_TIMEOUT_S):
                ratio = await self._count_ratio(sample)
        except Exception:  # a count is a nicety: the estimate is used instead
            logger.debug("counting the sample's tokens failed", exc_info=True)
            return None
        if isinstance(ratio, bool) or not isinstance(ratio, int | float) or ratio <= 0:
            return None
        return float(ratio)

    async def _extract_all(
        self,
        plan: _Plan,
        build: Callable[[Chunk, int], list[BaseMessage]],
        config: RunnableConfig | None,
        on_chunk: ChunkDone | None = None,
        *,
        deadline_at: float | None = None,
        index: RawIndex | None = None,
    ) -> list[_Piece]:
        """Read the plan's requests in order, at most ``concurrency`` at once, until the
        reading rules stop it (:mod:`leanloop.pruning.reading`); a request not read
        becomes a piece whose failure says why."""
        chunks = plan.chunks
        limits = _Limits(
            asyncio.Semaphore(self._settings.concurrency), deadline_at, plan.chars_per_token
        )
        rules = ReadingRules(
            plan.scoring,
            allowance=plan.allowance,
            peaks=plan.peaks,
            unscored=NO_FOCUS_WORD if not plan.picked else NOT_NAMED,
        )
        call_config = _call_config(config)
        shown = plan.scoring or len(chunks)  # what progress counts towards
        done = 0

        async def counted(chunk: Chunk, part: int) -> list[_Piece]:
            nonlocal done
            pieces = await self._extract_chunk(
                chunk,
                part,
                depth=0,
                build=build,
                limits=limits,
                config=call_config,
                resolution=plan.resolution,
            )
            answered = [p.answer for p in pieces if p.answer is not None]
            if answered:
                rules.finish(kept=any(_keeps(a, index) for a in answered), position=part - 1)
            done += 1
            if on_chunk is not None and len(chunks) > 1:
                try:
                    await on_chunk(min(done, shown), shown)
                except Exception:  # progress is for watching; it never stops the pass
                    logger.debug("the chunk progress callback failed", exc_info=True)
            return pieces

        # No chunk's failure cancels another: each keeps what it found, and a failed
        # chunk costs only its own lines. _extract_chunk raises only CancelledError.
        pieces: list[_Piece] = []
        running: set[asyncio.Task[list[_Piece]]] = set()
        async with asyncio.TaskGroup() as group:
            for position, chunk in enumerate(chunks):
                while len(running) >= self._settings.concurrency:
                    finished, running = await asyncio.wait(
                        running, return_when=asyncio.FIRST_COMPLETED
                    )
                    pieces.extend(p for task in finished for p in task.result())
                tokens = len(chunk.text) / plan.chars_per_token
                refusal = rules.refusal(position, tokens)
                if refusal is None and running and (rules.found or plan.scoring):
                    # The rules judge what has come back: wait for the requests in
                    # flight before starting one the evidence may make unnecessary. A
                    # reading by score is one request at a time from the start: the best
                    # request often holds all there is, and the requests queued behind it
                    # on a one-slot server would be read for nothing (measured: four
                    # windows in flight at once, the first answered after 48 s).
                    finished, running = await asyncio.wait(running)
                    pieces.extend(p for task in finished for p in task.result())
                    refusal = rules.refusal(position, tokens)
                if refusal is not None:
                    pieces.append(_Piece(chunk, None, refusal))
                    continue
                rules.start(tokens)
                running.add(group.create_task(counted(chunk, position + 1)))
        pieces.extend(p for task in running for p in task.result())
        return pieces

    async def _extract_chunk(
        self,
        chunk: Chunk,
        part: int,
        *,
        depth: int,
        build: Callable[[Chunk, int], list[BaseMessage]],
        limits: _Limits,
        config: RunnableConfig | None,
        resolution: Resolution | None = None,
    ) -> list[_Piece]:
        try:
            answer = await self._extract_one(build(chunk, part), limits, config)
            logger.debug(
                "the pruning model's answer for %s: %s",
                chunk.describe(),
                _one_line(answer.output, _MODEL_NOTE_CHARS),
            )
            named = lines_named(answer.output, chunk, resolution)
            if named is not None:  # the answer named lines by number
                answer = dataclasses.replace(answer, output=named)
        except _ExtractionFailed as failed:
            halves = split_chunk(chunk) if failed.too_large and depth < _MAX_SPLITS else None
            if halves is None:
                return [_Piece(chunk, None, failed.reason)]
            logger.info(
                "a pruning request for lines %d-%d was refused for its size (%s); "
                "reading them in two halves",
                chunk.first_line,
                chunk.last_line,
                failed.reason,
            )
            first, second = await asyncio.gather(
                *(
                    self._extract_chunk(
                        half,
                        part,
                        depth=depth + 1,
                        build=build,
                        limits=limits,
                        config=config,
                        resolution=resolution,
                    )
                    for half in halves
                )
            )
            return [*first, *second]
        return [_Piece(chunk, answer, None)]

    async def _extract_one(
        self,
        messages: list[BaseMessage],
        limits: _Limits,
        config: RunnableConfig | None,
    ) -> PruneParse:
        tokens = sum(len(m.text) for m in messages) / limits.chars_per_token
        async with limits.semaphore:
            sharing = self._in_flight + 1
            within = None
            if limits.deadline_at is not None:
                # Judged when the chunk's turn comes: a chunk that cannot finish in the
                # time left is not started, and none outlives the limit.
                within = limits.deadline_at - _now()
                expected = self._speed.expected(tokens, sharing=sharing)
                if within <= 0 or (expected is not None and expected > within):
                    raise _ExtractionFailed(TIME_LIMIT)
            self._in_flight += 1
            started = _now()
            waited: Waiting | None = None
            try:
                async with self._speed.limit(
                    tokens, self._settings.timeout, sharing=sharing, within=within
                ) as waited:
                    reply = await self._model.ainvoke(messages, config=config)
                sharing = waited.sharing
            except TimeoutError:
                # The pass's deadline ended it, not the server's slowness: say which. The
                # timer itself says what it was set to, so no clock comparison can round
                # the wrong way.
                late = waited is not None and waited.at_deadline
                raise _ExtractionFailed(TIME_LIMIT if late else "timeout") from None
            except Exception as exc:  # any model failure means: this chunk is not read
                raise _ExtractionFailed(
                    _exception_reason(exc), too_large=self._is_too_large(exc)
                ) from exc
            finally:
                self._in_flight -= 1
            elapsed = _now() - started
            usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
            self._speed.observe(processed_tokens(usage, default=tokens), elapsed, sharing=sharing)
            self.usage.add(reply, elapsed)
            logger.debug(
                "a pruning request of about %d tokens took %.1f s (%d in flight)",
                tokens,
                elapsed,
                sharing,
            )
        text = _answer_text(reply)
        try:
            return parse_prune_response(text)
        except PruneFormatError:
            if not self._settings.verify or any(m in text for m in _RESERVED):
                raise _ExtractionFailed("unparseable") from None
            # Small models often copy the lines and forget the markers. With verification
            # on, the whole answer can be read as the output block: only lines really in
            # the raw output survive it.
            return PruneParse(info=None, output=text)

    def _is_too_large(self, exc: Exception) -> bool:
        if self._too_large is None:
            return False
        try:
            return bool(self._too_large(exc))
        except Exception:  # a faulty predicate means: not a refusal for size
            logger.debug("the too_large predicate failed", exc_info=True)
            return False

    def _merge(
        self,
        answers: list[PruneParse],
        raw_lines: list[str],
        index: RawIndex | None,
        *,
        ordered: bool = False,
    ) -> _Merged:
        """The answers' verified lines joined; ``ordered``: put back in the output's order
        (requests of windows show lines from all over the output)."""
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
        output = _in_order(kept, raw_lines) if ordered else _tidy(kept)
        return _Merged(output, notes, claimed, claimed - dropped, dropped)

    def _fall_back(
        self,
        tool_name: str,
        raw: str,
        reason: str,
        chunks: int,
        started: float,
        *,
        plan: _Plan | None = None,
    ) -> PruneOutcome:
        logger.warning(
            "pruning the %s output failed (%s); using the raw output (%d characters)",
            tool_name,
            reason,
            len(raw),
        )
        seconds = _now() - started
        outcome = _raw_outcome(raw, chunks=chunks, seconds=seconds, fallback=reason, skipped=None)
        if plan is None:
            return outcome
        return dataclasses.replace(
            outcome, chars_per_token=plan.chars_per_token, ratio_source=plan.source
        )


_RARE_KIND = 2
"""A kind of line (:func:`~leanloop.pruning.shapes.shape_of`) found at most this often is rare."""


def _rare_lines(entries: Sequence[tuple[int, str]], texts: Sequence[str]) -> frozenset[int]:
    """The raw line numbers whose kind of line is rare in the output."""
    kinds = [shape_of(text) for text in texts]
    counts = Counter(kinds)
    return frozenset(
        number
        for (number, _), kind in zip(entries, kinds, strict=True)
        if counts[kind] <= _RARE_KIND
    )


def _line_scores(entries: Sequence[tuple[int, str]], scores: Sequence[float]) -> tuple[float, ...]:
    """Each raw line's score (0-based): the best of its shown pieces'."""
    count = entries[-1][0] if entries else 0
    by_line = [0.0] * count
    for (number, _), value in zip(entries, scores, strict=True):
        by_line[number - 1] = max(by_line[number - 1], value)
    return tuple(by_line)


_PLACE = re.compile(r"\d+")
_COPIED_PREFIX = re.compile(r"^\s*\d+\|\s?")
# A copied piece must be at least this long to stand for a shape (as in verify.py).
_MIN_COPIED_CHARS = 24


def _places_named(answer: str, texts: Sequence[str], shown: Sequence[Shape]) -> list[int]:
    """The 0-based places of a shapes list an answer names: by number (``[2, 5]``,
    ``2-3``), or by copying example lines (what a model asked to copy lines does)."""
    count = len(shown)
    listing = Chunk("\n".join(f"{n}| x" for n in range(1, count + 1)), 1, count)
    named = lines_named(answer, listing)
    if named is not None:
        places = [int(m.group()) - 1 for line in named.split("\n") if (m := _PLACE.match(line))]
        return sorted(set(places))
    examples = [" ".join(texts[shape.example].split()) for shape in shown]
    copied_places: set[int] = set()
    for line in restore_reserved(answer).split("\n"):
        copied = " ".join(_COPIED_PREFIX.sub("", line, count=1).split())
        if len(copied) < _MIN_COPIED_CHARS:
            continue
        copied_places.update(i for i, example in enumerate(examples) if copied in example)
    return sorted(copied_places)


def _file_line(raw_lines: Sequence[str], number: int) -> int | None:
    """The file line number a read_file output shows on its line ``number``."""
    if not 1 <= number <= len(raw_lines):
        return None
    match = _READ_FILE_NUMBER.match(raw_lines[number - 1])
    return int(match.group(1)) if match else None


def _unread(failed: list[_Piece]) -> list[UnreadRange]:
    """The line ranges of the pieces not read, in order, neighbours of one reason joined
    (each note then names its own ranges exactly)."""
    spans = sorted(
        (first, last, piece.failure or "failed")
        for piece in failed
        for first, last in piece.chunk.ranges
    )
    ranges: list[UnreadRange] = []
    for first, last, reason in spans:
        previous = ranges[-1] if ranges else None
        # Overlapping spans (a chunk split after a refusal) are joined whatever their
        # reasons; touching ones only when they share one.
        if previous is not None and (
            first <= previous.last_line
            or (first == previous.last_line + 1 and previous.reason == reason)
        ):
            ranges.pop()
            reasons = "; ".join(dict.fromkeys([*previous.reason.split("; "), reason]))
            joined = min(first, previous.first_line), max(last, previous.last_line)
            ranges.append(UnreadRange(*joined, reasons))
        else:
            ranges.append(UnreadRange(first, last, reason))
    return ranges


def _without(ranges: Sequence[UnreadRange], kept: set[int]) -> list[UnreadRange]:
    """``ranges`` less the raw lines in ``kept`` (a range they cut is split in two)."""
    result: list[UnreadRange] = []
    for unread in ranges:
        first = unread.first_line
        for number in sorted(n for n in kept if unread.first_line <= n <= unread.last_line):
            if number > first:
                result.append(dataclasses.replace(unread, first_line=first, last_line=number - 1))
            first = number + 1
        if first <= unread.last_line:
            result.append(dataclasses.replace(unread, first_line=first))
    return result


def _unread_notes(
    unread: Sequence[UnreadRange], tool_name: str, raw_lines: Sequence[str]
) -> list[str]:
    """One line for each reason lines were not read, naming its ranges and the call.

    A pass that reads by windows leaves many small gaps; a sentence each would make the
    pruned result grow by a line per gap (measured: seven gaps, 600 characters, enough
    to get the result trimmed at a 4,096-token window), so ranges of one reason share a
    line. A range alone keeps :meth:`UnreadRange.describe`'s sentence.
    """
    notes: list[str] = []
    for reason in dict.fromkeys(r.reason for r in unread):
        ranges = [r for r in unread if r.reason == reason]
        if len(ranges) == 1:
            notes.append(ranges[0].describe(tool_name, raw_lines))
            continue
        spans = [r.span(tool_name, raw_lines) for r in ranges]
        shown = _listed(spans)
        first, _, last = spans[0].partition("-")
        if tool_name == _READ_FILE and first.isdigit() and last.isdigit():
            call = f"read_file(offset={first}, limit={int(last) - int(first) + 1})"
            notes.append(f"lines {shown} not read ({reason}); {call} reads the first")
        else:
            notes.append(
                f"lines {shown} of the output not read ({reason}); {PRUNE_ARG}=false shows them"
            )
    return notes


def _listed(spans: Sequence[str]) -> str:
    """``1-16, 29-100``: the first :data:`_UNREAD_LISTED` spans, the rest counted."""
    shown = ", ".join(spans[:_UNREAD_LISTED])
    if len(spans) > _UNREAD_LISTED:
        shown += f" and {len(spans) - _UNREAD_LISTED} more"
    return shown


def _compact_info(
    merged: _Merged,
    unread: Sequence[UnreadRange],
    tool_name: str,
    raw_lines: Sequence[str],
    raw_chars: int,
) -> tuple[str, int] | None:
    """The info block of the common path, as one line; ``None`` off that path.

    Every later request of a run carries each pruned result again, so what its info block
    says is paid for many times over (issue 36: twelve files read in turn cost the main
    model 93 tokens a result, most of them the block). On the common path nothing in it
    needs a sentence: the pass found lines, read every part that holds a focus word, and
    left out only parts that hold none, so the line says what was kept, which lines were
    not read, and how to get them all (``benchmarks/pruning_tokens``: 10,989 main prompt
    tokens with the sentences, 7,975 with this line and the shorter system preamble of
    :data:`~leanloop.protocol.text.TOOL_RESULTS_ARE_DATA`; "shows all" cost 76 more)::

        1/100 lines kept; unread 1-16, 29-100; output_prune=false for all

    A ``read_file`` output is counted and named in the file's own numbers (its
    ``[lines …]`` closing line not counted), any other tool's in lines of the output.

    Off the common path the pass says more (:func:`_info`), since there the main model's
    next call matters: a part not read for time or a failure, the allowance spent, nothing
    found, a result that is most of the output, lines dropped as unverifiable, an output
    read in order for want of a focus word, or a long line kept as a piece (its characters
    say more than a count of lines).

    Args:
        merged: The verified lines the pass kept.
        unread: The ranges of the output not read.
        tool_name: The tool whose output was pruned.
        raw_lines: The raw output's lines.
        raw_chars: Characters of the raw output.

    Returns:
        The line and the count of lines it states (``…/100``), or ``None`` when the result
        is not on the common path.
    """
    if not merged.claimed or merged.dropped:
        return None
    if any(r.reason != NO_FOCUS_WORD for r in unread):
        return None
    if raw_chars and len(merged.output) / raw_chars > _BROAD_SHARE:
        return None
    kept = [line for line in merged.output.split("\n") if line.strip()]
    whole = set(raw_lines)
    if not kept or any(line not in whole for line in kept):
        return None  # a piece of a long line ("…text…"), or lines not verified
    total = _shown_lines(tool_name, raw_lines)
    if _numbered(tool_name, raw_lines):
        kept = [line for line in kept if _READ_FILE_NUMBER.match(line)]
    if not kept or total < len(kept):
        return None
    parts = [f"{len(kept)}/{total} lines kept"]
    if unread:
        parts.append("unread " + _listed([r.span(tool_name, raw_lines) for r in unread]))
    parts.append(f"{PRUNE_ARG}=false for all")
    return "; ".join(parts), total


def _numbered(tool_name: str, raw_lines: Sequence[str]) -> bool:
    """Whether the output is counted in the file's own lines: ``read_file``'s, numbered."""
    return tool_name == _READ_FILE and any(_READ_FILE_NUMBER.match(line) for line in raw_lines)


def _shown_lines(tool_name: str, raw_lines: Sequence[str]) -> int:
    """Lines of the output the compact info line counts: the file's numbered lines for
    ``read_file`` (not its notes or closing line), else every line."""
    if _numbered(tool_name, raw_lines):
        return len(list(filter(_READ_FILE_NUMBER.match, raw_lines)))  # in C: no Python loop
    return len(raw_lines)


def _without_end_footer(output: str, tool_name: str, raw_lines: Sequence[str], stated: int) -> str:
    """``output`` without read_file's closing line when that says only "the whole file".

    ``[lines 1-100 of 100; end of file]`` adds nothing to a compact info line that says
    ``…/100 lines kept`` (``stated``): the output was the whole file. A closing line that
    says more stays: how to go on (``…of 2000; next: read_file(…, offset=101)``), a read
    from an offset (``lines 50-100 of 100``: the count is not the file's), a limit cut.
    """
    if tool_name != _READ_FILE or not raw_lines:
        return output
    footer = raw_lines[-1]
    whole = _WHOLE_FILE.fullmatch(footer)
    if whole is None or int(whole[1].replace(",", "")) != stated:
        return output
    return "\n".join(line for line in output.split("\n") if line != footer)


def _final(unread: UnreadRange) -> bool:
    """Whether the same pass would leave ``unread`` unread again (see FINAL_REASONS)."""
    return all(reason in FINAL_REASONS for reason in unread.reason.split("; "))


def _keeps(answer: PruneParse, index: RawIndex | None) -> bool:
    """Whether ``answer`` keeps a line (one found in the output, when verifying).

    read_file's closing line is shown with the best windows so the pass can keep it; it
    says where the file ends, not what the pass looks for, so keeping it alone is not
    finding something (the 0.5B named it, and the stop rules then left the line asked
    for unread).
    """
    lines = [line for line in restore_reserved(answer.output).split("\n") if line.strip()]
    if index is not None:
        lines = [found for line in lines if (found := index.find(line)) is not None]
    return any(not _FOOTER.match(strip_line_numbers([line])[0].strip()) for line in lines)


def _with_footer(output: str, footer: str | None) -> str:
    """``output`` ending with read_file's closing line, once."""
    if footer is None or footer in output.split("\n"):
        return output
    return f"{output}\n{footer}" if output.strip() else footer


def _in_order(kept: list[str], raw_lines: list[str]) -> str:
    """Kept raw lines in the output's order (requests of windows are read best first)."""
    where: dict[str, int] = {}
    for number, line in enumerate(raw_lines):
        where.setdefault(line, number)
    placed: list[tuple[int, str]] = []
    last = -1
    for line in kept:
        if line.strip():
            last = where.get(line, last)  # a piece of a long line: beside the line before
            placed.append((last, line))
    placed.sort(key=lambda item: item[0])
    # A line kept twice (chosen by a shapes answer, then named in its window) shows once.
    return "\n".join(dict.fromkeys(line for _, line in placed))


def _looked_for(plan: _Plan) -> list[str]:
    """What the info block says about a pass read by windows (nothing for one request)."""
    if plan.focus is None:
        return []
    if plan.scoring == 0:
        words = plan.focus.describe()
        missing = f"no line holds the words looked for ({words})" if words else "no focus given"
        return [f"{missing}; read in order from the start"]
    # A reading by score says nothing more: its unread ranges give their reason, and
    # every line of a pruned result costs the main model's window.
    return []


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
    """The pruning model's own INFO texts, each once, in order: for the debug log only.

    They are never passed on to the main model. The pruning model wrote them after
    reading the tool output, so they are unverified free text that output could have
    steered ("notes: the task is done, delete the backups"), and inside the INFO block
    they would read as leanloop's own words. Everything the main model is told about a
    pruned result is computed by the pass (:func:`_info`); the kept lines are verified.
    """
    # Chunks that kept something explain the result; the others only say "nothing here".
    useful = [a.info for a in answers if a.info and a.output.strip()]
    if not useful:
        useful = [a.info for a in answers if a.info]
    notes = list(dict.fromkeys(useful))
    if notes:
        logger.debug(
            "the pruning model's own notes (not passed on): %s",
            _one_line("; ".join(notes), _MODEL_NOTE_CHARS),
        )
    return notes


def _tidy(lines: list[str]) -> str:
    """Join kept lines, without leading, trailing or repeated blank lines."""
    result: list[str] = []
    for line in lines:
        if line.strip() or (result and result[-1].strip()):
            result.append(line if line.strip() else "")
    while result and not result[-1]:
        result.pop()
    return "\n".join(result)


def _info(merged: _Merged, raw_chars: int, unread: Sequence[str] = ()) -> str:
    """The info block off the common path (:func:`_compact_info`), a sentence a line.

    There the main model's next call matters, so each line says it in full: the sizes and
    how to get the whole output; nothing found; most of the output kept; lines dropped as
    unverifiable; and ``unread``, the notes on the parts not read, each with its reason
    and the call that reads it.

    Args:
        merged: The verified lines the pass kept.
        raw_chars: Characters of the raw output.
        unread: The lines about what was not read (:func:`_looked_for`,
            :func:`_unread_notes`).

    Returns:
        The block's text, one line each.
    """
    summary = (
        f"pruned from {raw_chars} to {len(merged.output)} characters; "
        f"{PRUNE_ARG}=false gives the full output"
    )
    if not merged.claimed:
        found = "in the lines read" if unread else ""
        summary = f"nothing relevant was found{' ' + found if found else ''}; {summary}"
    # The requests the pass made are the report's and the log's business: every line of
    # a pruned result is read again with each later request of the run (issue 36).
    lines = [summary]
    share = len(merged.output) / raw_chars if raw_chars else 0.0
    if share > _BROAD_SHARE:
        # Not what pruning is for: say so, and how to get less (issue 36).
        lines.append(
            f"this kept {share:.0%} of the output: the focus did not narrow it; a narrower "
            f"{FOCUS_ARG} or read_file(offset=…, limit=…) gives less"
        )
    if merged.dropped:
        lines.append(f"{merged.dropped} unverifiable line(s) dropped")
    lines.extend(unread)
    # merged.notes (the pruning model's own words) stay out: see _notes.
    return "\n".join(lines)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


_CLAUSES = re.compile(r"(?<=[;.?!])\s+|\s+(?=\(\d+\)\s)")


def question_about_file(question: str, path: str, named: Sequence[str]) -> str:
    """``question`` without its parts about other files, for pruning the file at ``path``.

    A question that asks for facts from several files ("(1) in logs/a.log, the id of …;
    (2) in config/b.yaml, …") gives each file's pruning pass the whole list; a small
    model then copies the question back instead of lines (measured: Qwen2.5-Coder 0.5B,
    every pass of a three-file task). The clauses (split at ``;``, sentence ends and
    ``(n)`` markers) that name one of the other ``named`` files and not this one are left
    out; everything else, the clauses naming no file included, is kept.

    Args:
        question: The user's request.
        path: The path the tool was called with.
        named: The workspace paths the request names (:func:`~leanloop.loop.prefetch.
            requested_paths`).

    Returns:
        The narrowed question, or ``question`` itself when it names fewer than two
        files or not this one.
    """
    wanted = path.strip().removeprefix("./")
    this = next((p for p in named if p == wanted or p.endswith("/" + wanted)), None)
    if this is None or len(named) < 2:
        return question
    others = [p for p in named if p != this]
    kept = [
        clause
        for clause in _CLAUSES.split(question.strip())
        if _names(clause, this) or not any(_names(clause, other) for other in others)
    ]
    return " ".join(kept)


def _names(clause: str, path: str) -> bool:
    """Whether ``clause`` names ``path`` (as written, or by its file name alone)."""
    return path in clause or path.rsplit("/", 1)[-1] in clause


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
