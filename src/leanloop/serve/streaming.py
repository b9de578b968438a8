"""OpenAI's completion objects and server-sent events, built from a run's answer and report.

A streamed answer is a series of ``chat.completion.chunk`` objects, each sent as one
server-sent event (``data: {...}\\n\\n``), then ``data: [DONE]``: first a chunk with the
assistant role, then one per piece of text the model wrote, then a last chunk with the
``finish_reason``, the ``usage`` and the run report under ``leanloop``. The run's
progress events travel as SSE comments, and on request as chunks whose
``leanloop_progress`` holds the event (:mod:`leanloop.serve.progress`). The report is an
extension key: OpenAI's clients keep unknown keys (``chunk.model_extra`` /
``completion.model_extra`` in the Python client) and ignore them otherwise.

How a run ended decides how it is answered (:func:`finish_reason`); the report's
``stop_reason`` says it in the ``leanloop`` extension, every time:

* ``answer``: 200, ``finish_reason: "stop"``; the text is the model's answer.
* ``budget_exhausted``: 200, ``finish_reason: "length"``; the context window, a token
  limit, ended the run, and the text is the model's last, tool-less reply or the
  ending's own words.
* ``paused``: 200, ``finish_reason: "stop"``; the run waits for a person's decisions on
  tool calls (ADR 0037): the text says so, and the extension's ``pending_calls`` lists
  them. ``stop`` because the turn did end, with a text every client can show, and no
  client has anything to do but to show it; ``tool_calls`` would promise calls in
  ``message.tool_calls`` for the *client* to run and answer with ``tool`` messages (which
  an agent refuses: it runs its own tools), and an error would make the official clients
  raise on what is no failure. A program reads ``leanloop.stop_reason`` and sends the
  decisions with the session's next request (:mod:`leanloop.serve.requests`).
* ``max_rounds``, ``repeated_calls``, ``no_answer`` and any other: 502
  ``ended_without_answer`` (streamed: an error event after the text), the text under
  ``content`` and the report under ``leanloop`` in the error object.
* ``failed``: the run raised; 502 ``model_error``, as before.

OpenAI's reasons have none for "the agent stopped without answering": ``stop`` would
pass the text off as an answer, ``length`` says a token limit (untrue for rounds or
repeats), and ``content_filter`` / ``tool_calls`` promise what is not there. An error
is the one ending every client notices, and the official ones raise it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DONE",
    "Completion",
    "finish_reason",
    "sse",
    "usage_of",
]

DONE = b"data: [DONE]\n\n"
"""The event that ends an OpenAI stream."""


def sse(payload: Mapping[str, Any]) -> bytes:
    """One server-sent event carrying ``payload`` as JSON (no newline inside: one data line)."""
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def usage_of(report: Mapping[str, Any] | None) -> dict[str, int]:
    """OpenAI's ``usage`` from a run report: the whole run's prompt and completion tokens.

    The sums of what the model server reported for each of the run's requests (a run of
    three steps made three requests); a request whose reply said nothing counts 0.
    """
    requests = (report or {}).get("requests") or []
    prompt = sum(_count(row.get("input_tokens")) for row in requests)
    completion = sum(_count(row.get("output_tokens")) for row in requests)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def finish_reason(report: Mapping[str, Any] | None) -> str | None:
    """OpenAI's ``finish_reason`` for a run that ended with ``report``; ``None``: no answer.

    ``stop`` for the model's answer and for a run paused for approval, ``length`` when
    the context budget (a token limit) ended the run; every other ending, one added
    later too, is no answer and is answered as an error
    (:func:`leanloop.serve.errors.no_answer`; the module docstring has the table). A
    run without a report is an answer (an agent that reports nothing).
    """
    reason = (report or {}).get("stop_reason", "answer")
    return _FINISH_REASONS.get(str(reason))


_FINISH_REASONS = {"answer": "stop", "paused": "stop", "budget_exhausted": "length"}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class Completion:
    """One completion being answered: its id, time and agent, shared by all its objects."""

    model: str
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    created: int = field(default_factory=lambda: int(time.time()))

    def response(self, text: str, report: Mapping[str, Any] | None) -> dict[str, Any]:
        """The ``chat.completion`` object of a whole answer (one :func:`finish_reason` has)."""
        return {
            **self._head("chat.completion"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": finish_reason(report),
                }
            ],
            "usage": usage_of(report),
            "leanloop": dict(report or {}),
        }

    def role_chunk(self) -> dict[str, Any]:
        """The first chunk of a stream: the assistant role, no text yet."""
        return self._chunk({"role": "assistant", "content": ""}, None)

    def text_chunk(self, text: str) -> dict[str, Any]:
        """A chunk carrying the next piece of the answer."""
        return self._chunk({"content": text}, None)

    def progress_chunk(self, progress: Mapping[str, Any]) -> dict[str, Any]:
        """A chunk with no text that carries one progress event under ``leanloop_progress``.

        Only for a client that asked for it (``X-Leanloop-Progress: events``): its delta is
        empty and its ``finish_reason`` null, so a client that ignores the key still
        builds the same answer.
        """
        chunk = self._chunk({}, None)
        chunk["leanloop_progress"] = dict(progress)
        return chunk

    def last_chunk(self, report: Mapping[str, Any] | None) -> dict[str, Any]:
        """The last chunk of an answer: the finish reason, the usage and the run report."""
        chunk = self._chunk({}, finish_reason(report))
        chunk["usage"] = usage_of(report)
        chunk["leanloop"] = dict(report or {})
        return chunk

    def _chunk(self, delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
        return {
            **self._head("chat.completion.chunk"),
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}],
        }

    def _head(self, kind: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
        }
