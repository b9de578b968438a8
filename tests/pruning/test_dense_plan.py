"""Units of the pass's plan: when an output counts as dense (read whole) and when not."""

from __future__ import annotations

import dataclasses

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from leanloop.pruning.extract import Pruner, PruneSettings
from leanloop.pruning.prompt import numbered_entries, pack_entries, split_raw_lines
from leanloop.pruning.strategies import Plan

SMALL = PruneSettings(
    window_tokens=4096, max_chunk_tokens=256, pack_windows=False, prompt_style="small"
)


def _log(lines: int, wanted: int) -> str:
    rows = []
    for i in range(1, lines + 1):
        service = "catalog-kestrel" if i == wanted else f"svc-{i}"
        # rollback_id is on 40% of the lines: under the "everywhere" share, so it scores.
        key = f" rollback_id=RB-{i:05d}" if i % 5 < 2 else ""
        rows.append(f"2024-06-01T00:00:{i:02d}Z INFO [deployer] service={service}{key}")
    return "\n".join(rows)


async def _word_plan(pruner: Pruner, lines: list[str], focus: str) -> Plan:
    """The pass's plan by the word match alone (no shapes request)."""
    layout = await pruner._layout("read_file", lines, focus, "", None)
    return pruner._plan("read_file", layout, layout.scores)


async def _plan(raw: str, focus: str) -> tuple[int, int | None, list[str]]:
    """The number of requests, how many score, and the lines each shows."""
    pruner = Pruner(FakeListChatModel(responses=["unused"]), SMALL)
    plan = await _word_plan(pruner, split_raw_lines(raw), focus)
    return len(plan.chunks), plan.scoring, [c.describe() for c in plan.chunks]


async def test_near_misses_that_score_much_less_do_not_make_an_output_dense() -> None:
    _, scoring, described = await _plan(
        _log(60, wanted=41), "the rollback_id of service=catalog-kestrel"
    )
    assert scoring, described  # read by windows, best first
    first, _, last = described[0].removeprefix("lines ").partition("-")
    assert int(first) <= 41 <= int(last), described


async def test_a_focus_on_most_lines_alike_is_read_whole() -> None:
    _, scoring, _ = await _plan(_log(60, wanted=41), "the rollback_id lines")
    assert scoring is None  # dense: read in order, in chunks as large as fit


async def test_a_small_model_reads_the_best_window_even_when_the_whole_output_fits() -> None:
    settings = dataclasses.replace(SMALL, max_chunk_tokens=4096)
    pruner = Pruner(FakeListChatModel(responses=["unused"]), settings)
    lines = split_raw_lines(_log(40, wanted=27))
    assert len(pack_entries(numbered_entries(lines, 100_000), 100_000)) == 1
    plan = await _word_plan(pruner, lines, "the rollback_id of catalog-kestrel")
    assert plan.scoring, [c.describe() for c in plan.chunks]
    first, last = plan.chunks[0].first_line, plan.chunks[0].last_line
    assert first <= 27 <= last and last - first < 20, (first, last)


async def test_a_larger_model_reads_an_output_that_fits_in_one_request() -> None:
    pruner = Pruner(FakeListChatModel(responses=["unused"]), PruneSettings(window_tokens=4096))
    plan = await _word_plan(pruner, split_raw_lines(_log(12, wanted=7)), "catalog-kestrel")
    assert len(plan.chunks) == 1 and plan.scoring is None
