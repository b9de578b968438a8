"""``leanloop batch`` and tool calls that ask a person (issue 41, ADR 0037).

Nobody sits at a batch: ``--approve TOOL``, ``--approve-all`` or an ``--approvals FILE``
decide, and a call none of them covers pauses its task. A paused task is its own status
(``stop_reason: "paused"``, ``pending_calls``, the summary's ``paused``), exit code 4 when
nothing failed; a run of the batch again with decisions runs the paused tasks again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from leanloop.batch.approvals import BatchApprovals, read_approvals
from leanloop.batch.command import EXIT_PAUSED
from leanloop.cli import _runs
from leanloop.cli.command import main
from leanloop.exceptions import SpecError

WRITE = {"tool_calls": [{"name": "write_file", "args": {"path": "out.txt", "content": "done"}}]}


def _agents(folder: Path) -> Path:
    write = {"tool_calls": [{**WRITE["tool_calls"][0], "id": "c1"}]}
    replies = json.dumps([write, {"content": "Wrote it."}])
    (folder / "agents.yaml").write_text(
        "version: 1\nagents:\n"
        "  writer:\n    model:\n      class: leanloop.testing:ScriptedChatModel\n"
        f"      kwargs: {{replies: {replies}}}\n"
        "    tools: [read_file, write_file]\n"
        "  plain:\n    model:\n      class: leanloop.testing:ScriptedChatModel\n"
        '      kwargs: {replies: ["Paris."]}\n'
        "  broken:\n    model:\n      class: leanloop.testing:ScriptedChatModel\n"
        '      kwargs: {replies: [{raise: "the model server is down"}], repeat_last: true}\n',
        encoding="utf-8",
    )
    return folder / "agents.yaml"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    _agents(tmp_path)
    return tmp_path


def _tasks(folder: Path, *agents: str) -> Path:
    rows = [
        {"id": f"t{i}", "question": "write it", "agent": agent, "expected": "Wrote"}
        for i, agent in enumerate(agents)
    ]
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _batch(folder: Path, *options: str) -> int:
    agents, tasks = folder / "agents.yaml", folder / "tasks.jsonl"
    return main(["batch", str(agents), str(tasks), "--out", str(folder / "out.jsonl"), *options])


def _results(folder: Path) -> dict[str, dict[str, Any]]:
    lines = (folder / "out.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}  # a later line of an id wins


def _summary(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads(capsys.readouterr().out)
    return summary


def test_a_call_nobody_decided_pauses_its_task_and_the_batch_exits_4(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tasks(folder, "writer", "plain")
    assert _batch(folder, "--json") == EXIT_PAUSED == _runs.EXIT_PAUSED
    summary = _summary(capsys)
    assert (summary["paused"], summary["answered"], summary["failed"]) == (1, 1, 0)
    paused = _results(folder)["t0"]
    assert paused["stop_reason"] == "paused"
    assert [(c["id"], c["tool"]) for c in paused["pending_calls"]] == [("c1", "write_file")]
    assert "correct" not in paused  # a waiting text is neither right nor wrong
    assert summary["with_expected"] == 1  # the plain task alone
    assert not (folder / "out.txt").exists()
    assert _batch(folder) == EXIT_PAUSED
    assert "1 paused for approval (run the batch again with --approve" in capsys.readouterr().out


def test_a_run_again_with_a_decision_finishes_the_paused_tasks(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tasks(folder, "writer", "plain")
    assert _batch(folder, "--json") == EXIT_PAUSED
    capsys.readouterr()
    assert _batch(folder, "--json", "--approve", "write_file") == 0
    summary = _summary(capsys)
    assert (summary["ran"], summary["skipped"], summary["paused"]) == (1, 1, 0)
    done = _results(folder)["t0"]
    assert (done["stop_reason"], done["answer"], done["correct"]) == ("answer", "Wrote it.", True)
    [approval] = done["report"]["approvals"]
    assert (approval["decision"], approval["by"]) == ("approve", "batch --approve write_file")
    assert (folder / "out.txt").read_text(encoding="utf-8") == "done"
    # The paused line stays in the file, superseded: a third run has nothing to do.
    assert len((folder / "out.jsonl").read_text(encoding="utf-8").splitlines()) == 3
    assert _batch(folder, "--json") == 0
    assert _summary(capsys)["ran"] == 0


def test_a_policy_file_rejects_with_the_reason_the_model_reads(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tasks(folder, "writer")
    policy = folder / "approvals.yaml"
    policy.write_text("write_file: 'reject: not in a batch'\n", encoding="utf-8")
    assert _batch(folder, "--json", "--approve-all", "--approvals", str(policy)) == 0
    row = _results(folder)["t0"]
    [approval] = row["report"]["approvals"]
    assert (approval["decision"], approval["reason"]) == ("reject", "not in a batch")
    assert approval["by"] == f"batch --approvals {policy}"
    assert not (folder / "out.txt").exists()


def test_approve_all_approves_what_the_file_does_not_name(folder: Path) -> None:
    _tasks(folder, "writer")
    policy = folder / "approvals.yaml"
    policy.write_text("run_command: reject\n", encoding="utf-8")
    assert _batch(folder, "--approve-all", "--approvals", str(policy)) == 0
    [approval] = _results(folder)["t0"]["report"]["approvals"]
    assert approval["by"] == "batch --approve-all"


def test_a_failed_task_beside_a_paused_one_exits_1(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tasks(folder, "writer", "broken")
    assert _batch(folder, "--json") == 1
    summary = _summary(capsys)
    assert (summary["paused"], summary["failed"]) == (1, 1)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("write_file: maybe\n", "write_file: 'maybe' is no decision (approve, reject"),
        ("- write_file\n", "must map tool names to a decision"),
        ("write_file: [approve]\n", "is no decision"),
        ("write_file: 'approve: yes'\n", "is no decision"),
        ("{write_file: approve\n", "not YAML"),
    ],
)
def test_a_bad_policy_file_is_one_line_and_exit_2(
    folder: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    _tasks(folder, "writer")
    policy = folder / "approvals.yaml"
    policy.write_text(text, encoding="utf-8")
    assert _batch(folder, "--approvals", str(policy)) == 2
    err = capsys.readouterr().err
    assert f"{policy}: " in err and says in err, err
    assert not (folder / "out.jsonl").exists() or not _results(folder)


def test_a_file_that_rejects_what_approve_names_is_refused(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tasks(folder, "writer")
    policy = folder / "approvals.yaml"
    policy.write_text("write_file: reject\n", encoding="utf-8")
    assert _batch(folder, "--approve", "write_file", "--approvals", str(policy)) == 2
    assert f"{policy} rejects write_file" in capsys.readouterr().err


def test_the_decisions_travel_as_plain_data(tmp_path: Path) -> None:
    policy = tmp_path / "a.yaml"
    policy.write_text("write_file: approve\nrun_command: 'reject: no shell'\n", encoding="utf-8")
    approvals = read_approvals(str(policy), tools=["edit_file"], approve_all=True)
    assert approvals is not None
    assert BatchApprovals.from_dict(json.loads(json.dumps(approvals.to_dict()))) == approvals
    assert approvals.rules["run_command"] == ("reject", "no shell")
    assert read_approvals(None) is None
    with pytest.raises(SpecError):
        read_approvals(str(tmp_path / "missing.yaml"))
