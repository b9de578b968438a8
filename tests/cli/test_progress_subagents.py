"""A sub-agent's progress lines stand apart from its caller's (issue 29, item 7).

Each ``agent:NAME`` call is a run of its own whose events reach the caller's callbacks;
the progress printer indents them, two spaces a level of nesting, and starts them with
the sub-agent's name, and tells each agent's window once.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from leanloop import LLMAgent
from leanloop.cli.progress import ProgressPrinter

_STAMP = re.compile(r"^\[\s*\d+\.\ds\] ")


async def _progress(subagent_chain: Callable[..., LLMAgent]) -> list[str]:
    lead = subagent_chain()
    stream = io.StringIO()
    await lead.ainvoke("What port?", {"callbacks": [ProgressPrinter(stream, colour=False)]})
    lines = stream.getvalue().splitlines()
    assert lines and all(_STAMP.match(line) for line in lines), lines
    return [_STAMP.sub("", line) for line in lines]


async def test_sub_agent_lines_are_indented_under_the_agents_name(
    subagent_chain: Callable[..., LLMAgent],
) -> None:
    lines = await _progress(subagent_chain)

    reader = [line for line in lines if line.startswith("    reader › ")]
    researcher = [line for line in lines if line.startswith("  researcher › ")]
    lead = [line for line in lines if not line.startswith(" ")]
    assert len(reader) + len(researcher) + len(lead) == len(lines), lines
    assert any("read_file(path=notes.txt) · ok" in line for line in reader), lines
    assert any("reader(task=read the notes) · ok" in line for line in researcher), lines
    assert any("researcher(task=find the port) · ok" in line for line in lead), lines
    # No line of a sub-run is left bare: the lead itself never read a file.
    assert not any("read_file" in line for line in lead + researcher), lines
    # The lead's call line comes after every line of the sub-run it made.
    last_sub = max(lines.index(line) for line in reader + researcher)
    lead_call = next(i for i, line in enumerate(lines) if "researcher(task=" in line)
    assert lead_call > last_sub, lines


async def test_each_agent_tells_its_own_window_once(
    subagent_chain: Callable[..., LLMAgent],
) -> None:
    lines = await _progress(subagent_chain)

    told = [line for line in lines if " · window " in line]
    assert len(told) == 3, lines  # the lead, the researcher and the reader: one each
    assert [line for line in told if line.startswith("    reader › ")], told
    reader_window = next(line for line in told if line.startswith("    reader › "))
    assert "window 4,096 (" in reader_window, reader_window


async def test_an_event_recorded_for_a_sub_agent_is_kept_and_printed_nested() -> None:
    stream = io.StringIO()
    printer = ProgressPrinter(stream, colour=False)
    call = {"name": "search", "args": {"pattern": "port"}, "chars_out": 12, "ok": True}

    await printer.record("leanloop.step", {"step": 2, "calls": [call]}, agents=["a", "b"])
    await printer.record("leanloop.step", {"step": 3, "calls": [call]})

    first, second = (_STAMP.sub("", line) for line in stream.getvalue().splitlines())
    assert first == "    b › step 2 · search(pattern=port) · ok · 12 chars"
    assert second == "step 3 · search(pattern=port) · ok · 12 chars"
    assert [name for name, _ in printer.events] == ["leanloop.step", "leanloop.step"]
