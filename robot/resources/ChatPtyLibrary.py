"""Robot keywords that run ``leanloop chat`` on a pseudo-terminal with :mod:`pexpect`.

tmux (robot/chat.robot) shows the screen; a pty driven by pexpect shows the bytes, sends
the real control characters (Ctrl-C is the terminal's SIGINT, Ctrl-D its end of file)
and a paste as a terminal sends it: wrapped in the bracketed-paste marks when the program
asked for them (``ESC [ ? 2004 h``), as plain lines otherwise. Waiting is pexpect's
``expect`` on the output, with a generous timeout; nothing waits on the clock to prove
that something did not happen.

A turn is held "mid-turn" by the scripted server: :meth:`queue_held_answer` queues a
reply that never comes (``fault="hang"``) until the server stops.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import sys
from pathlib import Path
from typing import Any

import pexpect
from robot.api.deco import keyword
from robot.libraries.BuiltIn import BuiltIn

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file
from scripted_server import ScriptedResponse

from leanloop.sessions import open_store, sqlite_url

_PROMPT = r"(?:^|[\r\n])(?:\x1b\[[0-9;?]*[A-Za-z])*> "
"""The chat's prompt at the start of a line (after readline's terminal sequences)."""
_PASTE_ON, _PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"
_SESSION = re.compile(r"session (chat-[0-9a-f]{12})")


class ChatPtyLibrary:
    """Start ``leanloop chat`` on a pty, type and paste into it, read what it wrote."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._child: pexpect.spawn[str] | None = None
        self._seen = io.StringIO()

    # ── the chat ──────────────────────────────────────────────────────────────────────
    def start_chat_on_a_pty(self, folder: str, *args: str) -> None:
        """``python -m leanloop chat agents.yaml ARGS`` in ``folder``, on a 40×120 pty.

        Its state folder (history) is ``<folder>/state``; ``TERM`` is a real terminal's.
        """
        self.stop_chat()
        env = dict(os.environ, TERM="xterm-256color", XDG_STATE_HOME=str(Path(folder, "state")))
        env.pop("NO_COLOR", None)
        self._seen = io.StringIO()
        self._child = pexpect.spawn(
            sys.executable,
            ["-m", "leanloop", "chat", "agents.yaml", *args],
            cwd=folder,
            env=env,
            encoding="utf-8",
            codec_errors="replace",
            dimensions=(40, 120),
            timeout=60,
        )
        self._child.logfile_read = self._seen

    def wait_for_prompt(self, timeout: float = 60) -> None:
        """Wait until the chat shows its prompt (``> `` at the start of a line)."""
        self._expect(_PROMPT, timeout, regex=True)

    def chat_should_show(self, text: str, timeout: float = 60) -> None:
        """Wait until the chat writes ``text`` (stdout and stderr: one terminal)."""
        self._expect(text, timeout)

    def type_text(self, text: str) -> None:
        """Type ``text``, without Enter."""
        self._spawned().send(text)

    def type_line(self, text: str) -> None:
        """Type ``text`` and press Enter (a carriage return, as a keyboard sends it)."""
        self._spawned().send(text + "\r")

    def paste_text(self, text: str) -> None:
        """Paste ``text`` (line breaks as a terminal sends them: carriage returns).

        Wrapped in the bracketed-paste marks when the chat turned bracketed paste on.
        """
        keys = text.replace("\n", "\r")
        seen = self._seen.getvalue()
        if seen.rfind(_PASTE_ON) > seen.rfind(_PASTE_OFF):
            keys = f"\x1b[200~{keys}\x1b[201~"
        self._spawned().send(keys)

    @keyword("Press Ctrl-C")
    def press_ctrl_c(self) -> None:
        """Ctrl-C: the terminal sends SIGINT to the chat."""
        self._spawned().sendintr()

    @keyword("Press Ctrl-D")
    def press_ctrl_d(self) -> None:
        """Ctrl-D: end of input at an empty prompt."""
        self._spawned().sendeof()

    def wait_for_chat_to_exit(self, timeout: float = 60) -> int:
        """Wait for the chat to end; its exit status (``128 + N`` when signal N ended it)."""
        child = self._spawned()
        child.expect(pexpect.EOF, timeout=float(timeout))
        child.close()
        self._log()
        if child.signalstatus is not None:
            return 128 + int(child.signalstatus)
        return int(child.exitstatus or 0)

    def chat_output(self) -> str:
        """Everything the chat wrote so far, terminal sequences and all."""
        return self._seen.getvalue()

    def count_in_chat_output(self, text: str) -> int:
        """How many times the chat wrote ``text``."""
        return self._seen.getvalue().count(text)

    def chat_session(self) -> str:
        """The session the banner named (``chat-`` and 12 hex digits), once it is out."""
        found = _SESSION.search(self._seen.getvalue())
        if found is None:
            self._expect(_SESSION.pattern, 60, regex=True)
            found = _SESSION.search(self._seen.getvalue())
        if found is None:
            msg = f"no session in the chat's output:\n{self._seen.getvalue()}"
            raise AssertionError(msg)
        return found[1]

    def stop_chat(self) -> None:
        """End the chat if it still runs (a test's teardown)."""
        child, self._child = self._child, None
        if child is not None:
            self._log()
            if child.isalive():
                child.terminate(force=True)
            child.close()

    # ── the agents file, the scripted server, the session store ───────────────────────
    def write_pty_chat_agents_file(self, folder: str, base_url: str) -> str:
        """``<folder>/agents.yaml``: the agent ``chatty``, no tools, a window of 8,192."""
        model = model_entry(base_url, "chat-model", context_window=8192)
        agent = agent_entry("You answer in one sentence.", tools=())
        return write_agents_file(folder, model, "chatty", agent)

    def queue_held_answer(self) -> None:
        """Queue a reply the scripted server holds until it stops: the turn stays running."""
        server: Any = BuiltIn().get_library_instance("ServerLibrary")
        server._server().queue(ScriptedResponse(fault="hang"))

    def session_turn_statuses(self, folder: str, thread: str) -> list[str]:
        """The status of each turn of ``thread`` in the folder's session store, in order."""
        store = open_store(sqlite_url(Path(folder, ".leanloop", "sessions.db")))

        async def statuses() -> list[str]:
            try:
                session = await store.load(thread)
                return [str(turn.status) for turn in session.turns]
            finally:
                await store.close()

        return asyncio.run(statuses())

    # ── helpers ───────────────────────────────────────────────────────────────────────
    def _spawned(self) -> pexpect.spawn[str]:
        if self._child is None:
            msg = "no chat runs: start one with Start Chat On A Pty"
            raise AssertionError(msg)
        return self._child

    def _expect(self, what: str, timeout: float, *, regex: bool = False) -> None:
        child = self._spawned()
        try:
            if regex:
                child.expect(what, timeout=float(timeout))
            else:
                child.expect_exact(what, timeout=float(timeout))
        except (pexpect.TIMEOUT, pexpect.EOF) as exc:
            kind = "ended" if isinstance(exc, pexpect.EOF) else f"did not in {timeout} s"
            msg = f"the chat never wrote {what!r} ({kind}); it wrote:\n{self._seen.getvalue()}"
            raise AssertionError(msg) from None

    def _log(self) -> None:
        print(f"*DEBUG* the chat wrote:\n{self._seen.getvalue()!r}")
