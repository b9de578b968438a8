"""The edit tools' contract (issue 41): every rule an edit follows, one test or more each.

write_file, replace_lines, insert_at_line, str_replace, apply_patch and undo_edit change
files inside the workspace only after the run has read them as they are now; line numbers
are read_file's; apply_patch is all or nothing; undo_edit is guarded by the hash the
journal kept; binary files are refused; CRLF files stay CRLF; the model sees a diff capped
at 4,000 characters while the event and the journal carry the whole diff. Most tests call
the tools directly (sharing one state, as the loader builds them); those about runs go
through the registry, which hands each run a state of its own.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, ToolException

from leanloop.agent import LLMAgent
from leanloop.events import FILE_EDITED, EventRecorder
from leanloop.tools.edits import MODEL_DIFF_CHARS, WorkspaceRun, edit_tools
from leanloop.tools.registry import ToolRegistry
from leanloop.tools.workspace import workspace_tools

__all__: list[str] = []

APP = "def main():\n    x = 1\n    return x\n"


class Kit:
    """The read and edit tools of one workspace, sharing one state, and their events."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = WorkspaceRun()
        reading = workspace_tools(root, track_reads=True, state=self.state)
        editing = edit_tools(root, state=self.state)
        self.tools: dict[str, BaseTool] = {tool.name: tool for tool in [*reading, *editing]}
        self.events = EventRecorder()

    async def read(self, path: str) -> str:
        return str(await self.tools["read_file"].ainvoke({"path": path}))

    async def edit(self, name: str, **args: Any) -> str:
        result = await self.tools[name].ainvoke(args, {"callbacks": [self.events]})
        return str(result)

    async def refused(self, name: str, **args: Any) -> str:
        with pytest.raises(ToolException) as caught:
            await self.edit(name, **args)
        message = str(caught.value)
        assert "\n" not in message  # one line for the model
        return message

    def diffs(self) -> list[str]:
        return [str(data["diff"]) for data in self.events.named(FILE_EDITED)]


@pytest.fixture
def kit(tmp_path: Path) -> Kit:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text(APP, encoding="utf-8")
    return Kit(root)


# ---- read before edit, changed on disk --------------------------------------------------


EDITS_OF_APP: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": "app.py", "content": "print(1)\n"}),
    ("replace_lines", {"path": "app.py", "start": 2, "end": 2, "new_text": "    x = 2"}),
    ("insert_at_line", {"path": "app.py", "line": 1, "text": "import os"}),
    ("str_replace", {"path": "app.py", "old": "x = 1", "new": "x = 2"}),
    ("apply_patch", {"patch": "--- a/app.py\n+++ b/app.py\n@@ -2 +2 @@\n-    x = 1\n+    x = 2\n"}),
]


@pytest.mark.parametrize(("tool", "args"), EDITS_OF_APP, ids=[name for name, _ in EDITS_OF_APP])
async def test_an_edit_of_a_file_the_run_has_not_read_is_refused(
    kit: Kit, tool: str, args: dict[str, Any]
) -> None:
    message = await kit.refused(tool, **args)

    assert message.startswith("read_file app.py first")
    assert (kit.root / "app.py").read_text(encoding="utf-8") == APP
    assert kit.state.journal == []


@pytest.mark.parametrize(("tool", "args"), EDITS_OF_APP, ids=[name for name, _ in EDITS_OF_APP])
async def test_an_edit_of_a_file_changed_on_disk_since_it_was_read_is_refused(
    kit: Kit, tool: str, args: dict[str, Any]
) -> None:
    await kit.read("app.py")
    changed = APP.replace("x = 1", "x = 7")  # same size: only the hash tells
    (kit.root / "app.py").write_text(changed, encoding="utf-8")

    message = await kit.refused(tool, **args)

    assert message.startswith("app.py changed on disk since you read it; read it again")
    assert (kit.root / "app.py").read_text(encoding="utf-8") == changed


async def test_reading_again_after_a_change_on_disk_allows_the_edit(kit: Kit) -> None:
    await kit.read("app.py")
    (kit.root / "app.py").write_text(APP.replace("x = 1", "x = 7"), encoding="utf-8")
    await kit.read("app.py")

    await kit.edit("str_replace", path="app.py", old="x = 7", new="x = 8")

    assert "x = 8" in (kit.root / "app.py").read_text(encoding="utf-8")


