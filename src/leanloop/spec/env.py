"""``${VAR}`` interpolation in the string values of an agents file.

Rules: ``${NAME}`` is the variable's value (an error when it is not set);
``${NAME:-default}`` falls back to ``default`` when the variable is unset or empty,
as in the shell; ``$${`` writes a literal ``${``. Keys are never interpolated, and
results stay strings: the schema then judges them like any other string.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from leanloop.spec.yamlsource import KeyPath

__all__ = ["Interpolation", "interpolate"]

# `$${` first so that an escaped reference is never read as a real one.
_TOKEN = re.compile(r"\$\$\{|\$\{(?P<body>[^}]*)\}|\$\{")
_BODY = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>.*))?", re.DOTALL)


@dataclass(slots=True)
class Interpolation:
    """The interpolated data, which values came from the environment, and the problems."""

    data: Any
    secrets: set[KeyPath] = field(default_factory=set)
    """Paths whose value used a variable: never shown in messages."""
    problems: list[tuple[KeyPath, str]] = field(default_factory=list)


def interpolate(data: Any, *, environ: Mapping[str, str]) -> Interpolation:
    """Resolve ``${...}`` references in every string value of ``data``.

    Args:
        data: Plain data (mappings, lists, scalars) as read from the file.
        environ: Where variables are looked up (``os.environ`` in normal use).

    Returns:
        A new copy of the data with references resolved, plus the paths that used a
        variable and one ``(path, message)`` problem per unresolvable value.
    """
    result = Interpolation(data=None)
    result.data = _walk(data, (), environ, result)
    return result


def _walk(value: Any, path: KeyPath, environ: Mapping[str, str], out: Interpolation) -> Any:
    if isinstance(value, Mapping):
        return {key: _walk(item, (*path, key), environ, out) for key, item in value.items()}
    if isinstance(value, (list, tuple)):  # tuples from Python callers become lists
        return [_walk(item, (*path, index), environ, out) for index, item in enumerate(value)]
    if isinstance(value, str) and "${" in value:
        return _substitute(value, path, environ, out)
    return value


def _substitute(text: str, path: KeyPath, environ: Mapping[str, str], out: Interpolation) -> str:
    problems: list[str] = []
    used_variable = False

    def replace(match: re.Match[str]) -> str:
        nonlocal used_variable
        found = match.group(0)
        if found == "$${":
            return "${"
        body = match.group("body")
        parsed = _BODY.fullmatch(body) if body is not None else None
        if parsed is None:
            problems.append(_malformed(found))
            return found
        used_variable = True
        name, default = parsed.group("name"), parsed.group("default")
        value = environ.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            problems.append(
                f"environment variable {name!r} is not set "
                f"(write ${{{name}:-default}} to give a default)"
            )
            return ""
        return value

    result = _TOKEN.sub(replace, text)
    if used_variable:
        out.secrets.add(path)
    out.problems.extend((path, message) for message in problems)
    return result


def _malformed(token: str) -> str:
    if not token.endswith("}"):
        return "'${' is not closed; write ${NAME} or ${NAME:-default}, or $${ for a literal '${'"
    return (
        f"{token!r} is not a valid reference; write ${{NAME}} or ${{NAME:-default}}, "
        "or $${ for a literal '${'"
    )
