"""Steps for features/loop/reader_tools.feature: a user's reader, prefetched, in the view.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``,
:mod:`support.runs`; ``read_doc`` and its documents are there too); the trimming checks
of later requests are ``loop_budget_steps.py``'s. Here are the checks of what became of
the prefetched result in the requests the model received.
"""

from __future__ import annotations

from behave import then
from behave.runner import Context
from langchain_core.messages import ToolMessage
from support import runs

from leanloop.budget.fit import TRIM_NOTE, is_trimmed

_PREFETCH_ID = "prefetch_"
"""How the loop's prefetched calls are numbered (``prefetch_0``, ``prefetch_1`` …)."""


def _prefetched(context: Context, n: int, tool: str) -> ToolMessage:
    """The one prefetched result of ``tool`` in request ``n``."""
    messages = runs.current(context).request(n).messages
    found = [
        m
        for m in messages
        if isinstance(m, ToolMessage) and m.tool_call_id.startswith(_PREFETCH_ID)
    ]
    assert len(found) == 1, [(m.tool_call_id, m.name) for m in found]
    assert found[0].name == tool, found[0].name
    return found[0]


@then("request {n:d} carries the prefetched {tool} result whole")
def step_prefetched_whole(context: Context, n: int, tool: str) -> None:
    result = _prefetched(context, n, tool)
    assert not is_trimmed(result) and TRIM_NOTE not in result.text, result.text[:300]


@then('request {n:d} carries the prefetched {tool} result trimmed to "{first}"')
def step_prefetched_trimmed(context: Context, n: int, tool: str, first: str) -> None:
    # Trimmed as any result is: its first line kept, so the model knows what it read,
    # and the note that says how to get the rest back.
    result = _prefetched(context, n, tool)
    assert is_trimmed(result), result.text[:300]
    assert result.text.splitlines()[0] == first, result.text
    assert TRIM_NOTE in result.text, result.text


@then('request {n:d} ends with a tool result containing "{text}"')
def step_ends_with_result(context: Context, n: int, text: str) -> None:
    last = runs.current(context).request(n).messages[-1]
    assert isinstance(last, ToolMessage), f"request {n} ends with {type(last).__name__}"
    assert not is_trimmed(last) and text in last.text, last.text[-300:]
