"""An MCP extra that is installed but does not import says why, not "install the extra".

The README's MCP example runs ``python -m mcp_server_time``; installing that server can
pull ``mcp`` 2.x, and ``langchain-mcp-adapters`` (which needs ``mcp<2``) then fails to
import. leanloop used to answer "install the leanloop[mcp] extra", hiding the real
error. The import failure is simulated here through ``sys.modules``.
"""

from __future__ import annotations

import sys
import types
from importlib import metadata
from pathlib import Path

import pytest

from leanloop.exceptions import ToolError
from leanloop.spec.types import McpServerSpec
from leanloop.tools.mcp import probe_mcp_servers

__all__: list[str] = []

SERVER = McpServerSpec(name="time", command="python", args=("-m", "mcp_server_time"), timeout=5)
HINT = "install the leanloop[mcp] extra"
BROKEN = "cannot import name 'Implementation' from 'mcp.types'"


def _broken_adapters(name: str) -> object:
    # What `from langchain_mcp_adapters.tools import load_mcp_tools` meets when the
    # adapters' own imports fail against an mcp they do not support.
    raise ImportError(BROKEN)


def _failure() -> str:
    verdict = probe_mcp_servers({"time": SERVER})["time"]
    assert isinstance(verdict, ToolError), verdict
    return str(verdict)


def test_a_broken_extra_shows_the_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("langchain_mcp_adapters.tools")
    module.__getattr__ = _broken_adapters  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "langchain_mcp_adapters.tools", module)
    message = _failure()
    assert message.startswith("MCP server 'time': the leanloop[mcp] extra does not import"), message
    assert BROKEN in message
    assert HINT not in message
    installed = metadata.version("langchain-mcp-adapters")
    assert f"langchain-mcp-adapters {installed}" in message
    assert f"mcp {metadata.version('mcp')}" in message
    # The adapters' own requirement, read from their metadata, as the way out.
    wanted = next(
        r for r in metadata.requires("langchain-mcp-adapters") or [] if r.startswith("mcp")
    )
    assert f"pip install '{wanted.replace(' ', '')}'" in message


def test_a_missing_dependency_of_the_adapters_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # The adapters are there but `mcp` is not: that is no "install the extra" either.
    module = types.ModuleType("langchain_mcp_adapters.tools")

    def missing(name: str) -> object:
        raise ModuleNotFoundError("No module named 'mcp'", name="mcp")

    module.__getattr__ = missing  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "langchain_mcp_adapters.tools", module)
    message = _failure()
    assert "ModuleNotFoundError: No module named 'mcp'" in message, message
    assert HINT not in message


class _NotInstalled:
    """A finder that answers for the adapters as an environment without them does."""

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name.partition(".")[0] == "langchain_mcp_adapters":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def test_a_missing_extra_still_gets_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.partition(".")[0] == "langchain_mcp_adapters"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NotInstalled(), *sys.meta_path])
    message = _failure()
    assert message == (
        "MCP server 'time': install the leanloop[mcp] extra (pip install 'leanloop[mcp]')"
    ), message


def test_a_server_that_exits_at_start_points_at_its_output_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real child that dies before the MCP handshake, as uvx does when it cannot reach
    # the package index through a proxy it was not told about.
    monkeypatch.setenv("LEANLOOP_CACHE", str(tmp_path))
    dying = McpServerSpec(
        name="dies", command=sys.executable, args=("-c", "import sys; sys.exit(3)"), timeout=30
    )
    verdict = probe_mcp_servers({"dies": dying})["dies"]
    assert isinstance(verdict, ToolError), verdict
    assert "could not be started" in str(verdict)
    assert f"it wrote nothing to {tmp_path / 'logs' / 'mcp' / 'dies.log'}" in str(verdict)
    assert "HOME, LOGNAME, PATH, SHELL, TERM and USER" in str(verdict)
