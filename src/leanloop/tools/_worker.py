"""Run blocking tool work in daemon threads that the event loop can abandon.

``asyncio.to_thread`` and LangChain's ``run_in_executor`` use the loop's default
executor, whose threads are joined when ``asyncio.run()`` ends and again at interpreter
exit: one sync tool stuck in ``time.sleep`` or a blocking read keeps the whole process
from ever exiting, even after its call was given up. :func:`in_worker` runs the work in
a fresh daemon thread instead and hands the result back through a future; cancelling
the awaiting task abandons the thread (it ends when its work does, or with the process).
The thread is started through ``loop.run_in_executor`` with an executor of its own, so the
loop knows that work is under way: an event loop with virtual time (the tests', ADR 0027)
then lets its clock follow real time while a tool runs, instead of jumping to the tool's
timeout as if nothing were left to wait for.

:func:`blocks_in_executor` says which LangChain tools would run their sync body in that
default executor (a ``@tool`` on a plain function, a ``BaseTool`` with only ``_run``), so
the registry can call them through :func:`in_worker` instead.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import itertools
import threading
from collections.abc import Callable
from concurrent import futures
from typing import Any, TypeVar

from langchain_core.tools import BaseTool, StructuredTool, Tool

__all__ = ["blocks_in_executor", "in_worker"]

T = TypeVar("T")

_numbers = itertools.count(1)


async def in_worker(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run ``func(*args, **kwargs)`` in a new daemon thread and await its result.

    The thread runs in a copy of the caller's context (context variables such as the
    registry's note sink and LangChain's run config reach it). A ``BaseException`` that
    is not an ``Exception`` (``SystemExit`` from a tool) comes back as a ``RuntimeError``,
    so it cannot end the caller's loop. Cancelling the await leaves the thread to finish
    on its own; what it returns then is dropped.
    """
    context = contextvars.copy_context()
    call = functools.partial(context.run, _contained, functools.partial(func, *args, **kwargs))
    return await asyncio.get_running_loop().run_in_executor(_DAEMON_THREADS, call)


def _contained(call: Callable[[], T]) -> T:
    """``call()``, with a ``BaseException`` that is not an ``Exception`` made a ``RuntimeError``."""
    try:
        return call()
    except Exception:
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt raised by the work
        msg = f"the tool raised {type(exc).__name__}: {exc}"
        raise RuntimeError(msg) from exc


class _DaemonThreads(futures.Executor):
    """An executor that runs every call in a new daemon thread and never joins one.

    Unlike the loop's default executor, nothing waits for its threads at the end of
    ``asyncio.run()`` or of the interpreter. A result that arrives after the loop closed is
    dropped (``asyncio`` skips settling a future of a closed loop).
    """

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> futures.Future[T]:
        """Start ``fn(*args, **kwargs)`` in a new daemon thread; return its future."""
        future: futures.Future[T] = futures.Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return  # cancelled before it started
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # handed to the awaiting task, whatever it is
                future.set_exception(exc)

        name = f"leanloop-tool-{next(_numbers)}"
        threading.Thread(target=work, name=name, daemon=True).start()
        return future


_DAEMON_THREADS = _DaemonThreads()


def blocks_in_executor(tool: BaseTool) -> bool:
    """Whether ``tool.ainvoke`` would run the tool's sync body in the default executor."""
    kind = type(tool)
    if kind.arun is not BaseTool.arun:
        return False  # an async entry of its own
    if isinstance(tool, StructuredTool | Tool):
        # Both fall back to ``run_in_executor(self.invoke)`` without a coroutine.
        own = (StructuredTool.ainvoke, Tool.ainvoke, StructuredTool._arun, Tool._arun)
        inherited = kind.ainvoke in own and kind._arun in own
        return inherited and tool.coroutine is None
    return kind.ainvoke is BaseTool.ainvoke and kind._arun is BaseTool._arun
