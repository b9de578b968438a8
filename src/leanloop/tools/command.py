"""The built-in ``run_command`` tool: run a program in the workspace, safely bounded.

It is never on unless an agent's ``tools`` names it. A call runs one program:

- **no shell** by default: ``argv`` is the program and its arguments, so ``;``, ``|``,
  ``$HOME`` and globs are plain text (a tool entry's ``shell: true`` runs one command
  line with ``/bin/sh -c`` instead). One string with spaces is split like a shell would,
  still without one;
- in the **workspace folder**, with a **scrubbed environment**: ``PATH``, the locale
  and time zone, ``HOME`` set to the workspace, nothing else (no API keys or tokens);
- under a **timeout** (the model's ``timeout_s``, else the tool entry's
  ``command_timeout``, 60 s by default; always a second under the call's own limit, so
  the command's output still comes back);
- in a **process group of its own**: on a timeout or a cancellation the program and
  every child it started are killed (``SIGKILL`` to the group), and so is whatever it
  left running when it ended;
- with **capped output**: at most 30,000 characters of each stream and 60,000 in all,
  the start and the end of a longer stream kept around a marker that says how much was
  cut (the end of a test run is where its summary is).

A non-zero exit is information, not a failure: the model gets the exit code and the
output. What the model can fix (an empty ``argv``, a program that is not allowed or not
found) is a ``ToolException`` with one line to act on.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shlex
import signal
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

from leanloop.spec.toolrefs import COMMAND_TOOL
from leanloop.tools._builtin import built_in_tool
from leanloop.tools._paths import workspace_root
from leanloop.tools.readers import READS_KEY

__all__ = [
    "COMMAND_TOOL",
    "DEFAULT_COMMAND_TIMEOUT",
    "MAX_OUTPUT_CHARS",
    "MAX_STREAM_CHARS",
    "CommandSettings",
    "command_tool",
    "scrubbed_environment",
]

DEFAULT_COMMAND_TIMEOUT = 60.0
MAX_STREAM_CHARS = 30_000
MAX_OUTPUT_CHARS = 60_000
_MARGIN_S = 1.0
"""A command stops this long before the call's own limit, so its output comes back."""
_DRAIN_S = 1.0
"""How long the output may keep coming after the program ended (children holding it)."""
_CHUNK = 65_536
_KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "TMPDIR")
"""Variables a program needs to run at all; everything else in leanloop's environment
(API keys, tokens, a cloud profile) stays out."""
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


@dataclass(frozen=True, slots=True)
class CommandSettings:
    """How ``run_command`` runs, from its tool entry in the agents file.

    Attributes:
        timeout_s: Seconds a command may run when the model gives no ``timeout_s``
            (``command_timeout``).
        allowed: The program names the model may run (``allowed_commands``), compared
            with the name of ``argv[0]``; ``None``: any. A convenience, not a sandbox:
            an allowed interpreter runs anything.
        via_shell: Run one command line with ``/bin/sh -c`` (``shell: true``).
        call_limit_s: The limit the registry gives a call (the entry's ``timeout``, else
            the agent's ``tool_timeout``); commands stop a second before it.
        max_stream_chars: The most characters kept of stdout, and of stderr.
        max_output_chars: The most characters kept of both together.
    """

    timeout_s: float = DEFAULT_COMMAND_TIMEOUT
    allowed: tuple[str, ...] | None = None
    via_shell: bool = False
    call_limit_s: float | None = None
    max_stream_chars: int = MAX_STREAM_CHARS
    max_output_chars: int = MAX_OUTPUT_CHARS

    def limit(self, asked: float | None) -> float:
        """The timeout of one command: what the model asked, else the default, capped."""
        seconds = asked if asked is not None and asked > 0 else self.timeout_s
        if self.call_limit_s is not None:
            seconds = min(seconds, max(self.call_limit_s - _MARGIN_S, self.call_limit_s / 2))
        return seconds


class RunCommandArgs(BaseModel):
    """Arguments of run_command."""

    argv: list[str] = Field(
        description='The program and its arguments, e.g. ["pytest", "-q", "tests/test_app.py"].'
        " No shell: pipes, ';', '$VAR' and globs are passed as plain text."
    )
    timeout_s: float | None = Field(
        default=None, description="Seconds the command may run (default: the agent's setting)."
    )


class RunShellArgs(BaseModel):
    """Arguments of run_command with ``shell: true``."""

    argv: list[str] = Field(
        description='The command line as one item, run by /bin/sh, e.g. ["pytest -q | tail -n 20"].'
    )
    timeout_s: float | None = Field(
        default=None, description="Seconds the command may run (default: the agent's setting)."
    )


