"""Units of the identical-call guard's pure pieces: its keys and its words.

The rule (what a repeat is, reruns, rounds of repeats) is the repeat-guard policy's, tested
alone through its hooks in ``tests/loop/policies/test_repeat_guard.py``.
"""

from __future__ import annotations

from pathlib import Path

from leanloop.loop.guard import (
    call_key,
    no_room_reminder,
    pruned_reminder,
    reminder,
    repeat_note,
    rerun_note,
    workspace_fingerprint,
)
from leanloop.pruning import PruneRequest

ARGS = {"path": "logs/api-04.log"}


def test_two_calls_share_a_key_only_with_the_same_name_arguments_and_meta_arguments() -> None:
    key = call_key("read_file", ARGS, PruneRequest(), None)

    assert key == call_key("read_file", dict(ARGS), PruneRequest(), None)
    assert key != call_key("read_file", ARGS, PruneRequest(prune=False), None)
    assert key != call_key("read_file", ARGS, None, None)
    assert key != call_key("search", ARGS, PruneRequest(), None)


def test_the_fingerprint_tells_a_changed_file_apart_and_ignores_paths_outside(
    tmp_path: Path,
) -> None:
    fingerprint = workspace_fingerprint(tmp_path)
    assert fingerprint is not None and workspace_fingerprint(None) is None
    (tmp_path / "notes.txt").write_text("4711")
    before = call_key("read_file", {"path": "notes.txt"}, None, fingerprint)

    (tmp_path / "notes.txt").write_text("4711 and 9000")

    assert call_key("read_file", {"path": "notes.txt"}, None, fingerprint) != before
    assert fingerprint("read_file", {"path": "../outside.txt"}) is None
    assert fingerprint("read_file", {"query": "x"}) is None


def test_the_reminders_say_what_became_of_the_earlier_result() -> None:
    assert "(in this very reply)" in reminder(2, None)
    assert reminder(1, "\n  \n1| line\n2| more").endswith(
        "its result began: '1| line'. Do not call it again: answer from what you have, "
        "or do something different."
    )
    assert "and it failed: 'error: boom'" in reminder(1, "error: boom", ok=False)
    assert "it ended: '[lines 1-2 of 9]'" in reminder(1, "1| a\n[lines 1-2 of 9]\n", cut=True)
    assert "…" in reminder(1, "x" * 500) and len(reminder(1, "x" * 500)) < 400
    assert "output_prune=false" in pruned_reminder(3)
    assert "does not fit in the context" in no_room_reminder(3)


def test_the_report_lines_of_a_repeat_and_a_rerun() -> None:
    assert repeat_note(4) == "repeat of the call at step 4; not run"
    rerun = "ran again: the result of the same call at step 1 was trimmed"
    assert rerun_note(1, "trimmed") == rerun
