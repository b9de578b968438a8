"""A run's MCP sessions: one per server, opened at its first call, closed when the run ends.

Sessions: one per server per *run* (ADR 0018, amended). A run holds an
:class:`McpSessions`, which the registry hands every tool call in its
:class:`~leanloop.tools._notes.CallContext`; a server's session is opened at the run's
first call of one of its tools, used by the run's later calls (calls of one round at
once too: a ``ClientSession`` multiplexes requests by their id), and closed when the run
ends, however it ends (:class:`leanloop.agent.LLMAgent` closes it). A call made outside
a run (a tool invoked by hand) opens a session of its own (:mod:`leanloop.tools.mcp`).

The session itself is opened by :mod:`leanloop.tools._mcp_connect`; this module only
holds it open for the run, each in a task of its own.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, Self

from leanloop.exceptions import ToolError
from leanloop.spec.types import McpServerSpec
from leanloop.tools._mcp_connect import (
    ServerLog,
    open_session,
    output_note,
    reason_of,
    server_named,
)

if TYPE_CHECKING:
    from anyio import CancelScope
    from mcp import ClientSession

__all__ = ["McpSessions"]

# The MCP modules share one logger, the name they had as one module.
_log = logging.getLogger("leanloop.tools.mcp")

_CLOSE_S: Final = 10.0
"""How long closing one session may take (a stdio server gets 2 s to exit on its own,
then its process tree is terminated, 2 s more) before it is aborted."""


class McpSessions:
    """The MCP sessions of one run: one per server, opened at its first call, closed at the end.

    Each session is held by a task of its own, which enters the session's context and
    waits to be told to leave it: ``mcp`` sessions are anyio context managers that must be
    left by the task that entered them, and a tool call's task ends with the call. Calls
    only send requests on the session, which works from any task of the same event loop,
    several at once. Use it as an ``async with`` block around a run (or call
    :meth:`aclose`); a pool is bound to the event loop of its first session.
    """

    def __init__(self) -> None:
        """Make an empty pool: nothing is started before a tool call asks for a server."""
        self._current: dict[str, _Held] = {}
        self._every: list[_Held] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    async def session(self, server: McpServerSpec) -> ClientSession | None:
        """``server``'s session in this run: the open one, or one opened now.

        Callers that ask while it is starting wait for the same start. A session whose
        task has ended (its server went away) is replaced by a new one.

        Returns:
            The session; ``None`` when the pool cannot serve this call (it is closed, or
            was opened on another event loop), so the call opens a session of its own.

        Raises:
            ToolException: The server could not be started, or did not answer within its
                ``timeout``; one line naming it (the model sees it as the call's error).
        """
        loop = asyncio.get_running_loop()
        if self._closed or self._loop not in (None, loop):
            return None
        self._loop = loop
        held = self._current.get(server.name)
        if held is None or held.task.done():
            held = self._open(server)
        try:
            # Shielded: a caller that gives up (its time limit) must not end the start
            # others wait for.
            return await asyncio.wait_for(asyncio.shield(held.ready), server.timeout)
        except TimeoutError:
            self._drop(server.name, held)
            within = f"{server.timeout:g} s"
            problem = f"did not start within {within}{output_note(held.log, None)}"
        except Exception as exc:  # the start failed: say why, in the call's result
            self._drop(server.name, held)
            problem = f"could not be started: {reason_of(exc)}{output_note(held.log, exc)}"
        from langchain_core.tools import ToolException  # noqa: PLC0415 - loaded by now

        raise ToolException(f"{server_named(server)} {problem}")

    def discard(self, server: str, session: ClientSession) -> None:
        """Close ``server``'s ``session`` (it failed), so that its next call opens another.

        Nothing happens when the pool already holds another session of ``server``.
        """
        held = self._current.get(server)
        if held is None or not held.ready.done() or held.ready.exception() is not None:
            return
        if held.ready.result() is session:
            _log.info("MCP server %r: its session failed; the next call opens another", server)
            self._drop(server, held)

    async def aclose(self, *, abort: bool = False) -> None:
        """Close every session and wait (each at most ``_CLOSE_S``) until they are closed.

        A stdio server's process ends with its session: its stdin is closed, it gets 2 s
        to exit, then its process tree is terminated (``mcp``'s shutdown sequence).

        Args:
            abort: End the sessions at once instead (see :meth:`_Held.abort`: a stdio
                server is killed, not waited for): for a run that failed or was
                cancelled, which must end promptly (after a signal the CLI gives a run 2 s
                to unwind, and a server stuck in a tool ignores its stdin closing). The
                same happens when this wait is cancelled.
        """
        self._closed = True
        for held in self._every:
            if abort:
                held.abort()
            else:
                held.stop()
        tasks = [held.task for held in self._every if not held.task.done()]
        if not tasks or self._loop is not asyncio.get_running_loop():  # never across loops
            return
        try:
            _, pending = await asyncio.wait(tasks, timeout=_CLOSE_S)
        except asyncio.CancelledError:
            for held in self._every:
                held.abort()
            await asyncio.wait(tasks, timeout=_CLOSE_S)
            raise
        for held in self._every:
            if held.task in pending:
                _log.warning("MCP server %r: its session did not close in time", held.name)
                held.abort()
        if pending:
            await asyncio.wait(pending, timeout=_CLOSE_S)

    async def __aenter__(self) -> Self:
        """The pool itself; it is closed when the block ends."""
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        """Close every session (:meth:`aclose`): at once when the block ended with an
        exception (a failure, a cancellation), else each server is let exit on its own."""
        await self.aclose(abort=exc_type is not None)

    def _open(self, server: McpServerSpec) -> _Held:
        _log.debug("MCP server %r: opening the run's session", server.name)
        held = _Held(server)
        self._current[server.name] = held
        self._every.append(held)
        return held

    def _drop(self, server: str, held: _Held) -> None:
        if self._current.get(server) is held:
            del self._current[server]
        held.stop()


class _Held:
    """One session and the task that holds it open until :meth:`stop` or :meth:`abort`."""

    def __init__(self, server: McpServerSpec) -> None:
        loop = asyncio.get_running_loop()
        self.name = server.name
        self.log = ServerLog(server) if server.command is not None else None
        """Where a stdio server's stderr goes; ``None`` for a server reached by URL."""
        self.ready: asyncio.Future[ClientSession] = loop.create_future()
        # A start that failed with nobody waiting any more is not "never retrieved".
        self.ready.add_done_callback(_retrieve)
        self._leave = asyncio.Event()
        self._scope: CancelScope | None = None
        self._aborted = False
        opening = open_session(server, self.log)
        self.task = loop.create_task(self._hold(opening), name=f"leanloop-mcp-{server.name}")

    def stop(self) -> None:
        """Leave the session (a session still starting is aborted: it waits on no signal)."""
        self._leave.set()
        if not self.ready.done():
            self.abort()

    def abort(self) -> None:
        """End the session at once: a stdio server is killed, not let exit on its own.

        An anyio cancel scope, not ``Task.cancel``: its cancellation holds for every
        ``await`` of the session's shutdown, so ``mcp``'s stdio client skips its 2 s wait
        for the server to exit and anyio kills the process. A single ``CancelledError``
        would be spent before that wait.
        """
        self._aborted = True
        self._leave.set()
        if self._scope is not None:
            self._scope.cancel()
        else:  # not started yet
            self.task.cancel()

    async def _hold(self, opening: AbstractAsyncContextManager[ClientSession]) -> None:
        from anyio import CancelScope  # noqa: PLC0415 - a dependency of the mcp extra

        try:
            with CancelScope() as scope:
                self._scope = scope
                if self._aborted:
                    scope.cancel()
                async with opening as session:
                    await session.initialize()
                    self.ready.set_result(session)
                    await self._leave.wait()
        except BaseException as exc:
            self._failed(exc)
            if not isinstance(exc, Exception):
                raise
            # The calls on it have failed with their own errors already; nobody awaits this.
            _log.debug("MCP server %r: its session ended: %s", self.name, reason_of(exc))
        else:
            self._failed(ToolError("the run ended"))

    def _failed(self, exc: BaseException) -> None:
        """Tell those waiting for a start that never finished why."""
        if not self.ready.done():
            # A cancelled start is a failed start for those waiting: their own calls were
            # not cancelled, so they must not see a CancelledError.
            self.ready.set_exception(
                exc if isinstance(exc, Exception) else ToolError("the run ended")
            )


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