def scrubbed_environment(
    workspace: Path, source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment a command runs with: what a program needs, no secrets.

    Args:
        workspace: Becomes ``HOME`` (and ``PWD``), so tools that write to ``~`` stay in it.
        source: Where ``PATH`` and the locale come from; ``os.environ`` by default.
    """
    source = os.environ if source is None else source
    kept = {
        name: source[name]
        for name in _KEPT_VARIABLES
        if name in source and not any(word in name for word in _SECRET_WORDS)
    }
    kept.setdefault("PATH", os.defpath)
    kept.setdefault("LANG", "C.UTF-8")
    return {**kept, "HOME": str(workspace), "PWD": str(workspace), "NO_COLOR": "1"}


def command_tool(root: Path, settings: CommandSettings | None = None) -> StructuredTool:
    """Build ``run_command`` for the workspace ``root``.

    Args:
        root: The workspace folder (the commands' working folder); it must exist.
        settings: Its timeout, allowed programs and shell; the defaults when left out.

    Raises:
        ToolError: ``root`` is not an existing folder.
    """
    base = workspace_root(root)
    chosen = settings if settings is not None else CommandSettings()

    async def arun(argv: list[str] | str, timeout_s: float | None = None) -> str:
        return await run_command(base, argv, chosen, timeout_s=timeout_s)

    def run(argv: list[str] | str, timeout_s: float | None = None) -> str:
        # Sync callers outside an event loop (a script's tool.invoke); the registry awaits.
        return asyncio.run(arun(argv, timeout_s))

    limit = chosen.limit(None)
    description = (
        "Run a program in the workspace folder and get its exit code and output "
        "(stdout and stderr, capped). No shell: "
        "give the program and its arguments as a list. A non-zero exit code is a result, "
        f"not a failure. Stops after {limit:g} s unless timeout_s says otherwise."
    )
    if chosen.via_shell:
        description = (
            "Run a shell command line (/bin/sh) in the workspace folder and get its exit "
            "code and output (stdout and stderr, capped). A non-zero exit code is a result, "
            f"not a failure. Stops after {limit:g} s unless timeout_s says otherwise."
        )
    if chosen.allowed is not None:
        description += f" Allowed programs: {', '.join(chosen.allowed)}."
    schema = RunShellArgs if chosen.via_shell else RunCommandArgs
    return built_in_tool(
        COMMAND_TOOL, run, arun, schema, description=description, metadata={READS_KEY: None}
    )


async def run_command(
    base: Path, argv: Sequence[str] | str, settings: CommandSettings, *, timeout_s: float | None
) -> str:
    """Run ``argv`` in ``base`` under ``settings``; the text the model sees.

    Raises:
        ToolException: ``argv`` is empty, not allowed, or names no program.
    """
    words, note = _argv(base, argv, settings)
    limit = settings.limit(timeout_s)
    started = time.monotonic()
    try:
        process = await asyncio.create_subprocess_exec(
            *words,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=base,
            env=scrubbed_environment(base),
            start_new_session=True,  # its own process group: killed as one
        )
    except FileNotFoundError:
        msg = f"no program {words[0]!r} on PATH or in the workspace; check the name (no shell runs)"
        raise ToolException(msg) from None
    except PermissionError:
        msg = f"{words[0]!r} cannot be run (permission denied); run it with its interpreter"
        raise ToolException(msg) from None
    except OSError as exc:
        msg = f"cannot run {words[0]!r} ({exc.strerror or exc})"
        raise ToolException(msg) from None
    out = _Stream(settings.max_stream_chars)
    err = _Stream(settings.max_stream_chars)
    assert process.stdout is not None and process.stderr is not None  # PIPE was asked for
    readers = [
        asyncio.ensure_future(out.read(process.stdout)),
        asyncio.ensure_future(err.read(process.stderr)),
    ]
    timed_out = held = False
    try:
        if not await _exited(process, limit):
            timed_out = True
            _kill_group(process)
        _, pending = await asyncio.wait(readers, timeout=_DRAIN_S)
        if pending and not _group_alive(process):  # only a backlog: its end is coming
            _, pending = await asyncio.wait(readers, timeout=limit)
        held = bool(pending)  # a child still holds the output open
    finally:
        # However the call ends (a timeout, a cancellation, an error), nothing it started
        # outlives it: the whole group is killed.
        _kill_group(process)
        for reader in readers:
            reader.cancel()
        # Wait for its end and its pipes' (killed, they come at once), so nothing of it
        # outlives the call; a cancelled call waits for this too.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), _DRAIN_S)
    seconds = time.monotonic() - started
    head = _headline(process.returncode, seconds, limit=limit, timed_out=timed_out)
    if held:
        head += " [processes it left running held the output open; they were killed]"
    return "\n".join([*note, head, *_output(out, err, settings.max_output_chars)])


def _argv(
    base: Path, argv: Sequence[str] | str, settings: CommandSettings
) -> tuple[list[str], list[str]]:
    """The words to execute, and a note for the model when its ``argv`` was read."""
    words = [argv] if isinstance(argv, str) else [str(word) for word in argv]
    if not words or not words[0].strip():
        msg = 'argv is empty; send the program and its arguments, e.g. ["pytest", "-q"]'
        raise ToolException(msg)
    if settings.via_shell:
        return ["/bin/sh", "-c", " ".join(words)], []
    notes: list[str] = []
    if len(words) == 1 and any(c.isspace() for c in words[0]) and not (base / words[0]).exists():
        # "pytest -q" as one item: the program and its arguments, split as a shell would
        # split them (quotes kept together); nothing else a shell does happens.
        try:
            split = shlex.split(words[0])
        except ValueError:
            split = words[0].split()
        notes.append(f"[read argv as {split!r}; no shell ran]")
        words = split
    program = Path(words[0]).name
    if settings.allowed is not None and program not in settings.allowed:
        msg = (
            f"{program!r} is not an allowed program here; allowed: "
            f"{', '.join(settings.allowed) or 'none'}"
        )
        raise ToolException(msg)
    return words, notes


async def _exited(process: asyncio.subprocess.Process, limit: float) -> bool:
    """Wait for the program to end, at most ``limit`` seconds; whether it did.

    Not ``process.wait()``: that also waits for the output pipes to close, which a child
    the program left running keeps open; the exit status comes first.
    """
    clock = asyncio.get_running_loop()
    deadline = clock.time() + limit
    pause = 0.005
    while process.returncode is None:
        left = deadline - clock.time()
        if left <= 0:
            return False
        await asyncio.sleep(min(pause, left))
        pause = min(pause * 2, 0.1)
    return True


def _group_alive(process: asyncio.subprocess.Process) -> bool:
    """Whether anything of the program's process group still runs."""
    killpg = getattr(os, "killpg", None)
    if killpg is None:
        return process.returncode is None
    try:
        killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """Kill the program's process group: it and every child it started."""
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is not None:
            killpg(process.pid, signal.SIGKILL)
        elif process.returncode is None:
            process.kill()
    except (ProcessLookupError, PermissionError):  # the group is gone already
        pass


@dataclass(slots=True)
class _Stream:
    """One output stream: its start and its end kept, the middle counted."""

    cap: int
    head: list[str] = field(default_factory=list)
    head_chars: int = 0
    tail: deque[str] = field(default_factory=deque)
    tail_chars: int = 0
    total: int = 0

    async def read(self, stream: asyncio.StreamReader) -> None:
        """Read ``stream`` to its end, keeping what the cap allows."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await stream.read(_CHUNK):
            self.add(decoder.decode(chunk))
        self.add(decoder.decode(b"", final=True))

    def add(self, text: str) -> None:
        """Keep ``text``: in the head while there is room, then in the tail."""
        self.total += len(text)
        room = self.cap // 3 - self.head_chars  # a third for the start, the rest the end
        if room > 0:
            self.head.append(text[:room])
            self.head_chars += len(text[:room])
            text = text[room:]
        if not text:
            return
        self.tail.append(text)
        self.tail_chars += len(text)
        limit = self.cap - self.cap // 3
        while self.tail_chars - len(self.tail[0]) >= limit:
            self.tail_chars -= len(self.tail.popleft())

    def text(self, cap: int | None = None) -> str:
        """The stream, cut to ``cap`` (default: its own cap) with a marker in the middle."""
        cap = self.cap if cap is None else min(cap, self.cap)
        head, tail = "".join(self.head), "".join(self.tail)
        if self.total <= cap:  # then nothing was dropped
            return head + tail
        start = head[: cap // 3]
        whole = len(head) + len(tail) == self.total
        rest = (head + tail)[len(start) :] if whole else tail
        end = rest[-(cap - len(start)) :]
        cut = self.total - len(start) - len(end)
        return f"{start}\n[… {cut:,} characters cut …]\n{end}"


def _headline(code: int | None, seconds: float, *, limit: float, timed_out: bool) -> str:
    took = f"{seconds:.1f} s"
    if timed_out:
        return (
            f"timed out after {limit:g} s: the command and the processes it started were "
            "killed; run a quicker command, or pass a larger timeout_s"
        )
    if code is not None and code < 0:
        return f"killed by signal {-code} after {took}"
    return f"exit code {code} ({took})"


def _output(out: _Stream, err: _Stream, total_cap: int) -> list[str]:
    both = out.total + err.total
    if not both:
        return ["(no output)"]
    caps: dict[str, int | None] = {"out": None, "err": None}
    kept = min(out.total, out.cap) + min(err.total, err.cap)
    if kept > total_cap:  # share the total in proportion to what each stream kept
        share = total_cap * min(out.total, out.cap) // kept
        caps["out"], caps["err"] = share, total_cap - share
    lines: list[str] = []
    for name, stream, key in (("stdout", out, "out"), ("stderr", err, "err")):
        if stream.total:
            lines += [f"--- {name} ---", stream.text(caps[key]).rstrip("\n")]
    return lines
