"""How much of a request's prompt the server evaluated, and how much its prompt cache served.

llama-server keeps each slot's last prompt and reuses its longest common prefix with the
next request (``cache_prompt``, on by default), so a loop whose requests grow by appending
pays only for the new tail. It says so in every ``/v1/chat/completions`` answer, streamed
(the usage chunk of ``stream_options.include_usage``) or not::

    "usage": {"prompt_tokens": 993, "completion_tokens": 10, "total_tokens": 1003,
              "prompt_tokens_details": {"cached_tokens": 985}},
    "timings": {"cache_n": 985, "prompt_n": 8, "prompt_ms": 88.0,
                "predicted_n": 10, "predicted_ms": 233.4, ...}

``prompt_tokens`` is ``cache_n + prompt_n``. LangChain's ``ChatOpenAI`` drops ``timings``
but keeps ``cached_tokens`` as ``usage_metadata["input_token_details"]["cache_read"]``
(with ``invoke``, and with ``stream`` when ``stream_usage`` is on, as leanloop sets it for
OpenAI-compatible servers) and, without streaming, in
``response_metadata["token_usage"]["prompt_tokens_details"]``; so evaluated = input
tokens - ``cache_read``, which equals ``timings.prompt_n``. Hosted OpenAI reports
``cached_tokens`` the same way and ``langchain-anthropic`` fills ``cache_read`` too (its
``input_tokens`` include the cached ones), so the same reading serves them. A reply that
says nothing about a cache (Ollama, most scripted models) gives ``None``: unknown, never 0.

This module imports nothing from leanloop, so every layer may use it (the loop's request
records, the pruning pass's extraction requests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = ["PromptUsage", "RequestTally", "prompt_usage", "prompt_usage_from"]


class PromptUsage(NamedTuple):
    """The prompt tokens of one request, split by who paid for them."""

    evaluated: int
    """Tokens the server computed for this request (llama.cpp ``timings.prompt_n``)."""
    cached: int
    """Tokens served from the server's prompt cache (``cached_tokens``, ``cache_n``)."""


def prompt_usage(reply: object) -> PromptUsage | None:
    """The prompt split of the request that ``reply`` (an ``AIMessage``) answered.

    Reads the reply's ``response_metadata`` and ``usage_metadata`` (see
    :func:`prompt_usage_from`); anything without them gives ``None``.
    """
    usage = getattr(reply, "usage_metadata", None)
    metadata = getattr(reply, "response_metadata", None)
    return prompt_usage_from(
        usage if isinstance(usage, Mapping) else None,
        metadata if isinstance(metadata, Mapping) else None,
    )


def prompt_usage_from(
    usage: Mapping[str, Any] | None, metadata: Mapping[str, Any] | None = None
) -> PromptUsage | None:
    """The prompt split from a reply's usage and response metadata, or ``None`` if unknown.

    The first source that says, in this order:

    1. llama.cpp's own ``timings`` (``prompt_n``, ``cache_n``) in ``metadata``, for a
       client that keeps them (``ChatOpenAI`` does not);
    2. ``usage["input_token_details"]["cache_read"]`` against ``usage["input_tokens"]``
       (LangChain's standard usage: ``ChatOpenAI``, ``ChatAnthropic``);
    3. ``metadata["token_usage"]["prompt_tokens_details"]["cached_tokens"]`` against its
       ``prompt_tokens`` (the raw OpenAI usage ``ChatOpenAI`` also keeps when not
       streaming).

    A figure that is not a non-negative integer, or a cached count above the prompt's,
    is no answer.
    """
    meta = metadata or {}
    timings = meta.get("timings")
    if isinstance(timings, Mapping):
        evaluated, cached = _count(timings.get("prompt_n")), _count(timings.get("cache_n"))
        if evaluated is not None and cached is not None:
            return PromptUsage(evaluated, cached)
    if usage:
        details = usage.get("input_token_details")
        if isinstance(details, Mapping):
            found = _split(usage.get("input_tokens"), details.get("cache_read"))
            if found is not None:
                return found
    raw = meta.get("token_usage")
    if isinstance(raw, Mapping):
        details = raw.get("prompt_tokens_details")
        if isinstance(details, Mapping):
            return _split(raw.get("prompt_tokens"), details.get("cached_tokens"))
    return None


def _split(total: object, cached: object) -> PromptUsage | None:
    whole, part = _count(total), _count(cached)
    if whole is None or part is None or part > whole:
        return None
    return PromptUsage(whole - part, part)


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


@dataclass
class RequestTally:
    """Answered requests and their tokens, added up (the pruning pass's, for the report).

    ``prompt_evaluated`` and ``prompt_cached`` add up the requests whose reply said how
    its prompt was split; they stay ``None`` while none did.
    """

    requests: int = 0
    """Requests that got an answer."""
    prompt_tokens: int = 0
    """Prompt tokens the server reported (cached ones included)."""
    prompt_evaluated: int | None = None
    prompt_cached: int | None = None
    completion_tokens: int = 0
    seconds: float = 0.0
    """Time from sending each request to its answer, added up (requests that overlap in
    time each count whole; on a one-slot server they waited for one another)."""

    def add(self, reply: object, seconds: float) -> None:
        """Count one answered request: ``reply`` (an ``AIMessage``) after ``seconds``."""
        self.requests += 1
        self.seconds = round(self.seconds + max(seconds, 0.0), 3)
        usage = getattr(reply, "usage_metadata", None)
        if isinstance(usage, Mapping):
            self.prompt_tokens += _count(usage.get("input_tokens")) or 0
            self.completion_tokens += _count(usage.get("output_tokens")) or 0
        split = prompt_usage(reply)
        if split is not None:
            self.prompt_evaluated = (self.prompt_evaluated or 0) + split.evaluated
            self.prompt_cached = (self.prompt_cached or 0) + split.cached
