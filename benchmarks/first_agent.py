"""The first agent on the embedded models: 44 questions about 34 small files, three channels.

Usage (needs ``leanloop local setup`` for each model; the ``serve`` channel the ``serve``
extra)::

    python benchmarks/first_agent.py [--models qwen2.5-coder-0.5b qwen2.5-coder-1.5b]
        [--channels cli,python,serve] [--shapes a,b,c] [--set all|held-out|tuning]
        [--rounds 2] [--cases ports wifi ...] [--lock /tmp/leanloop-model.lock]
        [--timeout 180] [--json runs.json] [--out table.md] [--keep DIR]
        [--server URL] [--leanloop .venv/bin/leanloop]

(``python -m benchmarks.first_agent`` is the same.) Issue 37's acceptance benchmark. The
workspace and the questions are in ``first_agent_cases.py``: each file holds one asked
fact beside a distractor a careless reader picks; a question names its file (shape
``a``), names none (``b``: the agent has to find it) or asks for what no file holds
(``c``: the right answer is "not found"). About a third of the cases are held out, written
before any run, and reported apart.

For each model it starts its own ``llama-server`` on a free port (``--server URL``: use
that server instead, for one model), writes the README's first agents file (an
``openai-compatible`` model ``local-test`` — the name the embedded server serves — at
temperature 0; one agent ``reader`` with ``read_file``, ``search`` and ``list_files`` over
``./data``, ``max_rounds: 20``) and the workspace into a temporary folder (``--keep DIR``:
into ``DIR``, kept), and asks every question through each channel, ``--rounds`` times
(the server's sampling varies between runs even at temperature 0):

- ``cli``: ``leanloop run agents.yaml --json "QUESTION"``, a process each (the seconds are
  the process's);
- ``python``: ``first_agent_python.py``, ``LLMAgent(model=ChatOpenAI(...),
  tools=[read_doc])`` with a plain function of the user's own, a process each (the
  seconds are ``invoke``'s);
- ``serve``: one ``leanloop serve agents.yaml --no-auth`` per model, asked with the
  ``openai`` client (the seconds are the request's); the answer is ``content``, and
  ``finish_reason`` and the ``leanloop`` extension are kept.

Children run with ``LEANLOOP_WARM=0``: no warm runner (a newcomer's cold start, and no
other runner is handed code it did not load). How a run is judged (correct /
honest-not-found / wrong / non-answer, and a non-answer passed off at exit 0 or
``finish_reason: stop``) is in ``first_agent_score.py``. It prints one table per set
(tuning, held out): per model × channel × shape, the four counts, the passed-off
non-answers, median and max seconds; then every run. ``--json`` keeps every run
(question, answer, stop, exit code or finish reason, seconds, calls), written after each.

``--lock PATH`` holds an exclusive ``flock`` on ``PATH`` for each run (the convention of
a machine shared with others who take timings: ``flock PATH COMMAND``); the seconds
start once the lock is held.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import openai

import leanloop
from benchmarks.first_agent_cases import CASES, FILES, Case, check_cases, summary
from benchmarks.first_agent_score import CATEGORIES, FAILED_STOPS, classify
from benchmarks.local_server import free_port
from leanloop.localmodel import cache_paths, model_pin
from leanloop.localmodel.server import ServerOptions, running_server

MODELS = ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
CHANNELS = ("cli", "python", "serve")
MODEL_NAME = "local-test"
"""The model name the agents file and ``ChatOpenAI`` ask for: the embedded server's alias."""
SYSTEM_PROMPT = "You answer questions about the files in the workspace."

AGENTS_YAML = """\
version: 1
models:
  local:
    provider: openai-compatible
    model: {model}
    base_url: {base_url}
    api_key: ${{LOCAL_API_KEY:-none}}
    temperature: 0
    kwargs: {{max_retries: 2}}
agents:
  reader:
    description: Answers questions about a workspace.
    model: local
    system_prompt: {system_prompt}
    tools: [read_file, search, list_files]
    workspace: ./data
    max_rounds: ${{ROUNDS:-20}}
"""


