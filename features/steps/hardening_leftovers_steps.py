"""Steps for hardening_leftovers.feature: deep agents files, bad globs, enormous lines.

The workspace is the one of :mod:`tools_steps` (``<tmp>/ws``) and the results land in
``context.outcome``, so that feature's "the tool result ..." steps check them. The
memory of a read is measured in a child Python process: the peak resident size of the
test runner says nothing about one call, a fresh process's peak before and after does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

from behave import given, then, when
from behave.runner import Context

from leanloop.tools import ToolOutcome, workspace_tools

CHILD_DEADLINE_S = 120
"""A child still reading after this long has not streamed: the scenario fails."""

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from leanloop.tools import workspace_tools

root, name = Path(sys.argv[1]), sys.argv[2]
read = {tool.name: tool for tool in workspace_tools(root)}["read_file"]
read.invoke({"path": "warm-up.txt"})  # imports and first-call set-up happen here
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.monotonic()
text = read.invoke({"path": name})
seconds = time.monotonic() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"text": text, "seconds": seconds, "growth_kb": after - before}))
"""
"""Reads one file with the built-in read_file tool; ru_maxrss is in KiB on Linux."""


def _workspace(context: Context) -> Path:
    root: Path = context.tmp / "ws"
    root.mkdir(exist_ok=True)
    return root


def _text(context: Context) -> str:
    outcome: ToolOutcome = context.outcome
    return outcome.text


# ---- agents files -----------------------------------------------------------------------


@given('an agents file "{name}" whose model kwargs are nested {depth:d} mappings deep')
def step_agents_deep_kwargs(context: Context, name: str, depth: int) -> None:
    kwargs = "{k: " * depth + "1" + "}" * depth
    text = (
        "version: 1\n"
        "agents:\n"
        "  reader:\n"
        f"    model: {{provider: openai, model: gpt-4o-mini, kwargs: {kwargs}}}\n"
    )
    (context.tmp / name).write_text(text, encoding="utf-8")


@given(
    'an agents file "{name}" with {count:d} anchors, each nesting the last {depth:d} lists deeper'
)
def step_agents_deep_anchors(context: Context, name: str, count: int, depth: int) -> None:
    lines = ["version: 1"]
    for index in range(count):
        inner = f"*a{index - 1}" if index else ""
        lines.append(f"a{index}: &a{index} " + "[" * depth + inner + "]" * depth)
    (context.tmp / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---- files for read_file ----------------------------------------------------------------


@given('a sparse workspace file "{path}" of one {size:d}-character line starting with "{text}"')
def step_sparse_line(context: Context, path: str, size: int, text: str) -> None:
    # Text first (read_file's binary sniff looks at the first 8 KB), then a hole up to
    # the size, then the only line break: no disk blocks for the hole, no time to write.
    start = (text + " ").ljust(10_000, "y").encode()
    file = _workspace(context) / path
    file.write_bytes(start)
    os.truncate(file, size)
    with file.open("ab") as handle:
        handle.write(b"\n")
    assert file.stat().st_size == size + 1
    assert file.stat().st_blocks * 512 < 10_000_000, "the file is not sparse here"


@given('a workspace file "{path}" holding the escaped text "{text}"')
def step_escaped_file(context: Context, path: str, text: str) -> None:
    def expand(match: re.Match[str]) -> str:
        return match.group(2) * int(match.group(1))

    content = re.sub(r"<(\d+) (\w)>", expand, text).replace("\\r", "\r").replace("\\n", "\n")
    (_workspace(context) / path).write_bytes(content.encode())


# ---- calls ---------------------------------------------------------------------------------


@when('the workspace tool "{name}" is invoked directly, recording warnings, with:')
def step_invoke_recording(context: Context, name: str) -> None:
    tools = {tool.name: tool for tool in workspace_tools(_workspace(context))}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = tools[name].invoke(json.loads(context.text))
    context.recorded_warnings = [str(w.message) for w in caught]
    context.outcome = ToolOutcome(name, {}, text, True, len(text))


@then("no warning was recorded")
def step_no_warning(context: Context) -> None:
    assert context.recorded_warnings == [], context.recorded_warnings


# ---- a read measured in a fresh process -----------------------------------------------


@when('a fresh process runs read_file on "{path}" and measures its peak memory')
def step_child_read(context: Context, path: str) -> None:
    root = _workspace(context)
    (root / "warm-up.txt").write_text("warm\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), path],
        capture_output=True,
        text=True,
        timeout=CHILD_DEADLINE_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout)
    context.child_read = measured
    text: str = measured["text"]
    context.outcome = ToolOutcome("read_file", {"path": path}, text, True, len(text))


@then("that read_file returned within {limit:d} s, its peak memory growing by less than {mb:d} MB")
def step_child_bounds(context: Context, limit: int, mb: int) -> None:
    measured = context.child_read
    growth_mb = measured["growth_kb"] / 1024
    assert measured["seconds"] < limit, f"took {measured['seconds']:.1f} s"
    assert growth_mb < mb, f"peak memory grew by {growth_mb:.0f} MB"


# ---- results -----------------------------------------------------------------------------


@then('the tool result line {number:d} starts with "{text}"')
def step_result_line_starts(context: Context, number: int, text: str) -> None:
    line = _text(context).splitlines()[number - 1]
    assert line.startswith(text), repr(line[:200])


@then('the tool result, with "{token}" standing for {count:d} "{char}", is:')
def step_result_is_expanded(context: Context, token: str, count: int, char: str) -> None:
    expected = context.text.replace(token, char * count)
    actual = _text(context)
    shown = actual.replace(char * count, token)
    assert actual == expected, f"expected:\n{context.text}\n--- got:\n{shown}"
