"""``leanloop chat``: talk with an agent, turn after turn, in one session.

Each line read is a turn of the session (``--session ID`` continues one); its answer is
streamed to stdout, and everything else (the banner, the line that sums up a turn,
progress, what a slash command says) goes to stderr, so stdout holds the answers alone.

On a terminal the chat is made for a person:

- the banner (agent, model, window when the file gives it, session, how to leave) is
  printed as soon as the file is read, before LangChain is imported and the agent built;
- lines are edited with :mod:`readline`, and Up and Down walk a history kept across
  chats (:mod:`leanloop.cli.chat_input`: a paste is one question, a line ending with
  ``\\`` goes on on the next one);
- a spinner turns while the agent works, naming what it does (a step, a tool call);
- the progress lines are folded into the one summary line after each answer
  (``--progress`` prints them as they come, as ``--verbose`` does);
- Ctrl-C during a turn cancels that turn (the run unwinds: its tools are stopped and the
  session's turn is recorded as failed, so ``--resume`` could take it up), prints
  :data:`CANCELLED` and comes back to the prompt, the conversation and session kept;
  Ctrl-C at the prompt drops the line typed, and a second one in a row leaves (130).

When stdin is not a terminal (a script, a pipe) there is no prompt, no history file and
no spinner, and the progress lines are printed as they come whenever stderr is not a
terminal, as ``leanloop run`` prints them; Ctrl-C (SIGINT) ends the chat with 130, and
SIGTERM or SIGHUP always do.

Lines that start with ``/`` and a word are commands, answered here and never sent to
the model (:data:`SLASH_COMMANDS`; ``//`` sends a line that starts with ``/``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shutil
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TextIO

from leanloop.cli._runs import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    add_approval_arguments,
    run_interruptible,
    session_id,
    stream_answer,
)
from leanloop.cli.chat_input import ChatLines, history_path
from leanloop.exceptions import RunFailed, StructuredOutputError
from leanloop.redact import redact_text, redact_url
from leanloop.report import format_report, summary_line

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from leanloop.agent import LLMAgent
    from leanloop.events import EventRecorder
    from leanloop.spec.types import AgentSpec

__all__ = [
    "CANCELLED",
    "LEAVE_HINT",
    "SLASH_COMMANDS",
    "ChatState",
    "SlashCommand",
    "Spinner",
    "add_arguments",
    "answer_slash",
    "banner_lines",
    "history_path",
    "parse_slash",
    "run_chat",
]

SLASH_COMMANDS: Final[Mapping[str, str]] = {
    "/help": "list these commands",
    "/reset": "start a new conversation (a new session)",
    "/report": "show the report of the last turn",
    "/html [PATH]": "write the page of the last turn's report and print its path",
    "/exit": "leave the chat (also /quit, Ctrl-D, or Ctrl-C twice at the prompt)",
}
"""The commands a chat answers itself, with what each does (``/help`` prints them)."""

CANCELLED: Final = "[cancelled]"
"""The line on stderr after Ctrl-C cancelled a turn (the chat goes on)."""
LEAVE_HINT: Final = "(Ctrl-C again, Ctrl-D or /exit leaves)"
"""The line after a first Ctrl-C at an empty prompt."""

_COMMAND = re.compile(r"^/([A-Za-z][A-Za-z0-9_-]*)(?:\s+(.*))?$", re.DOTALL)
_DIM, _RESET = "\033[2m", "\033[0m"


def add_arguments(chat: argparse.ArgumentParser) -> None:
    """Build the parser of ``chat`` (its row is in :data:`leanloop.cli.command.COMMANDS`).

    Args:
        chat: The subparser the main parser made for ``chat``; its handler is set to
            :func:`run_chat`.
    """
    chat.description = (
        "Read questions from stdin, one per line (a line ending with \\ goes "
        "on on the next; a paste is one question), and stream each answer; the "
        "conversation is a session (--session ID continues one). Lines starting with / "
        "are commands (/help lists them). Ctrl-C cancels a turn; Ctrl-D or /exit ends it."
    )
    chat.add_argument("file", help="the agents YAML file")
    chat.add_argument("--agent", help="the agent's name (optional when the file has one)")
    chat.add_argument("--session", metavar="ID", help="the session (default: a new one)")
    chat.add_argument(
        "--progress",
        action="store_true",
        help="print the progress lines as they come (on a terminal they are folded into "
        "one line after each answer)",
    )
    add_approval_arguments(chat)
    noise = chat.add_mutually_exclusive_group()
    noise.add_argument("--quiet", "-q", action="store_true", help="print answers only")
    noise.add_argument(
        "--verbose", "-v", action="store_true", help="debug logs and progress lines on stderr"
    )
    chat.set_defaults(handler=run_chat)


# --- slash commands -------------------------------------------------------------------


class SlashCommand(NamedTuple):
    """A line that is a command: its name (``/help``) and the text after it."""

    name: str
    argument: str


def parse_slash(line: str) -> SlashCommand | str:
    """What a line typed in the chat is: a :class:`SlashCommand`, or a question.

    A command is ``/`` and a word at the start of the line (``/html page.html``); a line
    that only starts with a slash (``/etc/hosts: what is it?``) is a question, and ``//``
    sends the rest of the line with one slash. A command is one line: text of several
    lines (a paste) is a question.

    Returns:
        The command (its name lower-cased), or the question's text, stripped.
    """
    text = line.strip()
    if text.startswith("//"):
        return text[1:]
    match = None if "\n" in text else _COMMAND.match(text)
    if match is None:
        return text
    return SlashCommand("/" + match[1].lower(), (match[2] or "").strip())


def new_thread_id() -> str:
    """A fresh session ID for a chat: ``chat-`` and 12 hex digits."""
    return f"chat-{uuid.uuid4().hex[:12]}"


@dataclass
class ChatState:
    """What the slash commands read and change: the session, and the last turn's report."""

    agent: str
    """The agent's name."""
    thread: str
    """The session the next turn goes to."""
    report: dict[str, Any] | None = None
    """The last turn's report (with its ``answer``); ``None`` before the first turn."""
    turns: int = 0
    """Turns this chat ran (over every session it used)."""
    folder: Path = field(default_factory=Path.cwd)
    """Where ``/html`` without a path writes its page."""
    new_thread: Callable[[], str] = field(default=new_thread_id)
    """Makes the session ID ``/reset`` moves to."""
    cancelled: bool = False
    """The last turn was cancelled (Ctrl-C): it has no report."""


