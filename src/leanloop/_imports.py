"""Resolve ``package.module:attribute`` import paths; lazy exports for packages."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["ImportPathError", "import_object", "is_import_path", "lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package that imports its names on first use.

    Args:
        package: The package's ``__name__``.
        homes: Each public name → the module it lives in (absolute, or relative to
            ``package`` when it starts with a dot).

    The CLI's cheap commands (``--help``, ``validate``) must not pay for LangChain, so
    packages whose modules import it expose their names this way.
    """
    namespace = importlib.import_module(package).__dict__

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value  # later lookups find it without calling this again
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *homes})

    return getattr_, dir_


def _append_to_path(folder: Path) -> None:
    text = str(folder)
    if text not in sys.path:
        sys.path.append(text)
        importlib.invalidate_caches()


class ImportPathError(ValueError):
    """An import path is malformed or names nothing importable; the message says which."""


def is_import_path(text: str) -> bool:
    """Return whether ``text`` looks like ``package.module:attribute``."""
    module, sep, attr = text.partition(":")
    return bool(sep and module and attr)


def import_object(path: str, *, near: Path | None = None) -> Any:
    """Import and return the object named by ``package.module:attribute``.

    Args:
        path: The import path; the attribute part may be dotted (``mod:Class.factory``).
        near: The agents file's folder: appended to ``sys.path`` (after everything
            installed, so a file there never shadows a package), so that tools kept next
            to the file import as they would from that folder.

    Raises:
        ImportPathError: With a one-line message saying what could not be found and where
            it was looked for.
    """
    module_name, sep, attr_path = path.partition(":")
    if not (sep and module_name and attr_path):
        msg = f"{path!r} is not an import path of the form 'package.module:name'"
        raise ImportPathError(msg)
    if near is not None:
        _append_to_path(near)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        where = f"; looked in {near} and the Python path" if near is not None else ""
        msg = f"cannot import module {module_name!r} ({exc}){where}"
        raise ImportPathError(msg) from exc
    except (Exception, SystemExit) as exc:  # a user module failing on import is a user mistake
        msg = f"importing module {module_name!r} failed: {type(exc).__name__}: {exc}"
        raise ImportPathError(msg) from exc
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            msg = f"module {module_name!r} has no attribute {attr_path!r}"
            raise ImportPathError(msg) from exc
    return obj
