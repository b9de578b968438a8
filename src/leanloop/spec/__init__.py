"""The agents file: its types, how it is loaded and validated, and every check it gets.

- :mod:`~leanloop.spec.types` — the plain values a file becomes (:class:`AgentSpec`,
  :class:`ModelSpec`);
- :mod:`~leanloop.spec.load` — text → YAML with positions → ``${VAR}`` → schema → checks
  → specs; every problem of a file in one :class:`~leanloop.exceptions.SpecError`;
- :mod:`~leanloop.spec.schema` — the JSON Schema (``agent.schema.json``, the single
  source of the format and its defaults) and its error messages;
- :mod:`~leanloop.spec.checks` — what a schema cannot check (references, imports,
  folders); :mod:`~leanloop.spec.env` — ``${VAR}`` interpolation;
- :mod:`~leanloop.spec.issues` — located problems; :mod:`~leanloop.spec.yamlsource` —
  safe YAML parsing that keeps the line and column of every key and value.
"""

from __future__ import annotations

from leanloop.spec.load import (
    agent_schema,
    load_specs,
    load_specs_from_dict,
    load_specs_from_text,
)
from leanloop.spec.types import AgentSpec, ModelSpec, Provider, SourceLocation, ToolMode

__all__ = [
    "AgentSpec",
    "ModelSpec",
    "Provider",
    "SourceLocation",
    "ToolMode",
    "agent_schema",
    "load_specs",
    "load_specs_from_dict",
    "load_specs_from_text",
]
