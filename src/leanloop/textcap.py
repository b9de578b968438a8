"""Cut long text on a line boundary and say what was left out.

Used by the tool registry's global cap and by the context plan's per-result cap, so the
model always sees the same kind of note and knows how to ask for less.
"""

from __future__ import annotations

__all__ = ["cap_text", "cut_to_line"]


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
    """Cap ``text`` at ``max_chars`` (note included) on a line boundary, with a note.

    Args:
        text: The full text.
        max_chars: The most characters the result may have, note included.

    Returns:
        ``text`` unchanged when it fits, else its head and a one-line note saying how
        many characters were left out and to ask for less.
    """
    if len(text) <= max_chars:
        return text
    # Reserve room for the note so the capped text really stays under max_chars.
    note_room = 160
    kept = cut_to_line(text, max(max_chars - note_room, 1))
    omitted = len(text) - len(kept)
    sep = "" if kept.endswith("\n") else "\n"
    note = (
        f"[{omitted:,} of {len(text):,} characters left out to save context; "
        "ask for less at a time (a smaller range, a narrower pattern)]"
    )
    return f"{kept}{sep}{note}"
