"""Checks of an agents file that a JSON Schema cannot express.

Cross-field rules of a model, references to named models, import paths that must
resolve, workspaces that must exist. They run even when the schema found problems, on
every value of the right type that the schema did not already reject, so that one
``validate`` shows every mistake of the file.

Import paths (``tools``, ``class``, ``output_schema``) are checked by reading the module's
source (:mod:`leanloop.spec.refs`): reading an agents file runs none of its code. Only
with ``imports=True`` (for callers about to run the file anyway) are the modules imported
and the objects themselves judged. A tool from the standard library (``os:system``) is
refused by name either way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leanloop._imports import ImportPathError, import_object, is_import_path
from leanloop.spec.issues import Problem, Reporter, did_you_mean
from leanloop.spec.options import PORTABLE_OPTIONS, lift_options, not_accepted, option_keyword
from leanloop.spec.refs import Resolved, resolve_reference
from leanloop.spec.tooloptions import tool_entry_problems
from leanloop.spec.toolrefs import (
    BUILTIN_TOOLS,
    callable_refusal,
    is_standard_module,
    parse_mcp_ref,
    standard_callable_refusal,
)
from leanloop.spec.types import AGENT_PREFIX
from leanloop.spec.yamlsource import KeyPath

__all__ = ["resolve_workspace", "semantic_check", "semantic_problems"]

_NEEDS_MODEL = ("ollama", "openai-compatible")


def resolve_workspace(text: str, base_dir: Path) -> Path:
    """The absolute workspace folder for ``text``, relative to ``base_dir``."""
    path = Path(text).expanduser()
    return (path if path.is_absolute() else base_dir / path).resolve()


@dataclass(slots=True)
class _Checker:
    reporter: Reporter
    base_dir: Path
    rejected: set[KeyPath]
    """Paths the schema already reported: not judged twice."""
    models: Mapping[str, Any] = field(default_factory=dict)
    mcp_servers: Mapping[str, Any] | None = None
    """The file's ``mcp_servers`` (``None``: absent or rejected by the schema)."""
    agents: Mapping[str, Any] = field(default_factory=dict)
    calls: dict[str, list[tuple[str, KeyPath]]] = field(default_factory=dict)
    """Per agent: the agents its ``agent:`` tools name, and where."""
    problems: list[Problem] = field(default_factory=list)
    imports: bool = False
    """Import the modules import paths name (the objects are judged), or only read them."""

    def judges(self, path: KeyPath) -> bool:
        """Whether the value at ``path`` is this checker's to judge (the schema passed it)."""
        return path not in self.rejected

    def add(self, path: KeyPath, message: str, *, at_key: bool = False) -> None:
        self.problems.append(Problem(path, message, at="key" if at_key else "value"))


def semantic_problems(
    data: Mapping[str, Any],
    reporter: Reporter,
    *,
    base_dir: Path,
    rejected: set[KeyPath],
    imports: bool = False,
) -> list[Problem]:
    """Every cross-field, reference, import and filesystem problem in ``data``.

    Args:
        data: The interpolated document (possibly with schema problems).
        reporter: Shows values without secrets.
        base_dir: The folder relative workspaces (and import paths) resolve against.
        rejected: Paths the schema already reported.
        imports: Import the modules that import paths name, to judge their objects;
            by default their source is only read, and nothing of it runs.
    """
    return semantic_check(
        data, reporter, base_dir=base_dir, rejected=rejected, imports=imports
    ).problems


def semantic_check(
    data: Mapping[str, Any],
    reporter: Reporter,
    *,
    base_dir: Path,
    rejected: set[KeyPath],
    imports: bool = False,
) -> _Checker:
    """:func:`semantic_problems`, as the checker that found them."""
    checker = _Checker(reporter, base_dir, rejected, imports=imports)
    for where in _not_finite(data, ()):
        if checker.judges(where):
            checker.add(where, "expected a finite number, got a NaN or infinity")
    models = data.get("models")
    if isinstance(models, Mapping) and checker.judges(("models",)):
        checker.models = models
        for name, model in models.items():
            _check_model(checker, model, ("models", name))
    servers = data.get("mcp_servers")
    if "mcp_servers" not in data:
        checker.mcp_servers = {}
    elif isinstance(servers, Mapping) and checker.judges(("mcp_servers",)):
        checker.mcp_servers = servers
        for name, server in servers.items():
            if isinstance(server, Mapping) and checker.judges(("mcp_servers", name)):
                _check_mcp_server(checker, server, ("mcp_servers", name))
    agents = data.get("agents")
    if isinstance(agents, Mapping) and checker.judges(("agents",)):
        checker.agents = agents
        for name, agent in agents.items():
            if isinstance(agent, Mapping) and checker.judges(("agents", name)):
                _check_agent(checker, agent, ("agents", name))
        _check_agent_cycles(checker)
    return checker


