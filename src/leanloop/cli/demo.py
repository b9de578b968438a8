"""``leanloop demo``: the example agent answering a question with the local model.

Sets up the local model if needed, starts the server unless one already runs on the
port, runs the agent in ``leanloop/examples/agents.yaml`` (package data: it ships in the
wheel with its ``workspace/``) and returns the answer with the run report. A server the
demo started is stopped again, also on Ctrl-C; a server that was already running is left
alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.install import SetupOptions, setup_local_model
from leanloop.localmodel.model import ModelPin
from leanloop.localmodel.paths import DEFAULT_PORT, CachePaths, cache_paths
from leanloop.localmodel.server import ServerOptions, server_status, start_server, stop_server

__all__ = ["DEMO_QUESTION", "PORT_ENV", "DemoResult", "default_agents_file", "run_demo"]

DEMO_QUESTION = (
    "Read config/service.toml and tell me which port the service listens on and who owns it."
)
PORT_ENV = "LEANLOOP_LOCAL_PORT"
"""The example YAML reads the server's port from this variable."""


@dataclass(frozen=True, kw_only=True)
class DemoResult:
    """The demo's answer, its run report and how long it took."""

    answer: str
    report: Mapping[str, Any] = field(default_factory=dict)
    started_server: bool
    seconds: float


def default_agents_file() -> Path:
    """The demo agents file shipped inside the package: ``leanloop/examples/agents.yaml``.

    It is package data (next to its ``workspace/``), so it is there in a source checkout,
    an editable install and an installed wheel alike.
    """
    return Path(__file__).resolve().parents[1] / "examples" / "agents.yaml"


def run_demo(
    question: str = DEMO_QUESTION,
    *,
    port: int = DEFAULT_PORT,
    agents_file: Path | None = None,
    paths: CachePaths | None = None,
    setup: SetupOptions | None = None,
    model: ModelPin | None = None,
    progress: Callable[[str], None] | None = None,
) -> DemoResult:
    """Run the demo agent against the local server on ``port``.

    Args:
        model: A catalog model (``--model``); ``None`` keeps ``setup``'s pin, the default
            model unless a test injects another. With a model named, a server already
            running on the port must serve that model's file.

    Raises:
        LocalModelError: Setup or the server failed, the example file is missing, or the
            server on the port serves another model than the one named.
    """
    started_at = time.monotonic()
    where = paths or cache_paths()
    file = agents_file or default_agents_file()
    if not file.is_file():
        msg = f"the demo agent file {file} is missing; pass --file PATH"
        raise LocalModelError(msg)
    model_file: Path | None = None
    if model is not None:
        setup = dataclasses.replace(setup or SetupOptions(), pin=model)
        model_file = where.model_path(model.filename)
    setup_local_model(where, options=setup, progress=progress)
    started = False
    status = server_status(port, paths=where)
    if status.running and model is not None and Path(status.model or "").name != model.filename:
        msg = (
            f"the llama-server on port {port} serves {status.model}, not {model.name}; "
            "stop it or choose another --port"
        )
        raise LocalModelError(msg)
    if not status.running:
        if progress:
            progress(f"starting llama-server on port {port}")
        start_server(ServerOptions(port=port, detached=False, model=model_file), paths=where)
        started = True
    try:
        answer, report = _ask(file, question, port)
    finally:
        if started:  # Ctrl-C lands here too: stop only what the demo started
            stop_server(port, paths=where, grace=5.0)
    return DemoResult(
        answer=answer,
        report=report,
        started_server=started,
        seconds=time.monotonic() - started_at,
    )


def _ask(file: Path, question: str, port: int) -> tuple[str, Mapping[str, Any]]:
    os.environ[PORT_ENV] = str(port)
    # Imported late: the agent module is heavy and the local commands do not need it.
    from leanloop.agent import LLMAgent  # noqa: PLC0415

    agent = LLMAgent.from_file(file, name="demo")
    message = asyncio.run(agent.ainvoke(question))
    content = message.content
    answer = content if isinstance(content, str) else str(content)
    report = message.response_metadata.get("leanloop", {})
    return answer.strip(), report if isinstance(report, Mapping) else {}
