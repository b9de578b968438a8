"""Progress lines say what the loop did, in colour only where it helps
(src/leanloop/cli/progress.py), moved from features/progress.feature (issue 26).

The CLI's progress printer turns the loop's events into one line each: budget figures,
each call with ok/failed, prefetched reads, cuts, trims, pruning passes and fallbacks.
Colour is used on a terminal only, and never when NO_COLOR is set.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from leanloop.cli.progress import ProgressPrinter

_STAMP = re.compile(r"^\[\s*\d+\.\ds\] ")


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


async def _lines(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    stream = _Stream(tty=False)
    printer = ProgressPrinter(stream, colour=False)
    for name, data in events:
        await printer.record(name, data)
    lines = stream.getvalue().splitlines()
    # Every progress line starts with an elapsed time in seconds.
    assert lines and all(_STAMP.match(line) for line in lines), lines
    return [_STAMP.sub("", line) for line in lines]


def _call(name: str, args: dict[str, Any], chars_out: int, **more: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "chars_out": chars_out, **more}


def _budget(step: int, estimate: int, ceiling: int, window: int, source: str) -> dict[str, Any]:
    return {
        "step": step,
        "estimate": estimate,
        "ceiling": ceiling,
        "window": window,
        "window_source": source,
    }


def _pruned(step: int, out: int, seconds: float, **more: Any) -> dict[str, Any]:
    return {
        "step": step,
        "tool": "read_file",
        "chars_raw": 50000,
        "chars_out": out,
        "chunks": 4,
        "seconds": seconds,
        **more,
    }


async def test_each_kind_of_event_becomes_its_own_line() -> None:
    handbook = _call("read_file", {"path": "handbook.md"}, 4210, ok=True)
    cut = _call("read_file", {"path": "app.log"}, 5305, chars_raw=15919, ok=True, cut_from=15919)
    failed = _call("search", {"pattern": "port"}, 36, ok=False)
    repeat = _call("read_file", {"path": "app.log"}, 190, ok=True, repeated=True)
    trimmed = {"step": 2, "count": 2, "tokens_before": 5120, "tokens_after": 3010}
    events = [
        ("leanloop.step", {"step": 0, "prefetch": True, "calls": [handbook]}),
        ("leanloop.budget", _budget(1, 1432, 6553, 8192, "server:llama.cpp")),
        ("leanloop.budget", _budget(2, 1500, 6553, 8192, "server:llama.cpp")),
        ("leanloop.step", {"step": 1, "calls": [cut, failed]}),
        ("leanloop.trimmed", trimmed),
        ("leanloop.prune_progress", {"step": 2, "tool": "read_file", "done": 1, "chunks": 4}),
        ("leanloop.pruned", _pruned(2, 900, 61.2, fallback=None)),
        ("leanloop.pruned", _pruned(2, 700, 80.0, fallback=None, unread=[[201, 300, "timeout"]])),
        ("leanloop.pruned", _pruned(3, 50000, 60.0, fallback="timeout")),
        ("leanloop.step", {"step": 3, "calls": [repeat]}),
    ]

    assert await _lines(events) == [
        "step 0 · read_file(path=handbook.md) · prefetched · 4,210 chars",
        "step 1 · 1,432 / 6,553 tokens (22%) · window 8,192 (server:llama.cpp)",
        "step 2 · 1,500 / 6,553 tokens (23%)",
        "step 1 · read_file(path=app.log) · ok · cut 15,919 → 5,305 chars",
        "step 1 · search(pattern=port) · failed · 36 chars",
        "step 2 · trimmed 2 results · 5,120 → 3,010 tokens",
        "step 2 · pruning read_file · chunk 1/4",
        "step 2 · pruned read_file · 50,000 → 900 chars · 4 chunks · 61.2 s",
        "step 2 · pruned read_file · 50,000 → 700 chars · 4 chunks · 80.0 s · "
        "lines 201-300 (timeout) not read",
        "step 3 · pruning read_file fell back to the raw output (timeout)",
        "step 3 · read_file(path=app.log) · repeat, not run",
    ]


async def test_a_window_that_is_only_a_default_says_so_on_the_first_budget_line() -> None:
    events = [("leanloop.budget", _budget(1, 870, 25804, 32768, "default:local"))]

    assert await _lines(events) == [
        "step 1 · 870 / 25,804 tokens (3%) · window 32,768 (default:local, a guess)"
    ]


@pytest.mark.parametrize(
    ("no_color", "tty", "coloured"),
    [(None, True, True), (None, False, False), ("1", True, False)],
    ids=["without NO_COLOR, a terminal", "without NO_COLOR, no terminal", "NO_COLOR=1"],
)
async def test_colour_only_on_a_terminal_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch, no_color: str | None, tty: bool, coloured: bool
) -> None:
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    stream = _Stream(tty=tty)
    printer = ProgressPrinter(stream)

    await printer.record("leanloop.step", {"step": 1, "calls": [_call("search", {}, 9, ok=False)]})

    text = stream.getvalue()
    assert text.strip(), "nothing was printed"
    assert ("\033[" in text) == coloured, repr(text)


async def test_a_repaired_call_says_which_name_the_model_wrote() -> None:
    call = _call("get_current_time", {"timezone": "Asia/Tokyo"}, 121, ok=True,
                 repaired=True, repaired_from="get_time")  # fmt: skip
    assert await _lines([("leanloop.step", {"step": 1, "calls": [call]})]) == [
        "step 1 · get_current_time(timezone=Asia/Tokyo) [was get_time] · ok · 121 chars"
    ]
