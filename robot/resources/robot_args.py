"""Reading Robot keyword arguments, which arrive as text."""

from __future__ import annotations

__all__ = ["truthy"]


def truthy(value: object) -> bool:
    """``false``, ``no``, ``off``, ``0`` and the empty text are false; other text is true."""
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "no", "off", "0", "")
    return bool(value)
