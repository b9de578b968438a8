"""Read a unified diff (one file or several) and apply its hunks to a file's lines.

The diff is parsed by ``unidiff`` (git headers, ``a/`` and ``b/`` prefixes, ``/dev/null``
for a new or deleted file, timestamps, ``\\ No newline at end of file``). Before that,
each hunk's header is counted again from its body: models often miscount the lengths
in ``@@ -3,4 +3,5 @@``, which ``unidiff`` rightly refuses, and a header without numbers
(``@@ @@``) gets numbers, its hunk then placed where its lines match once.

A hunk applies where its old lines (context and removed) are in the file, the match
nearest the line its header names (and the drift of the hunk before it), as ``patch``
does; when no exact match exists, lines that differ only in trailing whitespace match.
Nothing here writes: :func:`apply_hunks` returns the new lines or raises
:class:`PatchError` with a one-line message, and the caller writes every file or none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.tools import ToolException
from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk as DiffHunk
from unidiff.patch import PatchSet

__all__ = ["FilePatch", "Hunk", "HunkLine", "PatchError", "apply_hunks", "parse_patch"]

_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_LOOSE_HEADER = re.compile(r"^@@[^@]*@@ ?(.*)$")
_UNNUMBERED = "leanloop-unnumbered"
"""Put in the section text of a header that had no numbers (``@@ @@``)."""
_DEV_NULL = "/dev/null"


class PatchError(ToolException):
    """A patch that cannot be read or applied; the message is one line for the model."""


@dataclass(frozen=True, slots=True)
class HunkLine:
    """One line of a hunk, without its line ending."""

    kind: str
    """``" "`` (context), ``"-"`` (removed) or ``"+"`` (added)."""
    text: str
    no_newline: bool = False
    """Followed by ``\\ No newline at end of file``."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """One ``@@`` hunk."""

    header: str
    old_start: int | None
    """The old file's line the header names (``None``: the header had no numbers)."""
    lines: tuple[HunkLine, ...]

    @property
    def old(self) -> list[str]:
        """The lines the hunk expects in the file: context and removed."""
        return [line.text for line in self.lines if line.kind != "+"]


@dataclass(frozen=True, slots=True)
class FilePatch:
    """The hunks of one file."""

    old_path: str | None
    """``None``: the patch creates the file (``--- /dev/null``)."""
    new_path: str | None
    """``None``: the patch deletes the file (``+++ /dev/null``)."""
    hunks: tuple[Hunk, ...]

    @property
    def path(self) -> str:
        """The file the patch changes."""
        return self.new_path or self.old_path or ""


def parse_patch(text: str) -> list[FilePatch]:
    """The files and hunks of the unified diff ``text``.

    Raises:
        PatchError: It is not a unified diff, names no file, or changes a binary file.
    """
    body = _recounted(text.replace("\r\n", "\n").replace("\r", "\n"))
    if not any(line.startswith("+++ ") for line in body.split("\n")):
        msg = (
            "the patch names no file: start each file with '--- a/PATH' and '+++ b/PATH' "
            "lines, then its @@ hunks"
        )
        raise PatchError(msg)
    try:
        parsed = PatchSet(body)
    except UnidiffParseError as exc:
        reason = " ".join(str(exc).split())
        msg = f"the patch is not a unified diff ({reason}); nothing was changed"
        raise PatchError(msg) from None
    files: list[FilePatch] = []
    for patched in parsed:
        if patched.is_binary_file:
            msg = f"the patch changes the binary file {patched.path}; only text can be patched"
            raise PatchError(msg)
        old, new = _paths(patched.source_file, patched.target_file)
        hunks = tuple(_hunk(hunk) for hunk in patched)
        if not hunks:
            msg = f"the patch has no @@ hunk for {new or old}; nothing was changed"
            raise PatchError(msg)
        files.append(FilePatch(old, new, hunks))
    if not files:
        msg = (
            "the patch names no file: start each file with '--- a/PATH' and '+++ b/PATH' "
            "lines, then its @@ hunks"
        )
        raise PatchError(msg)
    return files


def _paths(source: str, target: str) -> tuple[str | None, str | None]:
    """The old and new paths, ``a/`` and ``b/`` taken off when the patch uses them."""
    old = None if source == _DEV_NULL else source.strip('"')
    new = None if target == _DEV_NULL else target.strip('"')
    git_style = (old is None or old.startswith("a/")) and (new is None or new.startswith("b/"))
    if git_style:
        old = old[2:] if old is not None else None
        new = new[2:] if new is not None else None
    return old, new


def _hunk(hunk: DiffHunk) -> Hunk:
    lines: list[HunkLine] = []
    for line in hunk:
        kind, value = str(line.line_type), str(line.value)
        if kind == "\\":
            if lines:
                lines[-1] = HunkLine(lines[-1].kind, lines[-1].text, no_newline=True)
            continue
        lines.append(HunkLine(kind, value.removesuffix("\n")))
    if hunk.section_header == _UNNUMBERED:
        return Hunk("@@ @@", None, tuple(lines))
    start, length = int(hunk.source_start), int(hunk.source_length)
    header = f"@@ -{start},{length} +{hunk.target_start},{hunk.target_length} @@"
    return Hunk(header, start, tuple(lines))


