"""Agents files (YAML) → validated :class:`~leanloop.spec.types.AgentSpec` values.

Loading goes: read the text → parse it safely, keeping the position of every key
and value → interpolate ``${VAR}`` references → validate against the JSON Schema
(``spec/agent.schema.json``, the single source of the format and its defaults) →
check what a schema cannot (references, import paths, folders) → build the specs.

Loading runs none of the file's code: import paths are resolved by reading their modules
(:mod:`leanloop.spec.refs`), never by importing them, unless the caller asks for
``imports=True``. Nor does it change the import path: the file's folder travels in each
spec's ``location.folder``, and building an agent imports a module found there without
putting the folder on ``sys.path`` (:func:`leanloop._imports.import_object`).

Every user mistake ends as one :class:`~leanloop.exceptions.SpecError` that lists
all problems of the file, each as ``file:line:column: key.path: message``::

    agents.yaml:14:27: agents.reader.token_budget_percent: 1.5 is greater than the maximum of 1
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from leanloop.exceptions import SpecError, SpecIssue
from leanloop.spec.checks import resolve_workspace, semantic_check
from leanloop.spec.env import interpolate
from leanloop.spec.issues import Problem, Reporter
from leanloop.spec.schema import agent_defaults, agent_schema, schema_problems, strict_schema
from leanloop.spec.toolrefs import BUILTIN_TOOLS, mcp_server_of
from leanloop.spec.types import AGENT_PREFIX, AgentSpec, McpServerSpec, ModelSpec, ToolOptions
from leanloop.spec.yamlsource import KeyPath, Mark, parse_yaml

_MAX_FILE_BYTES = 10_000_000
"""The largest agents file read (a real one is a few KB)."""

__all__ = ["agent_schema", "load_specs", "load_specs_from_dict", "load_specs_from_text"]

logger = logging.getLogger(__name__)

_TOP_LEVEL = "a mapping with 'version' and 'agents'"


def load_specs(
    path: str | os.PathLike[str],
    *,
    environ: Mapping[str, str] | None = None,
    only: str | None = None,
    imports: bool = False,
) -> dict[str, AgentSpec]:
    """Load and validate every agent of an agents file.

    Args:
        path: The YAML file. Relative workspaces resolve against its folder.
        environ: Where ``${VAR}`` references are looked up; ``os.environ`` by default.
        only: Load just this agent: the problems of other agents (and of models it does
            not use) are not its problems, so one broken agent never blocks another.
        imports: Import the modules the file's import paths name, to check their
            objects too (a chat model class, a pydantic model, a tool). By default their
            source is only read: loading a file runs none of its code.

    Returns:
        The agents by name, in file order (just ``only`` when given).

    Raises:
        SpecError: Listing every problem of the file, located (also for a missing,
            unreadable or non-UTF-8 file).
    """
    file = Path(path)
    source = os.fspath(path)
    text = _read_text(file, source)
    base_dir = file.absolute().parent
    return _load_text(
        text,
        source=source,
        base_dir=base_dir,
        environ=environ,
        file=file,
        only=only,
        imports=imports,
    )


def load_specs_from_text(
    text: str,
    *,
    source: str = "<string>",
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    imports: bool = False,
) -> dict[str, AgentSpec]:
    """Load and validate every agent of YAML text.

    Args:
        text: The YAML document.
        source: The name errors give the text.
        base_dir: What relative workspaces resolve against; the working folder by default.
        environ: Where ``${VAR}`` references are looked up; ``os.environ`` by default.
        imports: Import the modules import paths name (see :func:`load_specs`).

    Returns:
        The agents by name, in document order.

    Raises:
        SpecError: Listing every problem, located.
    """
    return _load_text(
        text, source=source, base_dir=base_dir, environ=environ, file=None, imports=imports
    )


def load_specs_from_dict(
    data: Mapping[str, Any],
    *,
    source: str = "<dict>",
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    imports: bool = False,
) -> dict[str, AgentSpec]:
    """Validate an agents document that is already Python data (same rules as a file).

    Args:
        data: The document: ``{"version": 1, "agents": {...}}``.
        source: The name errors give the data.
        base_dir: What relative workspaces resolve against; the working folder by default.
        environ: Where ``${VAR}`` references are looked up; ``os.environ`` by default.
        imports: Import the modules import paths name (see :func:`load_specs`).

    Returns:
        The agents by name, in mapping order.

    Raises:
        SpecError: Listing every problem (without line numbers: data has none).
    """
    if not isinstance(data, Mapping):
        raise _single(source, None, f"expected {_TOP_LEVEL}, got {type(data).__name__}")
    reporter = Reporter(source)
    try:
        return _validate_and_build(
            data, reporter, [], base_dir=base_dir, environ=environ, file=None, imports=imports
        )
    except RecursionError:  # a mapping that contains itself (YAML text cannot do this)
        raise _single(source, None, "the data refers to itself or is nested too deeply") from None


def _single(source: str, mark: Mark | None, message: str) -> SpecError:
    """A SpecError for a problem that stops loading at once (nothing else can be read)."""
    line, column = (mark.line, mark.column) if mark else (None, None)
    return SpecError([SpecIssue(source, line, column, "", message)])


def _read_text(file: Path, source: str) -> str:
    try:
        if file.is_dir():
            raise _single(source, None, "is a folder, not an agents file")
        if file.exists() and not file.is_file():  # a FIFO would block, /dev/zero never end
            raise _single(source, None, "is not a regular file")
        with file.open("rb") as stream:
            raw = stream.read(_MAX_FILE_BYTES + 1)
        if len(raw) > _MAX_FILE_BYTES:
            limit = f"{_MAX_FILE_BYTES // 1_000_000} MB"
            raise _single(source, None, f"is larger than {limit}; an agents file is much smaller")
    except FileNotFoundError:
        raise _single(source, None, "no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        reason = getattr(exc, "strerror", None) or exc
        raise _single(source, None, f"cannot read the file ({reason})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        message = f"is not UTF-8 text (byte 0x{raw[exc.start]:02x})"
        raise _single(source, Mark(line, column), message) from None


def _load_text(
    text: str,
    *,
    source: str,
    base_dir: Path | None,
    environ: Mapping[str, str] | None,
    file: Path | None,
    only: str | None = None,
    imports: bool = False,
) -> dict[str, AgentSpec]:
    try:
        data, positions, found = parse_yaml(text)
    except yaml.MarkedYAMLError as exc:
        raise _yaml_error(exc, source) from None
    except yaml.reader.ReaderError as exc:  # a control character in the text
        at = _text_mark(text, exc.position)
        message = f"invalid YAML: character #x{exc.character:04x} is not allowed in YAML"
        raise _single(source, at, message) from None
    except yaml.YAMLError as exc:  # pragma: no cover - every YAMLError PyYAML raises is above
        raise _single(source, None, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise _single(source, None, "invalid YAML: nested too deeply") from None
    reporter = Reporter(source, positions)
    problems = [Problem(p.path, p.message, mark=p.mark) for p in found]
    if data is None and problems:  # the walk stopped (an alias bomb, a bad tag)
        raise SpecError(reporter.issues(problems))
    if data is None:
        raise _single(source, Mark(1, 1), f"the file is empty; expected {_TOP_LEVEL}")
    if not isinstance(data, dict):
        shown = "a list" if isinstance(data, list) else f"a single {type(data).__name__} value"
        raise _single(source, positions.value(()), f"expected {_TOP_LEVEL}, got {shown}")
    return _validate_and_build(
        data,
        reporter,
        problems,
        base_dir=base_dir,
        environ=environ,
        file=file,
        only=only,
        imports=imports,
    )


def _text_mark(text: str, offset: int) -> Mark:
    line_start = text.rfind("\n", 0, offset) + 1
    return Mark(text.count("\n", 0, offset) + 1, offset - line_start + 1)


def _yaml_error(exc: yaml.MarkedYAMLError, source: str) -> SpecError:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "unreadable YAML"
    context = f" ({exc.context})" if exc.context and exc.problem else ""
    return _single(source, Mark.of(mark) if mark else None, f"invalid YAML: {problem}{context}")


def _validate_and_build(
    data: Mapping[str, Any],
    reporter: Reporter,
    problems: list[Problem],
    *,
    base_dir: Path | None,
    environ: Mapping[str, str] | None,
    file: Path | None,
    only: str | None = None,
    imports: bool = False,
) -> dict[str, AgentSpec]:
    resolved = interpolate(data, environ=os.environ if environ is None else environ)
    reporter.secrets = resolved.secrets | _mcp_secret_paths(resolved.data)
    reporter.interpolated = resolved.interpolated
    _type_references(resolved.data, resolved.interpolated)
    problems += [
        Problem(path, _with_note(message, _needed_by(resolved.data, path)))
        for path, message in resolved.problems
    ]
    # A value whose variable is unset reads as "" and would fail the schema too
    # ("must not be empty"): the unset variable is the one problem to say there.
    unresolved = {path for path, _ in resolved.problems}
    from_schema = [
        problem
        for problem in schema_problems(resolved.data, reporter)
        if problem.at == "key" or problem.path not in unresolved
    ]
    # Problems at a key (an unknown key, a bad name) leave its value open to the checks.
    rejected = {p.path for p in from_schema if p.at == "value"} | unresolved
    folder = Path.cwd() if base_dir is None else Path(base_dir)
    problems += from_schema
    checked = semantic_check(
        resolved.data, reporter, base_dir=folder, rejected=rejected, imports=imports
    )
    problems += checked.problems
    if only is not None:
        problems = _problems_of(resolved.data, only, problems)
        agents = resolved.data.get("agents")
        if not problems and isinstance(agents, Mapping) and only not in agents:
            known = ", ".join(map(repr, agents))
            problems = [Problem(("agents",), f"no agent named {only!r} (the agents are {known})")]
    if problems:
        raise SpecError(reporter.issues(problems))
    # Where a module beside the file is found when an agent is built (each spec's
    # location carries it); nothing is imported, and sys.path is left alone.
    reporter.folder = folder
    specs = _Builder(reporter, folder, file).agents(resolved.data, only=only)
    logger.debug("loaded %d agent(s) from %s", len(specs), reporter.source)
    return specs


class _Builder:
    """Builds specs from a document that passed every check, with the schema's defaults."""

    def __init__(self, reporter: Reporter, base_dir: Path, file: Path | None) -> None:
        self.reporter = reporter
        self.base_dir = base_dir
        self.file = file.absolute() if file is not None else None
        schema = _schema_defs()
        self.agent_types = _property_types(schema["agent"])
        self.model_types = _property_types(schema["modelFields"])
        self.mcp_types = _property_types(schema["mcpServer"])
        self.models: dict[str, ModelSpec] = {}
        self.mcp_servers: dict[str, McpServerSpec] = {}
        self.session_store: str | None = None

    def agents(self, data: Mapping[str, Any], *, only: str | None = None) -> dict[str, AgentSpec]:
        store = data.get("sessions", {}).get("store")
        self.session_store = None if store is None else _store_url(store, self.base_dir)
        team = set(data["agents"]) if only is None else _agents_reached(data["agents"], only)
        agents = {name: raw for name, raw in data["agents"].items() if name in team}
        used = set().union(*(_models_used(agent) for agent in agents.values()))
        for name, raw in data.get("models", {}).items():
            if only is None or name in used:
                self.models[name] = self.model(raw, ("models", name), name=name)
        servers = set().union(*(_servers_used(agent) for agent in agents.values()))
        for name, raw in data.get("mcp_servers", {}).items():
            if name in servers:
                self.mcp_servers[name] = self.mcp_server(name, raw, ("mcp_servers", name))
        built: dict[str, AgentSpec] = {}

        def build(name: str) -> AgentSpec:  # callees first; validated to have no cycles
            if name not in built:
                subs = {sub: build(sub) for sub in _agents_called(agents[name])}
                built[name] = self.agent(name, agents[name], ("agents", name), subs)
            return built[name]

        return {name: build(name) for name in agents if only is None or name == only}

    def model(self, raw: Any, path: KeyPath, *, name: str | None = None) -> ModelSpec:
        if isinstance(raw, str):  # a reference, already checked to exist
            return self.models[raw]
        options = {
            key: _convert(value, self.model_types.get(key))
            for key, value in raw.items()
            if key not in ("class", "kwargs")
        }
        return ModelSpec(
            name=name,
            class_path=raw.get("class"),
            kwargs=dict(raw.get("kwargs", {})),
            location=self.reporter.location(path),
            **options,
        )

    def mcp_server(self, name: str, raw: Mapping[str, Any], path: KeyPath) -> McpServerSpec:
        values = {key: _convert(v, self.mcp_types.get(key)) for key, v in raw.items()}
        if "cwd" in values:
            values["cwd"] = str(resolve_workspace(values["cwd"], self.base_dir))
        values.setdefault("transport", "stdio" if "command" in raw else "streamable_http")
        return McpServerSpec(name=name, location=self.reporter.location(path), **values)

    def agent(
        self,
        name: str,
        raw: Mapping[str, Any],
        path: KeyPath,
        sub_agents: Mapping[str, AgentSpec] | None = None,
    ) -> AgentSpec:
        values = {**agent_defaults(), **raw}
        entries = values.pop("tools")
        refs = tuple(e if isinstance(e, str) else e["name"] for e in entries)
        options = tuple(_tool_options(e) for e in entries if isinstance(e, Mapping))
        servers = _servers_used(raw)
        model = self.model(values.pop("model"), (*path, "model"))
        pruning_model = None
        if "pruning_model" in values:
            pruning_model = self.model(values.pop("pruning_model"), (*path, "pruning_model"))
        workspace = None
        if "workspace" in values:
            workspace = resolve_workspace(values.pop("workspace"), self.base_dir)
        elif any(ref in BUILTIN_TOOLS for ref in refs):
            # The built-in tools need a folder, and the one the file sits in is what a
            # user who left the key out means (the working folder for text and data).
            workspace = resolve_workspace(".", self.base_dir)
        if isinstance(values.get("answer_check"), bool):
            # YAML reads an unquoted ``off`` as false (and ``on`` as true).
            values["answer_check"] = "auto" if values["answer_check"] else "off"
        settings = {key: _convert(v, self.agent_types.get(key)) for key, v in values.items()}
        return AgentSpec(
            name=name,
            model=model,
            pruning_model=pruning_model,
            workspace=workspace,
            tools=refs,
            tool_options=options,
            mcp_servers={key: self.mcp_servers[key] for key in sorted(servers)},
            sub_agents=dict(sub_agents or {}),
            session_store=self.session_store,
            source=self.file,
            location=self.reporter.location(path),
            **settings,
        )


