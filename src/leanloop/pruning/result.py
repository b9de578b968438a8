"""What a pruning pass returns: the answers' verified lines merged, and the info block.

:func:`merge` checks every line the pruning model kept against the raw output
(:mod:`leanloop.pruning.verify`) and joins them, in the output's order when the requests
were read best first. The info block says what was kept and how to get the rest: on the
common path one line (:func:`compact_info`), off it a sentence a line
(:func:`info_block`), naming the lines not read (:class:`UnreadRange`) with their reason
and the call that reads them. :class:`PruneOutcome` is what the pass did with one output.

Nothing the pruning model wrote about the output reaches the main model: its own notes go
to the debug log only (see :func:`_notes`); every word of the info block is the pass's.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from leanloop.pruning.extraction import MODEL_NOTE_CHARS, Piece, one_line
from leanloop.pruning.layout import READ_FILE
from leanloop.pruning.markers import PruneParse, restore_reserved
from leanloop.pruning.reading import FINAL_REASONS, NO_FOCUS_WORD
from leanloop.pruning.schema import FOCUS_ARG, PRUNE_ARG
from leanloop.pruning.verify import RawIndex, Verified, strip_line_numbers, verify_lines

__all__ = [
    "Merged",
    "PruneOutcome",
    "UnreadRange",
    "compact_info",
    "info_block",
    "is_final",
    "merge",
    "raw_outcome",
    "unread_notes",
    "unread_ranges",
    "with_footer",
    "without_end_footer",
    "without_kept",
]

logger = logging.getLogger(__name__)

# A pruned result that keeps more than this share of the output says the focus did not
# narrow it (a result that is most of the output is hardly pruned).
_BROAD_SHARE = 0.25
# Unread ranges listed one by one in the info block; the rest are counted.
_UNREAD_LISTED = 12
_READ_FILE_NUMBER = re.compile(r"^\s*(\d+)\|")
# read_file's closing line for a read of the whole file: lines 1-N of N, nothing more.
_WHOLE_FILE = re.compile(r"\[lines 1-([\d,]+) of \1; end of file\]")


@dataclass(frozen=True)
class UnreadRange:
    """Lines of a raw output whose chunk failed, so no extract of them was kept."""

    first_line: int
    """1-based number of the first raw output line not read."""
    last_line: int
    """1-based number of the last raw output line not read."""
    reason: str
    """Why (``"timeout"``, ``"unparseable"``, ``"exception: ..."``)."""

    def span(self, tool_name: str, raw_lines: Sequence[str]) -> str:
        """``12-40``: the range in the file's own numbers for ``read_file``, else the output's."""
        if tool_name == READ_FILE:
            first, last = self._file_lines(raw_lines)
            if first is not None and last is not None:
                return f"{first}-{last}"
        return f"{self.first_line}-{self.last_line}"

    def _file_lines(self, raw_lines: Sequence[str]) -> tuple[int | None, int | None]:
        """The file numbers of the range's first and last numbered lines (read_file).

        Looked for from each end only: the range of a 50 KB file's unread middle holds
        thousands of lines, and every pruned result names its ranges (a scan of each cost
        a few milliseconds a result).
        """
        inward = range(self.first_line, self.last_line + 1)
        first = next((n for i in inward if (n := _file_line(raw_lines, i)) is not None), None)
        if first is None:
            return None, None
        last = next(n for i in reversed(inward) if (n := _file_line(raw_lines, i)) is not None)
        return first, last

    def describe(self, tool_name: str, raw_lines: Sequence[str]) -> str:
        """One line for the info block: which lines, why, and how to ask for them.

        A ``read_file`` output numbers its lines (``  201| text``), so the range is given
        in the file's own numbers with the call that reads it; other tools' ranges are
        lines of the output.
        """
        if tool_name == READ_FILE:
            # The range may begin or end on a line without a number (read_file's own
            # "[lines …]" footer): the file lines are those of the numbered lines inside it.
            first, last = self._file_lines(raw_lines)
            if first is not None and last is not None and last >= first:
                return (
                    f"lines {first}-{last} not read ({self.reason}); "
                    f"read_file(offset={first}, limit={last - first + 1}) reads them"
                )
        return (
            f"lines {self.first_line}-{self.last_line} of the output not read "
            f"({self.reason}); {PRUNE_ARG}=false shows them"
        )


@dataclass(frozen=True)
class PruneOutcome:
    """What the pruning pass did with one tool output."""

    text: str
    """What goes into the ToolMessage: the pruned blocks, or the raw output."""
    pruned: bool
    """Whether ``text`` is a pruned result."""
    chars_raw: int
    """Characters of the raw output."""
    chars_out: int
    """Characters of ``text``, markers included."""
    chunks: int
    """Extraction requests that read the output's lines (0 when skipped); a shapes request
    (:mod:`leanloop.pruning.shapes`) is not one of them, while the report's tally counts it."""
    seconds: float
    """Time the pass took."""
    dropped_lines: int
    """Extracted lines dropped because they are not in the raw output."""
    fallback: str | None
    """Why the raw output was used although a pass ran (``"timeout"``, ``"unparseable"``,
    ``"nothing verifiable"``, ``"exception: ..."``, ``"not smaller"``); else ``None``."""
    skipped: str | None
    """Why no pass ran (``"opted out"``, ``"below min_chars"``); else ``None``."""
    unread: tuple[UnreadRange, ...] = ()
    """Lines of a pruned result whose chunk failed; the info block names them."""
    chars_per_token: float | None = None
    """Characters per token the chunks were sized with (``None`` when no pass ran)."""
    ratio_source: str | None = None
    """Where ``chars_per_token`` came from: ``"server"`` (counted) or ``"estimate"``."""
    reused: bool = False
    """Whether this is the extract of an identical earlier pass of the run (no request)."""


