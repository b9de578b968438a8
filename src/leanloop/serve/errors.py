"""Errors of ``leanloop serve``, answered in OpenAI's error shape.

Every refusal the server makes on purpose is a :class:`ServeError`: an HTTP status, an
OpenAI error ``type`` and ``code``, and one line of message. The body is what OpenAI's
API sends, so the official clients raise their own typed exceptions from it
(``openai.NotFoundError`` for a 404, ``openai.RateLimitError`` for a 429)::

    {"error": {"message": "...", "type": "invalid_request_error", "param": null,
               "code": "model_not_found"}}

A ``ServeError`` is logged as one line, never with a traceback: it is the client's
mistake or an expected limit, not a bug of the server (ADR 0025).
"""

from __future__ import annotations

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

__all__ = [
    "ServeError",
    "ServeSetupError",
    "error_body",
    "from_run_error",
]


class ServeError(LeanloopError):
    """A request the server answers with an error status instead of a completion.

    Attributes:
        status: The HTTP status.
        type: OpenAI's error ``type`` (``invalid_request_error``, ``authentication_error``…).
        code: A stable machine-readable ``code`` (``model_not_found``, ``deadline_exceeded``…).
        param: The request field at fault, when one is.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param

    def body(self) -> dict[str, Any]:
        """The JSON body of the response (OpenAI's error shape)."""
        return error_body(self.message, type=self.type, code=self.code, param=self.param)


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
    fault, a 502, with the run's one-line reason.
    """
    if isinstance(exc, ServeError):
        return exc
    if isinstance(exc, SessionBusy):
        return ServeError(409, str(exc), code="session_busy", param="user")
    if isinstance(exc, SessionAgentMismatch | UnfinishedTurn):
        return ServeError(409, str(exc), code="session_conflict", param="user")
    if isinstance(exc, SessionError):
        return ServeError(400, str(exc), code="invalid_session", param="user")
    if isinstance(exc, StructuredOutputError):
        return ServeError(502, str(exc), type="server_error", code="structured_output_failed")
    if isinstance(exc, ModelError):
        return ServeError(502, str(exc), type="server_error", code="model_error")
    return ServeError(500, str(exc), type="server_error", code="internal_error")