def _check_agent(checker: _Checker, agent: Mapping[str, Any], path: KeyPath) -> None:
    for key in ("model", "pruning_model"):
        value, where = agent.get(key), (*path, key)
        if isinstance(value, str) and checker.judges(where):
            _check_reference(checker, value, where)
        elif isinstance(value, Mapping) and checker.judges(where):
            _check_model(checker, value, where)
    tool_names, tools_ok = _check_tools(checker, agent, path)
    _check_workspace(checker, agent, path)
    schema = agent.get("output_schema")
    if isinstance(schema, str) and checker.judges((*path, "output_schema")):
        _check_output_schema(checker, schema, (*path, "output_schema"))
    pruning_tools = agent.get("pruning_tools")
    if tools_ok and (isinstance(pruning_tools, list) and checker.judges((*path, "pruning_tools"))):
        _check_pruning_tools(checker, pruning_tools, tool_names, (*path, "pruning_tools"))


def _check_reference(checker: _Checker, name: str, path: KeyPath) -> None:
    if name in checker.models:
        return
    shown = checker.reporter.show(name, path)
    if not checker.models:
        hint = " (this file declares no models: add it under 'models', or write it inline)"
    else:
        hint = "" if checker.reporter.is_secret(path) else did_you_mean(name, checker.models)
        hint = hint or f" (the declared models are {', '.join(map(repr, checker.models))})"
    checker.add(path, f"unknown model {shown}{hint}")


def _check_model(checker: _Checker, model: Any, path: KeyPath) -> None:
    if not (isinstance(model, Mapping) and checker.judges(path)):
        return
    provider = model.get("provider")
    if "provider" in model and "class" in model:
        checker.add((*path, "class"), "set 'provider' or 'class', not both", at_key=True)
    elif "provider" not in model and "class" not in model:
        message = (
            "a model needs 'provider' (openai, anthropic, ollama, openai-compatible) or 'class'"
        )
        checker.add(path, message, at_key=True)
    kwargs = model.get("kwargs")
    if isinstance(kwargs, Mapping):
        given = {key: model.get(key) for key in PORTABLE_OPTIONS}
        for key, option in lift_options(given, kwargs)[2]:
            message = f"kwargs.{key} sets what '{option}' sets; give it once"
            checker.add((*path, "kwargs", key), message, at_key=True)
    if provider in _NEEDS_MODEL and "model" not in model:
        message = f"an {provider!r} model needs 'model' (the name the server knows)"
        checker.add(path, message, at_key=True)
    if provider == "ollama" and "api_key" in model:
        message = (
            "ChatOllama has no option 'api_key' (Ollama takes no key; send headers "
            "under kwargs.client_kwargs)"
        )
        checker.add((*path, "api_key"), message, at_key=True)
    api_key = model.get("api_key")
    if isinstance(api_key, str) and not api_key.isascii():
        # It travels in an HTTP header, which carries ASCII only: the request would fail
        # at the first step and blame the server. The key itself is never shown.
        message = (
            "the key holds characters an HTTP header cannot carry (not ASCII); check the "
            "value or the environment variable it comes from"
        )
        checker.add((*path, "api_key"), message, at_key=True)
    if provider == "openai-compatible" and "base_url" not in model:
        checker.add(path, "an 'openai-compatible' model needs 'base_url'", at_key=True)
    class_path = model.get("class")
    if isinstance(class_path, str) and checker.judges((*path, "class")):
        _check_model_class(checker, class_path, (*path, "class"), model)


