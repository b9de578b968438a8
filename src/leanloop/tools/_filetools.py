"""The plain, synchronous bodies of the workspace tools: read_file, search, list_files.

Each takes the resolved workspace root and the model's arguments and returns the text
the model sees. Problems the model can fix raise :class:`PathRefused` (a
``ToolException``) with a one-line message; the registry shows it as ``error: ...``.
Caps live here, at the source, so a result is shaped before any global cap cuts it.

``search`` matches with the ``regex`` module (the syntax of ``re``) under a time limit
for the whole call (:data:`SEARCH_SECONDS`): a pattern from the model that backtracks
without end (``(a|aa)+b`` over a long line of ``a``) gives a one-line error instead of a
hang, and matching releases the GIL, so other runs go on while it works. Globs (the
model's too) are matched the same way.

Files are read only through :func:`~._paths.open_inside`, which opens the checked path
from the workspace root's descriptor without following links, so a link swapped in
between the check and the read cannot lead outside (the read fails instead).
"""

from __future__ import annotations

import io
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import regex  # type: ignore[import-untyped,unused-ignore]  # no stubs in the dev set
from langchain_core.tools import ToolException

from leanloop.tools._pathhelp import PathHelp, missing_path
from leanloop.tools._paths import (
    GlobError,
    PathRefused,
    WalkStats,
    compile_glob,
    display_path,
    open_inside,
    resolve_inside,
    walk_files,
)

__all__ = [
    "DEFAULT_READ_LINES",
    "DEFAULT_SEARCH_RESULTS",
    "MAX_LIST_ENTRIES",
    "MAX_READ_LINES",
    "MAX_SEARCH_RESULTS",
    "SEARCH_SECONDS",
    "list_files",
    "read_file",
    "search",
]

DEFAULT_READ_LINES = 200
MAX_READ_LINES = 400
MAX_LINE_CHARS = 2_000
"""read_file cuts longer lines (minified files) so one line cannot fill a window."""
DEFAULT_SEARCH_RESULTS = 80
MAX_SEARCH_RESULTS = 200
SEARCH_LINE_CHARS = 300
MAX_SEARCH_FILE_BYTES = 4 * 1024 * 1024
"""search skips larger files: they are data or build output, rarely worth a match."""
SEARCH_SECONDS = 2.0
"""The most time one search call spends matching and walking: a pattern that takes longer
on a line is refused with an error; a walk that takes longer returns what it found."""
MAX_LIST_ENTRIES = 200
LIST_COUNT_LIMIT = 100_000
"""list_files stops counting here, so a huge tree cannot stall a step."""
_SNIFF_BYTES = 8192
_READ_PIECE_CHARS = 65_536
"""read_file reads a line in pieces of at most this many characters (a few per call for
normal lines, thousands for a minified or corrupt file's one line)."""


def read_file(
    base: Path,
    path: str,
    offset: int = 1,
    limit: int = DEFAULT_READ_LINES,
    *,
    path_help: PathHelp | None = None,
    on_read: Callable[[Path], None] | None = None,
) -> str:
    """Return a numbered window of a text file and how to read the next one.

    ``on_read`` is called with the file (resolved) once it was shown: the edit tools
    need to know what the run has read.
    """
    target, note = _existing(base, path, want="file", verb="read", path_help=path_help)
    text = _with_note(note, _read_text(base, target, offset, limit))
    if on_read is not None:
        on_read(target)
    return text


def _read_text(base: Path, target: Path, offset: int, limit: int) -> str:
    shown = display_path(base, target)
    first = max(offset, 1)
    count = min(max(limit, 1), MAX_READ_LINES)
    window, total = _read_window(base, target, shown, first=first, count=count)
    if total == 0:
        return f"[{shown} is empty]"
    if first > total:
        msg = f"offset {offset} is past the end of {shown} ({total:,} lines); use 1-{total}"
        raise PathRefused(msg)
    last = first + len(window) - 1
    lines = [f"{number:>5}| {_clip_line(line)}" for number, line in enumerate(window, first)]
    footer = f"[lines {first:,}-{last:,} of {total:,}"
    if limit > MAX_READ_LINES:
        footer += f" (limit {limit} was cut to the maximum of {MAX_READ_LINES})"
    if last < total:
        footer += f"; next: read_file(path={_quote(shown)}, offset={last + 1})]"
    else:
        footer += "; end of file]"
    return "\n".join([*lines, footer])


