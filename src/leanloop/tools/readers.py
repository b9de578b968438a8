"""Tools that read a named resource, whoever wrote them: the same help as ``read_file``.

The loop helps a small model with the built-in ``read_file``: it reads the file a request
names before the first step (prefetch) and, when the model calls without the path, fills in
the one file the request names (repair). A user's own function gets none of that unless the
loop can tell it reads a named thing (issue 37: a Python-first ``read_doc(name)`` agent was
right 3 times in 10, its first call ``read_doc({})``).

A tool *reads a named resource* when it says so, ``metadata={"leanloop_reads": "name"}``
naming the parameter, or when it has the shape of one: exactly one required parameter, a
string, named like a file (``path``, ``file``, ``filename``, ``name``, ``doc``…), and a name
or description that speaks of reading (``read``, ``get``, ``open``, ``load``, ``fetch``,
``show``, ``doc``, ``file``). A tool of that shape that does something else opts out with
``metadata={"leanloop_reads": None}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from langchain_core.tools import BaseTool

from leanloop.tools._arguments import json_schema_of

__all__ = ["READS_KEY", "file_like_words", "fill_reader_argument", "reader_parameter"]

READS_KEY: Final = "leanloop_reads"
"""The tool metadata key that names the parameter holding the resource's name (``None``:
the tool reads nothing named, whatever its shape)."""

_FILE_PARAMS: Final = frozenset(
    {
        "path",
        "file",
        "filename",
        "file_name",
        "filepath",
        "file_path",
        "name",
        "doc",
        "doc_name",
        "docname",
        "document",
        "page",
        "resource",
    }
)
_READING_WORDS: Final = re.compile(r"read|get|open|load|fetch|show|doc|file|page", re.IGNORECASE)
_FILE_WORD: Final = re.compile(r"(?<![\w./-])[\w][\w.\-/]*\.[A-Za-z0-9]{1,8}(?![\w/])")
"""A word with a dot-extension (``bio.txt``, ``config/app.yaml``); its trailing full stop
is not part of it (``bio.txt.`` ends a sentence)."""


def reader_parameter(tool: BaseTool) -> str | None:
    """The parameter of ``tool`` that names what it reads; ``None`` when it reads nothing named.

    Args:
        tool: Any LangChain tool (a function, an MCP tool, an agent-as-tool).
    """
    metadata = tool.metadata or {}
    if READS_KEY in metadata:
        declared = metadata[READS_KEY]
        return str(declared) if declared else None
    try:
        schema = json_schema_of(tool)
    except Exception:  # a schema we cannot read: no guess
        return None
    props = schema.get("properties")
    required = list(schema.get("required") or ())
    if not isinstance(props, Mapping) or len(required) != 1:
        return None
    param = required[0]
    prop = props.get(param)
    if not isinstance(prop, Mapping) or prop.get("type") != "string":
        return None
    if str(param).lower() not in _FILE_PARAMS:
        return None
    said = f"{tool.name} {tool.description or ''}"
    return str(param) if _READING_WORDS.search(said) else None


def file_like_words(text: str, *, limit: int = 4) -> list[str]:
    """The words of ``text`` that look like file names, in order, unique, at most ``limit``."""
    found: list[str] = []
    for match in _FILE_WORD.finditer(text):
        word = match.group(0).rstrip(".")
        if word not in found and not word.replace(".", "").isdigit():  # not "2.5" or "1.0.3"
            found.append(word)
        if len(found) >= limit:
            break
    return found


def fill_reader_argument(
    tool: BaseTool, args: Mapping[str, Any], named: Iterable[str]
) -> tuple[dict[str, Any], str] | None:
    """``args`` with the reader's missing parameter set to the one name the request gives.

    Returns:
        The mended arguments and the note that says so, or ``None`` when ``tool`` reads no
        named resource, the parameter is given, or the request names not exactly one.
    """
    param = reader_parameter(tool)
    if param is None or args.get(param) not in (None, ""):
        return None
    names: Sequence[str] = list(dict.fromkeys(named))
    if len(names) != 1:
        return None
    return {
        **args,
        param: names[0],
    }, f"filled in {param}: {names[0]} (the one file the request names)"
