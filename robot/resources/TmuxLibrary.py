"""Robot keywords that run a command on a real terminal, in tmux, and type into it.

``leanloop chat`` behaves differently on a terminal (a prompt, line editing, history, a
spinner): a pipe cannot show it. Each suite gets a tmux server of its own (``tmux -L``,
a socket named after the process), so suites and people running tmux never meet; every
session is a detached window of a fixed size, read back with ``capture-pane``.

The command runs under ``sh -c``, followed by a line ``[exit N]`` and a long sleep: the
pane stays readable after the command ends, and the line says how it ended.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file

_EXIT = re.compile(r"^\[exit (\d+)\]$", re.MULTILINE)


class TmuxLibrary:
    """Start commands in tmux, send them keys, read their screen."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._socket = f"leanloop-robot-{os.getpid()}"
        self._sessions: set[str] = set()

    # ── tmux ──────────────────────────────────────────────────────────────────────────
    def start_in_tmux(
        self,
        name: str,
        command: str,
        cwd: str = ".",
        width: int = 120,
        height: int = 40,
        **env: str,
    ) -> None:
        """Start ``command`` (a shell line) in a new detached tmux session ``name``.

        ``env`` are environment variables of the command (``XDG_STATE_HOME=…``); the
        robot process's own environment is passed on too, with ``TERM`` a real terminal's.
        """
        if shutil.which("tmux") is None:
            msg = "tmux is not installed: the terminal tests need it"
            raise AssertionError(msg)
        self.kill_tmux_session(name)
        exports = " ".join(f"{key}={shlex.quote(str(value))}" for key, value in env.items())
        line = f'{exports} {command}; echo "[exit $?]"; sleep 3600'
        command_line = ["new-session", "-d", "-s", name, "-x", str(width), "-y", str(height)]
        command_line += ["-c", str(Path(cwd).resolve()), "sh", "-c", line]
        for attempt in range(3):
            try:
                self._tmux(*command_line)
                break
            except AssertionError:
                # The server of the session killed just before may still be on its way
                # out ("server exited unexpectedly"): a new one starts a moment later.
                if attempt == 2:
                    raise
                time.sleep(0.5)
        self._sessions.add(name)

    def send_keys(self, name: str, *keys: str) -> None:
        """Send tmux key names to the session (``Up``, ``Enter``, ``C-u``, ``C-d`` …)."""
        self._tmux("send-keys", "-t", name, *keys)

    def type_line(self, name: str, text: str) -> None:
        """Type ``text`` as it is, then Enter."""
        self._tmux("send-keys", "-t", name, "-l", text)
        self._tmux("send-keys", "-t", name, "Enter")

    def pane_text(self, name: str) -> str:
        """What the session's screen and scrollback show, lines joined where they wrapped."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name)

    def cursor_line(self, name: str) -> str:
        """The screen line the cursor is on (the line being typed at a prompt)."""
        row = int(self._tmux("display-message", "-p", "-t", name, "#{cursor_y}").strip())
        lines = self._tmux("capture-pane", "-p", "-t", name).split("\n")
        return lines[row].rstrip() if row < len(lines) else ""

    def wait_until_pane_contains(self, name: str, text: str, timeout: float = 60) -> str:
        """Wait until the pane shows ``text``; returns the pane. Fails with the pane."""
        return self._wait(name, lambda pane: text in pane, f"{text!r}", timeout)

    def wait_until_pane_matches(self, name: str, pattern: str, timeout: float = 60) -> str:
        """Wait until a line of the pane matches the regular expression ``pattern``."""
        regex = re.compile(pattern, re.MULTILINE)
        return self._wait(name, lambda pane: regex.search(pane) is not None, pattern, timeout)

    def wait_until_cursor_line_is(self, name: str, text: str, timeout: float = 10) -> None:
        """Wait until the cursor's line reads ``text`` (trailing blanks ignored)."""
        deadline = time.monotonic() + float(timeout)
        while True:
            line = self.cursor_line(name)
            if line == text.rstrip():
                return
            if time.monotonic() > deadline:
                msg = f"the cursor's line is {line!r}, not {text!r}:\n{self.pane_text(name)}"
                raise AssertionError(msg)
            time.sleep(0.1)

    def wait_until_command_exits(self, name: str, timeout: float = 60) -> int:
        """Wait for the ``[exit N]`` line the command's end prints; returns N."""
        pane = self._wait(name, lambda pane: _EXIT.search(pane) is not None, "[exit N]", timeout)
        found = _EXIT.search(pane)
        assert found is not None
        return int(found[1])

    def count_in_pane(self, name: str, text: str) -> int:
        """How many times the pane shows ``text``."""
        return self.pane_text(name).count(text)

    def kill_tmux_session(self, name: str) -> None:
        """End the session and what runs in it (nothing happens when there is none)."""
        subprocess.run(
            ["tmux", "-L", self._socket, "kill-session", "-t", name],
            capture_output=True,
            check=False,
        )
        self._sessions.discard(name)

    def kill_tmux_server(self) -> None:
        """End this suite's tmux server, and every session of it."""
        subprocess.run(
            ["tmux", "-L", self._socket, "kill-server"], capture_output=True, check=False
        )
        self._sessions.clear()

    # ── the chat's files ──────────────────────────────────────────────────────────────
    def write_chat_agents_file(self, folder: str, base_url: str, window: int = 8192) -> str:
        """``<folder>/agents.yaml``: the agent ``chatty``, with no tools, on ``base_url``."""
        model = model_entry(base_url, "chat-model", context_window=int(window))
        agent = agent_entry("You answer in one sentence.", tools=())
        return write_agents_file(folder, model, "chatty", agent)

    def read_lines_of(self, path: str) -> list[str]:
        """The lines of a text file; ``[]`` when it does not exist."""
        file = Path(path)
        return file.read_text(encoding="utf-8").splitlines() if file.exists() else []

    # ── helpers ───────────────────────────────────────────────────────────────────────
    def _wait(self, name: str, done: Any, what: str, timeout: float) -> str:
        deadline = time.monotonic() + float(timeout)
        while True:
            pane = self.pane_text(name)
            if done(pane):
                print(f"*DEBUG* pane {name}:\n{pane}")
                return pane
            if time.monotonic() > deadline:
                msg = f"the pane of {name} did not show {what} in {timeout} s:\n{pane}"
                raise AssertionError(msg)
            time.sleep(0.1)

    def _tmux(self, *args: str) -> str:
        # -u: the spinner's frames are UTF-8 whatever the robot's locale says.
        result = subprocess.run(
            ["tmux", "-u", "-f", "/dev/null", "-L", self._socket, *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            msg = f"tmux {' '.join(args)} failed: {result.stderr.strip()}"
            raise AssertionError(msg)
        return result.stdout
