"""Low-level readers for tool-call text: balanced-bracket scanning and lenient literals.

Everything here is fed untrusted model output, possibly a megabyte of it, so each reader
is linear in what it reads (regexes jump over plain text at C speed; no backtracking
patterns), never raises on bad input, and shares a :class:`ScanBudget` so that a reply
full of openers that never close cannot make the parser quadratic.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ScanBudget",
    "lenient_literal",
    "lenient_loads",
    "literal_value",
    "one_line",
    "scan_balanced",
]

# One token per match: a whole string literal (unrolled loop, linear, no nested quantifier
# over the same characters), a bracket, or a lone quote that opens a string never closed.
_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]|"', re.DOTALL)
_PYTHON_TOKENS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\''
    r'|"[^"\\]*(?:\\.[^"\\]*)*"|\'[^\'\\]*(?:\\.[^\'\\]*)*\''
    r"|[{}\[\]()]|[\"']",
    re.DOTALL,
)
_OPENERS = "{[("

# Python-literal fallback: anything larger is not worth an AST (and json already failed).
_MAX_LITERAL_CHARS = 256_000
_MAX_DEPTH = 64
_JSON_NAMES: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}


@dataclass(slots=True)
class ScanBudget:
    """How many more characters the bracket scanner may read for one reply.

    Attributes:
        remaining: Characters left; once spent, further scans report "does not close".
    """

    remaining: int

    @classmethod
    def for_text(cls, text: str) -> ScanBudget:
        """A budget of a few passes over ``text``: enough for honest replies."""
        return cls(remaining=2 * len(text) + 65_536)


def scan_balanced(text: str, start: int, *, budget: ScanBudget, python: bool = False) -> int | None:
    """Find where the bracketed value opening at ``text[start]`` closes.

    Brackets inside strings do not count, so fences or braces quoted in arguments do not
    cut the value short.

    Args:
        text: The whole reply.
        start: Index of the opening ``{``, ``[`` (or ``(`` when ``python``).
        budget: Shared reading allowance for this reply.
        python: Also count parentheses and read single-quoted and triple-quoted strings.

    Returns:
        The index just past the closing bracket, or None when it never closes (or the
        budget is spent).
    """
    if budget.remaining <= 0 or start >= len(text) or text[start] not in _OPENERS:
        return None
    tokens = _PYTHON_TOKENS if python else _JSON_TOKENS
    depth = 0
    end: int | None = None
    for token in tokens.finditer(text, start):
        char = token.group()
        if len(char) > 1:
            continue  # a whole string literal: brackets inside it do not count
        if char in "\"'":
            break  # a string that never closes
        depth += 1 if char in _OPENERS else -1
        if depth == 0:
            end = token.end()
            break
    budget.remaining -= (end if end is not None else len(text)) - start
    return end


def lenient_loads(source: str) -> Any:
    """Read a JSON value the way models write it, or raise ``ValueError``.

    Strict JSON first (raw newlines inside strings allowed); then Python-literal syntax, so
    single quotes, trailing commas and ``True``/``None`` are read too.
    """
    try:
        return json.loads(source, strict=False)
    except (ValueError, RecursionError) as exc:
        json_error = exc
    try:
        return lenient_literal(source)
    except ValueError:
        pass
    msg = one_line(str(json_error))
    raise ValueError(msg)


def lenient_literal(source: str) -> Any:
    """Evaluate a Python/JSON-flavoured literal without executing anything.

    Raises:
        ValueError: When ``source`` is not a plain literal (names other than the JSON and
            Python constants, calls, operators, f-strings) or is too large or deep.
    """
    if len(source) > _MAX_LITERAL_CHARS:
        msg = "value too large to read leniently"
        raise ValueError(msg)
    try:
        tree = ast.parse(source.strip(), mode="eval")
        return literal_value(tree.body)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError) as exc:
        msg = f"not a literal: {one_line(str(exc))}"
        raise ValueError(msg) from None


def literal_value(node: ast.AST, depth: int = 0) -> Any:
    """Turn one literal AST node into a JSON-compatible value (``ValueError`` otherwise)."""
    if depth > _MAX_DEPTH:
        msg = "nested too deeply"
        raise ValueError(msg)
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return node.value
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = literal_value(node.operand, depth + 1)
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal_value(item, depth + 1) for item in node.elts]
    if isinstance(node, ast.Dict):
        return _literal_dict(node, depth)
    msg = f"unsupported {type(node).__name__}"
    raise ValueError(msg)


def _literal_dict(node: ast.Dict, depth: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:  # ``**spread`` is not a literal
            msg = "unsupported dict unpacking"
            raise ValueError(msg)
        result[str(literal_value(key, depth + 1))] = literal_value(value, depth + 1)
    return result


def one_line(text: str, limit: int = 160) -> str:
    """Collapse ``text`` to one line of at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
