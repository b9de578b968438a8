"""Open a session store from its URL (cheap to import: no LangChain, no database driver)."""

from __future__ import annotations

import functools
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from leanloop.exceptions import SessionError
from leanloop.sessions.urls import redact_url  # also named from here (leanloop.sessions)

if TYPE_CHECKING:
    from leanloop.sessions.model import SessionStore

__all__ = [
    "SHARED_STORES",
    "open_store",
    "redact_url",
    "shared_store",
    "sqlite_path",
    "sqlite_url",
    "store_key",
]

_WINDOWS_DRIVE = re.compile(r"^/[A-Za-z]:[\\/]")

SHARED_STORES = 16
"""How many stores :func:`shared_store` keeps (the least recently asked for go first)."""

_shared: OrderedDict[str, SessionStore] = OrderedDict()
"""Per store (:func:`store_key`): the process's store. Guarded by ``_shared_guard``, a
plain lock: callers run on several event loops, in several OS threads."""
_shared_guard = threading.Lock()


def sqlite_path(url: str) -> Path:
    """The file of a ``sqlite:///ABSOLUTE/PATH`` URL.

    Everything after ``sqlite://`` is the path, as it is (no ``%`` decoding, no query);
    more than one leading slash is the same as one, so ``f"sqlite:///{path}"`` works too.

    Raises:
        SessionError: Not a ``sqlite://`` URL, or its path is not absolute.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() != "sqlite":
        msg = f"not a sqlite:// URL: {redact_url(url)!r}"
        raise SessionError(msg)
    if not rest.startswith("/"):
        msg = (
            f"session store {url!r}: the path must be absolute (sqlite:///ABSOLUTE/PATH,"
            " three slashes then the path)"
        )
        raise SessionError(msg)
    text = "/" + rest.lstrip("/")
    if _WINDOWS_DRIVE.match(text):
        text = text[1:]  # sqlite:///C:/folder/file.db
    path = Path(text)
    if not path.is_absolute() or not path.name:
        msg = f"session store {url!r}: no database file in the path"
        raise SessionError(msg)
    return path


def sqlite_url(path: str | os.PathLike[str]) -> str:
    """The ``sqlite:///`` URL of a database file (made absolute against the working folder)."""
    return "sqlite:///" + Path(os.path.abspath(path)).as_posix().lstrip("/")


def open_store(url: str) -> SessionStore:
    """The session store at ``url``; nothing is opened until the first call.

    Args:
        url: ``sqlite:///ABSOLUTE/PATH`` (its folders and tables are created on first
            use) or ``postgres://…`` / ``postgresql://…`` (libpq's URL; the tables are
            created on first use; needs ``pip install 'leanloop[postgres]'``).

    Raises:
        SessionError: The URL is neither, or psycopg is missing for a postgres one.
    """
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "sqlite":
        from leanloop.sessions.sqlite import SqliteStore  # noqa: PLC0415 - aiosqlite on use

        return SqliteStore(url, sqlite_path(url))
    if scheme in {"postgres", "postgresql"}:
        try:
            from leanloop.sessions.postgres import (  # noqa: PLC0415 - optional extra
                PostgresStore,
            )
        except ImportError as exc:
            msg = (
                f"session store {redact_url(url)!r} needs psycopg ({exc}):"
                " pip install 'leanloop[postgres]'"
            )
            raise SessionError(msg) from exc
        return PostgresStore(url)
    msg = (
        f"unknown session store {redact_url(url)!r}: use sqlite:///ABSOLUTE/PATH"
        " or postgres://USER@HOST/DATABASE"
    )
    raise SessionError(msg)


@functools.lru_cache(maxsize=256)
def store_key(url: str) -> str:
    """One key per store, however its URL is spelled (``sqlite:///x`` = ``sqlite:////x``).

    Asked on every turn (``thread_lock``, ``shared_store``): parsing the path is most of
    taking an uncontended thread lock, so the answers are kept.
    """
    if url.lower().startswith("sqlite://"):
        try:
            return f"sqlite:{sqlite_path(url)}"
        except SessionError:
            return url
    return url


def shared_store(url: str) -> SessionStore:
    """The process's store at ``url``: the same object for every turn, on every event loop.

    A turn that opened a store of its own and closed it at the end paid for a new
    connection each turn and read the whole thread back each turn; the shared store keeps
    its connection (a SQLite store closes it after a while idle, and opens it again on
    use) and each thread's decoded session, so a turn reads only what is new. Do not
    close it; :func:`open_store` gives a store of the caller's own.

    Raises:
        SessionError: As :func:`open_store`.
    """
    key = store_key(url)
    with _shared_guard:
        store = _shared.get(key)
        if store is None:
            store = _shared[key] = open_store(url)
            while len(_shared) > SHARED_STORES:
                # Dropped, not closed: a turn may be using it still, and an idle SQLite
                # store holds no connection.
                _shared.popitem(last=False)
        _shared.move_to_end(key)
        return store