@dataclass(frozen=True, slots=True)
class _Line:
    """The start of a line (at most :data:`MAX_LINE_CHARS` + 1 characters) and its length."""

    start: str
    length: int


def _read_window(
    base: Path, target: Path, shown: str, *, first: int, count: int
) -> tuple[list[_Line], int]:
    """Lines ``first`` to ``first + count - 1`` of the file and how many it has.

    One descriptor, opened safely (:func:`open_inside`), serves the binary sniff and
    the read, so both look at the same file.
    """
    try:
        with open(open_inside(base, target), "rb") as raw:
            if b"\0" in raw.read(_SNIFF_BYTES):
                size = os.fstat(raw.fileno()).st_size
                msg = (
                    f"{shown} looks like a binary file ({size:,} bytes); read_file only shows text"
                )
                raise PathRefused(msg)
            raw.seek(0)
            with io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as handle:
                return _scan_lines(handle, first=first, count=count)
    except OSError as exc:
        msg = f"cannot read {shown} ({exc.strerror or exc})"
        raise PathRefused(msg) from exc


def _scan_lines(handle: io.TextIOWrapper, *, first: int, count: int) -> tuple[list[_Line], int]:
    """Count the lines of ``handle`` and keep the start of those in the window.

    A line is read in pieces of at most :data:`_READ_PIECE_CHARS` (``readline`` with a
    size), so a file of one enormous line costs memory for a piece, not for the line.
    The text layer still splits lines at ``\\n``, ``\\r\\n`` and ``\\r`` as before.
    """
    window: list[_Line] = []
    total = 0
    while piece := handle.readline(_READ_PIECE_CHARS):
        total += 1
        keep = first <= total < first + count
        start = piece[: MAX_LINE_CHARS + 1] if keep else ""
        length = len(piece)
        while not piece.endswith("\n"):
            piece = handle.readline(_READ_PIECE_CHARS)
            if not piece:  # the last line has no line break
                break
            length += len(piece)
            if keep and len(start) <= MAX_LINE_CHARS:
                start += piece[: MAX_LINE_CHARS + 1 - len(start)]
        if keep and piece.endswith("\n"):  # the break is not part of the line
            window.append(_Line(start.removesuffix("\n"), length - 1))
        elif keep:
            window.append(_Line(start, length))
    return window, total


def _clip_line(line: _Line) -> str:
    if line.length <= MAX_LINE_CHARS:
        return line.start
    return f"{line.start[:MAX_LINE_CHARS]} … [{line.length - MAX_LINE_CHARS:,} more characters]"


def search(
    base: Path,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    max_results: int = DEFAULT_SEARCH_RESULTS,
    *,
    path_help: PathHelp | None = None,
) -> str:
    """Return ``path:line:text`` for lines matching ``pattern`` under ``path``."""
    if not pattern:
        msg = "pattern is empty; send the text or regular expression to look for"
        raise ToolException(msg)
    deadline = time.monotonic() + SEARCH_SECONDS
    start, note = _existing(base, path, want="any", verb="searched", path_help=path_help)
    compiled, notes = _compile_pattern(pattern)
    cap = min(max(max_results, 1), MAX_SEARCH_RESULTS)
    tally = _Tally()
    for file in _candidates(base, start, glob, tally.walk):
        if time.monotonic() >= deadline:
            tally.out_of_time = True
            break
        lines = _file_lines(base, file)
        if lines is None:
            tally.skipped_large += 1
            continue
        room = cap + 1 - len(tally.hits)  # one more than the cap tells "there are more"
        shown = display_path(base, file)
        found = _match_lines(shown, lines, compiled, room=room, deadline=deadline)
        tally.files_hit += bool(found)
        tally.hits.extend(found)
        if len(tally.hits) > cap:
            break
    return _with_note(note, _search_report(tally, cap=cap, notes=notes, pattern=pattern))


