"""``leanloop serve --workers N``: refused without a shared (PostgreSQL) session store,
and with one, a session's turns stay in order whichever worker serves them."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from leanloop.serve import ServeSetupError
from leanloop.serve.main import check_workers_store, load_served_agents, serve_main

_MODELS = '''
"""A model whose reply names its worker's process and the user turns it was sent."""

import os

from langchain_core.messages import HumanMessage

from leanloop.testing import ScriptedChatModel


def count(messages):
    humans = [m.text for m in messages if isinstance(m, HumanMessage)]
    earlier = " | ".join(humans[:-1])
    return f"pid {os.getpid()} saw {len(humans) - 1} earlier: [{earlier}]"


class CountingChatModel(ScriptedChatModel):
    def __init__(self, **kwargs):
        super().__init__(**{"replies": [count], "repeat_last": True, **kwargs})
'''

_REPLY = re.compile(r"pid (\d+) saw (\d+) earlier: \[(.*)\]")


def _agents_file(folder: Path, store: str | None) -> Path:
    """An agents file with one agent, ``counter``, storing sessions in ``store``."""
    (folder / "workers_models.py").write_text(_MODELS)
    sessions = f"sessions: {{store: {store!r}}}\n" if store else ""
    path = folder / "agents.yaml"
    path.write_text(
        "version: 1\n"
        + sessions
        + textwrap.dedent("""\
            agents:
              counter:
                model: {class: "workers_models:CountingChatModel"}
            """)
    )
    return path


@pytest.mark.parametrize("store", [None, "sqlite:///sessions.db"])
def test_workers_are_refused_without_a_postgres_store(
    tmp_path: Path, store: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _agents_file(tmp_path, store)

    assert serve_main([str(path), "--no-auth", "--workers", "2"]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "--workers 2 needs a PostgreSQL session store" in err
    assert "'counter' keeps its sessions in sqlite:///" in err
    assert "sessions.store in agents.yaml" in err


def test_a_worker_count_below_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _agents_file(tmp_path, None)

    assert serve_main([str(path), "--no-auth", "--workers", "0"]) == 2
    assert "--workers must be at least 1 (got 0)" in capsys.readouterr().err


def test_a_postgres_store_allows_workers_without_connecting(tmp_path: Path) -> None:
    # The store is only opened by a turn: checking the file needs no server.
    path = _agents_file(tmp_path, "postgresql://leanloop@127.0.0.1:1/none")
    agents = load_served_agents(str(path))

    check_workers_store(agents, 4)
    with pytest.raises(ServeSetupError, match="at least 1"):
        check_workers_store(agents, 0)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_healthy(base: str, server: subprocess.Popen[str], seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert server.poll() is None, f"leanloop serve exited {server.returncode}"
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail(f"leanloop serve --workers 2 was not healthy within {seconds:g} s")


def _ask(base: str, question: str, *, by_header: bool) -> str:
    """One turn of the session ``s1``, over a new connection; the answer."""
    body: dict[str, object] = {
        "model": "counter",
        "messages": [{"role": "user", "content": question}],
    }
    headers = {"X-Leanloop-Session": "s1"} if by_header else {}
    if not by_header:
        body["user"] = "s1"
    # A client per request: a new connection each time, so either worker may accept it.
    with httpx.Client(timeout=30) as client:
        response = client.post(f"{base}/v1/chat/completions", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


async def _stored_turns(url: str, thread: str) -> list[tuple[int, str, str]]:
    from leanloop.sessions import open_store  # noqa: PLC0415

    session = await open_store(url).load(thread)
    return [
        (turn.number, turn.question.text, turn.answer.text if turn.answer else "")
        for turn in session.turns
    ]


@pytest.mark.full
def test_two_workers_keep_a_sessions_turns_in_order(tmp_path: Path) -> None:
    # The Behave scenarios' throwaway server (features/ is on pytest's path); imported
    # here since it needs psycopg, which the full run installs.
    from fixtures.session_postgres import shared_server  # noqa: PLC0415

    store = shared_server().new_database()
    path = _agents_file(tmp_path, store)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "leanloop.serve", str(path), "--no-auth"]
    command += ["--port", str(port), "--workers", "2", "--grace", "5"]
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_healthy(base, server, 90)
        questions: list[str] = []
        answers: list[str] = []
        pids: set[str] = set()
        # Six turns at least; more (up to 20) until both workers have served one, since
        # which worker accepts a new connection is the kernel's choice.
        while len(questions) < 6 or (len(pids) < 2 and len(questions) < 20):
            question = f"question {len(questions) + 1}"
            answer = _ask(base, question, by_header=len(questions) % 2 == 0)
            match = _REPLY.fullmatch(answer)
            assert match, answer
            pid, seen, earlier = match.groups()
            # The turn's request carried every earlier turn, in order.
            assert int(seen) == len(questions), answer
            assert earlier == " | ".join(questions), answer
            pids.add(pid)
            questions.append(question)
            answers.append(answer)
        assert len(pids) == 2, f"one worker served all {len(questions)} turns: {pids}"
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            code = server.wait()
    assert code == 0, log.read_text()
    stored = asyncio.run(_stored_turns(store, "s1"))
    expected = [(n, q, a) for n, (q, a) in enumerate(zip(questions, answers, strict=True), 1)]
    assert stored == expected
    assert str(os.getpid()) not in pids
