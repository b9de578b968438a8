"""Logs with a few known relevant lines, shared by the real-model pruning check
(``robot/pruning_real.robot``) and the ranking benchmark (:mod:`benchmarks.ranking_recall`).

Each function returns the log's lines and the 0-based indices of the relevant ones; the
same seed gives the same log, so both places measure on the very same text.
"""

from __future__ import annotations

import json
import random

__all__ = ["deadlock_log", "json_event_log"]

_MODULES = ("scheduler", "worker", "db.pool", "http", "cache", "queue")
_SERVICES = ("billing", "search", "gateway", "auth", "mailer", "indexer")
_DEADLOCKS = (
    "2026-11-30 02:08:20,412 ERROR [worker-3] db.pool: deadlock detected on table "
    "jobs (tx 88121 waits for tx 88117); transaction rolled back",
    "2026-11-30 02:16:40,090 ERROR [worker-1] db.pool: deadlock detected on table "
    "batches (tx 90211 waits for tx 90207); transaction rolled back",
    "2026-11-30 02:25:00,733 ERROR [worker-5] db.pool: deadlock detected on table "
    "jobs (tx 91500 waits for tx 91498); nightly job aborted",
)
_CERTIFICATE_ERRORS = (
    '{"ts": "2026-12-01T04:01:22.118Z", "level": "error", "service": "gateway", '
    '"msg": "TLS handshake failed: certificate expired", "peer": "10.0.4.17", '
    '"cert": "CN=api.internal, expired 2026-11-30"}',
    '{"ts": "2026-12-01T04:05:46.902Z", "level": "error", "service": "gateway", '
    '"msg": "TLS handshake failed: certificate expired", "peer": "10.0.4.22", '
    '"cert": "CN=api.internal, expired 2026-11-30"}',
    '{"ts": "2026-12-01T04:10:10.377Z", "level": "error", "service": "auth", '
    '"msg": "upstream gateway unreachable after certificate errors", "retries": 5}',
)


def deadlock_log(count: int = 400) -> tuple[list[str], list[int]]:
    """``count`` INFO lines (about 50 KB for 400) with three ``ERROR … deadlock`` lines at
    a quarter, half and three quarters."""
    rnd = random.Random(7)
    lines = []
    for i in range(count):
        module = rnd.choice(_MODULES)  # drawn first: the measured logs were made so
        lines.append(
            f"2026-11-30 02:{i // 12 % 60:02d}:{i * 5 % 60:02d},{rnd.randint(0, 999):03d} "
            f"INFO  [worker-{rnd.randint(1, 8)}] {module}: processed job {10000 + i} "
            f"batch={rnd.randint(100, 999)} rows={rnd.randint(1, 5000)} "
            f"took {rnd.randint(5, 900)}ms status=ok queue=nightly"
        )
    return _place(lines, _DEADLOCKS, [k * count // 4 for k in (1, 2, 3)])


def json_event_log(count: int = 640) -> tuple[list[str], list[int]]:
    """``count`` JSON events (about 71 KB for 640) with three error events about a
    certificate at lines 83, 347 and 611 (the first fifth, the middle and the end)."""
    rnd = random.Random(11)
    lines = []
    for i in range(count):
        stamp = f"2026-12-01T04:{i // 60 % 60:02d}:{i % 60:02d}.{rnd.randint(0, 999):03d}Z"
        event = {
            "ts": stamp,
            "level": "info",
            "svc": rnd.choice(_SERVICES),
            "route": f"/api/v2/items/{rnd.randint(1000, 9999)}",
            "ms": rnd.randint(3, 400),
        }
        lines.append(json.dumps(event))
    return _place(lines, _CERTIFICATE_ERRORS, [82, 346, 610])


def _place(
    lines: list[str], relevant: tuple[str, ...], at: list[int]
) -> tuple[list[str], list[int]]:
    for index, line in zip(at, relevant, strict=True):
        lines[index] = line
    return lines, at
