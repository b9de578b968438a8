"""``${VAR}`` interpolation in the string values of an agents file.

Rules: ``${NAME}`` is the variable's value (an error when it is not set);
``${NAME:-default}`` falls back to ``default`` when the variable is unset or empty,
as in the shell, and the default may itself be a reference (``${A:-${B}}``);
``$${`` writes a literal ``${``. Keys are never interpolated. A value that is one whole
reference (``max_rounds: ${ROUNDS:-5}``) is converted to the type the
schema asks for by the loader; a value that only contains one stays a string.

Values are masked in messages only when they look secret: the key (``api_key``,
``token``, ``password`` …) or the variable's name (``${OPENAI_API_KEY}``) says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from leanloop.spec.yamlsource import KeyPath

__all__ = ["Interpolation", "interpolate", "looks_secret"]

# `$${` first so that an escaped reference is never read as a real one.
# A default may hold one more reference: ${A:-${B}} (as in the shell and Compose).
_TOKEN = re.compile(r"\$\$\{|\$\{(?P<body>(?:[^{}]|\$\{[^{}]*\})*)\}|\$\{")
_BODY = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>.*))?", re.DOTALL)
_SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "password",
        "passwd",
        "secret",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "cookie",
        "bearer",
    }
)


def looks_secret(name: str) -> bool:
    """Whether a key or variable name says its value is a secret (``api_key``, ``TOKEN``)."""
    # The last word decides: `api_key`, `GITHUB_TOKEN` are secrets; `token_budget_percent`
    # and `max_tokens` are not.
    words = [word for word in re.split(r"[^a-z0-9]+", name.lower()) if word]
    return bool(words) and words[-1] in _SECRET_WORDS


@dataclass(slots=True)
class Interpolation:
    """The interpolated data, which values came from the environment, and the problems."""

    data: Any
    secrets: set[KeyPath] = field(default_factory=set)
    """Paths whose value used a secret-looking variable or key: never shown in messages."""
    interpolated: set[KeyPath] = field(default_factory=set)
    """Paths whose value used a variable (its type is the loader's to convert)."""
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
    secret = any(looks_secret(str(part)) for part in path)

    def replace(match: re.Match[str]) -> str:
        nonlocal used_variable, secret
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
        secret = secret or looks_secret(name)
        value = environ.get(name)
        if default is not None:
            return value if value else _TOKEN.sub(replace, default)
        if value is None:
            problems.append(
                f"environment variable {name!r} is not set "
                f"(write ${{{name}:-default}} to give a default)"
            )
            return ""
        return value

    result = _TOKEN.sub(replace, text)
    if used_variable:
        out.interpolated.add(path)
        if secret:
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