@dataclass
class Run:
    """One question asked once through one channel of one model."""

    model: str
    channel: str
    round: int
    case: str
    shape: str
    held_out: bool
    question: str = ""
    answer: str = ""
    stop_reason: str = "?"
    exit_code: int | None = None
    """``leanloop run``'s exit status (``cli``); ``None`` for the other channels."""
    finish_reason: str | None = None
    """``serve``'s ``finish_reason``; ``None`` for the other channels."""
    seconds: float = 0.0
    run_seconds: float | None = None
    """The report's ``elapsed_s``: the run alone (the CLI's process start left out)."""
    requests: int | None = None
    calls: list[str] = field(default_factory=list)
    error: str = ""
    category: str = ""
    why: str = ""
    passed_off: bool = False
    """A non-answer the channel called an answer (exit 0, ``stop_reason: answer``,
    ``finish_reason: stop``)."""
    extension: dict[str, Any] | None = None
    """``serve``: the ``leanloop`` extension without its tool calls and requests."""
    check: str = ""
    """The report's ``answer_check`` verdict (``asked_again``, ``kept``, …); ``""``: none."""


@contextlib.contextmanager
def held(lock: str | None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock`` (nothing when ``None``) while the block runs."""
    if lock is None:
        yield
        return
    with open(lock, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_project(
    folder: Path, base_url: str, model: str, *, answer_check: str | None = None
) -> Path:
    """Write the workspace and an agents file for ``base_url`` into ``folder`` (with
    ``answer_check``: that key added to the agent; else the README's file as it is)."""
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    for path, content in FILES.items():
        (data / path).write_text(content, encoding="utf-8")
    agents = folder / f"agents-{model}.yaml"
    agents.write_text(
        AGENTS_YAML.format(model=MODEL_NAME, base_url=base_url, system_prompt=SYSTEM_PROMPT)
        + (f"    answer_check: {answer_check}\n" if answer_check else ""),
        encoding="utf-8",
    )
    return agents


def child_env() -> dict[str, str]:
    """The environment of every process the benchmark starts: no warm runner, no colour."""
    return {**os.environ, "LEANLOOP_WARM": "0", "NO_COLOR": "1"}


def _calls(rows: Sequence[Any]) -> list[str]:
    out = []
    for c in rows:
        if not isinstance(c, dict):
            continue
        args = ", ".join(f"{k}={v}" for k, v in (c.get("args") or {}).items())
        out.append(
            f"{c.get('step')}·{c.get('name')}({args})"
            + (" [repeat]" if c.get("repeated") else "")
            + (f" [repaired from {c['repaired_from']}]" if c.get("repaired_from") else "")
            + ("" if c.get("ok", True) else " [failed]")
        )
    return out


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or ["no report"])[-1][:300]


def _timed_child(
    run: Run, command: list[str], *, lock: str | None, timeout: float
) -> tuple[subprocess.CompletedProcess[str], float] | None:
    """Run ``command`` under the lock: its result and seconds, or ``None`` (``run`` says
    it was killed) past ``timeout``. The seconds start once the lock is held."""
    with held(lock):
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=child_env(),
            )
        except subprocess.TimeoutExpired:
            run.seconds = time.perf_counter() - started
            run.stop_reason, run.error = "timeout", f"killed after {timeout:g} s"
            return None
        return done, time.perf_counter() - started


def run_cli(run: Run, agents: Path, *, leanloop: str, lock: str | None, timeout: float) -> None:
    """``leanloop run agents.yaml --json QUESTION``, once."""
    command = [leanloop, "run", str(agents), "--json", run.question]
    timed = _timed_child(run, command, lock=lock, timeout=timeout)
    if timed is None:
        return
    done, run.seconds = timed
    run.exit_code = done.returncode
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        run.stop_reason, run.error = "error", _last_line(done.stderr)
        return
    run.answer = str(report.get("answer") or "")
    run.stop_reason = str(report.get("stop_reason", "?"))
    run.error = str(report.get("error") or "")
    run.requests = len(report.get("requests") or [])
    run.run_seconds = report.get("elapsed_s")
    run.calls = _calls(report.get("tool_calls") or [])
    run.check = str((report.get("answer_check") or {}).get("verdict") or "")


