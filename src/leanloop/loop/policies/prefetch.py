"""Read what the request names before the first request (the prefetch policy).

Even a model that never calls a tool then sees the file the user pointed at. With
``read_file``, the workspace files the request names (:mod:`leanloop.loop.prefetch`
finds them); without it, the words that look like file names, with the agent's one tool
that reads a named resource (a user's ``read_doc(name)``, :mod:`leanloop.tools.readers`).
The reads are ordinary calls of step 0, recorded like any other. Such a tool cannot be
asked first whether the name exists: when every prefetched call failed, the step is left
out of the conversation (the report keeps the calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.tools import BaseTool

from leanloop.loop.policies.hooks import CallRunner, Policy, StepView
from leanloop.protocol import format_tool_call
from leanloop.tools.readers import file_like_words, reader_parameter

__all__ = ["Prefetch", "PrefetchConfig"]

_READ_FILE = ("read_file", "path")


@dataclass(frozen=True)
class PrefetchConfig:
    """Which tool reads what the request names, and how names are found.

    Attributes:
        tool: The tool each name is read with.
        parameter: The tool's parameter that takes the name.
        workspace: Whether the names are the workspace files the request names (the
            lookup in the view: ``read_file``); else the words of the request that look
            like file names, and the step is left out when none of them was found.
    """

    tool: str = _READ_FILE[0]
    parameter: str = _READ_FILE[1]
    workspace: bool = True

    @classmethod
    def for_tools(cls, tools: Sequence[BaseTool]) -> PrefetchConfig | None:
        """The prefetch of an agent with ``tools``: ``read_file`` when it has it, else its
        one reader of a named resource; ``None`` when it has none or several (which one a
        name belongs to is then a guess)."""
        if any(tool.name == _READ_FILE[0] for tool in tools):
            return cls()
        readers = [(tool.name, param) for tool in tools if (param := reader_parameter(tool))]
        if len(readers) != 1:
            return None
        ((name, param),) = readers
        return cls(tool=name, parameter=param, workspace=False)

    def start(self) -> Prefetch:
        """The policy for one run."""
        return Prefetch(self)


class Prefetch(Policy):
    """Makes the opening step (step 0) of a run; keeps no state."""

    name: ClassVar[str] = "prefetch"

    def __init__(self, config: PrefetchConfig) -> None:
        self.config = config

    async def at_start(self, view: StepView, run_calls: CallRunner) -> list[BaseMessage]:
        """The reads of what the request names, as a reply and its results; ``[]`` when
        it names nothing, or when a reader found none of the names."""
        config = self.config
        # A user's reader cannot be asked which names exist: the words that look like files.
        paths = view.named() if config.workspace else file_like_words(view.question)
        if not paths:
            return []
        calls: list[ToolCall] = [
            {
                "name": config.tool,
                "args": {config.parameter: p},
                "id": f"prefetch_{i}",
                "type": "tool_call",
            }
            for i, p in enumerate(paths)
        ]
        done = await run_calls(calls)
        report = view.report
        if not config.workspace and not any(c.ok for c in report.tool_calls if c.step == 0):
            report.events.append(
                f"prefetch: {config.tool} found none of {', '.join(paths)}; "
                "left out of the conversation"
            )
            return []
        if view.mode == "native":
            reply = AIMessage(content="", tool_calls=calls)
        else:
            reply = AIMessage(
                content="\n".join(format_tool_call(c["name"], c["args"]) for c in calls)
            )
        report.prefetched = paths
        return [reply, *done.messages]
