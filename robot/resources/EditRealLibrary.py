"""Robot keywords for ``robot/agents_that_edit_real.robot``: agents that edit (issue 41).

A test gets a fresh folder: ``workspace/calc.py`` with a bug (``add`` subtracts),
``workspace/test_calc.py`` (a plain assert, run as ``python test_calc.py``) and an agents
file on the suite's llama-server whose agent has ``read_file``, ``str_replace`` (asks) and
``run_command`` (``python`` only, does not ask). ``leanloop run`` runs on a pty
(:mod:`pexpect`), so the terminal asks each approval and the test answers it; what is true
afterwards is read from the disk, the run's HTML page (its approvals table), and the
session store (the messages the model was sent). Through ``leanloop serve`` (started by
``ServeLibrary``) the official ``openai`` client asks, and sends the decisions on a
paused turn in ``extra_body={"leanloop": {"approvals": ...}}``.
"""

from __future__ import annotations

import asyncio
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pexpect
from robot.libraries.BuiltIn import BuiltIn

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file

from leanloop.sessions import open_store, sqlite_url

__all__ = ["EditRealLibrary"]

AGENT = "fixer"
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = (
    "from calc import add\n\n"
    'assert add(2, 3) == 5, f"add(2, 3) returned {add(2, 3)}, expected 5"\n'
    'print("OK: all tests passed")\n'
)
SYSTEM_PROMPT = """\
You fix a bug with exactly these tool calls, in this order, one call per reply:
1. read_file(path="calc.py")
2. str_replace(path="calc.py", old="return a - b", new="return a + b")
3. run_command(argv=["python", "test_calc.py"])
4. Then call no more tools: answer in one sentence with the line the test printed.
If a call is rejected, do what the reason says instead."""
QUESTION = "Fix the bug in calc.py."
_ASKED = "approve? ["
_ROW = re.compile(r'<tr class="approval">(.*?)</tr>', re.S)
_CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)