def _store_url(url: str, base_dir: Path) -> str:
    """``url`` with a relative SQLite path made absolute against the file's folder."""
    prefix = "sqlite:///"
    if url.startswith(prefix):
        return prefix + str(resolve_workspace(url[len(prefix) :], base_dir))
    return url


def _mcp_secret_paths(data: Mapping[str, Any]) -> set[KeyPath]:
    """MCP servers' ``headers`` and ``env`` values: credentials, never shown in messages."""
    servers = data.get("mcp_servers")
    paths: set[KeyPath] = set()
    if not isinstance(servers, Mapping):
        return paths
    for name, server in servers.items():
        for key in ("headers", "env"):
            values = server.get(key) if isinstance(server, Mapping) else None
            if isinstance(values, Mapping):
                paths.update(("mcp_servers", name, key, item) for item in values)
    return paths


def _problems_of(data: Mapping[str, Any], agent: str, problems: list[Problem]) -> list[Problem]:
    """The problems that concern ``agent``: its own, its models' and the file's."""
    agents = data.get("agents")
    if not isinstance(agents, Mapping) or agent not in agents:
        return problems  # no such agent: every problem stands (the caller names the agent)
    team = _agents_reached(agents, agent)  # it and the agents its agent: tools run
    used = set().union(*(_models_used(agents[name]) for name in team))
    servers = set().union(*(_servers_used(agents[name]) for name in team))

    def concerns(path: KeyPath) -> bool:
        if len(path) >= 2 and path[0] == "mcp_servers":
            return path[1] in servers
        if len(path) < 2 or path[0] not in ("agents", "models"):
            return True
        return path[1] in team if path[0] == "agents" else path[1] in used

    return [problem for problem in problems if concerns(problem.path)]


