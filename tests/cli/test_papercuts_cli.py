"""First-hour papercuts of the command line (issue 29, item 9).

- counts are printed with the right plural ("1 char", "1 chunk", "2 results");
- ``-q`` leaves only errors on stderr: no warnings from leanloop, from libraries'
  loggers, nor Python warnings;
- ``run --agent A`` runs when another agent's ``${VAR}`` is unset, and ``validate`` names
  the agents an unset variable stops.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

from leanloop.cli import main
from leanloop.cli.progress import ProgressPrinter

__all__: list[str] = []

_STAMP = re.compile(r"^\[\s*\d+\.\ds\] ")


# ---- c. plurals in progress lines ------------------------------------------------------


async def _lines(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    stream = io.StringIO()
    printer = ProgressPrinter(stream, colour=False)
    for name, data in events:
        await printer.record(name, data)
    return [_STAMP.sub("", line) for line in stream.getvalue().splitlines()]


async def test_a_count_of_one_is_singular_and_others_plural() -> None:
    one = {"name": "search", "args": {}, "chars_out": 1, "ok": True}
    failed = {"name": "search", "args": {}, "chars_out": 1, "ok": False}
    cut = {**one, "cut_from": 9000}
    pruned = {"step": 2, "tool": "read_file", "chars_raw": 5000, "chars_out": 1, "chunks": 1}
    events = [
        ("leanloop.step", {"step": 1, "calls": [one, failed, cut]}),
        ("leanloop.trimmed", {"step": 2, "count": 1, "tokens_before": 900, "tokens_after": 1}),
        ("leanloop.trimmed", {"step": 3, "count": 2, "tokens_before": 900, "tokens_after": 300}),
        ("leanloop.pruned", {**pruned, "seconds": 1.0}),
    ]

    assert await _lines(events) == [
        "step 1 · search() · ok · 1 char",
        "step 1 · search() · failed · 1 char",
        "step 1 · search() · ok · cut 9,000 → 1 char",
        "step 2 · trimmed 1 result · 900 → 1 token",
        "step 3 · trimmed 2 results · 900 → 300 tokens",
        "step 2 · pruned read_file · 5,000 → 1 char · 1 chunk · 1.0 s",
    ]


# ---- d. -q keeps warnings off stderr ---------------------------------------------------

_NOISY = '''\
import logging
import warnings


def noisy() -> str:
    """Make some noise."""
    warnings.warn("papercut user warning", UserWarning, stacklevel=1)
    logging.getLogger("langchain_core.papercut").warning("papercut library warning")
    logging.getLogger("leanloop.papercut").warning("papercut leanloop warning")
    logging.getLogger("papercut").error("papercut error")
    return "quiet"
'''

_NOISY_AGENT = """\
version: 1
agents:
  a:
    model:
      class: leanloop.testing:ScriptedChatModel
      kwargs:
        replies:
          - tool_calls: [{name: noisy, args: {}}]
          - done
    tools: ["noisy_tool:noisy"]
"""


def _leanloop(folder: Path, *words: str) -> subprocess.CompletedProcess[str]:
    # A process of its own: pytest's warning capture would hide what a user sees.
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run(
        [sys.executable, "-m", "leanloop", *words],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=120,
        check=False,
    )


def test_quiet_prints_errors_but_no_warnings(tmp_path: Path) -> None:
    (tmp_path / "noisy_tool.py").write_text(_NOISY, encoding="utf-8")
    (tmp_path / "agents.yaml").write_text(_NOISY_AGENT, encoding="utf-8")

    loud = _leanloop(tmp_path, "run", "agents.yaml", "hi")
    quiet = _leanloop(tmp_path, "run", "agents.yaml", "-q", "hi")

    # Without -q every kind of warning shows: the quiet run has something to leave out.
    for said in ("user warning", "library warning", "leanloop warning", "error"):
        assert f"papercut {said}" in loud.stderr, loud.stderr
    assert (quiet.returncode, quiet.stdout) == (0, "done\n")
    assert quiet.stderr == "leanloop: ERROR: papercut error\n"


def test_quiet_restores_the_warning_filters_it_changed(tmp_path: Path) -> None:
    # main() runs inside other programs too: -q must not silence them afterwards.
    (tmp_path / "agents.yaml").write_text(_NOISY_AGENT, encoding="utf-8")
    (tmp_path / "noisy_tool.py").write_text(_NOISY, encoding="utf-8")
    before = list(warnings.filters)
    main(["run", str(tmp_path / "agents.yaml"), "-q", "hi"])

    assert warnings.filters == before


# ---- e. an unset variable stops only the agents that need it ---------------------------

_TEAM = """\
version: 1
models:
  local: {class: 'leanloop.testing:ScriptedChatModel', kwargs: {replies: ['hello']}}
  cloud: {provider: openai, model: gpt, api_key: '${PAPERCUT_UNSET_KEY}'}
agents:
  a:
    model: local
  b:
    model: cloud
"""


def test_run_of_an_agent_that_needs_no_unset_variable_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("PAPERCUT_UNSET_KEY", raising=False)
    path = tmp_path / "agents.yaml"
    path.write_text(_TEAM, encoding="utf-8")

    assert main(["run", str(path), "--agent", "a", "-q", "hi"]) == 0
    assert capsys.readouterr().out == "hello\n"

    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == textwrap.dedent(
        f"""\
        error: {path}:4:50: models.cloud.api_key: environment variable 'PAPERCUT_UNSET_KEY' \
is not set (write ${{PAPERCUT_UNSET_KEY:-default}} to give a default; needed by agent 'b')
        """
    )
