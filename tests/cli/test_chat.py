"""``leanloop chat``'s own parts (issue 29, item 5): which lines are slash commands, what
each command answers without the model, where the history lives, what the banner says;
and, in process with piped lines, that commands never reach the model. The terminal
itself (prompt, Up-arrow history, spinner) is robot/chat.robot's, in tmux.
"""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from leanloop.cli import main
from leanloop.cli.chat import (
    SLASH_COMMANDS,
    ChatState,
    SlashCommand,
    answer_slash,
    banner_lines,
    history_path,
    parse_slash,
)
from leanloop.spec import load_specs_from_text

# --- which lines are commands ----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("/help", SlashCommand("/help", "")),
        ("  /HELP  \n", SlashCommand("/help", "")),
        ("/html out/page.html", SlashCommand("/html", "out/page.html")),
        ("/html   my page.html ", SlashCommand("/html", "my page.html")),
        ("/exit", SlashCommand("/exit", "")),
        ("/nonsense now", SlashCommand("/nonsense", "now")),
        ("What is /help?", "What is /help?"),
        ("/etc/hosts: what is it?", "/etc/hosts: what is it?"),
        ("//help is a word", "/help is a word"),
        ("/", "/"),
        ("  plain question  ", "plain question"),
        ("", ""),
    ],
)
def test_a_line_is_a_command_only_when_it_starts_with_a_slash_and_a_word(
    line: str, parsed: SlashCommand | str
) -> None:
    assert parse_slash(line) == parsed


# --- what each command answers ---------------------------------------------------------


def _state(tmp_path: Path, report: dict[str, Any] | None = None) -> ChatState:
    threads = iter(["chat-second", "chat-third"])
    return ChatState(
        agent="helper",
        thread="chat-first",
        report=report,
        turns=1 if report else 0,
        folder=tmp_path,
        new_thread=lambda: next(threads),
    )


def _report() -> dict[str, Any]:
    return {
        "answer": "Port 8931.",
        "stop_reason": "answer",
        "steps": 1,
        "question": "What port?",
        "requests": [{"messages": 3, "input_tokens": 120, "output_tokens": 9}],
        "tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}, "chars_out": 18}],
        "session": {"thread_id": "chat-first", "turn": 3},
    }


def _answer(line: str, state: ChatState) -> tuple[bool, str]:
    out = io.StringIO()
    parsed = parse_slash(line)
    assert isinstance(parsed, SlashCommand)
    going_on = answer_slash(parsed, state, out)
    return going_on, out.getvalue()


def test_help_lists_every_command(tmp_path: Path) -> None:
    going_on, text = _answer("/help", _state(tmp_path))

    assert going_on
    for usage, what in SLASH_COMMANDS.items():
        assert usage in text and what in text, text
    assert "//" in text  # how to send a line that starts with a slash


@pytest.mark.parametrize("line", ["/exit", "/quit", "/EXIT"])
def test_exit_and_quit_end_the_chat(tmp_path: Path, line: str) -> None:
    going_on, text = _answer(line, _state(tmp_path))

    assert not going_on
    assert text == ""


def test_reset_moves_to_a_new_session_and_forgets_the_last_report(tmp_path: Path) -> None:
    state = _state(tmp_path, _report())

    going_on, text = _answer("/reset", state)

    assert going_on
    assert state.thread == "chat-second"
    assert state.report is None
    assert "new conversation: session chat-second" in text
    assert "--session chat-second" in text


def test_report_shows_the_last_turns_report(tmp_path: Path) -> None:
    going_on, text = _answer("/report", _state(tmp_path, _report()))

    assert going_on
    assert "stop reason: answer · steps: 1 · tool calls: 1 · requests: 1" in text
    assert "read_file(path=notes.txt)" in text
    assert text.rstrip().splitlines()[-1].startswith("stop: answer · 1 step · 1 tool call")


@pytest.mark.parametrize("line", ["/report", "/html"])
def test_report_and_html_before_any_turn_say_so(tmp_path: Path, line: str) -> None:
    going_on, text = _answer(line, _state(tmp_path))

    assert going_on
    assert text == "no turn yet: ask something first\n"
    assert list(tmp_path.iterdir()) == []