def _needed_by(data: Mapping[str, Any], path: KeyPath) -> str:
    """``needed by agent 'a'``: which agents a ``${VAR}`` problem at ``path`` stops.

    An unset variable stops only the agents whose settings (or models, MCP servers and
    ``agent:`` tools) use it: naming them tells whether ``run --agent X`` is affected.
    Said for an agent's own key only when other agents reach it through ``agent:`` tools.
    """
    agents = data.get("agents")
    if len(path) < 2 or not isinstance(agents, Mapping):
        return ""
    kind, name = path[0], path[1]
    if kind not in ("agents", "models", "mcp_servers"):
        return ""
    users = []
    for user in agents:
        team = _agents_reached(agents, user)
        if kind == "agents":
            used = team
        elif kind == "models":
            used = set().union(*(_models_used(agents[member]) for member in team))
        else:
            used = set().union(*(_servers_used(agents[member]) for member in team))
        if name in used:
            users.append(user)
    if kind == "agents" and users == [name]:
        return ""
    if not users:
        return "no agent uses it"
    noun = "agent" if len(users) == 1 else "agents"
    return f"needed by {noun} {', '.join(map(repr, users))}"


def _with_note(message: str, note: str) -> str:
    """``message`` with ``note`` added to its closing parenthesis, or in one of its own."""
    if not note:
        return message
    return f"{message[:-1]}; {note})" if message.endswith(")") else f"{message} ({note})"


