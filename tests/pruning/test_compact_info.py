"""The info block of a pruned result: one short line on the common path (issue 36).

Every later request of a run carries each pruned result again, so the common path (lines
found, only parts without a focus word left unread) says in one line what was kept, what
was not read and how to get it all; read_file's closing line is left out when it said only
that the file ended. The other paths keep their sentences and the closing line.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage

from leanloop.pruning import Pruner, PruneRequest, PruneSettings
from leanloop.pruning.extract import PruneOutcome, UnreadRange
from leanloop.pruning.reading import NO_FOCUS_WORD
from leanloop.pruning.result import Merged, compact_info, without_end_footer
from leanloop.testing import ScriptedChatModel

_SHOWN = re.compile(r"^\s*(\d+)\| (.*)$")
# A small pruning model's settings: requests of one window around each focus word.
_SMALL = PruneSettings(
    window_tokens=4096,
    max_chunk_tokens=1024,
    pack_windows=False,
    prompt_style="small",
    min_chars=500,
)


def _row(number: int, text: str) -> str:
    return f"{number:>5}| {text}"


def _filler(number: int) -> str:
    return (
        f"02:{number // 60 % 60:02d}:{number % 60:02d} INFO worker-{number % 8} processed batch "
        f"{10000 + number} rows={number * 37 % 5000} ok"
    )


def _needle(number: int) -> str:
    return f"02:40:01 ERROR worker-1 needle-{number} owner=team-{number}"


def _read_file(first: int, last: int, total: int, needles: tuple[int, ...]) -> str:
    """Lines ``first``-``last`` of a ``total``-line file as read_file shows them."""
    rows = [_row(n, _needle(n) if n in needles else _filler(n)) for n in range(first, last + 1)]
    if last < total:
        footer = (
            f'[lines {first}-{last} of {total}; next: read_file(path="app.log", offset={last + 1})]'
        )
    else:
        footer = f"[lines {first}-{last} of {total}; end of file]"
    return "\n".join([*rows, footer])


def _namer(messages: list[BaseMessage]) -> dict[str, Any]:
    """A small model's answer: the numbers of the shown lines holding "needle"."""
    text = str(messages[-1].content)
    numbers = [m[1] for ln in text.split("\n") if (m := _SHOWN.match(ln)) and "needle" in m[2]]
    return {"content": "[PRUNE_OUTPUT_START]\n" + ", ".join(numbers) + "\n[PRUNE_OUTPUT_END]"}


async def _prune(
    raw: str, reply: Any = _namer, *, tool: str = "read_file", focus: str = "needle"
) -> PruneOutcome:
    model = ScriptedChatModel(replies=[reply], repeat_last=True)
    outcome = await Pruner(model, _SMALL).prune(
        tool_name=tool, raw=raw, request=PruneRequest(focus=focus), task_context=""
    )
    assert outcome.pruned, outcome
    return outcome


def _blocks(text: str) -> tuple[str, list[str]]:
    """The INFO block and the OUTPUT block's lines of a pruned result."""
    head, _, body = text.partition("\n[PRUNE_INFO_END]\n[PRUNE_OUTPUT_START]\n")
    assert head.startswith("[PRUNE_INFO_START]\n"), text
    assert body.endswith("[PRUNE_OUTPUT_END]"), text
    return head.removeprefix("[PRUNE_INFO_START]\n"), body.split("\n")[:-1]


async def test_a_whole_file_on_the_common_path_is_one_info_line_and_the_kept_line() -> None:
    outcome = await _prune(_read_file(1, 100, 100, needles=(23,)))

    assert outcome.text == (
        "[PRUNE_INFO_START]\n"
        "1/100 lines kept; unread 1-16, 29-100; output_prune=false for all\n"
        "[PRUNE_INFO_END]\n"
        "[PRUNE_OUTPUT_START]\n"
        f"{_row(23, _needle(23))}\n"
        "[PRUNE_OUTPUT_END]"
    )
    assert [(r.first_line, r.last_line, r.reason) for r in outcome.unread] == [
        (1, 16, NO_FOCUS_WORD),
        (29, 100, NO_FOCUS_WORD),
    ]
    # What the main model reads again with every later request: about 190 characters.
    assert len(outcome.text) < 200, len(outcome.text)


async def test_a_page_that_goes_on_keeps_the_closing_line_that_says_how() -> None:
    raw = _read_file(1, 100, 300, needles=(23,))

    info, kept = _blocks((await _prune(raw)).text)

    assert info == "1/100 lines kept; unread 1-16, 29-100; output_prune=false for all"
    assert kept == [
        _row(23, _needle(23)),
        '[lines 1-100 of 300; next: read_file(path="app.log", offset=101)]',
    ]


async def test_a_page_read_from_an_offset_keeps_its_end_of_file_line() -> None:
    # "1/100" counts the page, not the file: the closing line still says where the file ends.
    raw = _read_file(201, 300, 300, needles=(223,))

    info, kept = _blocks((await _prune(raw)).text)

    assert info == "1/100 lines kept; unread 201-216, 229-300; output_prune=false for all"
    assert kept == [_row(223, _needle(223)), "[lines 201-300 of 300; end of file]"]


async def test_another_tool_is_counted_and_named_in_lines_of_its_output() -> None:
    lines = [_needle(k) if k == 40 else _filler(k) for k in range(1, 121)]

    info, kept = _blocks((await _prune("\n".join(lines), tool="search")).text)

    assert info == "1/120 lines kept; unread 1-33, 46-120; output_prune=false for all"
    assert kept == [_needle(40)]


