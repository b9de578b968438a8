"""Robot keywords for the token-budget suite (``robot/budget.robot``).

They write agents files with budget keys, fill a workspace with large files, run an
agent while collecting leanloop's custom events, and measure the requests a scripted
server recorded. Servers come from ``ServerLibrary``; this library only reads what it
recorded (``Scripted Requests``).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import yaml

from leanloop.events import EventRecorder

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import WORKSPACE_TOOLS, agent_entry, model_entry, write_agents_file
from aio import run  # the loop every keyword library shares (see aio.py)

from leanloop.agent import LLMAgent
from leanloop.exceptions import LeanloopError

__all__ = ["BudgetLibrary"]

_TOOLS = ", ".join(WORKSPACE_TOOLS)
_MODEL_KEYS = frozenset({"context_window", "max_tokens", "temperature", "timeout"})
CHARS_PER_TOKEN_MEASURE = 3
"""The conservative measure of a recorded request: one token for every 3 characters."""
TOKENS_PER_MESSAGE = 8
"""What a chat template adds per message (role markers, separators), at most."""


class BudgetLibrary:
    """Agents files with budget keys, large workspaces, runs with events, request sizes."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def write_budget_agents_file(
        self,
        folder: str,
        base_url: str,
        system_prompt: str,
        model: str = "local-test",
        **settings: Any,
    ) -> str:
        """Write ``<folder>/agents.yaml``: one agent ``budget`` with the workspace tools.

        ``settings`` are agent keys (``token_budget_percent=0.5``, ``trim_keep_steps=1``,
        ``max_rounds=6`` …), except ``context_window``, ``max_tokens``, ``temperature`` and
        ``timeout``, which go to the model, and ``tools`` (comma separated, default
        ``read_file, list_files, search``). Values are read as YAML (``false``, ``0.5``).
        The workspace is ``<folder>/workspace``. Nothing is written that the test did not
        ask for: an agent with no settings has no budget keys at all.
        """
        tools = [t.strip() for t in str(settings.pop("tools", _TOOLS)).split(",")]
        values = {key: yaml.safe_load(str(value)) for key, value in settings.items()}
        model_keys = {k: v for k, v in values.items() if k in _MODEL_KEYS}
        agent_keys = {k: v for k, v in values.items() if k not in _MODEL_KEYS}
        entry = model_entry(base_url, model, **model_keys)
        agent = agent_entry(system_prompt, tools, **agent_keys)
        return write_agents_file(folder, entry, "budget", agent)

    def write_large_workspace_files(
        self, folder: str, count: int = 4, size: int = 8000, prefix: str = "part"
    ) -> list[str]:
        """Write ``count`` text files of about ``size`` characters into ``<folder>/workspace``.

        File ``n`` is ``<prefix>_<n>.txt``; its first line says which part it is and names a
        code word (``code word for part 2: river-2``) that a question can ask for.
        """
        workspace = Path(folder) / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        names = []
        for number in range(1, int(count) + 1):
            name = f"{prefix}_{number}.txt"
            head = f"This is part {number}. The code word for part {number} is river-{number}."
            body = [
                f"Line {line} of part {number}: the inventory lists item {line * number} "
                f"stored on shelf {line % 7} in aisle {number}."
                for line in range(1, int(size) // 60 + 2)
            ]
            text = "\n".join([head, *body])[: int(size)]
            (workspace / name).write_text(text + "\n", encoding="utf-8")
            names.append(name)
        return names

    def ask_budgeted_agent(self, agents_file: str, question: str) -> dict[str, Any]:
        """Run the file's agent on ``question``.

        Returns ``{"answer", "report", "events"}``; ``events`` are leanloop's custom events
        in order (``{"name", "data"}``). Fails with the leanloop error's one line, never a
        traceback, when the run raises one.
        """
        agent = LLMAgent.from_file(agents_file)
        log = EventRecorder()
        try:
            message = run(agent.ainvoke(question, {"callbacks": [log]}))
        except LeanloopError as exc:
            msg = f"the budgeted run failed: {type(exc).__name__}: {exc}"
            raise AssertionError(msg) from None
        content = message.content
        return {
            "answer": content if isinstance(content, str) else str(content),
            "report": dict(message.response_metadata.get("leanloop", {})),
            "events": [{"name": n, "data": d} for n, d in log.events],
        }

    def budget_events_named(self, result: dict[str, Any], name: str) -> list[dict[str, Any]]:
        """The payloads of the run's events called ``name`` (``leanloop.budget`` …)."""
        return [e["data"] for e in result["events"] if e["name"] == name]

    def recorded_request_tokens(self, requests: list[dict[str, Any]]) -> list[int]:
        """A conservative token count of each recorded chat request body.

        Everything the prompt carries is counted in characters (message texts, tool-call
        names and arguments, the tool schemas as compact JSON), divided by 3 and rounded up,
        plus 8 tokens per message for the chat template. Real tokenizers give 3.5-4.5
        characters a token for English and code, so this over-counts: a request under the
        window by this measure is under it by the server's own count.
        """
        return [_request_tokens(body) for body in requests]

    def requests_should_fit_window(self, requests: list[dict[str, Any]], window: int) -> None:
        """Fail unless every recorded request measures at most ``window`` tokens."""
        sizes = self.recorded_request_tokens(requests)
        over = [(i + 1, size) for i, size in enumerate(sizes) if size > int(window)]
        if over:
            msg = f"requests over the {window}-token window (number, tokens): {over}; all: {sizes}"
            raise AssertionError(msg)

    def request_messages_without_ids(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The messages of a recorded request with tool-call ids removed (they differ per run)."""
        cleaned = []
        for message in body.get("messages", []):
            item = {k: v for k, v in message.items() if k != "tool_call_id"}
            if "tool_calls" in item:
                item["tool_calls"] = [
                    {k: v for k, v in call.items() if k != "id"} for call in item["tool_calls"]
                ]
            cleaned.append(item)
        return cleaned


def _request_tokens(body: dict[str, Any]) -> int:
    messages = body.get("messages", [])
    chars = sum(_message_chars(m) for m in messages)
    chars += len(json.dumps(body.get("tools") or [], separators=(",", ":")))
    return math.ceil(chars / CHARS_PER_TOKEN_MEASURE) + TOKENS_PER_MESSAGE * len(messages)


def _message_chars(message: dict[str, Any]) -> int:
    content = message.get("content")
    if isinstance(content, list):
        text = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    else:
        text = content if isinstance(content, str) else ""
    calls = message.get("tool_calls") or []
    call_chars = sum(
        len(c.get("function", {}).get("name", "")) + len(c.get("function", {}).get("arguments", ""))
        for c in calls
    )
    return len(text) + call_chars
