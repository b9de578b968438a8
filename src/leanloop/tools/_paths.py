"""Keep workspace tools inside their folder: path confinement, safe walking, globs.

Every path a model sends is resolved (symlinks followed) and must land inside the
workspace root; walking a tree skips links that lead outside, ``.git`` and link loops.
Refusals are :class:`PathRefused`, a ``ToolException`` whose one-line message is meant
for the model.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from langchain_core.tools import ToolException

__all__ = [
    "PathRefused",
    "WalkStats",
    "close_paths",
    "compile_glob",
    "display_path",
    "resolve_inside",
    "walk_files",
]

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
"""Version-control folders: never useful to a model, often huge."""

_SUGGESTION_SCAN_LIMIT = 5_000
"""Files looked at when suggesting a close path for a missing one (keeps errors cheap)."""


class PathRefused(ToolException):
    """A path the model sent is outside the workspace or names nothing usable."""


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
    """
    base = root.resolve()
    stats = stats if stats is not None else WalkStats()
    seen: set[Path] = set()
    for dirpath, dirnames, filenames in os.walk(start, followlinks=True):
        here = Path(dirpath)
        real = here.resolve()
        if real in seen:  # a link loop or a second link to a visited folder
            dirnames.clear()
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if _keep_dir(here / d, base, stats))
        for name in sorted(filenames):
            path = here / name
            if _link_escapes(path, base):
                stats.outside_links += 1
                continue
            yield path


def _keep_dir(path: Path, base: Path, stats: WalkStats) -> bool:
    if path.name in SKIPPED_DIRS:
        return False
    if _link_escapes(path, base):
        stats.outside_links += 1
        return False
    return True


def _link_escapes(path: Path, base: Path) -> bool:
    if not path.is_symlink():
        return False
    try:
        return not path.resolve().is_relative_to(base)
    except (OSError, RuntimeError):  # a link loop leads nowhere usable either
        return True


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob to a regex over POSIX relative paths.

    ``**`` crosses folders, ``*`` and ``?`` do not, ``[abc]`` is a class and
    ``{py,md}`` a choice. A pattern without ``/`` is matched against file names only
    (like ripgrep's ``-g``), so ``*.py`` finds Python files at any depth.
    """
    body = _translate(pattern.strip() or "*")
    if "/" not in pattern:
        body = f"(?:.*/)?{body}"
    return re.compile(f"(?s:{body})\\Z")


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            token, i = _translate_one(pattern, i)
            out.append(token)
    return "".join(out)


def _translate_one(pattern: str, i: int) -> tuple[str, int]:
    char = pattern[i]
    if char == "*":
        return "[^/]*", i + 1
    if char == "?":
        return "[^/]", i + 1
    close = {"[": "]", "{": "}"}.get(char)
    end = pattern.find(close, i + 1) if close else -1
    if char == "[" and end > i + 1:
        inner = pattern[i + 1 : end].replace("\\", "\\\\")
        inner = "^" + inner[1:] if inner.startswith("!") else inner
        return f"[{inner}]", end + 1
    if char == "{" and end > i:
        choices = pattern[i + 1 : end].split(",")
        return "(?:" + "|".join(_translate(c) for c in choices) + ")", end + 1
    return re.escape(char), i + 1


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
