"""Steps for tool_isolation.feature: tools that must not reach past their own call.

The blocking tool really blocks (``time.sleep``) for half a second against a limit ten
times smaller: nothing here waits for a timer to show a timeout, the block itself is what
holds the run. It keeps the real clock (ADR 0027): a virtual one only moves between the
loop's iterations, so on it the block would take no time at all. The check-models scenario
uses the CLI steps of ``cli_steps.py`` and ``tools_near_file_steps.py``; the tenants
scenario builds and runs agents in this process, since what it checks is this process's
``sys.path`` and ``sys.modules``.
"""

from __future__ import annotations

import asyncio
import re
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from support import runs
from support.aio import run as run_async

from leanloop.agent import LLMAgent

# --- an async tool that blocks the event loop --------------------------------------------


def _blocking_tool(seconds: float) -> BaseTool:
    async def block_loop(label: str) -> str:
        """Do some work (badly: a blocking call in an async tool)."""
        time.sleep(seconds)  # noqa: ASYNC251 - the defect under test: it holds the loop
        # Work after the block: a timer of its own, due after the call's (already due on the
        # real clock after the block), so the call's timer fires first. Awaiting only ready
        # work would finish the call before the loop looks at its timers.
        await asyncio.sleep(0.01)
        return f"done {label}"

    return StructuredTool.from_function(coroutine=block_loop)


@given(
    'an agent whose async tool "block_loop" blocks the event loop for {seconds:g} s,'
    " with tool_timeout {limit:g}, and the script:"
)
def step_blocking_agent(context: Context, seconds: float, limit: float) -> None:
    run = runs.start(context, {"tool_timeout": limit})
    run.agent = LLMAgent.from_spec(
        run.agent.spec,
        model=run.model,
        tools=[*run.agent.tools, _blocking_tool(seconds)],
        pruning_model=run.agent.pruning_model,
    )
    # `asked … within N s` runs on virtual time; this block needs the real clock (above).
    context.real_clock = True


_TIMED_OUT = re.compile(
    r"error: (?P<tool>\w+) timed out after (?P<ran>[\d.]+) s \(its limit is (?P<limit>[\d.]+) s\):"
    r" it blocked the event loop, so it could not be stopped in time; not retried"
)
_NOTE = re.compile(
    r"blocked the event loop: ran (?P<ran>[\d.]+) s against its (?P<limit>[\d.]+) s time"
    r" limit, stuck in (?P<where>\w+) \((?P<file>[^:]+):\d+\); "
)


@then(
    'the tool result of request {n:d} says "{tool}" timed out after at least {seconds:g} s'
    " against its {limit:g} s limit, blocking the event loop"
)
def step_blocked_result(context: Context, n: int, tool: str, seconds: float, limit: float) -> None:
    messages = runs.current(context).request(n).messages
    texts = [m.text for m in messages if isinstance(m, ToolMessage)]
    found = [match for text in texts if (match := _TIMED_OUT.fullmatch(text))]
    assert found, texts
    assert found[0]["tool"] == tool, texts
    assert float(found[0]["ran"]) >= seconds, texts
    assert float(found[0]["limit"]) == limit, texts


@then(
    "report call {n:d} failed as timed out, with a note that it blocked the event loop and ran"
    ' at least {seconds:g} s, stuck in "{where}"'
)
def step_report_blocked_timeout(context: Context, n: int, seconds: float, where: str) -> None:
    call: dict[str, Any] = runs.current(context).report["tool_calls"][n - 1]
    assert call["timed_out"] is True and call["ok"] is False, call
    notes = [match for note in call["notes"] if (match := _NOTE.match(note))]
    assert notes, call["notes"]
    assert float(notes[0]["ran"]) >= seconds, call["notes"]
    assert notes[0]["where"] == where, call["notes"]
    assert notes[0]["file"] == Path(__file__).name, call["notes"]


# --- a built-in tool named like an MCP tool --------------------------------------------


@given(
    'an agents file "{name}" whose MCP server "{server}" runs "{script}" with this Python,'
    ' and whose agent "{agent}" has the tools "{tools}"'
)
def step_mcp_agents_file(
    context: Context, name: str, server: str, script: str, agent: str, tools: str
) -> None:
    refs = ", ".join(f'"{ref.strip()}"' for ref in tools.split(","))
    path = context.tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "version: 1\n"
        "mcp_servers:\n"
        f'  {server}: {{command: "{sys.executable}", args: [{script}], cwd: .}}\n'
        "agents:\n"
        f"  {agent}:\n"
        "    model: {class: leanloop.testing:ScriptedChatModel}\n"
        "    workspace: .\n"
        f"    tools: [{refs}]\n",
        encoding="utf-8",
    )


