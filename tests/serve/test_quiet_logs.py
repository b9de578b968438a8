"""``leanloop serve`` logs its own lines and uvicorn's, not httpx's per request (issue 39).

A real ``leanloop serve`` process on the fake model server, three turns at once: stderr
holds no ``httpx`` line (each turn made several at INFO, the window probe's 404s among
them), and the server was probed for the window once, not once per turn.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from leanloop.testing.server import FakeModelServer, Reply

GUARD_S = 60.0
"""Only a hang waits this long."""


def _ask(base: str, question: str) -> int:
    body = {"model": "a", "messages": [{"role": "user", "content": question}]}
    request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 only
        f"{base}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=GUARD_S) as response:  # noqa: S310
        return int(response.status)


def test_serve_logs_no_request_lines_and_probes_the_window_once(tmp_path: Path) -> None:
    with FakeModelServer(handler=lambda _: Reply(content="Paris."), model="m") as model:
        file = tmp_path / "agents.yaml"
        entry = f"{{provider: openai-compatible, model: m, base_url: {model.base_url}}}"
        file.write_text(
            f"version: 1\nmodels:\n  main: {entry}\nagents:\n  a: {{model: main, tools: []}}\n",
            encoding="utf-8",
        )
        log = tmp_path / "serve.log"
        with log.open("wb") as err:
            serve = subprocess.Popen(
                [sys.executable, "-m", "leanloop", "serve", str(file), "--no-auth", "--port", "0"],
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        try:
            deadline = time.monotonic() + GUARD_S
            while not (banner := re.search(r"on (http://\S+/v1)", log.read_text())):
                assert serve.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.05)
            with ThreadPoolExecutor(3) as pool:
                codes = list(pool.map(lambda q: _ask(banner.group(1), q), ["a", "b", "c"]))
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(GUARD_S)
        paths = model.paths

    logged = log.read_text()
    assert codes == [200, 200, 200], logged
    assert "uvicorn.access" in logged, logged  # serve's own INFO lines still show
    assert "httpx" not in logged, logged
    assert paths.count("/props") == 1, paths
    assert paths.count("/v1/chat/completions") == 3, paths
