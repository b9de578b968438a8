"""Every fenced code block of the README and ``docs/*.md`` runs as written.

Each block is one test, ``README.md:LINE`` (the line of its opening fence), and its
fence language decides what the test does:

- ``yaml`` with ``version: 1``: an agents file, loaded and validated by leanloop;
- ``python``: executed, in order with the earlier ``python`` blocks of the same page (they
  build on each other: ``agent`` is made in one and used in the next), in a folder that
  holds what the page assumes (``agents.yaml``, ``notes/``, ``mypackage/``);
- ``bash``, ``sh``, ``console``: each command run; ``leanloop …`` in-process through
  :func:`leanloop.cli.main`, and only the commands :data:`SKIPPED_COMMANDS` lists skipped;
- no language: program output or a diagram, nothing to run.

A model the page needs is a real HTTP server on 127.0.0.1 (the Robot suites' scripted
OpenAI-compatible server, answering by a rule below): ``OPENAI_BASE_URL`` points
``ChatOpenAI`` at it, and the README's agents file gets its URL instead of
``http://127.0.0.1:8765`` (the one change made to a block, see :data:`SUBSTITUTIONS`).

A block that matches no rule fails, so a new block must be classified. A block may opt
into a rule with a marker on the line before its fence, ``<!-- doctest: RULE TEXT -->``:
``skip REASON``; ``python-raises EXC: message`` (a python block whose last statement must
raise that, as ``resume`` on a session with no unfinished turn does); ``serve-client``
(a client example, run against a ``leanloop serve agents.yaml`` started for it).

Those runs take for granted what the page does (a folder with ``mypackage/``, API keys). A
reader copying a snippet gets none of it, so every ``yaml`` and ``python`` block of the
README says what it needs in a label on the line above it (above its marker, if it has
one; :data:`LABEL`): ``*Illustration: needs …*``, or ``*Runs as written …*`` /
``*Validates as written …*``. An agents file labelled as written must pass ``leanloop
validate`` alone in an empty folder, with only the variables its label names in backticks
(```OPENAI_API_KEY```) set; one labelled an illustration must not (else the label
undersells it). Only agents files can be checked so: a python block is an illustration.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import traceback
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from leanloop.cli import main as leanloop_main
from leanloop.spec import load_specs

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md"))]
ANSWER = "The service uses port 7431."
"""What the scripted model answers; the blocks' printed output must carry it."""

_FENCE = re.compile(
    r"^(?P<fence>```+)(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$",
    re.MULTILINE | re.DOTALL,
)
_MARKER = re.compile(r"^<!--\s*doctest:\s*(?P<rule>[\w-]+)\s*(?P<reason>.*?)\s*-->\s*$")
LABEL = re.compile(r"^\*(?P<kind>Illustration|Runs as written|Validates as written)\b[^*]*\*$")
"""A README snippet's label: whether it works as written, or what it needs."""
AS_WRITTEN = ("Runs as written", "Validates as written")
_VARIABLE = re.compile(r"`([A-Z][A-Z0-9_]*)`")
"""An environment variable a label names (```OPENAI_API_KEY```)."""
_REFERENCE = re.compile(r"\$\{([A-Za-z_]\w*)")
"""A ``${VAR}`` of an agents file."""

SKIPPED_COMMANDS = {
    "./dev": "builds llama.cpp and the real model, or runs the whole suite",
    "python -m pip install": "installs into the environment",
    "python -m pip wheel": "builds a wheel of the checkout (nox -s wheel checks it)",
    "leanloop demo": "needs the embedded llama.cpp server and the real model",
    "leanloop warm": "starts a background process (tests/cli/test_warm.py runs a real one)",
}
"""Command prefixes not run, each with why; every one must still occur in the pages."""

SUBSTITUTIONS = {"http://127.0.0.1:8765/v1": "{base_url}"}
"""Text replaced in the README's agents file before it is written as ``agents.yaml``."""

PORT_SUBSTITUTIONS = {"--port 8080": "--port {port}", "127.0.0.1:8080": "127.0.0.1:{port}"}
"""The serving examples' fixed port becomes a free one (tests run side by side)."""

