"""Recognise a provider refusing a request for its size, and read the numbers it gave.

Shapes recognised, through ``__cause__`` / ``__context__`` chains:

- OpenAI: code ``context_length_exceeded``; "maximum context length is N tokens ...
  resulted in M tokens" (vLLM: "... requested M tokens (P in the messages, ...)").
- llama.cpp: type ``exceed_context_size_error`` with ``n_prompt_tokens`` and ``n_ctx``,
  in the ``openai.BadRequestError``'s body, its response's JSON, or a plain dict.
- Ollama: "input length exceeds the context length", "exceeds maximum context",
  "prompt too long".
- LM Studio: "Context overflow", "context length of only N tokens".
- LangChain's own ``ContextOverflowError`` (and leanloop's).
- Any other HTTP 400 or 413 that mentions the context length, window or size.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.exceptions import ContextOverflowError as LangChainOverflow

from leanloop.exceptions import ContextOverflowError

__all__ = ["Overflow", "parse_overflow"]

_MESSAGE_MAX = 300
_TEXT_MAX = 2_000
_CHAIN_MAX = 16
_NUM = r"(\d[\d,]*)"

_KNOWN_PHRASES = re.compile(
    r"context_length_exceeded|exceed_context_size_error|maximum context length is"
    r"|input length exceeds the context length|exceeds? (?:the )?maximum context"
    r"|exceeded max context length|prompt too long|prompt is too long|context overflow"
    r"|context the overflows|context length of only|input tokens exceed the configured limit"
    r"|contextwindowexceedederror|greater than the context length",
    re.IGNORECASE,
)
_GENERIC_PHRASE = re.compile(r"context[ _-]?(?:length|window|size)|maximum context", re.I)
_WINDOW_PATTERNS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"maximum context length is {_NUM}",
        rf"context length of only {_NUM}",
        rf"context (?:length|window|size) \({_NUM}\)",
        rf"context (?:length|window|size) (?:is|of) {_NUM}",
        rf"n_ctx\W{{0,4}}{_NUM}",
    )
)
_PROMPT_PATTERNS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"{_NUM} (?:tokens )?in the messages",
        rf"resulted in {_NUM} tokens",
        rf"requested {_NUM} tokens",
        rf"keep the first {_NUM} tokens",
        rf"input length \({_NUM}\)",
        rf"n_prompt_tokens\W{{0,4}}{_NUM}",
    )
)


@dataclass(frozen=True)
class Overflow:
    """A refusal for size, with the figures the provider gave.

    Attributes:
        prompt_tokens: The prompt size the provider counted, when it said.
        window: The provider's context window, when it said.
        message: The provider's message, on one line.
    """

    prompt_tokens: int | None
    window: int | None
    message: str

    def to_error(self) -> ContextOverflowError:
        """This overflow as leanloop's :class:`~leanloop.exceptions.ContextOverflowError`."""
        return ContextOverflowError(
            self.message, prompt_tokens=self.prompt_tokens, window=self.window
        )


def parse_overflow(error: BaseException) -> Overflow | None:
    """Return the overflow ``error`` (or an error it was raised from) reports, else ``None``."""
    for exc in _chain(error):
        found = _parse_one(exc)
        if found is not None:
            return found
    return None


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending and len(seen) < _CHAIN_MAX:
        exc = pending.pop(0)
        if id(exc) in seen:
            continue
        seen.add(id(exc))
        yield exc
        pending.extend(e for e in (exc.__cause__, exc.__context__) if e is not None)


def _parse_one(exc: BaseException) -> Overflow | None:
    fields = _body_fields(exc)
    texts = [str(fields[k]) for k in ("message", "error", "detail") if fields.get(k)]
    texts.append(str(exc))
    text = "\n".join(texts)
    kind = f"{fields.get('type', '')} {fields.get('code', '')}"
    known = (
        isinstance(exc, ContextOverflowError | LangChainOverflow)
        or _KNOWN_PHRASES.search(kind) is not None
        or _KNOWN_PHRASES.search(text) is not None
        or ("n_ctx" in fields and "n_prompt_tokens" in fields)
    )
    generic = _status(exc) in {400, 413} and _GENERIC_PHRASE.search(text) is not None
    if not (known or generic):
        return None
    prompt = _positive(fields.get("n_prompt_tokens")) or _first_number(_PROMPT_PATTERNS, text)
    window = _positive(fields.get("n_ctx")) or _first_number(_WINDOW_PATTERNS, text)
    if isinstance(exc, ContextOverflowError):
        prompt = prompt or exc.prompt_tokens
        window = window or exc.window
    return Overflow(prompt, window, _one_line(texts[0]))


def _body_fields(exc: BaseException) -> dict[str, Any]:
    """The error fields from the exception's body, its response's JSON, or a dict arg."""
    bodies: list[Any] = [getattr(exc, "body", None), getattr(exc, "error", None)]
    bodies.append(_response_body(getattr(exc, "response", None)))
    bodies.extend(arg for arg in exc.args if isinstance(arg, Mapping))
    fields: dict[str, Any] = {}
    for outer in bodies:
        body = outer
        while isinstance(body, Mapping):
            for key, value in body.items():
                fields.setdefault(str(key), value)
            inner = body.get("error")
            body = inner if isinstance(inner, Mapping) else None
    if isinstance(fields.get("error"), Mapping):
        del fields["error"]
    return fields


def _response_body(response: Any) -> Any:
    """An HTTP response's JSON, else its text as a ``message``; ``None`` if unreadable."""
    # Duck-typed: the openai client carries its own httpx fork's responses.
    if not callable(getattr(response, "json", None)):
        return None
    # An unread or undecodable body says nothing; httpx raises several kinds for that.
    with contextlib.suppress(Exception):
        return response.json()
    with contextlib.suppress(Exception):
        return {"message": response.text[:_TEXT_MAX]}
    return None


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _first_number(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match is not None:
            return _positive(int(match.group(1).replace(",", "")))
    return None


def _positive(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MESSAGE_MAX else line[: _MESSAGE_MAX - 1] + "…"
