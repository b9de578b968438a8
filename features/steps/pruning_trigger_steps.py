"""Steps for features/pruning_trigger.feature: prune every large result, or only what does not fit.

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
from leanloop.loop.tool_round import KEPT_WHOLE_NOTE, pruning_trigger
from leanloop.pruning import PruneOutcome, Pruner, PruneRequest, PruneSettings
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


@given('a trigger agent with pruning_trigger "{trigger}" and a {window:d}-token window')
def step_agent(context: Context, trigger: str, window: int) -> None:
    _agent(context, trigger, window, prefetch=False)


@given(
    'a trigger agent with pruning_trigger "{trigger}", a {window:d}-token window and prefetching'
)
def step_agent_prefetch(context: Context, trigger: str, window: int) -> None:
    _agent(context, trigger, window, prefetch=True)


@when('the trigger agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    context.trigger_reply = run(context.trigger_agent.ainvoke(question))
    context.trigger_report = context.trigger_reply.response_metadata["leanloop"]


def _names(text: str) -> list[str]:
    return [] if text.strip() == "none" else [n.strip() for n in text.split(",")]


def _records(context: Context) -> dict[str, dict[str, Any]]:
    calls = context.trigger_report["tool_calls"]
    return {str(c["args"].get("path")): c for c in calls if c["name"] == "read_file"}


@then("the trigger pruning model was asked once")
def step_asked_once(context: Context) -> None:
    step_asked(context, 1)


@then("the trigger pruning model was asked {count:d} times")
def step_asked(context: Context, count: int) -> None:
    asked = len(context.trigger_pruning._asked)
    assert asked == count, f"the pruning model was asked {asked} times, not {count}"


@then("the trigger report shows {kept} kept whole and {pruned} pruned")
def step_kept_and_pruned(context: Context, kept: str, pruned: str) -> None:
    records = _records(context)
    for name in _names(kept):
        record = records.get(name)
        assert record is not None, f"no read_file call of {name} in {sorted(records)}"
        assert not record["pruned"], f"{name} was pruned: {record}"
        assert KEPT_WHOLE_NOTE in record["notes"], f"{name} has no kept-whole note: {record}"
        assert record["cut_from"] is None, f"{name} was cut: {record}"
    for name in _names(pruned):
        record = records.get(name)
        assert record is not None, f"no read_file call of {name} in {sorted(records)}"
        assert record["pruned"], f"{name} was not pruned: {record}"
    if not _names(kept):
        notes = [r["notes"] for r in records.values() if KEPT_WHOLE_NOTE in r["notes"]]
        assert not notes, f"results were kept whole: {notes}"


@then("the trigger report shows {name} not pruned")
def step_not_pruned(context: Context, name: str) -> None:
    record = _records(context)[name]
    assert not record["pruned"], f"{name} was pruned: {record}"
    assert KEPT_WHOLE_NOTE not in record["notes"], f"{name} counted as kept by the trigger"


@then("the trigger report shows at least one of {names} pruned")
def step_some_pruned(context: Context, names: str) -> None:
    records = _records(context)
    assert any(records[n]["pruned"] for n in _names(names)), f"none pruned: {records}"


def _reads(context: Context, name: str) -> list[dict[str, Any]]:
    calls = context.trigger_report["tool_calls"]
    return [c for c in calls if c["name"] == "read_file" and c["args"].get("path") == name]


@then("the trigger report shows the first read of {name} kept whole and trimmed")
def step_first_trimmed(context: Context, name: str) -> None:
    first = _reads(context, name)[0]
    assert KEPT_WHOLE_NOTE in first["notes"], f"not kept whole by the trigger: {first}"
    assert first["trimmed_at"] is not None, f"the first read of {name} was never trimmed: {first}"


def _prune_twice(context: Context, name: str, focuses: tuple[str, str]) -> None:
    lines = context.trigger_logs[name]
    raw = "\n".join(f"{i:>4}| {line}" for i, line in enumerate(lines, start=1))
    context.trigger_pruning = CountingPruningModel()
    pruner = Pruner(context.trigger_pruning, PruneSettings(window_tokens=32_768))

    async def twice() -> list[PruneOutcome]:
        return [
            await pruner.prune(
                tool_name="read_file",
                raw=raw,
                request=PruneRequest(focus=focus),
                task_context="The user asked: why did the jobs stop?",
            )
            for focus in focuses
        ]

    context.trigger_outcomes = run(twice())


@when('one pruner prunes the output of {name} twice with the focus "{focus}"')
def step_prune_twice(context: Context, name: str, focus: str) -> None:
    _prune_twice(context, name, (focus, focus))


@when('one pruner prunes the output of {name} with the focus "{first}" and then "{second}"')
def step_prune_two_focuses(context: Context, name: str, first: str, second: str) -> None:
    _prune_twice(context, name, (first, second))


@then("the second outcome is the first extract, reused, with no request of its own")
def step_reused(context: Context) -> None:
    first, second = context.trigger_outcomes
    assert first.pruned and not first.reused, first
    assert second.reused and second.pruned, second
    assert second.text == first.text, (first.text[:200], second.text[:200])
    assert second.seconds == 0.0, second.seconds


@then("the second outcome is not reused")
def step_not_reused(context: Context) -> None:
    second = context.trigger_outcomes[1]
    assert second.pruned and not second.reused, second


@then("the trigger report shows the second read of {name} ran again and kept whole")
def step_second_ran(context: Context, name: str) -> None:
    reads = _reads(context, name)
    assert len(reads) == 2, f"{len(reads)} reads of {name}: {reads}"
    second = reads[1]
    assert not second["repeated"], f"the guard answered for the second read: {second}"
    assert any("ran again" in n and "trimmed" in n for n in second["notes"]), second
    assert not second["pruned"], f"the second read of {name} was pruned: {second}"
    assert KEPT_WHOLE_NOTE in second["notes"], f"not kept whole by the trigger: {second}"


def _request_text(context: Context, nth: str) -> str:
    requests = context.trigger_main.requests
    index = {"first": 0, "second": 1, "last": len(requests) - 1}[nth]
    requests = context.trigger_main.requests
    assert len(requests) > index, f"the main model got {len(requests)} requests"
    return "\n".join(str(m.content) for m in requests[index].messages)


@then("the trigger main model's {nth} request holds {names} whole")
def step_holds_whole(context: Context, nth: str, names: str) -> None:
    text = _request_text(context, nth)
    for name in _names(names):
        missing = [ln for ln in context.trigger_logs[name] if ln not in text]
        assert not missing, f"{len(missing)} lines of {name} are not in the request: {missing[:2]}"


@then('the trigger main model\'s {nth} request holds the 2 "deadlock" lines of {name}')
def step_holds_deadlocks(context: Context, nth: str, name: str) -> None:
    text = _request_text(context, nth)
    wanted = [ln for ln in context.trigger_logs[name] if _WORD in ln]
    assert len(wanted) == 2, wanted
    missing = [ln for ln in wanted if ln not in text]
    assert not missing, f"missing from the request: {missing}"


@then('for a pruning model named "{model}" with prompt_profile "{profile}" the trigger is "{want}"')
def step_auto(context: Context, model: str, profile: str, want: str) -> None:
    spec = AgentSpec(
        name="auto",
        model=ModelSpec(provider="openai", model=model),
        allow_tool_output_pruning=True,
        prompt_profile=profile,  # type: ignore[arg-type]  # the feature's word
    )
    got = pruning_trigger(spec)
    assert got == want, f"{model} with {profile}: {got}, not {want}"


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
