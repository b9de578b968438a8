"""The environment step (features/cli/cli_schema.feature uses it). The progress printer's own
checks moved to tests/cli/test_progress.py (issue 26)."""

from __future__ import annotations

from behave import given
from behave.runner import Context
from support.env import set_env


@given("the environment {setting}")
def step_environment(context: Context, setting: str) -> None:
    name, _, value = setting.split(" ", 1)[1].partition("=")
    set_env(name, value if setting.startswith("with ") else None, on_cleanup=context.add_cleanup)