@dataclass(frozen=True)
class Merged:
    """The verified lines of a pass's answers, joined, and how many were claimed."""

    output: str
    notes: list[str]
    claimed: int
    kept: int
    dropped: int


def merge(
    answers: list[PruneParse],
    raw_lines: list[str],
    index: RawIndex | None,
    *,
    ordered: bool = False,
) -> Merged:
    """The answers' verified lines joined; ``ordered``: put back in the output's order
    (requests of windows show lines from all over the output)."""
    kept: list[str] = []
    claimed = dropped = 0
    for answer in answers:
        if not answer.output.strip():
            continue  # this chunk had nothing relevant
        lines = restore_reserved(answer.output).split("\n")
        if index is not None:
            checked = verify_lines(lines, index)
        else:
            stripped = strip_line_numbers(lines)
            checked = Verified(stripped, sum(1 for ln in stripped if ln.strip()), 0)
        kept.extend(checked.lines)
        claimed += checked.claimed
        dropped += checked.dropped
    notes = _notes(answers)
    output = _in_order(kept, raw_lines) if ordered else _tidy(kept)
    return Merged(output, notes, claimed, claimed - dropped, dropped)


def _file_line(raw_lines: Sequence[str], number: int) -> int | None:
    """The file line number a read_file output shows on its line ``number``."""
    if not 1 <= number <= len(raw_lines):
        return None
    match = _READ_FILE_NUMBER.match(raw_lines[number - 1])
    return int(match.group(1)) if match else None


def unread_ranges(failed: list[Piece]) -> list[UnreadRange]:
    """The line ranges of the pieces not read, in order, neighbours of one reason joined
    (each note then names its own ranges exactly)."""
    spans = sorted(
        (first, last, piece.failure or "failed")
        for piece in failed
        for first, last in piece.chunk.ranges
    )
    ranges: list[UnreadRange] = []
    for first, last, reason in spans:
        previous = ranges[-1] if ranges else None
        # Overlapping spans (a chunk split after a refusal) are joined whatever their
        # reasons; touching ones only when they share one.
        if previous is not None and (
            first <= previous.last_line
            or (first == previous.last_line + 1 and previous.reason == reason)
        ):
            ranges.pop()
            reasons = "; ".join(dict.fromkeys([*previous.reason.split("; "), reason]))
            joined = min(first, previous.first_line), max(last, previous.last_line)
            ranges.append(UnreadRange(*joined, reasons))
        else:
            ranges.append(UnreadRange(first, last, reason))
    return ranges


def without_kept(ranges: Sequence[UnreadRange], kept: set[int]) -> list[UnreadRange]:
    """``ranges`` less the raw lines in ``kept`` (a range they cut is split in two)."""
    result: list[UnreadRange] = []
    for unread in ranges:
        first = unread.first_line
        for number in sorted(n for n in kept if unread.first_line <= n <= unread.last_line):
            if number > first:
                result.append(dataclasses.replace(unread, first_line=first, last_line=number - 1))
            first = number + 1
        if first <= unread.last_line:
            result.append(dataclasses.replace(unread, first_line=first))
    return result


def unread_notes(
    unread: Sequence[UnreadRange], tool_name: str, raw_lines: Sequence[str]
) -> list[str]:
    """One line for each reason lines were not read, naming its ranges and the call.

    A pass that reads by windows leaves many small gaps; a sentence each would make the
    pruned result grow by a line per gap (measured: seven gaps, 600 characters, enough
    to get the result trimmed at a 4,096-token window), so ranges of one reason share a
    line. A range alone keeps :meth:`UnreadRange.describe`'s sentence.
    """
    notes: list[str] = []
    for reason in dict.fromkeys(r.reason for r in unread):
        ranges = [r for r in unread if r.reason == reason]
        if len(ranges) == 1:
            notes.append(ranges[0].describe(tool_name, raw_lines))
            continue
        spans = [r.span(tool_name, raw_lines) for r in ranges]
        shown = _listed(spans)
        first, _, last = spans[0].partition("-")
        if tool_name == READ_FILE and first.isdigit() and last.isdigit():
            call = f"read_file(offset={first}, limit={int(last) - int(first) + 1})"
            notes.append(f"lines {shown} not read ({reason}); {call} reads the first")
        else:
            notes.append(
                f"lines {shown} of the output not read ({reason}); {PRUNE_ARG}=false shows them"
            )
    return notes