@dataclass(slots=True)
class _Tally:
    hits: list[str] = field(default_factory=list)
    files_hit: int = 0
    skipped_large: int = 0
    out_of_time: bool = False
    walk: WalkStats = field(default_factory=WalkStats)


class _Match(Protocol):
    def start(self) -> int: ...


class _Pattern(Protocol):
    def search(self, string: str, *, timeout: float, concurrent: bool) -> _Match | None: ...

    def match(self, string: str, *, timeout: float, concurrent: bool) -> _Match | None: ...


def _compile_pattern(pattern: str) -> tuple[_Pattern, list[str]]:
    compiled: _Pattern
    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        note = f"[not a valid regular expression ({exc}); searched for the text literally]"
        compiled = regex.compile(regex.escape(pattern))
        return compiled, [note]
    return compiled, []


def _candidates(base: Path, start: Path, glob: str | None, stats: WalkStats) -> Iterator[Path]:
    if start.is_file():
        yield start
        return
    if not glob:
        yield from walk_files(base, start, stats)
        return
    matcher = _glob_matcher(glob)
    for file in walk_files(base, start, stats):
        relative = file.relative_to(start).as_posix()
        try:
            matched = matcher.match(relative, timeout=SEARCH_SECONDS, concurrent=True)
        except TimeoutError:
            msg = f"the glob {_quote(glob)} takes too long to match; use a simpler glob"
            raise ToolException(msg) from None
        if matched:
            yield file


def _glob_matcher(glob: str) -> _Pattern:
    """The glob's regex, run by the regex module.

    "*a*a*a*a*a*a*b" backtracks for minutes in re (holding the GIL), and matches at once
    there. A problem is told in the glob's terms: the model wrote a glob, and a position
    in the regex it became would point at characters it never sent.
    """
    try:
        matcher: _Pattern = regex.compile(compile_glob(glob).pattern)
    except GlobError as exc:
        msg = f"the glob {_quote(glob)} is not valid: {exc}"
        raise ToolException(msg) from None
    except (re.error, regex.error, ValueError, OverflowError, RecursionError):
        msg = f"the glob {_quote(glob)} cannot be used; use a simpler glob"
        raise ToolException(msg) from None
    return matcher


