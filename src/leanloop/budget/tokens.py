"""Estimate a request's size in tokens from its characters, and learn the ratio.

The estimate counts characters on one basis (message text, tool-call names and JSON
arguments, tool-call ids, the tool schemas sent, and a per-message overhead) and divides by a
characters-per-token ratio. The ratio starts at 3.3, which errs towards counting too many,
since code and paths run shorter than prose, and every reply whose usage reports
``input_tokens`` corrects it (:meth:`TokenEstimator.observe`). Because the correction is
measured on exactly the basis the estimate uses, the per-message overhead and the chat
template's extra tokens are learned along with the tokenizer.

Some chat templates leave the tool list out of the prompt on the turn right after tool
results (leanloop's own template for the embedded model does, ADR 0004). A reply to such
a request was counted without the schemas the estimate included; learning from it as if
they were counted would teach a ratio that is too high. So an answer-turn sample is read
both ways, and the reading closer to what the estimator knows wins
(:meth:`TokenEstimator.observe_request`); once the estimator has seen an endpoint drop the
list, its estimates of answer turns leave the schemas out too.

A model's own tokenizer (``get_num_tokens_from_messages``) is deliberately not used: for
OpenAI models it goes through tiktoken, which downloads its encodings on first use and can
hang without a network, and for other models it falls back to a GPT-2 tokenizer that is no
better than a learned ratio.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from leanloop.exceptions import InvalidArgument

__all__ = [
    "INITIAL_CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD_CHARS",
    "Estimate",
    "MessageCounter",
    "TokenEstimator",
    "TokenEstimators",
    "is_answer_turn",
    "message_chars",
    "schema_chars",
]

INITIAL_CHARS_PER_TOKEN = 3.3
MIN_CHARS_PER_TOKEN = 2.0
MAX_CHARS_PER_TOKEN = 6.0
MESSAGE_OVERHEAD_CHARS = 16
"""Characters counted per message for its role and the chat template's markers."""
_PREFIX_SLOTS = 4
IMAGE_CHARS = 1_000
"""Characters counted for an image part (a base64 payload is not text the model reads)."""


class TokenEstimator:
    """Characters per token, corrected by the server's own counts; safe to share.

    Args:
        chars_per_token: The starting ratio.
        smoothing: Weight of a new observation (1.0 trusts the latest reply alone).
    """

    def __init__(
        self, chars_per_token: float = INITIAL_CHARS_PER_TOKEN, *, smoothing: float = 0.5
    ) -> None:
        if not 0 < smoothing <= 1:
            msg = f"smoothing must be in (0, 1], got {smoothing!r}"
            raise InvalidArgument(msg)
        self._ratio = _clamp(chars_per_token)
        self._smoothing = smoothing
        self._observations = 0
        self.drops_tools_on_answer_turns = False
        """Whether the endpoint's template leaves the tool list out after tool results."""
        # Concurrent runs against one endpoint share an estimator; observe is read-modify-write.
        self._lock = threading.Lock()

    @property
    def chars_per_token(self) -> float:
        """The current ratio, always within 2–6."""
        return self._ratio

    @property
    def observations(self) -> int:
        """How many server counts have corrected the ratio."""
        return self._observations

    def tokens(self, chars: int) -> int:
        """Estimate the tokens of ``chars`` characters (rounded up)."""
        # The epsilon keeps 330 / 3.3 at 100 tokens, not 100.00000000000001 rounded up.
        return math.ceil(max(chars, 0) / self._ratio - 1e-9)

    def observe(self, *, estimated_chars: int, input_tokens: int) -> float:
        """Correct the ratio from a request of ``estimated_chars`` the server counted.

        Args:
            estimated_chars: The characters the estimate counted for the request sent.
            input_tokens: The prompt tokens the server reported for it.

        Returns:
            The corrected ratio (unchanged when either figure is not positive).
        """
        if estimated_chars <= 0 or input_tokens <= 0:
            return self._ratio
        seen = estimated_chars / input_tokens
        with self._lock:
            blended = (1 - self._smoothing) * self._ratio + self._smoothing * seen
            self._ratio = _clamp(blended)
            self._observations += 1
            return self._ratio

    def observe_request(
        self, *, message_chars: int, tool_chars: int, answer_turn: bool, input_tokens: int
    ) -> float:
        """Correct the ratio from one request, knowing which of its parts a template may drop.

        Args:
            message_chars: The characters of the request's messages.
            tool_chars: The characters of the tool schemas sent with it.
            answer_turn: Whether the request ends with a tool result (the turn a template
                may leave the tool list out of).
            input_tokens: The prompt tokens the server reported.

        Returns:
            The corrected ratio.
        """
        known = self._ratio
        # Each reading needs text to compare: a ratio of 0 has no logarithm (a run on the
        # 1.5B failed with "math domain error" here once, in a suite of three tasks).
        if not answer_turn or tool_chars <= 0 or input_tokens <= 0 or message_chars <= 0:
            return self.observe(
                estimated_chars=message_chars + tool_chars, input_tokens=input_tokens
            )
        counted = (message_chars + tool_chars) / input_tokens
        dropped = message_chars / input_tokens
        # Which reading agrees with what we know? Ratios compare on a log scale.
        drops = abs(math.log(dropped / known)) < abs(math.log(counted / known))
        self.drops_tools_on_answer_turns = drops
        chars = message_chars if drops else message_chars + tool_chars
        return self.observe(estimated_chars=chars, input_tokens=input_tokens)


