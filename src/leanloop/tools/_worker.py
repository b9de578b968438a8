"""Run blocking tool work in daemon threads that the event loop can abandon.

``asyncio.to_thread`` and LangChain's ``run_in_executor`` use the loop's default
executor, whose threads are joined when ``asyncio.run()`` ends and again at interpreter
exit: one sync tool stuck in ``time.sleep`` or a blocking read keeps the whole process
from ever exiting, even after its call was given up. :func:`in_worker` runs the work in
a fresh daemon thread instead and hands the result back through a future; cancelling
the awaiting task abandons the thread (it ends when its work does, or with the process).

:func:`blocks_in_executor` says which LangChain tools would run their sync body in that
default executor (a ``@tool`` on a plain function, a ``BaseTool`` with only ``_run``), so
the registry can call them through :func:`in_worker` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import threading
from collections.abc import Callable
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
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # cancelled: nobody waits for this result any more
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = context.run(func, *args, **kwargs)
        except Exception as exc:
            error = exc
        except BaseException as exc:  # SystemExit, KeyboardInterrupt raised by the work
            error = RuntimeError(f"the tool raised {type(exc).__name__}: {exc}")
        with contextlib.suppress(RuntimeError):  # a closed loop: the caller is long gone
            loop.call_soon_threadsafe(settle, result, error)

    name = f"leanloop-tool-{next(_numbers)}"
    threading.Thread(target=work, name=name, daemon=True).start()
    return await future


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