def _file_lines(base: Path, file: Path) -> list[str] | None:
    """Return the file's lines; ``[]`` for unreadable or binary files, ``None`` if too big.

    Opened safely (:func:`open_inside`): a FIFO, a device, a vanished file or one that
    became a link since the walk saw it is unreadable, so nothing to match.
    """
    try:
        with open(open_inside(base, file), "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_SEARCH_FILE_BYTES:
                return None
            data = handle.read(MAX_SEARCH_FILE_BYTES + 1)
    except OSError:
        return []
    if len(data) > MAX_SEARCH_FILE_BYTES:  # it grew while being read
        return None
    if b"\0" in data[:_SNIFF_BYTES]:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _match_lines(
    shown: str, lines: list[str], compiled: _Pattern, *, room: int, deadline: float
) -> list[str]:
    found: list[str] = []
    for number, line in enumerate(lines, start=1):
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            # concurrent: the GIL is released while matching, so other runs go on.
            match = compiled.search(line, timeout=left, concurrent=True)
        except TimeoutError:
            msg = (
                f"search gave up after {SEARCH_SECONDS:g} s at {shown}:{number}: the pattern "
                "takes too long to match (nested or overlapping repeats such as (a|aa)+ or "
                "(\\w+\\s*)* backtrack without end); search for plain text or a simpler pattern"
            )
            raise ToolException(msg) from None
        if match is None:
            continue
        found.append(f"{shown}:{number}:{_clip_around(line, match)}")
        if len(found) >= room:
            break
    return found


def _clip_around(line: str, match: _Match) -> str:
    """Cut a long line to a window that shows the match (minified files)."""
    if len(line) <= SEARCH_LINE_CHARS:
        return line.strip()
    start = max(0, min(match.start() - SEARCH_LINE_CHARS // 3, len(line) - SEARCH_LINE_CHARS))
    end = start + SEARCH_LINE_CHARS
    return ("…" if start else "") + line[start:end].strip() + ("…" if end < len(line) else "")


def _search_report(tally: _Tally, *, cap: int, notes: list[str], pattern: str) -> str:
    hits = tally.hits
    skipped = _walk_notes(tally.walk)
    if tally.skipped_large:
        big = _plural(tally.skipped_large, "file")
        skipped.append(f"[skipped {big} over {MAX_SEARCH_FILE_BYTES >> 20} MB]")
    if tally.out_of_time:
        skipped.append(
            f"[stopped after {SEARCH_SECONDS:g} s; files not searched yet were left out:"
            " narrow the path or glob]"
        )
    if not hits:
        return "\n".join([*notes, f"no matches for {_quote(pattern)}", *skipped])
    if len(hits) > cap:
        more = f", or raise max_results (up to {MAX_SEARCH_RESULTS})"
        footer = (
            f"[stopped at {cap} matches; there are more: narrow the pattern, path or glob"
            f"{more if cap < MAX_SEARCH_RESULTS else ''}]"
        )
    else:
        footer = f"[{_plural(len(hits), 'match')} in {_plural(tally.files_hit, 'file')}]"
    return "\n".join([*notes, *hits[:cap], *skipped, footer])


def list_files(
    base: Path, path: str = ".", glob: str = "**/*", *, path_help: PathHelp | None = None
) -> str:
    """Return the sorted relative paths of the files under ``path`` matching ``glob``."""
    start, note = _existing(base, path, want="any", verb="listed", path_help=path_help)
    return _with_note(note, _list_text(base, start, glob))


def _list_text(base: Path, start: Path, glob: str) -> str:
    if start.is_file():
        return display_path(base, start)
    stats = WalkStats()
    found: list[str] = []
    for file in _candidates(base, start, glob or "**/*", stats):
        if len(found) >= LIST_COUNT_LIMIT:
            break
        found.append(display_path(base, file))
    found.sort()
    notes = _walk_notes(stats)
    if not found:
        where = display_path(base, start)
        return "\n".join([f"no files match {_quote(glob)} under {where}", *notes])
    if len(found) > MAX_LIST_ENTRIES:
        more = "+" if len(found) >= LIST_COUNT_LIMIT else ""
        footer = (
            f"[showing {MAX_LIST_ENTRIES} of {len(found):,}{more} files; narrow with path or glob]"
        )
    else:
        footer = f"[{_plural(len(found), 'file')}]"
    return "\n".join([*found[:MAX_LIST_ENTRIES], *notes, footer])


def _walk_notes(stats: WalkStats) -> list[str]:
    if not stats.outside_links:
        return []
    links = _plural(stats.outside_links, "link")
    return [f"[skipped {links} leading outside the workspace]"]


def _plural(count: int, noun: str) -> str:
    suffix = "" if count == 1 else ("es" if noun.endswith("ch") else "s")
    return f"{count:,} {noun}{suffix}"


def _existing(
    base: Path, path: str, *, want: str, verb: str, path_help: PathHelp | None
) -> tuple[Path, str | None]:
    """Resolve ``path`` inside ``base`` and check it exists (``want``: "file" or "any").

    Returns:
        The path, and a note when a missing one was replaced by a path named in the
        request (see :mod:`._pathhelp`).
    """
    try:
        target = resolve_inside(base, path)
    except PathRefused:
        # "/app.yaml" usually means the workspace root, not the disk's: help, as for a
        # missing path. "../x" and links that lead outside stay plain refusals.
        wanted = Path(path.strip())
        if "\0" in path or not wanted.is_absolute() or wanted.is_relative_to(base):
            raise
        return missing_path(base, path, want=want, verb=verb, path_help=path_help or PathHelp())
    if want == "file" and target.is_dir():
        shown = display_path(base, target)
        msg = f"{shown} is a folder; use list_files(path={_quote(shown)}) to see its files"
        raise PathRefused(msg)
    if want == "file" and target.exists() and not target.is_file():
        msg = f"{display_path(base, target)} is not a regular file"
        raise PathRefused(msg)
    if target.exists():
        return target, None
    return missing_path(base, path, want=want, verb=verb, path_help=path_help or PathHelp())


def _with_note(note: str | None, text: str) -> str:
    return f"[{note}]\n{text}" if note else text


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