def answer_slash(command: SlashCommand, state: ChatState, out: TextIO) -> bool:
    """Answer ``command`` here, writing to ``out``; nothing is sent to the model.

    Args:
        command: The command :func:`parse_slash` read.
        state: The chat; ``/reset`` moves it to a new session.
        out: Where the command's lines go (stderr in the CLI).

    Returns:
        ``False`` when the chat should end (``/exit``, ``/quit``), else ``True``.
    """
    name, argument = command
    if name in ("/exit", "/quit"):
        return False
    if name == "/help":
        width = max(len(usage) for usage in SLASH_COMMANDS)
        for usage, what in SLASH_COMMANDS.items():
            print(f"  {usage:<{width}}  {what}", file=out)
        print("  Anything else is sent to the agent (// sends a line starting with /).", file=out)
        print(
            "  End a line with \\ to go on on the next one; a paste is one question.",
            file=out,
        )
        print("  Ctrl-C cancels a turn; at the prompt it drops the line, twice leaves.", file=out)
    elif name == "/reset":
        state.thread = state.new_thread()
        state.report = None
        state.cancelled = False
        print(
            f"new conversation: session {state.thread} (continue it with --session {state.thread})",
            file=out,
        )
    elif name == "/report":
        if state.report is None:
            print(_no_report(state), file=out)
        else:
            print(format_report(state.report), file=out)
            print(summary_line(state.report), file=out)
    elif name == "/html":
        _write_page(argument, state, out)
    else:
        print(f"unknown command {name}: /help lists the commands", file=out)
    return True


def _no_report(state: ChatState) -> str:
    if state.cancelled:
        return "the last turn was cancelled: it has no report"
    return "no turn yet: ask something first"


