"""Repair a call to a tool that does not exist, when what the model meant is clear.

Small models invent tool names: ``read_config/app.yaml``, ``README.md``,
``find_createServer``, ``ReadFile``, ``cat``. :func:`repair_call` tries, in order:

1. **the same name spelled differently**: ``ReadFile``, ``read-file``,
   ``functions.read_file``;
2. **a file used as a tool name**: ``README.md`` becomes ``read_file(path="README.md")``
   when that path exists (only with a ``path_exists`` check);
3. **a name that embeds an argument**: a verb (or a tool's own name) followed by a path
   or a pattern: ``read_config/app.yaml`` becomes ``read_file(path="config/app.yaml")``,
   ``find_createServer`` becomes ``search(pattern="createServer")``;
4. **a close spelling**: ``lookp`` becomes ``lookup`` (similarity at least 0.8 and
   clearly ahead of the next tool);
5. **shared words**: ``open_file``, ``get_file_contents`` and ``cat`` become
   ``read_file``, ``grep`` becomes ``search``, ``ls`` becomes ``list_files``. Every word
   of the name must be one of the tool's words, a synonym of its verb, or a generic word
   (``file``, ``content``, ...), and one tool must score highest.

Anything else is refused (``None``): a wrong guess costs more than the short list of
tools the registry sends instead. An argument is only ever filled in when the tool has
that parameter and the model did not send it under any name.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from leanloop.tools._aliases import alias_target, normalize_name

__all__ = ["Repair", "close_tool_names", "format_call", "repair_call"]

Tools = Mapping[str, Sequence[str]]
"""Tool name -> its parameter names, in order."""
PathExists = Callable[[str], bool]

_CLOSE_SPELLING = 0.8
"""Least similarity (difflib ratio of normalized names) for a spelling repair."""
_SPELLING_MARGIN = 0.1
"""How far the best spelling must be ahead of the next one."""
_HINT_SPELLING = 0.6
"""Least similarity for a name to be suggested (not run) in a refusal."""

_VERBS: dict[str, str] = {
    **dict.fromkeys(
        ("read", "open", "cat", "view", "show", "get", "load", "display", "print", "fetch"),
        "read",
    ),
    **dict.fromkeys(("search", "find", "grep", "rg", "locate", "seek", "ripgrep"), "find"),
    **dict.fromkeys(("list", "ls", "dir", "tree", "listdir", "browse", "walk"), "list"),
}
"""Verbs small models use, by what they ask for (after :func:`_stem`)."""

_GENERIC = frozenset(
    {
        "file", "content", "text", "code", "data", "directory", "folder", "path",
        "workspace", "repo", "repository", "project", "line", "pattern", "string", "word",
        "regex", "name", "document", "doc", "tool", "function", "the", "for", "in", "a",
        "an", "of", "by", "from", "to", "with", "all", "my", "this", "some",
    }
)  # fmt: skip
"""Words that say nothing about which tool is meant (after :func:`_stem`)."""

_PATH_LIKE = re.compile(r"[^\s]*/[^\s]*|.+\.[A-Za-z0-9]{1,10}")
_SPLITS = "_-: ("
_HEAD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")


@dataclass(frozen=True, slots=True)
class Repair:
    """A call to run instead of the one the model wrote."""

    name: str
    """The tool to run."""
    args: dict[str, Any] = field(default_factory=dict)
    """The arguments to run it with (the model's, plus any taken from the name)."""
    reason: str = ""
    """Why the repair is trusted, in a few words (for logs)."""


def repair_call(
    name: str,
    args: Mapping[str, Any],
    tools: Tools,
    *,
    path_exists: PathExists | None = None,
) -> Repair | None:
    """Return the call the model meant with an unknown tool ``name``, or ``None``.

    Args:
        name: The tool name as the model wrote it (not one of ``tools``).
        args: The arguments the model sent.
        tools: The available tools: name -> parameter names.
        path_exists: Says whether a path exists in the workspace; without it, names
            are never read as existing files.

    Returns:
        A confident repair, or ``None`` when the name is ambiguous or too far off.
    """
    ask = _Ask(name.strip(), dict(args), tools, path_exists)
    for rule in (_same_name, _file_as_name, _embedded_argument, _close_spelling, _shared_words):
        repair = rule(ask)
        if repair is not None:
            return repair
    return None


def close_tool_names(name: str, tools: Sequence[str], *, limit: int = 3) -> list[str]:
    """Return up to ``limit`` tool names worth suggesting for ``name`` (best first)."""
    norm = normalize_name(name)
    ranked = sorted(((_similarity(norm, tool), tool) for tool in tools), key=lambda pair: -pair[0])
    found = [tool for ratio, tool in ranked if ratio >= _HINT_SPELLING]
    verbs = {_stem(w) for w in _words(name)} & set(_VERBS)
    found += [t for t in tools if verbs & {_stem(w) for w in _words(t)}]
    return list(dict.fromkeys(found))[:limit]


def format_call(name: str, args: Mapping[str, Any]) -> str:
    """Return ``name(key="value", ...)`` with long values cut, for one-line notes."""
    parts = []
    for key, value in args.items():
        text = json.dumps(value, ensure_ascii=False, default=repr)
        parts.append(f"{key}={text if len(text) <= 60 else text[:57] + '...'}")
    return f"{name}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class _Ask:
    name: str
    args: dict[str, Any]
    tools: Tools
    path_exists: PathExists | None

    def exists(self, path: str) -> bool:
        return self.path_exists is not None and bool(path) and self.path_exists(path)

    def given(self, tool: str, param: str) -> bool:
        """Whether the model sent ``param`` of ``tool`` under any name."""
        params = self.tools[tool]
        return any(alias_target(str(key), params) == param for key in self.args)


def _same_name(ask: _Ask) -> Repair | None:
    for candidate in (ask.name, re.split(r"[.:/]", ask.name)[-1]):
        norm = normalize_name(candidate)
        hits = [tool for tool in ask.tools if norm and normalize_name(tool) == norm]
        if len(hits) == 1:
            return Repair(hits[0], ask.args, "the same name spelled differently")
    return None


def _file_as_name(ask: _Ask) -> Repair | None:
    if not ask.exists(ask.name):
        return None
    reader = _best_by_words("read", ask.tools)
    param = alias_target("path", ask.tools[reader]) if reader else None
    if reader is None or param is None or ask.given(reader, param):
        return None
    return Repair(reader, {**ask.args, param: ask.name}, "the name is a file in the workspace")


def _embedded_argument(ask: _Ask) -> Repair | None:
    found: list[tuple[tuple[bool, int], Repair]] = []
    for at, char in enumerate(ask.name):
        if char not in _SPLITS or not _HEAD.fullmatch(head := ask.name[:at]):
            continue
        tool = _same_name(_Ask(head, {}, ask.tools, None))
        name = tool.name if tool else _best_by_words(head, ask.tools)
        rest = _clean(ask.name[at + 1 :])
        param = _embedded_param(name, rest, ask) if name else None
        if name and param:
            rank = (ask.exists(rest), len(head))  # an existing path, then the longest verb
            repair = Repair(name, {**ask.args, param: rest}, f"the name embeds {param}")
            found.append((rank, repair))
    return max(found, key=lambda pair: pair[0])[1] if found else None


def _embedded_param(tool: str, rest: str, ask: _Ask) -> str | None:
    """The parameter of ``tool`` that ``rest`` (taken from the name) is a value for."""
    words = [_stem(w) for w in _words(rest)]
    if all(w in _GENERIC or w in _VERBS for w in words):  # "files", "the_code": no value
        return None
    params = ask.tools[tool]
    group = _group_of(tool)
    path_param = alias_target("path", params)
    pattern_param = alias_target("pattern", params)
    if group == "find":
        param = pattern_param
    elif _PATH_LIKE.fullmatch(rest) or ask.exists(rest):
        param = path_param
    else:
        param = pattern_param if group is None else None
    return None if param is None or ask.given(tool, param) else param


def _close_spelling(ask: _Ask) -> Repair | None:
    norm = normalize_name(ask.name)
    ranked = sorted(((_similarity(norm, t), t) for t in ask.tools), key=lambda p: -p[0])
    if not ranked or ranked[0][0] < _CLOSE_SPELLING:
        return None
    if len(ranked) > 1 and ranked[0][0] - ranked[1][0] < _SPELLING_MARGIN:
        return None
    return Repair(ranked[0][1], ask.args, "a close spelling")


def _shared_words(ask: _Ask) -> Repair | None:
    tool = _best_by_words(ask.name, ask.tools)
    return Repair(tool, ask.args, "shared words") if tool else None


def _best_by_words(name: str, tools: Iterable[str]) -> str | None:
    """The one tool whose words best account for every word of ``name``, or ``None``."""
    words = [_stem(w) for w in _words(name)]
    scored = sorted(
        ((score, tool) for tool in tools if (score := _word_score(words, tool)) is not None),
        key=lambda pair: -pair[0],
    )
    if not scored or scored[0][0] < 2:  # at least a verb, or two of the tool's words
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    return scored[0][1]


def _word_score(words: Sequence[str], tool: str) -> int | None:
    """How well ``tool``'s name accounts for ``words``; ``None`` if one is unexplained."""
    own = {_stem(w) for w in _words(tool)}
    verbs = {_VERBS[w] for w in own if w in _VERBS}
    score = 0
    for word in words:
        if word in own:
            score += 3 if word in _VERBS else 1
        elif _VERBS.get(word) in verbs:
            score += 2
        elif word not in _GENERIC:
            return None
    return score


def _group_of(tool: str) -> str | None:
    groups = {_VERBS[w] for w in (_stem(w) for w in _words(tool)) if w in _VERBS}
    return groups.pop() if len(groups) == 1 else None


def _words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def _stem(word: str) -> str:
    """``files`` -> ``file``: enough plural folding for tool names."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _clean(rest: str) -> str:
    """The argument part of a name: ``(path="a.py")`` -> ``a.py``."""
    text = rest.strip().strip("()\"'` ").strip()
    text = re.sub(r"^[A-Za-z_]\w*\s*=\s*", "", text)
    return text.strip("()\"'` ").strip()


def _similarity(norm: str, tool: str) -> float:
    return difflib.SequenceMatcher(None, norm, normalize_name(tool)).ratio()
