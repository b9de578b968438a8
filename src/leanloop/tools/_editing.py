"""The plain, synchronous bodies of the edit tools, and the rules every edit follows.

Each body takes the run's :class:`~._journal.WorkspaceRun` and the model's arguments,
and returns an :class:`Edited`: the text the model sees (a one-line summary and the
diff, capped at :data:`MODEL_DIFF_CHARS`) and the journal entries it made, whose whole
diffs the tool sends as events. A problem the model can fix raises
:class:`~._paths.PathRefused` (a ``ToolException``) with a one-line instruction.

The rules, in the order they are checked:

- the path stays inside the workspace (:func:`~._paths.resolve_inside`: no ``..``, no
  absolute path outside, no link that leads outside), names a file, and is not inside a
  version-control folder;
- the file is UTF-8 text, at most :data:`~._textfile.MAX_EDIT_BYTES` (binary refused);
- an existing file was read in this run and has not changed on disk since
  (:meth:`~._journal.WorkspaceRun.check_fresh`); a new file needs no read;
- the change is computed whole before anything is written; an ``apply_patch`` writes
  every file or, when one write fails, puts back those already written.

The caller holds the run's lock around a body, so check and write are one step.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from leanloop.textcap import cut_to_line
from leanloop.tools._journal import FileStamp, JournalEntry, WorkspaceRun
from leanloop.tools._patch import FilePatch, apply_hunks, parse_patch
from leanloop.tools._pathhelp import PathHelp, missing_path
from leanloop.tools._paths import PathRefused, display_path, resolve_inside
from leanloop.tools._textfile import (
    TextDoc,
    line_of,
    load_text,
    model_text,
    refuse_special,
    remove_inside,
    sha256_of,
    split_lines,
    write_inside,
)

__all__ = ["MODEL_DIFF_CHARS", "Edited", "Editor"]

MODEL_DIFF_CHARS = 4_000
"""The most characters of a diff the model sees; the run's events carry the whole diff."""
_NOTE_ROOM = 160
_MAX_PLACES = 8
"""``str_replace`` lists at most this many lines where its text occurs."""


@dataclass(slots=True)
class Edited:
    """What one edit call did."""

    text: str
    """What the model sees: a summary line, then the diff (capped)."""
    entries: list[JournalEntry] = field(default_factory=list)
    """The journal entries it made, one per file changed."""


@dataclass(slots=True)
class _Change:
    real: Path
    shown: str
    before: bytes | None
    after: bytes | None


def _lines(count: int) -> str:
    return f"{count:,} line{'' if count == 1 else 's'}"


