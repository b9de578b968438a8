"""Steps for features/cli/cli.feature: the `leanloop` CLI, called in this process.

``the CLI runs`` is ``leanloop.cli.main(argv)`` with the streams and working folder of a
child (support/cli_inprocess.py); steps whose point is a real process start one.
"""

from __future__ import annotations

import json
import re
import shlex
import textwrap

from behave import given, then, when
from behave.runner import Context
from support.cli_inprocess import run_cli


@given('a CLI workspace file "{name}" containing "{text}"')
def step_workspace_file(context: Context, name: str, text: str) -> None:
    workspace = context.tmp / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / name).write_text(text + "\n", encoding="utf-8")


@given('a CLI agents file "{name}" with:')
def step_agents_file(context: Context, name: str) -> None:
    (context.tmp / name).write_text(textwrap.dedent(context.text) + "\n", encoding="utf-8")


@when('the CLI runs "{command}"')
def step_cli(context: Context, command: str) -> None:
    context.cli = run_cli(shlex.split(command), context.tmp)


@then("the CLI exits with {code:d}")
def step_exit(context: Context, code: int) -> None:
    cli = context.cli
    assert cli.returncode == code, f"exit {cli.returncode}\n{cli.stdout}\n{cli.stderr}"


@then('the CLI stdout is "{text}"')
def step_stdout(context: Context, text: str) -> None:
    assert context.cli.stdout.strip() == text, context.cli.stdout


@then('the CLI stderr has the line "{prefix}"')
def step_stderr_line(context: Context, prefix: str) -> None:
    # Progress lines start with the elapsed time ("[  0.5s] "); the rest is compared.
    lines = [re.sub(r"^\[\s*[\d.]+s\] ", "", line) for line in context.cli.stderr.splitlines()]
    assert any(line.startswith(prefix) for line in lines), context.cli.stderr


@then('the CLI stderr mentions "{text}"')
def step_stderr_mentions(context: Context, text: str) -> None:
    assert text in context.cli.stderr, context.cli.stderr


@then('the CLI stderr has {n:d} located errors in "{name}"')
def step_located(context: Context, n: int, name: str) -> None:
    pattern = re.compile(rf"^error: {re.escape(name)}:\d+:\d+: ")
    located = [line for line in context.cli.stderr.splitlines() if pattern.match(line)]
    assert len(located) == n, context.cli.stderr
    assert len(context.cli.stderr.strip().splitlines()) == n, context.cli.stderr


@then("the CLI stderr has no traceback")
def step_no_traceback(context: Context) -> None:
    assert "Traceback" not in context.cli.stderr, context.cli.stderr


@then('the CLI JSON output has answer "{answer}" and stop_reason "{reason}"')
def step_json(context: Context, answer: str, reason: str) -> None:
    context.cli_json = data = json.loads(context.cli.stdout)
    assert data["answer"] == answer and data["stop_reason"] == reason, data


@then('the CLI JSON output lists the tool call "{name}" with args {args}')
def step_json_call(context: Context, name: str, args: str) -> None:
    calls = [(c["name"], c["args"]) for c in context.cli_json["tool_calls"]]
    assert calls == [(name, json.loads(args))], calls
