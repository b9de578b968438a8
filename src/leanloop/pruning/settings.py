"""How the pruning pass behaves: one flat set of settings, a section for each part.

:class:`PruneSettings` is what a caller builds (the agent from its ``pruning_*`` keys and
the pruning model's profile, :func:`leanloop.loop.tool_round.make_pruner`; tests and
benchmarks with keywords). It stays flat so that ``dataclasses.replace`` and
:meth:`~leanloop.pruning.extract.Pruner.with_settings` keep taking field names. Each part
of the pass reads only its own section of it:

- :class:`ReadingSettings` (:attr:`PruneSettings.reading`): where the pass reads, for
  :mod:`leanloop.pruning.strategies` (windows, shapes, the reading allowance);
- :class:`ExtractionSettings` (:attr:`PruneSettings.extraction`): how each request is
  sized, worded, timed and checked, for :mod:`leanloop.pruning.layout` and
  :mod:`leanloop.pruning.extraction`;
- the pass itself (:mod:`leanloop.pruning.extract`) reads ``min_chars`` and ``deadline``.
"""

from __future__ import annotations

from dataclasses import dataclass

from leanloop.exceptions import InvalidArgument
from leanloop.pruning.prompt import PromptStyle

__all__ = [
    "MIN_ALLOWANCE_TOKENS",
    "ExtractionSettings",
    "PruneSettings",
    "ReadingSettings",
]

MIN_ALLOWANCE_TOKENS = 2_000
"""The least default reading allowance of a pass, in prompt tokens of output (measured on
the embedded 0.5B on two cores: 60-300 prompt tokens a second, so 10-35 s)."""


@dataclass(frozen=True, kw_only=True)
class ReadingSettings:
    """Where a pass reads: the reading strategies' section of :class:`PruneSettings`.

    Each field is the :class:`PruneSettings` field of the same name.
    """

    window_tokens_read: int
    read_tokens: int | None
    pack_windows: bool
    shapes: int
    meaning: bool


@dataclass(frozen=True, kw_only=True)
class ExtractionSettings:
    """How each extraction request is sized, worded, timed and checked: the extraction's
    section of :class:`PruneSettings`.

    Each field is the :class:`PruneSettings` field (or property) of the same name.
    """

    window_tokens: int
    chars_per_token: float
    reply_tokens: int
    max_chunk_tokens: int | None
    prompt_style: PromptStyle
    timeout: float
    concurrency: int
    verify: bool


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

    @property
    def reading(self) -> ReadingSettings:
        """The settings of where the pass reads (:mod:`leanloop.pruning.strategies`)."""
        return ReadingSettings(
            window_tokens_read=self.window_tokens_read,
            read_tokens=self.read_tokens,
            pack_windows=self.pack_windows,
            shapes=self.shapes,
            meaning=self.meaning,
        )

    @property
    def extraction(self) -> ExtractionSettings:
        """The settings of each extraction request (:mod:`leanloop.pruning.extraction`)."""
        return ExtractionSettings(
            window_tokens=self.window_tokens,
            chars_per_token=self.chars_per_token,
            reply_tokens=self.reply_tokens,
            max_chunk_tokens=self.max_chunk_tokens,
            prompt_style=self.prompt_style,
            timeout=self.timeout,
            concurrency=self.concurrency,
            verify=self.verify,
        )
