"""``leanloop validate --check-models``: build every agent's models and start its MCP servers.

One verdict per agent. Nothing is asked of a model: each is built, as a run builds it.
Each MCP server an agent uses is started once (as building the agent starts it, within
the server's own ``timeout``) to list its tools; a server that cannot be started is one
located line naming it and its command, and an ``mcp:server/tool`` reference to a tool
the server does not have is located at its ``tools`` entry. Two of an agent's tools with
one name (a built-in ``read_file`` and an MCP server's ``read_file``) are refused with
the line a run refuses them with: the names are judged by the run's own check
(:func:`leanloop.tools.loader.tool_names_clash`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from leanloop.exceptions import SpecError, SpecIssue, ToolError
from leanloop.redact import redact_text
from leanloop.spec.types import AGENT_PREFIX, AgentSpec, McpServerSpec, ModelSpec, SourceLocation

__all__ = ["check_models"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2


@dataclass(slots=True)
class _Verdict:
    """What checking one agent found: what was built, or its problems."""

    models: list[str] = field(default_factory=list)
    """``model: ChatOpenAI`` and the like, for the verdict line."""
    servers: list[str] = field(default_factory=list)
    """``MCP server time: get_current_time, convert_time`` and the like."""
    issues: list[SpecIssue] = field(default_factory=list)


def check_models(file: str) -> int:
    """Check each agent on its own: its models built, its MCP servers started and listed.

    An agent whose file entry or model is broken does not stop the others from being
    checked (each is loaded with ``only=``, as ``run --agent`` loads it); a problem shared
    by several agents (a named model or an MCP server they all use) is printed once. Every
    MCP server any agent uses is started once, all of them at once.

    Args:
        file: The agents file.

    Returns:
        The exit status: 0 when every agent passed, 2 when any failed.

    Raises:
        SpecError: The file has no readable list of agents (its own problems, located).
    """
    from leanloop.spec import load_specs  # noqa: PLC0415 - keep `leanloop --help` fast

    names = _agent_names(file)
    specs: dict[str, AgentSpec] = {}
    verdicts: dict[str, _Verdict] = {name: _Verdict() for name in names}
    built: dict[int, tuple[str, list[SpecIssue]]] = {}  # id(ModelSpec) → (class, problems)
    for name in names:
        verdict = verdicts[name]
        try:
            spec = specs[name] = load_specs(file, only=name, imports=True)[name]
        except SpecError as exc:
            verdict.issues = list(exc.issues)
            continue
        for label, model in (("model", spec.model), ("pruning model", spec.pruning_model)):
            if model is None:
                continue
            if id(model) not in built:
                built[id(model)] = _build_model(model)
            kind, found = built[id(model)]
            verdict.issues += found
            verdict.models.append(f"{label}: {kind}")
    servers = {key: server for spec in specs.values() for key, server in spec.mcp_servers.items()}
    listed: dict[str, list[str] | ToolError] = {}
    if servers:
        listed = _probe(servers)
        for name, spec in specs.items():
            _check_mcp(spec, listed, _tool_entries(file, name), verdicts[name])
    for name, spec in specs.items():
        _check_tool_names(spec, listed, verdicts[name])
    return _print(verdicts)


def _print(verdicts: Mapping[str, _Verdict]) -> int:
    """Print each problem once (stderr), then one verdict per agent (stdout)."""
    printed: set[str] = set()
    lines: list[str] = []
    for name, verdict in verdicts.items():
        for issue in verdict.issues:
            if str(issue) not in printed:
                printed.add(str(issue))
                print(f"error: {redact_text(str(issue))} (agent {name})", file=sys.stderr)
        if verdict.issues:
            plural = "s" if len(verdict.issues) > 1 else ""
            lines.append(f"failed: {name} ({len(verdict.issues)} problem{plural})")
        else:
            shown = "; ".join([", ".join(verdict.models), *verdict.servers])
            lines.append(f"ok: {name} ({shown})")
    for line in lines:
        print(line)
    return EXIT_BAD_INPUT if any(line.startswith("failed") for line in lines) else EXIT_OK


def _probe(servers: Mapping[str, McpServerSpec]) -> dict[str, list[str] | ToolError]:
    """Each server's tool names, or why it could not be started (see ``probe_mcp_servers``)."""
    from leanloop.tools.mcp import probe_mcp_servers  # noqa: PLC0415 - starts processes

    return probe_mcp_servers(servers)


