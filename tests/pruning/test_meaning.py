"""The second ranker by meaning, and how the kinds-of-line request uses it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import BaseMessage

from leanloop.pruning import Pruner, PruneRequest, PruneSettings
from leanloop.pruning.meaning import load_embedder, meaning_scores
from leanloop.pruning.shapes import candidates, chosen_lines
from leanloop.testing import ScriptedChatModel

_HANDBOOK = [
    "# Customer handbook",
    "Orders ship from our warehouse in Utrecht within two working days.",
    "Refunds are issued within 14 days of receiving the parcel, to the original card.",
    "Our support desk answers mail from 9:00 to 17:00 on weekdays.",
    "Gift cards cannot be exchanged for cash.",
    "",
    "Delivery to the islands takes one extra day.",
]


class _Axis:
    """A fake embedder: a text's vector is 1 on the axis of the first word it holds."""

    def __init__(self, words: list[str]) -> None:
        self.words = words

    def embed(self, texts: list[str], norm: bool = False) -> Any:
        rows = np.zeros((len(texts), len(self.words) + 1))
        for row, text in enumerate(texts):
            axis = next((k for k, w in enumerate(self.words) if w in text), len(self.words))
            rows[row, axis] = 1.0
        return rows


@pytest.fixture
def no_wordllama(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    load_embedder.cache_clear()
    monkeypatch.setitem(sys.modules, "wordllama", None)  # the import fails
    yield
    load_embedder.cache_clear()


def test_the_packaged_model_puts_the_refunds_line_first_for_money_back() -> None:
    # A real small model from the package index, loaded from its wheel's files.
    scores = meaning_scores("how do I get my money back", _HANDBOOK)
    assert scores is not None
    best = max(range(len(_HANDBOOK)), key=lambda i: scores[i])
    assert _HANDBOOK[best].startswith("Refunds"), list(zip(scores, _HANDBOOK, strict=True))
    assert scores[5] == 0.0  # a blank line is not ranked


def test_without_wordllama_there_is_no_ranker_and_nothing_is_fetched(no_wordllama: None) -> None:
    assert load_embedder() is None
    assert meaning_scores("how do I get my money back", _HANDBOOK) is None


def test_scores_follow_the_embedder_and_an_empty_focus_ranks_nothing() -> None:
    fake = _Axis(["refund", "ship"])
    lines = ["we ship daily", "", "refund in 14 days", "other"]
    assert meaning_scores("refund", lines, fake) == [0.0, 0.0, 1.0, 0.0]
    assert meaning_scores("  ", lines, fake) is None
    assert meaning_scores("refund", ["", " "], fake) is None


def _log() -> list[str]:
    lines = [f"02:00:{n % 60:02d} INFO worker-{n % 8} processed batch {n} ok" for n in range(400)]
    lines[120] = "02:01:00 ERROR disk quota exceeded on volume data-7"
    lines[121] = "02:01:01 WARN retrying the upload in 30 s"
    for n in range(200, 400, 2):
        lines[n] = f"02:03:{n % 60:02d} INFO refund queued for order {n}"
    return lines


def test_rare_kinds_and_kinds_close_in_meaning_alternate_rare_first() -> None:
    lines = _log()
    similar = [1.0 if "refund" in line else 0.0 for line in lines]
    similar[399] = 0.5  # the closest line of the common kind: its example
    shown = candidates(lines, [0.0] * len(lines), max_shapes=4, similar=similar)
    kinds = [(lines[s.example].split()[2], s.by_meaning) for s in shown]
    assert kinds[0] == ("disk", False)
    assert kinds[1] == ("refund", True)
    assert kinds[2] == ("retrying", False)
    assert shown[3].by_meaning and shown[3].example == 399
    # without the ranker, only the rare kinds (the refund kind is common, no rare word)
    plain = candidates(lines, [0.0] * len(lines), max_shapes=4)
    assert not any(s.by_meaning for s in plain)
    assert all("refund" not in lines[s.example] for s in plain)


def test_a_kind_shown_for_its_meaning_keeps_its_example_and_grows_no_burst() -> None:
    lines = _log()
    lines[203] = "02:03:03 WARN refund provider slow"  # a rare line beside a refund line
    similar = [1.0 if "refund" in line else 0.0 for line in lines]
    similar[300] = 2.0
    shown = candidates(lines, [0.0] * len(lines), max_shapes=6, similar=similar)
    refunds = next(p for p, s in enumerate(shown) if s.by_meaning and s.example == 300)
    chosen = chosen_lines(shown, [refunds], per_shape=2, scores=[0.0] * len(lines), reach=8)
    # its example, then its first line; the rare line 203 stands within reach of 200 and
    # is kept (rare lines grow a burst), the common refund lines near 300 are not
    assert chosen == [200, 203, 300]


def _handbook_output() -> str:
    # Prose of common kinds, 60 KB, two rare lines of noise: no line shares a word with
    # "money back", and the refunds sentence is a common kind (20 lines), far from both.
    topics = ("shipping", "warranty", "accounts", "newsletters", "stores", "gift wrap")
    rows = [
        f"Our {topics[n % 6]} team reviews request {n} within {n % 5 + 1} working days."
        for n in range(700)
    ]
    for n in range(205, 400, 10):
        rows[n] = f"Refunds are issued within {n % 9 + 7} days of receiving the parcel."
    rows[100] = "Printer on floor three is offline until Tuesday."
    rows[600] = "Holiday opening hours change in December."
    return "\n".join(f"{n:>5}| {row}" for n, row in enumerate(rows, start=1))


def _names_kinds_then_what_is_shown(every: bool) -> Callable[[list[BaseMessage]], dict[str, Any]]:
    """A pruning model that names every kind of line (a small model that cannot tell) or
    only the first (one sure of a kind, wrongly), then, shown a window, its refunds lines."""

    def reply(messages: list[BaseMessage]) -> dict[str, Any]:
        text = str(messages[-1].content)
        if "one of each kind" in text:  # the shapes request
            places = [line.split("|", 1)[0].strip() for line in text.split("\n") if "| " in line]
            named = places if every else places[:1]
        else:
            named = [
                line.split("| ", 1)[0].strip() for line in text.split("\n") if "Refunds" in line
            ]
        return {"content": "[PRUNE_OUTPUT_START]\n" + ", ".join(named) + "\n[PRUNE_OUTPUT_END]"}

    return reply


@pytest.mark.parametrize("meaning", [True, False])
@pytest.mark.parametrize("every", [True, False], ids=["names every kind", "names one kind"])
async def test_the_line_closest_in_meaning_is_read_whether_the_model_names_many_kinds_or_few(
    meaning: bool, every: bool
) -> None:
    # Every kind named: the model cannot tell, and the closest line is read after the rare
    # kinds. One kind named (the 1.5B, sure of one kind of a handbook whose window held no
    # answer): the closest line is a second opinion, read like a kind named.
    model = ScriptedChatModel(replies=[_names_kinds_then_what_is_shown(every)], repeat_last=True)
    settings = PruneSettings(
        window_tokens=4096,
        max_chunk_tokens=1024,
        pack_windows=False,
        prompt_style="small",
        meaning=meaning,
    )
    outcome = await Pruner(model, settings).prune(
        tool_name="read_file",
        raw=_handbook_output(),
        request=PruneRequest(focus="how do I get my money back"),
        task_context="",
    )
    refunds = [line for line in outcome.text.split("\n") if "Refunds are issued" in line]
    # With the ranker, the window around a refunds line is read and its lines kept; without
    # it, only the rare kinds named (noise) are kept and read around.
    assert bool(refunds) is meaning, outcome.text
    assert "Printer on floor three" in outcome.text  # the rare kinds named still stand