class Editor:
    """The edit bodies for one workspace folder."""

    def __init__(self, base: Path, *, dry: bool = False) -> None:
        """Edit inside ``base``, the resolved workspace root.

        With ``dry``, every check is made and the change computed, but nothing is written
        or journaled: the body's text is the whole diff the edit would make (the preview
        a person approves, ADR 0037).
        """
        self.base = base
        self.dry = dry

    # ---- the tools -------------------------------------------------------------------

    def write_file(self, state: WorkspaceRun, path: str, content: str) -> Edited:
        """Create ``path`` with ``content``, or replace the whole of a file read before."""
        real, shown = self._target(path)
        loaded = load_text(self.base, real)
        text = model_text(content)
        if loaded is None:
            after = TextDoc(split_lines(text))
            summary = f"created {shown} ({_lines(len(after.lines))})"
            return self._commit(
                state, "write_file", summary, [_Change(real, shown, None, after.encode())]
            )
        data, doc = loaded
        state.check_fresh(real, shown, data)
        # The whole text is new: it gets the file's line endings and byte-order mark.
        after = TextDoc(split_lines(text.replace("\n", doc.newline)), doc.newline, doc.bom)
        counts = f"{_lines(len(doc.lines))} before, {len(after.lines):,} now"
        summary = f"replaced the whole of {shown} ({counts})"
        return self._commit(
            state, "write_file", summary, [_Change(real, shown, data, after.encode())]
        )

    def replace_lines(
        self, state: WorkspaceRun, path: str, start: int, end: int, new_text: str
    ) -> Edited:
        """Replace lines ``start``-``end`` (1-based, inclusive) with ``new_text``."""
        real, shown, data, doc = self._existing(state, path)
        total = len(doc.lines)
        if total == 0:
            msg = f"{shown} is empty; use insert_at_line(line=1) or write_file to give it text"
            raise PathRefused(msg)
        if start < 1:
            msg = "start must be 1 or more: lines count from 1, as read_file shows them"
            raise PathRefused(msg)
        if end < start:
            msg = (
                f"end ({end}) is before start ({start}); to add lines without replacing any, "
                "use insert_at_line"
            )
            raise PathRefused(msg)
        if end > total:
            msg = (
                f"{shown} has {_lines(total)}, so lines {start}-{end} are not all in it; "
                f"read_file {shown} for the numbers"
            )
            raise PathRefused(msg)
        new = doc.new_lines(new_text)
        after = doc.spliced(start - 1, end, new)
        span = f"line {start}" if start == end else f"lines {start}-{end}"
        what = f"deleted {span}" if not new else f"replaced {span} with {_lines(len(new))}"
        summary = f"{what} of {shown}; it has {_lines(len(after.lines))} now"
        return self._commit(
            state, "replace_lines", summary, [_Change(real, shown, data, after.encode())]
        )

    def insert_at_line(self, state: WorkspaceRun, path: str, line: int, text: str) -> Edited:
        """Insert ``text`` before line ``line`` (the line count + 1 appends)."""
        real, shown, data, doc = self._existing(state, path)
        total = len(doc.lines)
        if not text:
            msg = "text is empty; nothing to insert"
            raise PathRefused(msg)
        if not 1 <= line <= total + 1:
            msg = (
                f"line must be 1 to {total + 1} for {shown} ({_lines(total)}; {total + 1} "
                "appends at the end), as read_file numbers them"
            )
            raise PathRefused(msg)
        new = doc.new_lines(text)
        after = doc.spliced(line - 1, line - 1, new)
        where = "at the end" if line == total + 1 else f"before line {line}"
        summary = (
            f"inserted {_lines(len(new))} {where} of {shown}; it has {_lines(len(after.lines))} now"
        )
        return self._commit(
            state, "insert_at_line", summary, [_Change(real, shown, data, after.encode())]
        )

    def str_replace(self, state: WorkspaceRun, path: str, old: str, new: str) -> Edited:
        """Replace the one occurrence of ``old`` with ``new``."""
        if not old:
            msg = "old is empty; give the exact text to replace (insert_at_line adds text)"
            raise PathRefused(msg)
        real, shown, data, doc = self._existing(state, path)
        text, want, put = doc.normalized(), model_text(old), model_text(new)
        if want == put:
            msg = "old and new are the same; nothing to change"
            raise PathRefused(msg)
        count, places = _places(text, want)
        if not count:
            raise PathRefused(_not_found(doc, want, shown))
        if count > 1:
            listed = ", ".join(map(str, places))
            more = ", …" if count > len(places) else ""
            msg = (
                f"old occurs {count} times in {shown} (at lines {listed}{more}); include more "
                "of the lines around it so that it occurs once"
            )
            raise PathRefused(msg)
        after = doc.with_normalized(text.replace(want, put, 1))
        summary = f"replaced the text at line {places[0]} of {shown}"
        return self._commit(
            state, "str_replace", summary, [_Change(real, shown, data, after.encode())]
        )

    def apply_patch(self, state: WorkspaceRun, patch: str) -> Edited:
        """Apply a unified diff to one file or several: all of it, or nothing."""
        files = parse_patch(patch)
        changes: list[_Change] = []
        for patched in files:
            change = self._patched(state, patched)
            if any(done.real == change.real for done in changes):
                msg = (
                    f"the patch changes {change.shown} in two places; put all its hunks under "
                    "one header"
                )
                raise PathRefused(msg)
            changes.append(change)
        parts = []
        for change in changes:
            if change.before is None:
                parts.append(f"created {change.shown}")
            elif change.after is None:
                parts.append(f"deleted {change.shown}")
            else:
                parts.append(change.shown)
        noun = "file" if len(changes) == 1 else "files"
        summary = f"patched {len(changes)} {noun}: {', '.join(parts)}"
        return self._commit(state, "apply_patch", summary, changes)

    def undo_edit(self, state: WorkspaceRun, path: str) -> Edited:
        """Put back the file as it was before this run's last edit of it."""
        real, shown = self._target(path)
        entry = state.last_undoable(real)
        if entry is None:
            msg = f"this run has made no edit of {shown} that undo_edit can revert"
            raise PathRefused(msg)
        loaded = load_text(self.base, real)
        current = loaded[0] if loaded is not None else None
        now = sha256_of(current) if current is not None else None
        if now != entry.after_sha256:
            msg = (
                f"{shown} changed after the {entry.tool} edit that undo_edit would revert, so "
                f"undoing it would lose that change; read_file {shown} and edit it instead"
            )
            raise PathRefused(msg)
        if entry.before is None:
            summary = (
                f"undid the {entry.tool} edit of {shown}: it created the file, so it is deleted"
            )
        else:
            summary = f"undid the {entry.tool} edit of {shown}"
        edited = self._commit(
            state, "undo_edit", summary, [_Change(real, shown, current, entry.before)]
        )
        entry.undone = True
        for made in edited.entries:
            made.undoes = entry.number
        return edited

    # ---- the rules -------------------------------------------------------------------

    def _target(self, path: str) -> tuple[Path, str]:
        try:
            real = resolve_inside(self.base, path)
        except PathRefused as exc:
            if Path(path.strip()).is_absolute():
                msg = f"{exc}; use a path relative to the workspace root"
                raise PathRefused(msg) from None
            raise
        refuse_special(self.base, real)
        return real, display_path(self.base, real)

    def _existing(self, state: WorkspaceRun, path: str) -> tuple[Path, str, bytes, TextDoc]:
        real, shown = self._target(path)
        loaded = load_text(self.base, real)
        if loaded is None:
            try:
                missing_path(self.base, path, want="file", verb="edited", path_help=PathHelp())
            except PathRefused as exc:
                msg = f"{exc}; write_file creates a new file"
                raise PathRefused(msg) from None
            msg = f"no such file: {path}"  # missing_path always raises without repair
            raise PathRefused(msg)
        data, doc = loaded
        state.check_fresh(real, shown, data)
        return real, shown, data, doc

    def _patched(self, state: WorkspaceRun, patched: FilePatch) -> _Change:
        """The change ``patched`` makes to its file, computed, not written."""
        if patched.old_path is not None and patched.new_path is not None:
            old, _ = self._target(patched.old_path)
            new, shown = self._target(patched.new_path)
            if old != new:
                msg = (
                    f"the patch renames {patched.old_path} to {patched.new_path}; renames are "
                    "not supported: create the new file and delete the old one"
                )
                raise PathRefused(msg)
        real, shown = self._target(patched.path)
        loaded = load_text(self.base, real)
        if patched.old_path is None:
            if loaded is not None:
                msg = (
                    f"the patch creates {shown}, which exists; read_file it and patch it "
                    f"(--- a/{shown}) instead"
                )
                raise PathRefused(msg)
            lines = apply_hunks([], patched.hunks, newline="\n", shown=shown)
            return _Change(real, shown, None, TextDoc(lines).encode())
        if loaded is None:
            msg = f"the patch changes {shown}, which does not exist; --- /dev/null creates a file"
            raise PathRefused(msg)
        data, doc = loaded
        state.check_fresh(real, shown, data)
        lines = apply_hunks(doc.lines, patched.hunks, newline=doc.newline, shown=shown)
        if patched.new_path is None:
            if lines:
                msg = (
                    f"the patch deletes {shown} but leaves {_lines(len(lines))} of it; its hunk "
                    "must remove every line"
                )
                raise PathRefused(msg)
            return _Change(real, shown, data, None)
        return _Change(real, shown, data, TextDoc(lines, doc.newline, doc.bom).encode())

    def _commit(
        self, state: WorkspaceRun, tool: str, summary: str, changes: Sequence[_Change]
    ) -> Edited:
        """Write every change (or none), journal them, and say what was done."""
        if all(change.before == change.after for change in changes):
            names = ", ".join(change.shown for change in changes)
            return Edited(f"nothing changed: {names} already had that text")
        if self.dry:
            return Edited("\n".join(unified_diff(c.shown, c.before, c.after) for c in changes))
        done: list[_Change] = []
        for change in changes:
            try:
                self._write(change.real, change.after)
            except OSError as exc:
                for written in reversed(done):  # all or nothing
                    with contextlib.suppress(OSError):
                        self._write(written.real, written.before)
                reason = exc.strerror or str(exc)
                msg = f"cannot write {change.shown} ({reason}); nothing was changed"
                raise PathRefused(msg) from exc
            done.append(change)
        entries: list[JournalEntry] = []
        diffs: list[str] = []
        for change in changes:
            diff = unified_diff(change.shown, change.before, change.after)
            diffs.append(diff)
            entries.append(
                state.record(
                    JournalEntry(
                        tool,
                        change.shown,
                        change.real,
                        change.before,
                        sha256_of(change.before) if change.before is not None else None,
                        sha256_of(change.after) if change.after is not None else None,
                        diff,
                    )
                )
            )
            self._seen(state, change)
        return Edited(_for_model(summary, "\n".join(diffs)), entries)

    def _write(self, real: Path, data: bytes | None) -> None:
        if data is None:
            remove_inside(self.base, real)
        else:
            write_inside(self.base, real, data)

    @staticmethod
    def _seen(state: WorkspaceRun, change: _Change) -> None:
        """The run has the file as the edit left it in view: the next edit needs no read."""
        if change.after is None:
            state.forget(change.real)
            return
        state.saw(change.real, FileStamp.of(change.after))