EXPECTED_REFUSALS = {"--resume": "error: session 't1' has no unfinished turn to resume"}
"""Commands that, run in order on a fresh folder, must be refused (exit 2) with this line:
``--resume`` finishes a turn whose process died, and here the turn before it ended."""

OTHER_PROGRAMS = ("export", "curl", "echo")
"""Commands besides ``leanloop`` that shell blocks run, through bash."""

SERVE_WAIT_S = 90.0
"""How long ``leanloop serve`` may take to answer ``/healthz`` (imports on a busy machine)."""

ENVIRONMENT = {
    "OPENAI_API_KEY": "sk-test-not-a-key",
    "DOCS_TOKEN": "test-docs-token",
    "LEANLOOP_SERVE_TOKEN": "test-serve-token",
}
"""Variables the blocks use, with test values (``${OPENAI_API_KEY}``, ``$LEANLOOP_…``)."""


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    line: int
    lang: str
    body: str
    marker: tuple[str, str] | None
    label: tuple[str, str] | None
    """The label's kind (:data:`LABEL`) and its whole line; ``None`` when it has none."""

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        above = [row for row in text[: match.start()].split("\n") if row.strip()]
        before = above[-1] if above else ""
        marker = _MARKER.match(before)
        label = LABEL.match(above[-2 if marker else -1] if len(above) > bool(marker) else "")
        found.append(
            Block(
                page=page.relative_to(ROOT).as_posix(),
                line=line,
                lang=match["lang"],
                body=match["body"],
                marker=(marker["rule"], marker["reason"]) if marker else None,
                label=(label["kind"], label[0]) if label else None,
            )
        )
    return found


BLOCKS = [block for page in PAGES for block in _blocks(page)]


_SHOWN_VALUE = re.compile(r"^(?P<name>\w+) = .*#\s*(?P<value>[A-Z]\w*\(.*\))\s*$", re.MULTILINE)
"""A line whose comment shows the value it makes, as its repr."""

PYTHON_RULES = ("python", "python-raises")
"""``python-raises EXC: message``: the block must end by raising that (a marker says so)."""


def _rule(block: Block) -> str:
    """The rule a block runs under; ``"none"`` when it matches none (the test fails)."""
    if block.marker is not None:
        return block.marker[0]
    if block.lang == "":
        return "text"
    if block.lang == "yaml" and re.search(r"^version: 1$", block.body, re.MULTILINE):
        return "agents-file"
    if block.lang == "python":
        return "python"
    if block.lang in ("bash", "sh", "console"):
        return "shell"
    return "none"


# ---- the scripted model ------------------------------------------------------------------


