"""Keep workspace tools inside their folder: path confinement, safe walking, globs.

Every path a model sends is resolved (symlinks followed) and must land inside the
workspace root; walking a tree skips links that lead outside, ``.git`` and link loops.
Refusals are :class:`PathRefused`, a ``ToolException`` whose one-line message is meant
for the model; a workspace that is not a folder is refused earlier, when a tool is built
(:func:`workspace_root`, a ``ToolError`` for the user).

Checking a path and then opening it by name is a race: a link swapped in between (a
file or folder replaced by a link to ``/etc``) would be followed by ``open()``. So
nothing is opened by name. :func:`open_inside` and :func:`walk_files` (and the edit
tools' writes, through :func:`open_under`) start from a descriptor of the workspace root
and open each component of the checked, resolved path relative to its parent's
descriptor with ``O_NOFOLLOW`` (``openat``): a link that appears after the check makes
the open fail instead of leading outside.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from langchain_core.tools import ToolException

from leanloop.exceptions import InvalidArgument, ToolError

__all__ = [
    "GlobError",
    "PathRefused",
    "WalkStats",
    "close_paths",
    "compile_glob",
    "display_path",
    "open_inside",
    "open_under",
    "resolve_inside",
    "walk_files",
    "workspace_root",
]

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
"""Version-control folders: never useful to a model, often huge."""

_SUGGESTION_SCAN_LIMIT = 5_000
"""Files looked at when suggesting a close path for a missing one (keeps errors cheap)."""


class PathRefused(ToolException):
    """A path the model sent is outside the workspace or names nothing usable."""


def workspace_root(root: Path) -> Path:
    """Resolve the workspace folder a tool is built for, refusing one that is not there.

    Args:
        root: The workspace folder as the caller gave it.

    Returns:
        ``root`` resolved: the base every path of the tool is confined to.

    Raises:
        ToolError: ``workspace 'missing' is not an existing folder`` (the folder as
            given, not resolved, so the user recognises it).
    """
    base = Path(root).resolve()
    if not base.is_dir():
        msg = f"workspace {str(root)!r} is not an existing folder"
        raise ToolError(msg)
    return base


def resolve_inside(root: Path, user_path: str) -> Path:
    """Resolve ``user_path`` against ``root`` and make sure it stays inside.

    Relative paths are taken from ``root``; absolute paths are fine when they lead
    inside it. Symlinks are followed before the check, so a link that points outside
    is refused like ``..``.

    Args:
        root: The workspace folder.
        user_path: The path as the model wrote it.

    Returns:
        The resolved path (it may not exist).

    Raises:
        PathRefused: ``path "../x" is outside the workspace``.
    """
    base = root.resolve()
    candidate = Path(user_path.strip() or ".")
    try:
        resolved = (candidate if candidate.is_absolute() else base / candidate).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # NUL bytes, link loops, ...
        msg = f"path {json.dumps(user_path)} cannot be used ({exc})"
        raise PathRefused(msg) from exc
    if not resolved.is_relative_to(base):
        msg = f'path "{user_path}" is outside the workspace'
        raise PathRefused(msg)
    return resolved


def display_path(base: Path, path: Path) -> str:
    """Return ``path`` relative to the resolved root ``base``, POSIX form, ``.`` for itself."""
    rel = path.relative_to(base).as_posix()
    return rel or "."


@dataclass(slots=True)
class WalkStats:
    """What a walk left out, so a tool can say so."""

    outside_links: int = 0
    """Symlinks (to files or folders) skipped because they lead outside the workspace
    (or nowhere, as a link loop does)."""


def walk_files(root: Path, start: Path, stats: WalkStats | None = None) -> Iterator[Path]:
    """Yield the files under ``start`` in sorted, top-down order, confined to ``root``.

    Symlinked folders that stay inside are followed once (loops are cut); links that
    lead outside are skipped and counted in ``stats``. Yielded paths are lexical
    (``start``-based, possibly through an inside link), never resolved outside ``root``.

    Each folder is listed through a descriptor opened component by component from the
    root with ``O_NOFOLLOW`` (see the module docstring), so a folder swapped for a link
    while the walk runs is skipped, never listed.
    """
    base = root.resolve()
    stats = stats if stats is not None else WalkStats()
    try:
        first = start.resolve()
    except (OSError, RuntimeError):
        return
    if not first.is_relative_to(base):
        return
    seen: set[tuple[int, int]] = set()
    # (the path as the caller sees it, the folder's real path relative to the root)
    stack: list[tuple[Path, tuple[str, ...]]] = [(start, first.relative_to(base).parts)]
    while stack:
        here, real = stack.pop()
        listed = _list_dir(base, real, seen)
        if listed is None:  # gone, swapped for a link, or visited through another link
            continue
        files: list[Path] = []
        dirs: list[tuple[Path, tuple[str, ...]]] = []
        for name, kind in listed:
            path = here / name
            if kind == "dir":
                if name not in SKIPPED_DIRS:
                    dirs.append((path, (*real, name)))
                continue
            if kind == "file":
                files.append(path)
                continue
            target = _link_target(path, base)  # a link: follow it only if it stays inside
            if target is None:
                stats.outside_links += 1
            elif target.is_dir():
                if name not in SKIPPED_DIRS:
                    dirs.append((path, target.relative_to(base).parts))
            else:
                files.append(path)
        yield from files
        stack.extend(reversed(dirs))


def _list_dir(
    base: Path, real: tuple[str, ...], seen: set[tuple[int, int]]
) -> list[tuple[str, str]] | None:
    """The sorted ``(name, kind)`` entries of the folder at ``real`` under ``base``.

    ``kind`` is ``"dir"``, ``"file"`` (anything that is not a folder or a link) or
    ``"link"``. ``None`` when the folder cannot be opened safely or was seen before.
    """
    if not _SAFE_OPEN:  # no openat here (Windows): list by name
        return _list_by_name(Path(base, *real), seen)
    try:
        fd = open_under(base, real, directory=True)
    except OSError:
        return None
    try:
        if not _first_visit(os.fstat(fd), seen):
            return None
        with os.scandir(fd) as listing:
            entries = _kinds(listing)
    except OSError:
        return None
    finally:
        os.close(fd)
    entries.sort()
    return entries


def _list_by_name(folder: Path, seen: set[tuple[int, int]]) -> list[tuple[str, str]] | None:
    try:
        if not _first_visit(folder.stat(), seen):
            return None
        with os.scandir(folder) as listing:
            return sorted(_kinds(listing))
    except OSError:
        return None


def _first_visit(info: os.stat_result, seen: set[tuple[int, int]]) -> bool:
    key = (info.st_dev, info.st_ino)
    if key in seen:  # a link loop or a second link to a visited folder
        return False
    seen.add(key)
    return True


def _kinds(listing: Iterator[os.DirEntry[str]]) -> list[tuple[str, str]]:
    entries: list[tuple[str, str]] = []
    for entry in listing:
        try:
            if entry.is_symlink():
                kind = "link"
            elif entry.is_dir(follow_symlinks=False):
                kind = "dir"
            else:
                kind = "file"
        except OSError:
            continue
        entries.append((entry.name, kind))
    return entries


def _link_target(path: Path, base: Path) -> Path | None:
    """Where the link ``path`` leads, when that is inside ``base``; else ``None``."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError):  # a link loop leads nowhere usable either
        return None
    return target if target.is_relative_to(base) else None


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_OPEN_FLAGS = (
    os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
)
_SAFE_OPEN = os.open in os.supports_dir_fd and bool(_NOFOLLOW)
"""Whether this system opens relative to a folder's descriptor (POSIX ``openat``)."""


