"""Which results are pruned: every large one, or only what does not fit (moved from
features/pruning_trigger.feature, issue 26).

On a small model on a CPU, one pruning pass reads the output as slowly as the main model
does; pruning three files that fit the request cost minutes and gained nothing. With
pruning_trigger "budget" a round's results are pruned only when together they do not fit
the room left in the request, the largest first, until the rest fits; "size" prunes every
prunable result of at least pruning_min_chars; "auto" follows the pruning model's profile.
These tests meet the trigger with the other promises: the model's own output_prune_context
and output_prune: false, the per-result cap, and prefetched files.

The main model is scripted; the pruning model keeps the lines naming "deadlock" and counts
its requests. The logs are numbered lines of about 80 characters with two "deadlock" lines
each, so a kept-whole log is recognised line by line.
"""

# No ``from __future__ import annotations``: pydantic resolves the fake model's field
# annotations when the class is made.

import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from leanloop.agent import LLMAgent
from leanloop.loop.tool_round import KEPT_WHOLE_NOTE, pruning_trigger
from leanloop.pruning import Pruner, PruneRequest, PruneSettings
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

_NUMBERED = re.compile(r"^\s*\d+\| ")
_WORD = "deadlock"
_LOG_NAME = re.compile(r"\[([\w.]+\.log)\]")
LOGS = {"a.log": 8, "b.log": 8, "c.log": 8, "d.log": 8, "big.log": 9}
"""The trigger workspace: each log's size in KB."""
ANSWER = "Two deadlocks in each log."


class CountingPruningModel(BaseChatModel):
    """Keeps the shown lines that name the word, and counts the requests it answered."""

    _asked: list[str] = PrivateAttr(default_factory=list)
    """The log each request showed (the ``[name]`` its lines carry)."""

    @property
    def _llm_type(self) -> str:
        return "counting-pruning-fake"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        raise NotImplementedError("this fake answers asynchronously only")

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        shown = [ln for ln in str(messages[-1].content).split("\n") if _NUMBERED.match(ln)]
        names = _LOG_NAME.findall(shown[0]) if shown else []
        self._asked.append(names[0] if names else "?")
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


class Trigger:
    """The trigger workspace, one agent on it, and what the run reported."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.logs = {name: _log_lines(name, kb) for name, kb in LOGS.items()}
        for name, lines in self.logs.items():
            (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.main = ScriptedChatModel()
        self.pruning = CountingPruningModel()
        self.report: dict[str, Any] = {}

    async def run(
        self, trigger: str, window: int, replies: list[Any], question: str, *, prefetch: bool
    ) -> None:
        spec = AgentSpec(
            name="trigger",
            model=ModelSpec(
                class_path="leanloop.testing:ScriptedChatModel",
                model="trigger",
                context_window=window,
            ),
            tools=("read_file",),
            workspace=self.root,
            allow_tool_output_pruning=True,
            pruning_trigger=trigger,  # type: ignore[arg-type]
            prefetch_mentioned_files=prefetch,
        )
        self.main = ScriptedChatModel(replies=replies)
        agent = LLMAgent.from_spec(spec, model=self.main, pruning_model=self.pruning)
        reply = await agent.ainvoke(question)
        self.report = reply.response_metadata["leanloop"]

    @property
    def asked(self) -> int:
        return len(self.pruning._asked)

    def records(self) -> dict[str, dict[str, Any]]:
        calls = self.report["tool_calls"]
        return {str(c["args"].get("path")): c for c in calls if c["name"] == "read_file"}

    def reads(self, name: str) -> list[dict[str, Any]]:
        calls = self.report["tool_calls"]
        return [c for c in calls if c["name"] == "read_file" and c["args"].get("path") == name]

    def kept_and_pruned(self, kept: list[str], pruned: list[str]) -> None:
        records = self.records()
        for name in kept:
            record = records.get(name)
            assert record is not None, f"no read_file call of {name} in {sorted(records)}"
            assert not record["pruned"], f"{name} was pruned: {record}"
            assert KEPT_WHOLE_NOTE in record["notes"], f"{name} has no kept-whole note: {record}"
            assert record["cut_from"] is None, f"{name} was cut: {record}"
        for name in pruned:
            record = records.get(name)
            assert record is not None, f"no read_file call of {name} in {sorted(records)}"
            assert record["pruned"], f"{name} was not pruned: {record}"
        if not kept:
            notes = [r["notes"] for r in records.values() if KEPT_WHOLE_NOTE in r["notes"]]
            assert not notes, f"results were kept whole: {notes}"

    def request_text(self, nth: str) -> str:
        requests = self.main.requests
        index = {"first": 0, "second": 1, "last": len(requests) - 1}[nth]
        assert len(requests) > index, f"the main model got {len(requests)} requests"
        return "\n".join(str(m.content) for m in requests[index].messages)

    def holds_whole(self, nth: str, names: list[str]) -> None:
        text = self.request_text(nth)
        for name in names:
            missing = [ln for ln in self.logs[name] if ln not in text]
            assert not missing, f"{len(missing)} lines of {name} are not in the request"

    def holds_the_deadlocks(self, nth: str, name: str) -> None:
        text = self.request_text(nth)
        wanted = [ln for ln in self.logs[name] if _WORD in ln]
        assert len(wanted) == 2, wanted
        missing = [ln for ln in wanted if ln not in text]
        assert not missing, f"missing from the request: {missing}"


@pytest.fixture
def bench(tmp_path: Path) -> Trigger:
    return Trigger(tmp_path)


def _calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One reply calling the tools in order."""
    return {"tool_calls": [{"name": name, "args": args} for name, args in calls]}


