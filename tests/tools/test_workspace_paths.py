"""The helpers every built-in tool shares: the workspace check and the no-link folder walk.

``workspace_root`` is the one refusal of a workspace that is not a folder (``read_file``,
the edit tools and ``run_command`` all go through it); ``open_under`` is the one walk from
the workspace root that follows no link, for reading and for writing (``create=True``).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.tools import BaseTool

from leanloop.exceptions import ToolError
from leanloop.tools._paths import open_under, workspace_root
from leanloop.tools._textfile import remove_inside, write_inside
from leanloop.tools.command import command_tool
from leanloop.tools.edits import edit_tools
from leanloop.tools.readers import READS_KEY
from leanloop.tools.workspace import workspace_tools

__all__: list[str] = []

needs_links = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and openat")


def test_workspace_root_resolves_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()

    assert workspace_root(tmp_path / "ws" / ".." / "ws") == (tmp_path / "ws").resolve()


@pytest.mark.parametrize(
    "build",
    [
        workspace_tools,
        edit_tools,
        command_tool,
    ],
    ids=["workspace_tools", "edit_tools", "command_tool"],
)
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_every_builder_refuses_a_workspace_that_is_not_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: Callable[[Path], object], kind: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if kind == "file":
        Path(kind).write_text("x", encoding="utf-8")

    with pytest.raises(ToolError) as caught:
        build(Path(kind))

    # The folder as the user gave it, not resolved, so they recognise it.
    assert str(caught.value) == f"workspace '{kind}' is not an existing folder"


def test_only_the_tools_that_read_nothing_named_opt_out_of_reader_help(tmp_path: Path) -> None:
    tools: list[BaseTool] = [
        *workspace_tools(tmp_path),
        *edit_tools(tmp_path),
        command_tool(tmp_path),
    ]

    metadata = {tool.name: tool.metadata for tool in tools}

    assert metadata["read_file"] is None
    assert metadata["list_files"] is None
    assert metadata["write_file"] == {READS_KEY: None}
    assert metadata["run_command"] == {READS_KEY: None}


@needs_links
def test_open_under_makes_missing_folders_only_when_asked(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_under(tmp_path, ("a", "b"), directory=True)
    assert not (tmp_path / "a").exists()

    fd = open_under(tmp_path, ("a", "b"), directory=True, create=True)
    os.close(fd)

    assert (tmp_path / "a" / "b").is_dir()


@needs_links
@pytest.mark.parametrize("create", [False, True])
def test_open_under_refuses_a_link_on_the_way_even_to_create(tmp_path: Path, create: bool) -> None:
    base = tmp_path / "ws"
    base.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (base / "out").symlink_to(tmp_path / "elsewhere")

    with pytest.raises(OSError) as caught:
        open_under(base, ("out", "new"), directory=True, create=create)

    assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)
    assert not (tmp_path / "elsewhere" / "new").exists()


@pytest.mark.parametrize("part", ["..", ".", "", "a/b"])
def test_open_under_takes_plain_names_only(tmp_path: Path, part: str) -> None:
    with pytest.raises(OSError) as caught:
        open_under(tmp_path, (part,), directory=True, create=True)

    assert caught.value.errno == errno.EINVAL


@needs_links
def test_a_write_or_delete_through_a_folder_swapped_for_a_link_is_refused(
    tmp_path: Path,
) -> None:
    # The path was checked while "sub" was a folder; a link took its place since.
    base = (tmp_path / "ws").resolve()
    base.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "kept.txt").write_text("mine\n", encoding="utf-8")
    (base / "sub").symlink_to(outside)

    with pytest.raises(OSError):
        write_inside(base, base / "sub" / "new.txt", b"x\n")
    with pytest.raises(OSError):
        remove_inside(base, base / "sub" / "kept.txt")

    assert not (outside / "new.txt").exists()
    assert (outside / "kept.txt").read_text(encoding="utf-8") == "mine\n"


@needs_links
def test_a_write_makes_its_folders_and_a_delete_removes_only_a_file(tmp_path: Path) -> None:
    base = tmp_path.resolve()

    write_inside(base, base / "a" / "b" / "f.txt", b"x\n")
    assert (base / "a" / "b" / "f.txt").read_bytes() == b"x\n"

    with pytest.raises(OSError) as caught:
        remove_inside(base, base / "a" / "b")
    assert caught.value.errno == errno.EINVAL
    remove_inside(base, base / "a" / "b" / "f.txt")
    assert not (base / "a" / "b" / "f.txt").exists()
