"""tool_names_clash: the run's name check, on names validate --check-models has listed."""

from __future__ import annotations

from leanloop.tools.loader import name_clash, tool_names_clash

LISTED = {"files": ["read_file", "stat"], "time": ["now"]}


def test_a_built_in_tool_clashes_with_an_mcp_tool_of_its_name() -> None:
    clash = tool_names_clash(["read_file", "mcp:files"], mcp_tools=LISTED)
    assert clash == "two tools are named \"read_file\" ('read_file' and 'mcp:files')"


def test_one_tool_of_a_server_clashes_only_by_its_own_name() -> None:
    assert tool_names_clash(["read_file", "mcp:files/stat"], mcp_tools=LISTED) is None
    clash = tool_names_clash(["mcp:files/read_file", "read_file"], mcp_tools=LISTED)
    assert clash == "two tools are named \"read_file\" ('mcp:files/read_file' and 'read_file')"


def test_an_agent_tool_is_named_after_its_agent() -> None:
    clash = tool_names_clash(
        ["mcp:time", "agent:now"], mcp_tools=LISTED, prebuilt={"agent:now": "now"}
    )
    assert clash == "two tools are named \"now\" ('mcp:time' and 'agent:now')"


def test_a_server_that_listed_nothing_is_skipped() -> None:
    assert tool_names_clash(["read_file", "mcp:down"], mcp_tools=LISTED) is None


def test_name_clash_names_the_first_repeat() -> None:
    assert name_clash([("a", "x"), ("b", "y"), ("c", "x"), ("d", "y")]) == (
        "two tools are named \"x\" ('a' and 'c')"
    )