def open_under(base: Path, parts: tuple[str, ...], *, directory: bool, create: bool = False) -> int:
    """Open ``base/parts...`` without following any link below ``base``.

    Every component is opened relative to its parent's descriptor with ``O_NOFOLLOW``
    (folders with ``O_DIRECTORY`` too), so the descriptor returned is for something that
    really lies under ``base`` at the moment it was opened.

    Args:
        base: The resolved workspace root.
        parts: The components below ``base``, each a plain name (no ``..``, no ``/``).
        directory: Whether the last component must be a folder (the others always are).
        create: Make the missing folders on the way (the last component too, when
            ``directory``), each inside its parent's descriptor, so a write can follow.

    Returns:
        A descriptor the caller must close.

    Raises:
        OSError: A component is missing (and not to be made), is a link (``ELOOP``) or
            is not a folder.
    """
    if any(part in ("", ".", "..") or "/" in part for part in parts):
        raise OSError(errno.EINVAL, "not a plain relative path")
    if not _SAFE_OPEN:  # no openat here: open by name (Windows)
        path = os.path.join(base, *parts)
        if create:
            os.makedirs(path if directory else os.path.dirname(path), exist_ok=True)
        return os.open(path, os.O_RDONLY | (_DIRECTORY if directory else 0))
    fd = os.open(base, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for index, part in enumerate(parts):
            folder = directory or index < len(parts) - 1
            flags = _OPEN_FLAGS | (_DIRECTORY if folder else 0)
            try:
                child = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not (create and folder):
                    raise
                # Made inside the parent's descriptor, then opened as any other part: a
                # link put in its place meanwhile still fails the open (O_NOFOLLOW).
                os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_inside(base: Path, path: Path) -> int:
    """Open the regular file ``path`` for reading, only if it really lies inside ``base``.

    ``path`` (lexical or resolved) is resolved and checked again, then opened component
    by component from ``base`` without following links (:func:`open_under`), so a link
    swapped in after any check fails the open instead of leading outside.

    Args:
        base: The resolved workspace root.
        path: The file.

    Returns:
        A descriptor the caller must close (``open(fd, ...)`` takes it over).

    Raises:
        OSError: The file is missing, outside, changed into a link while being opened
            (``ELOOP``), or is not a regular file (``EINVAL``; a FIFO or device would
            block or never end).
    """
    try:
        real = path.resolve()
    except RuntimeError as exc:  # a link loop (Python < 3.13)
        raise OSError(errno.ELOOP, "too many levels of symbolic links") from exc
    if not real.is_relative_to(base):
        raise OSError(errno.EACCES, "it leads outside the workspace")
    try:
        fd = open_under(base, real.relative_to(base).parts, directory=False)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # no link was there a moment ago
            msg = "it was replaced by a link while being opened; try again"
            raise OSError(exc.errno, msg) from exc
        raise
    with contextlib.ExitStack() as guard:
        guard.callback(os.close, fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if _SAFE_OPEN:
            os.set_blocking(fd, True)
        guard.pop_all()
    return fd


class GlobError(InvalidArgument):
    """A glob that cannot be matched, said in the glob's own terms (never a regex's).

    The message names the 1-based character of the glob, as sent, where the problem
    starts; ``position`` holds it too. Still a :class:`ValueError` (through
    :class:`~leanloop.exceptions.InvalidArgument`), as it was before it joined the tree.
    """

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.position = position


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob to a regex over POSIX relative paths.

    ``**`` crosses folders, ``*`` and ``?`` do not, ``[abc]`` is a class and
    ``{py,md}`` a choice. A pattern without ``/`` is matched against file names only
    (like ripgrep's ``-g``), so ``*.py`` finds Python files at any depth.

    Raises:
        GlobError: For a class no character can match, such as a backwards range.
    """
    start = len(pattern) - len(pattern.lstrip())
    stop = start + len(pattern.strip())
    body = _translate(pattern, start, stop) if stop > start else "[^/]*"
    if "/" not in pattern:
        body = f"(?:.*/)?{body}"
    return re.compile(f"(?s:{body})\\Z")


def _translate(pattern: str, start: int, stop: int) -> str:
    # Works on pattern[start:stop] in place, so that a problem names its position in
    # the glob as the model sent it, also inside a {choice}.
    out: list[str] = []
    i = start
    while i < stop:
        if pattern.startswith("**/", i, stop):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i, stop):
            out.append(".*")
            i += 2
        else:
            token, i = _translate_one(pattern, i, stop)
            out.append(token)
    return "".join(out)


def _translate_one(pattern: str, i: int, stop: int) -> tuple[str, int]:
    char = pattern[i]
    if char == "*":
        return "[^/]*", i + 1
    if char == "?":
        return "[^/]", i + 1
    close = {"[": "]", "{": "}"}.get(char)
    end = pattern.find(close, i + 1, stop) if close else -1
    if char == "[" and end > i + 1:
        return _translate_class(pattern, i, end), end + 1
    if char == "{" and end > i:
        choices: list[str] = []
        first = i + 1
        for comma in [*(j for j in range(first, end) if pattern[j] == ","), end]:
            choices.append(_translate(pattern, first, comma))
            first = comma + 1
        return "(?:" + "|".join(choices) + ")", end + 1
    return re.escape(char), i + 1


def _translate_class(pattern: str, start: int, end: int) -> str:
    """``pattern[start:end + 1]``, a ``[...]`` class, as a regex class.

    Every character is escaped, so what looks like regex syntax inside (``&&``, ``--``,
    ``[:alpha:]``, a backslash) stays the characters written, as in a shell.
    """
    i = start + 1
    negate = pattern[i] in "!^"
    if negate:
        i += 1
    if i == end:  # "[!]" leaves out nothing: no regex class can say that
        written = pattern[start : end + 1]
        literal = "[[]" + written[1:]
        msg = (
            f"the set {written} at character {start + 1} is empty (write ? for any one "
            f"character, or {literal} for the text {written})"
        )
        raise GlobError(msg, start + 1)
    parts: list[str] = []
    while i < end:
        if i + 2 < end and pattern[i + 1] == "-":
            low, high = pattern[i], pattern[i + 2]
            if low > high:
                msg = (
                    f"the range {low}-{high} at character {i + 1} runs backwards "
                    f"(write {high}-{low})"
                )
                raise GlobError(msg, i + 1)
            parts.append(f"{re.escape(low)}-{re.escape(high)}")
            i += 3
        else:
            parts.append(re.escape(pattern[i]))
            i += 1
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def close_paths(root: Path, wanted: str, *, limit: int = 3) -> list[str]:
    """Return up to ``limit`` existing paths whose file names look like ``wanted``'s."""
    base = root.resolve()
    by_name: dict[str, list[str]] = {}
    for count, path in enumerate(walk_files(base, base)):
        if count >= _SUGGESTION_SCAN_LIMIT:
            break
        by_name.setdefault(path.name, []).append(display_path(base, path))
    name = Path(wanted).name or wanted
    matches = difflib.get_close_matches(name, list(by_name), n=limit, cutoff=0.6)
    found = [p for match in matches for p in by_name[match]]
    wanted_posix = Path(wanted).as_posix()
    # Prefer the paths that share most with what was asked, folders included.
    found.sort(key=lambda p: -difflib.SequenceMatcher(None, wanted_posix, p).ratio())
    return found[:limit]
