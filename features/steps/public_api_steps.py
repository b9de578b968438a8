"""Steps for features/public_api.feature: what `leanloop` exports and what importing it costs."""

from __future__ import annotations

import json
import subprocess
import sys

from behave import given, then, when
from behave.runner import Context

import leanloop
from leanloop.report import RunReport


@then("leanloop's __all__ is exactly:")
def step_all_exactly(context: Context) -> None:
    expected = {row["name"] for row in context.table}
    actual = set(leanloop.__all__)
    assert actual == expected, f"missing {expected - actual}, extra {actual - expected}"


@then("every name in leanloop's __all__ can be imported from leanloop")
def step_all_importable(context: Context) -> None:
    for name in leanloop.__all__:
        namespace: dict[str, object] = {}
        exec(f"from leanloop import {name}", namespace)  # the import statement users write
        assert namespace[name] is getattr(leanloop, name), name


@given('a RunFailed for "{message}" with a report of {steps:d} steps')
def step_run_failed(context: Context, message: str, steps: int) -> None:
    context.run_failed = leanloop.RunFailed(message, report=RunReport(steps=steps))


@then("the RunFailed is a LeanloopError and a ModelError")
def step_run_failed_kind(context: Context) -> None:
    assert isinstance(context.run_failed, leanloop.LeanloopError)
    assert isinstance(context.run_failed, leanloop.ModelError)


@then("the RunFailed's report says {steps:d} steps")
def step_run_failed_report(context: Context, steps: int) -> None:
    assert context.run_failed.report.steps == steps, context.run_failed.report


@when("leanloop is imported in a fresh interpreter")
def step_fresh_import(context: Context) -> None:
    code = "import json, sys, leanloop; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    context.fresh_modules = set(json.loads(out.stdout))


@when('the CLI runs "{command}" in a fresh interpreter')
def step_fresh_cli(context: Context, command: str) -> None:
    code = (
        "import json, sys\n"
        "from leanloop.cli import main\n"
        "try:\n"
        f"    main({command.split()!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    context.fresh_modules = set(json.loads(out.stderr.strip().splitlines()[-1]))
    assert "leanloop.cli" in context.fresh_modules


@then('the fresh interpreter had not imported "{module}"')
def step_not_imported(context: Context, module: str) -> None:
    assert module not in context.fresh_modules, f"{module} was imported by `import leanloop`"


@then('getting "{name}" from leanloop raises AttributeError')
def step_unknown_name(context: Context, name: str) -> None:
    try:
        getattr(leanloop, name)
    except AttributeError as exc:
        assert name in str(exc), exc
    else:
        raise AssertionError(f"leanloop.{name} did not raise AttributeError")
