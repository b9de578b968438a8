"""Robot keywords for the text-mode suite: one agents file for every tool mode, runs that
record what the loop did, and a success count over repeated runs against a small model.

The agents file is the one a user would write; only ``tool_mode`` changes between the
tests, which is the acceptance criterion ("the same agent YAML runs unchanged with
``tool_mode: text``").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file
from aio import run
from robot_args import truthy

from leanloop.agent import LLMAgent
from leanloop.exceptions import LeanloopError

__all__ = ["TextModeLibrary"]

_FINISHED = ("answer", "max_rounds", "repeated_calls")
"""Stop reasons of a run that ended with an answer from the model: its own, or the final
tool-less one after the rounds ran out or the loop stopped a repeated identical call."""


class TextModeLibrary:
    """Write the text-mode agents file, run it, and judge the runs."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def write_text_mode_agents_file(
        self,
        folder: str,
        base_url: str,
        system_prompt: str,
        tool_mode: str = "text",
        model: str = "local-test",
        max_rounds: int = 3,
        max_tokens: int = 0,
        prefetch: bool = True,
    ) -> str:
        """Write ``agents.yaml`` with one agent ``reader`` over ``<folder>/workspace``.

        Args:
            folder: Where the file and the workspace go (the workspace is created).
            base_url: The OpenAI-compatible base URL (``…/v1``).
            system_prompt: The agent's system prompt.
            tool_mode: ``auto``, ``native`` or ``text``; the only line the tests vary.
            model: The model name sent to the server.
            max_rounds: Tool rounds before the final answer.
            max_tokens: A cap on each reply (0: no cap); keeps a slow CPU model bounded.
            prefetch: ``prefetch_mentioned_files``; off when a test must see the model
                itself call ``read_file``.
        """
        entry = model_entry(base_url, model)
        if int(max_tokens) > 0:
            entry["max_tokens"] = int(max_tokens)
        agent = agent_entry(
            system_prompt,
            max_rounds=int(max_rounds),
            tool_mode=tool_mode,
            prefetch_mentioned_files=truthy(prefetch),
        )
        return write_agents_file(folder, entry, "reader", agent)

    def run_text_mode_agent(self, agents_file: str, question: str) -> dict[str, Any]:
        """Run the file's agent once; returns ``answer``, ``report`` and ``error``.

        A leanloop error is returned (``error``), not raised, so a measuring loop can
        count it as a failed run.
        """
        agent = LLMAgent.from_file(agents_file)
        try:
            message = run(agent.ainvoke(question))
        except LeanloopError as exc:
            return {"answer": "", "report": {}, "error": f"{type(exc).__name__}: {exc}"}
        content = message.content
        return {
            "answer": content if isinstance(content, str) else str(content),
            "report": dict(message.response_metadata.get("leanloop", {})),
            "error": "",
        }

    def model_read_calls(self, report: dict[str, Any], path: str) -> int:
        """How many ``read_file`` calls of ``path`` the model made (prefetched ones excluded)."""
        return sum(
            1
            for call in report.get("tool_calls", [])
            if call.get("name") == "read_file"
            and int(call.get("step", 0)) >= 1
            and str(call.get("args", {}).get("path", "")).removeprefix("./") == path
        )

    def run_should_have_read_and_finished(self, result: dict[str, Any], path: str) -> None:
        """Fail unless the run finished with an answer after the model itself read ``path``."""
        problem = self._problem(result, path)
        if problem:
            raise AssertionError(problem)

    def measure_text_mode_runs(
        self,
        agents_file: str,
        questions: list[str] | str,
        path: str,
        runs: int = 1,
        expected: str = "",
    ) -> dict[str, Any]:
        """Run the agent ``runs`` times; count runs that read ``path`` and finished.

        At temperature 0 a repeated question gets the same reply, so run ``n`` asks
        ``questions[n % len(questions)]``: different wordings are what varies.

        Returns ``{"runs", "successes", "rate", "correct", "outcomes"}``: ``correct``
        counts successful runs whose answer contains ``expected`` (reported, not judged:
        a small model's wording is not the protocol's concern); each outcome is one line
        saying what that run did, for the log.
        """
        asked = [questions] if isinstance(questions, str) else list(questions)
        outcomes: list[str] = []
        successes = correct = 0
        for number in range(1, int(runs) + 1):
            question = asked[(number - 1) % len(asked)]
            result = self.run_text_mode_agent(agents_file, question)
            problem = self._problem(result, path)
            successes += not problem
            right = bool(expected) and expected in result["answer"]
            correct += right and not problem
            mark = f" answer has {expected!r}: {right}" if expected else ""
            outcomes.append(
                f"run {number} ({question!r}): {problem or 'ok'}:{mark} {_brief(result)}"
            )
        total = int(runs)
        return {
            "runs": total,
            "successes": successes,
            "rate": successes / total if total else 0.0,
            "correct": correct,
            "outcomes": outcomes,
        }

    def _problem(self, result: dict[str, Any], path: str) -> str:
        if result["error"]:
            return f"the run failed: {result['error']}"
        report = result["report"]
        if report.get("stop_reason") not in _FINISHED:
            return f"the run stopped with {report.get('stop_reason')!r}"
        if not self.model_read_calls(report, path):
            calls = [(c["name"], c["args"]) for c in report.get("tool_calls", [])]
            return f"the model never called read_file on {path} (calls: {calls})"
        return ""


def _brief(result: dict[str, Any]) -> str:
    report = result["report"]
    calls = [f"{c['name']}({c['args']})@{c['step']}" for c in report.get("tool_calls", [])]
    answer = " ".join(result["answer"].split())[:160]
    return f"stop={report.get('stop_reason')} calls={calls} answer={answer!r}"
