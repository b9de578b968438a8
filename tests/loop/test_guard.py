"""Units of the identical-call guard: reruns of results the model can no longer read whole."""

from __future__ import annotations

from leanloop.loop.guard import MAX_RERUNS, CallGuard, Repeat, Rerun

ARGS = {"path": "logs/api-04.log"}


def _ran(guard: CallGuard, step: int, fate: str) -> None:
    guard.remember("read_file", ARGS, step=step, result="1| line", fate=lambda: fate)


def test_a_pruned_then_trimmed_result_runs_again_then_is_a_repeat_that_says_why() -> None:
    guard = CallGuard()
    assert guard.check("read_file", ARGS, step=0) is None
    _ran(guard, 0, "pruned")
    fates = ["trimmed", "pruned"]  # shown whole, trimmed for room; pruned again
    for step, fate in enumerate(fates[:MAX_RERUNS], start=1):
        again = guard.check("read_file", ARGS, step=step)
        assert isinstance(again, Rerun), again
        _ran(guard, step, fate)
    last = guard.check("read_file", ARGS, step=MAX_RERUNS + 1)
    assert isinstance(last, Repeat)
    assert "does not fit" in last.reminder and "offset and limit" in last.reminder


def test_the_rerun_count_survives_the_result_being_remembered() -> None:
    guard = CallGuard()
    guard.check("read_file", ARGS, step=0)
    _ran(guard, 0, "trimmed")
    assert isinstance(guard.check("read_file", ARGS, step=1), Rerun)
    _ran(guard, 1, "trimmed")
    assert isinstance(guard.check("read_file", ARGS, step=2), Rerun)
    _ran(guard, 2, "trimmed")
    assert isinstance(guard.check("read_file", ARGS, step=3), Repeat)


def test_opting_out_of_pruning_is_another_call_and_runs() -> None:
    guard = CallGuard()
    for step in range(MAX_RERUNS + 1):
        guard.check("read_file", ARGS, step=step)
        _ran(guard, step, "pruned")
    assert guard.check("read_file", ARGS, step=9, meta=("no-prune",)) is None


def test_a_kept_result_is_a_repeat_at_once() -> None:
    guard = CallGuard()
    guard.check("read_file", ARGS, step=0)
    _ran(guard, 0, "kept")
    repeat = guard.check("read_file", ARGS, step=1)
    assert isinstance(repeat, Repeat) and "its result began" in repeat.reminder


def test_without_pruned_reruns_a_pruned_result_is_a_repeat_pointing_at_the_extract() -> None:
    guard = CallGuard(rerun_pruned=False)
    guard.check("read_file", ARGS, step=0)
    _ran(guard, 0, "pruned")
    repeat = guard.check("read_file", ARGS, step=1)
    assert isinstance(repeat, Repeat) and "output_prune=false" in repeat.reminder
    assert guard.check("read_file", ARGS, step=2, meta=("no-prune",)) is None


def test_without_pruned_reruns_a_trimmed_result_still_runs_again() -> None:
    guard = CallGuard(rerun_pruned=False)
    guard.check("read_file", ARGS, step=0)
    _ran(guard, 0, "trimmed")
    assert isinstance(guard.check("read_file", ARGS, step=1), Rerun)
