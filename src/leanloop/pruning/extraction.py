"""The extraction requests: one chunk of an output shown to the pruning model, its answer read.

:class:`Extractor` sends the requests of one pruner's passes. Each is a stateless
single-turn call without tools (built by :func:`~leanloop.pruning.prompt.build_messages`
or, for a shapes request, :func:`~leanloop.pruning.shapes.shapes_messages`); its answer
is parsed from the marker format, or read as the lines it names by number
(:func:`~leanloop.pruning.numbers.lines_named`). :meth:`Extractor.extract_all` reads a
pass's requests in the order its strategy chose (:mod:`leanloop.pruning.strategies`), at
most ``concurrency`` at once, asking the stop rules (:mod:`leanloop.pruning.reading`)
before each one.

Each request has its own limit, from the server's measured speed
(:mod:`leanloop.pruning.speed`: the pass's answers and, on a shared server, the main
model's requests), multiplied by the requests in flight, since a llama.cpp server with one
slot answers them one after another; a request that cannot finish before the pass's
deadline is not started. A chunk the server refuses for its size (the injected
``too_large`` predicate) is cut in two and retried, at most four times deep.

A request that fails (an exception, a timeout, an unparseable answer) costs only its own
lines: it becomes a :class:`Piece` whose ``failure`` says why. Only cancellation
propagates.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig

from leanloop.cache_usage import RequestTally
from leanloop.pruning.layout import FOOTER
from leanloop.pruning.markers import (
    INFO_END,
    INFO_START,
    OUTPUT_END,
    OUTPUT_START,
    PruneFormatError,
    PruneParse,
    parse_prune_response,
    restore_reserved,
)
from leanloop.pruning.numbers import Resolution, lines_named
from leanloop.pruning.prompt import Chunk, split_chunk
from leanloop.pruning.reading import ReadingRules
from leanloop.pruning.settings import ExtractionSettings
from leanloop.pruning.speed import ServerSpeed, Waiting, processed_tokens
from leanloop.pruning.verify import RawIndex, strip_line_numbers

__all__ = [
    "MODEL_NOTE_CHARS",
    "TIME_LIMIT",
    "ChunkDone",
    "Extractor",
    "Piece",
    "TooLarge",
    "exception_reason",
    "now",
    "one_line",
]

logger = logging.getLogger(__name__)

MODEL_NOTE_CHARS = 100
"""Longest excerpt of the pruning model's own text kept in the debug log."""
_REASON_CHARS = 200
_THINK_END = "</think>"
_RESERVED = (INFO_START, INFO_END, OUTPUT_START, OUTPUT_END)
# How often a chunk refused for its size is cut in two again (1/16 of it at most).
_MAX_SPLITS = 4
TIME_LIMIT = "past the pass's time limit"
"""Why a request was not started, or was ended, at the pass's deadline."""

TooLarge = Callable[[BaseException], bool]
"""Whether a failed extraction request was refused for its size."""

ChunkDone = Callable[[int, int], Awaitable[None]]
"""Told ``(done, total)`` as each chunk of a chunked pass finishes."""


class _ExtractionFailed(Exception):
    """One extraction request failed; ``reason`` is the outcome's ``fallback``."""

    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large


@dataclass(frozen=True)
class Piece:
    """What became of one chunk: its answer, or why it has none."""

    chunk: Chunk
    answer: PruneParse | None
    failure: str | None


def now() -> float:
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


