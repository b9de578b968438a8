"""Running a batch's tasks as Ray tasks on a cluster (``leanloop batch --ray [ADDRESS]``).

``ray`` is imported only here, and only when ``--ray`` is given (``pip install
'leanloop[ray]'``). ``ray.init(ADDRESS)`` joins a running cluster; without an address a
local cluster is started for the batch (``--concurrency`` CPUs, else all of them).

What travels to the workers is a folder: the one that holds the agents file and every
agent's workspace (Ray's ``working_dir``, without ``.git``, virtual environments and
caches). Each worker loads the agents file from there, so relative workspaces, a
``class:`` model or an import-path tool beside the file resolve as they do here; a
workspace is a copy on the worker, and what a task writes into it stays there. ``${VAR}``
references of the file are read on the workers, from their environment.

Each task is one Ray task with ``max_retries``: when its worker dies (killed, out of
memory, its node lost) Ray runs it again elsewhere. Workers only *return* result lines;
the driver alone writes the results file, once per task id, so a retried task can never
write a line twice, and a task whose every try died writes none (the next run of the batch
runs it again).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from leanloop.batch.approvals import BatchApprovals
from leanloop.batch.runner import OnResult, OnStart, run_task
from leanloop.batch.tasks import BatchTask
from leanloop.exceptions import LeanloopError

if TYPE_CHECKING:
    from leanloop.batch.results import ResultsFile
    from leanloop.spec.types import AgentSpec

__all__ = ["RAY_EXTRA", "RayOutcome", "run_ray", "shipped_folder"]

RAY_EXTRA = "leanloop batch --ray needs Ray: pip install 'leanloop[ray]'"
"""The line printed when ``--ray`` is given and Ray is not installed."""

MAX_RETRIES = 3
"""Times Ray runs a task again after its worker died (Ray's ``max_retries``)."""

_EXCLUDES = [".git", ".venv", "venv", "__pycache__", "node_modules", ".mypy_cache", ".pytest_cache"]
"""Never shipped to workers: large and of no use to an agent's run."""

_log = logging.getLogger(__name__)


@dataclass
class RayOutcome:
    """What the Ray run ended with: the tasks without a result, and why each."""

    lost: list[tuple[BatchTask, str]] = field(default_factory=list)


def shipped_folder(agents_file: Path, specs: Mapping[str, AgentSpec]) -> Path:
    """The folder shipped to the workers: the agents file's, and above every workspace."""
    folders = [agents_file.absolute().parent]
    folders += [spec.workspace for spec in specs.values() if spec.workspace is not None]
    return Path(os.path.commonpath([os.fspath(folder) for folder in folders]))


def run_ray(
    agents_file: Path,
    specs: Mapping[str, AgentSpec],
    tasks: Sequence[BatchTask],
    results: ResultsFile,
    *,
    address: str | None,
    concurrency: int | None,
    on_result: OnResult | None = None,
    on_start: OnStart | None = None,
    on_lost: OnStart | None = None,
    approvals: BatchApprovals | None = None,
) -> RayOutcome:
    """Run ``tasks`` on a Ray cluster, writing each result here as it comes back.

    Args:
        agents_file: The agents file (shipped to the workers with its folder).
        specs: Its agents, loaded here (to find the workspaces to ship).
        tasks: The tasks to run (those without a result yet).
        results: The results file; only this process writes it.
        address: The cluster to join; ``None`` starts a local cluster.
        concurrency: Tasks in flight at once (and a local cluster's CPUs); ``None``:
            the cluster's CPUs.
        on_result: Called with each result once it is written.
        on_start: Called with each task as it is submitted (it is in flight from then).
        on_lost: Called with each task that came back without a result.
        approvals: The decisions on calls that ask a person (sent to each worker).

    Returns:
        The tasks left without a result: their worker died on every try, or the worker
        could not run them (the error says why).

    Raises:
        LeanloopError: Ray is not installed, the cluster could not be joined or started,
            or a result could not be written (a full disk).
    """
    try:
        import ray  # noqa: PLC0415 - the optional extra, only for --ray
        from ray.exceptions import RayError  # noqa: PLC0415
    except ImportError:
        raise LeanloopError(RAY_EXTRA) from None
    root = shipped_folder(agents_file, specs)
    relative = os.path.relpath(agents_file.absolute(), root)
    options: dict[str, Any] = {
        "runtime_env": {"working_dir": os.fspath(root), "excludes": _EXCLUDES},
        "logging_level": logging.WARNING,
        "log_to_driver": False,  # a worker's failure comes back as the task's error
    }
    if address is None:
        options.update(num_cpus=concurrency, include_dashboard=False)
    try:
        ray.init(address, **options)
    except Exception as exc:  # Ray's own errors vary by version: one line, not a trace
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        msg = f"could not start or join {where}: {exc}"
        raise LeanloopError(msg) from None
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]
        # A local cluster has `concurrency` CPUs, which caps the tasks running at once: twice
        # as many submitted keeps each worker fed while the driver writes a result. On a
        # joined cluster of more CPUs, `concurrency` in flight is the cap itself.
        window = 2 * cpus if address is None else (concurrency or 2 * cpus)
        remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(run_on_worker)
        shipped_approvals = approvals.to_dict() if approvals is not None else None
        outcome = RayOutcome()
        queue: Iterator[BatchTask] = iter(tasks)
        pending: dict[Any, BatchTask] = {}

        def submit() -> None:
            for task in islice(queue, window - len(pending)):
                pending[remote.remote(relative, task.to_dict(), shipped_approvals)] = task
                if on_start is not None:
                    on_start(task)

        submit()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    record = ray.get(ref)
                except RayError as exc:
                    why = (
                        str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    )
                    _log.warning("task %r (line %d) has no result: %s", task.id, task.line, why)
                    outcome.lost.append((task, why))
                    if on_lost is not None:
                        on_lost(task)
                    continue
                written = results.write(record)  # a full disk raises: the batch ends
                if on_result is not None:
                    on_result(written)
            submit()
        return outcome
    finally:
        ray.shutdown()


_specs: dict[tuple[str, str], AgentSpec] = {}
"""The agents a worker process has loaded, by (agents file, agent): loaded once per process."""


def run_on_worker(
    agents_file: str, task: Mapping[str, Any], approvals: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Run one task on a Ray worker; return its result line.

    The worker's folder is the shipped one, so ``agents_file`` (relative to it) loads
    with its workspaces and modules. A task's own failure is its result (``failed``);
    an agents file that cannot be loaded there raises (the task gets no result).

    Args:
        agents_file: The agents file, relative to the shipped folder.
        task: The task, as :meth:`BatchTask.to_dict` made it.
        approvals: The batch's decisions, as :meth:`BatchApprovals.to_dict` made them.

    Returns:
        The result line, as :func:`leanloop.batch.runner.run_task` makes it.
    """
    from leanloop.spec import load_specs  # noqa: PLC0415

    batch_task = BatchTask(**task)
    key = (agents_file, batch_task.agent)
    if key not in _specs:
        _specs[key] = load_specs(agents_file, only=batch_task.agent)[batch_task.agent]
    decisions = BatchApprovals.from_dict(approvals) if approvals is not None else None
    return asyncio.run(run_task(_specs[key], batch_task, decisions))
