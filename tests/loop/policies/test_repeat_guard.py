"""The repeat guard, alone through its hooks: a repeated call is answered from memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from leanloop.loop.policies.hooks import (
    AnswerCall,
    EditCall,
    PendingCall,
    Round,
    RunCall,
    StepView,
    ToolResult,
)
from leanloop.loop.policies.repeat_guard import MAX_RERUNS, RepeatGuard, RepeatGuardConfig
from leanloop.loop.profiles import DEFAULT, SMALL
from leanloop.pruning import PruneRequest
from leanloop.report import ToolCallRecord

ViewMaker = Callable[..., StepView]

ARGS = {"path": "logs/api-04.log"}
PRUNED = PruneRequest()
"""The meta-arguments of a call that left pruning as it is (pruning on)."""


def _call(
    view: StepView,
    step: int,
    *,
    args: dict[str, object] | None = None,
    meta: PruneRequest | None = PRUNED,
) -> PendingCall:
    return PendingCall(
        name="read_file",
        args=ARGS if args is None else args,
        meta=meta,
        call_id=f"call-{step}",
        step=step,
        run=view,
    )


def _record(step: int, fate: str) -> ToolCallRecord:
    """A record whose :attr:`ToolCallRecord.fate` is ``fate``."""
    return ToolCallRecord(
        step=step,
        name="read_file",
        args=dict(ARGS),
        chars_out=7,
        chars_raw=7,
        ok=fate != "failed",
        pruned=fate == "pruned",
        trimmed_at=step + 1 if fate == "trimmed" else None,
        cut_from=100 if fate == "cut" else None,
    )


def _ran(
    guard: RepeatGuard, call: PendingCall, fate: str = "kept", text: str = "1| line"
) -> ToolCallRecord:
    """Tell the guard that ``call`` ran and the model read ``text``; its record back."""
    record = _record(call.step, fate)
    guard.after_tool_result(call, ToolResult(text, record.ok, record))
    return record


async def test_a_new_call_runs_and_its_repeat_is_answered_from_memory(
    make_view: ViewMaker,
) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    first = _call(view, 1)
    assert await guard.before_tool_call(first) is None
    _ran(guard, first)

    repeat = await guard.before_tool_call(_call(view, 2))

    assert repeat == AnswerCall(
        "already called at step 1 with the same arguments; its result began: '1| line'. "
        "Do not call it again: answer from what you have, or do something different.",
        note="repeat of the call at step 1; not run",
        repeat_of=1,
    )


async def test_a_twin_in_the_same_reply_is_a_repeat(make_view: ViewMaker) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()

    # The policies are asked about every call of a reply before any runs: the first claims.
    assert await guard.before_tool_call(_call(view, 1)) is None
    twin = await guard.before_tool_call(_call(view, 1))

    assert isinstance(twin, AnswerCall) and twin.repeat_of == 1
    assert "(in this very reply)" in twin.content


async def test_a_failed_call_repeated_is_answered_with_its_failure(make_view: ViewMaker) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    first = _call(view, 1)
    await guard.before_tool_call(first)
    _ran(guard, first, "failed", text="error: no such file: logs/api-04.log")

    repeat = await guard.before_tool_call(_call(view, 2))

    assert isinstance(repeat, AnswerCall)
    assert "and it failed: 'error: no such file: logs/api-04.log'" in repeat.content


async def test_a_cut_result_repeated_points_at_where_it_ended(make_view: ViewMaker) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    first = _call(view, 1)
    await guard.before_tool_call(first)
    _ran(guard, first, "cut", text="1| a\n2| b\n[lines 1-2 of 9; next: offset=3]")

    repeat = await guard.before_tool_call(_call(view, 2))

    assert isinstance(repeat, AnswerCall)
    assert "was cut to fit the context; it ended: '[lines 1-2 of 9; next: offset=3]'" in (
        repeat.content
    )


async def test_a_pruned_result_runs_again_unpruned_when_the_config_says_so(
    make_view: ViewMaker,
) -> None:
    guard, view = RepeatGuardConfig(rerun_pruned=True).start(), make_view(profile=SMALL)
    first = _call(view, 1)
    await guard.before_tool_call(first)
    _ran(guard, first, "pruned")

    rerun = await guard.before_tool_call(_call(view, 2))

    assert rerun == EditCall(
        meta=PruneRequest(prune=False),
        note="ran again: the result of the same call at step 1 was pruned",
    )


async def test_without_reruns_a_pruned_result_repeated_points_at_the_extract(
    make_view: ViewMaker,
) -> None:
    guard, view = RepeatGuardConfig(rerun_pruned=False).start(), make_view()
    first = _call(view, 1)
    await guard.before_tool_call(first)
    _ran(guard, first, "pruned")

    repeat = await guard.before_tool_call(_call(view, 2))

    assert isinstance(repeat, AnswerCall) and "output_prune=false" in repeat.content
    # Opting out of pruning asks for something new: the whole output.
    assert await guard.before_tool_call(_call(view, 3, meta=PruneRequest(prune=False))) is None


async def test_by_default_the_runs_profile_says_whether_a_pruned_result_runs_again(
    make_view: ViewMaker,
) -> None:
    for profile, expected in ((DEFAULT, EditCall), (SMALL, AnswerCall)):
        guard, view = RepeatGuardConfig().start(), make_view(profile=profile)
        first = _call(view, 1)
        await guard.before_tool_call(first)
        _ran(guard, first, "pruned")

        assert isinstance(await guard.before_tool_call(_call(view, 2)), expected), profile.name


async def test_a_trimmed_result_runs_again_as_it_is(make_view: ViewMaker) -> None:
    guard, view = RepeatGuardConfig(rerun_pruned=False).start(), make_view()
    first = _call(view, 1)
    await guard.before_tool_call(first)
    record = _ran(guard, first)
    record.trimmed_at = 3  # a later request's view trimmed it: the guard reads the fate then

    rerun = await guard.before_tool_call(_call(view, 4))

    assert rerun == RunCall(note="ran again: the result of the same call at step 1 was trimmed")
    # Claimed anew: the rerun's twin in the same reply is a repeat.
    twin = await guard.before_tool_call(_call(view, 4))
    assert isinstance(twin, AnswerCall) and twin.repeat_of == 4


async def test_meta_argument_differences_are_not_repeats(make_view: ViewMaker) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    first = _call(view, 1, meta=PruneRequest(focus="the deadlocks"))
    await guard.before_tool_call(first)
    _ran(guard, first)

    for meta in (PruneRequest(focus="the start time"), PruneRequest(prune=False), PRUNED):
        assert await guard.before_tool_call(_call(view, 2, meta=meta)) is None, meta
    other_args = _call(view, 2, args={"path": "logs/api-04.log", "limit": 10})
    assert await guard.before_tool_call(other_args) is None


async def test_a_pruned_then_trimmed_result_runs_again_then_is_a_repeat_that_says_why(
    make_view: ViewMaker,
) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    first = _call(view, 0)
    assert await guard.before_tool_call(first) is None
    _ran(guard, first, "pruned")
    fates = ["trimmed", "pruned"]  # shown whole, trimmed for room; pruned again
    for step, fate in enumerate(fates[:MAX_RERUNS], start=1):
        again = _call(view, step)
        assert isinstance(await guard.before_tool_call(again), EditCall | RunCall)
        _ran(guard, again, fate)

    last = await guard.before_tool_call(_call(view, MAX_RERUNS + 1))

    assert isinstance(last, AnswerCall)
    assert "does not fit" in last.content and "offset and limit" in last.content


async def test_the_rerun_count_survives_the_result_being_remembered(
    make_view: ViewMaker,
) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    for step in range(MAX_RERUNS + 1):
        call = _call(view, step)
        decision = await guard.before_tool_call(call)
        assert (decision is None) if step == 0 else isinstance(decision, RunCall)
        _ran(guard, call, "trimmed")

    assert isinstance(await guard.before_tool_call(_call(view, 9)), AnswerCall)


async def test_a_call_is_remembered_as_the_model_made_it_not_as_it_ran(
    make_view: ViewMaker,
) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    first = _call(view, 0)
    await guard.before_tool_call(first)
    _ran(guard, first, "pruned")
    asked = _call(view, 1)
    assert isinstance(await guard.before_tool_call(asked), EditCall)  # runs unpruned

    _ran(guard, asked, "kept")  # the round tells the guard the call as the model made it

    repeat = await guard.before_tool_call(_call(view, 2))
    assert isinstance(repeat, AnswerCall) and "its result began: '1| line'" in repeat.content


async def test_a_changed_file_is_read_again(make_view: ViewMaker, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("The launch code is 4711.")
    guard, view = RepeatGuardConfig(workspace=tmp_path).start(), make_view()
    first = _call(view, 1, args={"path": "notes.txt"})
    await guard.before_tool_call(first)
    _ran(guard, first)

    (tmp_path / "notes.txt").write_text("The launch code is now 9000.")

    assert await guard.before_tool_call(_call(view, 2, args={"path": "notes.txt"})) is None


def test_rounds_of_repeats_in_a_row_stop_the_model_and_a_new_call_resets_the_count() -> None:
    guard = RepeatGuardConfig(max_repeats=2).start()
    repeats_only = Round([], repeated=1, calls=1)
    mixed = Round([], repeated=1, calls=2)  # a new call ran beside the repeat

    assert not guard.end_round(repeats_only).exhausted
    assert not guard.end_round(mixed).exhausted  # the count starts again
    assert not guard.end_round(repeats_only).exhausted
    assert guard.end_round(Round([], repeated=2, calls=2)).exhausted
    assert not guard.end_round(Round([], calls=1)).exhausted  # no repeat: reset
    assert not guard.end_round(repeats_only).exhausted


def _named(view: StepView, step: int, name: str, args: dict[str, object]) -> PendingCall:
    return PendingCall(name=name, args=args, meta=None, call_id=f"c{step}", step=step, run=view)


def _result(call: PendingCall, *, ok: bool = True) -> ToolResult:
    record = ToolCallRecord(
        step=call.step, name=call.name, args=dict(call.args), chars_out=2, chars_raw=2, ok=ok
    )
    return ToolResult("ok" if ok else "Error: no such program", ok, record)


async def test_a_command_runs_again_after_an_edit_and_reads_are_forgotten(
    make_view: ViewMaker,
) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    tests = {"argv": ["pytest", "-q"]}
    first = _named(view, 1, "run_command", tests)
    assert await guard.before_tool_call(first) is None
    guard.after_tool_result(first, _result(first))
    read = _named(view, 2, "read_file", {"path": "app.py"})
    assert await guard.before_tool_call(read) is None
    guard.after_tool_result(read, _result(read))
    edit = _named(view, 3, "str_replace", {"path": "app.py", "old": "a", "new": "b"})
    assert await guard.before_tool_call(edit) is None
    guard.after_tool_result(edit, _result(edit))

    # The edit changed the world: the tests and the read run again, not from memory.
    assert await guard.before_tool_call(_named(view, 4, "run_command", tests)) is None
    assert await guard.before_tool_call(_named(view, 4, "read_file", {"path": "app.py"})) is None


async def test_a_failed_command_repeated_unchanged_is_a_repeat(make_view: ViewMaker) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    args = {"argv": ["no-such-program"]}
    first = _named(view, 1, "run_command", args)
    assert await guard.before_tool_call(first) is None
    guard.after_tool_result(first, _result(first, ok=False))

    again = await guard.before_tool_call(_named(view, 2, "run_command", args))

    assert isinstance(again, AnswerCall)
    assert again.repeat_of == 1


async def test_the_same_command_again_with_no_edit_between_is_a_repeat(
    make_view: ViewMaker,
) -> None:
    guard, view = RepeatGuardConfig().start(), make_view()
    tests = {"argv": ["python", "test_calc.py"]}
    first = _named(view, 1, "run_command", tests)
    assert await guard.before_tool_call(first) is None
    guard.after_tool_result(first, _result(first))

    again = await guard.before_tool_call(_named(view, 2, "run_command", tests))

    assert isinstance(again, AnswerCall)
    assert again.repeat_of == 1