def run_python(
    run: Run,
    data: Path,
    *,
    base_url: str,
    lock: str | None,
    timeout: float,
    answer_check: str | None = None,
) -> None:
    """``first_agent_python.py``: ``LLMAgent(model=ChatOpenAI(...), tools=[read_doc])``."""
    script = Path(__file__).resolve().with_name("first_agent_python.py")
    command = [sys.executable, str(script), "--base-url", base_url, "--data", str(data)]
    command += ["--answer-check", answer_check] if answer_check else []
    command += ["--model", MODEL_NAME, run.question]
    timed = _timed_child(run, command, lock=lock, timeout=timeout)
    if timed is None:
        return
    done, wall = timed
    try:
        out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        run.seconds, run.stop_reason = wall, "error"
        run.error = _last_line(done.stderr)
        return
    run.seconds = float(out.get("seconds") or wall)
    run.answer = str(out.get("answer") or "")
    run.error = str(out.get("error") or "")
    run.stop_reason = str(out.get("stop_reason", "?"))
    run.requests = out.get("requests")
    run.run_seconds = out.get("elapsed_s")
    run.calls = _calls(out.get("tool_calls") or [])
    run.check = str(out.get("answer_check") or "")


@contextlib.contextmanager
def served(agents: Path, *, leanloop: str, timeout: float, log: Path) -> Iterator[str]:
    """``leanloop serve agents.yaml --no-auth`` on a free port; yields its ``/v1`` URL."""
    port = free_port()
    command = [leanloop, "serve", str(agents), "--no-auth", "--port", str(port)]
    command += ["--deadline", str(int(timeout))]
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=child_env())
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                msg = f"leanloop serve exited {proc.returncode}: {_last_line(log.read_text())}"
                raise RuntimeError(msg)
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                msg = f"leanloop serve did not answer /healthz in 60 s; see {log}"
                raise RuntimeError(msg)
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_serve(run: Run, url: str | None, *, lock: str | None, timeout: float) -> None:
    """One chat completion of agent ``reader`` through ``leanloop serve``."""
    if url is None:
        run.stop_reason, run.error = "error", "leanloop serve did not start"
        return
    client = openai.OpenAI(base_url=url, api_key="none", timeout=timeout, max_retries=0)
    with held(lock):
        started = time.perf_counter()
        try:
            reply = client.chat.completions.create(
                model="reader", messages=[{"role": "user", "content": run.question}]
            )
        except openai.APITimeoutError:
            run.seconds = time.perf_counter() - started
            run.stop_reason, run.error = "timeout", f"no reply after {timeout:g} s"
            return
        except openai.APIError as exc:
            run.seconds = time.perf_counter() - started
            run.error = f"{type(exc).__name__}: {exc}"[:300]
            _read_ending(run, exc)
            return
        run.seconds = time.perf_counter() - started
    choice = reply.choices[0]
    run.answer = choice.message.content or ""
    run.finish_reason = choice.finish_reason
    _read_extension(run, (reply.model_extra or {}).get("leanloop") or {})
    run.error = str((run.extension or {}).get("error") or "")


def _read_ending(run: Run, exc: openai.APIError) -> None:
    """An error reply: a run that ended without an answer carries its text and report.

    (``serve`` may answer such a run with an error, ``ended_without_answer``, whose object
    holds ``content`` and the report under ``leanloop``.) Anything else is an ``error``.
    """
    run.stop_reason = "error"
    if not isinstance(exc, openai.APIStatusError):
        return
    run.finish_reason = f"HTTP {exc.status_code}" + (f" {exc.code}" if exc.code else "")
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    with contextlib.suppress(ValueError):
        whole = exc.response.json()
        if isinstance(whole, dict):
            body = {**whole, **body}
    extension = body.get("leanloop")
    if isinstance(extension, dict) and extension.get("stop_reason"):
        run.answer = str(body.get("content") or "")
        _read_extension(run, extension)


def _read_extension(run: Run, extension: dict[str, Any]) -> None:
    run.stop_reason = str(extension.get("stop_reason", "?"))
    run.requests = len(extension.get("requests") or [])
    run.run_seconds = extension.get("elapsed_s")
    run.calls = _calls(extension.get("tool_calls") or [])
    run.extension = {
        k: v for k, v in extension.items() if k not in {"tool_calls", "requests", "question"}
    }


