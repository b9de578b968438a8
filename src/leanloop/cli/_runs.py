"""What the commands that run an agent share (``run``, ``chat``, ``batch``): exit codes,
the answer streamed to stdout (and the line after a failed stream), ``--session``, and a
run that signals end promptly.

Apart from :mod:`leanloop.cli.command` so that ``chat`` (a row of ``command``'s table) can
use them without importing ``command`` back: the cli package's imports run one way.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

from leanloop.exceptions import RunFailed

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from leanloop.agent import LLMAgent

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_ENDED_OTHERWISE",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_PAUSED",
    "PARTIAL_MARK",
    "add_approval_arguments",
    "interrupt_json",
    "interrupt_said",
    "json_error_text",
    "run_interruptible",
    "say_interrupted",
    "session_id",
    "signalled_exit",
    "stream_answer",
]

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_ENDED_OTHERWISE = 0, 1, 2, 3
EXIT_PAUSED = 4
"""The run paused before tool calls that wait for a person's decision (ADR 0037): no
flag approved them and no terminal could ask; ``--session ID --resume`` goes on."""

PARTIAL_MARK = "[leanloop: the run failed; the text above is not an answer]"
"""The stdout line after text a failed run had already streamed (exit 1 follows)."""

T = TypeVar("T")


def add_approval_arguments(parser: argparse.ArgumentParser) -> None:
    """``--approve TOOL`` (repeatable) and ``--approve-all``."""
    parser.add_argument(
        "--approve",
        action="append",
        default=[],
        metavar="TOOL",
        help="approve every call of TOOL that asks a person first (repeatable); without it "
        "a terminal is asked, and with no terminal the run pauses (exit 4)",
    )
    parser.add_argument(
        "--approve-all",
        action="store_true",
        help="approve every call that asks a person first (edits, run_command, approval: ask)",
    )


async def stream_answer(
    agent: LLMAgent,
    question: str,
    config: RunnableConfig,
    *,
    show: bool = True,
    before_text: Callable[[], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Run ``agent`` once: its answer (stripped) and its report.

    With ``show``, the answer text goes to stdout as it arrives, and a newline ends it; a
    run that fails after some text was shown adds :data:`PARTIAL_MARK` on a line of its own
    before :class:`RunFailed` goes on. An agent with an ``output_schema`` prints the typed
    answer (JSON) once it is made: the text the model streams is not that answer.
    ``before_text`` is called once, before the first text is written (``chat`` stops its
    spinner there).
    """
    if agent.answer_schema is not None:
        message = await agent.ainvoke(question, config)
        if before_text is not None:
            before_text()
        if show:
            print(message.text, flush=True)
        return message.text, dict(message.response_metadata.get("leanloop", {}))
    parts: list[str] = []
    report: dict[str, Any] = {}
    try:
        async for chunk in agent.astream(question, config):
            text = chunk.text
            if text:
                if before_text is not None and not parts:
                    before_text()
                parts.append(text)
                if show:
                    sys.stdout.write(text)
                    sys.stdout.flush()
            if "leanloop" in chunk.response_metadata:
                report = dict(chunk.response_metadata["leanloop"])
    except RunFailed:
        # What was streamed (a reply cut off, text before a failed step) is already on
        # stdout and cannot be taken back: a line of its own says it is no answer.
        shown = "".join(parts)
        if show and shown:
            sys.stdout.write(("" if shown.endswith("\n") else "\n") + PARTIAL_MARK + "\n")
            sys.stdout.flush()
        raise
    answer = "".join(parts)
    if show:
        sys.stdout.write("\n" if answer and not answer.endswith("\n") else "")
        sys.stdout.flush()
    return answer.strip(), report


def session_id(args: argparse.Namespace) -> str | None:
    """``--session ID`` as given, ``None`` without it; an empty or blank ID is refused.

    Raises:
        SessionError: ``--session ""`` or ``--session " "``: the same line as for
            ``configurable.thread_id`` (never taken as "no session").
    """
    if args.session is None:
        return None
    from leanloop.sessions import check_thread_id  # noqa: PLC0415 - keep `--help` fast

    return check_thread_id(args.session, given_as="--session")