def _clamp(ratio: float) -> float:
    return min(max(float(ratio), MIN_CHARS_PER_TOKEN), MAX_CHARS_PER_TOKEN)


def message_chars(message: BaseMessage) -> int:
    """Characters one message costs: text, tool calls, tool-call id and an overhead."""
    chars = MESSAGE_OVERHEAD_CHARS + _content_chars(message.content)
    if message.name:
        chars += len(message.name)
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            chars += len(call["name"]) + len(_dumps(call["args"])) + len(call.get("id") or "")
    elif isinstance(message, ToolMessage):
        chars += len(message.tool_call_id)
    return chars


def _content_chars(content: str | list[str | dict[Any, Any]]) -> int:
    if isinstance(content, str):
        return len(content)
    total = 0
    for part in content:
        if isinstance(part, str):
            total += len(part)
        elif isinstance(part.get("text"), str):
            total += len(part["text"])
        elif str(part.get("type", "")).startswith("image"):
            total += IMAGE_CHARS
        else:
            total += len(_dumps(part))
    return total


def schema_chars(tools: Sequence[Mapping[str, Any]]) -> int:
    """Characters of the tool schemas sent with a request (their compact JSON)."""
    return sum(len(_dumps(tool)) for tool in tools)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class Estimate:
    """A request's size: the characters counted and the tokens they are estimated at."""

    chars: int
    tokens: int


