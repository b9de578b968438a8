"""Line shapes: what kinds of line an output has, and which to show the pruning model."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from leanloop.pruning import Pruner, PruneRequest, PruneSettings
from leanloop.pruning.shapes import (
    candidates,
    chosen_lines,
    line_shapes,
    shape_of,
    shapes_messages,
)
from leanloop.testing import ScriptedChatModel


def _log() -> list[str]:
    lines = [
        f"2026-12-02 11:{i % 60:02d}:{i % 50:02d} INFO order {100000 + i} placed "
        f"trace=ab{i * 7919:06x} items={i % 7}"
        for i in range(400)
    ]
    lines[150] = "2026-12-02 11:30:02 ERROR java.lang.OutOfMemoryError: Java heap space"
    lines[151] = "2026-12-02 11:30:04 WARN kubelet: container killed: OOMKilled exit_code=137"
    return lines


def test_numbers_and_ids_are_masked_so_lines_of_one_kind_share_a_shape() -> None:
    first = "2026-12-02 11:00:01 INFO order 100001 placed trace=00001eef items=1"
    second = "2026-12-03 09:13:59 INFO  order 77 placed trace=0badf00d items=6"
    assert shape_of(first) == shape_of(second)
    assert shape_of("ERROR code=E777 rejected") != shape_of("WARN code=E777 rejected")


def test_the_shapes_of_a_log_are_its_kinds_of_line_in_order_of_first_line() -> None:
    shapes = line_shapes(_log())
    assert [len(s.lines) for s in shapes] == [398, 1, 1]  # the rare two among the rest
    assert shapes[1].example == 150


def test_the_rare_lines_are_shown_first_when_no_word_matched() -> None:
    lines = _log()
    shown = candidates(lines, [0.0] * len(lines), max_shapes=5)
    assert {shown[0].example, shown[1].example} == {150, 151}
    # the common kind has no rare word: it is not worth showing
    assert all(len(s.lines) == 1 for s in shown)


def test_word_hits_come_first_but_leave_half_of_the_list_to_rare_shapes() -> None:
    lines = [f"cache miss on catalog shard {i % 9} key=k{i}" for i in range(300)]
    lines += [f"request {i} handled by catalog-{i % 4}" for i in range(300)]
    lines[10] = "LDAP bind failed: invalid credentials"
    scores = [1.0 if "catalog" in line and i % 50 == 0 else 0.0 for i, line in enumerate(lines)]
    shown = candidates(lines, scores, max_shapes=4)
    assert any(s.example == 10 for s in shown), [lines[s.example] for s in shown]
    assert scores[shown[0].example] > 0  # the word match still leads


def test_the_request_shows_one_clipped_example_per_shape_and_asks_for_numbers() -> None:
    lines = _log()
    lines[151] = "x" * 400
    shown = candidates(lines, [0.0] * len(lines), max_shapes=3)
    messages = shapes_messages(
        tool_name="read_file", focus="why it crashed", lines=lines, shown=shown
    )
    text = str(messages[-1].content)
    assert "  1| " in text and "  2| " in text
    assert "Which lines are why it crashed? Write their numbers." in text
    assert max(len(line) for line in text.split("\n")) < 200


def _picks(number: int) -> Any:
    def reply(messages: list[BaseMessage]) -> dict[str, Any]:
        text = str(messages[-1].content)
        if "one of each kind" in text:  # the shapes request
            return {"content": f"[PRUNE_OUTPUT_START]\n{number}\n[PRUNE_OUTPUT_END]"}
        kept = [
            line.split("| ", 1)[0].strip() for line in text.split("\n") if "OutOfMemory" in line
        ]
        return {"content": "[PRUNE_OUTPUT_START]\n" + ", ".join(kept) + "\n[PRUNE_OUTPUT_END]"}

    return reply


async def test_a_focus_in_the_users_own_words_reads_the_kind_of_line_the_model_names() -> None:
    raw = "\n".join(f"{n:>5}| {line}" for n, line in enumerate(_log(), start=1))
    model = ScriptedChatModel(replies=[_picks(1)], repeat_last=True)
    settings = PruneSettings(
        window_tokens=4096, max_chunk_tokens=1024, pack_windows=False, prompt_style="small"
    )
    outcome = await Pruner(model, settings).prune(
        tool_name="read_file",
        raw=raw,
        request=PruneRequest(focus="why the checkout service crashed"),
        task_context="",
    )
    assert outcome.pruned, outcome
    assert "  151| 2026-12-02 11:30:02 ERROR java.lang.OutOfMemoryError" in outcome.text
    assert outcome.chars_out < 1_000, outcome.text
    # the shapes request, then one window: not the whole 30 KB read in order
    assert outcome.chunks <= 3, outcome


def test_a_pick_keeps_the_rare_lines_around_it_and_not_a_whole_kind() -> None:
    lines = _log()
    lines[158] = "2026-12-02 11:30:09 WARN kubelet: back-off restarting failed container"
    lines[300] = "2026-12-02 11:40:00 WARN disk: usage above 80% on /var"
    shown = candidates(lines, [0.0] * len(lines), max_shapes=10)
    places = {lines[s.example].split(" ", 3)[3][:10]: p for p, s in enumerate(shown)}
    picked = [places["java.lang."]]
    chosen = chosen_lines(shown, picked, per_shape=4, scores=[0.0] * len(lines), reach=8)
    # 151 -> 152 (one away) -> 159 (seven from 152); the disk line is far from all
    assert chosen == [150, 151, 158]
    # a picked common kind gives its first lines, not its 398
    common = line_shapes(lines)[0]
    assert chosen_lines([common], [0], per_shape=4, scores=[0.0] * len(lines), reach=0) == [
        0,
        1,
        2,
        3,
    ]


def _names_every_kind(messages: list[BaseMessage]) -> dict[str, Any]:
    text = str(messages[-1].content)
    if "one of each kind" in text:
        return {"content": "[PRUNE_OUTPUT_START]\n1, 2, 3, 4, 5, 6, 7, 8\n[PRUNE_OUTPUT_END]"}
    return {"content": "[PRUNE_OUTPUT_START]\n[PRUNE_OUTPUT_END]"}


async def test_a_shapes_answer_naming_most_of_the_list_stands_for_its_first_three() -> None:
    rows = [f"02:00:{n % 60:02d} INFO worker-{n % 8} processed batch {n} ok" for n in range(600)]
    words = ("disk", "certificate", "query", "eviction", "retry", "skew", "queue", "quota")
    for k, word in enumerate(words):
        rows[60 * (k + 1)] = f"02:05:00 WARN {word} alarm number {k} raised by sentinel"
    raw = "\n".join(f"{n:>5}| {row}" for n, row in enumerate(rows, start=1))
    model = ScriptedChatModel(replies=[_names_every_kind], repeat_last=True)
    settings = PruneSettings(
        window_tokens=4096, max_chunk_tokens=1024, pack_windows=False, prompt_style="small"
    )
    outcome = await Pruner(model, settings).prune(
        tool_name="read_file",
        raw=raw,
        request=PruneRequest(focus="what went wrong"),
        task_context="",
    )
    kept = [line for line in outcome.text.split("\n") if "alarm number" in line]
    assert len(kept) == 3, outcome.text


def _keeps_most(messages: list[BaseMessage]) -> dict[str, Any]:
    rows = [line for line in str(messages[-1].content).split("\n") if "| " in line]
    return {"content": "[PRUNE_OUTPUT_START]\n" + "\n".join(rows[:25]) + "\n[PRUNE_OUTPUT_END]"}


async def test_a_pass_that_keeps_most_of_the_output_says_the_focus_did_not_narrow_it() -> None:
    raw = "\n".join(f"{n:>5}| line {n} of a report about the quarterly figures" for n in range(60))
    settings = PruneSettings(window_tokens=8192, min_chars=500)
    outcome = await Pruner(ScriptedChatModel(replies=[_keeps_most]), settings).prune(
        tool_name="read_file", raw=raw, request=PruneRequest(focus="the figures"), task_context=""
    )
    assert outcome.pruned, outcome
    assert "the focus did not narrow it; a narrower output_prune_context" in outcome.text