def unified_diff(shown: str, before: bytes | None, after: bytes | None) -> str:
    """The unified diff of a file from ``before`` to ``after`` (``None``: no file)."""
    old = _diff_lines(before)
    new = _diff_lines(after)
    source = f"a/{shown}" if before is not None else "/dev/null"
    target = f"b/{shown}" if after is not None else "/dev/null"
    return "\n".join(difflib.unified_diff(old, new, source, target, lineterm=""))


def _diff_lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    return [line.removesuffix("\n").removesuffix("\r") for line in split_lines(text)]


def _for_model(summary: str, diff: str) -> str:
    """The summary and the diff, cut to :data:`MODEL_DIFF_CHARS` with a note when longer."""
    if len(diff) <= MODEL_DIFF_CHARS:
        return f"{summary}\n{diff}" if diff else summary
    kept = cut_to_line(diff, MODEL_DIFF_CHARS - _NOTE_ROOM).rstrip("\n")
    note = (
        f"[diff cut at {len(kept):,} of {len(diff):,} characters; read_file the file "
        "to see the result]"
    )
    return f"{summary}\n{kept}\n{note}"


def _places(text: str, want: str) -> tuple[int, list[int]]:
    """How often ``want`` occurs in ``text``, and the lines of the first few occurrences."""
    count = text.count(want)
    places: list[int] = []
    start = text.find(want)
    while start != -1 and len(places) < min(count, _MAX_PLACES):
        places.append(line_of(text, start))
        start = text.find(want, start + len(want))
    return count, places


def _not_found(doc: TextDoc, want: str, shown: str) -> str:
    """Why ``want`` was not found, with the line where it would match but for spaces."""
    wanted = [" ".join(line.split()) for line in want.split("\n")]
    plain = [" ".join(line.split()) for line in doc.normalized().split("\n")]
    for index in range(len(plain) - len(wanted) + 1):
        if plain[index : index + len(wanted)] == wanted:
            return (
                f"old is not in {shown} as written, but matches line {index + 1} if spaces "
                f"are ignored; copy the text exactly as read_file {shown} shows it"
            )
    return f"old is not in {shown}; read_file {shown} and copy the text exactly (whitespace too)"