def judge(run: Run) -> None:
    """Fill ``category``, ``why`` and ``passed_off`` (``first_agent_score``)."""
    case = next(c for c in CASES if c.key == run.case)
    category, why = classify(case, run.answer, run.stop_reason, prompts=(SYSTEM_PROMPT,))
    run.category, run.why = category, why
    said_answer = {
        "cli": run.exit_code == 0,
        "python": run.stop_reason == "answer" and not run.error,
        "serve": run.finish_reason == "stop",
    }[run.channel]
    run.passed_off = category == "non-answer" and said_answer


@contextlib.contextmanager
def model_server(model: str, server: str | None) -> Iterator[str]:
    """The ``/v1`` URL of ``server``, or of a ``llama-server`` started for ``model``."""
    if server is not None:
        yield server.rstrip("/")
        return
    options = ServerOptions(
        port=free_port(),
        model=cache_paths().model_path(model_pin(model).filename),
        detached=False,
    )
    with running_server(options) as record:
        yield record.openai_url


def _median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "–"


def table(runs: Sequence[Run], *, held_out: bool) -> str:
    """Counts per model × channel × shape for one set, as a Markdown table."""
    rows = [
        "| model | channel | shape | runs | correct | honest not found | wrong | non-answer "
        "| non-answer passed off | median s | max s | median run s |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    group = [r for r in runs if r.held_out == held_out]
    if not group:
        return "(no runs)"
    keys = dict.fromkeys((r.model, r.channel, r.shape) for r in group)
    for model, channel, shape in sorted(keys, key=lambda k: (k[0], CHANNELS.index(k[1]), k[2])):
        these = [r for r in group if (r.model, r.channel, r.shape) == (model, channel, shape)]
        counts = [sum(r.category == c for r in these) for c in CATEGORIES]
        seconds = [r.seconds for r in these]
        rows.append(
            f"| {model} | {channel} | {shape} | {len(these)} | "
            + " | ".join(str(n) for n in counts)
            + f" | {sum(r.passed_off for r in these)} | {_median(seconds)} | "
            f"{max(seconds):.1f} | "
            f"{_median([r.run_seconds for r in these if r.run_seconds is not None])} |"
        )
    return "\n".join(rows)


def acceptance(runs: Sequence[Run]) -> str:
    """Issue 37's figures per model × channel × set: a/b correct, c not found, passed off."""
    rows = [
        "| model | channel | set | a correct | b correct | c honest not found "
        "| non-answer passed off | median s |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]

    def share(rs: Sequence[Run], category: str) -> str:
        if not rs:
            return "–"
        got = sum(r.category == category for r in rs)
        return f"{got}/{len(rs)} ({100 * got / len(rs):.0f}%)"

    keys = dict.fromkeys((r.model, r.channel) for r in runs)
    for model, channel in sorted(keys, key=lambda k: (k[0], CHANNELS.index(k[1]))):
        for label, held in (("tuning", False), ("held out", True)):
            rs = [r for r in runs if (r.model, r.channel, r.held_out) == (model, channel, held)]
            if not rs:
                continue
            rows.append(
                f"| {model} | {channel} | {label} | "
                f"{share([r for r in rs if r.shape == 'a'], 'correct')} | "
                f"{share([r for r in rs if r.shape == 'b'], 'correct')} | "
                f"{share([r for r in rs if r.shape == 'c'], 'not-found')} | "
                f"{sum(r.passed_off for r in rs)} | {_median([r.seconds for r in rs])} |"
            )
    return "\n".join(rows)


def _cell(text: str, width: int = 110) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def details(runs: Sequence[Run]) -> str:
    """Every run, one row."""
    rows = [
        "| model | channel | round | case | shape | set | outcome | stop | exit / finish "
        "| s | calls | answer |",
        "|---|---|---:|---|---|---|---|---|---|---:|---:|---|",
    ]
    for r in runs:
        outcome = r.category + (f" ({r.why})" if r.why else "") + (" ⚑" if r.passed_off else "")
        ending = str(r.exit_code if r.channel == "cli" else r.finish_reason or "–")
        text = r.answer or (f"[{r.error}]" if r.error else "")
        rows.append(
            f"| {r.model} | {r.channel} | {r.round} | {r.case} | {r.shape} | "
            f"{'held out' if r.held_out else 'tuning'} | {outcome} | {r.stop_reason} | "
            f"{ending} | {r.seconds:.1f} | {len(r.calls)} | {_cell(text)} |"
        )
    return "\n".join(rows)


def report(runs: Sequence[Run]) -> str:
    """The tables: tuning, held out, the acceptance figures, every run."""
    parts = [
        "Tuning set:",
        table(runs, held_out=False),
        "Held-out set:",
        table(runs, held_out=True),
        "Issue 37's figures (a/b: correct; c: honest not found; ⚑ below: passed off):",
        acceptance(runs),
        "Every run:",
        details(runs),
    ]
    return "\n\n".join(parts) + "\n"


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def code_under_test() -> dict[str, Any]:
    """Which leanloop the runs use: its folder, this checkout's commit, uncommitted changes.

    ``commit`` and ``src_changed`` describe this checkout; they are the code under test
    only when ``leanloop`` is this checkout's ``src/leanloop`` (``in_checkout``), not when
    ``PYTHONPATH`` puts another copy first (say, ``git archive`` of a commit).
    """
    here = Path(leanloop.__file__).resolve().parent
    root = Path(__file__).resolve().parent.parent
    changed = _git("status", "--porcelain", "--", "src")
    return {
        "leanloop": str(here),
        "in_checkout": here == root / "src" / "leanloop",
        "commit": _git("rev-parse", "HEAD"),
        "src_changed": changed.splitlines() if changed != "?" else "?",
    }


def select(args: argparse.Namespace) -> list[Case]:
    """The cases ``--shapes``, ``--set`` and ``--cases`` (or ``--only``) leave."""
    wanted = set(args.cases or ()) | {k.strip() for k in args.only.split(",") if k.strip()}
    unknown = wanted - {c.key for c in CASES}
    if unknown:
        msg = f"unknown cases: {', '.join(sorted(unknown))}"
        raise SystemExit(msg)
    shapes = {s.strip() for s in args.shapes.split(",") if s.strip()}
    return [
        c
        for c in CASES
        if c.shape in shapes
        and (args.set == "all" or (args.set == "held-out") == c.held_out)
        and (not wanted or c.key in wanted)
    ]


def _default_leanloop() -> str:
    beside = Path(sys.executable).with_name("leanloop")
    return str(beside) if beside.exists() else shutil.which("leanloop") or "leanloop"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), help="catalog models")
    parser.add_argument("--channels", default=",".join(CHANNELS), help="cli,python,serve")
    parser.add_argument("--shapes", default="a,b,c", help="a (file named), b (none), c (absent)")
    parser.add_argument("--set", choices=("all", "held-out", "tuning"), default="all")
    parser.add_argument("--cases", nargs="+", help="only these cases (by key)")
    parser.add_argument("--only", default="", help=argparse.SUPPRESS)  # issue 25's spelling
    parser.add_argument("--rounds", type=int, default=2, help="times each question is asked")
    parser.add_argument("--lock", default=None, help="hold flock PATH for each run")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per run")
    parser.add_argument("--json", type=Path, default=None, help="also write every run here")
    parser.add_argument("--out", type=Path, default=None, help="also write the tables here")
    parser.add_argument("--keep", type=Path, default=None, help="write the project here")
    parser.add_argument("--server", default=None, help="a running server's /v1 URL (1 model)")
    parser.add_argument("--leanloop", default=_default_leanloop())
    parser.add_argument(
        "--answer-check",
        choices=("auto", "ask_again", "note", "off"),
        default=None,
        help="set the agent's answer_check (default: the README's file, which sets none)",
    )
    parser.add_argument(
        "--report",
        nargs="+",
        type=Path,
        metavar="JSON",
        help="ask nothing: judge runs saved with --json again, print their tables (and "
        "with --json, write them to one file)",
    )
    args = parser.parse_args(argv)
    args.channel_list = [c.strip() for c in args.channels.split(",") if c.strip()]
    bad = set(args.channel_list) - set(CHANNELS)
    if bad:
        parser.error(f"unknown channels: {', '.join(sorted(bad))}")
    if args.server is not None and len(args.models) != 1:
        parser.error("--server serves one model: name it with --models NAME")
    return args