def _check_model_class(
    checker: _Checker, class_path: str, path: KeyPath, model: Mapping[str, Any]
) -> None:
    shown = checker.reporter.show(class_path, path)
    not_a_model = f"{shown} is not a chat model class (a subclass of BaseChatModel)"
    if is_standard_module(class_path.partition(":")[0]):  # it has none, and is not imported
        checker.add(path, not_a_model)
        return
    if not checker.imports:
        found = _resolved(checker, class_path, path)
        binding = found.binding if found else None
        unknown = binding is None or (binding.kind == "value" and binding.literal is None)
        if (
            binding is not None
            and not unknown
            and not (binding.kind == "class" and binding.has_bases)
        ):
            checker.add(path, not_a_model)
        return
    # LangChain is imported only for files that name classes (`validate` stays fast).
    from langchain_core.language_models import BaseChatModel  # noqa: PLC0415

    try:
        obj = import_object(class_path, near=checker.base_dir)
    except ImportPathError as exc:
        checker.add(path, _import_failure(checker, exc, path))
        return
    if not (isinstance(obj, type) and issubclass(obj, BaseChatModel)):
        checker.add(path, not_a_model)
        return
    # Every top-level option must reach the class: one it has no field for would be
    # dropped, and a dropped base_url or api_key sends requests somewhere else.
    for option in PORTABLE_OPTIONS:
        if option in model and option_keyword(obj, option) is None:
            checker.add((*path[:-1], option), not_accepted(obj, option), at_key=True)


def _resolved(checker: _Checker, ref: str, path: KeyPath) -> Resolved | None:
    """``ref`` found by reading its module (nothing runs), or ``None`` after saying why not."""
    try:
        found = resolve_reference(ref, checker.base_dir)
    except ImportPathError as exc:
        checker.add(path, _import_failure(checker, exc, path))
        return None
    return found


def _import_failure(checker: _Checker, exc: ImportPathError, path: KeyPath) -> str:
    return (
        "the import path *** cannot be imported" if checker.reporter.is_secret(path) else str(exc)
    )


def _check_tools(
    checker: _Checker, agent: Mapping[str, Any], path: KeyPath
) -> tuple[set[str], bool]:
    """Check each tool; return the agent's tool names and whether all of them resolved."""
    tools = agent.get("tools", [])
    if not (isinstance(tools, list) and checker.judges((*path, "tools"))):
        return set(), False
    names: set[str] = set()
    resolved = True
    for index, entry in enumerate(tools):
        where = (*path, "tools", index)
        tool = entry
        if isinstance(entry, Mapping) and checker.judges(where):
            for at, message, at_key in tool_entry_problems(entry, agent, where):
                if checker.judges(at):
                    checker.add(at, message, at_key=at_key)
            tool, where = entry.get("name"), (*where, "name")
        if not (isinstance(tool, str) and checker.judges(where)):
            continue
        if tool.startswith(AGENT_PREFIX):
            name = _agent_tool_name(checker, tool, where)
            resolved = resolved and name is not None
            names.update([name] if name else [])
            continue
        if parse_mcp_ref(tool) is not None:
            name = _mcp_tool_name(checker, tool, where)
            # `mcp:server` stands for tools only the running server can name.
            resolved = resolved and name is not None and name != ""
            names.update([name] if name else [])
            continue
        if tool in BUILTIN_TOOLS:
            names.add(tool)
            continue
        name = _tool_name(checker, tool, where)
        # "": a tool whose name only importing its module would tell (see refs).
        resolved = resolved and bool(name)
        names.update([name] if name else [])
    # Built-in tools need no 'workspace' key: without one they use the agents file's
    # folder (the loader fills it in).
    return names, resolved


def _agent_tool_name(checker: _Checker, tool: str, path: KeyPath) -> str | None:
    """The tool name of ``agent:NAME`` (the agent's name), ``None`` after saying why not."""
    name = tool[len(AGENT_PREFIX) :]
    if name not in checker.agents:
        hint = did_you_mean(name, checker.agents)
        hint = hint or f" (the agents are {', '.join(map(repr, checker.agents))})"
        checker.add(path, f"{tool!r} names no agent of this file{hint}")
        return None
    checker.calls.setdefault(str(path[1]), []).append((name, path))
    return name


