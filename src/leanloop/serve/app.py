"""The ASGI application of ``leanloop serve``: agents behind OpenAI's chat-completions API.

Routes:

* ``POST /v1/chat/completions``: ``model`` names the agent, ``messages`` are the
  conversation; ``stream: true`` answers with server-sent ``chat.completion.chunk``
  events, the run's progress among them as SSE comments (and as chunks under
  ``leanloop_progress`` with ``X-Leanloop-Progress: events``). The answer carries
  ``usage`` and the run report under ``leanloop``. A run that ended without an answer
  is an error, not a completion (:mod:`leanloop.serve.streaming` has the mapping), except
  a run paused for approval of tool calls: ``finish_reason: "stop"``, ``stop_reason:
  "paused"`` and ``pending_calls`` in ``leanloop``; the session's next request sends the
  decisions in its ``leanloop.approvals`` (:mod:`leanloop.serve.approvals`). A
  client that disconnects cancels its run, before the answer began as well as mid-stream.
* ``GET /v1/models``: the agents, as OpenAI model objects.
* ``GET /healthz``: ``{"status": "ok"}``, without a token (for probes).

Every error is OpenAI's error shape with its status (:mod:`leanloop.serve.errors`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException

from leanloop.exceptions import LeanloopError
from leanloop.serve.approvals import check_paused_turn
from leanloop.serve.errors import ServeError, error_body, from_run_error, no_answer
from leanloop.serve.limits import ConcurrencyLimit, Gate, ServeSettings
from leanloop.serve.progress import PROGRESS_HEADER, PROGRESS_OPT_IN, Progress, RunFeed, comment
from leanloop.serve.requests import SESSION_HEADER, RunInput, parse_chat_request, run_input
from leanloop.serve.streaming import DONE, Completion, finish_reason, sse

if TYPE_CHECKING:
    from langchain_core.messages import AIMessageChunk, BaseMessage
    from langchain_core.runnables import RunnableConfig
    from starlette.types import Receive, Scope, Send

    from leanloop.agent import LLMAgent

__all__ = ["create_app"]

_log = logging.getLogger("leanloop.serve")
_T = TypeVar("_T")

_MODEL_CHARS = 80
"""The most of an unknown ``model`` a 404 repeats (a client may send kilobytes)."""
_AGENTS_LISTED = 20
"""The most agent names a 404 lists (``GET /v1/models`` has them all)."""


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
            raise _unknown_agent(chat.model, served)
        run = run_input(chat, request.headers.get(SESSION_HEADER))
        if run.thread_id is not None:
            await check_paused_turn(agent, run)
        config = _run_config(run)
        limit.acquire()
        deadline = asyncio.get_running_loop().time() + settings.deadline
        call = _Call(request, agent, run.messages, config, limit, deadline, settings.deadline)
        if not chat.stream:
            return await call.whole(Completion(model=chat.model))
        return await call.stream(Completion(model=chat.model))

    app.add_api_route("/healthz", healthz, methods=["GET"])
    app.add_api_route("/v1/models", models, methods=["GET"])
    app.add_api_route("/v1/chat/completions", chat_completions, methods=["POST"])

    app.add_middleware(Gate, settings=settings)
    return app


def _run_config(run: RunInput) -> RunnableConfig:
    """The run's config: its session, and for decisions the resume of the paused turn.

    Nobody is asked (``approver`` stays unset, and serve never reads a terminal): a call
    that asks a person, and has no decision here, pauses the run.
    """
    if run.thread_id is None:
        return {}
    if run.approvals is None:
        return {"configurable": {"thread_id": run.thread_id}}
    configurable = {"thread_id": run.thread_id, "resume": True, "approvals": run.approvals}
    return {"configurable": configurable}


def _unknown_agent(model: str, served: Mapping[str, object]) -> ServeError:
    """The 404 for ``model``: what was asked for and the agents, both cut short."""
    shown = model if len(model) <= _MODEL_CHARS else f"{model[:_MODEL_CHARS]}…"
    names = sorted(served)
    known = ", ".join(names[:_AGENTS_LISTED]) or "none"
    if len(names) > _AGENTS_LISTED:
        known += f" and {len(names) - _AGENTS_LISTED} more (GET /v1/models lists them)"
    msg = f"the model {shown!r} does not exist: the agents are {known}"
    return ServeError(404, msg, code="model_not_found", param="model")


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


@dataclass(frozen=True)
class _Call:
    """One admitted request to run an agent: it holds a concurrency slot until it ends."""

    request: Request
    agent: LLMAgent
    messages: list[BaseMessage]
    config: RunnableConfig
    limit: ConcurrencyLimit
    deadline: float
    seconds: float

    async def whole(self, completion: Completion) -> Response:
        """Run to the end and answer the ``chat.completion``."""
        try:
            async with asyncio.timeout_at(self.deadline):
                final = await _unless_gone(
                    self.request, self.agent.ainvoke(self.messages, self.config)
                )
        except TimeoutError:
            raise _deadline_error(self.seconds) from None
        except LeanloopError as exc:
            raise from_run_error(exc) from None
        finally:
            self.limit.release()
        report = final.response_metadata.get("leanloop")
        if finish_reason(report) is None:
            raise no_answer(report or {}, final.text)
        return JSONResponse(completion.response(final.text, report))

    async def stream(self, completion: Completion) -> Response:
        """Start the run and answer with its stream once its first chunk or event came."""
        header = self.request.headers.get(PROGRESS_HEADER, "")
        as_chunks = header.strip().lower() == PROGRESS_OPT_IN
        try:
            feed = RunFeed(self.agent, self.messages, self.config)
        except BaseException:
            self.limit.release()
            raise
        try:
            first = await _first_item(self.request, feed, self.deadline, self.seconds)
        except BaseException:
            await asyncio.shield(_end(feed, self.limit))
            raise
        events = _events(completion, first, feed, self.deadline, self.seconds, as_chunks=as_chunks)
        return _RunStream(events, on_close=functools.partial(_end, feed, self.limit))


async def _end(feed: RunFeed, limit: ConcurrencyLimit) -> None:
    """End the run (cancelled if still going: the client went away) and free its slot."""
    try:
        await feed.aclose()
    finally:
        limit.release()


async def _unless_gone(request: Request, work: Awaitable[_T]) -> _T:
    """Await ``work``, cancelled at once if the client disconnects first.

    Until a response has started nothing else listens to the connection (a streamed body
    does, afterwards), so a client that gives up on a long run would leave it running
    to the end, tools and all.

    Raises:
        ServeError: 499 (nginx's "client closed request") once the run is cancelled; no
            one reads it, it only ends the request with one log line.
    """
    running = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({running, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not running.done():
            # The client went away, or the deadline cancelled this request: wait for the
            # cancelled run to end, so its tools have cleaned up before the answer.
            running.cancel()
            await asyncio.wait({running})
    if running.cancelled():
        msg = "the client disconnected before the answer began; the run was cancelled"
        raise ServeError(499, msg, code="client_closed_request")
    return running.result()


async def _disconnected(request: Request) -> None:
    """Return once the client has disconnected (the body was read already)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _first_item(
    request: Request, feed: RunFeed, deadline: float, seconds: float
) -> AIMessageChunk | Progress | None:
    """Wait for the run's first chunk or event, so a refusal before it is still a status.

    A session conflict or a model that fails at once is then a 409 or 502, not a
    200 whose stream holds an error event.
    """
    try:
        async with asyncio.timeout_at(deadline):
            return await _unless_gone(request, feed.next())
    except TimeoutError:
        raise _deadline_error(seconds) from None
    except LeanloopError as exc:
        raise from_run_error(exc) from None


async def _events(
    completion: Completion,
    first: AIMessageChunk | Progress | None,
    feed: RunFeed,
    deadline: float,
    seconds: float,
    *,
    as_chunks: bool,
) -> AsyncIterator[bytes]:
    """The stream's events: the role, each piece of text and progress, the report, ``[DONE]``.

    Progress is an SSE comment, which OpenAI's clients skip, and also a chunk when the
    client asked (``as_chunks``). A failure after the first event can no longer change
    the status: it is sent as an event holding OpenAI's error object (the ``openai``
    client raises it), then ``[DONE]``. So is a run that ended without an answer, in
    place of the last chunk: its text was streamed already, and a finish reason would
    pass it off as one.
    """
    yield sse(completion.role_chunk())
    report: Mapping[str, Any] | None = None
    texts: list[str] = []
    item = first
    try:
        while item is not None:
            if isinstance(item, Progress):
                yield comment(item)
                if as_chunks:
                    yield sse(completion.progress_chunk(item.payload()))
            else:
                if item.text:
                    texts.append(item.text)
                    yield sse(completion.text_chunk(item.text))
                report = item.response_metadata.get("leanloop") or report
            async with asyncio.timeout_at(deadline):
                item = await feed.next()
    except TimeoutError:
        yield sse(_deadline_error(seconds).body())
    except LeanloopError as exc:
        refused = from_run_error(exc)
        _log.info("stream of %s ended: %d %s", completion.model, refused.status, refused.code)
        yield sse(refused.body())
    else:
        if finish_reason(report) is None:
            ended = no_answer(report or {}, "".join(texts))
            _log.info("stream of %s ended: %d %s", completion.model, ended.status, ended.code)
            yield sse(ended.body())
        else:
            yield sse(completion.last_chunk(report))
    yield DONE


def _deadline_error(seconds: float) -> ServeError:
    msg = f"the run took longer than the server's deadline of {seconds:g} s (--deadline)"
    return ServeError(504, msg, type="timeout_error", code="deadline_exceeded")


def _error_response(exc: ServeError) -> JSONResponse:
    headers = dict(exc.headers)
    if exc.status == 401:
        headers["www-authenticate"] = "Bearer"
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)