def _reads(*args: dict[str, Any]) -> dict[str, Any]:
    return _calls(*(("read_file", a) for a in args))


def _paths(*names: str) -> list[dict[str, Any]]:
    return [{"path": name} for name in names]


async def test_under_the_budget_trigger_results_that_fit_are_kept_whole_unasked(
    bench: Trigger,
) -> None:
    script = [_reads(*_paths("a.log", "b.log", "c.log")), ANSWER]

    await bench.run("budget", 16_384, script, "Why did the jobs stop?", prefetch=False)

    assert bench.asked == 0
    bench.kept_and_pruned(["a.log", "b.log", "c.log"], [])
    bench.holds_whole("second", ["a.log", "b.log", "c.log"])


async def test_under_the_budget_trigger_results_that_do_not_fit_lose_the_largest_first(
    bench: Trigger,
) -> None:
    script = [_reads(*_paths("a.log", "big.log", "b.log", "c.log", "d.log")), ANSWER]

    await bench.run("budget", 16_384, script, "Why did the jobs stop?", prefetch=False)

    bench.kept_and_pruned(["a.log", "b.log", "c.log", "d.log"], ["big.log"])
    bench.holds_whole("second", ["a.log", "b.log", "c.log", "d.log"])
    bench.holds_the_deadlocks("second", "big.log")


async def test_under_the_size_trigger_every_large_result_is_pruned_even_when_all_fit(
    bench: Trigger,
) -> None:
    script = [_reads(*_paths("a.log", "b.log", "c.log")), ANSWER]

    await bench.run("size", 16_384, script, "Why did the jobs stop?", prefetch=False)

    bench.kept_and_pruned([], ["a.log", "b.log", "c.log"])


async def test_a_call_that_says_what_it_looks_for_is_pruned_under_the_budget_trigger(
    bench: Trigger,
) -> None:
    focused = {"path": "a.log", "output_prune_context": "deadlock lines"}
    script = [_reads(focused, {"path": "b.log"}), ANSWER]

    await bench.run("budget", 16_384, script, "Why did the jobs stop?", prefetch=False)

    bench.kept_and_pruned(["b.log"], ["a.log"])


async def test_output_prune_false_is_never_pruned_under_the_budget_trigger(
    bench: Trigger,
) -> None:
    whole = {"path": "big.log", "output_prune": False}
    reads = _reads({"path": "a.log"}, whole, *_paths("b.log", "c.log", "d.log"))

    await bench.run("budget", 16_384, [reads, ANSWER], "Why did the jobs stop?", prefetch=False)

    records = bench.records()
    big = records["big.log"]
    assert not big["pruned"], f"big.log was pruned: {big}"
    assert KEPT_WHOLE_NOTE not in big["notes"], "big.log counted as kept by the trigger"
    others = ["a.log", "b.log", "c.log", "d.log"]
    assert any(records[n]["pruned"] for n in others), f"none pruned: {records}"


async def test_a_result_longer_than_its_cap_is_pruned_rather_than_cut(bench: Trigger) -> None:
    script = [_reads({"path": "big.log"}), "Two deadlocks."]

    await bench.run("budget", 8_192, script, "Why did the job stop?", prefetch=False)

    bench.kept_and_pruned([], ["big.log"])
    bench.holds_the_deadlocks("second", "big.log")


