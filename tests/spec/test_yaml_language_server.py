"""The README's agents files pass the real YAML language server with leanloop's schema.

Editors (VS Code's YAML extension and others) validate an agents file with
``yaml-language-server`` against the schema a modeline names. This test starts that
server over stdio, speaks LSP to it (initialize, configuration, didOpen) and reads the
diagnostics it publishes: the README's examples must get no error, and a file with a
wrong value must get one, so the check can fail.

The server is an npm package, installed beside the checkout (``.ci/install-services``)::

    npm install --prefix build/yaml-ls yaml-language-server@1
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

import leanloop

__all__: list[str] = []

# Node and the npm package are a service of the full run (.ci/install-services), like
# PostgreSQL and Chromium: the everyday run, on a machine with only Python, leaves it out.
pytestmark = pytest.mark.full

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "build" / "yaml-ls" / "node_modules" / ".bin" / "yaml-language-server"
SCHEMA = Path(leanloop.__file__).resolve().parent / "spec" / "agent.schema.json"
DEMO = Path(leanloop.__file__).resolve().parent / "examples" / "agents.yaml"
INSTALL = "npm install --prefix build/yaml-ls yaml-language-server@1"
WAIT_S = 60.0
"""How long one answer of the server may take (node starts slowly on a busy machine)."""

_FENCE = re.compile(r"^```yaml\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
_MODELINE = re.compile(r"^#\s*yaml-language-server:.*\n", re.MULTILINE)
ERROR = 1
"""LSP's DiagnosticSeverity.Error."""


def _readme_agents_files() -> list[tuple[str, str]]:
    """Each ``yaml`` block of the README that is an agents file, as (README.md:LINE, text)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        if re.search(r"^version: 1$", match["body"], re.MULTILINE):
            line = text.count("\n", 0, match.start()) + 1
            blocks.append((f"README.md:{line}", match["body"]))
    return blocks


README_FILES = _readme_agents_files()


class LanguageServer:
    """A minimal LSP client: JSON-RPC with Content-Length frames over the server's stdio."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        self._next_id = 0
        assert process.stdout is not None
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = None
            while (header := stream.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if not header or length is None:
                return
            self.messages.put(json.loads(stream.read(length)))

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        self._send({"id": self._next_id, "method": method, "params": params})
        for message in self._incoming():
            if message.get("id") == self._next_id and "method" not in message:
                assert "error" not in message, message
                return message.get("result")
        raise AssertionError("unreachable")  # pragma: no cover

    def wait_for_diagnostics(self, uris: set[str]) -> dict[str, list[dict[str, Any]]]:
        for _ in self._incoming():
            if uris <= set(self.diagnostics):
                break
        return {uri: self.diagnostics[uri] for uri in uris}

    def _incoming(self) -> Iterator[dict[str, Any]]:
        while True:
            try:
                message = self.messages.get(timeout=WAIT_S)
            except queue.Empty:
                raise AssertionError(f"yaml-language-server said nothing for {WAIT_S} s") from None
            self._answer(message)
            yield message

    def _answer(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method == "textDocument/publishDiagnostics":
            self.diagnostics[message["params"]["uri"]] = message["params"]["diagnostics"]
        elif method is not None and "id" in message:
            # The server's own requests (configuration, registerCapability, progress)
            # wait for an answer; configuration gets the settings, the rest null.
            result: Any = None
            if method == "workspace/configuration":
                result = [_SETTINGS["yaml"] for _ in message["params"]["items"]]
            self._send({"id": message["id"], "result": result})


_SETTINGS = {
    "yaml": {
        "validate": True,
        "hover": False,
        "completion": False,
        # No schema from the network: only what the modeline names.
        "schemaStore": {"enable": False},
        "schemas": {},
    }
}


@pytest.fixture(scope="module")
def server() -> Iterator[LanguageServer]:
    if not SERVER.is_file():
        pytest.fail(f"yaml-language-server is not installed: run `{INSTALL}`", pytrace=False)
    process = subprocess.Popen(
        [str(SERVER), "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    client = LanguageServer(process)
    try:
        client.request(
            "initialize",
            {"processId": None, "rootUri": ROOT.as_uri(), "capabilities": {}},
        )
        client.notify("initialized", {})
        client.notify("workspace/didChangeConfiguration", {"settings": _SETTINGS})
        yield client
    finally:
        process.kill()
        process.wait(timeout=10)


def _check(
    server: LanguageServer, files: dict[str, str], tmp_path: Path
) -> dict[str, list[dict[str, Any]]]:
    """Open each text (named by its key) with a modeline naming leanloop's schema."""
    uris = {}
    for index, (name, text) in enumerate(files.items()):
        path = tmp_path / f"agents-{index}.yaml"
        # The modeline an editor user writes (README "Editor support"), with the
        # schema this checkout ships instead of the README's example path.
        body = f"# yaml-language-server: $schema={SCHEMA.as_uri()}\n" + _MODELINE.sub("", text)
        path.write_text(body, encoding="utf-8")
        uris[path.as_uri()] = name
        server.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": path.as_uri(),
                    "languageId": "yaml",
                    "version": 1,
                    "text": body,
                }
            },
        )
    found = server.wait_for_diagnostics(set(uris))
    return {uris[uri]: diagnostics for uri, diagnostics in found.items()}


def _errors(diagnostics: list[dict[str, Any]]) -> list[str]:
    return [
        f"{d['range']['start']['line'] + 1}:{d['range']['start']['character'] + 1}: {d['message']}"
        for d in diagnostics
        if d.get("severity", ERROR) == ERROR
    ]


def test_the_readme_has_agents_files_to_check() -> None:
    assert len(README_FILES) >= 3, README_FILES
    assert any("${ROUNDS:-20}" in text for _, text in README_FILES)


def test_the_readme_agents_files_have_no_error(server: LanguageServer, tmp_path: Path) -> None:
    found = _check(server, dict(README_FILES), tmp_path)
    errors = {name: _errors(diagnostics) for name, diagnostics in found.items()}
    assert errors == {name: [] for name, _ in README_FILES}


def test_the_demo_file_passes_with_its_relative_modeline(server: LanguageServer) -> None:
    # The shipped demo names the schema relative to itself: `$schema=../spec/...`.
    text = DEMO.read_text(encoding="utf-8")
    assert "$schema=../spec/agent.schema.json" in text
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": DEMO.as_uri(), "languageId": "yaml", "version": 1, "text": text}},
    )
    found = server.wait_for_diagnostics({DEMO.as_uri()})
    assert _errors(found[DEMO.as_uri()]) == []


@pytest.mark.parametrize(
    ("line", "wrong"),
    [
        ("max_rounds: abc", "max_rounds"),  # a string that is not a reference
        ("max_rounds: 0", "max_rounds"),  # under the minimum
        ("max_round: 5", "max_round"),  # an unknown key
        ("tool_mode: ${MODE", "tool_mode"),  # a reference that is not closed
    ],
)
def test_a_wrong_file_gets_an_error(
    server: LanguageServer, tmp_path: Path, line: str, wrong: str
) -> None:
    text = (
        "version: 1\n"
        "agents:\n"
        "  reader:\n"
        "    model: {provider: ollama, model: qwen2.5-coder:1.5b}\n"
        f"    {line}\n"
    )
    errors = _errors(_check(server, {"wrong": text}, tmp_path)["wrong"])
    # Line 6: the modeline comes first, then the five lines above.
    assert [error for error in errors if error.startswith("6:")], errors
    assert errors, f"no error for {wrong!r}"
