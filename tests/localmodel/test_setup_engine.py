"""``leanloop local setup`` and the engine: check the wheel, or build; record the choice."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.engine import recorded_engine
from leanloop.localmodel.install import SetupOptions, setup_local_model
from leanloop.localmodel.paths import CachePaths


def _no_download(requirements: Sequence[str], dest: Path, *, no_binary: str | None = None) -> None:
    raise AssertionError(f"nothing should be downloaded: {list(requirements)}")


def _verified_model(paths: CachePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    from leanloop.localmodel import install  # noqa: PLC0415

    monkeypatch.setattr(install, "assemble_model", lambda target, **_: False)


def test_setup_checks_the_prebuilt_engine_and_records_it(
    paths: CachePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    _verified_model(paths, monkeypatch)
    checks: list[str] = []
    options = SetupOptions(download=_no_download, prebuilt_check=lambda: checks.append("x"))
    result = setup_local_model(paths, options=options)
    assert checks == ["x"]
    assert result.engine == "prebuilt" and not result.built
    assert result.server.startswith("prebuilt (xllamacpp ")
    assert recorded_engine(paths) == "prebuilt"
    assert not paths.bin_dir.exists()  # nothing compiled


def test_where_the_wheel_cannot_run_setup_fails_first_and_offers_the_build(
    paths: CachePaths,
) -> None:
    options = SetupOptions(download=_no_download, prebuilt_check=lambda: "no wheel here")
    with pytest.raises(LocalModelError) as caught:
        setup_local_model(paths, options=options)
    assert "(no wheel here)" in str(caught.value)
    assert "`leanloop local setup --build`" in str(caught.value)
    assert recorded_engine(paths) is None


def test_a_recorded_build_is_kept_by_a_plain_setup(
    paths: CachePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leanloop.localmodel import install  # noqa: PLC0415

    _verified_model(paths, monkeypatch)
    monkeypatch.setattr(install, "is_runnable", lambda binary: True)
    setup_local_model(paths, options=SetupOptions(engine="build", download=_no_download))
    assert recorded_engine(paths) == "build"

    def unexpected() -> str | None:
        raise AssertionError("the prebuilt engine should not be checked")

    options = SetupOptions(download=_no_download, prebuilt_check=unexpected)
    result = setup_local_model(paths, options=options)
    assert result.engine == "build" and result.server == f"build ({paths.server_binary})"


def _leanloop(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leanloop", *args], capture_output=True, text=True, check=False
    )


@pytest.mark.usefixtures("broken_xllamacpp")
def test_the_cli_says_in_one_line_that_the_wheel_cannot_run(paths: CachePaths) -> None:
    result = _leanloop("local", "setup")
    assert result.returncode == 1, result
    assert result.stderr.splitlines() == [
        "error: the prebuilt llama.cpp engine cannot run here (xllamacpp did not load: "
        "ImportError: libgomp.so.1: cannot open shared object file: No such file or "
        "directory); build llama-server from source instead: `leanloop local setup --build` "
        "(needs cmake, make and a C++ compiler; minutes, once)"
    ]
    assert not paths.models_dir.exists()  # failed before any download


@pytest.mark.parametrize(
    "args",
    [["--engine", "gpu"], ["--build", "--engine", "prebuilt"]],
    ids=["unknown", "both"],
)
def test_the_cli_refuses_a_bad_engine_choice(args: list[str], paths: CachePaths) -> None:
    result = _leanloop("local", "setup", *args)
    assert result.returncode == 2, result
    assert "--engine" in result.stderr


def test_start_takes_the_engine_option(paths: CachePaths) -> None:
    result = _leanloop("local", "start", "--engine", "build", "--port", "1")
    assert result.returncode == 1, result
    assert result.stderr.strip() == (
        f"error: {paths.server_binary} is missing: run `leanloop local setup --build` first"
    )