class MessageCounter:
    """Counts request sizes incrementally: each message is measured once.

    Counts are cached by message identity. The cache keeps a strong reference to each
    message it measured, so an ``id()`` can never be reused by another message while its
    count is cached. A counter belongs to one run (:class:`leanloop.budget.run.RunBudget`
    makes one per run), so by default the cache keeps every count for the counter's
    lifetime: a run's messages live as long as its history anyway, and a bounded cache
    thrashes once the history is longer than the bound (least-recently-used eviction over
    a history read in order misses on every message: 63 ms a check at 9,000 messages with
    the old bound of 8,192). ``max_entries`` bounds it, least recently used out, for a
    counter that outlives its messages.
    A sequence that extends one of the last few counted (the loop's append-only history,
    the request view) costs only its new messages, plus a C-level identity comparison.
    Messages must not be mutated after they were counted.

    Args:
        estimator: Converts characters to tokens.
        max_entries: Most messages whose counts are kept; ``None`` (the default): all of
            them, for the counter's lifetime.
    """

    def __init__(self, estimator: TokenEstimator, *, max_entries: int | None = None) -> None:
        self.estimator = estimator
        self.computations = 0
        """How many times a message was measured (cache misses); for tests."""
        self._max_entries = max_entries
        self._cache: OrderedDict[int, tuple[BaseMessage, int]] = OrderedDict()
        # The last few sequences counted (the history and the request view), with totals.
        self._prefixes: list[tuple[list[BaseMessage], int]] = []
        self._schemas: tuple[Sequence[Mapping[str, Any]], int] | None = None
        self._lock = threading.Lock()

    def chars(self, message: BaseMessage) -> int:
        """The characters of one message, measured at most once while cached."""
        with self._lock:
            return self._chars(message)

    def total_chars(self, messages: Sequence[BaseMessage]) -> int:
        """The characters of ``messages``; O(new messages) when it extends a recent list."""
        with self._lock:
            for slot, (prefix, chars) in enumerate(self._prefixes):
                if _extends(messages, prefix):
                    new = messages[len(prefix) :]
                    total = chars + sum(map(self._chars, new))
                    prefix.extend(new)  # the private snapshot grows in place: O(new)
                    del self._prefixes[slot]
                    self._prefixes.insert(0, (prefix, total))
                    return total
            total = sum(map(self._chars, messages))
            self._prefixes.insert(0, (list(messages), total))
            del self._prefixes[_PREFIX_SLOTS:]
            return total

    def estimate(
        self,
        messages: Sequence[BaseMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        extra_chars: int = 0,
    ) -> Estimate:
        """Estimate a request: its messages, the tool schemas sent and any extra text.

        The schemas are left out of an answer turn when the endpoint's template drops them.
        """
        schemas = 0 if self.drops_tools(messages) else self.schema_chars(tools)
        chars = self.total_chars(messages) + schemas + max(extra_chars, 0)
        return Estimate(chars, self.estimator.tokens(chars))

    def schema_chars(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """:func:`schema_chars` of ``tools``, measured once while the same list is passed.

        The loop sends one schema list for a whole run; counting, estimating and learning
        all ask for its size on every request, and serialising it each time is waste.
        """
        cached = self._schemas
        if cached is not None and cached[0] is tools:
            return cached[1]
        chars = schema_chars(tools)
        self._schemas = (tools, chars)
        return chars

    def drops_tools(self, messages: Sequence[BaseMessage]) -> bool:
        """Whether the server will leave the tool list out of a request of ``messages``."""
        return self.estimator.drops_tools_on_answer_turns and is_answer_turn(messages)

    def count_fn(
        self, *, tools: Sequence[Mapping[str, Any]] = (), extra_chars: int = 0
    ) -> Callable[[Sequence[BaseMessage]], int]:
        """A ``count`` callable for :func:`leanloop.budget.fit.fit_messages`.

        The schemas are measured once here, not on every call.
        """
        schemas, extra = self.schema_chars(tools), max(extra_chars, 0)

        def count(messages: Sequence[BaseMessage]) -> int:
            if len(messages) == 1:  # fit's per-message deltas: skip the prefix bookkeeping
                return self.estimator.tokens(self.chars(messages[0]) + schemas + extra)
            fixed = extra + (0 if self.drops_tools(messages) else schemas)
            return self.estimator.tokens(self.total_chars(messages) + fixed)

        return count

    def _chars(self, message: BaseMessage) -> int:
        key = id(message)
        hit = self._cache.get(key)
        if hit is not None and hit[0] is message:
            if self._max_entries is not None:
                self._cache.move_to_end(key)
            return hit[1]
        chars = message_chars(message)
        self.computations += 1
        self._cache[key] = (message, chars)
        if self._max_entries is not None and len(self._cache) > self._max_entries:
            self._cache.popitem(last=False)
        return chars


def is_answer_turn(messages: Sequence[BaseMessage]) -> bool:
    """Whether a request of ``messages`` ends with a native tool result."""
    return bool(messages) and isinstance(messages[-1], ToolMessage)


def _extends(messages: Sequence[BaseMessage], prefix: list[BaseMessage]) -> bool:
    """Whether ``messages`` starts with exactly the messages of ``prefix``."""
    known = len(prefix)
    if len(messages) < known:
        return False
    head = messages if len(messages) == known else messages[:known]
    # List equality compares identities first, in C: cheap when nothing changed, and equal
    # (not identical) messages have equal counts anyway.
    return (head if isinstance(head, list) else list(head)) == prefix


class TokenEstimators:
    """One :class:`TokenEstimator` per model and endpoint: what runs learn of its tokens.

    An agent's runs share the process's registry (that of
    :data:`~leanloop.budget.shared.PROCESS_STATE`) unless the agent is given a
    :class:`~leanloop.budget.shared.SharedState` of its own: ``leanloop batch`` gives each
    task fresh estimators, so a task's estimates (and what it trims) never depend on which
    tasks ran before it, in this process or on another Ray worker (ADR 0029).
    """

    def __init__(self) -> None:
        self._estimators: dict[tuple[str, str], TokenEstimator] = {}
        self._lock = threading.Lock()

    def for_endpoint(self, endpoint: str, model: str) -> TokenEstimator:
        """The estimator of ``model`` at ``endpoint`` (made on first use)."""
        key = (endpoint.rstrip("/"), model)
        with self._lock:
            estimator = self._estimators.get(key)
            if estimator is None:
                estimator = self._estimators[key] = TokenEstimator()
            return estimator

    def clear(self) -> None:
        """Forget what runs learned: every model starts again from the default ratio."""
        with self._lock:
            self._estimators.clear()
