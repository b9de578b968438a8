"""The third tuning set of the pruning fidelity benchmark is sound and stays the same.

:mod:`benchmarks.fidelity_cases_round3`: ten cases in shapes the first set does not have,
half with a focus that names words of the answering lines, half in a user's own words.
This file builds no model and imports neither the benchmark runner nor the second
held-out set (``fidelity_cases_round2``), which nobody tuning the pass may read.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # importlib mode: the repository root is not on the path
    sys.path.insert(0, str(ROOT))

from benchmarks import fidelity_cases_round3 as round3  # noqa: E402
from benchmarks.fidelity_cases import CASES, Case  # noqa: E402

from leanloop.pruning.rank import focus_of, line_scores  # noqa: E402

CASES_ROUND3 = round3.CASES_ROUND3
NAMES = [case.name for case in CASES_ROUND3]

# sha256 of each case's answering line numbers and text, so that a change of Python's
# random module or an unmeant edit shows. Editing a case on purpose means a new digest.
DIGESTS = {
    "syslog-backup": "07000d83a029fa83",
    "haproxy-504": "5c93bad81ae2633f",
    "jenkins-red": "92a319308e5901a2",
    "mysql-replica": "2495364b141abffd",
    "ansible-behind": "f7a5e51969949a78",
    "compose-smtp": "13645e7dfe234750",
    "nginx-upload": "ff199e98da3d7265",
    "django-fk": "8041c9415a891fa3",
    "ps-memory": "3a9dd4baf17a7ee4",
    "changelog-legacy-tls": "f15030c89894bb59",
}
LOGS = {"syslog-backup", "haproxy-504", "jenkins-red", "mysql-replica", "ansible-behind"}


def _digest(case: Case) -> str:
    text = f"{case.answer_numbers}\n{case.text}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("case", CASES_ROUND3, ids=NAMES)
def test_case_is_sound(case: Case) -> None:
    assert round3.check_round3(case) == []


@pytest.mark.parametrize("case", CASES_ROUND3, ids=NAMES)
def test_size_and_answers_within_bounds(case: Case) -> None:
    assert 40_000 <= len(case.text) <= 75_000
    assert len(case.text.encode()) <= 80_000
    # read_file's numbered output of the whole file fits the registry's cap on one result.
    assert round3.numbered_chars(case) < 80_000
    assert 1 <= len(case.answers) <= 4
    assert list(case.answers) == sorted(set(case.answers))
    for index in case.answers:
        assert case.lines.count(case.lines[index]) == 1
        assert case.text.count(case.lines[index] + "\n") == 1


@pytest.mark.parametrize("case", CASES_ROUND3, ids=NAMES)
def test_some_lines_share_the_focus_without_answering(case: Case) -> None:
    scores = line_scores(list(case.lines), focus_of(case.focus))
    distractors = [i for i, score in enumerate(scores) if score > 0 and i not in case.answers]
    assert distractors


def test_half_shared_half_own_words() -> None:
    kinds = [case.focus_kind for case in CASES_ROUND3]
    assert len(CASES_ROUND3) == 10
    assert kinds.count("shared") == kinds.count("own") == 5
    assert round3.check_set() == []
    for case in CASES_ROUND3:
        scores = line_scores(list(case.lines), focus_of(case.focus))
        for index in case.answers:
            shared = round3.shared_terms(case.focus, case.lines[index])
            if case.focus_kind == "own":
                assert shared == [], (case.name, index + 1, shared)
                assert scores[index] == 0
            else:
                assert scores[index] > 0, (case.name, index + 1)


def test_both_halves_hold_logs_and_other_files() -> None:
    logs = [case for case in CASES_ROUND3 if case.name in LOGS]
    others = [case for case in CASES_ROUND3 if case.name not in LOGS]
    assert len(logs) == len(others) == 5
    for group in (logs, others):
        assert {case.focus_kind for case in group} == {"shared", "own"}


def test_new_shapes_and_names() -> None:
    assert set(NAMES) == set(DIGESTS)
    assert len(set(NAMES)) == len(NAMES)
    assert not set(NAMES) & {case.name for case in CASES}
    assert not {case.kind for case in CASES_ROUND3} & {case.kind for case in CASES}
    assert len({case.kind for case in CASES_ROUND3}) == len(CASES_ROUND3)
    assert len({case.path for case in CASES_ROUND3}) == len(CASES_ROUND3)
    assert not any(case.held_out for case in CASES_ROUND3)


# Each log's time stamp at the start of its lines: the logs run forward in time.
STAMPS = {
    "syslog-backup": r"Mar 14 (\d\d:\d\d:\d\d) ",
    "haproxy-504": r"Mar 14 (\d\d:\d\d:\d\d) ",
    "mysql-replica": r"2026-03-14T(\S+)Z ",
    "jenkins-red": r"\[2026-03-14T(\S+)Z\] ",
}


@pytest.mark.parametrize("name", sorted(STAMPS))
def test_logs_run_forward_in_time(name: str) -> None:
    case = next(case for case in CASES_ROUND3 if case.name == name)
    stamps = []
    for line in case.lines:
        found = re.match(STAMPS[name], line)
        assert found is not None, line
        stamps.append(found[1])
    assert stamps == sorted(stamps)


def test_cases_are_deterministic() -> None:
    first, second = round3.build_round3(), round3.build_round3()
    assert first == second == CASES_ROUND3
    assert [case.text for case in first] == [case.text for case in second]


def test_cases_are_pinned() -> None:
    assert {case.name: _digest(case) for case in CASES_ROUND3} == DIGESTS


def test_shared_terms_counts_plurals_stems_and_literals() -> None:
    assert round3.shared_terms("why are uploads rejected", "upload was rejecting it") == [
        "uploads",
        "rejected",
    ]
    assert round3.shared_terms("the nightly job", "every night at two") == ["nightly"]
    assert round3.shared_terms("server api-03", "be_api/api-03 504") == ["api-03"]
    # stopwords and words under three letters are no terms
    assert round3.shared_terms("why is it on", "it is on") == []


def test_check_round3_catches_an_own_words_answer_that_shares_a_word() -> None:
    case = next(case for case in CASES_ROUND3 if case.name == "nginx-upload")
    assert round3.check_round3(case) == []
    leaky = dataclasses.replace(case, focus="why is the client body size too small")
    problems = round3.check_round3(leaky)
    assert any("shares" in problem for problem in problems)


def test_check_round3_catches_a_duplicated_answer_and_a_small_file() -> None:
    case = next(case for case in CASES_ROUND3 if case.name == "compose-smtp")
    answer = case.lines[case.answers[0]]
    doubled = dataclasses.replace(case, lines=(*case.lines, answer))
    assert any("2 times" in problem for problem in round3.check_round3(doubled))
    small = dataclasses.replace(
        case, lines=case.lines[: case.answers[-1] + 1], answers=case.answers
    )
    assert any("characters" in problem for problem in round3.check_round3(small))


def test_the_set_does_not_import_the_second_held_out_set() -> None:
    tree = ast.parse(Path(round3.__file__).read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert not [name for name in imported if name and "round2" in name]
