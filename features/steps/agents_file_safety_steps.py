"""Steps for features/spec/agents_file_safety.feature (the CLI steps are elsewhere)."""

from __future__ import annotations

from behave import then
from behave.runner import Context


@then('the agents file\'s folder "{folder}" holds no file "{name}"')
def step_folder_lacks(context: Context, folder: str, name: str) -> None:
    path = context.tmp / folder / name
    assert not path.exists(), f"{path} exists: {path.read_text(encoding='utf-8')!r}"


@then('the agents file\'s folder "{folder}" holds the file "{name}"')
def step_folder_holds(context: Context, folder: str, name: str) -> None:
    path = context.tmp / folder / name
    assert path.is_file(), f"{path} does not exist"


@then('the CLI\'s working folder holds no file "{name}"')
def step_cwd_lacks(context: Context, name: str) -> None:
    path = context.tmp / name
    assert not path.exists(), f"{path} exists: the tool ran"
