"""OpenAI's completion objects and server-sent events, built from a run's answer and report.

A streamed answer is a series of ``chat.completion.chunk`` objects, each sent as one
server-sent event (``data: {...}\\n\\n``), then ``data: [DONE]``: first a chunk with the
assistant role, then one per piece of text the model wrote, then a last chunk with the
``finish_reason``, the ``usage`` and the run report under ``leanloop``. The run's
progress events travel as SSE comments, and on request as chunks whose
``leanloop_progress`` holds the event (:mod:`leanloop.serve.progress`). The report is an
extension key: OpenAI's clients keep unknown keys (``chunk.model_extra`` /
``completion.model_extra`` in the Python client) and ignore them otherwise.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from leanloop.report import ENDED_OTHERWISE

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


def finish_reason(report: Mapping[str, Any] | None) -> str:
    """``stop`` for the model's own answer; ``length`` for an answer leanloop composed.

    A run that ended by ``max_rounds``, ``budget_exhausted`` or ``repeated_calls`` answers
    with what leanloop composed from what was found, not the model's finished work: the
    nearest OpenAI reason is ``length`` (the model was cut short). The report says which.
    """
    reason = (report or {}).get("stop_reason", "answer")
    return "length" if reason in ENDED_OTHERWISE else "stop"


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class Completion:
    """One completion being answered: its id, time and agent, shared by all its objects."""

    model: str
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    created: int = field(default_factory=lambda: int(time.time()))

    def response(self, text: str, report: Mapping[str, Any] | None) -> dict[str, Any]:
        """The ``chat.completion`` object of a whole answer."""
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
        """The last chunk: the finish reason, the usage and the run report."""
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
