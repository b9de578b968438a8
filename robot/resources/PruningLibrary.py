"""Robot keywords for the pruning suite: a workspace with a large log, agents files, and
helpers that read what the scripted server recorded.

The agents file is written by the test (``provider: openai-compatible`` against a test
server); the agent runs either through the CLI (``Run Leanloop`` in ``servers.resource``)
or through :meth:`PruningLibrary.run_pruning_agent`, which also records every chat
request the agent made (main and extraction calls) through a LangChain callback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.messages import BaseMessage

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import MODEL_KEY, agent_entry, model_entry, write_agents_file
from aio import run
from robot_args import truthy

from leanloop import events
from leanloop.agent import LLMAgent
from leanloop.pruning import META_ARGS
from leanloop.tools.workspace import workspace_tools

__all__ = ["PruningLibrary"]

_FILLER = "INFO worker handled a job of the nightly batch; nothing unusual to report here"
_INFO_START = "[PRUNE_INFO_START]"
_OUTPUT_START, _OUTPUT_END = "[PRUNE_OUTPUT_START]", "[PRUNE_OUTPUT_END]"


class RequestRecorder(events.EventRecorder):
    """Keeps leanloop's custom events and every chat request: its run name and messages."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []

    async def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        """Record one request (LangChain calls this before every chat model call)."""
        for batch in messages:
            self.requests.append(
                {
                    "name": kwargs.get("name"),
                    "messages": [{"role": m.type, "content": str(m.content)} for m in batch],
                }
            )


class PruningLibrary:
    """Workspace, agents file and request helpers for ``robot/pruning.robot``."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def write_pruning_workspace(
        self, folder: str, lines: int = 400, width: int = 121, word: str = "deadlock"
    ) -> str:
        """Write ``<folder>/workspace/app.log``: ``lines`` filler lines of ``width``
        characters and three short ``word`` lines.

        The ``word`` lines are file lines 101, 201 and 301 (fewer in a shorter file: at
        every hundredth line, or at a quarter, half and three quarters when shorter).
        Returns the path of the log.
        """
        count = int(lines)
        filler = [
            f"12:{i // 60 % 60:02d}:{i % 60:02d} {i:>5} {_FILLER}".ljust(int(width), ".")[
                : int(width)
            ]
            for i in range(count)
        ]
        step = 100 if count > 300 else count // 4
        for k in range(1, 4):
            filler[k * step] = f"ERROR {word} #{k}"
        path = Path(folder) / "workspace" / "app.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(filler) + "\n", encoding="utf-8")
        return str(path)

    def read_file_as_the_agent_sees_it(self, folder: str, limit: int = 400) -> str:
        """The output of the real ``read_file`` on ``app.log`` (what pruning starts from)."""
        reader = workspace_tools(Path(folder) / "workspace")[0]
        return str(reader.invoke({"path": "app.log", "limit": int(limit)}))

    def write_pruning_agents_file(
        self,
        folder: str,
        base_url: str,
        pruning: bool = True,
        model: str = "scripted-model",
        context_window: int = 32768,
        tool_mode: str = "native",
        max_rounds: int = 4,
        pruning_timeout: float = 60,
        pruning_min_chars: int = 2000,
        max_tokens: int | str | None = None,
        system_prompt: str = "You answer questions about the files in the workspace.",
    ) -> str:
        """Write ``<folder>/agents.yaml`` with one agent ``pruner`` on ``base_url``.

        With ``pruning`` false the file has no pruning key at all (the pre-pruning form).
        """
        entry = model_entry(base_url, model, context_window=int(context_window), timeout=600)
        if max_tokens is not None and str(max_tokens) not in ("", "None"):
            entry["max_tokens"] = int(max_tokens)
        agent = agent_entry(system_prompt, max_rounds=int(max_rounds), tool_mode=tool_mode)
        if truthy(pruning):
            agent.update(
                allow_tool_output_pruning=True,
                pruning_model=MODEL_KEY,
                pruning_timeout=float(pruning_timeout),
                pruning_min_chars=int(pruning_min_chars),
            )
        return write_agents_file(folder, entry, "pruner", agent)

    def extraction_answer_keeping(self, folder: str, word: str = "deadlock") -> str:
        """A marker-format extraction answer keeping the read_file lines that mention ``word``."""
        raw = self.read_file_as_the_agent_sees_it(folder)
        kept = [line for line in raw.split("\n") if word in line]
        body = "".join(f"{line}\n" for line in kept)
        return (
            f"{_INFO_START}\nkept {len(kept)} lines mentioning {word}\n[PRUNE_INFO_END]\n"
            f"{_OUTPUT_START}\n{body}{_OUTPUT_END}"
        )

    def parse_run_json(self, stdout: str) -> dict[str, Any]:
        """The ``leanloop run --json`` output as a dict (fails on anything but one JSON object)."""
        data = json.loads(stdout)
        if not isinstance(data, dict):
            msg = f"leanloop run --json printed {type(data).__name__}, not an object"
            raise AssertionError(msg)
        return data

    def tool_properties_of_request(self, request: dict[str, Any], tool: str) -> dict[str, Any]:
        """The parameter properties of ``tool`` in a recorded request's ``tools``."""
        for schema in request.get("tools") or []:
            function = schema.get("function", {})
            if function.get("name") == tool:
                return dict(function.get("parameters", {}).get("properties", {}))
        offered = [t.get("function", {}).get("name") for t in request.get("tools") or []]
        msg = f"the request offers no tool {tool!r} (it offers {offered})"
        raise AssertionError(msg)

    def tools_with_pruning_arguments(self, request: dict[str, Any]) -> list[str]:
        """The names of the tools in a recorded request that offer a pruning meta-argument."""
        names = []
        for schema in request.get("tools") or []:
            function = schema.get("function", {})
            properties = function.get("parameters", {}).get("properties", {})
            if META_ARGS & set(properties):
                names.append(function.get("name", "?"))
        return names

    def tool_messages_of_request(self, request: dict[str, Any]) -> list[str]:
        """The contents of the ``tool`` messages of a recorded request body, in order."""
        return [_text(m) for m in request.get("messages", []) if m.get("role") == "tool"]

    def pruned_block_should_be_well_formed(self, text: str, raw_chars: int) -> None:
        """Fail unless ``text`` is an INFO then an OUTPUT block, shorter than the raw output."""
        if not text.startswith(_INFO_START) or not text.rstrip().endswith(_OUTPUT_END):
            msg = f"not a pruned block: {text[:300]!r}"
            raise AssertionError(msg)
        if text.count(_OUTPUT_START) != 1 or text.index("[PRUNE_INFO_END]") > text.index(
            _OUTPUT_START
        ):
            msg = f"the pruned block's markers are out of order: {text[:300]!r}"
            raise AssertionError(msg)
        if len(text) >= int(raw_chars):
            msg = f"the pruned block ({len(text)} chars) is not shorter than the raw output"
            raise AssertionError(msg)

    def run_pruning_agent(self, agents_file: str, question: str) -> dict[str, Any]:
        """Run the file's agent on ``question`` through the Python API.

        Returns ``{"answer", "report", "requests"}``; ``requests`` holds every chat
        request (``name`` is ``leanloop.prune`` for extraction calls) with its messages.
        """
        agent = LLMAgent.from_file(agents_file)
        recorder = RequestRecorder()
        message = run(agent.ainvoke(question, {"callbacks": [recorder]}))
        return {
            "answer": message.text,
            "report": dict(message.response_metadata.get("leanloop", {})),
            "requests": recorder.requests,
        }


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""
