"""Steps for cli_hardening.feature: bytes that are not UTF-8, usage errors, --html, cut streams.

The CLI runs in a subprocess, as a user runs it. Bytes that are not UTF-8 are written
``\\xNN`` in a step's text: in a word of the command line each becomes the raw byte on the
child's ``argv`` (Python hands it to ``subprocess`` as the surrogate ``surrogateescape``
decodes it to), in a chat line the raw byte on its stdin. ``the CLI runs``, ``exits
with``, ``stderr is one line that starts`` and the scripted-server steps come from the
other step files.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

from behave import then, when
from behave.runner import Context

from leanloop.cli.command import PARTIAL_MARK

_BYTE = re.compile(r"\\x([0-9a-fA-F]{2})")
_CLI_TIMEOUT_S = 120


def _as_argv_word(word: str) -> str:
    """``word`` with each ``\\xNN`` as the character ``os.fsencode`` turns into byte NN."""

    def char(match: re.Match[str]) -> str:
        value = int(match[1], 16)
        return chr(0xDC00 + value if value >= 0x80 else value)

    return _BYTE.sub(char, word)


def _as_bytes(text: str) -> bytes:
    """``text`` as UTF-8, each ``\\xNN`` as the raw byte NN."""
    parts = _BYTE.split(text)
    out = bytearray()
    for index, part in enumerate(parts):
        out += bytes([int(part, 16)]) if index % 2 else part.encode("utf-8")
    return bytes(out)


def _run(context: Context, argv: list[str], stdin: bytes = b"") -> None:
    done = subprocess.run(
        [sys.executable, "-m", "leanloop", *argv],
        cwd=context.tmp,
        input=stdin,
        capture_output=True,
        timeout=_CLI_TIMEOUT_S,
        check=False,
    )
    # The other CLI steps read text; what the CLI wrote must be UTF-8 (replacement shows).
    context.cli = subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", errors="replace"),
        done.stderr.decode("utf-8", errors="replace"),
    )


@when('the CLI runs "{command}" with each \\xNN as that raw byte')
def step_cli_raw(context: Context, command: str) -> None:
    _run(context, [_as_argv_word(word) for word in shlex.split(command)])


@when('the CLI chat "{command}" is sent the raw lines "{lines}"')
def step_chat_raw(context: Context, command: str, lines: str) -> None:
    stdin = b"".join(_as_bytes(line) + b"\n" for line in lines.split("|"))
    _run(context, shlex.split(command), stdin)


@then('the CLI stdout is one JSON error object mentioning "{text}"')
def step_json_error(context: Context, text: str) -> None:
    try:
        data = json.loads(context.cli.stdout)
    except ValueError as exc:
        raise AssertionError(f"stdout is no JSON ({exc}): {context.cli.stdout!r}") from None
    assert data == {"answer": None, "stop_reason": "failed", "error": data.get("error")}, data
    assert text in data["error"] and "\n" not in data["error"], data["error"]


@then("the CLI stdout is empty")
def step_stdout_empty(context: Context) -> None:
    assert context.cli.stdout == "", context.cli.stdout


@then("the CLI stdout ends with the line that marks the text above as no answer")
def step_partial_mark(context: Context) -> None:
    lines = context.cli.stdout.splitlines()
    assert lines and lines[-1] == PARTIAL_MARK, context.cli.stdout
    assert context.cli.stdout.endswith("\n"), repr(context.cli.stdout)
