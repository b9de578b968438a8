"""Steps for features/progress.feature: the CLI's progress printer."""

from __future__ import annotations

import asyncio
import io
import json
import re

from behave import given, then, when
from behave.runner import Context
from support.env import set_env

from leanloop.progress import ProgressPrinter

_STAMP = re.compile(r"^\[\s*\d+\.\ds\] ")


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@given("a progress printer without colour")
def step_printer(context: Context) -> None:
    context.progress_stream = _Stream(tty=False)
    context.progress = ProgressPrinter(context.progress_stream, colour=False)


@given("the environment {setting}")
def step_environment(context: Context, setting: str) -> None:
    name, _, value = setting.split(" ", 1)[1].partition("=")
    set_env(name, value if setting.startswith("with ") else None, on_cleanup=context.add_cleanup)


@given("a progress printer writing to a stream that {is_tty} a terminal")
def step_printer_tty(context: Context, is_tty: str) -> None:
    context.progress_stream = _Stream(tty=is_tty == "is")
    context.progress = ProgressPrinter(context.progress_stream)


@when("the progress printer receives the events:")
def step_events(context: Context) -> None:
    async def feed() -> None:
        for row in context.table:
            await context.progress.record(row["event"], json.loads(row["data"]))

    asyncio.run(feed())


@when("the progress printer receives a failed call")
def step_failed_call(context: Context) -> None:
    data = {"step": 1, "calls": [{"name": "search", "args": {}, "chars_out": 9, "ok": False}]}
    asyncio.run(context.progress.record("leanloop.step", data))


def _lines(context: Context) -> list[str]:
    return context.progress_stream.getvalue().splitlines()


@then("the progress lines are, after their time stamps:")
def step_lines(context: Context) -> None:
    got = [_STAMP.sub("", line) for line in _lines(context)]
    expected = [row["line"] for row in context.table]
    assert got == expected, "\n".join(got)


@then("every progress line starts with an elapsed time in seconds")
def step_stamps(context: Context) -> None:
    lines = _lines(context)
    assert lines and all(_STAMP.match(line) for line in lines), lines


@then("the progress line {has} colour codes")
def step_colour(context: Context, has: str) -> None:
    text = context.progress_stream.getvalue()
    assert text.strip(), "nothing was printed"
    assert ("\033[" in text) == (has == "has"), repr(text)
