"""How ``leanloop chat`` reads a question: a line, a paste, or lines joined by ``\\``.

A question is one line, with two ways to make it several (and Ctrl-C to drop it):

- a paste is one question, however many lines it holds: readline's bracketed paste
  puts it in the line being edited (Enter sends it), and where the terminal or the line
  editor has no bracketed paste, the lines of the paste already waiting on the terminal
  when the first one is read are read with it;
- a line that ends with a backslash goes on on the next line (the backslash is dropped,
  the line break kept), on a terminal after the :data:`CONTINUATION` prompt, and in
  piped lines too;
- Ctrl-C while a question is being typed drops it, every line of it (the caller decides
  what a Ctrl-C at an empty prompt does: :attr:`ChatLines.dropped` is then empty).

On a terminal the lines are edited with :mod:`readline`, and Up and Down walk a history
kept across chats (:func:`history_path`); a question of several lines is one entry of it
(the file keeps its lines: readline's file has one entry a line).
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

__all__ = [
    "CONTINUATION",
    "PROMPT",
    "ChatLines",
    "history_path",
    "terminal_pending",
]

PROMPT: Final = "> "
"""The prompt on a terminal (on stdout: readline draws it with the line being edited)."""
CONTINUATION: Final = "... "
"""The prompt of a question's next line, after a line that ends with ``\\``."""

_HISTORY_LENGTH = 1000
"""Lines the history file keeps."""


