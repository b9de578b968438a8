"""The validated, typed form of an agents file: what ``leanloop.spec`` produces.

These dataclasses are plain values. The JSON Schema in ``spec/agent.schema.json``
is the single source of the YAML format and its defaults; the defaults repeated here
only serve Python users who build a spec by hand, and a Behave scenario checks that
the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from leanloop.spec.options import PORTABLE_OPTIONS, lift_options

__all__ = [
    "AGENT_PREFIX",
    "AgentSpec",
    "McpServerSpec",
    "ModelSpec",
    "Provider",
    "SourceLocation",
    "ToolMode",
    "ToolOptions",
]

AGENT_PREFIX = "agent:"
"""``tools: ["agent:researcher"]``: another agent of the same file, as a tool."""

Provider = Literal["openai", "anthropic", "ollama", "openai-compatible"]
ToolMode = Literal["auto", "native", "text"]


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where a value was written: file, 1-based line and column, and its key path."""

    source: str
    line: int | None
    column: int | None
    path: str
    folder: Path | None = field(default=None, repr=False, compare=False)
    """The folder of the file (or the ``base_dir`` text or data was loaded with): where
    relative paths resolve and where a module the file names is looked for after the
    Python path. ``None`` for a location made by hand."""


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """How to build one chat model.

    Exactly one of ``provider`` and ``class_path`` is set.
    """

    name: str | None = None
    """The key under ``models`` it was declared with; ``None`` for an inline model."""
    provider: Provider | None = None
    """``openai``, ``anthropic``, ``ollama`` or ``openai-compatible`` (llama.cpp, vLLM …)."""
    class_path: str | None = None
    """``package.module:Class`` of any ``BaseChatModel`` subclass."""
    model: str | None = None
    """The model name the server knows."""
    base_url: str | None = None
    """The server's base URL (``http://127.0.0.1:8080/v1`` for llama.cpp)."""
    api_key: str | None = field(default=None, repr=False)
    """A secret: never printed, never logged."""
    temperature: float | None = None
    max_tokens: int | None = None
    """The most tokens a reply may have; also the reply reserve of the context plan."""
    timeout: float | None = None
    """Seconds per request."""
    max_retries: int | None = None
    """Times the client retries a failed request; ``None``: the class's own default."""
    context_window: int | None = None
    """The configured window in tokens; ``None`` lets leanloop discover it."""
    kwargs: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Further keyword arguments for the model class, for any provider (may hold secrets:
    kept out of repr); a key that repeats a top-level option is refused by ``validate``."""
    location: SourceLocation | None = None
    """Where the model was declared, for errors raised while building it."""

    def __post_init__(self) -> None:
        # A setting written in `kwargs` under a class's own spelling (`openai_api_base`)
        # moves to its portable field, so that window discovery and the token counter see
        # the server wherever it was given. A setting given twice stays in `kwargs`: the
        # top-level value wins and `validate` / the model builder report the clash.
        given = {name: getattr(self, name) for name in PORTABLE_OPTIONS}
        lifted, rest, _ = lift_options(given, self.kwargs)
        if len(rest) != len(self.kwargs):
            for name, value in lifted.items():
                object.__setattr__(self, name, value)
            object.__setattr__(self, "kwargs", rest)


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """Per-tool settings of one ``tools`` entry written as a mapping.

    ``tools: [{name: "pkg.mod:fn", timeout: 10, retries: 2}]``: the reference is also
    listed in :attr:`AgentSpec.tools`; this only adds the settings.
    """

    ref: str
    """The tool reference, as in ``AgentSpec.tools`` (a built-in name, an import path or
    an ``mcp:server[/tool]`` reference)."""
    timeout: float | None = None
    """Seconds one call may take; ``None``: the agent's ``tool_timeout``."""
    retries: int = 0
    """Times a call is made again, with backoff, after a ``TransientToolError``."""
    command_timeout: float | None = None
    """``run_command`` only: seconds a command may run when the model gives no timeout."""
    allowed_commands: tuple[str, ...] | None = None
    """``run_command`` only: the programs the model may run (``None``: any)."""
    via_shell: bool = False
    """``run_command`` only: run one command line with ``/bin/sh -c`` instead of argv."""
    approval: Literal["ask", "never"] | None = None
    """Whether a person approves each call first; ``None``: the tool's default (the edit
    built-ins and ``run_command`` ask, every other tool never does; see
    :func:`leanloop.spec.tooloptions.asks_approval`)."""
    approve_decisions: tuple[Literal["approve", "edit", "reject"], ...] = (
        "approve",
        "edit",
        "reject",
    )
    """The decisions a person may make on a call of this tool."""
    ask_when: tuple[tuple[str, str], ...] = ()
    """``approval: {ask_when: {ARGUMENT: REGEX}}``: ask only for a call where one of these
    arguments matches its pattern (``approval`` is then ``"ask"``); ``()``: every call."""


