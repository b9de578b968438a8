"""The results file of a batch: one JSON line per finished task, appended, made durable.

Only the process that runs the batch (the driver, with Ray too) writes the file, one line
per finished task, in one ``write`` on a descriptor opened ``O_APPEND``, then ``fsync``:
once :meth:`ResultsFile.write` returns, a crash of the process or the machine keeps the
line. A crash *during* the write can leave a torn last line (no newline at its end); the
next run drops it (the task was not finished: it runs again) before appending.

Opening an existing file reads the ids it holds: the batch skips those tasks, so running a
batch again after a crash finishes it without running a task twice or writing an id twice.
A task that paused for approval (``stop_reason: "paused"``, ADR 0037) has no result yet:
it runs again, and its new line stands in place of the paused one (the later line of an
id wins only over a paused one; two other lines of one id are refused).

The file is locked (``flock``, exclusive, not waited for) from before it is read until it
is closed: a second batch on the same file would read the same ids, run every task again
and append a second line for each, so it is refused in one line instead, before it reads,
cuts or writes anything. The lock is the kernel's: a batch killed with ``-9`` leaves none.

A result that cannot be written as UTF-8 JSON (an answer holding a lone surrogate) is
written as a failed result of its task with an ``error`` saying why: one task's text never
stops the batch, nor every run of it again. A write the disk refuses (full, over a size
limit) ends the batch with one line; the lines written before it stay, and a run again
resumes.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from leanloop.batch.tasks import TaskId
from leanloop.exceptions import InvalidArgument, LeanloopError, SpecError, SpecIssue

if sys.platform != "win32":
    import fcntl

__all__ = ["BUSY", "ResultsFile", "Write", "is_paused"]

_log = logging.getLogger(__name__)

BUSY = "another `leanloop batch` is writing to it; wait for it to end, or give another --out"
"""Why a results file another batch holds is refused (after ``<file>: ``; exit 2)."""

Write = Callable[[int, bytes], int]
"""``os.write``'s signature: what :class:`ResultsFile` appends with (tests inject a full disk)."""

_KEPT = ("id", "agent", "usage", "seconds", "expected")
"""The keys of a result that cannot be written that its failed stand-in keeps, if it can."""


def is_paused(record: dict[str, Any]) -> bool:
    """Whether ``record`` is of a task that paused for approval: it runs again."""
    return record.get("stop_reason") == "paused"


