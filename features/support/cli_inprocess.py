"""The ``leanloop`` CLI called in this process, as ``leanloop.cli.main(argv)`` (issue 26).

Starting ``python -m leanloop`` costs a fresh interpreter, its imports (LangChain: about a
second) and, under coverage, a second measurement; the scenarios that only read what the
CLI prints and its exit status get the same from :func:`run_cli` in a few milliseconds. What
a real process is the point of (signals, what a fresh interpreter imports, raw bytes on
``argv``, a hanging tool's thread at exit) keeps its subprocess in its own steps.

For the length of one call the process looks as a child's would: the working folder, the
program's ``argv``, standard streams of its own (UTF-8 text over bytes, not a terminal),
and afterwards the logging setup, ``sys.path`` and the working folder are as they were.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["logging_kept", "run_cli"]


class _Stream(io.TextIOWrapper):
    """A standard stream over bytes that is no terminal, like a pipe's."""

    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="strict", newline=None)

    def text(self) -> str:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue().decode("utf-8", errors="replace")


@contextlib.contextmanager
def logging_kept() -> Iterator[None]:
    """The root logger's handlers and level and the ``leanloop`` logger's level, as they
    were: the CLI sets them up (``basicConfig(force=True)``, ``-q``/``-v``) in-process."""
    root = logging.getLogger()
    ours = logging.getLogger("leanloop")
    handlers, level, our_level, disabled = (
        list(root.handlers),
        root.level,
        ours.level,
        ours.disabled,
    )
    try:
        yield
    finally:
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        for handler in handlers:
            if handler not in root.handlers:
                root.addHandler(handler)
        root.setLevel(level)
        ours.setLevel(our_level)
        ours.disabled = disabled


@contextlib.contextmanager
def _as_a_child(cwd: Path, argv: Sequence[str], stdin: bytes) -> Iterator[tuple[_Stream, _Stream]]:
    """The process state a child would have, restored afterwards."""
    out, err = _Stream(), _Stream()
    saved = (sys.stdin, sys.stdout, sys.stderr, sys.argv, list(sys.path), Path.cwd())
    sys.stdin, sys.stdout, sys.stderr = _Stream(stdin), out, err
    sys.argv = [str(Path(sys.executable).parent / "leanloop"), *argv]
    os.chdir(cwd)
    try:
        with logging_kept():
            yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved[:4]
        sys.path[:] = saved[4]
        os.chdir(saved[5])


def run_cli(
    argv: Sequence[str], cwd: Path, *, stdin: bytes = b"", path: Sequence[Path] = ()
) -> subprocess.CompletedProcess[str]:
    """Run ``leanloop ARGV`` in this process from ``cwd``; what a subprocess would return.

    Args:
        argv: The words after ``leanloop``.
        cwd: The working folder of the call.
        stdin: What the CLI reads on its standard input.
        path: Folders put first on ``sys.path`` for the call, as ``PYTHONPATH`` would.

    Returns:
        The exit status and the text written to stdout and stderr.
    """
    from leanloop.cli import main  # noqa: PLC0415 - after the steps' own imports

    with _as_a_child(cwd, argv, stdin) as (out, err):
        sys.path[:0] = [str(folder) for folder in path]
        try:
            code = main(list(argv))
        except SystemExit as exc:  # --help, --version: argparse's own exit
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return subprocess.CompletedProcess(["leanloop", *argv], code, out.text(), err.text())