def _check_agent_cycles(checker: _Checker) -> None:
    """An agent may not reach itself through ``agent:`` tools: each cycle once, located."""
    state: dict[str, str] = {}

    def visit(agent: str, trail: list[str]) -> None:
        state[agent] = "open"
        for callee, where in checker.calls.get(agent, []):
            if state.get(callee) == "open":
                # The open agents are exactly the trail: the cycle is its tail.
                shown = " -> ".join([*trail[trail.index(callee) :], callee])
                checker.add(where, f"agent tools make a cycle: {shown}")
            elif callee not in state:
                visit(callee, [*trail, callee])
        state[agent] = "done"

    for agent in checker.calls:
        if agent not in state:
            visit(agent, [agent])


def _check_mcp_server(checker: _Checker, server: Mapping[str, Any], path: KeyPath) -> None:
    """A server is a program (``command``) or a URL (``url``), with options that fit it."""
    if ("command" in server) == ("url" in server):
        which = "both" if "command" in server else "neither"
        message = f"an MCP server needs 'command' (stdio) or 'url' (HTTP), not {which}"
        checker.add(path, message, at_key=True)
        return
    stdio = "command" in server
    transport = server.get("transport")
    if stdio and transport not in (None, "stdio"):
        checker.add((*path, "transport"), f"a 'command' server talks stdio, not {transport!r}")
    if not stdio and transport == "stdio":
        message = "a 'url' server talks 'streamable_http' or 'sse', not 'stdio'"
        checker.add((*path, "transport"), message)
    for key in ("headers",) if stdio else ("args", "env", "cwd"):
        if key in server:
            kind = "'url'" if stdio else "'command'"
            message = f"{key!r} is for a {kind} server"
            checker.add((*path, key), message, at_key=True)


def _mcp_tool_name(checker: _Checker, tool: str, path: KeyPath) -> str | None:
    """The tool name of ``mcp:server/tool``, ``""`` for ``mcp:server``, ``None`` if wrong."""
    server, name = parse_mcp_ref(tool) or ("", None)
    if checker.mcp_servers is None:  # the schema already refused mcp_servers
        return None
    shown = checker.reporter.show(tool, path)
    if not server or (name is not None and not _MCP_TOOL.fullmatch(name)):
        message = f"{shown} is not 'mcp:server' or 'mcp:server/tool'"
        checker.add(path, message)
        return None
    if server not in checker.mcp_servers:
        declared = checker.mcp_servers
        hint = did_you_mean(server, declared) if declared else ""
        if not declared:
            hint = " (this file declares no mcp_servers)"
        hint = hint or f" (the declared servers are {', '.join(map(repr, declared))})"
        checker.add(path, f"{shown} names no MCP server {server!r}{hint}")
        return None
    return name or ""


_MCP_TOOL = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _tool_name(checker: _Checker, tool: str, path: KeyPath) -> str | None:
    """The name the tool at ``path`` will have, or ``None`` after reporting why it has none."""
    shown = checker.reporter.show(tool, path)
    if not is_import_path(tool):
        hint = "" if checker.reporter.is_secret(path) else did_you_mean(tool, BUILTIN_TOOLS)
        builtin = ", ".join(BUILTIN_TOOLS)
        message = (
            f"unknown tool {shown}{hint}; the built-in tools are {builtin}, "
            "other tools are import paths 'package.module:name'"
        )
        checker.add(path, message)
        return None
    refusal = standard_callable_refusal(tool, shown=shown)
    if refusal is not None:  # refused by name: the module is not even read
        checker.add(path, refusal)
        return None
    if not checker.imports:
        return _read_tool_name(checker, tool, path)
    from langchain_core.tools import BaseTool  # noqa: PLC0415 - only for import-path tools

    try:
        obj = import_object(tool, near=checker.base_dir)
    except ImportPathError as exc:
        checker.add(path, _import_failure(checker, exc, path))
        return None
    if isinstance(obj, BaseTool):
        return obj.name
    if callable(obj) and not isinstance(obj, type):
        refusal = callable_refusal(obj, tool, shown=shown)
        if refusal is not None:
            checker.add(path, refusal)
            return None
        return str(getattr(obj, "__name__", tool.rpartition(":")[2].rpartition(".")[2]))
    what = "a class" if isinstance(obj, type) else f"a {type(obj).__name__}"
    checker.add(path, f"{shown} is {what}, not a tool (a LangChain BaseTool or a function)")
    return None


