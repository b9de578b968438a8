"""The results file of a batch: one JSON line per finished task, appended, made durable.

Only the process that runs the batch (the driver, with Ray too) writes the file, one line
per finished task, in one ``write`` on a descriptor opened ``O_APPEND``, then ``fsync``:
once :meth:`ResultsFile.write` returns, a crash of the process or the machine keeps the
line. A crash *during* the write can leave a torn last line (no newline at its end); the
next run drops it (the task was not finished: it runs again) before appending.

Opening an existing file reads the ids it holds: the batch skips those tasks, so running a
batch again after a crash finishes it without running a task twice or writing an id twice.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from leanloop.batch.tasks import TaskId
from leanloop.exceptions import InvalidArgument, SpecError, SpecIssue

__all__ = ["ResultsFile"]

_log = logging.getLogger(__name__)


class ResultsFile:
    """The results file, open for appending; ``records`` holds the lines it has, by id.

    Use :meth:`open`; close it with :meth:`close` (or as a context manager).
    """

    def __init__(self, path: Path, fd: int, records: dict[TaskId, dict[str, Any]]) -> None:
        """Wrap an open descriptor; :meth:`open` is the way to make one."""
        self.path = path
        self._fd = fd
        self.records = records
        """Every result the file holds, by task id: those read at open, then those written."""

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ResultsFile:
        """Open ``path`` for appending (created with its folders when missing).

        A torn last line (a crash mid-write) is cut off first; every other line must be a
        result line (a JSON object with an ``id``).

        Raises:
            SpecError: A line of the file is not a result (located ``file:line``), two lines
                have one id, or the file cannot be read or written.
        """
        file = Path(path)
        source = os.fspath(path)
        try:
            if file.is_dir():
                raise SpecError([SpecIssue(source, None, None, "", "is a folder, not a file")])
            data = file.read_bytes() if file.exists() else b""
            records = _parse(data, source)
            torn = data.rfind(b"\n") + 1 if data and not data.endswith(b"\n") else None
            created = not file.exists()
            file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise SpecError([SpecIssue(source, None, None, "", str(exc.strerror or exc))]) from None
        if torn is not None:
            _log.warning(
                "%s: dropped a torn last line (a crash mid-write); its task runs again", source
            )
            os.ftruncate(fd, torn)
            os.fsync(fd)
        if created:
            _fsync_folder(file.parent)  # the new name must survive a crash too, not only its data
        return cls(file, fd, records)

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` (a result with an ``id``) as one line, and make it durable.

        Raises:
            InvalidArgument: The file already holds a result for this id (a bug of the caller:
                the runners never run a task twice).
        """
        task_id = record["id"]
        if task_id in self.records:
            msg = f"the results file already holds task {task_id!r}"
            raise InvalidArgument(msg)
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        data = line.encode("utf-8")
        # One write of the whole line: O_APPEND puts it at the end in one piece, so no
        # other line is ever split by it; a short write (disk full) is finished in a loop.
        while data:
            written = os.write(self._fd, data)
            data = data[written:]
        os.fsync(self._fd)
        self.records[task_id] = record

    def close(self) -> None:
        """Close the file (every written line is already on disk)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
        task_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(task_id, bool) or not isinstance(task_id, str | int):
            issues.append(SpecIssue(source, number, None, "id", "not a result line (no task id)"))
        elif task_id in records:
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
