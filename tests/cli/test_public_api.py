"""The public API is one import away and cheap to import (moved from
features/public_api.feature, issue 26).

Everything a user needs comes from ``leanloop`` itself, every error leanloop raises on
purpose is a LeanloopError, and importing the package, or running the CLI's cheap commands,
does not load LangChain until an agent is built. What a fresh interpreter imported needs a
real process: those checks start one.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import leanloop
from leanloop.report import RunReport

PUBLIC_NAMES = {
    "AgentRunError",
    "ApprovalPending",
    "AgentSpec",
    "ContextOverflowError",
    "EventRecorder",
    "InvalidArgument",
    "InvalidArgumentType",
    "LLMAgent",
    "LeanloopError",
    "LeanloopSignal",
    "LocalModelError",
    "ModelError",
    "ModelSpec",
    "NoAnswer",
    "RunFailed",
    "RunReport",
    "SessionAgentMismatch",
    "SessionBusy",
    "SessionError",
    "SpecError",
    "SpecIssue",
    "StructuredOutputError",
    "ToolError",
    "TransientToolError",
    "UnfinishedTurn",
    "UsageError",
    "__version__",
    "agent_schema",
    "load_agents",
    "load_specs",
}


def test_the_public_names_import_from_leanloop_and_all_lists_exactly_them() -> None:
    actual = set(leanloop.__all__)
    assert actual == PUBLIC_NAMES, f"missing {PUBLIC_NAMES - actual}, extra {actual - PUBLIC_NAMES}"
    for name in leanloop.__all__:
        namespace: dict[str, object] = {}
        exec(f"from leanloop import {name}", namespace)  # noqa: S102 - the statement users write
        assert namespace[name] is getattr(leanloop, name), name


def test_a_run_failure_is_a_leanloop_error_that_carries_the_partial_report() -> None:
    failed = leanloop.RunFailed(
        "the request to the model failed at step 2", report=RunReport(steps=1)
    )

    assert isinstance(failed, leanloop.LeanloopError)
    assert isinstance(failed, leanloop.AgentRunError)  # the run-level base (issue 27)
    assert isinstance(failed, leanloop.ModelError)
    assert failed.report.steps == 1, failed.report


def test_an_unknown_name_is_an_attribute_error_not_a_lazy_import() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        getattr(leanloop, "NoSuchThing")  # noqa: B009 - the lookup under test


def _fresh_modules(code: str, *, stream: str = "stdout") -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(getattr(done, stream).strip().splitlines()[-1]))


def test_importing_leanloop_does_not_import_langchain() -> None:
    modules = _fresh_modules("import json, sys, leanloop; print(json.dumps(sorted(sys.modules)))")

    assert "langchain_core" not in modules
    assert "leanloop.agent" not in modules


@pytest.mark.parametrize(
    "command",
    ["--help", "--version", "validate src/leanloop/examples/agents.yaml", "schema", "local --help"],
)
def test_the_cli_cheap_commands_do_not_import_langchain(command: str) -> None:
    code = (
        "import json, sys\n"
        "from leanloop.cli import main\n"
        "try:\n"
        f"    main({command.split()!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    modules = _fresh_modules(code, stream="stderr")

    assert "leanloop.cli" in modules
    assert "langchain_core" not in modules
    assert "httpx" not in modules
