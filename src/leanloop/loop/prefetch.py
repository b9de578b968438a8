"""Find the workspace files a request names, so they can be read before the first step.

Even a model that never calls a tool then sees the file the user pointed at. A name
counts when it is a path relative to the workspace, or a file name that exists exactly
once in it (``app.yaml`` for ``config/app.yaml``), including capitalised names without an
extension (``Makefile``, ``LICENSE``).

The loop makes one lookup per run (:func:`request_paths`) and hands it on: to the
prefetch, to the pruning pass, and with each tool call to the workspace tools (which offer,
or read, the file the user named when a path is missing).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path

__all__ = ["mentioned_paths", "request_paths"]

# Path-like words: at least one dot-extension or slash (quotes and backticks are not part
# of a match).
_CANDIDATE = re.compile(
    r"\.?\w[\w.\-/]*(?:\.[A-Za-z0-9]{1,8}|/[\w.\-]+)"  # a leading dot: .env.example
    # Extension-less names people capitalise (Makefile, Dockerfile, LICENSE): these only
    # count when a file of exactly that name exists, like any bare name.
    r"|\b[A-Z][A-Za-z0-9_\-]{3,}\b"
)
_MAX_FILES_SCANNED = 5_000
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv"})


def mentioned_paths(text: str, workspace: Path, *, limit: int = 4) -> list[str]:
    """Workspace-relative paths of existing files named in ``text``, in order, unique.

    Args:
        text: The user's request.
        workspace: The workspace root (paths never leave it).
        limit: The most paths returned.
    """
    root = workspace.resolve()
    by_name: dict[str, list[str]] | None = None
    found: list[str] = []
    for match in _CANDIDATE.finditer(text):
        word = match.group(0).rstrip(".,;:")
        path = _inside(root, word)
        if path is None and "/" not in word:
            by_name = by_name if by_name is not None else _index(root)
            names = by_name.get(word, [])
            path = names[0] if len(names) == 1 else None
        if path is not None and path not in found:
            found.append(path)
        if len(found) >= limit:
            break
    return found


def request_paths(text: str, workspace: Path | None) -> Callable[[], list[str]]:
    """The lookup of the workspace paths ``text`` names, for one run.

    The paths are looked up on first use only (most runs never miss a path) and once;
    without a workspace or a request, the lookup names nothing.
    """

    @functools.cache
    def lookup() -> list[str]:
        return mentioned_paths(text, workspace) if workspace is not None and text else []

    return lookup


def _inside(root: Path, word: str) -> str | None:
    candidate = (root / word.lstrip("/")).resolve()
    if not candidate.is_file() or not candidate.is_relative_to(root):
        return None
    return candidate.relative_to(root).as_posix()


def _index(root: Path) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in files:
            rel = (Path(folder) / name).relative_to(root).as_posix()
            index.setdefault(name, []).append(rel)
            seen += 1
            if seen >= _MAX_FILES_SCANNED:
                return index
    return index
