"""The ``leanloop`` command: validate, run, chat, window, report, schema, local, demo.

Exit codes (``leanloop --help`` lists them too):

- 0: the run ended with the model's answer (or the command did what it was asked);
- 1: the run failed (the model's server did not answer, a request was refused);
- 2: bad input (a configuration or usage mistake), one located line per problem;
- 3: the run ended otherwise (``max_rounds``, ``budget_exhausted``, ``repeated_calls``,
  ``no_answer``): stdout has the model's last reply or the ending's words, and stderr says
  what stopped the run and what the text rests on (:func:`leanloop.endings.describe_ending`);
- 130: interrupted (Ctrl-C); SIGTERM and SIGHUP end a run the same way, with 143 and 129;
- 141: stdout's reader left (``| head``): no traceback, as a command SIGPIPE ends
  (:mod:`leanloop.cli.stdio`); a stdout closed from the start (``>&-``) is exit 1.

Every subcommand is one row of :data:`COMMANDS` (its name, its ``--help`` line, how its
parser is built): the parser :func:`main` reads with is built from that table alone.

LangChain is imported only by the commands that build a model, so ``--help``,
``--version``, ``validate`` (without ``--check-models``), ``report`` and ``schema`` start
fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shlex
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn, cast

from leanloop.cli._runs import (
    EXIT_BAD_INPUT,
    EXIT_ENDED_OTHERWISE,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PAUSED,
    PARTIAL_MARK,
    add_approval_arguments,
    interrupt_json,
    interrupt_said,
    json_error_text,
    run_interruptible,
    session_id,
    signalled_exit,
    stream_answer,
)
from leanloop.exceptions import (
    LeanloopError,
    RunFailed,
    SessionError,
    SpecError,
    SpecIssue,
    StructuredOutputError,
    UnfinishedTurn,
)
from leanloop.redact import redact_logs, redact_report, redact_text
from leanloop.report import ENDED_OTHERWISE, summary_line

if TYPE_CHECKING:
    from leanloop.agent import LLMAgent
    from leanloop.spec.types import AgentSpec

__all__ = [
    "COMMANDS",
    "EXIT_BAD_INPUT",
    "EXIT_ENDED_OTHERWISE",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_PAUSED",
    "PARTIAL_MARK",
    "Command",
    "main",
]

_EPILOG = """exit codes: 0 answered · 1 failed · 2 bad input (or a session that cannot take
the turn: busy, or an unfinished turn to --resume) · 3 ended otherwise (max_rounds,
budget_exhausted, repeated_calls, no_answer: stderr says what stopped it) · 4 paused: tool
calls wait for a person's approval (stderr lists them; --session ID --resume with --approve
goes on) · 130 interrupted (143 SIGTERM, 129 SIGHUP)"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the real command line (callers in Python never go to a runner)
        from leanloop.cli.warm import run_warm  # noqa: PLC0415

        warm = run_warm(words)
        if warm is not None:
            return warm
        # Again with the words given: the same path, its stdout's failures made a status.
        from leanloop.cli.stdio import run_as_command  # noqa: PLC0415

        return run_as_command(main, words)
    own_parser = _OWN_PARSERS.get(words[0]) if words else None
    if own_parser is not None:  # `serve`: its words are its own parser's to read
        return own_parser(words[1:])
    parser = _parser()
    try:
        args, extra = parser.parse_known_args(words)
        # argparse gives an optional positional its (empty) value at the first option that
        # follows the file (`run FILE --json QUESTION`): the question then comes back here.
        if extra and getattr(args, "question", None) == "" and len(extra) == 1:
            args.question = extra.pop()
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except _UsageError as exc:  # argparse's own lines, and with --json a JSON object too
        exc.parser.print_usage(sys.stderr)
        print(f"{exc.parser.prog}: error: {exc}", file=sys.stderr)
        if "--json" in (words[: words.index("--")] if "--" in words else words):
            _print_json_error(str(exc))
        return EXIT_BAD_INPUT
    interrupt_said.clear()
    interrupt_json.clear()
    if getattr(args, "json", False):
        interrupt_json.set()
    try:
        with _noise(args):
            code: int = args.handler(args)
    except SpecError as exc:
        _json_error(args, str(exc))
        for issue in exc.issues:
            print(f"error: {redact_text(str(issue))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SessionError as exc:  # a session that cannot take this turn: say how to go on
        _json_error(args, str(exc))
        hint = ""
        if isinstance(exc, UnfinishedTurn):
            hint = f"; finish it with: {_resume_command(args)}"
        print(f"error: {redact_text(str(exc))}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except LeanloopError as exc:
        _json_error(args, str(exc))
        print(f"error: {redact_text(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:  # Ctrl-C; SIGTERM or SIGHUP during a run
        return signalled_exit(exc)
    except UnicodeEncodeError as exc:
        if "surrogates" not in exc.reason:
            raise
        # Text that is not UTF-8 that no check above caught: still one line, never a trace.
        bad = exc.object[exc.start : exc.end]
        message = f"some text given is not UTF-8 ({bad!r} cannot be written as UTF-8)"
        _json_error(args, message)
        print(f"error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return code


@contextlib.contextmanager
def _noise(args: argparse.Namespace) -> Iterator[None]:
    """Log and warn on stderr as ``-v``/``-q`` ask while a command runs.

    ``-v`` shows leanloop's debug lines and httpx's line per request to the model server.

    ``-q`` leaves only errors: no leanloop warnings, no logged library warnings, and no
    Python warnings (pydantic's, LangChain's deprecations). The warning filters are
    restored afterwards, since main() also runs inside other programs (tests, notebooks).
    """
    verbose = getattr(args, "verbose", False)
    quiet = bool(getattr(args, "quiet", False))
    logging.basicConfig(
        level=logging.WARNING, format="leanloop: %(levelname)s: %(message)s", force=True
    )
    # A model's base_url may carry a password or a key: no log line shows them.
    redact_logs(*logging.getLogger().handlers)
    if quiet:
        # On the handler, not just the root logger: a library logger with a level of its
        # own (LangChain's, httpx's) would otherwise still reach stderr.
        for handler in logging.getLogger().handlers:
            handler.setLevel(logging.ERROR)
    level = logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING
    logging.getLogger("leanloop").setLevel(level)
    # httpx's line per request to the model server (INFO, redacted) is debugging detail:
    # shown with -v only (the root's WARNING hides it otherwise); its level is restored.
    http = logging.getLogger("httpx")
    http_level = http.level
    if verbose:
        http.setLevel(logging.INFO)
    try:
        with warnings.catch_warnings():
            if quiet:
                warnings.simplefilter("ignore")
            yield
    finally:
        http.setLevel(http_level)


class _UsageError(Exception):
    """A usage mistake argparse found, raised instead of its ``SystemExit(2)``."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors reach :func:`main` (for ``--json``)."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(self, message)


def _bad_input(args: argparse.Namespace, message: str) -> int:
    """One ``error:`` line on stderr (and the JSON object with ``--json``): exit 2."""
    _json_error(args, message)
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _resume_command(args: argparse.Namespace) -> str:
    """The command that resumes the session's unfinished turn, ready to paste.

    It names the agent whenever the run did (a file with several agents needs it), and
    quotes what the shell would split.
    """
    words = ["leanloop", "run", str(args.file)]
    if getattr(args, "agent", None):
        words += ["--agent", args.agent]
    words += ["--session", str(args.session), "--resume"]
    return shlex.join(words)


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked (reading package metadata costs ~0.1 s)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        import leanloop  # noqa: PLC0415

        print(f"leanloop {leanloop.__version__}")  # on stdout, as argparse's own version action
        parser.exit()


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand of ``leanloop``: a row of :data:`COMMANDS`.

    A row is split by cost. What every command line pays for is cheap: the name and the
    line ``leanloop --help`` lists, and ``arguments``, which runs for any command line
    (argparse reads one with the whole parser), so it imports argparse and cheap modules
    only: the cheap-path contract in ``pyproject.toml`` and ``tests/cli/test_public_api.py``
    hold it to that. What only this command pays for is heavy: the handler that
    ``arguments`` sets, and ``own_parser``, import LangChain, a model, FastAPI inside
    themselves, when the command runs.

    Attributes:
        name: The word after ``leanloop``.
        help: Its line in ``leanloop --help``.
        arguments: Builds its parser: its arguments, its description, its own subcommands,
            and the handler of each (``args -> exit code``, set with
            ``set_defaults(handler=...)``).
        own_parser: Instead of ``arguments``, for a command with a parser of its own
            (``serve``): it is given the words after its name before the main parser reads
            them, and returns the exit code; the main parser only lists the command.
    """

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    own_parser: Callable[[Sequence[str]], int] | None = None

    def __post_init__(self) -> None:
        if (self.arguments is None) == (self.own_parser is None):
            msg = f"command {self.name!r}: give it either arguments or own_parser"
            raise ValueError(msg)


# --- how each command's parser is built: the builders run for every command line ------


def _serve(words: Sequence[str]) -> int:
    # Not a builder: `serve` has its own parser, and FastAPI is imported only for it.
    from leanloop.serve import serve_main  # noqa: PLC0415

    return serve_main(words)


def _validate_arguments(validate: argparse.ArgumentParser) -> None:
    validate.add_argument("file", help="the agents YAML file")
    validate.add_argument(
        "--check-models",
        action="store_true",
        help="also build every agent's chat models (no request is sent) and start each MCP "
        "server the agents use, listing its tools: reports a missing provider package, "
        "missing credentials, an option the model refuses, or a server that does not start",
    )
    validate.add_argument(
        "--agent",
        help="check only this agent and what it uses (the models, servers and agents it "
        "names); the problems of the others are not reported",
    )
    validate.set_defaults(handler=_validate)


def _run_arguments(run: argparse.ArgumentParser) -> None:
    run.epilog = _EPILOG
    run.add_argument("file", help="the agents YAML file")
    run.add_argument(
        "question", nargs="?", default="", help="what to ask the agent (not with --resume)"
    )
    run.add_argument("--agent", help="the agent's name (optional when the file has one)")
    run.add_argument(
        "--session",
        metavar="ID",
        help="continue the conversation stored under ID (created on first use)",
    )
    run.add_argument(
        "--resume",
        action="store_true",
        help="with --session: finish the session's unfinished turn from its last stored step",
    )
    run.add_argument("--json", action="store_true", help="print the run report as JSON")
    run.add_argument("--html", type=Path, metavar="PATH", help="write a page of the run")
    add_approval_arguments(run)
    noise = run.add_mutually_exclusive_group()
    noise.add_argument("--quiet", "-q", action="store_true", help="print the answer only")
    noise.add_argument("--verbose", "-v", action="store_true", help="debug logs on stderr")
    run.set_defaults(handler=_run)


def _batch_arguments(batch: argparse.ArgumentParser) -> None:
    from leanloop.batch.command import add_arguments  # noqa: PLC0415 - no LangChain, no Ray

    add_arguments(batch)
    batch.set_defaults(handler=_batch)


def _window_arguments(window: argparse.ArgumentParser) -> None:
    window.add_argument("file", help="the agents YAML file")
    window.add_argument("--agent", help="only this agent")
    window.set_defaults(handler=_window)


def _report_arguments(report: argparse.ArgumentParser) -> None:
    report.add_argument("file", type=Path, help="the JSON report")
    report.add_argument("--html", type=Path, metavar="PATH", help="write a page of the run")
    report.set_defaults(handler=_report)


def _schema_arguments(schema: argparse.ArgumentParser) -> None:
    schema.description = (
        "Print the JSON Schema of agents files, for editors and other tools; "
        "an agents file may name it with '# yaml-language-server: $schema=PATH'."
    )
    schema.add_argument("--path", action="store_true", help="print the installed file's path")
    schema.set_defaults(handler=_schema)


# The modules of `chat`, `local`, `demo` and `warm` are cheap too, but imported here only
# when a parser is built: `leanloop run` handed to the warm runner never builds one.


def _chat_arguments(chat: argparse.ArgumentParser) -> None:
    from leanloop.cli.chat import add_arguments  # noqa: PLC0415

    add_arguments(chat)


def _local_arguments(local: argparse.ArgumentParser) -> None:
    from leanloop.cli.local import add_local_arguments  # noqa: PLC0415

    add_local_arguments(local)


def _demo_arguments(demo: argparse.ArgumentParser) -> None:
    from leanloop.cli.local import add_demo_arguments  # noqa: PLC0415

    add_demo_arguments(demo)


def _warm_arguments(warm: argparse.ArgumentParser) -> None:
    from leanloop.cli.warm import add_arguments  # noqa: PLC0415

    add_arguments(warm)


COMMANDS: Final[tuple[Command, ...]] = (
    Command(
        "serve",
        "serve the agents over the OpenAI chat API (leanloop[serve]; serve --help)",
        own_parser=_serve,
    ),
    Command("validate", "check an agents file and report every problem", _validate_arguments),
    Command("run", "run an agent on a question", _run_arguments),
    Command("batch", "run agents on every task of a JSONL file (resumable)", _batch_arguments),
    Command("window", "show each agent's context window and its source", _window_arguments),
    Command("report", "show a saved run report (from run --json)", _report_arguments),
    Command("schema", "print the JSON Schema of agents files", _schema_arguments),
    Command("chat", "talk with an agent, turn after turn (a session)", _chat_arguments),
    Command("local", "set up and run the embedded llama.cpp server", _local_arguments),
    Command("demo", "ask the example agent a question, locally", _demo_arguments),
    Command(
        "warm",
        "keep a process with LangChain imported, so `run` starts in a fraction of the time",
        _warm_arguments,
    ),
)
"""Every ``leanloop`` command, in the order ``leanloop --help`` lists them: the one place
a command is added (its module holds the arguments' builder and the handler)."""

_OWN_PARSERS: Final[dict[str, Callable[[Sequence[str]], int]]] = {
    command.name: command.own_parser for command in COMMANDS if command.own_parser is not None
}


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="leanloop",
        description="Config-driven LangChain agents that stay inside their context window.",
        epilog=_EPILOG,
    )
    parser.add_argument("--version", action=_VersionAction)
    # Every subparser is a `_Parser` too (argparse makes them of the parent's class).
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    for command in COMMANDS:
        if command.arguments is None:  # listed for --help only: main() hands it over
            sub.add_parser(command.name, help=command.help, add_help=False)
        else:
            command.arguments(sub.add_parser(command.name, help=command.help))
    return parser


def _validate(args: argparse.Namespace) -> int:
    from leanloop.spec import load_specs  # noqa: PLC0415 - keep `leanloop --help` fast

    if args.check_models:
        if args.agent is not None:
            return _bad_input(args, "--agent is not taken with --check-models (it checks each)")
        from leanloop.cli.checkmodels import check_models  # noqa: PLC0415 - imports LangChain

        return check_models(args.file)
    specs = load_specs(args.file, only=args.agent)
    noun = "agent" if len(specs) == 1 else "agents"
    print(f"ok: {len(specs)} {noun} ({', '.join(specs)})")
    unchecked = _unchecked_tool_modules(specs.values())
    if unchecked:
        print(_unchecked_line(unchecked, args.file))
    return EXIT_OK


def _unchecked_tool_modules(specs: Iterable[AgentSpec]) -> list[str]:
    """The modules of the import-path tools of ``specs`` and their sub-agents, in file order.

    Plain ``validate`` found each of them and read its source (``leanloop.spec.refs``), but
    imported none: importing runs a module's code (a missing dependency, a failing line),
    and reading an agents file runs nothing. Nothing is looked up here either: every
    module listed was already found by that reading, or ``validate`` failed. (No
    ``importlib.util.find_spec`` on a dotted name: it imports the parent packages.)
    """
    from leanloop._imports import is_import_path  # noqa: PLC0415 - keep `--help` fast
    from leanloop.spec.toolrefs import parse_mcp_ref  # noqa: PLC0415
    from leanloop.spec.types import AGENT_PREFIX  # noqa: PLC0415

    modules: dict[str, None] = {}  # an ordered set
    seen: set[str] = set()
    pending = list(specs)
    while pending:
        spec = pending.pop(0)
        if spec.name in seen:
            continue
        seen.add(spec.name)
        for tool in spec.tools:
            if tool.startswith(AGENT_PREFIX) or parse_mcp_ref(tool) is not None:
                continue
            if is_import_path(tool):
                modules[tool.partition(":")[0]] = None
        pending.extend(spec.sub_agents.values())
    return list(modules)


def _unchecked_line(modules: Sequence[str], file: str) -> str:
    """The line after ``ok:`` that names the tool modules plain ``validate`` did not import."""
    one = len(modules) == 1
    what = f"tool module{'' if one else 's'} {', '.join(modules)}"
    verb, its, them = ("was", "its", "it") if one else ("were", "their", "them")
    check = f"leanloop validate --check-models {shlex.quote(file)}"
    return (
        f"not checked: {what} {verb} read, not imported (importing runs {its} code); "
        f"`{check}` imports {them}"
    )


def _schema(args: argparse.Namespace) -> int:
    """``leanloop schema``: the installed ``agent.schema.json``, or its path with ``--path``."""
    from importlib import resources  # noqa: PLC0415

    schema = resources.files("leanloop").joinpath("spec/agent.schema.json")
    if args.path:
        if not isinstance(schema, Path):  # an import from a zip: there is no file to name
            print(f"error: the schema is not a file on disk ({schema})", file=sys.stderr)
            return EXIT_FAILED
        print(schema)
        return EXIT_OK
    text = schema.read_text(encoding="utf-8")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


def _batch(args: argparse.Namespace) -> int:
    from leanloop.batch.command import batch_command  # noqa: PLC0415

    return batch_command(args, run_interruptible)


def _run(args: argparse.Namespace) -> int:
    from leanloop.agent import LLMAgent  # noqa: PLC0415
    from leanloop.sessions.configurable import not_utf8  # noqa: PLC0415

    thread = session_id(args)
    if args.resume and thread is None:
        return _bad_input(args, "--resume needs --session ID (the session to resume)")
    if not args.question and not args.resume:
        return _bad_input(args, "the question is missing (only --resume may leave it out)")
    if not args.question.strip() and not args.resume:
        return _bad_input(args, f"the question {args.question!r} is blank")
    problem = not_utf8(args.question)
    if problem is not None:
        return _bad_input(args, f"the question is not UTF-8 text: {problem}; nothing was sent")
    if args.html is not None and (problem := _unwritable(args.html)) is not None:
        return _bad_input(args, f"--html {args.html}: cannot write the page there: {problem}")
    from leanloop.cli.approve import cli_approver  # noqa: PLC0415 - keep `--help` fast

    agent = LLMAgent.from_file(args.file, args.agent)
    # --json keeps stdout for the report: the terminal is not asked then, the flags are.
    terminal = False if args.json else None
    approver = cli_approver(tools=args.approve, approve_all=args.approve_all, terminal=terminal)
    agent = agent.with_approver(approver)
    session = {"thread_id": thread, "resume": args.resume} if thread is not None else None
    try:
        answer, report = run_interruptible(
            _stream(agent, args.question, show=not args.json, quiet=args.quiet, session=session)
        )
    except RunFailed as exc:
        report = exc.report.to_dict()
        _emit_report(args, report, answer=None)
        print(f"error: {redact_text(str(exc))}", file=sys.stderr)
        if not args.quiet:
            print(summary_line(report), file=sys.stderr)
        return EXIT_FAILED
    except StructuredOutputError as exc:
        # The run ended; only its typed answer could not be made: keep what it gave.
        report = {**exc.answer.response_metadata.get("leanloop", {}), "error": str(exc)}
        _emit_report(args, report, answer=exc.answer.text)
        print(f"error: {redact_text(str(exc))}", file=sys.stderr)
        if not args.quiet:
            print(summary_line(report), file=sys.stderr)
        return EXIT_FAILED
    written = _emit_report(args, report, answer=answer)
    reason = str(report.get("stop_reason"))
    if not args.quiet:
        print(summary_line(report), file=sys.stderr)
    if reason == "paused":
        return _paused(report, thread)
    if reason in ENDED_OTHERWISE:
        from leanloop.endings import describe_ending  # noqa: PLC0415 - keep `--help` fast

        print(f"leanloop: the run ended by {reason}: {describe_ending(report)}", file=sys.stderr)
        return EXIT_ENDED_OTHERWISE
    # The page was asked for and is missing: the command did not do all it was asked.
    return EXIT_OK if written else EXIT_FAILED


def _paused(report: Mapping[str, Any], thread: str | None) -> int:
    """Say which calls wait for a decision, and how to go on; the paused exit code."""
    from leanloop.cli.approve import pending_lines  # noqa: PLC0415 - keep `--help` fast

    calls = report.get("pending_calls") or []
    print(f"leanloop: the run paused: {len(calls)} tool calls wait for approval:", file=sys.stderr)
    for line in pending_lines(report):
        print(line, file=sys.stderr)
    if thread is not None:
        how = f"--session {thread} --resume with --approve TOOL or --approve-all, or on a terminal"
    else:
        how = "run with --session ID to resume it later, or approve with --approve/--approve-all"
    print(f"leanloop: to go on: {how}", file=sys.stderr)
    return EXIT_PAUSED


async def _stream(
    agent: LLMAgent,
    question: str,
    *,
    show: bool,
    quiet: bool,
    session: Mapping[str, Any] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Run ``agent``, writing answer text to stdout as it arrives when ``show``.

    The run itself is :func:`~leanloop.cli._runs.stream_answer`, which ``chat`` shares;
    here the progress printer and the session go into its config.
    """
    from langchain_core.runnables import RunnableConfig  # noqa: PLC0415

    from leanloop.cli.progress import ProgressPrinter  # noqa: PLC0415

    config: RunnableConfig = {"callbacks": [] if quiet else [ProgressPrinter(sys.stderr)]}
    if session is not None:
        config["configurable"] = dict(session)
    return await stream_answer(agent, question, config, show=show)


def _emit_report(
    args: argparse.Namespace, report: Mapping[str, Any], *, answer: str | None
) -> bool:
    """Print the JSON report (``--json``) and write the page (``--html``) when asked.

    Returns:
        ``False`` when the page was asked for and could not be written (stderr says why).
    """
    report = redact_report(report)  # its error and notes may name the model's URL
    if args.json:
        interrupt_json.clear()  # stdout holds this object: an interrupt adds no second one
        print(json.dumps({"answer": answer, **report}, indent=2, default=str))
    if getattr(args, "html", None) is not None:
        return _write_html(args.html, {"answer": answer, **report})
    return True


def _unwritable(path: Path) -> str | None:
    """Why the page cannot be written at ``path`` (checked before a run), or ``None``.

    Missing folders are created when the page is written; the first folder that exists
    on the way up must be a writable folder.
    """
    if path.is_dir():
        return "it is a folder"
    for folder in path.parents:
        if folder.exists():
            if not folder.is_dir():
                return f"{folder} is not a folder"
            if not os.access(folder, os.W_OK):
                return f"the folder {folder} is not writable"
            break
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable"
    return None


def _write_html(path: Path, report: Mapping[str, Any]) -> bool:
    from leanloop.cli.htmlreport import write_html  # noqa: PLC0415

    try:
        write_html(report, path)
    except OSError as exc:
        print(f"error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return False
    print(f"leanloop: wrote {path}", file=sys.stderr)
    return True


def _json_error(args: argparse.Namespace, message: str) -> None:
    """With ``--json``, a failure before the run still prints a JSON object with ``error``."""
    if getattr(args, "json", False):
        _print_json_error(redact_text(message))


def _print_json_error(message: str) -> None:
    print(json_error_text(message))


def _report(args: argparse.Namespace) -> int:
    from leanloop.report import format_report  # noqa: PLC0415

    try:
        report = json.loads(args.file.read_text(encoding="utf-8"))
    except OSError as exc:
        print(f"error: {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:
        print(f"error: {args.file}: not a JSON report ({exc})", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not isinstance(report, dict):
        print(f"error: {args.file}: not a JSON report (expected an object)", file=sys.stderr)
        return EXIT_BAD_INPUT
    report = redact_report(report)  # one saved by an older leanloop may name a password
    if args.html is not None:
        problem = _unwritable(args.html)
        if problem is not None:
            print(
                f"error: --html {args.html}: cannot write the page there: {problem}",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        return EXIT_OK if _write_html(args.html, report) else EXIT_FAILED
    else:
        print(format_report(report))
        print(summary_line(report))
    return EXIT_OK


def _window(args: argparse.Namespace) -> int:
    import asyncio  # noqa: PLC0415

    from langchain_core.language_models import BaseChatModel  # noqa: PLC0415

    from leanloop.budget import ContextPlan  # noqa: PLC0415
    from leanloop.budget.run import resolve_window  # noqa: PLC0415
    from leanloop.models import build_chat_model  # noqa: PLC0415
    from leanloop.spec import load_specs  # noqa: PLC0415

    # Only the models are built (a `class:` model's module is imported to ask it): an
    # agent's tools and output_schema are never imported to learn its window (ADR 0023).
    agents: dict[str, tuple[AgentSpec, BaseChatModel]] = {}
    problems: list[SpecIssue] = []
    only = {"only": args.agent} if args.agent is not None else {}
    for name, spec in load_specs(args.file, **only).items():
        try:  # an agent whose model cannot be built does not hide the others
            agents[name] = (spec, build_chat_model(spec.model))
        except SpecError as exc:
            problems.extend(exc.issues)

    async def resolve_all() -> list[str]:
        lines = []
        for name, (spec, model) in agents.items():
            window = await resolve_window(spec.model, model)
            plan = ContextPlan.for_window(
                window.tokens,
                budget_percent=spec.token_budget_percent,
                max_tokens=spec.model.max_tokens,
            )
            note = f" — {window.note}" if window.note else ""
            lines.append(
                f"{name}: window {window.tokens:,} tokens (source: {window.source}{note}); "
                f"request ceiling {plan.ceiling:,}, reply reserve {plan.reply_reserve:,}"
            )
        return lines

    for issue in problems:
        print(f"error: {redact_text(str(issue))}", file=sys.stderr)
    for line in asyncio.run(resolve_all()):
        print(line)
    return EXIT_BAD_INPUT if problems else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