def _write_page(argument: str, state: ChatState, out: TextIO) -> None:
    """``/html [PATH]``: the last turn's page, at PATH or in :attr:`ChatState.folder`."""
    if state.report is None:
        print(_no_report(state), file=out)
        return
    turn = (state.report.get("session") or {}).get("turn", state.turns)
    path = Path(argument).expanduser() if argument else None
    if path is None:
        path = state.folder / f"leanloop-{state.thread}-turn{turn}.html"
    from leanloop.cli.htmlreport import write_html  # noqa: PLC0415 - only when asked

    try:
        written = write_html(state.report, path)
    except OSError as exc:
        print(f"error: cannot write {path}: {exc.strerror or exc}", file=out)
        return
    print(f"wrote {written.resolve()}", file=out)


# --- the banner -----------------------------------------------------------------------


def banner_lines(spec: AgentSpec, thread: str, *, given: bool) -> list[str]:
    """The lines a chat opens with: agent and model, session, and how to leave.

    Args:
        spec: The agent's configuration (read from the file: nothing is built).
        thread: The session's ID.
        given: Whether the session was named with ``--session`` (else it is new).
    """
    model = spec.model
    what = model.model or model.class_path or model.name or "?"
    if model.provider is not None:
        what = f"{model.provider} {what}"
    if model.base_url:
        what += f" at {redact_url(model.base_url)}"  # its password and query key hidden
    window = (
        f"window {model.context_window:,} tokens"
        if model.context_window
        else "window: found on the first turn"
    )
    session = (
        f"session {thread}"
        if given
        else f"session {thread} (new; continue it later with --session {thread})"
    )
    return [
        f"leanloop chat · agent {spec.name} · model {what} · {window}",
        session,
        "Type a question and press Enter. /help lists the commands; /exit or Ctrl-D leaves.",
    ]


# --- while a turn runs ----------------------------------------------------------------


