"""What one run knows of its workspace files: what it read, and what it changed.

The edit tools refuse to change a file the run has not read, or one that changed on
disk since it was read: the model would otherwise edit from memory, a guess, or
overwrite what a person (or a command) wrote meanwhile. So ``read_file`` records each
file it shows (its SHA-256 and size: a :class:`FileStamp`) in the
run's :class:`WorkspaceRun`, each edit checks the file against it and records the new
stamp, and every edit goes to the run's journal (:class:`JournalEntry`: what changed,
the hashes before and after, the whole diff), which ``undo_edit`` walks back.

The state belongs to one run. The registry makes one per run (an agent's run builds a
fresh :class:`~leanloop.tools.registry.ToolRegistry`) and hands it to each call in the
call's :class:`~leanloop.tools._notes.CallContext`; a resumed run is a new run, so it
starts from nothing and trusts the disk, not what an earlier process remembered
(:meth:`WorkspaceRun.reset` does the same for a run that goes on). Tools called outside
a registry (``tool.invoke`` in a script) share the state their tool set was built with.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from leanloop.tools._notes import call_context
from leanloop.tools._paths import PathRefused, open_inside
from leanloop.tools._textfile import MAX_EDIT_BYTES, sha256_of

__all__ = ["FileStamp", "JournalEntry", "WorkspaceRun", "run_state"]

_ENTRIES: Iterator[int] = itertools.count(1)


@dataclass(frozen=True, slots=True)
class FileStamp:
    """A file as the run last saw it."""

    sha256: str
    size: int

    @classmethod
    def of(cls, data: bytes) -> FileStamp:
        """The stamp of a file whose bytes are ``data``."""
        return cls(sha256_of(data), len(data))


@dataclass(slots=True)
class JournalEntry:
    """One change to one file, as an edit tool made it."""

    tool: str
    """The tool that made it (``str_replace``, ``apply_patch``, ``undo_edit`` …)."""
    path: str
    """The file, relative to the workspace root."""
    real: Path = field(repr=False)
    before: bytes | None = field(repr=False)
    """The bytes before (``None``: the edit created the file), kept for ``undo_edit``."""
    before_sha256: str | None
    after_sha256: str | None
    """``None``: the edit deleted the file."""
    diff: str
    """The whole unified diff (the model saw it capped)."""
    number: int = field(default_factory=lambda: next(_ENTRIES))
    undone: bool = False
    """``undo_edit`` reverted it."""
    undoes: int | None = None
    """For an ``undo_edit`` entry: the :attr:`number` of the entry it reverted."""

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON-ready data (the bytes before are left out)."""
        return {
            "number": self.number,
            "tool": self.tool,
            "path": self.path,
            "before_sha256": self.before_sha256,
            "after_sha256": self.after_sha256,
            "diff": self.diff,
            "undone": self.undone,
            "undoes": self.undoes,
        }


class WorkspaceRun:
    """The files one run has read, and the journal of its edits.

    Thread-safe: the edit tools run in worker threads, several calls of one reply at
    once; :attr:`lock` is held from an edit's check to its write, so two edits of one
    run never interleave.
    """

    def __init__(self) -> None:
        self._reads: dict[Path, FileStamp] = {}
        self.journal: list[JournalEntry] = []
        """Every change, in order (an undo is an entry too)."""
        self.lock = threading.RLock()
        """Held by an edit from its checks to its journal entry."""

    def saw(self, real: Path, stamp: FileStamp) -> None:
        """Record that the run has ``real`` as ``stamp`` in view (read it, or wrote it)."""
        with self.lock:
            self._reads[real] = stamp

    def forget(self, real: Path) -> None:
        """Forget ``real`` (it was deleted)."""
        with self.lock:
            self._reads.pop(real, None)

    def stamp(self, real: Path) -> FileStamp | None:
        """How the run last saw ``real``; ``None`` when it has not read it."""
        with self.lock:
            return self._reads.get(real)

    def seen(self) -> dict[str, dict[str, Any]]:
        """Every file the run has in view, as JSON-ready stamps by real path (a paused run
        stores them with its reply)."""
        with self.lock:
            return {
                str(real): {"sha256": s.sha256, "size": s.size} for real, s in self._reads.items()
            }

    def trust(self, seen: Mapping[str, Mapping[str, Any]]) -> None:
        """Take the stamps a paused run stored (:meth:`seen`) as this run's own reads.

        A run that goes on after a pause did read those files, in the process that paused.
        The edit's own check still compares each stamp with the disk: a file changed since
        the pause is refused as changed, never edited blind.
        """
        for real, stamp in seen.items():
            sha256, size = stamp.get("sha256"), stamp.get("size")
            if isinstance(sha256, str) and isinstance(size, int):
                self.saw(Path(real), FileStamp(sha256, size))

    def saw_file(self, base: Path, real: Path) -> None:
        """Record ``real`` as it is on disk now (``read_file`` just showed it).

        A file too large to edit, or that cannot be read again, is not recorded: an edit
        of it is refused anyway, with the reason.
        """
        try:
            with open(open_inside(base, real), "rb") as handle:
                if os.fstat(handle.fileno()).st_size > MAX_EDIT_BYTES:
                    return
                data = handle.read(MAX_EDIT_BYTES + 1)
        except OSError:
            return
        if len(data) <= MAX_EDIT_BYTES:
            self.saw(real, FileStamp.of(data))

    def check_fresh(self, real: Path, shown: str, current: bytes) -> None:
        """Refuse an edit of ``real`` (now ``current``) that the run has not read as it is.

        Raises:
            PathRefused: ``read_file X first`` or ``X changed on disk since you read it``.
        """
        known = self.stamp(real)
        if known is None:
            msg = (
                f"read_file {shown} first: this run has not read it, and an edit needs the "
                "file as it is now"
            )
            raise PathRefused(msg)
        # The content decides, not the modification time: a same-size change within the
        # file system's time granularity is a change, a touch that changed nothing is not.
        if known.size != len(current) or known.sha256 != sha256_of(current):
            msg = f"{shown} changed on disk since you read it; read it again (read_file {shown})"
            raise PathRefused(msg)

    def record(self, entry: JournalEntry) -> JournalEntry:
        """Add ``entry`` to the journal."""
        with self.lock:
            self.journal.append(entry)
        return entry

    def last_undoable(self, real: Path) -> JournalEntry | None:
        """The latest edit of ``real`` that ``undo_edit`` may revert, if any."""
        with self.lock:
            for entry in reversed(self.journal):
                if entry.real == real and entry.undoes is None and not entry.undone:
                    return entry
        return None

    def reset(self) -> None:
        """Forget what the run has read: every edit then needs a fresh ``read_file``.

        For a run that goes on after a pause: what it read before may have changed
        since. The journal stays, and ``undo_edit`` still works on it: the hash after
        each edit guards an undo, not what the run read.
        """
        with self.lock:
            self._reads.clear()

    def report(self) -> list[dict[str, Any]]:
        """The journal as JSON-ready data, for a run's report."""
        with self.lock:
            return [entry.to_dict() for entry in self.journal]


def run_state(config: RunnableConfig | None, fallback: WorkspaceRun) -> WorkspaceRun:
    """The :class:`WorkspaceRun` of the run a tool call belongs to.

    The registry hands it with the call (:class:`~leanloop.tools._notes.CallContext`);
    a call made outside a registry uses ``fallback``, the state of its tool set.
    """
    context = call_context(config)
    found = context.workspace_run if context is not None else None
    return found if isinstance(found, WorkspaceRun) else fallback
