"""Plain values out of a loosely typed run report, for the HTML page of a run.

A report is read from JSON (``leanloop run --json``) or from ``response_metadata``: any
field may be missing or of another type, so each reader here gives a plain value or
``None`` (``[]``) and never raises. :mod:`leanloop.cli.htmlreport` and
:mod:`leanloop.cli.htmlplot` both read the report through them; :func:`esc` is the one
way text from the report enters the page.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "esc",
    "int_of",
    "num",
    "plural",
    "prompt_tokens",
    "rows_of",
    "strings_of",
    "text_of",
]


def rows_of(value: object) -> list[Mapping[str, Any]]:
    """The mappings of a list field (``requests``, ``tool_calls``); ``[]`` for anything else."""
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        return []
    return [row for row in value if isinstance(row, Mapping)]


def strings_of(value: object) -> list[str]:
    """The items of a list field as text (``events``, ``notes``); ``[]`` for anything else."""
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        return []
    return [str(item) for item in value if item is not None]


def int_of(value: object) -> int | None:
    """A finite number as an ``int`` (a float is cut); ``None`` for anything else, ``bool`` too."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value)


def text_of(value: object) -> str | None:
    """A string with something in it; ``None`` for a blank one or anything else."""
    return value if isinstance(value, str) and value.strip() else None


def esc(value: object) -> str:
    """``value`` as text escaped for HTML, quotes too (for element text and attributes)."""
    return html.escape(str(value), quote=True)


def num(value: object) -> str:
    """A whole number with thousands separators (``12,240``), or ``-`` when there is none."""
    number = int_of(value)
    return "-" if number is None else f"{number:,}"


def plural(count: int, word: str) -> str:
    """``1 step``, ``3 steps``: ``count`` and ``word``, an ``s`` added unless one."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def prompt_tokens(request: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The reported and the estimated prompt tokens of one request."""
    reported = int_of(request.get("reported_input_tokens"))
    if reported is None:
        reported = int_of(request.get("input_tokens"))
    return reported, int_of(request.get("estimated_tokens"))
