"""``leanloop batch`` here (no Ray): results, concurrency, resuming, bad input, the summary."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from leanloop.batch.ray_runner import RAY_EXTRA, shipped_folder
from leanloop.cli.command import main
from leanloop.spec import load_specs


def _batch(folder: Path, tasks: Path, out: Path, *options: str) -> int:
    return main(["batch", str(folder / "agents.yaml"), str(tasks), "--out", str(out), *options])


def test_concurrency_changes_nothing_in_the_results(
    make_batch: Callable[..., Path], kit: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_batch()
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(12))
    assert _batch(folder, tasks, folder / "one.jsonl", "--concurrency", "1") == 0
    one_summary = capsys.readouterr().out
    assert _batch(folder, tasks, folder / "four.jsonl", "--concurrency", "4") == 0
    four_summary = capsys.readouterr().out
    one = kit.read_jsonl(folder / "one.jsonl")
    four = kit.read_jsonl(folder / "four.jsonl")
    assert [row["id"] for row in one] == [f"t{i}" for i in range(12)]
    assert sorted(row["id"] for row in four) == sorted(row["id"] for row in one)
    assert kit.comparable(four) == kit.comparable(one)
    first = one[3]
    assert first["answer"] == "two times 3 is what (19 chars)"
    assert first["stop_reason"] == "answer"
    assert first["usage"]["requests"] == 1 and first["usage"]["output_tokens"] > 0
    assert first["report"]["question"] == "what is 3 times two"
    assert [row["correct"] for row in one] == [i % 2 == 0 for i in range(12)]
    for summary in (one_summary, four_summary):
        assert "batch: 12/12 tasks done (12 this run, 0 earlier) · 12 answered" in summary
        assert "accuracy: 6/12 correct (50.0%)" in summary
        assert "tokens: " in summary and "s per task (mean)" in summary


def test_a_task_estimates_as_if_it_ran_alone(make_batch: Callable[..., Path], kit: Any) -> None:
    # Each run corrects its token estimate from the server's counts; shared by the process,
    # that learning made a task's estimates (and so what it trims) depend on the tasks
    # that ran before it. Each task has estimators of its own: order changes nothing.
    folder = make_batch()
    rows = kit.quiz_tasks(4)
    forward = kit.write_jsonl(folder / "forward.jsonl", rows)
    backward = kit.write_jsonl(folder / "backward.jsonl", reversed(rows))
    assert _batch(folder, forward, folder / "f.jsonl") == 0
    assert _batch(folder, backward, folder / "b.jsonl") == 0

    def reports(path: Path) -> dict[str, Any]:
        return {row["id"]: _without_clock(row["report"]) for row in kit.read_jsonl(path)}

    ran_forward, ran_backward = reports(folder / "f.jsonl"), reports(folder / "b.jsonl")
    assert ran_forward == ran_backward
    ratios = {report["chars_per_token"] for report in ran_forward.values()}
    assert len(ratios) == 1, ratios  # every task starts from the same estimate


def _without_clock(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_clock(v) for k, v in value.items() if k not in {"seconds", "elapsed_s"}}
    if isinstance(value, list):
        return [_without_clock(v) for v in value]
    return value


def test_each_task_gets_an_agent_of_its_own(make_batch: Callable[..., Path], kit: Any) -> None:
    # The scripted model has one reply: a model shared by the tasks would run out of it.
    folder = make_batch()
    rows = [{"id": i, "question": f"capital {i}?", "agent": "scripted"} for i in range(3)]
    tasks = kit.write_jsonl(folder / "tasks.jsonl", rows)
    assert _batch(folder, tasks, folder / "out.jsonl", "--concurrency", "2") == 0
    answers = {row["id"]: row["answer"] for row in kit.read_jsonl(folder / "out.jsonl")}
    assert answers == dict.fromkeys(range(3), "Paris is the capital.")


def test_a_run_again_skips_the_ids_already_written(
    make_batch: Callable[..., Path], kit: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_batch()
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(6))
    out = folder / "out.jsonl"
    # What a crash after four results leaves: four whole lines and a torn fifth.
    kit.write_jsonl(
        out, [{"id": f"t{i}", "answer": "kept", "stop_reason": "answer"} for i in range(4)]
    )
    with out.open("a") as file:
        file.write('{"id": "t4", "answ')
    assert _batch(folder, tasks, out) == 0
    rows = kit.read_jsonl(out)
    assert [row["id"] for row in rows] == ["t0", "t1", "t2", "t3", "t4", "t5"]
    assert [row["answer"] for row in rows[:4]] == ["kept"] * 4  # not run again
    assert "6/6 tasks done (2 this run, 4 earlier)" in capsys.readouterr().out
    assert _batch(folder, tasks, out) == 0  # all done: nothing runs, nothing is added
    assert len(kit.read_jsonl(out)) == 6
    assert "(0 this run, 6 earlier)" in capsys.readouterr().out


def test_a_failed_task_is_a_result_and_the_batch_goes_on(
    make_batch: Callable[..., Path], kit: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_batch()
    (folder / "agents.yaml").write_text(
        (folder / "agents.yaml").read_text()
        + "  broken:\n    model:\n      class: leanloop.testing:ScriptedChatModel\n"
        "      kwargs: {replies: [{raise: the server is down}]}\n"
    )
    rows = [*kit.quiz_tasks(2), {"id": "x", "question": "Q?", "agent": "broken", "expected": "."}]
    tasks = kit.write_jsonl(folder / "tasks.jsonl", rows)
    assert _batch(folder, tasks, folder / "out.jsonl") == 1
    failed = {row["id"]: row for row in kit.read_jsonl(folder / "out.jsonl")}["x"]
    assert failed["stop_reason"] == "failed"
    assert failed["answer"] is None and failed["correct"] is False
    assert "the server is down" in failed["error"]
    assert "3/3 tasks done" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("lines", "options", "error"),
    [
        (
            ['{"id": "a", "question": "Q"}', '{"id": "b", "question": '],
            (),
            "tasks.jsonl:2: not JSON (",
        ),
        (
            ['{"id": "a", "question": "Q"}', '{"id": "a", "question": "R"}'],
            (),
            "tasks.jsonl:2: id: 'a' is also the id of line 1",
        ),
        (
            ['{"id": "a", "question": "Q", "agent": "nobody"}'],
            (),
            "tasks.jsonl:1: agent: no agent named 'nobody' "
            "(the agents file has agents quiz, scripted)",
        ),
        (
            ['{"id": "a", "question": "Q"}'],
            ("--agent", "nobody"),
            "--agent: no agent named 'nobody' in ",
        ),
        (
            ['{"id": "a", "question": "Q"}'],
            ("--concurrency", "0"),
            "--concurrency: must be at least 1",
        ),
    ],
)
def test_bad_input_is_one_located_line_and_exit_2(
    make_batch: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    lines: list[str],
    options: tuple[str, ...],
    error: str,
) -> None:
    folder = make_batch()
    tasks = folder / "tasks.jsonl"
    tasks.write_text("".join(line + "\n" for line in lines))
    out = folder / "out.jsonl"
    assert _batch(folder, tasks, out, "--agent", "quiz", *options) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert captured.err.startswith("error: ")
    assert error in captured.err
    assert "Traceback" not in captured.err
    assert not out.exists()  # nothing ran, nothing was written


def test_a_results_file_that_is_not_one_is_refused(
    make_batch: Callable[..., Path], kit: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_batch()
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(1))
    (folder / "out.jsonl").write_text("id,answer\n")
    assert _batch(folder, tasks, folder / "out.jsonl") == 2
    assert f"error: {folder / 'out.jsonl'}:1: not a result line" in capsys.readouterr().err
    assert _batch(folder, tasks, tasks) == 2
    assert "is the tasks file" in capsys.readouterr().err


def test_ray_without_ray_installed_says_how_to_get_it(
    make_batch: Callable[..., Path],
    kit: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    folder = make_batch()
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(1))
    assert _batch(folder, tasks, folder / "out.jsonl", "--ray") == 1
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {RAY_EXTRA}"]
    assert (folder / "out.jsonl").read_text() == ""


def test_the_folder_shipped_to_workers_holds_the_file_and_workspaces(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "data").mkdir()
    agents = tmp_path / "conf" / "agents.yaml"
    model = "{class: leanloop.testing:ScriptedChatModel}"
    agents.write_text(f"version: 1\nagents:\n  a:\n    model: {model}\n")
    assert shipped_folder(agents, load_specs(agents)) == tmp_path / "conf"
    agents.write_text(
        f"version: 1\nagents:\n  a:\n    model: {model}\n  b:\n    model: {model}\n"
        "    workspace: ../data\n"
    )
    assert shipped_folder(agents, load_specs(agents)) == tmp_path


def test_help_lists_batch(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["batch", "--help"])
    text = capsys.readouterr().out
    assert "--out PATH" in text and "--ray [ADDRESS]" in text