def ask_model(
    model: str, cases: Sequence[Case], folder: Path, args: argparse.Namespace
) -> Iterator[Run]:
    """Ask every case through every channel, ``args.rounds`` times, on one model's server."""
    with contextlib.ExitStack() as stack:
        base_url = stack.enter_context(model_server(model, args.server))
        agents = write_project(folder, base_url, model, answer_check=args.answer_check)
        serve_url: str | None = None
        if "serve" in args.channel_list:
            log = folder / f"serve-{model}.log"
            try:
                serve_url = stack.enter_context(
                    served(agents, leanloop=args.leanloop, timeout=args.timeout, log=log)
                )
            except RuntimeError as exc:
                print(f"serve: {exc}", file=sys.stderr)
        limits = {"lock": args.lock, "timeout": args.timeout}
        # One channel's questions in a row, as one user asks them: the server keeps one
        # slot, so switching channels (another system prompt and tools) at every question
        # would make each request evaluate its whole prompt again.
        for round_ in range(1, args.rounds + 1):
            for channel in args.channel_list:
                for case in cases:
                    run = Run(model, channel, round_, case.key, case.shape, case.held_out)
                    run.question = case.question
                    if channel == "cli":
                        run_cli(run, agents, leanloop=args.leanloop, **limits)
                    elif channel == "python":
                        run_python(
                            run,
                            folder / "data",
                            base_url=base_url,
                            answer_check=args.answer_check,
                            **limits,
                        )
                    else:
                        run_serve(run, serve_url, **limits)
                    judge(run)
                    yield run