class EditRealLibrary:
    """The workspace, ``leanloop run`` on a pty, and what the run left behind."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._child: pexpect.spawn[str] | None = None
        self._seen = io.StringIO()
        self.answers: list[str] = []
        self.decided: list[dict[str, Any]] = []

    # ── the workspace ─────────────────────────────────────────────────────────────────
    def write_edit_workspace(self, name: str, base_url: str) -> str:
        """A fresh ``<TEMPDIR>/leanloop-edit-<name>`` with the buggy workspace and agents file."""
        folder = Path(BuiltIn().get_variable_value("${TEMPDIR}")) / f"leanloop-edit-{name}"
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "workspace").mkdir(parents=True)
        (folder / "workspace" / "calc.py").write_text(BUGGY, encoding="utf-8")
        (folder / "workspace" / "test_calc.py").write_text(TEST, encoding="utf-8")
        tools = [
            "read_file",
            {"name": "str_replace", "approval": "ask"},
            {"name": "run_command", "allowed_commands": ["python"], "approval": "never"},
        ]
        agent = agent_entry(SYSTEM_PROMPT, tools, max_rounds=6)
        write_agents_file(folder, model_entry(base_url, "local"), AGENT, agent)
        return str(folder)

    def calc_should_be(self, folder: str, state: str, message: str = "") -> None:
        """Fail unless ``workspace/calc.py`` is ``fixed`` (``a + b``) or ``buggy`` as written."""
        want = {"fixed": BUGGY.replace("a - b", "a + b"), "buggy": BUGGY}[state]
        got = self.calc_source(folder)
        if got != want:
            msg = f"calc.py should be {state}: {message}\nit holds {got!r}, not {want!r}"
            raise AssertionError(msg)

    def calc_source(self, folder: str) -> str:
        """What ``workspace/calc.py`` holds now."""
        return Path(folder, "workspace", "calc.py").read_text(encoding="utf-8")

    def run_workspace_test(self, folder: str) -> subprocess.CompletedProcess[str]:
        """Run ``python test_calc.py`` in the workspace (the suite's own check, not the model's)."""
        return subprocess.run(
            [sys.executable, "test_calc.py"],
            cwd=Path(folder, "workspace"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    # ── leanloop run on a pty ─────────────────────────────────────────────────────────
    def start_run_on_a_pty(self, folder: str, session: str) -> None:
        """``python -m leanloop run agents.yaml QUESTION --session S --html page.html``."""
        self.stop_run()
        env = dict(os.environ, TERM="xterm-256color")
        self._seen = io.StringIO()
        self.answers = []
        args = ["-m", "leanloop", "run", "agents.yaml", QUESTION, "--session", session,
                "--html", "page.html"]  # fmt: skip
        self._child = pexpect.spawn(
            sys.executable, args, cwd=folder, env=env, encoding="utf-8",
            codec_errors="replace", dimensions=(40, 160), timeout=600,
        )  # fmt: skip
        self._child.logfile_read = self._seen

    def answer_approvals_until_exit(self, first: str = "y", reason: str = "") -> int:
        """Answer the first approval with ``first`` (``n``: with ``reason``), every later
        one with ``y``; wait for the run to end and return its exit status."""
        child = self._spawned()
        answer = first
        while True:
            index = child.expect_exact([_ASKED, pexpect.EOF], timeout=600)
            if index == 1:
                break
            child.sendline(answer)
            self.answers.append(answer)
            if answer == "n":
                child.expect_exact("reason (for the model): ", timeout=60)
                child.sendline(reason)
            answer = "y"
        child.close()
        print(f"*DEBUG* the run wrote:\n{self._seen.getvalue()}")
        if child.signalstatus is not None:
            return 128 + int(child.signalstatus)
        return int(child.exitstatus or 0)

    def approval_answers(self) -> list[str]:
        """What the test typed at each approval prompt, in order."""
        return list(self.answers)

    def run_output(self) -> str:
        """Everything the run wrote on the terminal."""
        return self._seen.getvalue()

    def stop_run(self) -> None:
        """End the run if it still runs (a test's teardown)."""
        child, self._child = self._child, None
        if child is not None:
            if child.isalive():
                child.terminate(force=True)
            child.close()

    # ── what the run left ─────────────────────────────────────────────────────────────
    def page_approvals(self, folder: str) -> list[dict[str, str]]:
        """The rows of the run page's approvals table (step, call, tool, decision, by,
        edited arguments, reason), as text."""
        page = Path(folder, "page.html").read_text(encoding="utf-8")
        keys = ("step", "call_id", "tool", "decision", "by", "args", "reason")
        rows = []
        for row in _ROW.findall(page):
            cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in _CELL.findall(row)]
            rows.append(dict(zip(keys, cells, strict=False)))
        return rows

    def page_text(self, folder: str) -> str:
        """The run page, its tags left in."""
        return Path(folder, "page.html").read_text(encoding="utf-8")

    def session_messages(self, folder: str, thread: str) -> list[dict[str, Any]]:
        """Every message the session stored for ``thread`` (type, content, tool calls)."""
        store = open_store(sqlite_url(Path(folder, ".leanloop", "sessions.db")))

        async def load() -> list[dict[str, Any]]:
            try:
                session = await store.load(thread)
                out = []
                for turn in session.turns:
                    for _, messages in turn.steps:
                        out.extend(
                            {"type": m.type, "content": str(m.content),
                             "tool_calls": [dict(c) for c in getattr(m, "tool_calls", [])]}
                            for m in messages
                        )  # fmt: skip
                return out
            finally:
                await store.close()

        return asyncio.run(load())

    def index_of_message_containing(self, messages: list[dict[str, Any]], text: str) -> int:
        """The index of the first stored message whose content holds ``text``; -1 if none."""
        return next((i for i, m in enumerate(messages) if text in m["content"]), -1)

    # ── Python: pause, then resume in a new process ───────────────────────────────────
    def run_resume_helper(self, *args: str) -> dict[str, Any]:
        """Run ``edit_resume.py ARGS`` in a new process; its JSON line (fails on rc != 0)."""
        script = Path(__file__).with_name("edit_resume.py")
        done = subprocess.run(
            [sys.executable, str(script), *args],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        print(f"*DEBUG* stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
        if done.returncode != 0:
            msg = f"edit_resume.py {args} exited {done.returncode}:\n{done.stderr}"
            raise AssertionError(msg)
        return json.loads(done.stdout.strip().splitlines()[-1])

    # ── leanloop serve and the official openai client ─────────────────────────────────
    def ask_over_serve(
        self, base_url: str, token: str, session: str, question: str = QUESTION,
        decisions: dict[str, Any] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Ask the served ``fixer`` ``question`` in ``session`` with the ``openai`` client;
        ``decisions`` (``{call_id: decision}``) go in ``extra_body={"leanloop":
        {"approvals": ...}}``, as a program answering a paused run sends them.

        Returns ``status`` (200, or the error's HTTP status), ``content`` (the text, or
        the error's ``content``), ``finish_reason``, ``code`` (the error's) and ``leanloop``
        (the report, from the completion or from the error object).
        """
        client = openai.OpenAI(
            base_url=base_url, api_key=token, max_retries=0, timeout=900,
            default_headers={"X-Leanloop-Session": session},
        )  # fmt: skip
        extra = {"leanloop": {"approvals": decisions}} if decisions is not None else None
        messages: Any = [{"role": "user", "content": question}]
        try:
            completion = client.chat.completions.create(
                model=AGENT, messages=messages, extra_body=extra
            )
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            reply = {"status": exc.status_code, "code": exc.code, "message": exc.message,
                     "content": body.get("content"), "finish_reason": None,
                     "leanloop": body.get("leanloop")}  # fmt: skip
        else:
            choice = completion.choices[0]
            reply = {"status": 200, "code": None, "message": "",
                     "content": choice.message.content or "",
                     "finish_reason": choice.finish_reason,
                     "leanloop": (completion.model_extra or {}).get("leanloop")}  # fmt: skip
        print(f"*DEBUG* {question!r} with {decisions!r} -> {json.dumps(reply, default=str)}")
        return reply

    def decide_pauses_over_serve(
        self, base_url: str, token: str, session: str, reply: dict[str, Any], decision: Any,
        most: int = 4,
    ) -> dict[str, Any]:  # fmt: skip
        """While ``reply`` is a pause, send ``decision`` on each of its pending calls (at
        most ``most`` times); return the first reply that is no pause. ``self.decided``
        keeps every call decided here, in order."""
        self.decided = []
        for _ in range(int(most)):
            report = reply.get("leanloop") or {}
            if report.get("stop_reason") != "paused":
                return reply
            pending = report.get("pending_calls") or []
            self.decided.extend(pending)
            decisions = {str(call["id"]): decision for call in pending}
            reply = self.ask_over_serve(base_url, token, session, decisions=decisions)
        msg = f"the run still pauses after {most} rounds of decisions: {reply}"
        raise AssertionError(msg)

    def calls_decided_over_serve(self) -> list[dict[str, Any]]:
        """The pending calls Decide Pauses Over Serve decided, in order."""
        return list(self.decided)

    def _spawned(self) -> pexpect.spawn[str]:
        if self._child is None:
            msg = "no run: start one with Start Run On A Pty"
            raise AssertionError(msg)
        return self._child
