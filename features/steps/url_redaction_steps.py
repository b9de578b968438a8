"""Steps for features/cli/url_redaction.feature: a model URL's credentials never shown.

The model's ``base_url`` holds a password and a query key; a fake model server on
127.0.0.1 is behind it (it answers every chat request with an error, since the query
spoils the request's path), and every command that shows or logs the URL runs in this
process (support/cli_inprocess.py).
"""

from __future__ import annotations

from pathlib import Path

from behave import given, then, when
from behave.runner import Context
from support.cli_inprocess import run_cli

from leanloop.testing.server import FakeModelServer, http_error

PASSWORD = "hunter2-redaction-pw"  # the secrets the scenarios look for
QUERY_KEY = "qk-redaction-0123456789"

# A model class that cannot be built, and says so with its base_url (as pydantic's and the
# providers' validators do), for `validate --check-models`.
_BROKEN_MODEL = """
from pydantic import model_validator

from leanloop.testing import ScriptedChatModel


class UnreachableChatModel(ScriptedChatModel):
    base_url: str = ""

    @model_validator(mode="after")
    def _refuse(self):
        raise ValueError(f"cannot reach {self.base_url}")
"""


@given("a model server behind a URL with a password and a query key")
def step_secret_url(context: Context) -> None:
    server = FakeModelServer(replies=[http_error(500, "the model is down")] * 20)
    server.start()
    context.cleanups.append(server.stop)
    host = server.base_url.removeprefix("http://").removesuffix("/v1")
    context.secret_url = f"http://alice:{PASSWORD}@{host}/v1?api_key={QUERY_KEY}"
    context.shown_url = f"http://alice:***@{host}/v1?api_key=***"
    url = f'"{context.secret_url}"'
    _agents_file(context, {"provider": "openai-compatible", "model": "m", "base_url": url})
    (context.tmp / "unreachable.py").write_text(_BROKEN_MODEL, encoding="utf-8")
    broken = {"class": "unreachable:UnreachableChatModel", "base_url": url}
    _agents_file(context, broken, name="broken.yaml")


@when('leanloop chat "{command}" reads the lines "{lines}" in this process')
def step_chat_lines(context: Context, command: str, lines: str) -> None:
    stdin = "".join(f"{line}\n" for line in lines.split("|")).encode()
    context.cli = run_cli(command.split(), context.tmp, stdin=stdin)


@then("the CLI output shows the model URL without its password and query key")
def step_shown_redacted(context: Context) -> None:
    output = context.cli.stdout + context.cli.stderr
    _no_secret(output)
    assert context.shown_url in output, f"{context.shown_url!r} not in:\n{output}"


@then("the CLI output has neither the password nor the query key of the model URL")
def step_no_secret(context: Context) -> None:
    _no_secret(context.cli.stdout + context.cli.stderr)


@then('the page "{name}" has neither the password nor the query key of the model URL')
def step_page_no_secret(context: Context, name: str) -> None:
    page = (context.tmp / name).read_text(encoding="utf-8")
    _no_secret(page)
    assert "alice:***@" in page, "the page does not show the (redacted) server"


def _agents_file(context: Context, model: dict[str, str], *, name: str = "agents.yaml") -> None:
    lines = ["version: 1", "models:", "  main:"]
    lines += [f"    {key}: {value}" for key, value in model.items()]
    lines += ["agents:", "  a:", "    model: main", "    max_rounds: 2"]
    Path(context.tmp / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _no_secret(text: str) -> None:
    for secret in (PASSWORD, QUERY_KEY):
        assert secret not in text, f"{secret!r} shown in:\n{text}"
