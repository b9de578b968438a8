"""Robot keywords for ``robot/pruning_real.robot``: pruning a 50 KB log with the real model.

The main model is scripted (``leanloop.testing:ScriptedChatModel``: it calls ``read_file``
with a focus, then answers), so the test does not depend on what a small model chooses to
call; the pruning model is the real llama-server. The run goes through the Python API with
a callback that records every chat request and leanloop's custom events, and a log handler
that keeps leanloop's pruning log lines (chunk count, characters per token and their
source).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.outputs import LLMResult

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2]))  # the checkout: benchmarks.sample_logs

import yaml
from agents_file import WORKSPACE_TOOLS
from benchmarks.sample_logs import deadlock_log, json_event_log
from PruningLibrary import RequestRecorder

from leanloop import events
from leanloop.agent import LLMAgent
from leanloop.budget.server_tokens import ServerTokenCounter
from leanloop.pruning.prompt import estimate_chars_per_token, sample_text, split_raw_lines
from leanloop.tools.workspace import workspace_tools

__all__ = ["PruningRealLibrary"]

# One loop for every keyword: langchain_openai caches its async HTTP client per base URL
# for the whole process, and a client opened on one loop fails on the next.
_LOOP = asyncio.new_event_loop()


def _write(path: Path, lines: list[str], relevant: list[int]) -> list[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [lines[i] for i in relevant]


class _Recorder(RequestRecorder):
    """Keeps the events and requests (see ``RequestRecorder``) and every answer's text."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[str] = []

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Record the text of every answer (the extraction answers are what the test logs)."""
        for batch in response.generations:
            self.answers.extend(str(g.text) for g in batch)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()}")


class PruningRealLibrary:
    """Workspace, agents file and run helpers for the real-model pruning suite."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def write_deadlock_log(self, folder: str, lines: int = 400) -> list[str]:
        """Write ``<folder>/workspace/app.log`` (:func:`benchmarks.sample_logs.deadlock_log`);
        returns its three ERROR lines."""
        return _write(Path(folder) / "workspace" / "app.log", *deadlock_log(int(lines)))

    def write_json_log(self, folder: str, lines: int = 640) -> list[str]:
        """Write ``<folder>/workspace/events.jsonl``
        (:func:`benchmarks.sample_logs.json_event_log`); returns its three error events."""
        return _write(Path(folder) / "workspace" / "events.jsonl", *json_event_log(int(lines)))

    def read_file_output(self, folder: str, limit: int = 400, path: str = "app.log") -> str:
        """What ``read_file(path=..., limit=...)`` returns (the first page a model gets)."""
        reader = workspace_tools(Path(folder) / "workspace")[0]
        return str(reader.invoke({"path": path, "limit": int(limit)}))

    def file_size(self, folder: str, path: str = "app.log") -> int:
        """Characters of the workspace file ``path`` (what a pruned read reads on to)."""
        return len((Path(folder) / "workspace" / path).read_text(encoding="utf-8"))

    def chars_per_token_of(self, text: str, llama_url: str) -> dict[str, float | None]:
        """The numbered sample's characters per token: counted by the server, and estimated."""
        sample = sample_text(split_raw_lines(text), 6_000)
        counted = _LOOP.run_until_complete(
            ServerTokenCounter(timeout=30.0).chars_per_token(llama_url, sample)
        )
        estimated = estimate_chars_per_token(sample, ceiling=3.3)
        return {"server": counted, "estimate": round(estimated, 3)}

    def write_real_pruning_agents_file(
        self,
        folder: str,
        llama_url: str,
        focus: str,
        pruning_timeout: float = 240,
        pruning_max_tokens: int = 256,
        pruning_concurrency: int = 1,
        pruning_deadline: float = 240,
        path: str = "app.log",
        answer: str = "Three deadlocks stopped the job.",
    ) -> str:
        """Write ``<folder>/agents.yaml``: a scripted main model and the real pruning model.

        The main model calls ``read_file`` on ``path`` with ``focus`` as
        ``output_prune_context`` and no ``limit``, as small models call it, then answers
        ``answer``.
        """
        call = {"name": "read_file", "args": {"path": path, "output_prune_context": focus}}
        document = {
            "version": 1,
            "models": {
                "main": {
                    "class": "leanloop.testing:ScriptedChatModel",
                    "kwargs": {"replies": [{"tool_calls": [call]}, answer]},
                },
                "pruner": {
                    "provider": "openai-compatible",
                    "model": "local-test",
                    "base_url": llama_url,
                    "api_key": "none",
                    "temperature": 0,
                    "max_tokens": int(pruning_max_tokens),
                    "timeout": 900,
                },
            },
            "agents": {
                "reader": {
                    "model": "main",
                    "system_prompt": "You answer questions about the files in the workspace.",
                    "tools": list(WORKSPACE_TOOLS),
                    "workspace": "./workspace",
                    "max_rounds": 3,
                    "allow_tool_output_pruning": True,
                    "pruning_model": "pruner",
                    "pruning_timeout": float(pruning_timeout),
                    "pruning_concurrency": int(pruning_concurrency),
                    "pruning_deadline": float(pruning_deadline),
                },
            },
        }
        path = Path(folder) / "agents.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        return str(path)

    def run_real_pruning_agent(self, agents_file: str, question: str) -> dict[str, Any]:
        """Run the file's agent on ``question``; returns what the test checks.

        ``answer``, ``report`` (the run report), ``seconds`` (wall time of the run),
        ``pruned_events`` (the ``leanloop.pruned`` payloads), ``tool_messages`` (the tool
        messages the main model received, in order), ``prune_requests`` (how many
        extraction requests were sent) and ``log`` (leanloop's pruning log lines).
        """
        agent = LLMAgent.from_file(agents_file)
        recorder = _Recorder()
        handler = _Lines()
        logger = logging.getLogger("leanloop.pruning")
        previous = logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        started = time.perf_counter()
        try:
            message = _LOOP.run_until_complete(agent.ainvoke(question, {"callbacks": [recorder]}))
        finally:
            seconds = time.perf_counter() - started
            logger.removeHandler(handler)
            logger.setLevel(previous)
        main = [r for r in recorder.requests if r["name"] != "leanloop.prune"]
        tool_messages = [
            m["content"] for r in main[-1:] for m in r["messages"] if m["role"] == "tool"
        ]
        return {
            "answer": message.text,
            "report": dict(message.response_metadata.get("leanloop", {})),
            "seconds": round(seconds, 1),
            "pruned_events": recorder.named(events.PRUNED),
            "tool_messages": tool_messages,
            "prune_requests": len(recorder.requests) - len(main),
            "log": handler.lines,
            "answers": recorder.answers,
        }

    def lines_should_be_kept_verbatim(self, text: str, lines: list[str]) -> None:
        """Fail unless every one of ``lines`` is a whole line of ``text`` (or ends one after a
        read_file line number)."""
        shown = text.split("\n")
        missing = [
            line for line in lines if not any(s == line or s.endswith(f"| {line}") for s in shown)
        ]
        if missing:
            msg = f"not kept verbatim: {missing}\n--- the pruned message ---\n{text}"
            raise AssertionError(msg)