def _check_mcp(
    spec: AgentSpec,
    listed: Mapping[str, list[str] | ToolError],
    entries: Mapping[str, SourceLocation],
    verdict: _Verdict,
) -> None:
    """Add the agent's MCP servers to ``verdict``: their tools, or their problems."""
    from leanloop.tools.mcp import missing_mcp_tool, parse_mcp_ref  # noqa: PLC0415

    for key, server in spec.mcp_servers.items():
        found = listed[key]
        if isinstance(found, ToolError):
            verdict.issues.append(_issue(server.location, f"mcp_servers.{key}", str(found)))
            continue
        verdict.servers.append(f"MCP server {key}: {', '.join(found) or 'no tools'}")
        for ref in spec.tools:
            parsed = parse_mcp_ref(ref)
            if parsed is None or parsed[0] != key:
                continue
            problem = missing_mcp_tool(ref, found)
            if problem is not None:
                # Where the reference is written; the agent's entry when that is unknown.
                where = entries.get(ref)
                path = where.path if where else f"agents.{spec.name}.tools"
                verdict.issues.append(_issue(where or spec.location, path, problem))


def _check_tool_names(
    spec: AgentSpec, listed: Mapping[str, list[str] | ToolError], verdict: _Verdict
) -> None:
    """Add the problem a run would have building the agent's tools: two with one name.

    Located as a run locates it (the agent's ``tools``), so both print the same line.
    """
    from leanloop.tools.loader import tool_names_clash  # noqa: PLC0415 - imports LangChain

    names = {key: found for key, found in listed.items() if not isinstance(found, ToolError)}
    # An agent: tool is named after the agent it runs (leanloop.tools.agents.agent_tool).
    agents = {f"{AGENT_PREFIX}{key}": sub.name for key, sub in spec.sub_agents.items()}
    folder = spec.location.folder if spec.location is not None else None
    try:
        problem = tool_names_clash(spec.tools, mcp_tools=names, prebuilt=agents, near=folder)
    except ToolError as exc:  # a tool that cannot be built: the run refuses it too
        problem = str(exc)
    if problem is not None:
        verdict.issues.append(_issue(spec.location, f"agents.{spec.name}.tools", problem))


def _issue(where: SourceLocation | None, path: str, message: str) -> SpecIssue:
    """``message`` at ``where``'s file, line and column, under the key ``path``."""
    if where is None:
        return SpecIssue("<spec>", None, None, path, message)
    return SpecIssue(where.source, where.line, where.column, path, message)


def _tool_entries(file: str, agent: str) -> dict[str, SourceLocation]:
    """Where each entry of the agent's ``tools`` is written, by its reference.

    Read from the file's text again: specs keep the agent's position, not each entry's.
    A reference made by ``${VAR}`` is not found under its written text and is then
    located at the agent.
    """
    from leanloop.spec.yamlsource import parse_yaml  # noqa: PLC0415

    try:
        with open(file, encoding="utf-8-sig") as stream:
            data, positions, _ = parse_yaml(stream.read())
        tools = data["agents"][agent]["tools"]
    except Exception:  # the load already judged the file; this only adds positions
        return {}
    if not isinstance(tools, list):
        return {}
    found: dict[str, SourceLocation] = {}
    for index, entry in enumerate(tools):
        ref = entry.get("name") if isinstance(entry, Mapping) else entry
        mark = positions.value(("agents", agent, "tools", index))
        if isinstance(ref, str) and mark is not None and ref not in found:
            path = f"agents.{agent}.tools[{index}]"
            found[ref] = SourceLocation(file, mark.line, mark.column, path)
    return found


def _agent_names(file: str) -> list[str]:
    """The agents a file declares; the whole file's problems when it has no readable list."""
    from leanloop.spec import load_specs  # noqa: PLC0415 - keep `leanloop --help` fast

    try:
        return list(load_specs(file))
    except SpecError as whole:
        try:
            import yaml  # noqa: PLC0415 - only when the file has problems

            with open(file, encoding="utf-8-sig") as stream:
                agents = yaml.safe_load(stream).get("agents")
        except Exception:  # unreadable as YAML: the load's own error says why
            raise whole from None
        if not isinstance(agents, dict) or not agents:
            raise
        return [str(name) for name in agents]


def _build_model(model: ModelSpec) -> tuple[str, list[SpecIssue]]:
    """Build ``model`` (no request is sent): its class name, or its problems, located."""
    from leanloop.models import build_chat_model  # noqa: PLC0415 - imports LangChain

    try:
        chat_model = build_chat_model(model)
    except SpecError as exc:
        return "", list(exc.issues)
    except Exception as exc:  # a provider's own error that escaped: still one located line
        text = f"cannot build the model: {type(exc).__name__}: {exc}"
        if model.api_key:
            text = text.replace(model.api_key, "***")
        text = redact_text(text)  # the provider's text may repeat base_url
        loc = model.location
        if loc is None:
            return "", [SpecIssue("<model>", None, None, model.name or "model", text)]
        return "", [SpecIssue(loc.source, loc.line, loc.column, loc.path, text)]
    return type(chat_model).__name__, []
