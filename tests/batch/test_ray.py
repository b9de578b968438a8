"""``leanloop batch --ray`` on a local Ray cluster of 2 workers (needs ``leanloop[ray]``).

This file imports ``ray`` at the top on purpose: where Ray is missing it fails, it is not
skipped (CI installs the extra for it). The driver is a real ``python -m leanloop``
process, the workers Ray's own processes; one worker is killed (SIGKILL) while it runs a
task, and the batch must still end with every task's result, once, and the same results
as a run of one task at a time.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import ray  # noqa: F401 - fail, never skip, where the extra is missing

# A local Ray cluster takes both cores for about a minute: a check of the full run
# (ADR 0021), like the real-model suites; the dev extra installs Ray for it.
pytestmark = pytest.mark.full

TASKS = 50
DEADLINE_S = 240.0


def test_ray_runs_the_batch_as_one_task_at_a_time_does_even_when_a_worker_dies(
    make_batch: Callable[..., Path], kit: Any, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    folder = make_batch(delay=0.3, mark_dir=str(marks))
    tasks = kit.write_jsonl(folder / "tasks.jsonl", kit.quiz_tasks(TASKS))
    args = ("batch", "agents.yaml", tasks.name, "--out")

    driver = kit.process(*args, "ray.jsonl", "--ray", "--concurrency", "2", cwd=folder)
    killed = None
    try:
        deadline = time.monotonic() + DEADLINE_S
        while killed is None:  # the first worker that starts a model call is killed in it
            assert driver.poll() is None, driver.communicate()
            assert time.monotonic() < deadline, "no worker ran a task"
            pids = sorted(int(p.name) for p in marks.iterdir())
            if pids:
                killed = pids[0]
                os.kill(killed, signal.SIGKILL)
            else:
                time.sleep(0.05)
        stdout, stderr = driver.communicate(timeout=DEADLINE_S)
    finally:
        driver.kill()
    assert driver.returncode == 0, stderr
    assert f"batch: {TASKS}/{TASKS} tasks done ({TASKS} this run, 0 earlier)" in stdout
    ray_rows = kit.read_jsonl(folder / "ray.jsonl")
    ids = [row["id"] for row in ray_rows]
    assert len(ids) == len(set(ids)) == TASKS  # nothing lost, nothing twice
    assert len({int(p.name) for p in marks.iterdir()} - {killed}) >= 1  # retried elsewhere

    one = kit.process(*args, "one.jsonl", "--concurrency", "1", cwd=folder)
    _, stderr = one.communicate(timeout=DEADLINE_S)
    assert one.returncode == 0, stderr
    assert kit.comparable(ray_rows) == kit.comparable(kit.read_jsonl(folder / "one.jsonl"))
