"""The tasks: questions whose answers need two or three facts from different large files.

A task has the question a user would ask, the needles that answer it, and the reader's
fixed plan: which files to read whole (page by page) and which searches to run. The plan
is the same for every context strategy, so only what each strategy keeps differs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from benchmarks.context_suite.workspace import Needle, WorkspaceFacts

__all__ = ["ReadFile", "ReadLines", "Search", "Step", "Task", "make_tasks", "probe_task"]


@dataclass(frozen=True)
class ReadFile:
    """Read a whole file, one page after another, looking for ``keys``."""

    path: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class Search:
    """Search ``path`` for ``pattern`` once, looking for ``keys`` in the matches."""

    pattern: str
    path: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class ReadLines:
    """Read one small window of a file (the overhead probe's step)."""

    path: str
    offset: int
    limit: int


Step = ReadFile | Search | ReadLines


@dataclass(frozen=True)
class Task:
    """One question, its answer's needles and the reader's plan."""

    id: str
    question: str
    needles: tuple[Needle, ...]
    steps: tuple[Step, ...]


# Kinds of files each task draws from, in order; the tasks cycle through these shapes.
_SHAPES: tuple[tuple[str, ...], ...] = (
    ("deploy", "config", "source"),
    ("api", "worker", "config"),
    ("config", "source"),
    ("deploy", "api", "source"),
    ("worker", "config", "source"),
    ("api", "source"),
    ("deploy", "config"),
    ("api", "config", "source"),
    ("worker", "deploy"),
    ("source", "config", "api"),
    ("deploy", "worker", "source"),
    ("config", "api", "deploy"),
)
_KIND_PREFIX = {
    "deploy": "logs/deploy-",
    "worker": "logs/worker-",
    "api": "logs/api-",
    "config": "config/",
    "source": "src/",
}


def make_tasks(facts: WorkspaceFacts, *, count: int = 12, seed: int = 7) -> list[Task]:
    """Build ``count`` tasks over ``facts``, each needle used by one task at most.

    Worker logs are searched for ``ERROR`` (the incidents are error lines); every other
    file is read whole, except that every fourth config fact is found by a search for its
    key across ``config/``.
    """
    rng = random.Random(seed)
    free = {n.path: list(facts.needles_in(n.path)) for n in facts.needles}
    tasks = []
    for number in range(1, count + 1):
        shape = _SHAPES[(number - 1) % len(_SHAPES)]
        picked = _pick_needles(rng, shape, free)
        steps = tuple(_step_for(needle, number) for needle in picked)
        tasks.append(
            Task(id=f"T{number:02d}", question=_question(picked), needles=picked, steps=steps)
        )
    return tasks


def _pick_needles(
    rng: random.Random, shape: tuple[str, ...], free: dict[str, list[Needle]]
) -> tuple[Needle, ...]:
    picked: list[Needle] = []
    for kind in shape:
        paths = sorted(
            p
            for p, left in free.items()
            if p.startswith(_KIND_PREFIX[kind]) and left and p not in {n.path for n in picked}
        )
        path = rng.choice(paths)
        picked.append(free[path].pop(0))
    return tuple(picked)


def _step_for(needle: Needle, number: int) -> Step:
    if needle.path.startswith("logs/worker-"):
        return Search("ERROR", needle.path, (needle.key,))
    if needle.path.startswith("config/") and number % 4 == 0:
        return Search(needle.key, "config", (needle.key,))
    return ReadFile(needle.path, (needle.key,))


def _question(needles: tuple[Needle, ...]) -> str:
    parts = [f"({i}) {_ask(n)}" for i, n in enumerate(needles, start=1)]
    return (
        "Answer from the workspace files, quoting each value exactly: "
        + "; ".join(parts)
        + ". Each fact is in the file named."
    )


def _ask(needle: Needle) -> str:
    if needle.path.startswith("logs/"):
        return (
            f"in {needle.path}, the `{needle.key}` of service={needle.subject} "
            "with env=prod status=accepted"
        )
    if needle.path.startswith("config/"):
        return f"in {needle.path}, the `{needle.key}` of the live entry {needle.subject}"
    return f"in {needle.path}, the `{needle.key}` of the active job {needle.subject}"


def probe_task(facts: WorkspaceFacts, *, steps: int = 50) -> Task:
    """A task of ``steps`` small reads, so that the history reaches about 100 messages.

    Used to measure the framework's own time per step at a long history; it has no
    needles, so every answer counts as correct.
    """
    path = "logs/deploy-01.log"
    windows = tuple(ReadLines(path, 1 + 6 * i, 6) for i in range(steps))
    del facts  # the probe reads a file every workspace has
    question = f"Read {path} six lines at a time, {steps} times, then stop."
    return Task(id="probe", question=question, needles=(), steps=windows)