def _scripted_server_module() -> ModuleType:
    path = ROOT / "robot" / "resources" / "scripted_server.py"
    spec = importlib.util.spec_from_file_location("_docs_scripted_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


_SCRIPTED = _scripted_server_module()


class AnsweringServer(_SCRIPTED.ScriptedOpenAIServer):  # type: ignore[misc,name-defined]
    """The scripted server, answering by rule instead of from a queue.

    A request for a typed answer (``response_format``) gets the City the README shows;
    a first request that offers ``read_notes`` calls it; every other request gets
    :data:`ANSWER`. So a block may make as many requests as it likes.
    """

    def _next(self, body: dict[str, Any]) -> Any:
        self.requests.append(body)
        if "response_format" in body:
            return _SCRIPTED.ScriptedResponse(content='{"name": "Paris", "country": "France"}')
        tools = [tool.get("function", {}).get("name") for tool in body.get("tools", [])]
        answered = any(message.get("role") == "tool" for message in body.get("messages", []))
        if "read_notes" in tools and not answered:
            call = {"name": "read_notes", "arguments": {"topic": "port"}}
            return _SCRIPTED.ScriptedResponse(tool_calls=[call])
        return _SCRIPTED.ScriptedResponse(content=ANSWER)


@pytest.fixture(scope="module")
def model_server() -> Iterator[AnsweringServer]:
    server = AnsweringServer(n_ctx=8192)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# ---- the folder a page assumes -----------------------------------------------------------


def _agents_file_block() -> Block:
    """The README's agents file, the ``agents.yaml`` its commands and examples use."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    heading = readme.index("\n## An agents file\n")
    line = readme.count("\n", 0, heading) + 1
    return next(b for b in BLOCKS if b.page == "README.md" and b.line > line and b.lang == "yaml")


def _world(folder: Path, base_url: str) -> Path:
    """Write what the README's examples take for granted into ``folder``."""
    text = _agents_file_block().body
    for old, new in SUBSTITUTIONS.items():
        assert old in text, f"the README's agents file no longer has {old!r}"
        text = text.replace(old, new.format(base_url=base_url))
    (folder / "agents.yaml").write_text(text, encoding="utf-8")
    (folder / "data").mkdir()
    (folder / "data" / "service.toml").write_text("port = 7431\n", encoding="utf-8")
    (folder / "notes").mkdir()
    (folder / "notes" / "port.txt").write_text("The service listens on 7431.\n", "utf-8")
    for package, module, function in (
        ("mypackage", "tools", "lookup"),
        ("mytools", "http", "fetch"),
    ):
        (folder / package).mkdir()
        (folder / package / "__init__.py").write_text("", encoding="utf-8")
        (folder / package / f"{module}.py").write_text(
            f"def {function}(key: str) -> str:\n"
            f'    """Return what the docs example {function} finds for a key."""\n'
            "    return key\n",
            encoding="utf-8",
        )
    return folder


@pytest.fixture
def world(tmp_path: Path, model_server: AnsweringServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = _world(tmp_path, model_server.base_url)
    monkeypatch.chdir(folder)
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.base_url)
    monkeypatch.setenv("NO_COLOR", "1")
    for name in ("ROUNDS", "LOCAL_API_KEY", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    return folder


# ---- python: one session per page --------------------------------------------------------


@dataclass
class PythonRun:
    namespace: dict[str, Any]
    outcomes: dict[int, str | None]
    """Each block's line → ``None`` when it ran, else the traceback."""
    output: dict[int, str]


@pytest.fixture(scope="module")
def python_runs(
    tmp_path_factory: pytest.TempPathFactory, model_server: AnsweringServer
) -> Iterator[dict[str, PythonRun]]:
    runs: dict[str, PythonRun] = {}
    with pytest.MonkeyPatch.context() as patch:
        for page in sorted({b.page for b in BLOCKS if _rule(b) in PYTHON_RULES}):
            folder = _world(tmp_path_factory.mktemp("python"), model_server.base_url)
            patch.chdir(folder)
            for name, value in ENVIRONMENT.items():
                patch.setenv(name, value)
            patch.setenv("OPENAI_BASE_URL", model_server.base_url)
            run = PythonRun(namespace={"__name__": "__docs__"}, outcomes={}, output={})
            for block in (b for b in BLOCKS if b.page == page and _rule(b) in PYTHON_RULES):
                printed = io.StringIO()
                try:
                    code = compile(block.body, block.id, "exec")
                    with contextlib.redirect_stdout(printed):
                        exec(code, run.namespace)  # noqa: S102 - the docs' own examples
                except Exception:
                    run.outcomes[block.line] = traceback.format_exc()
                else:
                    run.outcomes[block.line] = None
                run.output[block.line] = printed.getvalue()
            runs[page] = run
    yield runs


# ---- shell: each command -----------------------------------------------------------------


def _commands(block: Block) -> list[str]:
    lines = []
    pending = ""
    for raw in block.body.splitlines():
        line = raw.strip()
        if block.lang == "console":
            if not line.startswith("$ "):
                continue  # the output the console block shows
            line = line[2:]
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def _skip_reason(command: str) -> str | None:
    return next(
        (why for prefix, why in SKIPPED_COMMANDS.items() if command.startswith(prefix)), None
    )


def _run_leanloop(words: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = leanloop_main(words)
        except SystemExit as exc:  # argparse's --version and --help end this way
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


class Shell:
    """Runs a shell block's commands one by one, with the variables its exports set."""

    def __init__(self, block: Block, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.block = block
        self.folder = folder
        self.monkeypatch = monkeypatch
        self.port = _free_port()
        self.stack = contextlib.ExitStack()

    def run(self, command: str) -> str:
        """Run one command; returns what it printed."""
        for old, new in PORT_SUBSTITUTIONS.items():
            command = command.replace(old, new.format(port=self.port))
        words = shlex.split(command, comments=True)
        if words[0] in OTHER_PROGRAMS:
            return self._bash(command, words)
        assert words[0] == "leanloop", f"{self.block.id}: no rule runs {command!r}"
        if words[1] == "serve":  # a server: started in the background, stopped at the end
            self.stack.enter_context(_serving(words, self.folder, self.port))
            return ""
        target = None
        if ">" in words:  # `leanloop run … --json "…" > run.json`
            at = words.index(">")
            words, target = words[:at], words[at + 1]
        with contextlib.ExitStack() as stack:
            if words[1] == "chat":  # a REPL: one question, then the end of its input
                stack.enter_context(_stdin("Which port?\n"))
            code, out, err = _run_leanloop(words[1:])
        refusal = next((line for flag, line in EXPECTED_REFUSALS.items() if flag in words), None)
        if refusal is not None:
            assert (code, refusal) == (2, err.strip()), f"{self.block.id}: `{command}`: {err}"
            return out
        assert code == 0, f"{self.block.id}: `{command}` exited {code}\n{err}{out}"
        if words[1] == "run" and "--resume" not in words:
            assert ANSWER in out, f"{self.block.id}: `{command}` printed {out!r}"
        if target is not None:
            Path(target).write_text(out, encoding="utf-8")
        return out

    def _bash(self, command: str, words: list[str]) -> str:
        if words[0] == "export":  # keep the variable for the commands that follow
            name = words[1].split("=", 1)[0]
            command = f'{command}\nprintf %s "${name}"'
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{self.block.id}: `{command}`: {done.stderr}"
        if words[0] == "export":
            assert done.stdout, f"{self.block.id}: `{command}` set nothing"
            self.monkeypatch.setenv(name, done.stdout)
        elif words[0] == "curl":
            assert ANSWER in done.stdout, f"{self.block.id}: `{command}`: {done.stdout}"
        return done.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _serving(words: list[str], folder: Path, port: int) -> Iterator[None]:
    """``leanloop serve …`` in a process of its own until the block is done."""
    log = folder / f"serve-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "leanloop", *words[1:]],
            cwd=folder,
            env=dict(os.environ),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + SERVE_WAIT_S
        while True:
            assert process.poll() is None, log.read_text("utf-8", errors="replace")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, log.read_text("utf-8", errors="replace")
                time.sleep(0.3)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - a server that hangs
            process.kill()
            process.wait(timeout=10)


@contextlib.contextmanager
def _stdin(text: str) -> Iterator[None]:
    previous = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = previous


# ---- the tests ---------------------------------------------------------------------------


def test_the_pages_have_blocks_of_every_kind() -> None:
    rules = {_rule(block) for block in BLOCKS}
    assert {"agents-file", "python", "shell", "text"} <= rules, rules
    assert len(BLOCKS) >= 15, [b.id for b in BLOCKS]


SNIPPETS = [b for b in BLOCKS if b.page == "README.md" and b.lang in ("yaml", "python")]
"""The README's agents files and Python: what a reader copies, so each carries a label."""


@pytest.mark.parametrize("block", SNIPPETS, ids=lambda block: block.id)
def test_a_readme_snippet_says_whether_it_works_as_written(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = "*Illustration: needs OPENAI_API_KEY and a tools.py with lookup.*"
    assert block.label is not None, f"{block.id}: no label on the line above; e.g. {example}"
    kind, label = block.label
    if _rule(block) != "agents-file":
        assert kind == "Illustration", f"{block.id}: only an agents file is checked as written"
        return
    code, problems = _validate_alone(block, _VARIABLE.findall(label), tmp_path, monkeypatch)
    if kind in AS_WRITTEN:
        assert code == 0, f"{block.id}: labelled {kind!r}, but alone it fails:\n{problems}"
    else:
        assert code != 0, f"{block.id}: it validates alone: label it *Validates as written …*"


def _validate_alone(
    block: Block, variables: list[str], folder: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """``leanloop validate`` of the block in an empty folder, with only ``variables`` set."""
    monkeypatch.chdir(folder)
    for name in {*ENVIRONMENT, *_REFERENCE.findall(block.body)}:
        monkeypatch.delenv(name, raising=False)
    for name in variables:
        monkeypatch.setenv(name, "set-by-the-test")
    path = folder / "agents.yaml"
    path.write_text(block.body, encoding="utf-8")
    code, _, err = _run_leanloop(["validate", str(path)])
    return code, err


def test_every_skipped_command_still_occurs() -> None:
    # A skip rule nothing matches any more is dead weight that could hide a new command.
    commands = [c for b in BLOCKS if _rule(b) == "shell" for c in _commands(b)]
    unused = [p for p in SKIPPED_COMMANDS if not any(c.startswith(p) for c in commands)]
    assert not unused, unused


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.id)
def test_code_block(block: Block, request: pytest.FixtureRequest) -> None:
    rule = _rule(block)
    if rule == "skip":
        assert block.marker is not None and block.marker[1], f"{block.id}: a skip needs a reason"
        pytest.skip(block.marker[1])
    if rule == "text":
        # Output or a diagram: nothing to run, but no command may hide in it either.
        assert not re.search(r"^\$ |^leanloop ", block.body, re.MULTILINE), block.id
        return
    assert rule != "none", f"{block.id}: a ```{block.lang} block that no rule runs"
    if rule in PYTHON_RULES:
        run = request.getfixturevalue("python_runs")[block.page]
        outcome = run.outcomes[block.line]
        if rule == "python":
            assert outcome is None, outcome
        else:  # the marker names the exception and its message: the traceback's last line
            assert block.marker is not None
            assert outcome is not None, f"{block.id}: ran, but should raise {block.marker[1]}"
            assert outcome.strip().splitlines()[-1].endswith(block.marker[1]), outcome
            # Only the last statement may raise it: everything before it must have run.
            last = block.body.rstrip().splitlines()[-1]
            assert f"line {len(block.body.rstrip().splitlines())}," in outcome, (last, outcome)
        if "print(" in block.body:  # what it prints comes from the scripted model
            assert ANSWER in run.output[block.line], run.output[block.line]
        for shown in _SHOWN_VALUE.finditer(block.body):  # `city = …  # City(name='Paris', …)`
            assert repr(run.namespace[shown["name"]]) == shown["value"], shown[0]
        return
    folder: Path = request.getfixturevalue("world")
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    if rule == "serve-client":
        _run_serve_client(block, folder, monkeypatch)
        return
    if rule == "agents-file":
        path = folder / f"block-{block.line}.yaml"
        path.write_text(block.body, encoding="utf-8")
        specs = load_specs(path)
        assert specs, block.id
        return
    assert rule == "shell", f"{block.id}: no rule {rule!r}"
    commands = _commands(block)
    # A shell block always shows a command; one that parses to none has lost its text.
    assert commands, f"{block.id}: a shell block without a command"
    shell = Shell(block, folder, monkeypatch)
    with shell.stack:
        # A command SKIPPED_COMMANDS lists (the quick start's ./dev lines, which CI runs
        # itself; installs) is not run: test_every_skipped_command_still_occurs keeps that
        # list honest. Every other command runs, in order.
        for command in (c for c in commands if _skip_reason(c) is None):
            shell.run(command)


def _run_serve_client(block: Block, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a client example against a ``leanloop serve agents.yaml`` started for it."""
    port = _free_port()
    code = block.body
    for old, new in PORT_SUBSTITUTIONS.items():
        code = code.replace(old, new.format(port=port))
    monkeypatch.setenv("LEANLOOP_SERVE_TOKEN", ENVIRONMENT["LEANLOOP_SERVE_TOKEN"])
    words = ["leanloop", "serve", "agents.yaml", "--port", str(port)]
    printed = io.StringIO()
    with _serving(words, folder, port), contextlib.redirect_stdout(printed):
        exec(compile(code, block.id, "exec"), {"__name__": "__docs__"})  # noqa: S102
    assert ANSWER in printed.getvalue(), printed.getvalue()
