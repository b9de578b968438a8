"""Steps for features/tools/tools_near_file.feature (the CLI steps are in cli_steps.py)."""

from __future__ import annotations

import json
import textwrap

from behave import given, then
from behave.runner import Context


@given('a CLI file "{name}" with:')
def step_cli_file(context: Context, name: str) -> None:
    path = context.tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(context.text or "") + "\n", encoding="utf-8")


@then('the JSON report\'s first tool call is "{name}", ok, with {chars:d} characters out')
def step_first_call(context: Context, name: str, chars: int) -> None:
    call = json.loads(context.cli.stdout)["tool_calls"][0]
    assert (call["name"], call["ok"], call["chars_out"]) == (name, True, chars), call
