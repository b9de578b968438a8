"""Resolve ``package.module:attribute`` import paths; lazy exports for packages.

A module that is found only in an agents file's folder (``mytools.py`` beside the file)
is imported without changing the process's import state: the folder is on ``sys.path``
only while the import runs, and the modules imported from it are then taken out of
``sys.modules`` and kept for that folder alone. A host that loads the files of several
tenants, each with its own ``mytools.py``, gets each tenant's own module, and its own
``import mytools`` finds none of them (issue 28, ADR 0023).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from leanloop.exceptions import InvalidArgument

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


class ImportPathError(InvalidArgument):
    """An import path is malformed or names nothing importable; the message says which.

    Still a :class:`ValueError` (through :class:`~leanloop.exceptions.InvalidArgument`):
    callers that catch ``ValueError`` around an import go on catching it.
    """


def is_import_path(text: str) -> bool:
    """Return whether ``text`` looks like ``package.module:attribute``."""
    module, sep, attr = text.partition(":")
    return bool(sep and module and attr)


def import_object(path: str, *, near: Path | None = None) -> Any:
    """Import and return the object named by ``package.module:attribute``.

    Args:
        path: The import path; the attribute part may be dotted (``mod:Class.factory``).
        near: The agents file's folder, searched after the Python path (so a file there
            never shadows a package). A module found only there is imported in isolation:
            ``sys.path`` and ``sys.modules`` are left as they were, and the folder's
            modules are kept for it alone (imported once, never served to another folder).

    Raises:
        ImportPathError: With a one-line message saying what could not be found and where
            it was looked for.
    """
    module_name, sep, attr_path = path.partition(":")
    if not (sep and module_name and attr_path):
        msg = f"{path!r} is not an import path of the form 'package.module:name'"
        raise ImportPathError(msg)
    top = module_name.partition(".")[0]
    if near is None or _on_python_path(top) or not _in_folder(top, near):
        return _resolve(module_name, attr_path, near)
    with _isolated(near):
        obj = _resolve(module_name, attr_path, near)
        _complete(obj)  # a nested class (``mod:Outer.Inner``) is no module's own name
        return obj


def _resolve(module_name: str, attr_path: str, near: Path | None) -> Any:
    """Import ``module_name`` and follow ``attr_path``; every failure an ImportPathError."""
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


# --- modules beside an agents file --------------------------------------------------------

_folder_lock = threading.RLock()
"""Held while a folder's modules are in ``sys.modules`` (re-entrant: a module of one
folder may load another agents file while it is imported)."""
_folder_modules: dict[Path, dict[str, ModuleType]] = {}
"""Per agents-file folder: the modules imported from it, by name (never in sys.modules)."""


def _on_python_path(top: str) -> bool:
    """Whether the top-level module ``top`` is imported or importable without the folder."""
    if top in sys.modules:
        return True
    try:  # a name without dots: the finders look, nothing is imported
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def _in_folder(top: str, folder: Path) -> bool:
    try:
        return importlib.machinery.PathFinder.find_spec(top, [str(folder)]) is not None
    except (ImportError, OSError, ValueError):
        return False


@contextmanager
def _isolated(folder: Path) -> Iterator[None]:
    """Import from ``folder`` inside the block; then leave ``sys.path`` and ``sys.modules``
    as they were, the folder's modules kept for the folder.

    Its modules imported before are put back in ``sys.modules`` for the block, so they are
    not run again and the new module imports the same ones. Other threads importing at
    the same time may see the folder on the path for that while: the block is short and
    runs only when an agent is built.
    """
    home = folder.resolve()
    entry = str(folder)
    with _folder_lock:
        own = _folder_modules.setdefault(home, {})
        before = set(sys.modules)
        displaced = {name: sys.modules[name] for name in own if name in sys.modules}
        sys.modules.update(own)
        added = entry not in sys.path
        if added:
            sys.path.append(entry)  # last: a file there never shadows a package
        importlib.invalidate_caches()  # the path finders cache each folder's listing
        try:
            yield
        finally:
            if added:
                sys.path.remove(entry)
                sys.path_importer_cache.pop(entry, None)
            # Judged first, taken out after: a submodule is judged by its package.
            taken = [
                name
                for name in (set(sys.modules) - before) | set(own)
                if name in sys.modules and _comes_from(name, home)
            ]
            for name in taken:
                if name not in own:  # new: finished while it is still in sys.modules
                    for value in list(vars(sys.modules[name]).values()):
                        _complete(value)
                own[name] = sys.modules.pop(name)
            sys.modules.update(displaced)


def _comes_from(name: str, folder: Path) -> bool:
    """Whether module ``name`` was imported from ``folder`` (its top-level module lies there).

    By the top-level module's place, not by each file's: a virtual environment inside the
    folder (``./.venv``) holds installed packages, which must stay shared.
    """
    top = sys.modules.get(name.partition(".")[0])
    spec = getattr(top, "__spec__", None)
    if spec is None:
        return False
    places = list(spec.submodule_search_locations or [])  # a package: its own folder
    if not places and spec.origin:
        places = [spec.origin]  # a module: its file
    try:
        return any(Path(place).resolve().parent == folder for place in places)
    except (OSError, ValueError, RuntimeError):
        return False


def _complete(obj: Any) -> None:
    """Finish a pydantic model whose annotations name what its module defines later.

    Pydantic resolves such names when the model is first used, in
    ``sys.modules[model.__module__]``, where a module beside the file no longer is; so it
    is done now, while the module is there. A model that still cannot be finished is left
    as it is: its first use says what is missing, as it would have.
    """
    try:
        if isinstance(obj, type) and getattr(obj, "__pydantic_complete__", True) is False:
            rebuild = getattr(obj, "model_rebuild", None)
            if callable(rebuild):
                rebuild(raise_errors=False)
    except Exception:  # the model's own first use reports what is wrong, as it would have
        return
