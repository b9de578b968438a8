"""Cut long text on a line boundary and say what was left out, and how to get it.

Used by the tool registry's global cap and by the context plan's per-result cap, so the
model always sees the same kind of note. A cut never loses the way back: a tool's own
continuation line (``[lines 1-200 of 812; next: read_file(path=…, offset=201)]``) is
kept and corrected to the last line really shown, and numbered output without one gets
a note that says which line to ask for next.
"""

from __future__ import annotations

import re

__all__ = ["cap_text", "cut_to_line"]

# A tool's closing note: one bracketed line at the end of its output.
_FOOTER_MAX = 300
_NUMBERED = re.compile(r"^\s*(\d+)\|", re.MULTILINE)
_NOTE_ROOM = 160


def cut_to_line(text: str, max_chars: int) -> str:
    """Return the longest prefix of ``text`` of at most ``max_chars`` ending at a line end.

    A single line longer than ``max_chars`` is cut mid-line rather than dropped whole.
    """
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    newline = head.rfind("\n")
    return head[: newline + 1] if newline > 0 else head


def cap_text(text: str, max_chars: int) -> str:
    """Cap ``text`` at ``max_chars`` (notes included) on a line boundary, with a note.

    Args:
        text: The full text.
        max_chars: The most characters the result may have, notes included.

    Returns:
        ``text`` unchanged when it fits; else its head, a one-line note saying how many
        characters were left out and where to continue, and the tool's own continuation
        line (corrected to what is shown) when it had one.
    """
    if len(text) <= max_chars:
        return text
    body, footer = _split_footer(text)
    room = max(max_chars - _NOTE_ROOM - (len(footer) + 1 if footer else 0), 1)
    kept = cut_to_line(body, room)
    omitted = len(text) - len(kept) - (len(footer) + 1 if footer else 0)
    numbers = _NUMBERED.findall(kept)
    last = int(numbers[-1]) if numbers else None
    sep = "" if kept.endswith("\n") else "\n"
    if last is not None:
        how = f"read on from line {last + 1} (offset={last + 1})"
    else:
        how = "ask for less at a time (a smaller range, a narrower pattern)"
    note = f"[{omitted:,} of {len(text):,} characters left out to save context; {how}]"
    if footer and last is not None:
        footer = _continue_from(footer, last)
    return f"{kept}{sep}{note}" + (f"\n{footer}" if footer else "")


def _split_footer(text: str) -> tuple[str, str]:
    """The text without its closing bracketed note, and that note ("" when none)."""
    stripped = text.rstrip("\n")
    head, _, last = stripped.rpartition("\n")
    line = last.strip()
    if head and line.startswith("[") and line.endswith("]") and len(line) <= _FOOTER_MAX:
        return head + "\n", line
    return text, ""


def _continue_from(footer: str, last: int) -> str:
    """The tool's continuation line, pointing after ``last``, the last line shown."""
    footer = re.sub(r"(\blines \d[\d,]*)-[\d,]+", lambda m: f"{m.group(1)}-{last:,}", footer)
    footer = re.sub(r"\boffset=\d+", f"offset={last + 1}", footer)
    footer = footer.replace("; end of file", "")  # it no longer is: the cut came first
    if "next:" not in footer:
        footer = footer[:-1] + f"; next: offset={last + 1}]"
    return footer
