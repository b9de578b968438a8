"""Open a session store from its URL (cheap to import: no LangChain, no database driver)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from leanloop.exceptions import SessionError
from leanloop.sessions.urls import redact_url  # also named from here (leanloop.sessions)

if TYPE_CHECKING:
    from leanloop.sessions.model import SessionStore

__all__ = ["open_store", "redact_url", "sqlite_path", "sqlite_url"]

_WINDOWS_DRIVE = re.compile(r"^/[A-Za-z]:[\\/]")


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