class Spinner:
    """A line on a terminal that turns while the agent works, and says what it does.

    It runs in a thread of its own, so it keeps turning while a synchronous tool holds
    the event loop; :meth:`stop` clears its line before the answer is written.
    """

    FRAMES: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
    ASCII_FRAMES: Final = "|/-\\"
    INTERVAL_S: Final = 0.1

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.label = "thinking"
        """What the line says after the turning frame (the last thing the agent did)."""
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        self._frames = self.FRAMES if encoding == "utf8" else self.ASCII_FRAMES
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._drawn = False
        self._started = time.monotonic()

    def start(self) -> None:
        """Start turning (once)."""
        if self._thread is None:
            self._started = time.monotonic()
            self._thread = threading.Thread(target=self._turn, name="leanloop-spinner")
            self._thread.daemon = True
            self._thread.start()

    def stop(self) -> None:
        """Stop turning and clear the line; safe to call more than once."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with self._lock:
            self._clear()

    def _turn(self) -> None:
        frame = 0
        while not self._stop.wait(self.INTERVAL_S):
            with self._lock:
                if self._stop.is_set():
                    return
                width = shutil.get_terminal_size().columns
                seconds = time.monotonic() - self._started
                text = f"{self._frames[frame % len(self._frames)]} {self.label} · {seconds:.0f}s"
                # One screen line at most: a wrapped line would not be cleared by \r.
                text = text[: max(width - 1, 1)]
                self.stream.write(f"\r\033[K{_DIM}{text}{_RESET}")
                self.stream.flush()
                self._drawn = True
            frame += 1

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False


def _folded_progress(spinner: Spinner | None) -> EventRecorder:
    """A recorder that prints nothing: its lines become the spinner's label.

    The events are kept, so a turn's progress stays in its report, and the summary line
    after the answer says what the lines would have said in all.
    """
    from leanloop.cli.progress import ProgressPrinter  # noqa: PLC0415 - imports LangChain

    class Folded(ProgressPrinter):
        def _print(self, line: str, tone: str) -> None:
            if spinner is not None:
                spinner.label = line.strip()

    return Folded(io.StringIO(), colour=False)


# --- the chat -------------------------------------------------------------------------


def run_chat(args: argparse.Namespace) -> int:
    """``leanloop chat``: one turn per question, each answer streamed, in one session.

    Returns:
        0 when every turn answered or was cancelled; 1 when one failed; 2 when a line was
        refused (not UTF-8). The chat goes on after a failed or cancelled turn and a
        refused line.

    Raises:
        KeyboardInterrupt: Ctrl-C twice at the prompt, or Ctrl-C when stdin is not a
            terminal; SIGTERM or SIGHUP during a turn (the command exits ``128 + signum``).
    """
    from leanloop.spec import load_specs  # noqa: PLC0415 - no LangChain yet

    given = session_id(args)
    thread = given if given is not None else new_thread_id()
    args.session = thread  # what a resume hint names
    specs = load_specs(args.file, only=args.agent)
    spec = specs.get(args.agent) if args.agent else next(iter(specs.values()), None)
    if args.agent is None and len(specs) != 1:
        spec = None  # several agents and none named: building it says so, as `run` does
    interactive = sys.stdin.isatty()
    if args.quiet:
        if given is None:
            print(
                f"leanloop: session {thread} (continue it with --session {thread})", file=sys.stderr
            )
    elif spec is not None:
        for line in banner_lines(spec, thread, given=given is not None):
            print(line, file=sys.stderr, flush=True)
    # The banner is out: now the slow part (LangChain, the model, the tools).
    from leanloop.agent import LLMAgent  # noqa: PLC0415
    from leanloop.cli.approve import cli_approver  # noqa: PLC0415

    agent = LLMAgent.from_spec(spec) if spec is not None else LLMAgent.from_file(args.file)
    approver = cli_approver(tools=args.approve, approve_all=args.approve_all, terminal=interactive)
    agent = agent.with_approver(approver)
    if spec is None and not args.quiet:
        for line in banner_lines(agent.spec, thread, given=given is not None):
            print(line, file=sys.stderr, flush=True)
    if isinstance(sys.stdin, io.TextIOWrapper):  # bytes that are not UTF-8: refused below
        sys.stdin.reconfigure(errors="surrogateescape")
    state = ChatState(agent=agent.spec.name, thread=thread)
    commands = {usage.split()[0] for usage in SLASH_COMMANDS} | {"/quit"}
    lines = ChatLines(sys.stdin, interactive=interactive, commands=sorted(commands))
    try:
        return _loop(args, agent, state, lines)
    finally:
        lines.close()


def _loop(args: argparse.Namespace, agent: LLMAgent, state: ChatState, lines: ChatLines) -> int:
    from leanloop.sessions.configurable import not_utf8  # noqa: PLC0415

    code = EXIT_OK
    armed = False  # a Ctrl-C at an empty prompt came last: another one leaves
    while True:
        try:
            line = lines.read()
        except KeyboardInterrupt:
            if not lines.interactive or (armed and not lines.dropped):
                raise  # a script's Ctrl-C, or a second one at the prompt: exit 130
            # Ctrl-C at the prompt drops the line, as a shell does; at an empty prompt it
            # says how to leave, and one more leaves.
            armed = not lines.dropped
            print(file=sys.stderr)
            if armed:
                print(LEAVE_HINT, file=sys.stderr)
            continue
        armed = False
        if line is None:
            return code
        parsed = parse_slash(line)
        if isinstance(parsed, SlashCommand):
            if not answer_slash(parsed, state, sys.stderr):
                return code
            continue
        if not parsed:
            continue
        problem = not_utf8(line)
        if problem is not None:  # the session goes on: the line can be typed again
            print(
                f"error: line {lines.number} is not UTF-8 text: {problem}; it was not sent",
                file=sys.stderr,
            )
            code = EXIT_BAD_INPUT if code == EXIT_OK else code
            continue
        if not _turn(args, agent, state, parsed, cancellable=lines.interactive):
            code = EXIT_FAILED


def _turn(
    args: argparse.Namespace,
    agent: LLMAgent,
    state: ChatState,
    question: str,
    *,
    cancellable: bool,
) -> bool:
    """Ask ``question`` in the chat's session; ``False`` when the turn failed.

    With ``cancellable`` (stdin is a terminal), Ctrl-C cancels the turn: the run unwinds
    as for ``leanloop run`` (its tools stopped, the session's turn recorded as failed),
    :data:`CANCELLED` is printed and the chat goes on (``True``). SIGTERM and SIGHUP, and
    Ctrl-C otherwise, still end the chat.
    """
    from leanloop.cli.progress import ProgressPrinter, use_colour  # noqa: PLC0415

    live = args.progress or args.verbose or not sys.stderr.isatty()
    spinner = Spinner(sys.stderr) if sys.stderr.isatty() and not args.quiet else None
    callbacks: list[Any] = []
    if not args.quiet:
        callbacks.append(ProgressPrinter(sys.stderr) if live else _folded_progress(spinner))
    config: RunnableConfig = {
        "callbacks": callbacks,
        "configurable": {"thread_id": state.thread, "resume": False},
    }
    state.turns += 1
    state.cancelled = False
    answer: str | None = None
    shown = threading.Event()  # some of the answer is on stdout
    handlers = _signal_handlers()
    try:
        with _spinning(spinner):
            answer, report = run_interruptible(_ask(agent, question, config, spinner, shown))
    except KeyboardInterrupt as exc:
        if not cancellable or getattr(exc, "signum", signal.SIGINT) != signal.SIGINT:
            raise
        # The run has unwound: back to the prompt, with the handlers it had before.
        _restore_signal_handlers(handlers)
        if shown.is_set():
            sys.stdout.write("\n")  # the text cut off is no answer: end its line
            sys.stdout.flush()
        print(CANCELLED, file=sys.stderr, flush=True)
        state.report = None
        state.cancelled = True
        return True
    except RunFailed as exc:
        state.report = {"answer": None, **exc.report.to_dict()}
        print(f"error: {redact_text(str(exc))}", file=sys.stderr)
        return False
    except StructuredOutputError as exc:
        # The run ended; only its typed answer could not be made: keep what it gave.
        meta = exc.answer.response_metadata.get("leanloop", {})
        state.report = {"answer": exc.answer.text, **meta, "error": str(exc)}
        print(f"error: {redact_text(str(exc))}", file=sys.stderr)
        return False
    state.report = {"answer": answer, **report}
    if report.get("stop_reason") == "paused":
        from leanloop.cli.approve import pending_lines  # noqa: PLC0415

        print("leanloop: the turn paused; these calls wait for approval:", file=sys.stderr)
        for line in pending_lines(report):
            print(line, file=sys.stderr)
    if not args.quiet:
        line = summary_line(report)
        if not live and state.turns == 1 and report.get("window"):
            line += f" · window {report['window']:,} ({report.get('window_source') or '?'})"
        if use_colour(sys.stderr):
            line = f"{_DIM}{line}{_RESET}"
        print(line, file=sys.stderr, flush=True)
    return True


@contextlib.contextmanager
def _spinning(spinner: Spinner | None) -> Iterator[None]:
    if spinner is None:
        yield
        return
    spinner.start()
    try:
        yield
    finally:
        spinner.stop()


_SIGNALS: Final = ("SIGINT", "SIGTERM", "SIGHUP")
"""The signals :func:`~leanloop.cli._runs.run_interruptible` handles during a turn."""


def _signal_handlers() -> dict[int, Any]:
    """The handlers of :data:`_SIGNALS` now (those Python set), to put back after a turn."""
    handlers: dict[int, Any] = {}
    for name in _SIGNALS:
        number = getattr(signal, name, None)  # no SIGHUP on Windows
        if number is not None:
            handler = signal.getsignal(number)
            if handler is not None:
                handlers[number] = handler
    return handlers


def _restore_signal_handlers(handlers: Mapping[int, Any]) -> None:
    """Put the handlers back: after a signal, ``run_interruptible`` leaves its own set."""
    for number, handler in handlers.items():
        signal.signal(number, handler)


async def _ask(
    agent: LLMAgent,
    question: str,
    config: RunnableConfig,
    spinner: Spinner | None,
    shown: threading.Event,
) -> tuple[str, dict[str, Any]]:
    """One turn: the answer streamed to stdout (the spinner stops at its first text)."""

    def before_text() -> None:
        shown.set()
        if spinner is not None:
            spinner.stop()

    return await stream_answer(agent, question, config, before_text=before_text)