async def test_a_touch_that_changes_nothing_is_not_a_change(kit: Kit) -> None:
    await kit.read("app.py")
    os.utime(kit.root / "app.py", ns=(1, 1))

    result = await kit.edit("str_replace", path="app.py", old="x = 1", new="x = 2")

    assert result.startswith("replaced the text at line 2 of app.py")


async def test_the_runs_own_edit_counts_as_read_for_the_next_one(kit: Kit) -> None:
    await kit.read("app.py")
    await kit.edit("str_replace", path="app.py", old="x = 1", new="x = 2")

    await kit.edit("str_replace", path="app.py", old="x = 2", new="x = 3")

    assert "x = 3" in (kit.root / "app.py").read_text(encoding="utf-8")


async def test_a_new_file_needs_no_read_and_its_folders_are_made(kit: Kit) -> None:
    result = await kit.edit("write_file", path="pkg/sub/new.py", content="VALUE = 1\n")

    assert result.splitlines()[0] == "created pkg/sub/new.py (1 line)"
    assert (kit.root / "pkg/sub/new.py").read_text(encoding="utf-8") == "VALUE = 1\n"


async def test_reset_forgets_what_the_run_read(kit: Kit) -> None:
    await kit.read("app.py")
    kit.state.reset()  # a run that goes on after a pause trusts the disk, not memory

    message = await kit.refused("str_replace", path="app.py", old="x = 1", new="x = 2")

    assert message.startswith("read_file app.py first")


async def test_each_run_of_the_registry_has_its_own_read_state(kit: Kit) -> None:
    tools = list(kit.tools.values())
    first, second = ToolRegistry(tools), ToolRegistry(tools)  # one registry per run
    await first.run("read_file", {"path": "app.py"})

    refused = await second.run("str_replace", {"path": "app.py", "old": "x = 1", "new": "x = 2"})
    done = await first.run("str_replace", {"path": "app.py", "old": "x = 1", "new": "x = 2"})

    # A failure is a one-line result for the model, not an exception.
    assert not refused.ok
    assert refused.text.startswith("error: read_file app.py first")
    assert done.ok
    assert any(note.startswith("str_replace changed app.py (+1 -1") for note in done.notes)
    assert [entry.path for entry in first.workspace_run.journal] == ["app.py"]
    assert second.workspace_run.journal == []
    assert kit.state.journal == []  # the tools' own state serves calls outside a registry


# ---- str_replace: exactly one match ------------------------------------------------------


async def test_str_replace_refuses_text_that_is_not_there(kit: Kit) -> None:
    await kit.read("app.py")

    missing = await kit.refused("str_replace", path="app.py", old="y = 1", new="y = 2")
    spaced = await kit.refused("str_replace", path="app.py", old="x  =  1", new="x = 2")

    assert missing.startswith("old is not in app.py; read_file app.py and copy the text")
    assert "matches line 2 if spaces are ignored" in spaced


async def test_str_replace_refuses_several_matches_and_says_where(kit: Kit) -> None:
    (kit.root / "dup.py").write_text("a = 1\nb = 2\na = 1\n", encoding="utf-8")
    await kit.read("dup.py")

    message = await kit.refused("str_replace", path="dup.py", old="a = 1", new="a = 3")

    assert message.startswith("old occurs 2 times in dup.py (at lines 1, 3)")
    assert (kit.root / "dup.py").read_text(encoding="utf-8") == "a = 1\nb = 2\na = 1\n"


# ---- lines as read_file numbers them -----------------------------------------------------


async def test_line_edits_use_read_files_numbers(kit: Kit) -> None:
    shown = await kit.read("app.py")
    assert "    2|     x = 1" in shown

    await kit.edit("replace_lines", path="app.py", start=2, end=2, new_text="    x = 2\n    y = 3")
    await kit.edit("insert_at_line", path="app.py", line=5, text="main()")

    assert (kit.root / "app.py").read_text(encoding="utf-8") == (
        "def main():\n    x = 2\n    y = 3\n    return x\nmain()\n"
    )


