"""Robot keywords for ``robot/serve.robot``: ``python -m leanloop.serve`` as a real process.

The agents file and its scripted models are the pytest fixtures (tests/serve/fixtures),
copied to a fresh folder so the session store lives there; the real-model test writes
its own (``Real Model Agents File``). The server is started on a free loopback port and
stopped with SIGTERM, as a service manager would; its stderr is kept so a test can check
that no traceback was logged. Starting a second server while one runs sets the first
aside: the keywords talk to the newest, and stopping it brings the first back.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import openai
from agents_file import agent_entry, model_entry, write_agents_file

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "serve" / "fixtures"
TOKEN = "robot-serve-token-0123456789"


class ServeLibrary:
    """Start, talk to and stop a ``leanloop serve`` process."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.folder: Path | None = None
        self.base_url = ""
        self.log = ""
        # The servers set aside by a newer one: (process, folder, base URL, log file).
        self._set_aside: list[tuple[subprocess.Popen[bytes], Path, str, Any]] = []

    def serve_token(self) -> str:
        """The bearer token the server is started with."""
        return TOKEN

    def serve_port(self) -> int:
        """The port the newest server listens on."""
        port = urlsplit(self.base_url).port
        assert port is not None, self.base_url
        return port

    def real_model_agents_file(self, base_url: str) -> str:
        """A fresh folder with ``workspace/notes.txt`` and the agent ``reader`` on the
        model at ``base_url`` (``read_file`` and the other workspace tools); its path."""
        folder = Path(tempfile.mkdtemp(prefix="leanloop-serve-real-"))
        (folder / "workspace").mkdir()
        (folder / "workspace" / "notes.txt").write_text("The launch code is 4711.\n")
        prompt = (
            "You answer questions about the files in the workspace. The notes are in "
            "notes.txt. Use the tools to look at the files before you answer."
        )
        return write_agents_file(
            folder, model_entry(base_url, "local"), "reader", agent_entry(prompt)
        )

    def start_serve_process(self, *options: str, agents_file: str = "", timeout: float = 60) -> str:
        """Start ``python -m leanloop.serve`` on a free port; return its ``/v1`` base URL.

        ``agents_file``: serve it (its folder is removed once stopped); by default a copy of
        the scripted fixtures. A server already running is set aside until this one stops.
        Fails with the server's stderr when it exits or does not answer ``/healthz``.
        """
        if self.process is not None:
            assert self.folder is not None  # set with the process
            self._set_aside.append((self.process, self.folder, self.base_url, self._stderr))
        if agents_file:
            self.folder = Path(agents_file).parent
        else:
            self.folder = Path(tempfile.mkdtemp(prefix="leanloop-serve-"))
            for name in ("agents.yaml", "serve_models.py"):
                shutil.copy(FIXTURES / name, self.folder / name)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self._stderr = (self.folder / "serve.log").open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "leanloop.serve",
                str(self.folder / "agents.yaml"),
                "--port",
                str(port),
                *options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            env={**os.environ, "LEANLOOP_SERVE_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"},
        )
        root = f"http://127.0.0.1:{port}"
        ends = time.monotonic() + timeout
        while time.monotonic() < ends:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"leanloop serve exited {self.process.returncode}: {self._read_log()}"
                )
            try:
                if httpx.get(f"{root}/healthz", timeout=2).status_code == 200:
                    self.base_url = f"{root}/v1"
                    return self.base_url
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop_serve_process()
        raise AssertionError(f"leanloop serve did not answer /healthz in {timeout} s: {self.log}")

    def stop_serve_process(self, timeout: float = 30) -> int:
        """SIGTERM the server, wait for it to end, and return its exit code."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"leanloop serve ignored SIGTERM for {timeout} s") from None
        code = self.process.returncode
        self.log = self._read_log()
        self._stderr.close()
        self.process = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        if self._set_aside:
            self.process, self.folder, self.base_url, self._stderr = self._set_aside.pop()
        return code

    def serve_log(self) -> str:
        """What the server wrote to stderr so far (all of it once stopped)."""
        return self.log if self.process is None else self._read_log()

    def _read_log(self) -> str:
        assert self.folder is not None
        return (self.folder / "serve.log").read_text(errors="replace")

    def curl(self, path: str, *args: str) -> dict[str, Any]:
        """Run ``curl -s`` against the server; return ``status``, ``body`` (text) and ``json``."""
        result = subprocess.run(
            ["curl", "-sS", "-w", "\n%{http_code}", *args, f"{self.base_url}{path}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"curl failed ({result.returncode}): {result.stderr}")
        body, _, status = result.stdout.rpartition("\n")
        try:
            parsed: Any = json.loads(body)
        except json.JSONDecodeError:
            parsed = None
        return {"status": int(status), "body": body, "json": parsed}

    def sse_payloads(self, body: str) -> list[Any]:
        """The events of a stream: each ``data:`` payload, JSON-decoded but ``[DONE]``."""
        payloads = [
            line.removeprefix("data: ") for line in body.splitlines() if line.startswith("data: ")
        ]
        return [p if p == "[DONE]" else json.loads(p) for p in payloads]

    def openai_chat(
        self, agent: str, *questions: str, stream: bool = False, session: str = ""
    ) -> dict[str, Any]:
        """Ask ``questions`` in turn with the official client, the conversation growing as
        a chat client's does; return the last answer's text, usage and report."""
        headers = {"X-Leanloop-Session": session} if session else None
        client = openai.OpenAI(
            base_url=self.base_url, api_key=TOKEN, max_retries=0, default_headers=headers
        )
        messages: list[dict[str, str]] = []
        reply: dict[str, Any] = {}
        for text in questions:
            messages.append({"role": "user", "content": text})
            if stream:
                chunks = list(
                    client.chat.completions.create(model=agent, messages=messages, stream=True)
                )  # type: ignore[arg-type]
                content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                last = chunks[-1]
                reply = {
                    "content": content,
                    "chunks": len(chunks),
                    "usage": last.usage.model_dump() if last.usage else None,
                    "leanloop": (last.model_extra or {}).get("leanloop"),
                }
            else:
                completion = client.chat.completions.create(model=agent, messages=messages)  # type: ignore[arg-type]
                reply = {
                    "content": completion.choices[0].message.content or "",
                    "usage": completion.usage.model_dump() if completion.usage else None,
                    "leanloop": (completion.model_extra or {}).get("leanloop"),
                }
            messages.append({"role": "assistant", "content": reply["content"]})
        return reply

    def run_serve_expecting_refusal(self, *args: str, token: str = "") -> dict[str, Any]:
        """Run ``python -m leanloop.serve`` without a token (or with ``token``); return rc
        and stderr."""
        env = {k: v for k, v in os.environ.items() if k != "LEANLOOP_SERVE_TOKEN"}
        if token:
            env["LEANLOOP_SERVE_TOKEN"] = token
        result = subprocess.run(
            [sys.executable, "-m", "leanloop.serve", str(FIXTURES / "agents.yaml"), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        return {"rc": result.returncode, "stderr": result.stderr}
