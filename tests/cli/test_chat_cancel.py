"""Ctrl-C in ``leanloop chat`` (issue 39): during a turn it cancels that turn and the chat
goes on; at the prompt it drops the line, and a second one in a row leaves; a question of
several lines is never a command. The signals themselves, on a real terminal, are
robot/chat_pty.robot's; here the run and the line reader are stand-ins.
"""

from __future__ import annotations

import argparse
import io
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from leanloop.cli import chat
from leanloop.cli.chat import (
    CANCELLED,
    LEAVE_HINT,
    ChatState,
    SlashCommand,
    answer_slash,
    parse_slash,
)


class _Signalled(KeyboardInterrupt):
    """What ``run_interruptible`` raises after a signal: a KeyboardInterrupt with its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _state(tmp_path: Path) -> ChatState:
    return ChatState(agent="helper", thread="chat-first", folder=tmp_path)


def _args() -> argparse.Namespace:
    return argparse.Namespace(progress=False, verbose=False, quiet=True)


# --- a turn cancelled --------------------------------------------------------------------


def _run_raising(exc: BaseException) -> Any:
    def run(coro: Coroutine[Any, Any, Any]) -> Any:
        coro.close()  # never run: the stand-in ends it as a signal would
        raise exc

    return run


def test_ctrl_c_during_a_turn_cancels_it_and_the_chat_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = signal.getsignal(signal.SIGINT)

    def run(coro: Coroutine[Any, Any, Any]) -> Any:
        coro.close()
        # run_interruptible leaves its own handler set after a signal.
        signal.signal(signal.SIGINT, lambda signum, frame: None)
        raise _Signalled(signal.SIGINT)

    monkeypatch.setattr(chat, "run_interruptible", run)
    state = _state(tmp_path)
    state.report = {"answer": "an earlier answer"}

    answered = chat._turn(_args(), object(), state, "A long story?", cancellable=True)  # type: ignore[arg-type]

    assert answered  # a cancelled turn is no failure: the exit status stays 0
    assert capsys.readouterr().err == f"{CANCELLED}\n"
    assert state.cancelled
    assert state.report is None
    assert state.turns == 1
    assert signal.getsignal(signal.SIGINT) is before  # the next Ctrl-C is the prompt's


@pytest.mark.parametrize(
    ("exc", "cancellable"),
    [
        (_Signalled(signal.SIGTERM), True),  # SIGTERM and SIGHUP still end the chat
        (_Signalled(signal.SIGINT), False),  # piped lines: Ctrl-C ends the chat (130)
    ],
)
def test_other_signals_and_a_scripts_ctrl_c_still_end_the_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: KeyboardInterrupt, cancellable: bool
) -> None:
    monkeypatch.setattr(chat, "run_interruptible", _run_raising(exc))

    with pytest.raises(KeyboardInterrupt):
        chat._turn(_args(), object(), _state(tmp_path), "Q?", cancellable=cancellable)  # type: ignore[arg-type]


def test_report_and_html_after_a_cancelled_turn_say_it_has_none(tmp_path: Path) -> None:
    state = _state(tmp_path)
    state.cancelled = True
    for line in ("/report", "/html"):
        out = io.StringIO()
        command = parse_slash(line)
        assert isinstance(command, SlashCommand)
        assert answer_slash(command, state, out)
        assert out.getvalue() == "the last turn was cancelled: it has no report\n"
    answer_slash(SlashCommand("/reset", ""), state, io.StringIO())
    assert not state.cancelled


def test_help_says_how_to_type_several_lines_and_what_ctrl_c_does(tmp_path: Path) -> None:
    out = io.StringIO()

    answer_slash(SlashCommand("/help", ""), _state(tmp_path), out)

    assert "End a line with \\ to go on on the next one; a paste is one question." in (
        out.getvalue()
    )
    assert "Ctrl-C cancels a turn" in out.getvalue()


def test_a_question_of_several_lines_is_never_a_command() -> None:
    assert parse_slash("/help me with\nthis paste") == "/help me with\nthis paste"
    assert parse_slash("//x\ny") == "/x\ny"


# --- Ctrl-C at the prompt ----------------------------------------------------------------


class _Lines:
    """A stand-in line reader: each item is a question, or Ctrl-C with what it dropped."""

    interactive = True
    number = 0

    def __init__(self, *items: str | tuple[str]) -> None:
        self.items = list(items)
        self.dropped = ""

    def read(self) -> str | None:
        if not self.items:
            return None
        item = self.items.pop(0)
        if isinstance(item, tuple):
            self.dropped = item[0]
            raise KeyboardInterrupt
        return item


def _loop(lines: _Lines, tmp_path: Path) -> int:
    return chat._loop(_args(), object(), _state(tmp_path), lines)  # type: ignore[arg-type]


def test_a_second_ctrl_c_in_a_row_at_an_empty_prompt_leaves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A line dropped does not count; the empty prompt's Ctrl-C says how to leave.
    lines = _Lines(("a line typed",), ("",), ("",), "never read")

    with pytest.raises(KeyboardInterrupt):  # the command exits 130
        _loop(lines, tmp_path)

    assert capsys.readouterr().err.count(LEAVE_HINT) == 1
    assert lines.items == ["never read"]


def test_anything_read_between_two_ctrl_c_keeps_the_chat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _Lines(("",), "", ("",), "/exit")

    assert _loop(lines, tmp_path) == 0

    assert capsys.readouterr().err.count(LEAVE_HINT) == 2