def _models_used(agent: Any) -> set[str]:
    if not isinstance(agent, Mapping):
        return set()
    return {agent[k] for k in ("model", "pruning_model") if isinstance(agent.get(k), str)}


def _agents_called(agent: Any) -> list[str]:
    """The agents an agent's ``agent:NAME`` tools name, in order."""
    tools = agent.get("tools") if isinstance(agent, Mapping) else None
    refs = [t.get("name") if isinstance(t, Mapping) else t for t in tools or []]
    prefix = len(AGENT_PREFIX)
    return [ref[prefix:] for ref in refs if isinstance(ref, str) and ref.startswith(AGENT_PREFIX)]


def _agents_reached(agents: Mapping[str, Any], start: str) -> set[str]:
    """``start`` and every agent its ``agent:`` tools reach (cycles stop the walk)."""
    reached, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in reached or name not in agents:
            continue
        reached.add(name)
        todo.extend(_agents_called(agents[name]))
    return reached


def _servers_used(agent: Any) -> set[str]:
    """The ``mcp_servers`` entries the agent's ``mcp:`` tools name."""
    tools = agent.get("tools") if isinstance(agent, Mapping) else None
    if not isinstance(tools, list):
        return set()
    refs = [t.get("name") if isinstance(t, Mapping) else t for t in tools]
    return {server for ref in refs if isinstance(ref, str) and (server := mcp_server_of(ref))}


