"""How ``leanloop chat`` reads a question (issue 39): a line ending with a backslash goes
on on the next one, piped or typed; on a terminal the rest of a paste already waiting is
read with its first line, as one question; Ctrl-C while typing says what it dropped. The
real terminal (bracketed paste, Ctrl-C's signal) is robot/chat_pty.robot's, on a pty.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from leanloop.cli.chat_input import CONTINUATION, PROMPT, ChatLines

# --- piped lines -------------------------------------------------------------------------


def _piped(text: str) -> ChatLines:
    return ChatLines(io.StringIO(text), interactive=False)


def _all(lines: ChatLines) -> list[str]:
    read: list[str] = []
    while (question := lines.read()) is not None:
        read.append(question)
    return read


def test_each_piped_line_is_a_question() -> None:
    assert _all(_piped("First?\n\nSecond?\r\n")) == ["First?", "", "Second?"]


def test_a_piped_line_ending_with_a_backslash_goes_on_on_the_next() -> None:
    lines = _piped("Read this:\\\n  indented\\\nlast line\nNext?\n")

    assert _all(lines) == ["Read this:\n  indented\nlast line", "Next?"]
    assert lines.number == 5  # every line counted, the end of the input too


def test_a_continuation_cut_off_by_the_end_of_the_input_is_still_asked() -> None:
    assert _all(_piped("Half a question \\\n")) == ["Half a question "]


# --- on a terminal (input() and what waits on the terminal, both faked) -----------------


@dataclass
class Typed:
    """What ``input()`` returns (or raises), in order, and the prompts it was given."""

    script: list[str | BaseException] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)

    def input(self, prompt: str = "") -> str:
        self.prompts.append(prompt)
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


@pytest.fixture
def typed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Typed]:
    keys = Typed()
    monkeypatch.setattr("builtins.input", keys.input)
    # No readline here: the history and the line editor are the terminal suites'.
    monkeypatch.setattr(ChatLines, "_start_history", lambda self: None)
    yield keys
    assert keys.script == [], "input() was not called for every scripted line"


def _terminal(*pending: str | None) -> ChatLines:
    waiting = list(pending)
    return ChatLines(
        io.StringIO(),
        interactive=True,
        pending=lambda: waiting.pop(0) if waiting else None,
    )


def test_the_rest_of_a_paste_waiting_on_the_terminal_joins_its_first_line(
    typed: Typed, capsys: pytest.CaptureFixture[str]
) -> None:
    typed.script.append("Here is my question:")
    lines = _terminal("what is the second line for?\r\nand a third\n")

    question = lines.read()

    assert question == "Here is my question:\nwhat is the second line for?\nand a third"
    out = capsys.readouterr().out  # the lines the line editor never echoed are shown
    assert out == f"{CONTINUATION}what is the second line for?\n{CONTINUATION}and a third\n"


def test_a_typed_line_ending_with_a_backslash_asks_for_the_next(typed: Typed) -> None:
    typed.script.extend(["First line \\", "second line", "Next?"])
    lines = _terminal()

    assert lines.read() == "First line \nsecond line"
    assert lines.read() == "Next?"
    assert typed.prompts == [PROMPT, CONTINUATION, PROMPT]


def test_ctrl_d_ends_the_input_and_after_a_backslash_asks_what_was_typed(
    typed: Typed,
) -> None:
    typed.script.extend(["Half \\", EOFError(), EOFError()])
    lines = _terminal()

    assert lines.read() == "Half \n"
    assert lines.read() is None


def test_ctrl_c_while_typing_says_what_it_dropped(typed: Typed) -> None:
    typed.script.extend(["A long question \\", KeyboardInterrupt(), KeyboardInterrupt()])
    lines = _terminal()

    with pytest.raises(KeyboardInterrupt):
        lines.read()
    assert lines.dropped == "A long question"
    with pytest.raises(KeyboardInterrupt):
        lines.read()
    assert lines.dropped == ""  # the prompt was empty