async def test_line_numbers_out_of_range_are_refused_with_the_count(kit: Kit) -> None:
    await kit.read("app.py")

    past = await kit.refused("replace_lines", path="app.py", start=3, end=9, new_text="x")
    backwards = await kit.refused("replace_lines", path="app.py", start=3, end=2, new_text="x")
    insert = await kit.refused("insert_at_line", path="app.py", line=9, text="x")

    assert past.startswith("app.py has 3 lines, so lines 3-9 are not all in it")
    assert backwards.startswith("end (2) is before start (3)")
    assert insert.startswith("line must be 1 to 4 for app.py")


# ---- apply_patch: all or nothing ---------------------------------------------------------


async def test_a_failing_hunk_leaves_every_file_unchanged(kit: Kit) -> None:
    (kit.root / "b.py").write_text("one\ntwo\n", encoding="utf-8")
    await kit.read("app.py")
    await kit.read("b.py")
    patch = (
        "--- a/app.py\n+++ b/app.py\n@@ -2,1 +2,1 @@\n-    x = 1\n+    x = 2\n"
        "--- /dev/null\n+++ b/c.py\n@@ -0,0 +1 @@\n+new\n"
        "--- a/b.py\n+++ b/b.py\n@@ -1,2 +1,2 @@\n one\n-three\n+four\n"
    )

    message = await kit.refused("apply_patch", patch=patch)

    assert message.startswith("hunk 1 of 1 for b.py (@@ -1,2 +1,2 @@) does not match: line 2 is")
    assert "nothing was changed" in message
    assert (kit.root / "app.py").read_text(encoding="utf-8") == APP
    assert (kit.root / "b.py").read_text(encoding="utf-8") == "one\ntwo\n"
    assert not (kit.root / "c.py").exists()
    assert kit.state.journal == []


async def test_a_patch_with_miscounted_headers_and_drift_applies_to_several_files(
    kit: Kit,
) -> None:
    (kit.root / "b.py").write_text("".join(f"line {n}\n" for n in range(1, 21)), encoding="utf-8")
    await kit.read("app.py")
    await kit.read("b.py")
    patch = (
        "--- a/app.py\n+++ b/app.py\n@@ -1,9 +1,9 @@\n def main():\n-    x = 1\n+    x = 2\n"
        # The header says line 4; the lines are at 10: found nearest, as `patch` does.
        "--- a/b.py\n+++ b/b.py\n@@ -4,3 +4,3 @@\n line 10\n-line 11\n+LINE 11\n line 12\n"
        "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+# New\n+text\n"
    )

    result = await kit.edit("apply_patch", patch=patch)

    assert result.splitlines()[0] == "patched 3 files: app.py, b.py, created docs/new.md"
    assert "    x = 2" in (kit.root / "app.py").read_text(encoding="utf-8")
    assert "\nLINE 11\n" in (kit.root / "b.py").read_text(encoding="utf-8")
    assert (kit.root / "docs/new.md").read_text(encoding="utf-8") == "# New\ntext\n"
    assert [entry.path for entry in kit.state.journal] == ["app.py", "b.py", "docs/new.md"]


async def test_what_is_not_a_patch_gets_a_one_line_instruction(kit: Kit) -> None:
    message = await kit.refused("apply_patch", patch="@@ -1 +1 @@\n-a\n+b\n")

    assert message.startswith("the patch names no file: start each file with '--- a/PATH'")


# ---- undo_edit ---------------------------------------------------------------------------


async def test_undo_puts_back_the_file_as_it_was(kit: Kit) -> None:
    await kit.read("app.py")
    await kit.edit("str_replace", path="app.py", old="x = 1", new="x = 2")
    await kit.edit("insert_at_line", path="app.py", line=1, text="import os")

    first = await kit.edit("undo_edit", path="app.py")
    second = await kit.edit("undo_edit", path="app.py")

    assert first.startswith("undid the insert_at_line edit of app.py")
    assert second.startswith("undid the str_replace edit of app.py")
    assert (kit.root / "app.py").read_text(encoding="utf-8") == APP
    undos = [entry for entry in kit.state.journal if entry.tool == "undo_edit"]
    assert [entry.undoes for entry in undos] == [
        kit.state.journal[1].number,
        kit.state.journal[0].number,
    ]
    nothing = await kit.refused("undo_edit", path="app.py")
    assert nothing.startswith("this run has made no edit of app.py that undo_edit can revert")


