"""Steps for features/spec/model_kwargs.feature; the CLI steps are features/steps/cli_steps.py."""

from __future__ import annotations

from behave import then
from behave.runner import Context


@then("the CLI stderr shows no warning")
def step_no_warning(context: Context) -> None:
    # A kwarg ChatOpenAI does not declare used to print pydantic's/LangChain's
    # "WARNING! frobnicate is not default parameter" (a UserWarning) on stderr.
    stderr = context.cli.stderr
    assert "warning" not in stderr.lower(), stderr