_SIGINT = 2
"""``signal.SIGINT`` (2 everywhere): a plain ``KeyboardInterrupt`` is Ctrl-C outside a run."""
_EXIT_SIGNALLED = 128
"""A run a signal ended exits with ``128 + signum``: 130 for Ctrl-C, 143 SIGTERM, 129 SIGHUP."""
_SIGNAL_LINES = {
    "SIGINT": "interrupted",
    "SIGTERM": "terminated (SIGTERM)",
    "SIGHUP": "hung up (SIGHUP)",
}
"""The one line on stderr when a signal ends the command, by the signal's name."""
_INTERRUPT_GRACE_S = 2.0
"""After a signal, how long a run may take to unwind before the process ends anyway."""
interrupt_said = threading.Event()
interrupt_json = threading.Event()
"""Set for ``--json``: the interrupted command still prints its JSON object."""


class _Signalled(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP during a run: it unwinds as Ctrl-C always did."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def say_interrupted(signum: int = _SIGINT) -> None:
    """One line on stderr (``interrupted``), once; with ``--json`` the JSON object first.

    Written to the descriptors: no lock to wait for, also from a signal handler.
    """
    if not interrupt_said.is_set():
        interrupt_said.set()
        import signal  # noqa: PLC0415

        name = signal.Signals(signum).name
        line = _SIGNAL_LINES.get(name, f"stopped ({name})")
        with contextlib.suppress(OSError):
            if interrupt_json.is_set():
                os.write(1, (json_error_text(line) + "\n").encode())
            os.write(2, f"{line}\n".encode())


def _exit_interrupted(signum: int) -> NoReturn:
    """End the process now with ``128 + signum``, whatever its threads are doing."""
    say_interrupted(signum)
    os._exit(_EXIT_SIGNALLED + signum)


def run_interruptible(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, where Ctrl-C, SIGTERM and SIGHUP always end the process promptly.

    The first signal cancels the run's task (a sync tool's worker thread is abandoned, the
    model request closed, the stdio MCP servers of calls in flight stopped) and
    :class:`_Signalled` (a ``KeyboardInterrupt``) is raised here. Should the run not have
    unwound ``_INTERRUPT_GRACE_S`` later (a tool holding the event loop, an executor thread
    that never joins), the process ends with ``128 + signum`` anyway; a second signal ends
    it at once, also while the interpreter exits. Off the main thread (no signals there)
    this is ``asyncio.run``.
    """
    import asyncio  # noqa: PLC0415 - asyncio alone costs ~0.1 s of `--help`
    import signal  # noqa: PLC0415

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(coro)
    unwound = threading.Event()
    received: list[int] = []  # the signals, in order: the first sets the exit status
    task: asyncio.Task[T] | None = None
    loop: asyncio.AbstractEventLoop | None = None

    def exit_unless_unwound() -> None:
        if not unwound.wait(_INTERRUPT_GRACE_S):
            _exit_interrupted(received[0])

    def on_signal(signum: int, frame: object) -> None:
        received.append(signum)
        if len(received) > 1:
            _exit_interrupted(received[0])
        threading.Thread(target=exit_unless_unwound, name="leanloop-interrupt", daemon=True).start()
        if task is None or loop is None or task.done():
            raise _Signalled(signum)
        loop.call_soon_threadsafe(task.cancel)

    async def main() -> T:
        nonlocal task
        task = cast("asyncio.Task[T]", asyncio.current_task())
        return await coro

    # SIGTERM and SIGHUP unwind the run as Ctrl-C does: their default action would end the
    # process at once, and a stdio MCP server in the middle of a call (in a session of its
    # own, so no signal reaches it) would keep running, orphaned. One ignored when the run
    # starts (nohup) stays ignored.
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, on_signal)}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)  # no SIGHUP on Windows
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            previous[number] = signal.signal(number, on_signal)
    try:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            try:
                return runner.run(main())
            except asyncio.CancelledError:
                if received:
                    raise _Signalled(received[0]) from None
                raise
    finally:
        unwound.set()
        if not received:  # after a signal, a second one still ends the process at once
            for number, handler in previous.items():
                signal.signal(number, signal.SIG_DFL if handler is None else handler)


def json_error_text(message: str) -> str:
    return json.dumps({"answer": None, "stop_reason": "failed", "error": message}, indent=2)


def signalled_exit(exc: KeyboardInterrupt) -> int:
    """Say how a signal ended the command and return its exit status (``128 + signum``)."""
    signum = exc.signum if isinstance(exc, _Signalled) else _SIGINT
    say_interrupted(signum)
    return _EXIT_SIGNALLED + signum
