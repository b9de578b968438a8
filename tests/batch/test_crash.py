"""A batch killed mid-run (SIGKILL: no cleanup at all) loses no finished result, and a
run again finishes it without a duplicate: a real child process, killed once lines appear.

The quiz model's ``delay`` is real time here (the child runs on the real clock): it only
keeps tasks in flight while the process is killed, nothing waits for a timeout.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

TASKS = 16
KILL_AFTER = 4
"""Results on disk when the process is killed."""
DEADLINE_S = 60.0


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def test_a_killed_batch_resumes_without_loss_or_duplicates(
    make_batch: Callable[..., Path], kit: Any
) -> None:
    folder = make_batch(delay=0.2)
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(TASKS))
    out = folder / "out.jsonl"
    args = ("batch", "agents.yaml", tasks.name, "--out", out.name, "--concurrency", "2")
    child = kit.process(*args, cwd=folder)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while len(_lines(out)) < KILL_AFTER:
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "no results appeared"
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.communicate()
    before = _lines(out)
    assert KILL_AFTER <= len(before) < TASKS, "the batch was not killed mid-run"
    assert all(line.endswith(b"\n") for line in before)  # whole lines only

    again = kit.process(*args, cwd=folder)
    stdout, stderr = again.communicate(timeout=DEADLINE_S)
    assert again.returncode == 0, stderr
    after = _lines(out)
    assert after[: len(before)] == before  # nothing written before the crash was touched
    ids = [row["id"] for row in kit.read_jsonl(out)]
    assert sorted(ids) == sorted(f"t{i}" for i in range(TASKS))  # every task, once
    assert len(ids) == len(set(ids))
    assert (
        f"{TASKS}/{TASKS} tasks done ({TASKS - len(before)} this run, {len(before)} earlier)"
        in stdout
    )
