"""How the ``leanloop`` command ends when its stdout fails: a reader that left, or none.

``leanloop run … | head -c5``: ``head`` reads five bytes and exits, and the next write
gets ``EPIPE`` (Python ignores SIGPIPE, so it is an exception, not a signal). The reader
chose to stop reading: the command ends quietly, with :data:`EXIT_READER_LEFT`, and no
traceback. ``leanloop run … >&-`` starts with no stdout at all: an answer that cannot be
written is a failed run, one ``error:`` line and exit 1, as ``echo hi >&-`` fails in a
shell. Both hold for a cold run and a warm one alike: the runner's child calls
:func:`run_as_command` as the caller's own process does.

Only the real command line goes through here: a program calling ``leanloop.cli.main``
keeps its own stdout and sees the exception.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys
from collections.abc import Callable, Sequence

__all__ = ["EXIT_NO_STDOUT", "EXIT_READER_LEFT", "run_as_command"]

EXIT_READER_LEFT = 141
"""The status when stdout's reader left (``| head``): 128 + SIGPIPE, what a command that
SIGPIPE ends reports (``yes | head`` in a shell), so ``set -o pipefail`` reads it as the
reader having stopped, not as a failed run (1)."""
EXIT_NO_STDOUT = 1
"""The status when the command was started without a stdout and had something to write."""


def run_as_command(main: Callable[[Sequence[str]], int], words: Sequence[str]) -> int:
    """``main(words)`` as the ``leanloop`` command: stdout's own failures become a status.

    A broken pipe on stdout or stderr (the reader left) is :data:`EXIT_READER_LEFT`, and
    the stream is sent to the null device so that nothing later (the interpreter's last
    flush) complains. Writing to a stdout that was closed when the command started is
    one line on stderr and :data:`EXIT_NO_STDOUT`. Other errors go on as they were.
    """
    closed = sys.stdout is None and _hold_closed_stdout()
    try:
        code = main(words)
        # Flushed here, not by the interpreter at exit: its failure there is only a warning
        # ("Exception ignored …") and the status a surprising 120.
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        left = _readers_left()
        if not left:  # some other pipe (a tool's, an MCP server's): not ours to hide
            raise
        for fd in left:
            _to_null(fd)
        return EXIT_READER_LEFT
    except OSError as exc:
        if not (closed and exc.errno == errno.EBADF):
            raise
        print("error: cannot write to stdout: it is closed", file=sys.stderr)
        _to_null(1)  # what is still buffered goes nowhere, without a last complaint at exit
        return EXIT_NO_STDOUT
    return code


def _hold_closed_stdout() -> bool:
    """Give descriptor 1 a stand-in that refuses writes, as a closed one does; ``True`` then.

    Python starts with ``sys.stdout = None`` when descriptor 1 is closed, and ``print``
    then drops text silently. The stand-in (the null device, opened read-only) makes a
    write fail with ``EBADF`` as at the shell, and keeps the number 1 taken: a file or
    socket opened later would otherwise become stdout, for this process and for every tool
    it starts.
    """
    try:
        os.fstat(1)
    except OSError:
        pass
    else:  # something else holds descriptor 1 by now: leave it alone
        return False
    fd = os.open(os.devnull, os.O_RDONLY)
    if fd != 1:  # descriptor 0 was closed too and took it; 1 is still free
        os.dup2(fd, 1)
        os.close(fd)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's
    return True


def _readers_left() -> list[int]:
    """Stdout and stderr descriptors whose reader is gone (a pipe or socket with no reader)."""
    poller = select.poll()
    for fd in (1, 2):
        poller.register(fd, select.POLLOUT)
    gone = select.POLLERR | select.POLLHUP
    return sorted(fd for fd, events in poller.poll(0) if events & gone)


def _to_null(fd: int) -> None:
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
