"""The progress line of ``leanloop batch`` (issue 39): done, running, failed, rate, ETA.

Drawn in place on a terminal, redrawn while a task runs, and nothing at all off a
terminal or under ``--json`` (the summary is then the only output). The line's figures
are read on a fake clock; the redraw thread is checked by what it draws, not by a wait.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from leanloop.batch.progress import BatchProgress
from leanloop.cli.command import main


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    """A buffer that says it is a terminal (80 columns: it has no descriptor)."""

    def isatty(self) -> bool:
        return True


def _progress(stream: io.StringIO, clock: _Clock, **kwargs: Any) -> BatchProgress:
    return BatchProgress(stream, clock=clock, every=None, **kwargs)


def test_the_line_counts_done_running_failed_with_the_rate_and_eta() -> None:
    clock = _Clock()
    progress = _progress(_Terminal(), clock, total=10, done=2)
    progress.started("t2")
    progress.started("t3")
    clock.now += 30
    progress.finished({"stop_reason": "answer"})
    progress.started("t4")
    clock.now += 30
    progress.finished({"stop_reason": "failed"})

    line = progress.line()

    # 2 done this run in 60 s: 2.0 a minute, 6 left: 3 minutes; the 2 earlier are done.
    assert line == "4/10 done · 1 running · 1 failed · 2.0/min · ETA 3:00 · 1:00 elapsed"


def test_a_wide_terminal_shows_a_bar_before_the_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    class _Wide(_Terminal):
        def fileno(self) -> int:
            return 99

    def size(fd: int) -> os.terminal_size:
        assert fd == 99
        return os.terminal_size((120, 40))

    monkeypatch.setattr("leanloop.batch.progress.os.get_terminal_size", size)
    progress = _progress(_Wide(), _Clock(), total=4, done=2)

    figures = "2/4 done · 0 running · 0 failed · -/min · ETA - · 0:00 elapsed"
    assert progress.line() == "[###############...............] " + figures


def test_before_any_result_the_rate_and_eta_are_unknown_not_zero() -> None:
    clock = _Clock()
    progress = _progress(_Terminal(), clock, total=3)
    progress.started("t0")
    clock.now += 5

    assert progress.line().endswith(
        "0/3 done · 1 running · 0 failed · -/min · ETA - · 0:05 elapsed"
    )


def test_the_line_is_redrawn_in_place_and_ended_once() -> None:
    terminal, clock = _Terminal(), _Clock()
    with _progress(terminal, clock, total=2) as progress:
        progress.started("t0")
        progress.finished({"stop_reason": "answer"})
    progress.close()  # a second close writes nothing more

    drawn = terminal.getvalue()
    assert drawn.endswith("\n") and drawn.count("\n") == 1, repr(drawn)
    frames = drawn.removesuffix("\n").split("\r")[1:]
    assert len(frames) >= 3, frames
    # Each frame covers the one before: a shorter one is padded with spaces.
    assert all(len(b) >= len(a) for a, b in itertools.pairwise(frames)), frames
    assert "1/2 done · 0 running" in frames[-1]


def test_a_narrow_terminal_keeps_the_figures_and_drops_the_bar() -> None:
    clock = _Clock()
    progress = _progress(_Terminal(), clock, total=1000, done=123)
    progress.finished({"stop_reason": "failed"})
    clock.now += 3600 * 2

    line = progress.line()

    assert len(line) <= 79, line
    assert line.startswith("124/1000 done · 0 running · 1 failed"), line


def test_off_a_terminal_nothing_is_written() -> None:
    stream, clock = io.StringIO(), _Clock()
    with BatchProgress(stream, total=2, clock=clock, every=0.001) as progress:
        progress.started("t0")
        progress.finished({"stop_reason": "answer"})

    assert stream.getvalue() == ""


def test_asked_off_on_a_terminal_nothing_is_written() -> None:
    terminal = _Terminal()
    with BatchProgress(terminal, total=2, on=False, every=0.001) as progress:
        progress.started("t0")

    assert terminal.getvalue() == ""


def test_the_line_moves_while_a_task_runs() -> None:
    """A long task: the redraw thread draws the elapsed time again with no result."""

    class _Watched(_Terminal):
        def __init__(self) -> None:
            super().__init__()
            self.frames = threading.Semaphore(0)

        def write(self, text: str) -> int:
            self.frames.release()
            return super().write(text)

    terminal, clock = _Watched(), _Clock()
    with BatchProgress(terminal, total=1, clock=clock, every=0.001) as progress:
        progress.started("t0")
        clock.now += 61
        # Frames drawn by the thread, with no call here; the guard only stops a hang.
        for _ in range(4):
            assert terminal.frames.acquire(timeout=30), "the line was not redrawn"

    assert "0/1 done · 1 running · 0 failed · -/min · ETA - · 1:01 elapsed" in terminal.getvalue()


def test_a_terminal_that_went_away_stops_the_line_not_the_batch() -> None:
    class _Gone(_Terminal):
        def write(self, text: str) -> int:
            raise OSError(5, "Input/output error")

    with _progress(_Gone(), _Clock(), total=1) as progress:
        progress.started("t0")
        progress.finished({"stop_reason": "answer"})


def test_batch_json_prints_one_object_and_no_progress_line(
    make_batch: Callable[..., Path],
    kit: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = make_batch()
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(3))
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)  # stderr a terminal: --json still draws none

    out = folder / "o.jsonl"
    code = main(["batch", str(folder / "agents.yaml"), str(tasks), "--out", str(out), "--json"])

    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (summary["tasks"], summary["ran"], summary["failed"]) == (3, 3, 0)
    assert summary["with_expected"] == 3
    assert terminal.getvalue() == ""


def test_batch_on_a_terminal_draws_the_line_on_stderr(
    make_batch: Callable[..., Path],
    kit: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = make_batch()
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(2))
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)

    code = main(["batch", str(folder / "agents.yaml"), str(tasks), "--out", str(folder / "o")])

    assert code == 0
    assert "2/2 done · 0 running · 0 failed" in terminal.getvalue()
    assert capsys.readouterr().out.startswith("batch: 2/2 tasks done")
