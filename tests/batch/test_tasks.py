"""``read_tasks``: a tasks file is checked whole, every problem located ``file:line``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leanloop.batch import BatchTask, read_tasks
from leanloop.batch.tasks import MAX_ISSUES
from leanloop.exceptions import SpecError

AGENTS = ["quiz", "scripted"]


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _problems(path: Path, agents: list[str] = AGENTS, **kwargs: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        read_tasks(path, agents, **kwargs)
    return [str(issue) for issue in caught.value.issues]


def test_reads_tasks_in_order_with_their_lines(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        json.dumps({"id": "a", "question": "Q1?", "agent": "quiz", "expected": "x+"}),
        "",
        json.dumps({"id": 7, "question": "Q2?"}),
    )
    assert read_tasks(path, AGENTS, default_agent="scripted") == [
        BatchTask("a", "Q1?", "quiz", "x+", 1),
        BatchTask(7, "Q2?", "scripted", None, 3),
    ]


def test_the_only_agent_is_the_default(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps({"id": "a", "question": "Q?"}))
    assert read_tasks(path, ["solo"])[0].agent == "solo"


def test_without_an_agent_several_agents_need_one(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps({"id": "a", "question": "Q?"}))
    assert _problems(path) == [
        f"{path}:1: agent: missing: the agents file has agents quiz, scripted; "
        "give --agent or the key"
    ]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id": "a", "question": "Q"', ":1: not JSON ("),
        ('["a", "Q"]', ":1: a task is a JSON object, not an array"),
        ('{"question": "Q"}', ":1: id: missing"),
        ('{"id": true, "question": "Q"}', ":1: id: must be a string or an integer, not a boolean"),
        ('{"id": 1.5, "question": "Q"}', ":1: id: must be a string or an integer, not a number"),
        ('{"id": " ", "question": "Q"}', ":1: id: is blank"),
        ('{"id": "a"}', ":1: question: missing"),
        ('{"id": "a", "question": ["Q"]}', ":1: question: must be a string, not an array"),
        ('{"id": "a", "question": "  "}', ":1: question: is blank"),
        ('{"id": "a", "question": "Q", "agent": "nope"}', ":1: agent: no agent named 'nope'"),
        ('{"id": "a", "question": "Q", "agent": 3}', ":1: agent: must be a string, not a number"),
        ('{"id": "a", "question": "Q", "expected": "("}', ":1: expected: not a regular expression"),
        ('{"id": "a", "question": "Q", "expected": 4}', ":1: expected: must be a string"),
        ('{"id": "a", "question": "Q", "questoin": "R"}', ":1: questoin: unknown key"),
    ],
)
def test_each_problem_is_one_located_line(tmp_path: Path, line: str, problem: str) -> None:
    path = _write(tmp_path, line)
    problems = _problems(path, default_agent="quiz")
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}{problem}")


def test_duplicate_ids_name_the_first_line(tmp_path: Path) -> None:
    task = json.dumps({"id": "q1", "question": "Q", "agent": "quiz"})
    other = json.dumps({"id": 1, "question": "Q", "agent": "quiz"})  # 1 is not "q1", nor "1"
    path = _write(tmp_path, task, other, "", task)
    assert _problems(path) == [f"{path}:4: id: 'q1' is also the id of line 1"]


def test_every_problem_of_the_file_is_reported_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path, "nope", json.dumps({"id": "a", "question": "Q", "agent": "quiz"}), "[]")
    assert [p.split(": ")[0] for p in _problems(path)] == [f"{path}:1", f"{path}:3"]


def test_a_file_of_another_shape_is_cut_short(tmp_path: Path) -> None:
    path = _write(tmp_path, *["oops"] * (MAX_ISSUES + 5))
    problems = _problems(path)
    assert len(problems) == MAX_ISSUES + 1
    assert problems[-1] == f"{path}: and 5 more problems"


def test_an_empty_a_missing_and_a_non_utf8_file(tmp_path: Path) -> None:
    assert _problems(_write(tmp_path, "", "  ")) == [
        f"{tmp_path / 'tasks.jsonl'}: no tasks (every line is blank)"
    ]
    missing = tmp_path / "missing.jsonl"
    assert _problems(missing) == [f"{missing}: No such file or directory"]
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "a", "question": "caf\xe9"}\n')
    assert _problems(latin)[0].startswith(f"{latin}: not UTF-8 text")
