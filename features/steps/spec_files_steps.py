"""Steps for the odd agents files of features/spec/spec_loading.feature (pipes, huge, cycles)."""

from __future__ import annotations

import os

from behave import given, when
from behave.runner import Context

from leanloop.exceptions import SpecError
from leanloop.spec import load_specs_from_dict


@given('a named pipe "{name}" in the spec folder')
def step_fifo(context: Context, name: str) -> None:
    os.mkfifo(context.tmp / name)


@given('an agents file "{name}" of {size:d} bytes')
def step_big_file(context: Context, name: str, size: int) -> None:
    line = b"# " + b"x" * 97 + b"\n"
    with (context.tmp / name).open("wb") as stream:
        stream.write(b"version: 1\n")
        stream.write(line * (size // len(line)))


@when("Python data whose agent contains the whole document is loaded")
def step_self_reference(context: Context) -> None:
    document: dict[str, object] = {"version": 1}
    document["agents"] = {"a": {"model": {"provider": "openai"}, "x": document}}
    context.spec_result = None
    context.spec_error = None
    try:
        context.spec_result = load_specs_from_dict(document)
    except SpecError as exc:
        context.spec_error = exc
