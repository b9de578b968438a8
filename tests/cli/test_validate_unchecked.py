"""Plain ``leanloop validate`` names the tool modules it read but did not import (issue 39).

Reading an agents file runs none of its code, so a tool module that fails when imported
(a missing dependency, a failing line) passes plain ``validate``; the line after ``ok:``
says which modules were not imported and that ``--check-models`` imports them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from leanloop.cli import main

MARKING = """\
from pathlib import Path

Path(__file__).with_name("MARKER").write_text("imported")
import leanloop_no_such_dependency


def lookup(code: str) -> str:
    "Look up what a code means."
    return code
"""
PACKAGE_INIT = """\
from pathlib import Path

Path(__file__).parent.with_name("PACKAGE_MARKER").write_text("imported")
"""
PACKAGE_TOOLS = """\
def find(query: str) -> str:
    "Find something."
    return query
"""
AGENTS = """\
version: 1
agents:
  a:
    model: {class: "leanloop.testing:ScriptedChatModel"}
    tools: [read_file, "ll_unchecked_tools:lookup", "agent:b"]
  b:
    description: finds things
    model: {class: "leanloop.testing:ScriptedChatModel"}
    tools: ["ll_unchecked_pkg.tools:find", "ll_unchecked_tools:lookup"]
  c:
    model: {class: "leanloop.testing:ScriptedChatModel"}
    tools: [read_file]
"""


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    """An agents file beside a module and a package that leave a mark when imported."""
    (tmp_path / "ll_unchecked_tools.py").write_text(MARKING, encoding="utf-8")
    package = tmp_path / "ll_unchecked_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(PACKAGE_INIT, encoding="utf-8")
    (package / "tools.py").write_text(PACKAGE_TOOLS, encoding="utf-8")
    path = tmp_path / "agents.yaml"
    path.write_text(AGENTS, encoding="utf-8")
    return path


def _nothing_ran(folder: Path) -> None:
    assert not (folder / "MARKER").exists()
    assert not (folder / "PACKAGE_MARKER").exists()
    assert not {"ll_unchecked_tools", "ll_unchecked_pkg"} & set(sys.modules)


def test_plain_validate_names_each_tool_module_once_and_imports_none(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(agents_file)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "ok: 3 agents (a, b, c)",
        "not checked: tool modules ll_unchecked_tools, ll_unchecked_pkg.tools were read, not "
        "imported (importing runs their code); "
        f"`leanloop validate --check-models {agents_file}` imports them",
    ]
    _nothing_ran(agents_file.parent)


def test_an_agent_s_line_names_the_modules_of_the_agents_it_calls(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(agents_file), "--agent", "a"]) == 0
    assert "ll_unchecked_tools, ll_unchecked_pkg.tools were read" in capsys.readouterr().out
    _nothing_ran(agents_file.parent)


def test_one_module_is_named_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ll_unchecked_tools.py").write_text(MARKING, encoding="utf-8")
    (tmp_path / "my agents.yaml").write_text(
        AGENTS.split("  b:", maxsplit=1)[0].replace(', "agent:b"', ""), encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "my agents.yaml"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "not checked: tool module ll_unchecked_tools was read, not imported (importing runs "
        "its code); `leanloop validate --check-models 'my agents.yaml'` imports it"
    )
    _nothing_ran(tmp_path)


def test_without_import_path_tools_only_the_ok_line_is_printed(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(agents_file), "--agent", "c"]) == 0
    assert capsys.readouterr().out.splitlines() == ["ok: 1 agent (c)"]
