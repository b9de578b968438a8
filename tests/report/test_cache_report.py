"""The report says how much of each prompt the server's cache served (src/leanloop/report.py),
moved from features/cache_usage.feature (issue 26).

llama-server keeps each slot's last prompt and reuses its longest common prefix with the
next request, so a loop whose requests grow by appending pays only for the new tail. It
reports the cached part as usage.prompt_tokens_details.cached_tokens; ChatOpenAI keeps it
as usage_metadata.input_token_details.cache_read. The report records, per request, the
prompt tokens the server evaluated and those its cache served (unknown when the reply does
not say), adds them up over the run, and says what share of the prompt tokens after the
first request came from the cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from leanloop.agent import LLMAgent
from leanloop.budget import SharedState
from leanloop.cache_usage import RequestTally
from leanloop.report import RunReport, cached_share, format_report, summary_line
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

READ = {"name": "read_file", "args": {"path": "notes.txt"}}


def _reply(index: int, input_tokens: int, cached: int | None, output: int, text: str = "") -> Any:
    """A scripted reply reporting its usage; a tool call when ``text`` is empty."""
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output}
    if cached is not None:
        usage["cache_read"] = cached
    if text:
        return {"content": text, "usage": usage}
    return {"content": "", "tool_calls": [{**READ, "id": f"cache_{index}"}], "usage": usage}


def _run(tmp_path: Path, replies: list[Any]) -> dict[str, Any]:
    (tmp_path / "notes.txt").write_text("The colour is blue.\n", encoding="utf-8")
    spec = AgentSpec(
        name="cached",
        model=ModelSpec(
            class_path="leanloop.testing:ScriptedChatModel",
            model="cached",
            context_window=200_000,
        ),
        tools=("read_file",),
        workspace=tmp_path,
        max_repeated_calls=5,  # the script reads the file twice on purpose
    )
    # A state of its own: the run's token estimate starts from nothing (ADR 0038).
    agent = LLMAgent.from_spec(
        spec, model=ScriptedChatModel(replies=replies), shared_state=SharedState()
    )
    answer = agent.invoke("What colour do the notes name?")
    assert isinstance(answer, AIMessage)
    # What `leanloop report` reads: the report as JSON, written and read back.
    report: dict[str, Any] = json.loads(json.dumps(answer.response_metadata["leanloop"]))
    return report


def _table(report: dict[str, Any]) -> tuple[str, list[str]]:
    text = format_report(report)
    rows = text.splitlines()
    return next(row for row in rows if row.strip().startswith("request ")), rows


def test_cached_prompt_tokens_show_per_request_in_total_and_in_the_text_report(
    tmp_path: Path,
) -> None:
    report = _run(
        tmp_path,
        [
            _reply(0, 900, 0, 20),
            _reply(1, 1000, 880, 20),
            _reply(2, 1100, 1000, 10, "The colour is blue."),
        ],
    )

    seen = [(r["prompt_evaluated"], r["prompt_cached"]) for r in report["requests"]]
    assert seen == [(900, 0), (120, 880), (100, 1000)]
    assert (report["prompt_evaluated"], report["prompt_cached"]) == (1120, 1880), report
    share = cached_share(report["requests"][1:])
    assert share is not None
    assert round(share * 100) == 90, share
    assert "3,000 prompt tokens · 1,880 from cache" in summary_line(report)
    header, rows = _table(report)
    assert (
        "prompt cache: 1,880 of 3,000 prompt tokens served from the server's cache (63%) · "
        "after the first request: 90%"
    ) in rows
    assert "from cache" in header
    total = next(row for row in rows if row.strip().startswith("total "))
    assert len(total.split()) == 4, total  # total, input, cached, output


def test_a_model_that_says_nothing_about_a_cache_leaves_the_figures_unknown(
    tmp_path: Path,
) -> None:
    report = _run(
        tmp_path, [_reply(0, 900, None, 20), _reply(1, 1000, None, 10, "The colour is blue.")]
    )

    seen = [(r["prompt_evaluated"], r["prompt_cached"]) for r in report["requests"]]
    assert seen == [(None, None), (None, None)]
    assert report["prompt_evaluated"] is None, report["prompt_evaluated"]
    assert report["prompt_cached"] is None, report["prompt_cached"]
    line = summary_line(report)
    assert "1,900 prompt tokens · " in line
    assert "from cache" not in line
    header, _ = _table(report)
    assert "from cache" not in header


def test_the_pruning_pass_requests_are_added_up_apart_from_the_main_model() -> None:
    tally = RequestTally()
    for input_tokens, cached, output, seconds in (
        (1200, 0, 80, 2.5),
        (1300, 1100, 60, 1.0),
        (400, None, 5, 0.25),
    ):
        usage: dict[str, Any] = {
            "input_tokens": input_tokens,
            "output_tokens": output,
            "total_tokens": input_tokens + output,
        }
        if cached is not None:
            usage["input_token_details"] = {"cache_read": cached}
        tally.add(AIMessage(content="[PRUNE_OUTPUT_START]", usage_metadata=usage), seconds)
    run_report = RunReport()

    run_report.note_extraction(tally)
    # The report holds a copy: requests the pruner answers later do not change it.
    tally.add(AIMessage(content="later"), 9.0)
    report = json.loads(json.dumps(run_report.to_dict()))

    assert report["extraction"] == {
        "requests": 3,
        "prompt_tokens": 2900,
        "prompt_evaluated": 1400,
        "prompt_cached": 1100,
        "completion_tokens": 145,
        "seconds": 3.75,
    }
    assert report["requests"] == [], report["requests"]
    assert report["prompt_evaluated"] is None, report
    assert (
        "pruning pass: 3 requests · 2,900 prompt tokens (1,100 from cache) · "
        "145 completion tokens · 3.8 s"
    ) in format_report(report).splitlines()