def _type_references(data: Any, paths: set[KeyPath]) -> None:
    """Give ``${...}`` values the type the schema asks for (``max_rounds: ${ROUNDS:-5}``).

    A value that does not read as that type stays a string, for the schema to refuse
    with its location.
    """
    defs = _schema_defs()
    agent_types, model_types = _property_types(defs["agent"]), _property_types(defs["modelFields"])
    for path in paths:
        json_type: str | None = None
        if len(path) == 3 and path[0] == "models":
            json_type = model_types.get(str(path[2]))
        elif len(path) == 3 and path[0] == "agents":
            json_type = agent_types.get(str(path[2]))
        elif len(path) == 4 and path[0] == "agents" and path[2] in ("model", "pruning_model"):
            json_type = model_types.get(str(path[3]))
        elif len(path) == 5 and path[0] == "agents" and path[2] == "tools":
            json_type = {"timeout": "number", "retries": "integer"}.get(str(path[4]))
        elif len(path) == 3 and path[0] == "mcp_servers" and path[2] == "timeout":
            json_type = "number"
        parent = _parent(data, path)
        if parent is None or json_type not in _READERS:
            continue
        typed = _READERS[json_type](parent[path[-1]])
        if typed is not None:
            parent[path[-1]] = typed


def _parent(data: Any, path: KeyPath) -> Any:
    for key in path[:-1]:
        # A list index (a tool entry: agents.a.tools[0].timeout) steps into the list.
        if isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data):
            data = data[key]
            continue
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data if isinstance(data, dict) and isinstance(data.get(path[-1]), str) else None