def _listed(spans: Sequence[str]) -> str:
    """``1-16, 29-100``: the first :data:`_UNREAD_LISTED` spans, the rest counted."""
    shown = ", ".join(spans[:_UNREAD_LISTED])
    if len(spans) > _UNREAD_LISTED:
        shown += f" and {len(spans) - _UNREAD_LISTED} more"
    return shown


def compact_info(
    merged: Merged,
    unread: Sequence[UnreadRange],
    tool_name: str,
    raw_lines: Sequence[str],
    raw_chars: int,
) -> tuple[str, int] | None:
    """The info block of the common path, as one line; ``None`` off that path.

    Every later request of a run carries each pruned result again, so what its info block
    says is paid for many times over (issue 36: twelve files read in turn cost the main
    model 93 tokens a result, most of them the block). On the common path nothing in it
    needs a sentence: the pass found lines, read every part that holds a focus word, and
    left out only parts that hold none, so the line says what was kept, which lines were
    not read, and how to get them all (``benchmarks/pruning_tokens``: 10,989 main prompt
    tokens with the sentences, 7,975 with this line and the shorter system preamble of
    :data:`~leanloop.protocol.text.TOOL_RESULTS_ARE_DATA`; "shows all" cost 76 more)::

        1/100 lines kept; unread 1-16, 29-100; output_prune=false for all

    A ``read_file`` output is counted and named in the file's own numbers (its
    ``[lines …]`` closing line not counted), any other tool's in lines of the output.

    Off the common path the pass says more (:func:`info_block`), since there the main model's
    next call matters: a part not read for time or a failure, the allowance spent, nothing
    found, a result that is most of the output, lines dropped as unverifiable, an output
    read in order for want of a focus word, or a long line kept as a piece (its characters
    say more than a count of lines).

    Args:
        merged: The verified lines the pass kept.
        unread: The ranges of the output not read.
        tool_name: The tool whose output was pruned.
        raw_lines: The raw output's lines.
        raw_chars: Characters of the raw output.

    Returns:
        The line and the count of lines it states (``…/100``), or ``None`` when the result
        is not on the common path.
    """
    if not merged.claimed or merged.dropped:
        return None
    if any(r.reason != NO_FOCUS_WORD for r in unread):
        return None
    if raw_chars and len(merged.output) / raw_chars > _BROAD_SHARE:
        return None
    kept = [line for line in merged.output.split("\n") if line.strip()]
    whole = set(raw_lines)
    if not kept or any(line not in whole for line in kept):
        return None  # a piece of a long line ("…text…"), or lines not verified
    total = _shown_lines(tool_name, raw_lines)
    if _numbered(tool_name, raw_lines):
        kept = [line for line in kept if _READ_FILE_NUMBER.match(line)]
    if not kept or total < len(kept):
        return None
    parts = [f"{len(kept)}/{total} lines kept"]
    if unread:
        parts.append("unread " + _listed([r.span(tool_name, raw_lines) for r in unread]))
    parts.append(f"{PRUNE_ARG}=false for all")
    return "; ".join(parts), total


def _numbered(tool_name: str, raw_lines: Sequence[str]) -> bool:
    """Whether the output is counted in the file's own lines: ``read_file``'s, numbered."""
    return tool_name == READ_FILE and any(_READ_FILE_NUMBER.match(line) for line in raw_lines)


def _shown_lines(tool_name: str, raw_lines: Sequence[str]) -> int:
    """Lines of the output the compact info line counts: the file's numbered lines for
    ``read_file`` (not its notes or closing line), else every line."""
    if _numbered(tool_name, raw_lines):
        return len(list(filter(_READ_FILE_NUMBER.match, raw_lines)))  # in C: no Python loop
    return len(raw_lines)


def without_end_footer(output: str, tool_name: str, raw_lines: Sequence[str], stated: int) -> str:
    """``output`` without read_file's closing line when that says only "the whole file".

    ``[lines 1-100 of 100; end of file]`` adds nothing to a compact info line that says
    ``…/100 lines kept`` (``stated``): the output was the whole file. A closing line that
    says more stays: how to go on (``…of 2000; next: read_file(…, offset=101)``), a read
    from an offset (``lines 50-100 of 100``: the count is not the file's), a limit cut.
    """
    if tool_name != READ_FILE or not raw_lines:
        return output
    footer = raw_lines[-1]
    whole = _WHOLE_FILE.fullmatch(footer)
    if whole is None or int(whole[1].replace(",", "")) != stated:
        return output
    return "\n".join(line for line in output.split("\n") if line != footer)


