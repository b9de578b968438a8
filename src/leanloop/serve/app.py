"""The ASGI application of ``leanloop serve``: agents behind OpenAI's chat-completions API.

Routes:

* ``POST /v1/chat/completions``: ``model`` names the agent, ``messages`` are the
  conversation; ``stream: true`` answers with server-sent ``chat.completion.chunk``
  events. The answer carries ``usage`` and the run report under ``leanloop``.
* ``GET /v1/models``: the agents, as OpenAI model objects.
* ``GET /healthz``: ``{"status": "ok"}``, without a token (for probes).

Every error is OpenAI's error shape with its status (:mod:`leanloop.serve.errors`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException

from leanloop.exceptions import LeanloopError
from leanloop.serve.errors import ServeError, error_body, from_run_error
from leanloop.serve.limits import ConcurrencyLimit, Gate, ServeSettings
from leanloop.serve.requests import SESSION_HEADER, parse_chat_request, run_input
from leanloop.serve.streaming import DONE, Completion, sse

if TYPE_CHECKING:
    from langchain_core.messages import AIMessageChunk
    from langchain_core.runnables import RunnableConfig
    from starlette.types import Receive, Scope, Send

    from leanloop.agent import LLMAgent

__all__ = ["create_app"]

_log = logging.getLogger("leanloop.serve")


def create_app(agents: Mapping[str, LLMAgent], settings: ServeSettings) -> FastAPI:
    """The server for ``agents`` (each served under its name), guarded as ``settings`` says.

    Args:
        agents: The agents, by the name a request's ``model`` gives.
        settings: The token and the limits.
    """
    app = FastAPI(title="leanloop", docs_url=None, redoc_url=None, openapi_url=None)
    served = dict(agents)
    limit = ConcurrencyLimit(settings.max_concurrency)
    app.state.agents = served
    app.state.limit = limit

    _install_error_handlers(app)

    async def healthz() -> dict[str, Any]:
        return {"status": "ok", "in_flight": limit.in_flight, "agents": len(served)}

    async def models() -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {
                    "id": name,
                    "object": "model",
                    "created": 0,
                    "owned_by": "leanloop",
                    "description": agent.spec.description,
                }
                for name, agent in sorted(served.items())
            ],
        }

    async def chat_completions(request: Request) -> Response:
        chat = parse_chat_request(await request.body())
        agent = served.get(chat.model)
        if agent is None:
            known = ", ".join(sorted(served)) or "none"
            msg = f"the model {chat.model!r} does not exist: the agents are {known}"
            raise ServeError(404, msg, code="model_not_found", param="model")
        run = run_input(chat, request.headers.get(SESSION_HEADER))
        config: RunnableConfig = (
            {"configurable": {"thread_id": run.thread_id}} if run.thread_id else {}
        )
        completion = Completion(model=chat.model)
        loop = asyncio.get_running_loop()
        limit.acquire()
        deadline = loop.time() + settings.deadline
        if not chat.stream:
            try:
                async with asyncio.timeout_at(deadline):
                    final = await agent.ainvoke(run.messages, config)
            except TimeoutError:
                raise _deadline_error(settings.deadline) from None
            except LeanloopError as exc:
                raise from_run_error(exc) from None
            finally:
                limit.release()
            report = final.response_metadata.get("leanloop")
            return JSONResponse(completion.response(final.text, report))
        try:
            chunks = agent.astream(run.messages, config)
            first = await _first_chunk(chunks, deadline, settings.deadline)
        except BaseException:
            limit.release()
            raise
        events = _events(completion, first, chunks, deadline, settings.deadline)

        async def close() -> None:
            await _aclose(chunks)  # cancels the run when the client went away
            limit.release()

        return _RunStream(events, on_close=close)

    app.add_api_route("/healthz", healthz, methods=["GET"])
    app.add_api_route("/v1/models", models, methods=["GET"])
    app.add_api_route("/v1/chat/completions", chat_completions, methods=["POST"])

    app.add_middleware(Gate, settings=settings)
    return app


def _install_error_handlers(app: FastAPI) -> None:
    """Answer every error in OpenAI's shape: refusals, unknown routes, and bugs."""

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ServeError)  # registered for ServeError only
        _log.info("%s %s: %d %s", request.method, request.url.path, exc.status, exc.code)
        return _error_response(exc)

    async def routing(request: Request, exc: Exception) -> Response:
        # Unknown paths and methods: Starlette's own 404/405, in OpenAI's shape.
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _error_response(ServeError(exc.status_code, str(exc.detail), code=code))

    async def failed(request: Request, exc: Exception) -> Response:
        # A bug of the server, never the client's input: Starlette logs the traceback
        # after this answer, so it can be found and fixed.
        body = error_body("the server failed; see its log", type="server_error", code="internal")
        return JSONResponse(body, status_code=500)

    app.add_exception_handler(ServeError, refused)
    app.add_exception_handler(HTTPException, routing)
    app.add_exception_handler(Exception, failed)


class _RunStream(StreamingResponse):
    """A streamed answer whose run ends, and whose slot is freed, however the stream ends.

    ``on_close`` runs after the last event, and also when the client disconnects before
    the body was started (the body's own ``finally`` would never run then).
    """

    def __init__(
        self, content: AsyncIterator[bytes], *, on_close: Callable[[], Awaitable[None]]
    ) -> None:
        super().__init__(
            content,
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await asyncio.shield(self._on_close())


async def _first_chunk(
    chunks: AsyncIterator[AIMessageChunk], deadline: float, seconds: float
) -> AIMessageChunk | None:
    """Wait for the run's first chunk, so a refusal before any text is still a status.

    A session conflict or a model that fails at once is then a 409 or 502, not a
    200 whose stream holds an error event.
    """
    try:
        async with asyncio.timeout_at(deadline):
            return await anext(chunks, None)
    except TimeoutError:
        await _aclose(chunks)
        raise _deadline_error(seconds) from None
    except LeanloopError as exc:
        await _aclose(chunks)
        raise from_run_error(exc) from None


async def _events(
    completion: Completion,
    first: AIMessageChunk | None,
    chunks: AsyncIterator[AIMessageChunk],
    deadline: float,
    seconds: float,
) -> AsyncIterator[bytes]:
    """The stream's events: the role, each piece of text, the report, ``[DONE]``.

    A failure after the first event can no longer change the status: it is sent as an
    event holding OpenAI's error object (the ``openai`` client raises it), then ``[DONE]``.
    """
    yield sse(completion.role_chunk())
    report: Mapping[str, Any] | None = None
    chunk = first
    try:
        while chunk is not None:
            if chunk.text:
                yield sse(completion.text_chunk(chunk.text))
            report = chunk.response_metadata.get("leanloop") or report
            async with asyncio.timeout_at(deadline):
                chunk = await anext(chunks, None)
    except TimeoutError:
        yield sse(_deadline_error(seconds).body())
    except LeanloopError as exc:
        refused = from_run_error(exc)
        _log.info("stream of %s ended: %d %s", completion.model, refused.status, refused.code)
        yield sse(refused.body())
    else:
        yield sse(completion.last_chunk(report))
    yield DONE


def _deadline_error(seconds: float) -> ServeError:
    msg = f"the run took longer than the server's deadline of {seconds:g} s (--deadline)"
    return ServeError(504, msg, type="timeout_error", code="deadline_exceeded")


def _error_response(exc: ServeError) -> JSONResponse:
    headers = {"www-authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


async def _aclose(chunks: AsyncIterator[Any]) -> None:
    """Close the agent's stream: its ``finally`` cancels the run and awaits its end."""
    close = getattr(chunks, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
