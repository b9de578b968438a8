"""Steps for mcp.feature: MCP tools from the agents file, through langchain-mcp-adapters.

The server is a FastMCP program (from the ``mcp`` package) written into the scenario's
temporary folder and started over stdio with this Python; the main model and the pruning
model are scripted.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import BaseMessage, ToolMessage

from leanloop.agent import LLMAgent
from leanloop.exceptions import SpecError
from leanloop.spec import load_specs
from leanloop.testing import ScriptedChatModel

_SHOWN_PREFIX = re.compile(r"\s*\d+\| ")
_FILLER = "INFO worker handled a job of the nightly batch; nothing unusual to report here"

_SERVER = '''
"""A test MCP server: a large log and a short stock answer."""

from mcp.server.fastmcp import FastMCP

app = FastMCP("logs", log_level="WARNING")
WORD = {word!r}


@app.tool()
def fetch_log(name: str) -> str:
    """Return the named log (about 50 KB)."""
    lines = [f"12:{{i // 60 % 60:02d}}:{{i % 60:02d}} {filler} {{i:>5}}".ljust(121, ".")
             for i in range(420)]
    for k in range(1, {count} + 1):
        lines[k * 100] = f"ERROR {{WORD}} #{{k}} in {{name}}"
    return "\\n".join(lines)


@app.tool()
def stock(item: str) -> str:
    """How many units of an item are in stock."""
    return f"{{item}}: 7 units"


app.run("stdio")
'''


def _folder(context: Context) -> Path:
    folder = getattr(context, "mcp_folder", None)
    if folder is None:
        made = tempfile.TemporaryDirectory(prefix="leanloop-mcp-")
        context.cleanups.append(made.cleanup)
        folder = context.mcp_folder = Path(made.name)
    return Path(folder)


@given(
    'an MCP server "{name}" whose tool fetch_log returns 50 KB'
    ' with {count:d} lines mentioning "{word}"'
)
def step_server(context: Context, name: str, count: int, word: str) -> None:
    script = _folder(context) / "server.py"
    script.write_text(_SERVER.format(word=word, count=count, filler=_FILLER))
    context.mcp_server = (name, {"command": sys.executable, "args": [str(script)]})


@given('an MCP server "{name}" started by the command "{command}"')
def step_missing_server(context: Context, name: str, command: str) -> None:
    context.mcp_server = (name, {"command": command})


def _keep(word: str) -> Any:
    def keep(messages: list[BaseMessage]) -> str:
        lines = str(messages[-1].content).split("\n")
        kept = [line for line in lines if _SHOWN_PREFIX.match(line) and word in line]
        body = "".join(f"{line}\n" for line in kept)
        return (
            "[PRUNE_INFO_START]\nkept the relevant lines\n[PRUNE_INFO_END]\n"
            f"[PRUNE_OUTPUT_START]\n{body}[PRUNE_OUTPUT_END]"
        )

    return keep


@given(
    'an agent with the tools "{tools}", pruning_tools "{pruning}"'
    ' and a pruning model that keeps the lines mentioning "{word}"'
)
def step_agent_pruning(context: Context, tools: str, pruning: str, word: str) -> None:
    context.mcp_agent_settings = {
        "tools": [tools],
        "allow_tool_output_pruning": True,
        "pruning_tools": [pruning],
    }
    context.mcp_extractor = ScriptedChatModel(replies=[_keep(word)], repeat_last=True)


@given('an agent with the tools "{tools}" and no pruning')
def step_agent(context: Context, tools: str) -> None:
    context.mcp_agent_settings = {"tools": [tools]}
    context.mcp_extractor = None


@given('its main model calls {tool} {args} and then answers "{answer}"')
def step_main_script(context: Context, tool: str, args: str, answer: str) -> None:
    context.mcp_replies = [{"tool_calls": [{"name": tool, "args": json.loads(args)}]}, answer]


def _agent(context: Context) -> LLMAgent:
    name, server = context.mcp_server
    model = {
        "class": "leanloop.testing:ScriptedChatModel",
        "context_window": 200_000,
        "kwargs": {"replies": getattr(context, "mcp_replies", ["Nothing."])},
    }
    document = {
        "version": 1,
        "mcp_servers": {name: server},
        "agents": {"a": {"model": model, **context.mcp_agent_settings}},
    }
    path = _folder(context) / "agents.yaml"
    path.write_text(json.dumps(document))  # JSON is YAML
    spec = load_specs(path)["a"]
    return LLMAgent.from_spec(spec, pruning_model=context.mcp_extractor)


@when("the MCP agent is built")
def step_build(context: Context) -> None:
    context.mcp_error = None
    started = time.monotonic()
    try:
        context.mcp_agent = _agent(context)
    except SpecError as exc:
        context.mcp_error = exc
    context.mcp_seconds = time.monotonic() - started


@when('the MCP agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    context.mcp_agent = _agent(context)
    context.mcp_answer = context.mcp_agent.invoke(question)


@then('the MCP agent answered "{answer}"')
def step_answered(context: Context, answer: str) -> None:
    assert context.mcp_answer.text == answer, context.mcp_answer.text


def _tool_results(context: Context) -> list[str]:
    model = context.mcp_agent.model
    assert isinstance(model, ScriptedChatModel)
    messages = model.requests[-1].messages
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


@then(
    "report call {n:d} of the MCP agent was pruned"
    " from at least {raw:,d} characters to at most {out:,d}"
)
def step_pruned(context: Context, n: int, raw: int, out: int) -> None:
    record = context.mcp_answer.response_metadata["leanloop"]["tool_calls"][n - 1]
    assert record["pruned"], record
    assert record["chars_raw"] >= raw, record
    assert record["chars_out"] <= out, record


@then('the MCP tool result the model received holds the {count:d} lines mentioning "{word}"')
def step_holds(context: Context, count: int, word: str) -> None:
    (result,) = _tool_results(context)
    for k in range(1, count + 1):
        assert f"ERROR {word} #{k} in nightly" in result, result


@then('the MCP tool result the model received is exactly "{text}"')
def step_exact(context: Context, text: str) -> None:
    assert _tool_results(context) == [text], _tool_results(context)


@then('the MCP agent has the tools "{names}"')
def step_tools(context: Context, names: str) -> None:
    got = [tool.name for tool in context.mcp_agent.tools]
    assert got == [name.strip() for name in names.split(",")], got


@then('building the MCP agent fails with one line naming "{server}" and "{command}"')
def step_fails(context: Context, server: str, command: str) -> None:
    error = context.mcp_error
    assert error is not None, "the agent was built"
    lines = str(error).splitlines()
    assert len(lines) == 1, lines
    assert f"'{server}'" in lines[0] and command in lines[0], lines
    assert context.mcp_seconds < 30, f"it took {context.mcp_seconds:.1f} s"


@given('a tool that returns a text block "{text}", a 3-byte PNG image block and a PDF file link')
def step_block_tool(context: Context, text: str) -> None:
    from langchain_core.messages.content import (  # noqa: PLC0415
        create_file_block,
        create_image_block,
        create_text_block,
    )
    from langchain_core.tools import StructuredTool  # noqa: PLC0415

    blocks = [
        create_text_block(text=text),
        create_image_block(base64="AAAA", mime_type="image/png"),
        create_file_block(url="https://example.com/stock.pdf", mime_type="application/pdf"),
    ]

    async def stock(item: str) -> list[Any]:
        """Stock of an item, as content blocks."""
        return blocks

    context.mcp_block_tool = StructuredTool.from_function(coroutine=stock)


@when("the registry runs that tool")
def step_registry_runs(context: Context) -> None:
    import asyncio  # noqa: PLC0415

    from leanloop.tools.registry import ToolRegistry  # noqa: PLC0415

    registry = ToolRegistry([context.mcp_block_tool])
    context.mcp_outcome = asyncio.run(registry.run("stock", {"item": "A-1"}))


@then("the registry's result text is:")
def step_registry_text(context: Context) -> None:
    assert context.mcp_outcome.ok, context.mcp_outcome
    assert context.mcp_outcome.text == context.text, context.mcp_outcome.text