def _recounted(text: str) -> str:
    """``text`` with each hunk header's lengths counted from its body."""
    lines = text.rstrip("\n").split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        numbered = _HEADER.match(line)
        loose = None if numbered else _LOOSE_HEADER.match(line)
        if numbered is None and loose is None:
            out.append(line)
            index += 1
            continue
        body: list[str] = []
        index += 1
        while index < len(lines) and _in_body(lines, index):
            body.append(lines[index] or " ")  # an empty line is an empty context line
            index += 1
        old = sum(1 for item in body if item[0] in " -")
        new = sum(1 for item in body if item[0] in " +")
        if numbered is not None:
            start, target, section = numbered.group(1), numbered.group(3), numbered.group(5)
        else:
            start, target, section = "1", "1", _UNNUMBERED
        out.append(f"@@ -{start},{old} +{target},{new} @@ {section}".rstrip())
        out.extend(body)
    return "\n".join(out) + "\n"


def _in_body(lines: Sequence[str], index: int) -> bool:
    line = lines[index]
    if line.startswith(("@@", "diff ")):
        return False
    if line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
        return False
    return line == "" or line[0] in " +-\\"


def _plain(line: str) -> str:
    """A file line without its ending."""
    return line.removesuffix("\n").removesuffix("\r")


def apply_hunks(
    lines: Sequence[str], hunks: Sequence[Hunk], *, newline: str, shown: str
) -> list[str]:
    """``lines`` (with their endings) after every hunk, or :class:`PatchError`.

    Lines the hunks keep keep their own bytes; added lines end in ``newline`` (none
    before ``\\ No newline at end of file``).
    """
    plain = [_plain(line) for line in lines]
    result: list[str] = []
    cursor = drift = 0
    for number, hunk in enumerate(hunks, start=1):
        old = hunk.old
        if hunk.old_start is None:
            pos = _only_match(plain, old, cursor)
            expected = pos if pos is not None else cursor
        else:
            # An empty old side (@@ -5,0 ...) inserts after the line it names.
            expected = max(hunk.old_start - (1 if old else 0), 0) + drift
            pos = _nearest(plain, old, min(max(expected, cursor), len(plain)), cursor)
        if pos is None:
            raise PatchError(
                _mismatch(plain, hunk, number, len(hunks), expected=expected, shown=shown)
            )
        drift += pos - expected
        result.extend(lines[cursor:pos])
        at = pos
        for step in hunk.lines:
            if step.kind == "+":
                result.append(step.text + ("" if step.no_newline else newline))
                continue
            if step.kind == " ":
                result.append(lines[at])
            at += 1
        cursor = at
    result.extend(lines[cursor:])
    for index, line in enumerate(result[:-1]):
        if _plain(line) == line:  # a line that ended the file before lines came after it
            result[index] = line + newline
    return result


def _matches(plain: Sequence[str], old: Sequence[str], pos: int, *, loose: bool) -> bool:
    if pos + len(old) > len(plain):
        return False
    window = plain[pos : pos + len(old)]
    if loose:
        return all(a.rstrip() == b.rstrip() for a, b in zip(window, old, strict=True))
    return list(window) == list(old)


def _nearest(plain: Sequence[str], old: Sequence[str], expected: int, low: int) -> int | None:
    """Where ``old`` starts in ``plain`` at or after ``low``, nearest ``expected``."""
    if not old:
        return expected
    last = len(plain) - len(old)
    order = sorted(range(low, last + 1), key=lambda pos: (abs(pos - expected), pos))
    for loose in (False, True):
        for pos in order:
            if _matches(plain, old, pos, loose=loose):
                return pos
    return None


def _only_match(plain: Sequence[str], old: Sequence[str], low: int) -> int | None:
    """Where ``old`` starts at or after ``low`` when that is one place; else ``None``."""
    if not old:
        return None
    found = [
        pos
        for pos in range(low, len(plain) - len(old) + 1)
        if _matches(plain, old, pos, loose=False)
    ]
    return found[0] if len(found) == 1 else None


def _mismatch(
    plain: Sequence[str], hunk: Hunk, number: int, count: int, *, expected: int, shown: str
) -> str:
    """Why hunk ``number`` does not apply, in one line."""
    which = f"hunk {number} of {count} for {shown} ({hunk.header})"
    advice = f"; nothing was changed: read_file {shown} and make the patch from it as it is now"
    old = hunk.old
    if hunk.old_start is None:
        if old and _nearest(plain, old, 0, 0) is not None:
            return f"{which} matches more than one place; give its @@ line numbers{advice}"
        return f"{which}: its lines are not in the file{advice}"
    pos = min(max(expected, 0), len(plain))
    for offset, want in enumerate(old):
        line = pos + offset
        if line >= len(plain):
            ends = f"the file ends at line {len(plain)}"
            return f"{which}: {ends}, the patch expects {_clip(want)} there{advice}"
        if plain[line].rstrip() != want.rstrip():
            return (
                f"{which} does not match: line {line + 1} is {_clip(plain[line])}, "
                f"the patch expects {_clip(want)}{advice}"
            )
    return f"{which} does not match the file{advice}"


def _clip(text: str, limit: int = 80) -> str:
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return repr(shown)
