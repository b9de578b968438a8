"""Robot keywords for the sessions suite (``robot/sessions.robot``).

A test gets a fresh folder with an agents file on the scripted server whose one tool,
``lookup``, lives in a small module written next to the file and logs every call it
runs to ``tool_calls.log``: the log is how a test proves that no tool ran twice across a
SIGKILL and a ``--resume``. The session store is the default one, under the folder.

The scripted server belongs to ``ServerLibrary``; this library reaches the same server
object through Robot's library instance to queue what ServerLibrary has no keyword for:
a tool-call reply that streams slowly, so that a run is caught waiting for it.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from robot.libraries.BuiltIn import BuiltIn

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file
from scripted_server import ScriptedOpenAIServer, ScriptedResponse

__all__ = ["SessionLibrary"]

TOOL_MODULE = "leanloop_session_tools"
"""The tool module's name: unique, since the agents file's folder goes last on sys.path."""
TOOL_LOG = "tool_calls.log"
AGENT = "keeper"

_TOOL_SOURCE = '''\
"""The tool of a sessions test: it logs each call it runs, one key a line."""

from pathlib import Path

_LOG = Path(__file__).with_name("tool_calls.log")


def lookup(key: str) -> str:
    """Look up the value stored under a key.

    Args:
        key: The key to look up.
    """
    # Appended and closed at once: a process killed later keeps every line written.
    with _LOG.open("a", encoding="utf-8") as log:
        log.write(key + "\\n")
    return f"the value of {key} is {key}-value"
'''


class SessionLibrary:
    """Session agents files, the tool log, and slow replies on the scripted server."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def session_agents_file(self, name: str, base_url: str, max_rounds: int = 8) -> str:
        """Write a fresh ``<TEMPDIR>/leanloop-sessions-<name>`` with the tool and an agents file.

        The folder is removed first, so its session store starts empty. The agent
        (``keeper``) has only the ``lookup`` tool. Returns the agents file's path.
        """
        folder = Path(BuiltIn().get_variable_value("${TEMPDIR}")) / f"leanloop-sessions-{name}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / f"{TOOL_MODULE}.py").write_text(_TOOL_SOURCE, encoding="utf-8")
        agent = agent_entry(
            "You answer with the lookup tool.",
            [f"{TOOL_MODULE}:lookup"],
            max_rounds=int(max_rounds),
        )
        return write_agents_file(folder, model_entry(base_url, "session-model"), AGENT, agent)

    def plain_session_agents_file(self, name: str, base_url: str, model: str = "local") -> str:
        """Write a fresh ``<TEMPDIR>/leanloop-sessions-<name>`` with a tool-less agent.

        For the real model: the agent answers from the conversation alone.
        """
        folder = Path(BuiltIn().get_variable_value("${TEMPDIR}")) / f"leanloop-sessions-{name}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        agent = agent_entry("You are a helpful assistant. Answer in one short sentence.", [])
        return write_agents_file(folder, model_entry(base_url, model), AGENT, agent)

    def tool_log(self, agents_file: str) -> list[str]:
        """The keys ``lookup`` was called with, in order (empty before the first call)."""
        log = Path(agents_file).with_name(TOOL_LOG)
        return log.read_text(encoding="utf-8").splitlines() if log.exists() else []

    def wait_until_tool_log_has(self, agents_file: str, count: int, timeout: float = 20) -> None:
        """Wait until the tool log holds exactly ``count`` lines; fail after ``timeout`` s."""
        deadline = time.monotonic() + float(timeout)
        while len(lines := self.tool_log(agents_file)) < int(count):
            if time.monotonic() > deadline:
                msg = f"the tool log holds {lines} after {timeout} s, not {count} lines"
                raise AssertionError(msg)
            time.sleep(0.05)
        # More lines than asked means a tool ran that should not have: fail, do not wait.
        if len(lines) != int(count):
            msg = f"the tool log holds {len(lines)} lines, not {count}: {lines}"
            raise AssertionError(msg)

    def wait_until_scripted_requests_reach(self, count: int, timeout: float = 20) -> None:
        """Wait until the scripted server has received ``count`` chat requests."""
        server = self._server()
        deadline = time.monotonic() + float(timeout)
        while len(server.requests) < int(count):
            if time.monotonic() > deadline:
                got = len(server.requests)
                msg = f"the scripted server received {got} requests in {timeout} s, not {count}"
                raise AssertionError(msg)
            time.sleep(0.05)

    def queue_slow_tool_call(self, name: str, arguments: str, chunk_delay: float) -> None:
        """Queue a tool-call reply that streams one piece every ``chunk_delay`` seconds."""
        self._server().queue(
            ScriptedResponse(
                tool_calls=[{"name": name, "arguments": json.loads(arguments)}],
                chunk_delay=float(chunk_delay),
            )
        )

    def ignore_dropped_connections(self) -> None:
        """Keep the scripted server quiet about clients that die mid-reply.

        A run killed while a slow reply streams leaves the server writing to a closed
        socket; the standard library would print that BrokenPipeError's traceback on
        the console though it is what the test wants. Other errors are still printed.
        """
        httpd = self._server()._httpd  # ServerLibrary has no keyword for it
        if httpd is None:
            msg = "the scripted server is not running"
            raise AssertionError(msg)
        report = httpd.handle_error

        def handle_error(request: Any, client_address: Any) -> None:
            if not isinstance(sys.exc_info()[1], ConnectionError):
                report(request, client_address)

        httpd.handle_error = handle_error  # type: ignore[method-assign]

    def request_should_carry_turn(self, index: int, question: str, answer: str) -> None:
        """Fail unless request ``index`` carries ``question`` then ``answer`` as an earlier turn.

        The user message with ``question`` must come before the assistant message with
        ``answer``, and both before the request's last user message (the current question).
        """
        messages = self._request(int(index))
        roles = [(m.get("role"), _text(m)) for m in messages]
        users = [i for i, (role, _) in enumerate(roles) if role == "user"]
        asked = [i for i in users if question in roles[i][1]]
        answered = [
            i for i, (role, text) in enumerate(roles) if role == "assistant" and answer in text
        ]
        if not asked or not answered or not users:
            msg = (
                f"request {index} does not carry the turn {question!r} → {answer!r}: "
                f"{json.dumps(roles, indent=1)}"
            )
            raise AssertionError(msg)
        if not asked[0] < answered[0] < users[-1]:
            msg = (
                f"request {index} carries the turn out of order (question at {asked[0]}, "
                f"answer at {answered[0]}, current question at {users[-1]}): "
                f"{json.dumps(roles, indent=1)}"
            )
            raise AssertionError(msg)

    def last_user_message(self, index: int) -> str:
        """The text of the last user message of request ``index`` (the current question)."""
        users = [_text(m) for m in self._request(int(index)) if m.get("role") == "user"]
        if not users:
            msg = f"request {index} has no user message"
            raise AssertionError(msg)
        return users[-1]

    def parse_report(self, stdout: str) -> dict[str, Any]:
        """The JSON report ``leanloop run --json`` printed."""
        value = json.loads(stdout)
        if not isinstance(value, dict):
            msg = f"--json printed {type(value).__name__}, not an object"
            raise AssertionError(msg)
        return value

    def _request(self, index: int) -> list[dict[str, Any]]:
        requests = self._server().requests
        if not 1 <= index <= len(requests):
            msg = f"the scripted server received {len(requests)} requests, not {index}"
            raise AssertionError(msg)
        return list(requests[index - 1].get("messages", []))

    def _server(self) -> ScriptedOpenAIServer:
        # The suite's ServerLibrary instance holds the running server; its own accessor
        # fails with the reason when none runs.
        library = BuiltIn().get_library_instance("ServerLibrary")
        server: ScriptedOpenAIServer = library._server()
        return server


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""