class ResultsFile:
    """The results file, open for appending and locked; ``records`` holds its lines by id.

    Use :meth:`open`; close it with :meth:`close` (or as a context manager).
    """

    def __init__(
        self, path: Path, fd: int, records: dict[TaskId, dict[str, Any]], *, write: Write
    ) -> None:
        """Wrap an open, locked descriptor; :meth:`open` is the way to make one."""
        self.path = path
        self._fd = fd
        self._write = write
        self._failed: str | None = None
        self.records = records
        """Every result the file holds, by task id: those read at open, then those written."""

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, write: Write = os.write) -> ResultsFile:
        """Open and lock ``path`` for appending (created with its folders when missing).

        A torn last line (a crash mid-write) is cut off first; every other line must be a
        result line (a JSON object with an ``id``).

        Args:
            path: The results file.
            write: Appends bytes to a descriptor (``os.write``; tests inject a full disk).

        Raises:
            SpecError: Another batch holds the file (:data:`BUSY`), a line of the file is
                not a result (located ``file:line``), two lines have one id, or the file
                cannot be read or written, or is no regular file.
        """
        file = Path(path)
        source = os.fspath(path)
        try:
            if file.is_dir():
                raise SpecError([SpecIssue(source, None, None, "", "is a folder, not a file")])
            file.parent.mkdir(parents=True, exist_ok=True)
            created = not file.exists()
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(file, flags, 0o644)
        except OSError as exc:
            raise SpecError([SpecIssue(source, None, None, "", str(exc.strerror or exc))]) from None
        try:
            records = _load(fd, source)
        except BaseException:
            os.close(fd)  # the lock goes with the descriptor
            raise
        if created:
            _fsync_folder(file.parent)  # the new name must survive a crash too, not only its data
        return cls(file, fd, records, write=write)

    def write(self, record: dict[str, Any]) -> dict[str, Any]:
        """Append ``record`` (a result with an ``id``) as one line, and make it durable.

        A record that cannot be written as UTF-8 JSON is replaced by a failed result of its
        task that says why (:func:`_encoded`): the batch goes on.

        Returns:
            The record written (``record``, or its failed stand-in).

        Raises:
            InvalidArgument: The file already holds a result for this id, other than a
                paused one (a bug of the caller: the runners never run a task twice).
            LeanloopError: The line could not be written (a full disk): one line naming the
                file and the reason; this write and every later one fail.
        """
        task_id = record["id"]
        if task_id in self.records and not is_paused(self.records[task_id]):
            msg = f"the results file already holds task {task_id!r}"
            raise InvalidArgument(msg)
        if self._failed is not None:
            # After a short write the file may end in a torn line: nothing goes after it.
            raise LeanloopError(self._failed)
        written_record, data = _encoded(record)
        try:
            # One write of the whole line: O_APPEND puts it at the end in one piece, so no
            # other line is ever split by it; a short write is finished in a loop.
            while data:
                done = self._write(self._fd, data)
                data = data[done:]
            os.fsync(self._fd)
        except OSError as exc:
            self._failed = (
                f"cannot write {self.path}: {exc.strerror or exc}; rerun to resume"
                " (the results written before it are kept)"
            )
            raise LeanloopError(self._failed) from None
        self.records[task_id] = written_record
        return written_record

    def close(self) -> None:
        """Close the file, which releases its lock (every written line is already on disk)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _load(fd: int, source: str) -> dict[TaskId, dict[str, Any]]:
    """Lock the open results file ``fd``, read its records and cut a torn last line.

    Raises:
        SpecError: Another batch holds it, it is no regular file, or it is not results.
    """
    if not _lock(fd, source):
        raise SpecError([SpecIssue(source, None, None, "", BUSY)])
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            # A FIFO or a device (/dev/full) can be neither resumed nor cut: refuse it.
            raise SpecError([SpecIssue(source, None, None, "", "is not a regular file")])
        data = _read_all(fd)
    except OSError as exc:
        raise SpecError([SpecIssue(source, None, None, "", str(exc.strerror or exc))]) from None
    records = _parse(data, source)
    if data and not data.endswith(b"\n"):
        _log.warning(
            "%s: dropped a torn last line (a crash mid-write); its task runs again", source
        )
        os.ftruncate(fd, data.rfind(b"\n") + 1)
        os.fsync(fd)
    return records


def _lock(fd: int, source: str) -> bool:
    """Take the exclusive lock of ``fd`` without waiting; ``False``: another holds it."""
    if sys.platform == "win32":  # no flock; a batch there is trusted to run alone
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        # A file system without locks (some network mounts): the batch runs, as before
        # there were locks, and says what it cannot guard against.
        _log.warning(
            "%s: cannot be locked (%s); a second batch on it would run every task again",
            source,
            exc.strerror or exc,
        )
    return True


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _encoded(record: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """``record`` and its line as UTF-8 bytes, or its failed stand-in and that line.

    A result whose text is not UTF-8 (a lone surrogate in the model's answer) or that JSON
    cannot hold would otherwise stop the batch at every run, at the same task. The stand-in
    is written with ASCII escapes, which any id can be written with.
    """
    try:
        text = json.dumps(record, ensure_ascii=False, default=str)
        return record, (text + "\n").encode("utf-8")
    except Exception as exc:  # whatever a result holds, its task fails alone
        stand_in = _stand_in(record, exc)
    return stand_in, (json.dumps(stand_in, ensure_ascii=True) + "\n").encode("ascii")


def _stand_in(record: dict[str, Any], exc: Exception) -> dict[str, Any]:
    """The failed result written for ``record``, which cannot be written: ``error`` says why."""
    bad = [key for key, value in record.items() if not _writable(value)]
    where = ", ".join(bad) if bad else "the result"
    why = f"{type(exc).__name__}: {exc}"
    kept = {key: record[key] for key in _KEPT if key in record and _writable(record[key])}
    stand_in: dict[str, Any] = {
        "id": kept.pop("id", record["id"]),
        "agent": kept.pop("agent", None),
        "answer": None,
        "stop_reason": "failed",
        **kept,
    }
    if "expected" in stand_in:
        stand_in["correct"] = False
    stand_in["error"] = f"the result could not be written as UTF-8 JSON ({where}: {why})"
    stand_in["report"] = {}
    return stand_in


def _writable(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except Exception:  # the same test as the line's
        return False
    return True


def _parse(data: bytes, source: str) -> dict[TaskId, dict[str, Any]]:
    """The results ``data`` holds by id; a torn last line (no newline) is left out."""
    records: dict[TaskId, dict[str, Any]] = {}
    first_line: dict[TaskId, int] = {}
    issues: list[SpecIssue] = []
    lines = data.split(b"\n")
    complete = lines[:-1]  # the last piece is b"" or a torn line, never a whole line
    for number, raw in enumerate(complete, start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw.decode("utf-8"))
        except ValueError as exc:
            issues.append(SpecIssue(source, number, None, "", f"not a result line ({exc})"))
            continue
        except RecursionError:
            why = "not a result line (nested too deeply)"
            issues.append(SpecIssue(source, number, None, "", why))
            continue
        task_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(task_id, bool) or not isinstance(task_id, str | int):
            issues.append(SpecIssue(source, number, None, "id", "not a result line (no task id)"))
        elif task_id in records and not is_paused(records[task_id]):
            issues.append(
                SpecIssue(
                    source,
                    number,
                    None,
                    "id",
                    f"{task_id!r} is also the id of line {first_line[task_id]}",
                )
            )
        else:
            records[task_id] = item
            first_line[task_id] = number
    if issues:
        raise SpecError(issues)
    return records


def _fsync_folder(folder: Path) -> None:
    """``fsync`` a folder, where the platform allows it (not on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