def history_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the chat history lives: the user's state folder, else the home folder.

    ``$XDG_STATE_HOME/leanloop/chat_history``, or ``~/.local/state/leanloop/chat_history``
    when ``~/.local/state`` exists; else ``~/.leanloop_history``.
    """
    env = os.environ if environ is None else environ
    state = env.get("XDG_STATE_HOME")
    if state:
        return Path(state) / "leanloop" / "chat_history"
    home = Path(env.get("HOME") or Path.home())
    if (home / ".local" / "state").is_dir():
        return home / ".local" / "state" / "leanloop" / "chat_history"
    return home / ".leanloop_history"


def terminal_pending(stdin: TextIO) -> Callable[[], str | None]:
    """What a terminal already holds: the rest of a paste the line editor did not take.

    The returned function reads what is waiting on ``stdin``'s descriptor, without
    waiting (``select`` with no timeout); ``None`` when nothing waits.
    """
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor: nothing can wait there
        return lambda: None

    def pending() -> str | None:
        parts: list[bytes] = []
        while select.select([fd], [], [], 0)[0]:
            data = os.read(fd, 65536)
            if not data:
                break
            parts.append(data)
        return b"".join(parts).decode("utf-8", "surrogateescape") if parts else None

    return pending


class ChatLines:
    """Reads the chat's questions: with readline and history on a terminal, else plainly.

    Args:
        stdin: Where the lines come from.
        interactive: ``stdin`` is a terminal: a prompt, line editing, history, pastes.
        commands: The slash commands Tab completes (``/help`` …).
        pending: On a terminal, what is already waiting after a line was read (the rest
            of a paste; :func:`terminal_pending` by default); tests give their own.
    """

    def __init__(
        self,
        stdin: TextIO,
        *,
        interactive: bool,
        commands: Sequence[str] = (),
        pending: Callable[[], str | None] | None = None,
    ) -> None:
        self.stdin = stdin
        self.interactive = interactive
        self.number = 0
        """Lines read so far (an error names the line by it)."""
        self.dropped = ""
        """After Ctrl-C at the prompt: the text it dropped (``""``: the prompt was empty)."""
        self._pending = pending
        self._commands = sorted(set(commands))
        self._history: Path | None = None
        self._readline: Any = None
        if interactive:
            if pending is None:
                self._pending = terminal_pending(stdin)
            self._start_history()

    def _start_history(self) -> None:
        try:
            import readline  # noqa: PLC0415 - only a terminal edits lines
        except ImportError:  # a Python built without it: plain lines still work
            return
        self._readline = readline
        readline.set_history_length(_HISTORY_LENGTH)
        # The chat adds each question itself, once, whatever number of lines it took.
        readline.set_auto_history(False)
        readline.set_completer(self._complete)
        readline.set_completer_delims(" \t\n")
        readline.parse_and_bind("tab: complete")
        # Python turns bracketed paste off (its REPL runs a line at a time); a chat wants
        # it: a paste lands in the line being edited, line breaks and all, and is one
        # question. Where the line editor lacks it, the rest of a paste is read below.
        with contextlib.suppress(Exception):
            readline.parse_and_bind("set enable-bracketed-paste on")
        path = history_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(exist_ok=True)  # append_history_file needs the file to exist
            readline.read_history_file(str(path))
        except OSError:
            return  # no history across chats, but Up still walks this one's lines
        self._history = path

    def read(self) -> str | None:
        """The next question (its lines joined by ``\\n``), or ``None`` at the end.

        Raises:
            KeyboardInterrupt: Ctrl-C while it was typed; :attr:`dropped` holds what it
                dropped.
        """
        if not self.interactive:
            return self._read_piped()
        parts: list[str] = []
        self.dropped = ""
        try:
            line = input(PROMPT)
            line = self._with_pending(line)
            while _goes_on(line):
                parts.append(line[:-1])
                line = self._with_pending(input(CONTINUATION))
        except EOFError:
            print(file=sys.stderr)  # Ctrl-D leaves the cursor after the prompt
            if not parts:
                return None
            line = ""  # Ctrl-D after a line ending with \: the question so far
        except KeyboardInterrupt:
            self.dropped = "\n".join([*parts, self._line_buffer()]).strip()
            raise
        finally:
            self.number += 1
        question = "\n".join([*parts, line])
        self._remember(question)
        return question

    def _read_piped(self) -> str | None:
        parts: list[str] = []
        while True:
            self.number += 1
            raw = self.stdin.readline()
            if not raw:
                return "\n".join(parts) if parts else None
            line = raw.rstrip("\r\n")
            if not _goes_on(line):
                return "\n".join([*parts, line])
            parts.append(line[:-1])

    def _with_pending(self, line: str) -> str:
        """``line`` and the lines of its paste still waiting on the terminal, shown."""
        rest = self._pending() if self._pending is not None else None
        if not rest:
            return line
        more = rest.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
        # The line editor never echoed them: show them as the question's next lines.
        for extra in more.split("\n"):
            print(f"{CONTINUATION}{extra}", flush=True)
        return f"{line}\n{more}"

    def _line_buffer(self) -> str:
        if self._readline is None:
            return ""
        with contextlib.suppress(Exception):
            return str(self._readline.get_line_buffer())
        return ""

    def _remember(self, question: str) -> None:
        """One history entry for the question, however many lines it took to type."""
        if self._readline is None:
            return
        readline = self._readline
        text = question.strip()
        # Up in the next chat should bring back a question, not the way out.
        if not text or text.lower() in ("/exit", "/quit"):
            return
        readline.add_history(question)
        if self._history is not None:
            # Each question at once: a chat ended by a signal keeps what was typed.
            with contextlib.suppress(OSError, AttributeError):
                readline.append_history_file(1, str(self._history))

    def _complete(self, text: str, state: int) -> str | None:
        """Tab completes the slash commands."""
        matches = [
            name for name in self._commands if text.startswith("/") and name.startswith(text)
        ]
        return matches[state] if state < len(matches) else None

    def close(self) -> None:
        """Write the history back, cut to its length (appending alone only grows it)."""
        if self._history is not None:
            with contextlib.suppress(OSError):
                self._readline.write_history_file(str(self._history))


def _goes_on(line: str) -> bool:
    """Whether ``line`` ends with a backslash: the question goes on on the next line."""
    return line.endswith("\\")