async def test_prefetched_files_are_pruned_only_as_far_as_they_do_not_fit(
    bench: Trigger,
) -> None:
    question = "Why did the jobs stop? See a.log, b.log, c.log and d.log."

    await bench.run("budget", 14_336, [ANSWER], question, prefetch=True)

    bench.kept_and_pruned(["b.log", "c.log", "d.log"], ["a.log"])
    bench.holds_whole("first", ["b.log", "c.log", "d.log"])
    bench.holds_the_deadlocks("first", "a.log")


async def test_prefetched_files_that_fit_together_are_all_kept_whole(bench: Trigger) -> None:
    question = "Why did the jobs stop? See a.log, b.log, c.log and d.log."

    await bench.run("budget", 16_384, [ANSWER], question, prefetch=True)

    assert bench.asked == 0
    bench.kept_and_pruned(["a.log", "b.log", "c.log", "d.log"], [])


async def test_a_result_kept_whole_and_later_trimmed_runs_again_and_comes_back_whole(
    bench: Trigger,
) -> None:
    script = [
        _reads({"path": "a.log"}),
        _reads({"path": "b.log"}),
        _reads({"path": "c.log"}),
        _reads({"path": "d.log"}),
        _reads({"path": "big.log", "output_prune": False}),
        _reads({"path": "a.log"}),
        ANSWER,
    ]

    await bench.run("budget", 16_384, script, "Why did the jobs stop?", prefetch=False)

    first, *rest = bench.reads("a.log")
    assert KEPT_WHOLE_NOTE in first["notes"], f"not kept whole by the trigger: {first}"
    assert first["trimmed_at"] is not None, f"the first read of a.log was never trimmed: {first}"
    assert len(rest) == 1, f"{len(rest) + 1} reads of a.log"
    second = rest[0]
    assert not second["repeated"], f"the guard answered for the second read: {second}"
    assert any("ran again" in n and "trimmed" in n for n in second["notes"]), second
    assert not second["pruned"], f"the second read of a.log was pruned: {second}"
    assert KEPT_WHOLE_NOTE in second["notes"], f"not kept whole by the trigger: {second}"
    bench.holds_whole("last", ["a.log"])


async def _prune_big_twice(bench: Trigger, focuses: tuple[str, str]) -> list[Any]:
    raw = "\n".join(f"{i:>4}| {line}" for i, line in enumerate(bench.logs["big.log"], start=1))
    pruner = Pruner(bench.pruning, PruneSettings(window_tokens=32_768))
    return [
        await pruner.prune(
            tool_name="read_file",
            raw=raw,
            request=PruneRequest(focus=focus),
            task_context="The user asked: why did the jobs stop?",
        )
        for focus in focuses
    ]


async def test_the_same_output_pruned_again_in_one_run_reuses_its_extract(
    bench: Trigger,
) -> None:
    first, second = await _prune_big_twice(bench, ("deadlock lines", "deadlock lines"))

    assert first.pruned and not first.reused, first
    assert second.reused and second.pruned, second
    assert second.text == first.text, (first.text[:200], second.text[:200])
    assert second.seconds == 0.0, second.seconds
    assert bench.asked == 1


async def test_the_same_output_with_another_focus_is_read_again(bench: Trigger) -> None:
    _, second = await _prune_big_twice(bench, ("deadlock lines", "job ids"))

    assert second.pruned and not second.reused, second
    assert bench.asked == 2


@pytest.mark.parametrize(
    ("model", "profile", "trigger"),
    [
        ("qwen2.5-coder-1.5b", "auto", "budget"),
        ("local-test", "auto", "budget"),
        ("gpt-4o-mini", "auto", "size"),
        ("gpt-4o-mini", "small", "budget"),
        ("qwen2.5-coder-1.5b", "default", "size"),
    ],
)
def test_pruning_trigger_auto_follows_the_pruning_model_profile(
    model: str, profile: str, trigger: str
) -> None:
    spec = AgentSpec(
        name="auto",
        model=ModelSpec(provider="openai", model=model),
        allow_tool_output_pruning=True,
        prompt_profile=profile,  # type: ignore[arg-type]
    )

    assert pruning_trigger(spec) == trigger, f"{model} with {profile}"
