"""The built-in edit tools: ``write_file``, ``replace_lines``, ``insert_at_line``,
``str_replace``, ``apply_patch`` and ``undo_edit``.

They change files inside one workspace folder, on the contract of :mod:`._editing`: the
same jail as ``read_file``, the same 1-based line numbers, UTF-8 text only (line endings
and a byte-order mark kept), no edit of a file the run has not read or that changed on
disk since it was read, ``apply_patch`` all or nothing, ``undo_edit`` guarded by the hash
the journal kept. Every refusal is a ``ToolException`` with a one-line instruction, which
the registry gives the model as ``error: ...``.

What one run has read and edited is a :class:`~._journal.WorkspaceRun`: the registry
hands the run's own with each call; outside a registry the tools share the ``state`` they
were built with (the one ``read_file`` records into too, when the loader builds both).
Each change goes to that journal with its whole diff, and is sent as a
``leanloop.file_edited`` event (:data:`leanloop.events.FILE_EDITED`) to the run's
callbacks; the model sees the diff capped at :data:`MODEL_DIFF_CHARS` characters, and the
call's record (the report's ``notes``) says which file changed and by how many lines.

Example::

    state = WorkspaceRun()
    read, *_ = workspace_tools(root, track_reads=True, state=state)
    edit = {tool.name: tool for tool in edit_tools(root, state=state)}
    await read.ainvoke({"path": "app.py"})
    print(await edit["str_replace"].ainvoke({"path": "app.py", "old": "x = 1", "new": "x = 2"}))
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from langchain_core.callbacks.manager import dispatch_custom_event
from langchain_core.runnables import RunnableConfig, ensure_config
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from leanloop.events import FILE_EDITED, emit
from leanloop.spec.toolrefs import EDIT_TOOLS
from leanloop.tools._builtin import built_in_tool
from leanloop.tools._editing import MODEL_DIFF_CHARS, Edited, Editor
from leanloop.tools._journal import JournalEntry, WorkspaceRun, run_state
from leanloop.tools._notes import call_context
from leanloop.tools._paths import PathRefused, workspace_root
from leanloop.tools._worker import in_worker
from leanloop.tools.readers import READS_KEY

__all__ = ["EDIT_TOOLS", "MODEL_DIFF_CHARS", "WorkspaceRun", "edit_tools", "preview_edit"]

_PATH_HELP = "Path relative to the workspace root."
_LINES_HELP = "numbered as read_file shows them, counting from 1"


class WriteFileArgs(BaseModel):
    """Arguments of write_file."""

    path: str = Field(description=f"The file to create or replace. {_PATH_HELP}")
    content: str = Field(description="The whole new content of the file.")


class ReplaceLinesArgs(BaseModel):
    """Arguments of replace_lines."""

    path: str = Field(description=f"The file to change. {_PATH_HELP}")
    start: int = Field(description=f"First line to replace ({_LINES_HELP}).")
    end: int = Field(description="Last line to replace (inclusive; start for one line).")
    new_text: str = Field(description="The lines that take their place; empty deletes them.")


class InsertAtLineArgs(BaseModel):
    """Arguments of insert_at_line."""

    path: str = Field(description=f"The file to change. {_PATH_HELP}")
    line: int = Field(
        description=f"The line the text goes before ({_LINES_HELP}); the number of lines + 1 "
        "appends at the end."
    )
    text: str = Field(description="The lines to insert.")


class StrReplaceArgs(BaseModel):
    """Arguments of str_replace."""

    path: str = Field(description=f"The file to change. {_PATH_HELP}")
    old: str = Field(
        description="The exact text to replace, as read_file shows it (without the line "
        "numbers), whitespace included; it must occur exactly once."
    )
    new: str = Field(description="The text that takes its place.")


class ApplyPatchArgs(BaseModel):
    """Arguments of apply_patch."""

    patch: str = Field(
        description="A unified diff: for each file '--- a/PATH' and '+++ b/PATH' lines, then "
        "@@ hunks with ' ' context, '-' removed and '+' added lines."
    )


class UndoEditArgs(BaseModel):
    """Arguments of undo_edit."""

    path: str = Field(description=f"The file whose last edit to undo. {_PATH_HELP}")


_READ_FIRST = "Read the file with read_file first in this run; the result shows the diff."
_DESCRIPTIONS = {
    "write_file": (
        "Create a file with the given content, or replace the whole of an existing one "
        "(read it first). For a small change to an existing file use str_replace or "
        "replace_lines instead. The result shows the diff."
    ),
    "replace_lines": (
        "Replace lines start to end (inclusive, numbered as read_file shows them) of a "
        "file with new_text; an empty new_text deletes them. Line numbers after the edit "
        f"shift: read again before the next line edit. {_READ_FIRST}"
    ),
    "insert_at_line": (
        "Insert text before the given line of a file (numbered as read_file shows them; "
        f"the number of lines + 1 appends at the end). {_READ_FIRST}"
    ),
    "str_replace": (
        "Replace one exact piece of text in a file with new text. old must match the file "
        "exactly, whitespace and indentation included, and occur exactly once: include a "
        f"few lines around it to make it unique. {_READ_FIRST}"
    ),
    "apply_patch": (
        "Apply a unified diff to one or more files. If any hunk does not match, nothing is "
        "changed. '--- /dev/null' creates a file, '+++ /dev/null' deletes one. Read each "
        "file first; the result shows the diff."
    ),
    "undo_edit": (
        "Undo this run's last edit of a file, putting back what it was before (refused "
        "when the file changed after that edit)."
    ),
}


_SCHEMAS: dict[str, type[BaseModel]] = {
    "write_file": WriteFileArgs,
    "replace_lines": ReplaceLinesArgs,
    "insert_at_line": InsertAtLineArgs,
    "str_replace": StrReplaceArgs,
    "apply_patch": ApplyPatchArgs,
    "undo_edit": UndoEditArgs,
}


def edit_tools(root: Path, *, state: WorkspaceRun | None = None) -> list[BaseTool]:
    """Build the edit tools confined to ``root``, in :data:`EDIT_TOOLS` order.

    Args:
        root: The workspace folder; it must exist.
        state: What the tools check and record when a call comes from outside a
            registry (which hands each run's own); share it with ``read_file``
            (``workspace_tools(root, track_reads=True, state=state)``) so that its reads
            count. A fresh one when left out.

    Returns:
        ``write_file``, ``replace_lines``, ``insert_at_line``, ``str_replace``,
        ``apply_patch`` and ``undo_edit``. Each works with ``invoke`` and ``ainvoke`` (the
        async form does its file I/O in a daemon worker thread).

    Raises:
        ToolError: ``root`` is not an existing folder.
    """
    base = workspace_root(root)
    own = state if state is not None else WorkspaceRun()
    editor = Editor(base)
    bodies: dict[str, Callable[..., Edited]] = {
        "write_file": editor.write_file,
        "replace_lines": editor.replace_lines,
        "insert_at_line": editor.insert_at_line,
        "str_replace": editor.str_replace,
        "apply_patch": editor.apply_patch,
        "undo_edit": editor.undo_edit,
    }
    return [_tool(name, bodies[name], _SCHEMAS[name], own) for name in EDIT_TOOLS]


def preview_edit(root: Path, state: WorkspaceRun, tool: str, args: Mapping[str, Any]) -> str | None:
    """The whole diff a call of the edit tool ``tool`` with ``args`` would make, now.

    A dry run of the edit's body against the run's ``state`` (what it read): nothing is
    written. ``None`` for a tool that is no edit, or arguments that do not fit it; the
    one-line refusal, when the edit would be refused (``read_file X first``).
    """
    body = getattr(Editor(Path(root).resolve(), dry=True), tool, None)
    schema = _SCHEMAS.get(tool)
    if body is None or schema is None or tool == "undo_edit":
        return None
    try:
        kwargs = schema.model_validate(dict(args)).model_dump()
    except ValueError:
        return None
    try:
        return _locked(state, body, kwargs).text
    except PathRefused as exc:
        return f"(the edit would be refused: {exc})"
    except (OSError, ValueError):
        return None


def _locked(state: WorkspaceRun, body: Callable[..., Edited], kwargs: dict[str, Any]) -> Edited:
    """Run ``body`` holding the run's lock: its checks and its write are one step."""
    with state.lock:
        return body(state, **kwargs)


def _tool(
    name: str, body: Callable[..., Edited], schema: type[BaseModel], fallback: WorkspaceRun
) -> StructuredTool:
    # LangChain hands each function the call's config (the parameter typed RunnableConfig);
    # the arguments come as keywords, validated against ``schema``. Events go with the
    # tool's own run (``ensure_config()`` while it runs), so they reach the run's callbacks
    # as the tool's children.
    def run(*, config: RunnableConfig, **kwargs: Any) -> str:
        edited = _locked(run_state(config, fallback), body, kwargs)
        for entry in edited.entries:
            _tell(entry, config)
            # RuntimeError: no run to attach it to (called outside a Runnable).
            with contextlib.suppress(RuntimeError):
                dispatch_custom_event(FILE_EDITED, _event(entry), config=ensure_config())
        return edited.text

    async def arun(*, config: RunnableConfig, **kwargs: Any) -> str:
        edited = await in_worker(_locked, run_state(config, fallback), body, kwargs)
        for entry in edited.entries:
            _tell(entry, config)
            await emit(FILE_EDITED, _event(entry), ensure_config())
        return edited.text

    # An edit tool takes a path but is no reader: the loop must never fill in its path, or
    # prefetch with it, as it does for a tool that reads a named file.
    return built_in_tool(
        name, run, arun, schema, description=_DESCRIPTIONS[name], metadata={READS_KEY: None}
    )


def _event(entry: JournalEntry) -> dict[str, Any]:
    return entry.to_dict()


def _tell(entry: JournalEntry, config: RunnableConfig) -> None:
    """Note the change in the call's record (the report's notes for the call)."""
    context = call_context(config)
    if context is None:
        return
    added = removed = 0
    for line in entry.diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    context.told.note(
        f"{entry.tool} changed {entry.path} (+{added} -{removed}; edit #{entry.number})",
        repair=False,
    )
