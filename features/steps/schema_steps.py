"""Steps for features/cli/cli_schema.feature: `leanloop schema`, `--version`, `--check-models`.

The CLI itself runs through the steps of cli_steps.py (`the CLI runs "..."`, in the
scenario's temporary folder); these steps judge what it printed.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml
from behave import then
from behave.runner import Context
from jsonschema import Draft202012Validator

import leanloop
from leanloop.cli.demo import default_agents_file
from leanloop.spec import agent_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = Path(leanloop.__file__).parent / "spec" / "agent.schema.json"


def _printed_schema(context: Context) -> dict[str, Any]:
    schema = json.loads(context.cli.stdout)
    assert isinstance(schema, dict), context.cli.stdout[:200]
    Draft202012Validator.check_schema(schema)
    return schema


def _assert_satisfies(schema: dict[str, Any], file: Path) -> None:
    document = yaml.safe_load(file.read_text(encoding="utf-8"))
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(document)]
    assert not errors, f"{file}: {errors}"


@then("the CLI stdout is a JSON Schema that the demo agents file satisfies")
def step_schema_demo(context: Context) -> None:
    demo = default_agents_file()
    assert demo.is_file(), demo
    assert (demo.parent / "workspace" / "config" / "service.toml").is_file(), demo.parent
    _assert_satisfies(_printed_schema(context), demo)


@then('the CLI stdout is a JSON Schema that "{name}" satisfies')
def step_schema_file(context: Context, name: str) -> None:
    _assert_satisfies(_printed_schema(context), context.tmp / name)


@then("the CLI stdout is the JSON Schema leanloop validates with")
def step_schema_same(context: Context) -> None:
    assert _printed_schema(context) == agent_schema()


@then("the CLI stdout is the path of the schema file leanloop validates with")
def step_schema_path(context: Context) -> None:
    printed = Path(context.cli.stdout.strip())
    assert printed.is_absolute() and printed.is_file(), context.cli.stdout
    assert printed.resolve() == SCHEMA_FILE.resolve(), (printed, SCHEMA_FILE)
    assert json.loads(printed.read_text(encoding="utf-8")) == agent_schema()


@then('the CLI prints "{name}" and the version in pyproject.toml')
def step_version(context: Context, name: str) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert context.cli.stdout.strip() == f"{name} {project['version']}", context.cli.stdout


@then('the CLI stdout has the line "{line}"')
def step_stdout_line(context: Context, line: str) -> None:
    assert line in context.cli.stdout.splitlines(), context.cli.stdout


@then('the CLI stderr has one error at "{name}" line {lines} mentioning "{text}"')
def step_one_located_error(context: Context, name: str, lines: str, text: str) -> None:
    allowed = {int(n) for n in lines.split(" or ")}
    pattern = re.compile(rf"^error: {re.escape(name)}:(\d+):\d+: ")
    errors = [line for line in context.cli.stderr.splitlines() if line.startswith("error: ")]
    hits = [line for line in errors if text in line]
    assert len(hits) == 1, context.cli.stderr
    located = pattern.match(hits[0])
    assert located and int(located.group(1)) in allowed, hits[0]