@dataclass(frozen=True, kw_only=True)
class McpServerSpec:
    """One entry of the file's ``mcp_servers``: how to reach an MCP server."""

    name: str
    command: str | None = None
    """The program to start (stdio transport)."""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = field(default=None, repr=False)
    """Environment of the started program (may hold secrets: kept out of repr)."""
    cwd: str | None = None
    url: str | None = None
    """The server's URL (``streamable_http`` or ``sse`` transport)."""
    transport: Literal["stdio", "streamable_http", "sse"] = "stdio"
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """HTTP headers (usually a secret: kept out of repr, never printed)."""
    timeout: float = 30.0
    """Seconds the server may take to start and list its tools."""
    location: SourceLocation | None = None


@dataclass(frozen=True, kw_only=True)
class AgentSpec:
    """One validated agent: its model, tools, workspace and context policies."""

    name: str
    model: ModelSpec
    description: str = ""
    system_prompt: str | None = None
    tools: tuple[str, ...] = ()
    """Built-in tool names (``read_file``, ``search``, ``list_files``), import paths, or
    ``mcp:server`` / ``mcp:server/tool`` references (entries written as mappings are
    listed here by their ``name``; their settings are in :attr:`tool_options`)."""
    tool_options: tuple[ToolOptions, ...] = ()
    """Per-tool ``timeout`` and ``retries`` of the ``tools`` entries written as mappings."""
    mcp_servers: Mapping[str, McpServerSpec] = field(default_factory=dict)
    """The file's MCP servers this agent's ``mcp:`` tools refer to."""
    sub_agents: Mapping[str, AgentSpec] = field(default_factory=dict, repr=False)
    """The agents this agent's ``agent:NAME`` tools run, by name (no cycles: validated)."""
    workspace: Path | None = None
    """Absolute path the workspace tools are confined to."""
    max_rounds: int = 20
    """Most tool rounds before the final, tool-less answer request."""
    max_parallel_tools: int = 8
    """Most tool calls run from one reply; the rest are dropped with a note."""
    tool_timeout: float = 60.0
    """Seconds one tool call may take before it becomes a timeout result to the model."""
    tool_result_max_chars: int = 80_000
    """The registry-wide cap on any one tool result, in characters."""
    token_budget_percent: float = 0.85
    """Share of the context window a request may use (0 < x ≤ 1)."""
    trim_tool_results: bool = True
    """Trim old tool results in the request view when over budget."""
    trim_keep_steps: int = 2
    """How many recent steps the first trimming pass leaves alone."""
    allow_tool_output_pruning: bool = False
    pruning_model: ModelSpec | None = None
    """The extraction model; ``None`` means the agent's own model."""
    pruning_tools: tuple[str, ...] = ("read_file",)
    pruning_min_chars: int = 2_000
    pruning_timeout: float = 60.0
    pruning_deadline: float = 300.0
    """Seconds a whole pruning pass may take; parts not reached are named as unread."""
    pruning_trigger: Literal["auto", "size", "budget"] = "auto"
    """Which results are pruned: ``size`` (all large ones), ``budget`` (only what does not
    fit the request), ``auto`` (the pruning model's profile)."""
    pruning_concurrency: int = 4
    pruning_verify: bool = True
    tool_mode: ToolMode = "auto"
    max_repeated_calls: int = 2
    """Repeated identical calls in a row answered with a reminder before the final answer."""
    prefetch_mentioned_files: bool = True
    """Read workspace files named in the request before the first model call."""
    repair_paths: bool | None = None
    """Read the one file the request names when a requested path is missing (``None``: profile)."""
    first_tool_choice: Literal["auto", "required"] = "auto"
    """``required`` makes the first reply a tool call on servers that honour it."""
    no_answer: Literal["return", "raise"] = "return"
    """A run that ended without the model's answer: its ending returned, or ``NoAnswer``."""
    answer_check: Literal["auto", "ask_again", "note", "off"] = "auto"
    """Check the answer's values against what the tools returned (:mod:`leanloop.grounding`):
    ``ask_again`` asks the model once more from the lines in doubt, ``note`` only records
    the check in the report, ``off`` skips it; ``auto``: ``ask_again`` with the small
    prompt profile, else ``note``."""
    prompt_profile: Literal["auto", "default", "small"] = "auto"
    """Instruction style; ``auto`` picks by the model's name."""
    notes: bool = False
    """Offer the ``note`` tool: notes kept in the session, sent with every later request."""
    output_schema: str | None = None
    """A pydantic model's import path: the answer is also returned as an instance of it."""
    session_store: str | None = None
    """Where sessions live: ``sqlite:///ABSOLUTE`` or ``postgres://…``; ``None``: the
    default, ``.leanloop/sessions.db`` beside the agents file (or the working folder)."""
    source: Path | None = None
    """The file the agent was loaded from, if any."""
    location: SourceLocation | None = None
