"""The suite's workspace: large logs, configs and sources with known facts spread across them.

Everything comes from one ``random.Random(seed)``, so a seed always writes the same bytes.
Each file is mostly noise of its kind (request logs, service configs, job registrations)
with a few *decoys*: lines that carry the same keys as the facts the tasks ask for, with
other values. Each *needle* is one line holding one fact, written as ``key=value`` (logs,
sources) or ``key: value`` (YAML flow maps), placed at a random line away from the top of
the file, so that a first-line summary never shows it.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FileKind", "Needle", "WorkspaceFacts", "build_workspace"]

FileKind = str
"""``log``, ``config`` or ``source``."""

_SERVICES = ("ledger", "billing", "search", "ingest", "notify", "auth", "catalog", "report")
_ANIMALS = ("orca", "heron", "lynx", "marten", "ibis", "gecko", "otter", "kestrel", "wren")
_ROUTES = ("/v1/items", "/v1/orders", "/v2/users", "/v1/search", "/health", "/v1/invoices")
_NEEDLE_MIN_LINE = 12
"""Needles and decoys go below this line: a trimmed result keeps its first line only."""


@dataclass(frozen=True)
class Needle:
    """One fact a task needs: its key, value, the file holding it, and what singles it out."""

    key: str
    value: str
    path: str
    subject: str
    """What the fact is about (a service, a job, a database), as the question names it."""
    separator: str = "="

    @property
    def fragment(self) -> str:
        """The text that shows the fact, exactly as the file has it (``key=value``)."""
        return f"{self.key}{self.separator}{self.value}"


@dataclass(frozen=True)
class _FileSpec:
    path: str
    kind: FileKind
    keys: tuple[str, ...]
    size: tuple[int, int]
    """Smallest and largest size in bytes."""


@dataclass
class WorkspaceFacts:
    """The written workspace: where it is, its files, and the needles the tasks use."""

    root: Path
    seed: int
    files: dict[str, int] = field(default_factory=dict)
    """Path → size in bytes."""
    needles: list[Needle] = field(default_factory=list)

    def needles_in(self, path: str) -> list[Needle]:
        """The needles written into ``path``."""
        return [n for n in self.needles if n.path == path]


# Which keys each kind of file carries, and how a value of each key looks.
_VALUE_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "release_code": lambda r: f"{_letters(r, 2)}-{r.randint(1000, 9999)}",
    "rollback_id": lambda r: f"RB-{r.randint(10000, 99999)}",
    "incident_ref": lambda r: f"INC-{r.randint(10000, 99999)}",
    "build_tag": lambda r: f"b{r.getrandbits(28):07x}",
    "db_port": lambda r: str(r.randint(3000, 9999)),
    "owner_team": lambda r: f"team-{r.choice(_ANIMALS)}-{r.randint(10, 99)}",
    "queue_name": lambda r: f"q-{r.choice(_SERVICES)}-{r.randint(100, 999)}",
    "cache_ttl": lambda r: f"{r.randint(11, 97)}m{r.randint(10, 59)}s",
    "retry_limit": lambda r: f"{r.randint(101, 999)}",
    "batch_size": lambda r: f"{r.randint(1001, 9999)}",
    "api_version": lambda r: f"v{r.randint(2, 9)}.{r.randint(10, 99)}.{r.randint(10, 99)}",
    "lock_timeout": lambda r: f"{r.randint(101, 999)}ms",
}


def _letters(rng: random.Random, count: int) -> str:
    return "".join(rng.choice(string.ascii_uppercase) for _ in range(count))


def _file_specs(scale: float) -> list[_FileSpec]:
    def size(low: int, high: int) -> tuple[int, int]:
        return int(low * scale), int(high * scale)

    logs = [
        _FileSpec(f"logs/deploy-{i:02d}.log", "log", ("release_code", "rollback_id"), size(30, 60))
        for i in range(1, 4)
    ]
    logs += [
        _FileSpec(f"logs/worker-{i:02d}.log", "log", ("incident_ref",), size(30, 60))
        for i in range(1, 4)
    ]
    logs += [
        _FileSpec(f"logs/api-{i:02d}.log", "log", ("build_tag",), size(30, 60)) for i in range(1, 5)
    ]
    configs = [
        _FileSpec("config/databases.yaml", "config", ("db_port",), size(12, 24)),
        _FileSpec("config/teams.yaml", "config", ("owner_team",), size(12, 24)),
        _FileSpec("config/queues.yaml", "config", ("queue_name",), size(12, 24)),
        _FileSpec("config/services.yaml", "config", ("cache_ttl",), size(12, 24)),
    ]
    sources = [
        _FileSpec("src/jobs/billing.py", "source", ("retry_limit",), size(16, 32)),
        _FileSpec("src/jobs/ingest.py", "source", ("batch_size",), size(16, 32)),
        _FileSpec("src/clients/api.py", "source", ("api_version",), size(16, 32)),
        _FileSpec("src/locks/scheduler.py", "source", ("lock_timeout",), size(16, 32)),
    ]
    return [*logs, *configs, *sources]


def build_workspace(
    root: Path, *, seed: int = 20_240_601, scale: float = 1_000.0, needles_per_file: int = 3
) -> WorkspaceFacts:
    """Write the workspace under ``root`` (created) and return its facts.

    Args:
        root: The folder to write into; existing files of the same names are replaced.
        seed: The seed of every random choice.
        scale: Bytes per unit of the file size ranges (1,000 makes logs of 30–60 KB).
        needles_per_file: Needles written into each file (tasks pick from them).

    Returns:
        The files written and every needle, in a fixed order.
    """
    rng = random.Random(seed)
    facts = WorkspaceFacts(root=root, seed=seed)
    used: set[str] = set()
    for spec in _file_specs(scale):
        target_size = rng.randint(*spec.size)
        needles = [_new_needle(rng, spec, used) for _ in range(needles_per_file)]
        lines = _write_lines(rng, spec, target_size, needles, used)
        path = root / spec.path
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "\n".join(lines) + "\n"
        path.write_text(text, encoding="utf-8")
        facts.files[spec.path] = len(text.encode("utf-8"))
        facts.needles.extend(needles)
    return facts


def _unique_value(rng: random.Random, key: str, used: set[str]) -> str:
    while True:
        value = _VALUE_MAKERS[key](rng)
        if value not in used:
            used.add(value)
            return value


def _new_needle(rng: random.Random, spec: _FileSpec, used: set[str]) -> Needle:
    key = rng.choice(spec.keys)
    subject = f"{rng.choice(_SERVICES)}-{rng.choice(_ANIMALS)}"
    while subject in used:
        subject = f"{rng.choice(_SERVICES)}-{rng.choice(_ANIMALS)}"
    used.add(subject)
    separator = ": " if spec.kind == "config" else "="
    return Needle(key, _unique_value(rng, key, used), spec.path, subject, separator)


def _write_lines(
    rng: random.Random, spec: _FileSpec, size: int, needles: list[Needle], used: set[str]
) -> list[str]:
    decoys = []
    for key in spec.keys:
        for _ in range(rng.randint(3, 6)):
            subject = f"{rng.choice(_SERVICES)}-{rng.choice(_ANIMALS)}-{rng.randint(2, 9)}"
            decoy = Needle(key, _unique_value(rng, key, used), spec.path, subject)
            decoys.append(_FACT_LINE[spec.kind](rng, decoy, is_needle=False))
    facts = [_FACT_LINE[spec.kind](rng, n, is_needle=True) for n in needles] + decoys
    noise = _NOISE[spec.kind]
    lines: list[str] = [_HEADERS[spec.kind](spec.path)]
    total = len(lines[0]) + 1
    # A small file still gets room for every fact below the top, among noise.
    while total < size or len(lines) < _NEEDLE_MIN_LINE + 2 * len(facts):
        line = noise(rng, len(lines))
        lines.append(line)
        total += len(line) + 1
    # Facts replace noise lines at distinct random places below the top of the file.
    places = rng.sample(range(_NEEDLE_MIN_LINE, len(lines)), len(facts))
    for place, line in zip(places, facts, strict=True):
        lines[place] = line
    return lines


def _stamp(rng: random.Random, number: int) -> str:
    seconds = number * 7 + rng.randint(0, 6)
    return f"2024-06-01T{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


def _log_noise(rng: random.Random, number: int) -> str:
    level = rng.choices(("INFO ", "WARN ", "ERROR", "DEBUG"), weights=(70, 12, 6, 12))[0]
    route = rng.choice(_ROUTES)
    return (
        f"{_stamp(rng, number)} {level} [worker-{rng.randint(1, 8)}] GET {route}/"
        f"{rng.randint(1, 99_999)} status={rng.choice((200, 200, 200, 201, 404, 500))} "
        f"latency_ms={rng.randint(2, 900)} request_id={rng.getrandbits(32):08x}"
    )


def _config_noise(rng: random.Random, number: int) -> str:
    name = f"{rng.choice(_SERVICES)}-{rng.choice(_ANIMALS)}-{number}"
    return (
        f"  - {{name: {name}, region: eu-west-{rng.randint(1, 3)}, replicas: "
        f"{rng.randint(1, 12)}, tier: {rng.choice(('gold', 'silver', 'bronze'))}, "
        f"enabled: {rng.choice(('true', 'false'))}}}"
    )


def _source_noise(rng: random.Random, number: int) -> str:
    kind = number % 4
    name = f"{rng.choice(_SERVICES)}_{rng.choice(_ANIMALS)}_{number}"
    if kind == 0:
        return f"def handle_{name}(event, context=None):"
    if kind == 1:
        return f"    payload = normalise(event, fields={rng.randint(2, 40)}, strict=False)"
    if kind == 2:
        return f"    # keeps {name} idempotent across retries of the same delivery"
    return f"    return dispatch(payload, route='{rng.choice(_ROUTES)}')"


def _log_fact(rng: random.Random, needle: Needle, *, is_needle: bool) -> str:
    # The needle is the accepted production event; decoys are staging or rejected ones.
    env, status = (
        ("prod", "accepted")
        if is_needle
        else rng.choice((("staging", "accepted"), ("prod", "rejected"), ("qa", "accepted")))
    )
    level = "ERROR" if needle.key == "incident_ref" else "INFO "
    return (
        f"{_stamp(rng, 0)} {level} [deployer] service={needle.subject} env={env} "
        f"status={status} {needle.fragment}"
    )


def _config_fact(rng: random.Random, needle: Needle, *, is_needle: bool) -> str:
    del rng
    state = "live" if is_needle else "retired"
    return f"  - {{name: {needle.subject}, state: {state}, {needle.fragment}}}"


def _source_fact(rng: random.Random, needle: Needle, *, is_needle: bool) -> str:
    del rng
    flag = "True" if is_needle else "False"
    return f'register_job("{needle.subject}", active={flag}, {needle.fragment})'


_NOISE: dict[FileKind, Callable[[random.Random, int], str]] = {
    "log": _log_noise,
    "config": _config_noise,
    "source": _source_noise,
}
_FACT_LINE: dict[FileKind, Callable[..., str]] = {
    "log": _log_fact,
    "config": _config_fact,
    "source": _source_fact,
}
_HEADERS: dict[FileKind, Callable[[str], str]] = {
    "log": lambda path: f"# {path}: request log, one event per line",
    "config": lambda path: f"# {path}: inventory (YAML flow maps, one entry per line)\nitems:",
    "source": lambda path: f'"""{path}: job handlers and their registrations."""',
}
