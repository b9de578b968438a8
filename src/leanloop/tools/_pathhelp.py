"""Help a model that asked for a path that is not there.

A missing path (or an absolute one outside the workspace, like ``/app.yaml``, which
small models write for a file at the root) gets the closest existing paths in the
error, plus the workspace paths named in the user's request (``path_hints``). With
``repair`` on, when exactly one of those named paths exists, it is used instead, and
the result says so (``[no file "app.yml"; read "config/app.yaml" (named in the
request) instead]``). When the request names no path that exists and the workspace holds
exactly one file, a missing file for ``read_file`` can only mean that file: it is read
instead (``[no file "Ada Lovelace.txt"; read "bio.txt" (the only file in the workspace)
instead]``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from leanloop.tools._notes import Told
from leanloop.tools._paths import (
    PathRefused,
    close_paths,
    display_path,
    resolve_inside,
    walk_files,
)

__all__ = ["PathHelp", "PathHints", "missing_path"]

_log = logging.getLogger(__name__)

PathHints = Callable[[], Sequence[str]]
"""Returns the workspace paths named in the user's request (asked at each miss)."""
_MAX_HINTS = 5


@dataclass(frozen=True, slots=True)
class PathHelp:
    """How the workspace tools help with a path that does not exist."""

    hints: PathHints | None = None
    """The paths named in the request; listed in the error, candidates for a repair."""
    repair: bool = False
    """Use the one existing hinted path instead of a missing one (or, for a file when the
    request names nothing that exists, the workspace's only file)."""
    told: Told | None = None
    """Where a repair is told to the registry (the call's :class:`Told`); ``None``
    outside the registry."""

    def existing_hints(self, base: Path, *, want: str) -> list[str]:
        """The hinted paths that exist (files only for ``want="file"``), as shown paths."""
        return self._existing(base, want=want) or []

    def names_nothing(self, base: Path) -> bool:
        """Whether the request is known to name no file or folder that exists.

        ``False`` when it is not known: no hints (the tools run outside an agent's run)
        or hints that failed.
        """
        return self._existing(base, want="any", quiet=True) == []

    def _existing(self, base: Path, *, want: str, quiet: bool = False) -> list[str] | None:
        """The hinted paths that exist, or ``None`` without hints or when they fail."""
        if self.hints is None:
            return None
        try:
            hints = list(self.hints())
        except Exception:  # the caller's hook must not break a tool call
            if not quiet:  # said once per miss, by existing_hints
                _log.warning(
                    "path_hints failed; going on without them",
                    exc_info=_log.isEnabledFor(logging.DEBUG),
                )
            return None
        found: list[str] = []
        for hint in hints:
            try:
                target = resolve_inside(base, str(hint))
                usable = target.is_file() or (want != "file" and target.exists())
            except (PathRefused, OSError):  # outside, or a name the system cannot use
                continue
            if usable:
                found.append(display_path(base, target))
        return list(dict.fromkeys(found))[:_MAX_HINTS]


def missing_path(
    base: Path, path: str, *, want: str, verb: str, path_help: PathHelp
) -> tuple[Path, str]:
    """Handle a ``path`` that is not in the workspace: repair it, or raise with help.

    Args:
        base: The resolved workspace root.
        path: The path as the model wrote it.
        want: ``"file"`` (read_file) or ``"any"`` (search, list_files).
        verb: What the tool did, for the repair note: ``read``, ``searched``, ``listed``.
        path_help: The hints and the repair switch.

    Returns:
        The path to use instead (the one the request names, or the workspace's only
        file), and the note saying so for the result (it is also recorded with
        :attr:`PathHelp.told` for the registry's outcome).

    Raises:
        PathRefused: ``no such file: app.yml (did you mean: config/app.yaml?; named in
            the request: docs/setup.md)``.
    """
    kind = "file" if want == "file" else "file or folder"
    hinted = path_help.existing_hints(base, want=want)
    if path_help.repair and len(hinted) == 1:
        note = f'no {kind} "{path}"; {verb} "{hinted[0]}" (named in the request) instead'
        _tell(path_help, note)
        return resolve_inside(base, hinted[0]), note
    # A request that names a folder (or anything that exists) keeps its error: the model
    # may have meant something there. Otherwise one file is all the model can mean.
    unnamed = path_help.repair and want == "file" and path_help.names_nothing(base)
    only = _only_file(base) if unnamed else None
    if only is not None:
        shown = display_path(base, only)
        note = f'no file "{path}"; {verb} "{shown}" (the only file in the workspace) instead'
        _tell(path_help, note)
        return resolve_inside(base, shown), note
    if Path(path).is_absolute():
        msg = f'path "{path}" is outside the workspace; use a path relative to its root'
    else:
        msg = f"no such {kind}: {path}"
    close = [p for p in close_paths(base, path) if p not in hinted]
    parts = [f"did you mean: {', '.join(close)}?"] if close else []
    if hinted:
        parts.append(f"named in the request: {', '.join(hinted)}")
    if parts:
        msg += f" ({'; '.join(parts)})"
    raise PathRefused(msg)


def _only_file(base: Path) -> Path | None:
    """The workspace's one file, or ``None`` when it holds none or more than one."""
    found: Path | None = None
    for index, path in enumerate(walk_files(base, base)):
        if index:
            return None
        found = path
    return found


def _tell(path_help: PathHelp, note: str) -> None:
    if path_help.told is not None:
        path_help.told.note(note)
