"""The second held-out set of the pruning fidelity benchmark is sound, fixed and reported apart.

``benchmarks/fidelity_cases_round2.py``: eight cases of shapes the first module does not
use, each sound by :func:`check_case` and the set's stricter :func:`check_round2`, half
asked in the answering lines' words and half in a user's own; the same text on every build,
pinned by digest so that nobody edits a case after its figures have been seen; and
``benchmarks/pruning_fidelity.py`` lists them and reports them as ``held out 2``, the old
sets' rows and summary as they were.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # importlib mode: the repository root is not on the path
    sys.path.insert(0, str(ROOT))

from benchmarks import fidelity_cases_round2 as round2  # noqa: E402
from benchmarks import pruning_fidelity as fidelity  # noqa: E402
from benchmarks.fidelity_cases import CASES, Case, check_case  # noqa: E402

from leanloop.pruning.rank import focus_of, line_scores  # noqa: E402

CASES_ROUND2 = round2.CASES_ROUND2
NAMES = [case.name for case in CASES_ROUND2]

# sha256 of each case's answering line numbers and text: a held-out case is never edited
# once written. A change here means a new set (a third module), not a new digest.
DIGESTS = {
    "journal-dump": "075ee5bf1b576657",
    "httpd-refused": "9da17b9c47fe980c",
    "gha-upload": "e9edc7b6f8653209",
    "postgres-deadlock": "85ba00204b2bcccb",
    "terraform-replace": "d068d84460d598d9",
    "k8s-memory-limit": "54136679086f3a47",
    "sql-cascade": "508a97ca07d449db",
    "telegraf-flush": "bfb1d5ecfbb6af12",
}
LOGS = {"journal-dump", "httpd-refused", "gha-upload", "postgres-deadlock", "terraform-replace"}


def _digest(case: Case) -> str:
    text = f"{case.answer_numbers}\n{case.text}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("case", CASES_ROUND2, ids=NAMES)
def test_case_is_sound(case: Case) -> None:
    assert check_case(case) == []
    assert round2.check_round2(case) == []


@pytest.mark.parametrize("case", CASES_ROUND2, ids=NAMES)
def test_size_and_answers_within_bounds(case: Case) -> None:
    assert 40_000 <= len(case.text) <= 75_000
    assert round2.numbered_chars(case) < 80_000
    assert 1 <= len(case.answers) <= 4
    assert len(set(case.answers)) == len(case.answers)
    lines = len(case.lines)
    assert all(0.05 * lines <= i < 0.95 * lines for i in case.answers)
    assert all(len(line) < 2_000 and "\n" not in line for line in case.lines)
    assert case.held_out


@pytest.mark.parametrize("case", CASES_ROUND2, ids=NAMES)
def test_some_lines_share_the_focus_without_answering(case: Case) -> None:
    """Every case has distractors: lines the word matcher finds that do not answer."""
    scores = line_scores(list(case.lines), focus_of(case.focus))
    distractors = [i for i, score in enumerate(scores) if score and i not in case.answers]
    assert len(distractors) >= 3


def test_half_shared_half_own_words() -> None:
    kinds = [case.focus_kind for case in CASES_ROUND2]
    assert len(CASES_ROUND2) == 8
    assert kinds.count("shared") == 4
    assert kinds.count("own") == 4
    assert all(
        line_scores([case.lines[i], "", "", ""], focus_of(case.focus))[0] == 0
        for case in CASES_ROUND2
        if case.focus_kind == "own"
        for i in case.answers
    )


def test_new_shapes_and_names() -> None:
    assert len(set(NAMES)) == len(NAMES)
    assert not set(NAMES) & {case.name for case in CASES}
    assert not {case.kind for case in CASES_ROUND2} & {case.kind for case in CASES}
    assert set(NAMES) >= LOGS  # five logs or command outputs, three files that are not
    assert len(set(NAMES) - LOGS) == 3


def test_cases_are_deterministic() -> None:
    again = round2._round2()
    assert [c.text for c in again] == [c.text for c in CASES_ROUND2]
    assert [c.answers for c in again] == [c.answers for c in CASES_ROUND2]
    assert again == list(CASES_ROUND2)


def test_cases_are_pinned() -> None:
    assert {case.name: _digest(case) for case in CASES_ROUND2} == DIGESTS


def test_check_round2_catches_an_own_words_answer_that_shares_a_plural() -> None:
    """check_case matches a focus word as written; the round-2 check also finds its singular."""
    lines = tuple(
        f"noise line {n} with nothing in it, padded to a realistic width " * 2 for n in range(500)
    )
    answer = 250
    lines = (*lines[:answer], "the backup of the orders table stopped", *lines[answer + 1 :])
    case = Case("probe", "probe", "x.log", "where are the backups", "own", True, lines, (answer,))
    assert check_case(case) == []
    assert round2.check_round2(case) == ["probe: line 251 matches the focus"]


def test_list_prints_the_second_set_without_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert fidelity.main(["--list", "--set", "held-out-2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| case | set | kind | focus | chars | answering lines |"
    rows = out[2:]
    assert [row.split(" | ")[0].removeprefix("| ") for row in rows] == NAMES
    assert all(" | held out 2 | " in row for row in rows)
    gha = next(row for row in rows if row.startswith("| gha-upload |"))
    case = CASES_ROUND2[NAMES.index("gha-upload")]
    assert gha.endswith(f" | {len(case.text):,} | {', '.join(map(str, case.answer_numbers))} |")


def test_list_of_all_sets(capsys: pytest.CaptureFixture[str]) -> None:
    assert fidelity.main(["--list"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert len(rows) == len(CASES) + len(CASES_ROUND2) + len(fidelity.CASES_ROUND3)
    labels = [row.split(" | ")[1] for row in rows]
    assert labels.count("held out 2") == 8
    assert labels.count("tuning 3") == len(fidelity.CASES_ROUND3)
    assert labels.count("held out") == sum(c.held_out for c in CASES)
    assert labels.count("tuning") == sum(not c.held_out for c in CASES)


def _result(case: Case, kept: int) -> fidelity.CaseResult:
    return fidelity.CaseResult(
        model="m",
        case=case.name,
        held_out=case.held_out,
        focus_kind=case.focus_kind,
        answers=len(case.answers),
        kept=kept,
        near=0,
        chars_raw=len(case.text),
        chars=1_000,
        pruned=True,
        requests=2,
        prompt_tokens=900,
        evaluated=None,
        cached=None,
        seconds=5.0,
        note="",
    )


def test_tables_report_the_second_set_apart() -> None:
    old = [_result(case, len(case.answers)) for case in CASES]
    new = [_result(case, 0) for case in CASES_ROUND2]
    table = fidelity._table(old + new)
    assert all(f"| {c.name} | held out 2 |" in table for c in CASES_ROUND2)
    assert all(f"| {c.name} | {'held out' if c.held_out else 'tuning'} |" in table for c in CASES)
    summary = fidelity._summary(old + new).splitlines()
    labels = [row.split(" | ")[1] for row in summary[2:]]
    held = sum(c.held_out for c in CASES)
    assert labels == [f"tuning ({len(CASES) - held})", f"held out ({held})", "held out 2 (8)",
                      f"all ({len(CASES) + 8})"]  # fmt: skip
    assert " | 0/" in summary[4]  # the second set's own figures, not the first's


def test_old_sets_summary_as_before() -> None:
    """Without the second set's rows the summary has the rows it always had."""
    old = [_result(case, len(case.answers)) for case in CASES]
    summary = fidelity._summary(old).splitlines()
    held = sum(c.held_out for c in CASES)
    labels = [row.split(" | ")[1] for row in summary[2:]]
    assert labels == [f"tuning ({len(CASES) - held})", f"held out ({held})", f"all ({len(CASES)})"]
    only_held = fidelity._summary([r for r in old if r.held_out]).splitlines()
    assert [row.split(" | ")[1] for row in only_held[2:]] == [f"held out ({held})", f"all ({held})"]
