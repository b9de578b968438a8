"""``ResultsFile``: durable appends, the ids it holds, a torn last line dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leanloop.batch import ResultsFile
from leanloop.exceptions import SpecError


def test_written_lines_are_read_back_by_id(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "results.jsonl"  # its folders are made
    with ResultsFile.open(out) as results:
        results.write({"id": "a", "answer": "x"})
        results.write({"id": 2, "answer": "é"})
    assert out.read_text(encoding="utf-8") == (
        '{"id": "a", "answer": "x"}\n{"id": 2, "answer": "é"}\n'
    )
    with ResultsFile.open(out) as again:
        assert again.records == {"a": {"id": "a", "answer": "x"}, 2: {"id": 2, "answer": "é"}}
        again.write({"id": "c"})
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_a_second_line_for_an_id_is_refused(tmp_path: Path) -> None:
    with ResultsFile.open(tmp_path / "r.jsonl") as results:
        results.write({"id": "a"})
        with pytest.raises(ValueError, match="already holds task 'a'"):
            results.write({"id": "a"})
    assert (tmp_path / "r.jsonl").read_text() == '{"id": "a"}\n'


def test_a_torn_last_line_is_dropped_and_its_task_runs_again(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text('{"id": "a"}\n{"id": "b", "ans')  # a crash in the middle of a write
    with ResultsFile.open(out) as results:
        assert list(results.records) == ["a"]
        results.write({"id": "b"})
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"id": "a"}\nnot json\n', ":2: not a result line ("),
        ('{"answer": "x"}\n', ":1: id: not a result line (no task id)"),
        ("[1]\n", ":1: id: not a result line (no task id)"),
        ('{"id": "a"}\n\n{"id": "a"}\n', ":3: id: 'a' is also the id of line 1"),
    ],
)
def test_a_file_that_is_not_results_is_refused_located(
    tmp_path: Path, text: str, problem: str
) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text(text)
    with pytest.raises(SpecError) as caught:
        ResultsFile.open(out)
    assert str(caught.value).startswith(f"{out}{problem}")
    assert out.read_text() == text  # nothing was cut or added


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="is a folder, not a file"):
        ResultsFile.open(tmp_path)