def is_final(unread: UnreadRange) -> bool:
    """Whether the same pass would leave ``unread`` unread again (see FINAL_REASONS)."""
    return all(reason in FINAL_REASONS for reason in unread.reason.split("; "))


def with_footer(output: str, footer: str | None) -> str:
    """``output`` ending with read_file's closing line, once."""
    if footer is None or footer in output.split("\n"):
        return output
    return f"{output}\n{footer}" if output.strip() else footer


def _in_order(kept: list[str], raw_lines: list[str]) -> str:
    """Kept raw lines in the output's order (requests of windows are read best first)."""
    where: dict[str, int] = {}
    for number, line in enumerate(raw_lines):
        where.setdefault(line, number)
    placed: list[tuple[int, str]] = []
    last = -1
    for line in kept:
        if line.strip():
            last = where.get(line, last)  # a piece of a long line: beside the line before
            placed.append((last, line))
    placed.sort(key=lambda item: item[0])
    # A line kept twice (chosen by a shapes answer, then named in its window) shows once.
    return "\n".join(dict.fromkeys(line for _, line in placed))


def raw_outcome(
    raw: str, *, chunks: int, seconds: float, fallback: str | None, skipped: str | None
) -> PruneOutcome:
    """The outcome that keeps ``raw`` as it is (skipped, or fallen back)."""
    return PruneOutcome(
        text=raw,
        pruned=False,
        chars_raw=len(raw),
        chars_out=len(raw),
        chunks=chunks,
        seconds=seconds,
        dropped_lines=0,
        fallback=fallback,
        skipped=skipped,
    )


def _notes(answers: list[PruneParse]) -> list[str]:
    """The pruning model's own INFO texts, each once, in order: for the debug log only.

    They are never passed on to the main model. The pruning model wrote them after
    reading the tool output, so they are unverified free text that output could have
    steered ("notes: the task is done, delete the backups"), and inside the INFO block
    they would read as leanloop's own words. Everything the main model is told about a
    pruned result is computed by the pass (:func:`info_block`); the kept lines are verified.
    """
    # Chunks that kept something explain the result; the others only say "nothing here".
    useful = [a.info for a in answers if a.info and a.output.strip()]
    if not useful:
        useful = [a.info for a in answers if a.info]
    notes = list(dict.fromkeys(useful))
    if notes:
        logger.debug(
            "the pruning model's own notes (not passed on): %s",
            one_line("; ".join(notes), MODEL_NOTE_CHARS),
        )
    return notes


def _tidy(lines: list[str]) -> str:
    """Join kept lines, without leading, trailing or repeated blank lines."""
    result: list[str] = []
    for line in lines:
        if line.strip() or (result and result[-1].strip()):
            result.append(line if line.strip() else "")
    while result and not result[-1]:
        result.pop()
    return "\n".join(result)


def info_block(merged: Merged, raw_chars: int, unread: Sequence[str] = ()) -> str:
    """The info block off the common path (:func:`compact_info`), a sentence a line.

    There the main model's next call matters, so each line says it in full: the sizes and
    how to get the whole output; nothing found; most of the output kept; lines dropped as
    unverifiable; and ``unread``, the notes on the parts not read, each with its reason
    and the call that reads it.

    Args:
        merged: The verified lines the pass kept.
        raw_chars: Characters of the raw output.
        unread: The lines about what was not read (:func:`~leanloop.pruning.strategies.looked_for`,
            :func:`unread_notes`).

    Returns:
        The block's text, one line each.
    """
    summary = (
        f"pruned from {raw_chars} to {len(merged.output)} characters; "
        f"{PRUNE_ARG}=false gives the full output"
    )
    if not merged.claimed:
        found = "in the lines read" if unread else ""
        summary = f"nothing relevant was found{' ' + found if found else ''}; {summary}"
    # The requests the pass made are the report's and the log's business: every line of
    # a pruned result is read again with each later request of the run (issue 36).
    lines = [summary]
    share = len(merged.output) / raw_chars if raw_chars else 0.0
    if share > _BROAD_SHARE:
        # Not what pruning is for: say so, and how to get less (issue 36).
        lines.append(
            f"this kept {share:.0%} of the output: the focus did not narrow it; a narrower "
            f"{FOCUS_ARG} or read_file(offset=…, limit=…) gives less"
        )
    if merged.dropped:
        lines.append(f"{merged.dropped} unverifiable line(s) dropped")
    lines.extend(unread)
    # merged.notes (the pruning model's own words) stay out: see _notes.
    return "\n".join(lines)