async def test_an_output_read_in_one_request_names_nothing_unread() -> None:
    lines = [_needle(k) if k in (5, 9) else _filler(k) for k in range(1, 31)]
    settings = PruneSettings(window_tokens=8192, min_chars=500)
    model = ScriptedChatModel(replies=[_namer], repeat_last=True)

    outcome = await Pruner(model, settings).prune(
        tool_name="search",
        raw="\n".join(lines),
        request=PruneRequest(focus="needle"),
        task_context="",
    )

    assert _blocks(outcome.text) == (
        "2/30 lines kept; output_prune=false for all",
        [_needle(5), _needle(9)],
    )


async def test_a_part_that_failed_keeps_the_sentences_the_call_and_the_closing_line() -> None:
    def fails_on_the_second(messages: list[BaseMessage]) -> dict[str, Any]:
        if "needle-70" in str(messages[-1].content):
            return {"raise": "server exploded"}
        return _namer(messages)

    outcome = await _prune(_read_file(1, 100, 100, needles=(23, 70)), fails_on_the_second)

    info, kept = _blocks(outcome.text)
    assert info.startswith("pruned from "), info
    assert info.endswith(
        "output_prune=false gives the full output\n"
        "lines 1-16, 29-63, 76-100 not read (no focus word in them); "
        "read_file(offset=1, limit=16) reads the first\n"
        "lines 64-75 not read (exception: ScriptError: server exploded); "
        "read_file(offset=64, limit=12) reads them"
    ), info
    assert kept == [_row(23, _needle(23)), "[lines 1-100 of 100; end of file]"]


async def test_lines_dropped_as_unverifiable_keep_the_sentences_and_the_closing_line() -> None:
    def invents(messages: list[BaseMessage]) -> dict[str, Any]:
        shown = str(messages[-1].content).split("\n")
        copied = [ln for ln in shown if _SHOWN.match(ln) and "needle" in ln]
        lines = [*copied, "the job failed on a needle somewhere"]
        return {"content": "[PRUNE_OUTPUT_START]\n" + "\n".join(lines) + "\n[PRUNE_OUTPUT_END]"}

    outcome = await _prune(_read_file(1, 100, 100, needles=(23,)), invents)

    info, kept = _blocks(outcome.text)
    assert info.split("\n")[1:] == [
        "1 unverifiable line(s) dropped",
        "lines 1-16, 29-100 not read (no focus word in them); "
        "read_file(offset=1, limit=16) reads the first",
    ], info
    assert kept[-1] == "[lines 1-100 of 100; end of file]", kept


def _merged(output: str, *, claimed: int = 1, dropped: int = 0) -> Merged:
    return Merged(output, [], claimed, claimed - dropped, dropped)


def test_more_unread_ranges_than_listed_are_counted() -> None:
    raw = [_row(n, _needle(n) if n % 10 == 5 else _filler(n)) for n in range(1, 201)]
    kept = "\n".join(raw[n - 1] for n in range(5, 201, 10))
    unread = [UnreadRange(n - 4, n - 1, NO_FOCUS_WORD) for n in range(5, 201, 10)]

    compact = compact_info(_merged(kept, claimed=20), unread, "read_file", raw, 100_000)

    listed = ", ".join(f"{n - 4}-{n - 1}" for n in range(5, 125, 10))
    line = f"20/200 lines kept; unread {listed} and 8 more; output_prune=false for all"
    assert compact == (line, 200)


def test_only_the_common_path_is_compact() -> None:
    raw = [_row(n, _needle(n) if n == 5 else _filler(n)) for n in range(1, 101)]
    kept, big = raw[4], 100_000
    unread = [UnreadRange(1, 4, NO_FOCUS_WORD)]
    assert compact_info(_merged(kept), unread, "read_file", raw, big) == (
        "1/100 lines kept; unread 1-4; output_prune=false for all",
        100,
    )
    # Each of these says more, so each keeps the sentences (None here).
    for merged, ranges, raw_chars in (
        (_merged(""), unread, big),  # nothing found
        (_merged(kept, claimed=2, dropped=1), unread, big),  # a line dropped
        (_merged(kept), [UnreadRange(1, 4, "timeout")], big),  # a part not read in time
        (_merged(kept), [UnreadRange(1, 4, f"{NO_FOCUS_WORD}; timeout")], big),
        (_merged(kept), [UnreadRange(1, 4, "over the reading allowance")], big),
        (_merged(kept), unread, 4 * len(kept) - 1),  # most of the output kept
        (_merged("…needle-5 owner…"), unread, big),  # a piece of a long line
    ):
        assert compact_info(merged, ranges, "read_file", raw, raw_chars) is None, merged


def test_only_a_closing_line_that_says_the_whole_file_was_read_is_left_out() -> None:
    one, two = _row(1, "a"), _row(2, "b")
    whole = [one, two, "[lines 1-2 of 2; end of file]"]
    kept = f"{two}\n{whole[2]}"
    assert without_end_footer(kept, "read_file", whole, 2) == two
    assert without_end_footer(kept, "read_file", whole, 1) == kept  # the line said 1 line
    assert without_end_footer(kept, "search", whole, 2) == kept
    for raw, stated in (
        ([one, two, '[lines 1-2 of 5; next: read_file(path="a", offset=3)]'], 2),  # it goes on
        ([two, "[lines 2-2 of 2; end of file]"], 1),  # from an offset: the count is the page's
        (
            [one, two, "[lines 1-2 of 2 (limit 5000 was cut to the maximum of 2000); end of file]"],
            2,
        ),
    ):
        kept = f"{raw[-2]}\n{raw[-1]}"
        assert without_end_footer(kept, "read_file", raw, stated) == kept, raw
