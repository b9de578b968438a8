"""What a hostile or broken world does to a batch (issue 38: N4, N5, N6, N8, N19, N20).

Two batches on one results file, an ``expected`` that backtracks without end, a task
whose text is not UTF-8, a line nested too deeply, a full disk, a byte order mark. Each
ends in a result or one located line, never a traceback, a hang or a wedged batch. The
time limit of a match is injected (a millisecond): nothing here waits on the clock.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from leanloop.batch import BatchTask, ResultsFile, read_tasks
from leanloop.batch.results import BUSY
from leanloop.batch.runner import expected_matches, result_record, run_local
from leanloop.cli.command import main
from leanloop.exceptions import LeanloopError, SpecError
from leanloop.spec import load_specs

BACKTRACKS = r"(a|aa)+$"
"""Backtracks without end on ``"a" * 60 + "b"``, in ``re`` and in ``regex`` alike."""
NO_MATCH = "a" * 60 + "b"


def _batch(folder: Path, tasks: Path, out: Path, *options: str) -> int:
    return main(["batch", str(folder / "agents.yaml"), str(tasks), "--out", str(out), *options])


# --- N4: two batches on one results file ---------------------------------------------


def test_a_second_open_of_a_held_results_file_is_refused_untouched(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_bytes(b'{"id": "a"}\n{"id": "b", "ans')  # a torn line the holder may still cut
    with ResultsFile.open(out) as first:
        held = out.read_bytes()
        with pytest.raises(SpecError) as caught:
            ResultsFile.open(out)
        assert str(caught.value) == f"{out}: {BUSY}"
        assert out.read_bytes() == held  # not read into, cut or written by the refused one
        first.write({"id": "b"})
    with ResultsFile.open(out) as again:  # closed: the lock went with it
        assert list(again.records) == ["a", "b"]


def test_a_batch_on_a_results_file_another_batch_holds_exits_2_in_one_line(
    make_batch: Callable[..., Path], kit: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_batch()
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(3))
    out = folder / "out.jsonl"
    with ResultsFile.open(out) as other:  # the other batch, mid-run
        other.write({"id": "t0", "answer": "kept"})
        assert _batch(folder, tasks, out) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.splitlines() == [f"error: {out}: {BUSY}"]
        assert kit.read_jsonl(out) == [{"id": "t0", "answer": "kept"}]  # no task ran twice
    assert _batch(folder, tasks, out) == 0  # once the other is done, this one resumes
    assert [row["id"] for row in kit.read_jsonl(out)] == ["t0", "t1", "t2"]


def test_a_results_path_that_is_no_regular_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="is not a regular file"):
        ResultsFile.open("/dev/full")  # reading it never ends, writing it never succeeds


# --- N5: an expected pattern that backtracks without end -----------------------------


def _task(expected: str | None) -> BatchTask:
    return BatchTask("t", "Q?", "quiz", expected, 1)


def test_an_expected_that_runs_out_of_time_is_not_correct_with_a_note() -> None:
    record = result_record(
        _task(BACKTRACKS), NO_MATCH, {}, error=None, seconds=0.0, match_seconds=0.001
    )
    assert record["correct"] is False
    assert record["note"].startswith("expected took too long to match (over 0.001 s)")
    assert record["stop_reason"] == "answer"  # the run answered; only the check gave up


def test_expected_still_matches_as_before() -> None:
    assert expected_matches(r"^two times \d", "two times 4 is what") == (True, None)
    assert expected_matches("four", "two times 3") == (False, None)
    assert expected_matches("x", None) == (False, None)
    # The issue's pattern: `re` backtracks on it for minutes; this engine answers at once.
    assert expected_matches(r"(a+)+$", NO_MATCH) == (False, None)
    record = result_record(_task("is"), "it is", {}, error=None, seconds=0.0)
    assert record["correct"] is True and "note" not in record


# --- N6: text that is not UTF-8 --------------------------------------------------------


def _tasks_file(tmp_path: Path, *lines: str, prefix: bytes = b"") -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_bytes(prefix + "".join(line + "\n" for line in lines).encode("utf-8"))
    return path


@pytest.mark.parametrize("key", ["question", "id", "expected"])
def test_a_lone_surrogate_in_a_task_is_refused_located(tmp_path: Path, key: str) -> None:
    task = {"id": "a", "question": "Q", "expected": "x"} | {key: "bad \ud800 text"}
    path = _tasks_file(tmp_path, '{"id": "ok", "question": "Q"}', json.dumps(task))
    with pytest.raises(SpecError) as caught:
        read_tasks(path, ["quiz"])
    assert [str(issue) for issue in caught.value.issues] == [
        f"{path}:2: {key}: holds '\\ud800', a lone surrogate: not text (UTF-8)"
    ]


def test_a_result_that_cannot_be_written_is_its_tasks_failure(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    record = result_record(_task("x"), "an answer \udcff cut", {"steps": 1}, error=None, seconds=1)
    with ResultsFile.open(out) as results:
        written = results.write(record)
        results.write({"id": "next", "answer": "fine"})  # the batch goes on
    assert written["stop_reason"] == "failed" and written["answer"] is None
    assert written["correct"] is False and written["expected"] == "x"
    assert written["error"].startswith("the result could not be written as UTF-8 JSON (answer: ")
    with ResultsFile.open(out) as again:  # and every run again reads the file
        assert again.records["t"] == written
        assert list(again.records) == ["t", "next"]


def test_an_unwritable_answer_fails_its_task_and_the_batch_goes_on(
    make_batch: Callable[..., Path], kit: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # QuizModel answers with the question reversed: a question is checked, so here the
    # model's reply itself holds the surrogate (a server may send "\ud800" in its JSON).
    folder = make_batch()
    (folder / "agents.yaml").write_text(
        (folder / "agents.yaml").read_text()
        + "  odd:\n    model:\n      class: leanloop.testing:ScriptedChatModel\n"
        '      kwargs: {replies: ["half \\ud800 a character"]}\n'
    )
    rows = [*kit.quiz_tasks(2), {"id": "x", "question": "Q?", "agent": "odd"}]
    tasks = kit.write_jsonl(folder / "tasks.jsonl", rows)
    out = folder / "out.jsonl"
    assert _batch(folder, tasks, out, "--concurrency", "2") == 1
    assert "3/3 tasks done" in capsys.readouterr().out
    by_id = {row["id"]: row for row in kit.read_jsonl(out)}
    assert by_id["x"]["stop_reason"] == "failed" and "answer: " in by_id["x"]["error"]
    assert by_id["t0"]["stop_reason"] == by_id["t1"]["stop_reason"] == "answer"
    assert _batch(folder, tasks, out) == 1  # a run again reads it, runs nothing
    assert "(0 this run, 3 earlier)" in capsys.readouterr().out


# --- N8, N20: lines nested too deeply, a byte order mark -------------------------------


def test_a_line_nested_too_deeply_is_refused_located(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    path = _tasks_file(tmp_path, '{"id": "a", "question": "Q"}', deep)
    with pytest.raises(SpecError) as caught:
        read_tasks(path, ["quiz"])
    assert [str(i) for i in caught.value.issues] == [
        f"{path}:2: not a task: nested too deeply to read"
    ]


def test_a_results_line_nested_too_deeply_is_refused_located(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text('{"id": "a", "report": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(SpecError, match=":1: not a result line \\(nested too deeply\\)"):
        ResultsFile.open(out)


def test_a_byte_order_mark_is_no_part_of_the_first_task(tmp_path: Path) -> None:
    path = _tasks_file(tmp_path, '{"id": "a", "question": "Q"}', prefix=b"\xef\xbb\xbf")
    assert read_tasks(path, ["quiz"]) == [BatchTask("a", "Q", "quiz", None, 1)]


# --- N19: a full disk ----------------------------------------------------------------


def _full_disk(after: int) -> Callable[[int, bytes], int]:
    """An ``os.write`` that writes ``after`` bytes in all, then fails as a full disk does."""
    room = [after]

    def write(fd: int, data: bytes) -> int:
        if room[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        done = os.write(fd, data[: room[0]])
        room[0] -= done
        return done

    return write


def test_a_full_disk_is_one_line_and_the_file_resumes(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with ResultsFile.open(out, write=_full_disk(after=15)) as results:
        results.write({"id": "a"})  # 12 bytes
        with pytest.raises(LeanloopError) as caught:
            results.write({"id": "b"})  # 3 bytes fit: a torn line is left
        assert str(caught.value) == (
            f"cannot write {out}: No space left on device; rerun to resume"
            " (the results written before it are kept)"
        )
        with pytest.raises(LeanloopError, match="cannot write"):
            results.write({"id": "c"})  # nothing goes after a torn line
    assert out.read_bytes() == b'{"id": "a"}\n{"i'
    with ResultsFile.open(out) as again:  # the torn line is dropped: "b" runs again
        assert list(again.records) == ["a"]
        again.write({"id": "b"})
    assert out.read_bytes() == b'{"id": "a"}\n{"id": "b"}\n'


def test_a_full_disk_ends_a_concurrent_batch_with_its_one_error(
    tmp_path: Path, make_batch: Callable[..., Path], kit: Any
) -> None:
    folder = make_batch()
    specs = load_specs(folder / "agents.yaml")
    tasks = read_tasks(kit.write_jsonl(folder / "t.jsonl", kit.quiz_tasks(6)), list(specs))
    # Not an ExceptionGroup: the error the CLI prints as one `error:` line, exit 1.
    with (
        ResultsFile.open(tmp_path / "r.jsonl", write=_full_disk(after=0)) as results,
        pytest.raises(LeanloopError, match="No space left on device; rerun to resume"),
    ):
        asyncio.run(run_local(specs, tasks, results, concurrency=3))