async def test_undo_after_a_later_change_on_disk_is_refused(kit: Kit) -> None:
    await kit.read("app.py")
    await kit.edit("str_replace", path="app.py", old="x = 1", new="x = 2")
    later = APP.replace("x = 1", "x = 2") + "# a person's line\n"
    (kit.root / "app.py").write_text(later, encoding="utf-8")

    message = await kit.refused("undo_edit", path="app.py")

    assert message.startswith("app.py changed after the str_replace edit that undo_edit")
    assert (kit.root / "app.py").read_text(encoding="utf-8") == later


async def test_undo_of_a_created_file_deletes_it(kit: Kit) -> None:
    await kit.edit("write_file", path="new.txt", content="hello\n")

    result = await kit.edit("undo_edit", path="new.txt")

    assert "it created the file, so it is deleted" in result
    assert not (kit.root / "new.txt").exists()


# ---- the jail, binary files, encodings ---------------------------------------------------


@pytest.mark.parametrize(
    ("path", "start"),
    [
        ("../outside.txt", 'path "../outside.txt" is outside the workspace'),
        ("{tmp}/outside.txt", 'path "{tmp}/outside.txt" is outside the workspace; use a path'),
        ("out/escape.txt", 'path "out/escape.txt" is outside the workspace'),
        (".git/hooks/pre-commit", ".git/hooks/pre-commit is inside a version-control folder"),
    ],
)
async def test_paths_that_leave_the_workspace_are_refused(
    kit: Kit, tmp_path: Path, path: str, start: str
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (kit.root / "out").symlink_to(tmp_path / "elsewhere")  # a link that leads outside

    message = await kit.refused("write_file", path=path.format(tmp=tmp_path), content="x\n")

    assert message.startswith(start.format(tmp=tmp_path))
    assert not (tmp_path / "outside.txt").exists()
    assert not (tmp_path / "elsewhere" / "escape.txt").exists()


async def test_binary_and_non_utf8_files_are_refused(kit: Kit) -> None:
    (kit.root / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (kit.root / "latin.txt").write_bytes("café\n".encode("latin-1"))

    binary = await kit.refused("str_replace", path="blob.bin", old="PNG", new="GIF")
    latin = await kit.refused("write_file", path="latin.txt", content="x\n")

    assert binary.startswith("blob.bin looks like a binary file (11 bytes); the edit tools")
    assert latin.startswith("latin.txt is not UTF-8 text")
    assert (kit.root / "blob.bin").read_bytes() == b"\x89PNG\r\n\x1a\n\x00\x00\x00"


async def test_crlf_files_keep_their_line_endings_and_byte_order_mark(kit: Kit) -> None:
    crlf = b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n"
    (kit.root / "win.txt").write_bytes(crlf)
    await kit.read("win.txt")

    await kit.edit("str_replace", path="win.txt", old="one\ntwo", new="ONE\nTWO")
    await kit.edit("replace_lines", path="win.txt", start=3, end=3, new_text="3\n4\n")
    await kit.edit("insert_at_line", path="win.txt", line=1, text="zero")
    patch = "--- a/win.txt\n+++ b/win.txt\n@@ -4,2 +4,2 @@\n 3\n-4\n+four\n"
    await kit.edit("apply_patch", patch=patch)

    data = (kit.root / "win.txt").read_bytes()
    assert data == b"\xef\xbb\xbfzero\r\nONE\r\nTWO\r\n3\r\nfour\r\n"
    await kit.edit("write_file", path="win.txt", content="a\nb\n")
    assert (kit.root / "win.txt").read_bytes() == b"\xef\xbb\xbfa\r\nb\r\n"


async def test_a_file_without_a_final_line_break_keeps_it_that_way(kit: Kit) -> None:
    (kit.root / "tail.txt").write_text("a\nb", encoding="utf-8")
    await kit.read("tail.txt")

    await kit.edit("replace_lines", path="tail.txt", start=2, end=2, new_text="B")
    await kit.edit("insert_at_line", path="tail.txt", line=3, text="C")

    assert (kit.root / "tail.txt").read_text(encoding="utf-8") == "a\nB\nC"


# ---- the diff: capped for the model, whole in the event and the journal ------------------


async def test_the_model_sees_a_capped_diff_and_the_event_and_journal_the_whole(kit: Kit) -> None:
    big = "".join(f"value_{n} = {n}\n" for n in range(2_000))
    (kit.root / "big.py").write_text(big, encoding="utf-8")
    await kit.read("big.py")

    result = await kit.edit("write_file", path="big.py", content=big.replace(" = ", " == "))

    summary, *rest = result.split("\n")
    shown = "\n".join(rest[:-1])
    (whole,) = kit.diffs()
    assert summary == "replaced the whole of big.py (2,000 lines before, 2,000 now)"
    assert len(shown) <= MODEL_DIFF_CHARS
    assert rest[-1].startswith("[diff cut at ")
    assert rest[-1].endswith(f"of {len(whole):,} characters; read_file the file to see the result]")
    assert whole.startswith(shown)
    assert len(whole) > 50_000
    assert kit.state.journal[-1].diff == whole
    assert kit.state.report()[-1]["diff"] == whole
    assert "before" not in kit.state.report()[-1]  # the bytes stay out of reports


async def test_a_small_edit_shows_the_whole_diff_and_sends_one_event(kit: Kit) -> None:
    await kit.read("app.py")

    result = await kit.edit("str_replace", path="app.py", old="x = 1", new="x = 2")

    (event,) = kit.events.named(FILE_EDITED)
    assert result == f"replaced the text at line 2 of app.py\n{event['diff']}"
    assert event["tool"] == "str_replace"
    assert event["path"] == "app.py"
    assert event["before_sha256"] != event["after_sha256"]
    assert "-    x = 1\n+    x = 2" in event["diff"]


# ---- an agent's run: the registry's state, the report's notes, the run's events ----------


async def test_an_agent_run_edits_what_it_read_and_tells_the_report_and_events(
    tmp_path: Path,
) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    check = [sys.executable, "-c", "import calc; print(calc.add(2, 3))"]
    replies = [
        {"tool_calls": [{"name": "read_file", "args": {"path": "calc.py"}}]},
        {
            "tool_calls": [
                {"name": "str_replace", "args": {"path": "calc.py", "old": "a - b", "new": "a + b"}}
            ]
        },
        {"tool_calls": [{"name": "run_command", "args": {"argv": check}}]},
        "Fixed: add(2, 3) is 5.",
    ]
    model = {"class": "leanloop.testing:ScriptedChatModel", "kwargs": {"replies": replies}}
    text = (
        f"version: 1\nagents:\n  fixer:\n    model: {json.dumps(model)}\n"
        # No person in this run: the changing tools are told not to ask (ADR 0037).
        "    tools: [read_file, {name: str_replace, approval: never},\n"
        "            {name: run_command, command_timeout: 20, approval: never}]\n"
    )
    (tmp_path / "agents.yaml").write_text(text, encoding="utf-8")
    events = EventRecorder()

    message = await LLMAgent.from_file(tmp_path / "agents.yaml").ainvoke(
        "Fix the add function.", {"callbacks": [events]}
    )

    calls = message.response_metadata["leanloop"]["tool_calls"]
    assert [(call["name"], call["ok"]) for call in calls] == [
        ("read_file", True),
        ("str_replace", True),
        ("run_command", True),
    ]
    number = events.named(FILE_EDITED)[0]["number"]
    assert calls[1]["notes"] == [f"str_replace changed calc.py (+1 -1; edit #{number})"]
    assert calls[2]["result_preview"].startswith("exit code 0")
    (edited,) = events.named(FILE_EDITED)
    assert edited["path"] == "calc.py"
    assert "+    return a + b" in edited["diff"]
    assert (tmp_path / "calc.py").read_text(encoding="utf-8").endswith("return a + b\n")