class Extractor:
    """Sends the extraction requests of one pruner's passes and learns the server's speed."""

    def __init__(
        self,
        model: BaseChatModel,
        settings: ExtractionSettings,
        *,
        too_large: TooLarge | None = None,
    ) -> None:
        """Ask ``model`` (used without tools) under ``settings``.

        Args:
            model: The pruning model.
            settings: How each request is timed, how many run at once, and whether
                answers are verified.
            too_large: Tells a refusal for size from other failures (``None``: no
                failure is one, and a refused chunk is not read).
        """
        self._model = model
        self._settings = settings
        self._too_large = too_large
        self._speed = ServerSpeed()
        self.usage = RequestTally()
        """Every extraction request that got an answer, added up."""
        self._in_flight = 0

    def observe(self, tokens: float, seconds: float) -> None:
        """Learn the server's speed from a request it answered outside the pass.

        Args:
            tokens: Prompt tokens the server processed (cached ones left out).
            seconds: How long the request took.
        """
        self._speed.observe(tokens, seconds)

    async def extract_all(
        self,
        chunks: list[Chunk],
        rules: ReadingRules,
        build: Callable[[Chunk, int], list[BaseMessage]],
        config: RunnableConfig | None,
        on_chunk: ChunkDone | None = None,
        *,
        chars_per_token: float,
        resolution: Resolution | None = None,
        deadline_at: float | None = None,
        index: RawIndex | None = None,
    ) -> list[Piece]:
        """Read a pass's requests in order, at most ``concurrency`` at once, until the
        reading rules stop it (:mod:`leanloop.pruning.reading`); a request not read
        becomes a piece whose failure says why.

        Args:
            chunks: The requests, in the order to read them.
            rules: The pass's stop rules (its plan's, :meth:`~leanloop.pruning.strategies.
                Plan.rules`); told what each request kept.
            build: The messages of a request, from its chunk and its 1-based part.
            config: The caller's config (see :func:`_request_config`).
            on_chunk: Told ``(done, total)`` as each request finishes.
            chars_per_token: The pass's ratio: a request's tokens are estimated with it.
            resolution: What resolves a line the model names to the line it meant
                (``None``: taken as named).
            deadline_at: The event loop's time after which no request may run.
            index: The raw output's lines, when answers are verified.

        Returns:
            What became of each chunk, those not read included.
        """
        limits = _Limits(
            asyncio.Semaphore(self._settings.concurrency), deadline_at, chars_per_token
        )
        call_config = _request_config(config)
        shown = rules.scoring or len(chunks)  # what progress counts towards
        done = 0

        async def counted(chunk: Chunk, part: int) -> list[Piece]:
            nonlocal done
            pieces = await self._extract_chunk(
                chunk,
                part,
                depth=0,
                build=build,
                limits=limits,
                config=call_config,
                resolution=resolution,
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
        pieces: list[Piece] = []
        running: set[asyncio.Task[list[Piece]]] = set()
        async with asyncio.TaskGroup() as group:
            for position, chunk in enumerate(chunks):
                while len(running) >= self._settings.concurrency:
                    finished, running = await asyncio.wait(
                        running, return_when=asyncio.FIRST_COMPLETED
                    )
                    pieces.extend(p for task in finished for p in task.result())
                tokens = len(chunk.text) / chars_per_token
                refusal = rules.refusal(position, tokens)
                if refusal is None and running and (rules.found or rules.scoring):
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
                    pieces.append(Piece(chunk, None, refusal))
                    continue
                rules.start(tokens)
                running.add(group.create_task(counted(chunk, position + 1)))
        pieces.extend(p for task in running for p in task.result())
        return pieces

    async def ask_alone(
        self,
        messages: list[BaseMessage],
        *,
        chars_per_token: float,
        deadline_at: float | None,
        config: RunnableConfig | None,
    ) -> PruneParse | str:
        """Send one request on its own (a shapes request): its answer, or why it has none.

        Args:
            messages: The request.
            chars_per_token: The pass's ratio: the request's tokens are estimated with it.
            deadline_at: The event loop's time after which no request may run.
            config: The caller's config (see :func:`_request_config`).

        Returns:
            The parsed answer, or the reason the request failed (``"timeout"``, ...).
        """
        limits = _Limits(asyncio.Semaphore(1), deadline_at, chars_per_token)
        try:
            return await self._extract_one(messages, limits, _request_config(config))
        except _ExtractionFailed as failed:
            return failed.reason

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
    ) -> list[Piece]:
        try:
            answer = await self._extract_one(build(chunk, part), limits, config)
            logger.debug(
                "the pruning model's answer for %s: %s",
                chunk.describe(),
                one_line(answer.output, MODEL_NOTE_CHARS),
            )
            named = lines_named(answer.output, chunk, resolution)
            if named is not None:  # the answer named lines by number
                answer = dataclasses.replace(answer, output=named)
        except _ExtractionFailed as failed:
            halves = split_chunk(chunk) if failed.too_large and depth < _MAX_SPLITS else None
            if halves is None:
                return [Piece(chunk, None, failed.reason)]
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
        return [Piece(chunk, answer, None)]

    async def _extract_one(
        self,
        messages: list[BaseMessage],
        limits: _Limits,
        config: RunnableConfig | None,
    ) -> PruneParse:
        """Send one request and read its answer.

        Args:
            messages: The request.
            limits: How many requests may run at once, and until when.
            config: The request's config (see :func:`_request_config`).

        Returns:
            The parsed answer (a marker-less answer as the output block, when verifying).

        Raises:
            _ExtractionFailed: The request was not started in time, timed out, failed,
                or its answer cannot be read.
        """
        tokens = sum(len(m.text) for m in messages) / limits.chars_per_token
        async with limits.semaphore:
            sharing = self._in_flight + 1
            within = None
            if limits.deadline_at is not None:
                # Judged when the chunk's turn comes: a chunk that cannot finish in the
                # time left is not started, and none outlives the limit.
                within = limits.deadline_at - now()
                expected = self._speed.expected(tokens, sharing=sharing)
                if within <= 0 or (expected is not None and expected > within):
                    raise _ExtractionFailed(TIME_LIMIT)
            self._in_flight += 1
            started = now()
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
                    exception_reason(exc), too_large=self._is_too_large(exc)
                ) from exc
            finally:
                self._in_flight -= 1
            elapsed = now() - started
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
    return any(not FOOTER.match(strip_line_numbers([line])[0].strip()) for line in lines)


def exception_reason(exc: Exception) -> str:
    """A failed request's reason: the exception's type and text, on one short line."""
    return one_line(f"exception: {type(exc).__name__}: {exc}", _REASON_CHARS)


def _answer_text(reply: BaseMessage) -> str:
    """The reply's text without a reasoning model's ``<think>`` section."""
    text = str(reply.text)
    # Thinking models draft their answer, markers included, before the real one; the
    # draft would otherwise be read as extra blocks.
    end = text.rfind(_THINK_END)
    return text[end + len(_THINK_END) :] if end >= 0 else text


def _request_config(config: RunnableConfig | None) -> RunnableConfig | None:
    """The config of a pruning request: the caller's, under the run name ``leanloop.prune``."""
    if config is None:
        return None
    # The caller's run_id names the caller's own run; concurrent chunk requests must
    # not reuse it. Callbacks, tags and metadata are kept so tracing nests correctly.
    call_config = RunnableConfig(**config)
    call_config.pop("run_id", None)
    call_config["run_name"] = "leanloop.prune"
    return call_config


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with "…"."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
