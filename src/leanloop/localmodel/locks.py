"""Exclusive ``flock`` locks on files of the cache: the primitives and the setup lock.

Two locks guard the cache. ``run/<port>.lock`` is held while a server on the port is
started or stopped (:func:`leanloop.localmodel.pidfile.port_lock`, which waits a few
seconds at most); ``setup.lock`` is held for the whole of ``leanloop local setup``
(:func:`setup_lock`), so two setups never fetch, assemble or build into one cache at
once. A second setup *waits* for the first rather than failing: what it would do is
what the first is doing, and once the first is done it finds the engine and the model in
place and reuses them in about a second, so waiting ends where running one after the
other would have (a setup that hangs can be interrupted with Ctrl-C, and the line it
printed names the pid it waits for).

Both take the lock with :func:`try_lock` and give it back with :func:`unlock`. A lock file
is never removed (every process must lock the same file, not one a remover made anew).
Where Python has no ``fcntl`` (Windows) nothing is locked, and a debug line says so.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from leanloop.exceptions import LocalModelError

if sys.platform != "win32":
    import fcntl

__all__ = ["setup_lock", "try_lock", "unlock", "wait_for_setup", "waiting_line"]

logger = logging.getLogger(__name__)

_BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)


def try_lock(fd: int) -> bool:
    """Take the exclusive lock of the open file ``fd`` without waiting.

    Locks belong to an open file, not to a process: two descriptors opened apart (in two
    threads, or two processes) contend for one file's lock.

    Returns:
        ``True`` when it is held now (always, where there is no ``fcntl``), ``False``
        when another open file holds it.

    Raises:
        OSError: The file system cannot lock (some network mounts), or ``fd`` is bad.
    """
    if sys.platform == "win32":  # pragma: no cover - no flock on Windows
        logger.debug("no flock on this platform: the lock of fd %d is not taken", fd)
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in _BUSY:
            raise
        return False
    return True


def unlock(fd: int) -> None:
    """Give back the lock of ``fd`` that :func:`try_lock` or :func:`setup_lock` took."""
    if sys.platform == "win32":  # pragma: no cover - no flock on Windows
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


def waiting_line(pid: int | None) -> str:
    """The line a setup prints while another one (``pid``, when it is known) holds the lock."""
    which = "" if pid is None else f" (pid {pid})"
    return f"another leanloop local setup is running{which}; waiting"


@contextlib.contextmanager
def setup_lock(path: Path, *, waiting: Callable[[str], None]) -> Iterator[None]:
    """Hold the setup lock ``path`` for the ``with`` block, waiting for it without end.

    The holder writes its pid into the file, so that a setup that has to wait names the
    process it waits for; the pid is cleared before the lock is given back.

    Args:
        path: The lock file, ``<cache>/setup.lock`` (created when missing, with its folder).
        waiting: Receives :func:`waiting_line` once, before waiting, when another setup
            holds the lock (the CLI prints it on stderr).

    Raises:
        LocalModelError: The lock file cannot be created or opened (the cache folder is
            not writable).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        msg = f"cannot open the setup lock {path} ({exc.strerror or exc})"
        raise LocalModelError(msg) from None
    try:
        held = _take(fd, path, waiting)
        try:
            if held:
                _write_pid(fd)
            yield
        finally:
            if held:
                os.ftruncate(fd, 0)  # a later waiter never names this finished process
                unlock(fd)
    finally:
        os.close(fd)


def wait_for_setup(path: Path, *, waiting: Callable[[str], None]) -> None:
    """Return once no setup holds ``path``, saying once whom it waits for.

    A shared lock, taken and given back at once: starts never wait for each other (they
    have the port's lock for that), only for a setup, which holds the lock exclusively.
    Nothing is created: without the lock file no setup ever ran or runs.
    """
    if sys.platform == "win32":  # pragma: no cover - no flock on Windows
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in _BUSY:
                return  # a file system without locks: nothing to wait for
            waiting(waiting_line(_read_pid(fd)))
            fcntl.flock(fd, fcntl.LOCK_SH)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _take(fd: int, path: Path, waiting: Callable[[str], None]) -> bool:
    """Lock ``fd``, waiting after one ``waiting`` line when it is held; ``False``: no lock."""
    if sys.platform == "win32":  # pragma: no cover - no flock on Windows
        logger.debug("no flock on this platform: %s is not locked; run one setup at a time", path)
        return False
    try:
        if try_lock(fd):
            return True
        waiting(waiting_line(_read_pid(fd)))
        # Blocks until the holder gives the lock back or exits (the kernel releases it);
        # Ctrl-C interrupts the wait (PEP 475: the signal's exception is raised).
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as exc:  # a file system without locks: set up as before there were any
        logger.warning(
            "cannot lock %s (%s); a second leanloop local setup would not wait for this one",
            path,
            exc.strerror or exc,
        )
        return False
    return True


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)


def _read_pid(fd: int) -> int | None:
    """The pid the holder wrote, or ``None`` (not written yet, or not a pid)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
        pid = int(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return pid if pid > 0 else None
