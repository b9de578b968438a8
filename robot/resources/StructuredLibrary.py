"""Robot keywords for typed answers: an agent with ``output_schema``, asked through the API.

The agents file comes from :mod:`agents_file` (one model on the suite's server, one
agent, here without tools); the schemas are the test models of :mod:`answer_models`,
importable because this folder is on ``sys.path``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file
from aio import run
from pydantic import BaseModel

from leanloop.agent import LLMAgent

_SYSTEM_PROMPT = "You answer questions in one short sentence."


class StructuredLibrary:
    """Write an agents file with ``output_schema`` and read the typed answers."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def write_typed_agents_file(
        self,
        folder: str,
        base_url: str,
        output_schema: str = "answer_models:City",
        model: str = "local-test",
        max_tokens: int = 96,
    ) -> str:
        """Write ``<folder>/agents.yaml``: the agent ``typed`` with ``output_schema``, no tools.

        ``max_tokens`` caps each reply, so a small model cannot ramble for minutes.
        """
        entry = model_entry(base_url, model, max_tokens=int(max_tokens), timeout=120)
        agent = agent_entry(_SYSTEM_PROMPT, tools=(), max_rounds=2, output_schema=output_schema)
        return write_agents_file(folder, entry, "typed", agent)

    def ask_for_a_typed_answer(self, agents_file: str, question: str) -> dict[str, Any]:
        """Run the file's agent; returns ``parsed``, ``answer`` (text), ``report``, ``seconds``."""
        agent = LLMAgent.from_file(agents_file)
        started = time.monotonic()
        message = run(agent.ainvoke(question))
        seconds = round(time.monotonic() - started, 1)
        return {
            "parsed": message.additional_kwargs.get("parsed"),
            "answer": message.text,
            "report": dict(message.response_metadata.get("leanloop", {})),
            "seconds": seconds,
        }

    def typed_answer_should_be_a(self, result: dict[str, Any], schema: str) -> None:
        """Fail unless ``parsed`` is an instance of the pydantic model named ``schema``."""
        parsed = result.get("parsed")
        if not isinstance(parsed, BaseModel) or type(parsed).__name__ != schema:
            msg = f"the answer is not a {schema} instance: {parsed!r} (text {result['answer']!r})"
            raise AssertionError(msg)
        if result["answer"] != parsed.model_dump_json():
            msg = f"the answer text is not the instance as JSON: {result['answer']!r}"
            raise AssertionError(msg)

    def typed_field_should_contain(self, result: dict[str, Any], field: str, text: str) -> None:
        """Fail unless the instance's ``field`` contains ``text`` (ignoring case)."""
        value = getattr(result.get("parsed"), field, None)
        if not isinstance(value, str) or text.lower() not in value.lower():
            msg = f"{field} is {value!r}, which does not contain {text!r}: {result['parsed']!r}"
            raise AssertionError(msg)
