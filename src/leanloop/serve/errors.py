"""Errors of ``leanloop serve``, answered in OpenAI's error shape.

Every refusal the server makes on purpose is a :class:`ServeError`: an HTTP status, an
OpenAI error ``type`` and ``code``, and one line of message. The body is what OpenAI's
API sends, so the official clients raise their own typed exceptions from it
(``openai.NotFoundError`` for a 404, ``openai.RateLimitError`` for a 429)::

    {"error": {"message": "...", "type": "invalid_request_error", "param": null,
               "code": "model_not_found"}}

A ``ServeError`` is logged as one line, never with a traceback: it is the client's
mistake or an expected limit, not a bug of the server (ADR 0025). A failure on the
server's side (its session store) is answered without its details, which may name the
server's files; the log has them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from leanloop.exceptions import (
    LeanloopError,
    ModelError,
    SessionAgentMismatch,
    SessionBusy,
    SessionError,
    StructuredOutputError,
    UnfinishedTurn,
)
from leanloop.redact import redact_text

__all__ = [
    "ServeError",
    "ServeSetupError",
    "error_body",
    "from_run_error",
    "no_answer",
]

_log = logging.getLogger("leanloop.serve")


class ServeError(LeanloopError):
    """A request the server answers with an error status instead of a completion.

    Attributes:
        status: The HTTP status.
        type: OpenAI's error ``type`` (``invalid_request_error``, ``authentication_error``…).
        code: A stable machine-readable ``code`` (``model_not_found``, ``deadline_exceeded``…).
        param: The request field at fault, when one is.
        extra: More keys of the error object, beside OpenAI's four (a run's report).
        headers: Response headers the refusal needs.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str,
        param: str | None = None,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """The JSON body of the response (OpenAI's error shape)."""
        body = error_body(self.message, type=self.type, code=self.code, param=self.param)
        body["error"].update(self.extra)
        return body


class ServeSetupError(LeanloopError):
    """The server cannot start as asked (no token off loopback, a bad option value)."""


def error_body(
    message: str,
    *,
    type: str,
    code: str,
    param: str | None = None,
) -> dict[str, Any]:
    """OpenAI's error object: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def from_run_error(exc: LeanloopError) -> ServeError:
    """The response for an error a run raised on purpose (a session refusal, a model failure).

    Session refusals are the client's to resolve (another session ID, wait, resume), so
    they are 4xx; a model server that failed after LangChain's retries is the upstream's
    fault, a 502, with the run's one-line reason. Any other session error is the store's
    (a file it cannot write, a database that is down, a schema of a newer leanloop): the
    request's session ID was checked already (:mod:`leanloop.serve.requests`), so it is
    the server's 503, and its message, which names the store's file or host, goes to the
    log only. Anything else leanloop raised is a 500, told the same way.
    """
    if isinstance(exc, ServeError):
        return exc
    message = redact_text(str(exc))  # never the credentials of the model's URL
    if isinstance(exc, SessionBusy):
        return ServeError(409, message, code="session_busy", param="user")
    if isinstance(exc, SessionAgentMismatch | UnfinishedTurn):
        return ServeError(409, message, code="session_conflict", param="user")
    if isinstance(exc, SessionError):
        _log.error("the session store failed: %s", message)
        msg = "the session store failed; the server's log says why"
        return ServeError(503, msg, type="server_error", code="session_store_unavailable")
    if isinstance(exc, StructuredOutputError):
        return ServeError(502, message, type="server_error", code="structured_output_failed")
    if isinstance(exc, ModelError):
        return ServeError(502, message, type="server_error", code="model_error")
    _log.error("the run failed: %s: %s", type(exc).__name__, message)
    msg = "the run failed; the server's log says why"
    return ServeError(500, msg, type="server_error", code="internal_error")


def no_answer(report: Mapping[str, Any], text: str) -> ServeError:
    """The response for a run that ended without the model's answer.

    A 502, as for an answer that could not be put in its schema: the agent, this
    server's upstream, gave nothing usable, and the official clients raise it, so none
    takes the text for an answer. The error object carries the text the run ended with
    (``content``) and the run report (``leanloop``: its ``stop_reason`` and ``ending``
    say how it ended). ``x-should-retry: false`` keeps the official clients from running
    the agent, tools and all, again on their own: asking again is the caller's choice.

    Args:
        report: The run report (a ``stop_reason`` other than ``answer``).
        text: What the run ended with (the ending's words, or the model's last reply).
    """
    reason = str(report.get("stop_reason", "unknown"))
    ending = report.get("ending")
    why = f": {ending}" if isinstance(ending, str) and ending else ""
    msg = (
        f"the agent ended without an answer (stop reason {reason}){why}; the error's "
        "'content' holds the text the run ended with, 'leanloop' its report"
    )
    return ServeError(
        502,
        msg,
        type="server_error",
        code="ended_without_answer",
        extra={"content": text, "leanloop": dict(report)},
        headers={"x-should-retry": "false"},
    )
