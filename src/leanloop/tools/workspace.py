"""The built-in workspace tools: ``read_file``, ``search`` and ``list_files``.

They are LangChain ``StructuredTool``s bound to one folder. Every path is confined to
that folder (no ``..``, no absolute path outside, no symlink that leads outside), each
result is capped at its source and says how to get more, and every refusal is a
``ToolException`` with a one-line message the model can act on.

A path that is not there gets the closest existing paths in the error, and the paths
named in the user's request when the caller passes ``path_hints``; with
``repair_paths=True`` the one existing named path is read instead (see
:mod:`._pathhelp`).

Example::

    tools = workspace_tools(Path("./data"))
    print(await tools[0].ainvoke({"path": "notes.txt"}))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from leanloop.tools import _filetools
from leanloop.tools._builtin import built_in_tool
from leanloop.tools._filetools import (
    DEFAULT_READ_LINES,
    DEFAULT_SEARCH_RESULTS,
    MAX_LIST_ENTRIES,
    MAX_READ_LINES,
    MAX_SEARCH_RESULTS,
)
from leanloop.tools._journal import WorkspaceRun, run_state
from leanloop.tools._notes import call_context
from leanloop.tools._pathhelp import PathHelp
from leanloop.tools._paths import PathRefused, resolve_inside, workspace_root
from leanloop.tools._worker import in_worker

__all__ = [
    "MAX_READ_LINES",
    "PathRefused",
    "resolve_inside",
    "workspace_path_exists",
    "workspace_tools",
]

_PATH_HELP = "Path relative to the workspace root (absolute paths inside it also work)."


class ReadFileArgs(BaseModel):
    """Arguments of read_file."""

    path: str = Field(description=f"The file to read. {_PATH_HELP}")
    offset: int = Field(default=1, description="First line to show, counting from 1.")
    limit: int = Field(
        default=DEFAULT_READ_LINES,
        description=f"How many lines to show (at most {MAX_READ_LINES}).",
    )


class SearchArgs(BaseModel):
    """Arguments of search."""

    pattern: str = Field(
        description="Python regular expression to find in each line, e.g. 'def main' or "
        "'TODO|FIXME'. Start with (?i) to ignore case."
    )
    path: str = Field(default=".", description=f"Folder or file to search in. {_PATH_HELP}")
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. '*.py' (by file name) or "
        "'src/**/*.ts' (by path under `path`).",
    )
    max_results: int = Field(
        default=DEFAULT_SEARCH_RESULTS,
        description=f"Most matching lines to return (at most {MAX_SEARCH_RESULTS}).",
    )


class ListFilesArgs(BaseModel):
    """Arguments of list_files."""

    path: str = Field(default=".", description=f"Folder to list. {_PATH_HELP}")
    glob: str = Field(
        default="**/*",
        description="Only list files matching this glob, e.g. '*.md' (by file name) or "
        "'docs/**/*.md' (by path under `path`).",
    )


_DESCRIPTIONS = {
    "read_file": (
        "Read a text file from the workspace. Shows numbered lines like '   12| text', "
        f"{DEFAULT_READ_LINES} lines by default and at most {MAX_READ_LINES} per call. The "
        "last line says how many lines the file has and gives the exact call for the next "
        "part. Use search first to find the right file and line, then read around it."
    ),
    "search": (
        "Search the text files in the workspace for a regular expression, line by line. "
        "Returns 'path:line:text' lines, at most max_results "
        f"(default {DEFAULT_SEARCH_RESULTS}). Use path and glob to narrow the search. "
        "An invalid regular expression is searched as plain text."
    ),
    "list_files": (
        "List the files in the workspace (or in one folder of it) as sorted paths relative "
        f"to the workspace root, at most {MAX_LIST_ENTRIES}. Use glob to filter, e.g. '*.py'."
    ),
}


def workspace_tools(
    root: Path,
    *,
    path_hints: Callable[[], Sequence[str]] | None = None,
    repair_paths: bool = False,
    track_reads: bool = False,
    state: WorkspaceRun | None = None,
) -> list[BaseTool]:
    """Build ``read_file``, ``search`` and ``list_files`` confined to ``root``.

    Args:
        root: The workspace folder; it must exist.
        path_hints: Called when a path is missing; returns the workspace paths named in
            the user's request (relative to ``root``, or absolute inside it). Those that
            exist are listed in the error (``named in the request: ...``). Called at each
            miss. A call the registry makes as part of a run is handed the run's own
            request paths instead (:class:`~leanloop.tools._notes.CallContext`).
        repair_paths: When a requested path is missing and exactly one hinted path
            exists, use that one instead; the result starts with ``[no file "app.yml";
            read "config/app.yaml" (named in the request) instead]``. A call the registry
            makes as part of a run follows the run's decision instead (its prompting
            profile, known only once the run has asked the server what it serves).
        track_reads: Record each file ``read_file`` shows (its hash) in the run's
            :class:`~leanloop.tools._journal.WorkspaceRun`, which the edit tools check
            (:mod:`leanloop.tools.edits`); only worth its cost beside them.
        state: Where reads are recorded for calls made outside a registry (which hands
            each run's own); give the edit tools the same one.

    Returns:
        The three tools, in that order. Each works with ``invoke`` and ``ainvoke`` (the
        async form does its file I/O and matching in a daemon worker thread, which the
        loop can give up on without the process waiting for it at exit).

    Raises:
        ToolError: ``root`` is not an existing folder.
    """
    base = workspace_root(root)

    def helped(config: RunnableConfig | None) -> PathHelp:
        """The path help of one call: the run's request paths and its decision on repair
        when the registry hands them over with the call (:mod:`._notes`), else
        ``path_hints`` and ``repair_paths``."""
        context = call_context(config)
        hints, repair = path_hints, repair_paths
        if context is not None and context.request_paths is not None:
            hints = context.request_paths
        if context is not None and context.repair_paths is not None:
            repair = context.repair_paths
        told = context.told if context is not None else None
        return PathHelp(hints=hints, repair=repair, told=told)

    own = state if state is not None else WorkspaceRun()

    def reads(config: RunnableConfig | None) -> Callable[[Path], None] | None:
        """Where the call records what it read: the run's state, when reads are tracked."""
        if not track_reads:
            return None
        run = run_state(config, own)
        return lambda target: run.saw_file(base, target)

    read, find, listing = _filetools.read_file, _filetools.search, _filetools.list_files

    # LangChain hands each function the call's config (the parameter typed RunnableConfig).
    def read_file(
        path: str, offset: int = 1, limit: int = DEFAULT_READ_LINES, *, config: RunnableConfig
    ) -> str:
        return read(base, path, offset, limit, path_help=helped(config), on_read=reads(config))

    async def aread_file(
        path: str, offset: int = 1, limit: int = DEFAULT_READ_LINES, *, config: RunnableConfig
    ) -> str:
        help_, seen = helped(config), reads(config)
        return await in_worker(read, base, path, offset, limit, path_help=help_, on_read=seen)

    def search(
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        max_results: int = DEFAULT_SEARCH_RESULTS,
        *,
        config: RunnableConfig,
    ) -> str:
        return find(base, pattern, path, glob, max_results, path_help=helped(config))

    async def asearch(
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        max_results: int = DEFAULT_SEARCH_RESULTS,
        *,
        config: RunnableConfig,
    ) -> str:
        help_ = helped(config)
        return await in_worker(find, base, pattern, path, glob, max_results, path_help=help_)

    def list_files(path: str = ".", glob: str = "**/*", *, config: RunnableConfig) -> str:
        return listing(base, path, glob, path_help=helped(config))

    async def alist_files(path: str = ".", glob: str = "**/*", *, config: RunnableConfig) -> str:
        return await in_worker(listing, base, path, glob, path_help=helped(config))

    return [
        built_in_tool(
            "read_file", read_file, aread_file, ReadFileArgs, description=_DESCRIPTIONS["read_file"]
        ),
        built_in_tool("search", search, asearch, SearchArgs, description=_DESCRIPTIONS["search"]),
        built_in_tool(
            "list_files",
            list_files,
            alist_files,
            ListFilesArgs,
            description=_DESCRIPTIONS["list_files"],
        ),
    ]


def workspace_path_exists(root: Path) -> Callable[[str], bool]:
    """Return a check that a path (as a model wrote it) names something inside ``root``.

    For :class:`~leanloop.tools.ToolRegistry`'s ``path_exists``: paths outside the
    workspace, or that the system cannot use, count as missing.
    """
    base = Path(root).resolve()

    def exists(path: str) -> bool:
        try:
            return resolve_inside(base, path).exists()
        except (PathRefused, OSError):  # OSError: a name too long for the system
            return False

    return exists