def _read_tool_name(checker: _Checker, tool: str, path: KeyPath) -> str | None:
    """The tool's name as its module's source gives it; ``""`` when only a run can tell."""
    found = _resolved(checker, tool, path)
    if found is None:
        return None
    binding = found.binding
    if binding is None:
        return ""
    shown = checker.reporter.show(tool, path)
    refusal = standard_callable_refusal(tool, binding.origin, shown=shown)
    if refusal is not None:  # `from os import system`, re-exported by a module of the user's
        checker.add(path, refusal)
        return None
    if binding.kind == "function":
        return binding.name
    what = {"class": "a class", "module": "a module", "import": "a module"}.get(binding.kind)
    if what is None and binding.literal is not None:
        what = f"a {binding.literal}"
    if what is not None:
        checker.add(path, f"{shown} is {what}, not a tool (a LangChain BaseTool or a function)")
        return None
    return ""  # an assignment or an import: a tool object, for all the source says


def _check_output_schema(checker: _Checker, ref: str, path: KeyPath) -> None:
    """``output_schema`` names a pydantic model class (read, or imported with ``imports``)."""
    shown = checker.reporter.show(ref, path)
    not_a_model = "not a pydantic model (a BaseModel subclass)"
    if is_standard_module(ref.partition(":")[0]):  # it has none, and is not imported
        checker.add(path, f"{shown} is {not_a_model}")
        return
    if not checker.imports:
        found = _resolved(checker, ref, path)
        binding = found.binding if found else None
        if binding is None:
            return
        attr = ref.partition(":")[2]
        what = {"function": "a function", "module": "a module", "import": "a module"}.get(
            binding.kind
        )
        if binding.kind == "class" and not binding.has_bases and "." not in attr:
            what = f"the class {attr}"
        elif binding.kind == "value" and binding.literal is not None:
            what = f"a {binding.literal}"
        if what is not None:
            checker.add(path, f"{shown} is {what}, {not_a_model}")
        return
    from pydantic import BaseModel  # noqa: PLC0415 - only for agents with a schema

    try:
        obj = import_object(ref, near=checker.base_dir)
    except ImportPathError as exc:
        checker.add(path, _import_failure(checker, exc, path))
        return
    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
        what = f"the class {obj.__name__}" if isinstance(obj, type) else f"a {type(obj).__name__}"
        checker.add(path, f"{shown} is {what}, {not_a_model}")


def _not_finite(value: Any, path: KeyPath) -> Iterator[KeyPath]:
    """Paths of NaN and infinite numbers (YAML's .nan, .inf): JSON Schema bounds let them by."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _not_finite(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _not_finite(item, (*path, index))


def _check_workspace(checker: _Checker, agent: Mapping[str, Any], path: KeyPath) -> None:
    where = (*path, "workspace")
    text = agent.get("workspace")
    if not (isinstance(text, str) and checker.judges(where)) or not text:
        return
    if "\0" in text:
        checker.add(where, "the workspace path contains a NUL character")
        return
    try:
        folder = resolve_workspace(text, checker.base_dir)
        exists, is_dir = folder.exists(), folder.is_dir()
    except (OSError, RuntimeError, ValueError) as exc:  # ~nosuchuser, a name too long
        reason = getattr(exc, "strerror", None) or str(exc)
        checker.add(where, f"the workspace path cannot be resolved ({reason})")
        return
    if checker.reporter.is_secret(where):
        shown = "the workspace folder"
    else:
        shown = repr(text) if str(folder) == text else f"{text!r} ({folder})"
    if not exists:
        checker.add(where, f"{shown} does not exist")
    elif not is_dir:
        checker.add(where, f"{shown} is not a folder")


def _check_pruning_tools(
    checker: _Checker, entries: list[Any], tool_names: set[str], path: KeyPath
) -> None:
    for index, entry in _strings(entries, path, checker):
        if entry in tool_names:
            continue
        where = (*path, index)
        shown = checker.reporter.show(entry, where)
        if not tool_names:
            checker.add(where, f"{shown} is not one of this agent's tools (it has none)")
        else:
            hint = did_you_mean(entry, tool_names)
            checker.add(where, f"{shown} is not one of this agent's tools{hint}")


def _strings(entries: list[Any], path: KeyPath, checker: _Checker) -> Iterator[tuple[int, str]]:
    for index, entry in enumerate(entries):
        if isinstance(entry, str) and checker.judges((*path, index)):
            yield index, entry
