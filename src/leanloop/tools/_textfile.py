"""Text files as the edit tools see them, and writes that stay inside the workspace.

A file is a list of lines, each with its own line ending, split exactly where
``read_file`` splits them (``\\n``, ``\\r\\n`` and a lone ``\\r``), so line 12 of an edit is
line 12 of what the model read. Lines an edit leaves alone keep their bytes; new lines get
the file's usual ending, so a CRLF file stays CRLF. A UTF-8 byte-order mark is kept too.
Files that are not UTF-8 text (a NUL byte near the start, or bytes that do not decode)
are refused rather than rewritten with replacement characters.

Writes never follow a link: the folder is opened component by component from the
workspace root with ``O_NOFOLLOW`` (:func:`~._paths.open_under`, as
:func:`~._paths.open_inside` reads), the new content goes to a temporary file beside the
target and is renamed over it, so a reader never sees half a file and a link swapped in
after the path check is replaced, not followed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from leanloop.tools._paths import (
    SKIPPED_DIRS,
    PathRefused,
    display_path,
    open_inside,
    open_under,
)

__all__ = [
    "MAX_EDIT_BYTES",
    "TextDoc",
    "line_of",
    "load_text",
    "model_text",
    "refuse_special",
    "remove_inside",
    "sha256_of",
    "split_lines",
    "write_inside",
]

MAX_EDIT_BYTES = 4 * 1024 * 1024
"""Larger files are refused by the edit tools: they are data or build output."""
_SNIFF_BYTES = 8192
"""As read_file: a NUL byte in this much of the start makes a file binary."""
_BOM = b"\xef\xbb\xbf"
_BREAK = re.compile(r"\r\n|\r|\n")

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_SAFE = os.open in os.supports_dir_fd and bool(_NOFOLLOW)


def split_lines(text: str) -> list[str]:
    """``text`` as lines with their endings, split where ``read_file`` splits them."""
    lines: list[str] = []
    start = 0
    for match in _BREAK.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def line_of(text: str, index: int) -> int:
    """The 1-based line of ``text`` that character ``index`` is on (as read_file numbers)."""
    return len(_BREAK.findall(text, 0, index)) + 1


def model_text(text: str) -> str:
    """Text from the model with every line break as ``\\n`` (it may send ``\\r\\n``)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def sha256_of(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return line[-1] if line[-1:] in ("\n", "\r") else ""


@dataclass(slots=True)
class TextDoc:
    """A text file's lines, each with its own ending (the last may have none)."""

    lines: list[str]
    newline: str = "\n"
    """The ending new lines get: the file's most common one (``\\n`` for a new file)."""
    bom: bool = False

    @classmethod
    def parse(cls, text: str, *, bom: bool = False) -> TextDoc:
        """The document of ``text`` (decoded, without its byte-order mark)."""
        lines = split_lines(text)
        endings = Counter(_ending(line) for line in lines)
        endings.pop("", None)
        newline = endings.most_common(1)[0][0] if endings else "\n"
        return cls(lines, newline, bom)

    @property
    def text(self) -> str:
        """The whole text, endings as they are."""
        return "".join(self.lines)

    def encode(self) -> bytes:
        """The bytes to write: UTF-8, with the byte-order mark when the file had one."""
        return (_BOM if self.bom else b"") + self.text.encode("utf-8")

    @property
    def uniform(self) -> bool:
        """Whether every line break of the file is :attr:`newline`."""
        return all(_ending(line) in ("", self.newline) for line in self.lines)

    def normalized(self) -> str:
        """The text with ``\\n`` breaks when the file's breaks are all alike, else as it is.

        What ``str_replace`` matches the model's text against: the model writes ``\\n``.
        """
        return self.text.replace(self.newline, "\n") if self.uniform else self.text

    def with_normalized(self, text: str) -> TextDoc:
        """A document of ``text`` (as :meth:`normalized` gives it) with this file's breaks."""
        if self.uniform and self.newline != "\n":
            text = text.replace("\n", self.newline)
        return TextDoc(split_lines(text), self.newline, self.bom)

    def new_lines(self, text: str) -> list[str]:
        """The model's ``text`` as lines ending in :attr:`newline` (``""``: no line).

        One final line break is part of the last line, not an empty line after it, so
        ``"a\\nb"`` and ``"a\\nb\\n"`` are the same two lines; ``"\\n"`` is one empty line.
        """
        if not text:
            return []
        body = model_text(text).removesuffix("\n")
        return [line + self.newline for line in body.split("\n")]

    def spliced(self, start: int, stop: int, new: list[str]) -> TextDoc:
        """This document with ``lines[start:stop]`` replaced by ``new`` (0-based).

        A file that ended without a line break still does when its last line was
        replaced; every line but the last ends in a break.
        """
        lines = [*self.lines[:start], *new, *self.lines[stop:]]
        ended = not self.lines or _ending(self.lines[-1]) != ""
        for index, line in enumerate(lines[:-1]):
            if _ending(line) == "":
                lines[index] = line + self.newline
        if lines and not ended and stop >= len(self.lines) and new:
            lines[-1] = lines[-1].removesuffix(_ending(lines[-1]))
        return TextDoc(lines, self.newline, self.bom)


def load_text(base: Path, target: Path) -> tuple[bytes, TextDoc] | None:
    """The bytes and the document of the file ``target``; ``None`` when there is none.

    Raises:
        PathRefused: It is not a regular file, is too large, binary or not UTF-8, or
            cannot be read; the message says which.
    """
    shown = display_path(base, target)
    if not target.exists():
        return None
    try:
        with open(open_inside(base, target), "rb") as handle:
            data = handle.read(MAX_EDIT_BYTES + 1)
    except OSError as exc:
        msg = f"cannot read {shown} ({exc.strerror or exc})"
        raise PathRefused(msg) from exc
    if len(data) > MAX_EDIT_BYTES:
        msg = (
            f"{shown} is over {MAX_EDIT_BYTES >> 20} MB; the edit tools only change "
            "smaller text files"
        )
        raise PathRefused(msg)
    if b"\0" in data[:_SNIFF_BYTES]:
        size = f"{len(data):,} bytes"
        msg = f"{shown} looks like a binary file ({size}); the edit tools only change text"
        raise PathRefused(msg)
    bom = data.startswith(_BOM)
    try:
        text = data[len(_BOM) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = (
            f"{shown} is not UTF-8 text (byte {exc.start:,} cannot be decoded); the edit "
            "tools only change UTF-8 files"
        )
        raise PathRefused(msg) from None
    return data, TextDoc.parse(text, bom=bom)


def refuse_special(base: Path, target: Path) -> None:
    """Refuse an edit of a folder or of anything inside a version-control folder.

    ``.git/hooks`` and ``.git/config`` run code on the user's next git command: the
    edit tools never change them (the read tools do not show them either).
    """
    shown = display_path(base, target)
    if target == base or target.is_dir():
        msg = f"{shown} is a folder; give the path of a file"
        raise PathRefused(msg)
    if any(part in SKIPPED_DIRS for part in target.relative_to(base).parts):
        msg = f"{shown} is inside a version-control folder; the edit tools do not change it"
        raise PathRefused(msg)


def write_inside(base: Path, target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` (resolved, inside ``base``) atomically, no link followed.

    Missing folders are made; an existing file keeps its permission bits.

    Raises:
        OSError: The write failed (the file is then unchanged).
    """
    parts = target.relative_to(base).parts
    if not _SAFE:  # no openat here (Windows): by name, as read_file does there
        target.parent.mkdir(parents=True, exist_ok=True)
        spare = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        spare.write_bytes(data)
        os.replace(spare, target)
        return
    folder = open_under(base, parts[:-1], directory=True, create=True)
    name = parts[-1]
    temp = f".{name}.{secrets.token_hex(4)}.leanloop-tmp"
    try:
        mode: int | None = None
        with contextlib.suppress(FileNotFoundError):
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
            mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        fd = os.open(temp, flags, 0o666, dir_fd=folder)
        try:
            with open(fd, "wb") as handle:
                handle.write(data)
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def remove_inside(base: Path, target: Path) -> None:
    """Delete the file ``target`` (resolved, inside ``base``) without following a link.

    Raises:
        OSError: It could not be deleted.
    """
    parts = target.relative_to(base).parts
    if not _SAFE:
        target.unlink()
        return
    folder = open_under(base, parts[:-1], directory=True)
    try:
        info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.unlink(parts[-1], dir_fd=folder)
    finally:
        os.close(folder)
