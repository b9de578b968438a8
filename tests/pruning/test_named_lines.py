"""A named line is the line meant: a small model's neighbour is resolved to the line that
holds what the pass looks for (issue 36)."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage

from leanloop.pruning import Pruner, PruneRequest, PruneSettings
from leanloop.pruning.numbers import lines_named, resolve_named
from leanloop.pruning.prompt import Chunk
from leanloop.testing import ScriptedChatModel

SMALL = PruneSettings(
    window_tokens=4096, max_chunk_tokens=1024, pack_windows=False, prompt_style="small"
)
_SHOWN = re.compile(r"^\s*(\d+)\| (.*)$")


def test_a_named_line_without_the_focus_stands_for_its_scoring_neighbour() -> None:
    scores = [0.0] * 10
    scores[4] = 3.0  # line 5
    assert resolve_named([6], list(range(1, 11)), scores) == [5]
    assert resolve_named([7], list(range(1, 11)), scores) == [5]  # two away
    assert resolve_named([8], list(range(1, 11)), scores) == [8]  # too far: as named


def test_two_names_of_one_line_keep_it_once_and_a_scoring_line_stays_as_named() -> None:
    scores = [0.0] * 10
    scores[4] = scores[6] = 2.0  # lines 5 and 7
    assert resolve_named([6, 5], list(range(1, 11)), scores) == [5]
    assert resolve_named([7], list(range(1, 11)), scores) == [7]


def test_the_nearest_scoring_neighbour_wins_and_nothing_moves_when_nothing_scores() -> None:
    scores = [0.0] * 10
    scores[2], scores[5] = 1.0, 5.0  # lines 3 and 6
    assert resolve_named([5], list(range(1, 11)), scores) == [6]
    assert resolve_named([4], list(range(1, 11)), scores) == [3]  # nearest, not highest
    assert resolve_named([4], list(range(1, 11)), [0.0] * 10) == [4]


def test_a_neighbour_that_was_not_shown_is_never_taken() -> None:
    scores = [0.0] * 10
    scores[4] = 3.0
    assert resolve_named([6], [6, 7, 8], scores) == [6]


def _log() -> tuple[str, list[int]]:
    """700 lines as read_file shows them, ``ERROR code=E777`` at file lines 112, 403, 651."""
    wanted = (112, 403, 651)
    rows = []
    for n in range(1, 701):
        if n in wanted:
            text = f"2026-12-02 11:{n % 60:02d}:00 ERROR code=E777 ledger write rejected"
        elif n % 37 == 0:
            text = f"2026-12-02 11:{n % 60:02d}:00 ERROR code=E{100 + n % 9} upstream refused"
        else:
            text = f"2026-12-02 11:{n % 60:02d}:00 INFO order {100000 + n} placed items={n % 7}"
        rows.append(f"{n:>5}| {text}")
    rows.append("[lines 1-700 of 700]")
    return "\n".join(rows), list(wanted)


def _names_the_next_line(messages: list[BaseMessage]) -> dict[str, Any]:
    """The 0.5B's habit: the number of the line after each one holding E777."""
    named = []
    for line in str(messages[-1].content).split("\n"):
        shown = _SHOWN.match(line)
        if shown and "E777" in shown[2]:
            named.append(int(shown[1]) + 1)
    numbers = ", ".join(map(str, named))
    return {"content": f"[PRUNE_OUTPUT_START]\n{numbers}\n[PRUNE_OUTPUT_END]"}


async def test_three_lines_among_700_named_by_their_neighbours_keep_the_lines_meant() -> None:
    raw, wanted = _log()
    model = ScriptedChatModel(replies=[_names_the_next_line], repeat_last=True)
    outcome = await Pruner(model, SMALL).prune(
        tool_name="read_file",
        raw=raw,
        request=PruneRequest(focus="the ERROR lines with code E777"),
        task_context="",
    )
    assert outcome.pruned, outcome
    kept = {int(m[1]) for line in outcome.text.split("\n") if (m := _SHOWN.match(line))}
    assert kept == set(wanted), outcome.text


def test_a_value_written_for_a_line_number_names_the_one_line_that_holds_it() -> None:
    chunk = Chunk(" 620| pool_timeout_s = 12\n 621| pool_size = 48\n 622| port = 5432", 620, 622)
    assert lines_named("[48]", chunk) == " 621| pool_size = 48"
    assert lines_named("[12]", chunk) == " 620| pool_timeout_s = 12"
    # a number in two lines, or in none, names nothing
    twice = Chunk(" 10| a = 7\n 11| b = 7", 10, 11)
    assert lines_named("[7]", twice) == ""
    assert lines_named("[99]", chunk) == ""


def test_a_number_with_a_closing_marker_written_as_a_tag_is_still_a_number() -> None:
    chunk = Chunk(" 269| a\n 270| ERROR code=E777\n 271| b", 269, 271)
    assert lines_named("270[/PRUNE_OUTPUT_END]", chunk) == " 270| ERROR code=E777"


def test_a_near_miss_named_beside_the_line_asked_for_stands_for_it() -> None:
    # line 270: "ERROR code=E204" (15.4), line 269: "ERROR code=E777" (34.9)
    scores = [0.0] * 300
    scores[268], scores[269] = 34.9, 15.4
    assert resolve_named([270], [268, 269, 270], scores) == [269]
    # two lines of about the same score are each the line meant
    scores[269] = 30.0
    assert resolve_named([270], [268, 269, 270], scores) == [270]


def test_a_one_of_a_kind_line_named_beside_a_focus_word_is_the_line_meant() -> None:
    # the docstring holds "secret"; the key derivation two lines below is what was named
    scores = [0.0] * 10
    scores[4] = 5.0  # line 5
    assert resolve_named([7], list(range(1, 11)), scores, fixed={7}) == [7]
    assert resolve_named([7], list(range(1, 11)), scores) == [5]


def test_a_rare_line_named_beside_the_literal_asked_for_stands_for_the_literal() -> None:
    # the 1.5B named "pool_timeout_s = 12" (a rare line) beside "pool_size = 48"
    scores = [0.0] * 10
    scores[4] = 9.0  # line 5 holds the literal pool_size
    assert resolve_named([6], list(range(1, 11)), scores, fixed={5, 6}, literal={5}) == [5]
    # both lines hold a literal: the rare line named is meant
    assert resolve_named([6], list(range(1, 11)), scores, fixed={6}, literal={5, 6}) == [6]