def _read_integer(text: str) -> int | None:
    return int(text) if re.fullmatch(r"\s*[+-]?\d{1,18}\s*", text) else None


def _read_number(text: str) -> float | None:
    if not re.fullmatch(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*", text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _read_boolean(text: str) -> bool | None:
    return _BOOLEANS.get(text.strip().lower())


_BOOLEANS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
_READERS: dict[str | None, Callable[[str], Any]] = {
    "integer": _read_integer,
    "number": _read_number,
    "boolean": _read_boolean,
}


def _schema_defs() -> dict[str, Any]:
    # The strict form: each key's type sits on the key, not in a `${VAR}` alternative.
    defs: dict[str, Any] = strict_schema()["$defs"]
    return defs


def _property_types(definition: Mapping[str, Any]) -> dict[str, str | None]:
    """The JSON type of each property, which decides its Python type in the spec."""
    return {key: prop.get("type") for key, prop in definition["properties"].items()}


def _tool_options(entry: Mapping[str, Any]) -> ToolOptions:
    """The settings of one ``tools`` entry written as a mapping."""
    allowed, approval = entry.get("allowed_commands"), entry.get("approval")
    return ToolOptions(
        entry["name"],
        _convert(entry.get("timeout"), "number"),
        int(entry.get("retries", 0)),
        command_timeout=_convert(entry.get("command_timeout"), "number"),
        allowed_commands=tuple(allowed) if allowed is not None else None,
        via_shell=bool(_convert(entry.get("shell", False), "boolean")),
        approval="ask" if isinstance(approval, Mapping) else approval,
        approve_decisions=tuple(entry.get("approve_decisions", ("approve", "edit", "reject"))),
        ask_when=tuple(approval["ask_when"].items()) if isinstance(approval, Mapping) else (),
    )


def _convert(value: Any, json_type: str | None) -> Any:
    # The schema's `integer` admits 20.0 and `number` admits 1; the specs are typed.
    if isinstance(value, list):
        return tuple(value)
    if value is None:
        return None
    if json_type == "integer":
        return int(value)
    if json_type == "number":
        return float(value)
    return value