def test_html_writes_the_page_in_the_folder_and_prints_its_path(tmp_path: Path) -> None:
    going_on, text = _answer("/html", _state(tmp_path, _report()))

    page = tmp_path / "leanloop-chat-first-turn3.html"
    assert going_on
    assert text == f"wrote {page.resolve()}\n"
    html = page.read_text(encoding="utf-8")
    assert "Port 8931." in html  # the answer is on the page
    assert "read_file" in html


def test_html_writes_the_page_at_the_path_given(tmp_path: Path) -> None:
    target = tmp_path / "pages" / "mine.html"

    _, text = _answer(f"/html {target}", _state(tmp_path, _report()))

    assert text == f"wrote {target.resolve()}\n"
    assert target.is_file()


def test_html_says_why_a_page_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder", encoding="utf-8")

    going_on, text = _answer(
        f"/html {tmp_path / 'taken' / 'page.html'}", _state(tmp_path, _report())
    )

    assert going_on
    assert text.startswith("error: cannot write "), text


def test_an_unknown_command_is_named_and_not_sent(tmp_path: Path) -> None:
    going_on, text = _answer("/frobnicate now", _state(tmp_path))

    assert going_on
    assert text == "unknown command /frobnicate: /help lists the commands\n"


# --- history and banner ----------------------------------------------------------------


def test_the_history_lives_in_the_state_folder(tmp_path: Path) -> None:
    (tmp_path / "home" / ".local" / "state").mkdir(parents=True)
    home = str(tmp_path / "home")

    assert history_path({"XDG_STATE_HOME": "/s", "HOME": home}) == Path("/s/leanloop/chat_history")
    assert history_path({"HOME": home}) == Path(home, ".local/state/leanloop/chat_history")
    assert history_path({"HOME": str(tmp_path)}) == tmp_path / ".leanloop_history"


def _spec(model: str) -> Any:
    text = f"version: 1\nagents:\n  helper:\n    model: {model}\n"
    return load_specs_from_text(text)["helper"]


def test_the_banner_names_agent_model_window_session_and_the_way_out() -> None:
    spec = _spec(
        "{provider: openai-compatible, model: qwen, base_url: 'http://me:pw@host:8080/v1',"
        " context_window: 8192}"
    )

    first, session, leave = banner_lines(spec, "chat-0123456789ab", given=False)

    assert first == (
        "leanloop chat · agent helper · model openai-compatible qwen at "
        "http://me:***@host:8080/v1 · window 8,192 tokens"  # leanloop.redact's one rule
    )
    assert session == (
        "session chat-0123456789ab (new; continue it later with --session chat-0123456789ab)"
    )
    assert "/help" in leave and "/exit" in leave and "Ctrl-D" in leave


def test_the_banner_of_a_continued_session_and_an_unknown_window() -> None:
    spec = _spec("{class: 'leanloop.testing:ScriptedChatModel'}")

    first, session, _ = banner_lines(spec, "t1", given=True)

    assert first.endswith(
        "model leanloop.testing:ScriptedChatModel · window: found on the first turn"
    )
    assert session == "session t1"


# --- piped lines, in process -----------------------------------------------------------


def test_piped_commands_never_reach_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The script has two replies: a command sent to the model would take one, and the
    # second question would then get none (the run would fail, exit 1).
    file = tmp_path / "agents.yaml"
    replies = json.dumps(["First answer.", "Second answer."])
    file.write_text(
        textwrap.dedent(f"""\
            version: 1
            agents:
              helper:
                model:
                  class: leanloop.testing:ScriptedChatModel
                  kwargs: {{replies: {replies}}}
            """),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    lines = "First?\n/help\n/report\n/nonsense\nSecond?\n/html\n/exit\nNever sent?\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))

    code = main(["chat", str(file), "--session", "s1"])

    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "First answer.\nSecond answer.\n"
    assert "leanloop chat · agent helper · model leanloop.testing:ScriptedChatModel" in err
    assert "unknown command /nonsense" in err
    assert "stop reason: answer" in err  # /report, after the first turn
    assert (tmp_path / "leanloop-s1-turn2.html").is_file()
