"""The trigger workspace and agent of features/pruning/pruning_question.feature (the trigger's own
checks moved to tests/pruning/test_trigger.py, issue 26).

The main model is scripted; the pruning model is a fake that keeps the lines naming
"deadlock" and counts its requests. The logs are numbered lines of about 80 characters
with two "deadlock" lines each, so a kept-whole log is recognised line by line.
"""

# No ``from __future__ import annotations`` here: pydantic must resolve the fake model's
# field annotations at class creation, and Behave runs step files outside sys.modules.

import re
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr
from support.aio import run
from support.fakes import AsyncOnlyChatModel
from support.script import replies

from leanloop.agent import LLMAgent
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

_NUMBERED = re.compile(r"^\s*\d+\| ")
_WORD = "deadlock"
_LOG_NAME = re.compile(r"\[([\w.]+\.log)\]")


class CountingPruningModel(AsyncOnlyChatModel):
    """Keeps the shown lines that name the word, and counts the requests it answered."""

    _asked: list[str] = PrivateAttr(default_factory=list)
    """The log each request showed (the ``[name]`` its lines carry)."""
    _prompts: list[str] = PrivateAttr(default_factory=list)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        shown = [ln for ln in str(messages[-1].content).split("\n") if _NUMBERED.match(ln)]
        names = _LOG_NAME.findall(shown[0]) if shown else []
        self._asked.append(names[0] if names else "?")
        self._prompts.append(str(messages[-1].content))
        kept = "".join(f"{ln}\n" for ln in shown if _WORD in ln)
        text = (
            "[PRUNE_INFO_START]\nkept the matching lines\n[PRUNE_INFO_END]\n"
            f"[PRUNE_OUTPUT_START]\n{kept}[PRUNE_OUTPUT_END]"
        )
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def _log_lines(name: str, kb: int) -> list[str]:
    lines = [
        f"2026-11-30 02:{i // 60 % 60:02d}:{i % 60:02d} INFO  [{name}] db.pool: "
        f"processed job {10000 + i} rows={i * 37 % 5000} ok"
        for i in range(kb * 1024 // 80)
    ]
    lines[5] = f"2026-11-30 03:00:01 ERROR [{name}] db.pool: {_WORD} #1 detected"
    lines[-5] = f"2026-11-30 03:00:02 ERROR [{name}] db.pool: {_WORD} #2 detected"
    return lines


@given("a trigger workspace with these logs:")
def step_workspace(context: Context) -> None:
    assert context.table is not None, "the step needs a table of logs"
    root = Path(context.tmp) / "trigger"
    root.mkdir()
    context.trigger_logs = {}
    for row in context.table:
        lines = _log_lines(row["name"], int(row["kb"]))
        (root / row["name"]).write_text("\n".join(lines) + "\n", encoding="utf-8")
        context.trigger_logs[row["name"]] = lines
    context.trigger_root = root


@given("a trigger main model with the script:")
def step_main(context: Context) -> None:
    assert context.table is not None, "the step needs a reply table"
    script = replies([row["reply"] for row in context.table], workspace=context.trigger_root)
    context.trigger_main = ScriptedChatModel(replies=script)


def _agent(context: Context, trigger: str, window: int, *, prefetch: bool) -> None:
    spec = AgentSpec(
        name="trigger",
        model=ModelSpec(
            class_path="leanloop.testing:ScriptedChatModel", model="trigger", context_window=window
        ),
        tools=("read_file",),
        workspace=context.trigger_root,
        allow_tool_output_pruning=True,
        pruning_trigger=trigger,  # type: ignore[arg-type]  # the feature's word, checked here
        prefetch_mentioned_files=prefetch,
    )
    assert spec.pruning_trigger in ("auto", "size", "budget"), spec.pruning_trigger
    context.trigger_pruning = CountingPruningModel()
    context.trigger_agent = LLMAgent.from_spec(
        spec, model=context.trigger_main, pruning_model=context.trigger_pruning
    )


@given(
    'a trigger agent with pruning_trigger "{trigger}", a {window:d}-token window and prefetching'
)
def step_agent_prefetch(context: Context, trigger: str, window: int) -> None:
    _agent(context, trigger, window, prefetch=True)


@when('the trigger agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    context.trigger_reply = run(context.trigger_agent.ainvoke(question))
    context.trigger_report = context.trigger_reply.response_metadata["leanloop"]


@then('the trigger pruning model\'s request for {name} asks "{part}" and not about {other}')
def step_request_asks(context: Context, name: str, part: str, other: str) -> None:
    model = context.trigger_pruning
    prompts = [p for n, p in zip(model._asked, model._prompts, strict=True) if n == name]
    assert prompts, f"no pruning request for {name}: {model._asked}"
    for prompt in prompts:
        # The default extraction prompt states the task before the tool output.
        task = prompt.split("Tool output", 1)[0]
        assert part in task, f"{part!r} not in the request for {name}: {task}"
        assert other not in task, f"the request for {name} asks about {other}: {task}"
