"""Units of the answer check: values looked up in what the tools returned (issue 37)."""

from __future__ import annotations

import pytest

from leanloop.grounding import (
    Grounding,
    SourceLine,
    check_answer,
    recheck_prompt,
    settle,
    source_lines,
)


def _read(name: str, text: str) -> tuple[str, str]:
    lines = text.splitlines()
    body = [f"{number:>5}| {line}" for number, line in enumerate(lines, 1)]
    return name, "\n".join([*body, f"[lines 1-{len(lines)} of {len(lines)}; end of file]"])


INVENTORY = _read(
    "inventory.json",
    '{\n  "warehouse": "Lyon-2",\n  "items": [\n    {"name": "laptop", "count": 42},\n'
    '    {"name": "monitor", "count": 17},\n    {"name": "keyboard", "count": 120}\n  ]\n}\n',
)
BACKUP = _read(
    "backup.ini",
    "[daily]\nschedule = 02:00\nretention_days = 14\n\n[weekly]\nschedule = Sunday 03:00\n"
    "retention_days = 90\n",
)
MEETING = _read(
    "meeting.md",
    "# Kick-off meeting, 3 March\n\nPresent: Maria Chen (project lead), Tom Okafor.\n\n"
    "- Maria Chen leads the project; Tom Okafor owns the backend.\n",
)


def test_source_lines_keep_numbers_sections_and_skip_footers() -> None:
    lines = source_lines([BACKUP, ("search", "notes/a.md:12:the port is 8080")])
    assert [(line.number, line.section) for line in lines][:3] == [
        (1, "[daily]"),
        (2, "[daily]"),
        (3, "[daily]"),
    ]
    assert lines[-2].section == "[weekly]"
    assert not any(line.text.startswith("[lines") for line in lines)
    hit = lines[-1]
    assert (hit.source, hit.number, hit.text, hit.result) == (
        "notes/a.md",
        12,
        "the port is 8080",
        1,
    )


@pytest.mark.parametrize(
    ("question", "answer", "source", "value", "better"),
    [
        ("How many laptops are in inventory.json?", "120", INVENTORY, "120", 4),
        (
            "How many days are weekly backups kept according to backup.ini?",
            "14 days.",
            BACKUP,
            "14",
            7,
        ),
        (
            "Who leads the project according to meeting.md?",
            "Tom Okafor leads it.",
            MEETING,
            "Tom Okafor",
            5,
        ),
    ],
)
def test_a_value_from_the_neighbouring_line_is_a_distractor(
    question: str, answer: str, source: tuple[str, str], value: str, better: int
) -> None:
    grounding = check_answer(question, answer, source_lines([source]))
    assert grounding.doubtful
    assert grounding.mismatch is not None
    assert (grounding.mismatch.value, grounding.mismatch.better.number) == (value, better)
    assert grounding.mismatch.words


@pytest.mark.parametrize(
    ("question", "answer", "source"),
    [
        ("How many laptops are in inventory.json?", "There are 42 laptops.", INVENTORY),
        ("How many days are weekly backups kept according to backup.ini?", "90 days.", BACKUP),
        ("Who leads the project according to meeting.md?", "Maria Chen leads it.", MEETING),
    ],
)
def test_the_value_on_the_best_line_stands(
    question: str, answer: str, source: tuple[str, str]
) -> None:
    grounding = check_answer(question, answer, source_lines([source]))
    assert not grounding.doubtful
    assert grounding.found


def test_a_value_in_nothing_read_is_doubtful_and_shows_the_closest_lines() -> None:
    lines = source_lines([INVENTORY])
    question = "How many laptops are in inventory.json?"
    grounding = check_answer(question, "There are 35 laptops.", lines)
    assert grounding.doubtful
    assert grounding.unread == ("35",)
    request = recheck_prompt(question, grounding, lines)
    assert request is not None
    assert 'inventory.json line 4: {"name": "laptop", "count": 42}' in request
    assert "If they do not hold the answer" in request


def test_an_answer_without_values_is_not_checked() -> None:
    grounding = check_answer("What does the file say?", "it is not there.", source_lines([BACKUP]))
    assert grounding == Grounding()
    assert not grounding.doubtful


def test_the_recheck_request_shows_both_lines_in_file_order() -> None:
    lines = source_lines([INVENTORY])
    question = "How many laptops are in inventory.json?"
    request = recheck_prompt(question, check_answer(question, "120", lines), lines)
    assert request is not None
    assert request.index("line 4:") < request.index("line 6:")
    assert request.endswith(
        f"Question: {question}\nAnswer in one sentence from the line that answers the question."
    )
    assert "120" in request  # the line is quoted, not the model's first answer alone


def test_settle_takes_a_second_answer_only_off_the_losing_line() -> None:
    lines = source_lines([INVENTORY])
    question = "How many laptops are in inventory.json?"
    first = check_answer(question, "120", lines)
    assert settle(first, check_answer(question, "42 laptops.", lines))
    assert not settle(first, check_answer(question, "120 laptops.", lines))
    assert not settle(first, check_answer(question, "I do not know.", lines))


def test_the_summary_names_the_lines() -> None:
    lines = source_lines([INVENTORY])
    grounding = check_answer("How many laptops are in inventory.json?", "42", lines)
    assert grounding.summary() == "'42' on inventory.json line 4"
    line = SourceLine("a.txt", 3, "x")
    assert line.shown() == "a.txt line 3: x"


def test_the_pruning_passs_own_note_is_no_line_of_the_result() -> None:
    # Its figures (400 lines, 25875 characters) are not what the tool returned.
    pruned = (
        "[PRUNE_INFO_START]\npruned from 25875 to 27 characters\n"
        "lines 1-113, 247-400 not read (no focus word in them)\n[PRUNE_INFO_END]\n"
        "[PRUNE_OUTPUT_START]\n  120| laptops in stock: 42\n[PRUNE_OUTPUT_END]"
    )
    lines = source_lines([("stock.log", pruned)])
    assert [(line.number, line.text) for line in lines] == [(120, "laptops in stock: 42")]
    grounding = check_answer("How many laptops are in stock?", "400 laptops.", lines)
    assert grounding.unread == ("400",) and grounding.doubtful


def test_a_file_read_twice_is_quoted_once() -> None:
    lines = source_lines([INVENTORY, INVENTORY])
    question = "How many laptops are in inventory.json?"
    grounding = check_answer(question, "There are 35 laptops.", lines)
    prompt = recheck_prompt(question, grounding, lines)
    assert prompt is not None and prompt.count("inventory.json line 4:") == 1, prompt