# --- two tenants, one mytools.py each ----------------------------------------------------

_TOOLS = '''
"""The tenant's tools, model class and answer schema."""

from pydantic import BaseModel

from helpers import WHO
from leanloop.testing import ScriptedChatModel


def lookup(code: str) -> str:
    """Look up what a code means."""
    return f"{WHO}: code {code}"


class TenantModel(ScriptedChatModel):
    """The tenant's own chat model class."""

    def tenant(self) -> str:
        return WHO


class Answer(BaseModel):
    """The tenant's typed answer."""

    code: str
    meaning: "Meaning"  # defined below: resolved when the module is complete

    def tenant(self) -> str:
        return WHO


class Meaning(BaseModel):
    text: str
'''

_AGENTS = """
version: 1
agents:
  a:
    model:
      class: "mytools:TenantModel"
      kwargs: {replies: [{tool_calls: [{name: lookup, args: {code: X1}}]}, "done"]}
    tools: ["mytools:lookup"]
  typed:
    model: {class: "mytools:TenantModel"}
    output_schema: "mytools:Answer"
"""


@given('the tenant folder "{folder}" whose mytools.py says "{who}"')
def step_tenant(context: Context, folder: str, who: str) -> None:
    root = context.tmp / folder
    root.mkdir(parents=True)
    (root / "helpers.py").write_text(f"WHO = {who!r}\n", encoding="utf-8")
    (root / "mytools.py").write_text(textwrap.dedent(_TOOLS), encoding="utf-8")
    (root / "agents.yaml").write_text(textwrap.dedent(_AGENTS), encoding="utf-8")


def _tenant_modules(context: Context) -> list[str]:
    root = str(context.tmp)
    return [
        name
        for name, module in list(sys.modules.items())
        if str(getattr(module, "__file__", None) or "").startswith(root)
    ]


@when('this process builds the agents of "{first}" and then of "{second}"')
def step_build_tenants(context: Context, first: str, second: str) -> None:
    context.path_before = list(sys.path)
    context.tenants = {}
    for file in (first, second):
        path = context.tmp / file
        context.tenants[Path(file).parent.name] = {
            name: LLMAgent.from_file(path, name) for name in ("a", "typed")
        }


def _file_of(function: Any) -> Path:
    return Path(function.__code__.co_filename).resolve()


@then('the agents of "{tenant}" have the tool, model class and answer schema of "{file}"')
def step_tenant_objects(context: Context, tenant: str, file: str) -> None:
    expected = (context.tmp / file).resolve()
    agents = context.tenants[tenant]
    tool = next(tool for tool in agents["a"].tools if tool.name == "lookup")
    assert isinstance(tool, StructuredTool) and tool.func is not None, tool
    schema = agents["typed"].answer_schema
    assert schema is not None
    homes = {
        "tool": _file_of(tool.func),
        "model class": _file_of(type(agents["a"].model).tenant),
        "answer schema": _file_of(schema.tenant),
    }
    wrong = {what: str(home) for what, home in homes.items() if home != expected}
    assert not wrong, f"not from {expected}: {wrong}"
    # The schema's forward reference resolved though its module is in no sys.modules.
    answer = schema.model_validate({"code": "X1", "meaning": {"text": "launch"}})
    assert answer.model_dump() == {"code": "X1", "meaning": {"text": "launch"}}


@then("sys.path is as it was before, and no module of either folder is in sys.modules")
def step_process_untouched(context: Context) -> None:
    assert sys.path == context.path_before, [p for p in sys.path if p not in context.path_before]
    assert not _tenant_modules(context), _tenant_modules(context)


@when('the agent "{name}" of each tenant is asked "{question}"')
def step_ask_tenants(context: Context, name: str, question: str) -> None:
    for agents in context.tenants.values():
        run_async(agents[name].ainvoke(question))


@then('the agent "{name}" of "{tenant}" got the tool result "{text}"')
def step_tenant_result(context: Context, name: str, tenant: str, text: str) -> None:
    model = context.tenants[tenant][name].model
    results = [m.text for m in model.requests[-1].messages if isinstance(m, ToolMessage)]
    assert results == [text], results