def main(argv: Sequence[str] | None = None) -> int:
    """Ask the selected questions; print the tables. Exit 1 when a case is unsound."""
    args = parse(argv)
    problems = check_cases()
    if problems:
        print("unsound cases:\n" + "\n".join(problems), file=sys.stderr)
        return 1
    if args.report:
        saved = [json.loads(p.read_text(encoding="utf-8")) for p in args.report]
        loaded = [Run(**row) for data in saved for row in data["runs"]]
        for run in loaded:  # judged again: the tables follow the scorer as it is now
            judge(run)
        text = report(loaded)
        print(text)
        if args.out is not None:
            args.out.write_text(text, encoding="utf-8")
        if args.json is not None:  # the saved runs in one file, judged as above
            sources = [{k: v for k, v in data.items() if k != "runs"} for data in saved]
            payload = {"sources": sources, "runs": [asdict(r) for r in loaded]}
            args.json.write_text(
                json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        return 0
    cases = select(args)
    meta: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/first_agent.py", *(argv or sys.argv[1:])]),
        **code_under_test(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cases": summary(),
    }
    print(f"{summary()}\nasking {len(cases)} cases", file=sys.stderr)
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="first-agent-") as scratch:
        folder = args.keep or Path(scratch)
        for model in args.models:
            for run in ask_model(model, cases, folder, args):
                runs.append(run)
                _progress(run)
                if args.json is not None:
                    payload = {**meta, "runs": [asdict(r) for r in runs]}
                    args.json.write_text(
                        json.dumps(payload, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8",
                    )
    text = report(runs)
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0


def _progress(run: Run) -> None:
    ending = f"exit {run.exit_code}" if run.channel == "cli" else f"finish {run.finish_reason}"
    flag = " PASSED OFF" if run.passed_off else ""
    failed = f" [{run.error[:80]}]" if run.error and run.stop_reason in FAILED_STOPS else ""
    print(
        f"{run.model} {run.channel} r{run.round} {run.case} ({run.shape}): {run.category}"
        f"{flag} · {run.stop_reason} · {ending} · {run.seconds:.1f} s{failed} · "
        f"{_cell(run.answer, 80)!r}",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
