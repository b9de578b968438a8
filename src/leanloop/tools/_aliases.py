"""Read argument names the way a model meant them: spellings and common synonyms.

Small models call ``read_file(file=...)`` or ``search(query=...)``. A name the tool does
not take is read as one of its parameters when that is unambiguous:

- the same name in another spelling (``filePath``, ``max-results``, ``Path``), or
- a common synonym of it (``file``/``filename``/``filepath`` for ``path``,
  ``query``/``regex``/``text``/``keyword`` for ``pattern``, ``start``/``line`` for
  ``offset``, ``count``/``lines`` for ``limit``, ...);

and only when exactly one parameter fits, that parameter was not given under its own
name, and no other name sent in the same call would also be read as it. Anything else
stays as it was (the registry then drops it and says so).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["AliasReading", "alias_target", "normalize_name", "read_aliases"]

_SYNONYMS: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "path", "file", "filename", "filepath", "fname", "pathname", "filepathname",
            "dir", "directory", "folder", "dirpath", "folderpath", "location",
        }
    ),
    frozenset(
        {
            "pattern", "query", "regex", "regexp", "re", "text", "keyword", "keywords",
            "search", "searchterm", "searchtext", "searchquery", "searchpattern", "term",
            "q", "string", "needle", "expr", "expression", "grep",
        }
    ),
    frozenset(
        {
            "offset", "start", "startline", "line", "linenumber", "lineno", "fromline",
            "from", "begin", "startat", "firstline",
        }
    ),
    frozenset(
        {
            "limit", "count", "lines", "numlines", "nlines", "maxlines", "linecount", "n",
            "length", "maxresults", "max", "maxcount", "num", "topk", "k", "numresults",
        }
    ),
    frozenset(
        {"glob", "include", "filter", "filepattern", "fileglob", "globpattern", "mask"}
    ),
)  # fmt: skip
"""Groups of names (in :func:`normalize_name` form) that mean the same argument."""

_GROUP_OF: dict[str, int] = {name: i for i, group in enumerate(_SYNONYMS) for name in group}
# A name in two groups would make "unambiguous" depend on table order.
assert len(_GROUP_OF) == sum(len(group) for group in _SYNONYMS), "synonym groups overlap"


def normalize_name(name: str) -> str:
    """Return ``name`` lower-cased without separators: ``filePath`` -> ``filepath``."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def alias_target(key: str, params: Sequence[str]) -> str | None:
    """Return the one parameter in ``params`` that ``key`` stands for, or ``None``.

    ``key`` itself (when it is a parameter) is its own target. A spelling variant wins
    over a synonym; two parameters that fit equally well give ``None``.
    """
    candidates = _candidates(key, params)
    return candidates[0] if len(candidates) == 1 else None


def _candidates(key: str, params: Sequence[str]) -> list[str]:
    if key in params:
        return [key]
    norm = normalize_name(key)
    same = [p for p in params if normalize_name(p) == norm]
    if same:
        return same
    group = _GROUP_OF.get(norm)
    if group is None:
        return []
    return [p for p in params if _GROUP_OF.get(normalize_name(p)) == group]


@dataclass(frozen=True, slots=True)
class AliasReading:
    """The arguments with aliases read as parameter names, and what was done."""

    args: dict[str, Any]
    """The arguments, renamed where an alias was read (order kept)."""
    notes: tuple[str, ...] = ()
    """One remark per rename (``read "file" as "path"``) or refused ambiguity."""


def read_aliases(args: Mapping[str, Any], params: Sequence[str]) -> AliasReading:
    """Rename the arguments in ``args`` that unambiguously stand for a parameter.

    Args:
        args: The arguments as the model sent them.
        params: The parameter names of the tool.

    Returns:
        The renamed arguments; names that could not be read stay as they were.
    """
    targets: dict[str, list[str]] = {}
    notes: list[str] = []
    for key in map(str, args):
        if key in params:
            continue
        candidates = _candidates(key, params)
        if len(candidates) == 1 and candidates[0] not in args:
            targets.setdefault(candidates[0], []).append(key)
        elif len(candidates) > 1:
            either = " or ".join(f'"{c}"' for c in candidates)
            notes.append(f'"{key}" could mean {either}; send one of them by name')
    renames: dict[str, str] = {}
    for target, keys in targets.items():
        if len(keys) == 1:
            renames[keys[0]] = target
            notes.append(f'read "{keys[0]}" as "{target}"')
        else:
            each = ", ".join(f'"{k}"' for k in keys)
            notes.append(f'{each} could each mean "{target}"; send only "{target}"')
    renamed = {renames.get(str(key), str(key)): value for key, value in args.items()}
    return AliasReading(renamed, tuple(notes))
