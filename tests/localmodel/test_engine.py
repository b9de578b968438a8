"""Choosing the llama.cpp engine (ADR 0033): explicit, LEANLOOP_ENGINE, the cache, prebuilt."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from leanloop.exceptions import LocalModelError
from leanloop.localmodel import engine as engine_module
from leanloop.localmodel.engine import (
    DEFAULT_ENGINE,
    ENGINE_ENV,
    choose_engine,
    engine_label,
    parse_engine,
    prebuilt_command,
    prebuilt_problem,
    record_engine,
    recorded_engine,
    unavailable_message,
)
from leanloop.localmodel.paths import CachePaths


def test_the_default_engine_is_the_prebuilt_wheel(paths: CachePaths) -> None:
    assert DEFAULT_ENGINE == "prebuilt"
    assert choose_engine(None, paths, env={}) == "prebuilt"


def test_the_cache_record_beats_the_default(paths: CachePaths) -> None:
    record_engine(paths, "build")
    assert paths.engine_file.read_text(encoding="utf-8") == "build\n"
    assert recorded_engine(paths) == "build"
    assert choose_engine(None, paths, env={}) == "build"


def test_the_environment_beats_the_cache_record(paths: CachePaths) -> None:
    record_engine(paths, "build")
    assert choose_engine(None, paths, env={ENGINE_ENV: " Prebuilt "}) == "prebuilt"


def test_an_explicit_engine_beats_the_environment(paths: CachePaths) -> None:
    assert choose_engine("build", paths, env={ENGINE_ENV: "prebuilt"}) == "build"


def test_an_unknown_engine_in_the_environment_is_one_error_naming_it(paths: CachePaths) -> None:
    with pytest.raises(LocalModelError) as caught:
        choose_engine(None, paths, env={ENGINE_ENV: "gpu"})
    assert str(caught.value) == (
        "unknown engine 'gpu' in LEANLOOP_ENGINE; known engines: prebuilt, build"
    )


def test_an_unknown_explicit_engine_is_refused() -> None:
    with pytest.raises(LocalModelError, match="unknown engine 'fast' in --engine"):
        parse_engine("fast")


def test_an_unreadable_record_is_ignored(paths: CachePaths) -> None:
    paths.root.mkdir(parents=True)
    paths.engine_file.write_text("rocket\n", encoding="utf-8")
    assert recorded_engine(paths) is None
    assert choose_engine(None, paths, env={}) == "prebuilt"


def test_recording_leaves_no_temporary_file(paths: CachePaths) -> None:
    record_engine(paths, "prebuilt")
    record_engine(paths, "build")
    assert sorted(p.name for p in paths.root.iterdir()) == ["engine"]


def test_the_prebuilt_engine_runs_this_interpreter_with_the_child_module() -> None:
    assert prebuilt_command() == [sys.executable, "-m", "leanloop.localmodel.prebuilt"]


def test_the_labels_name_the_wheel_and_version_or_the_binary(paths: CachePaths) -> None:
    assert engine_label("build", paths) == f"build ({paths.server_binary})"
    assert engine_label("build", paths, Path("/opt/ls")) == "build (/opt/ls)"
    version = engine_module.prebuilt_version()
    assert engine_label("prebuilt", paths) == f"prebuilt (xllamacpp {version})"


def test_without_the_wheel_the_problem_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "prebuilt_installed", lambda: False)
    problem = prebuilt_problem()
    assert problem == "the xllamacpp wheel is not installed (none is built for this system)"


@pytest.mark.usefixtures("broken_xllamacpp")
def test_a_wheel_that_does_not_load_names_the_import_error() -> None:
    problem = prebuilt_problem()
    assert problem == (
        "xllamacpp did not load: ImportError: libgomp.so.1: cannot open shared object "
        "file: No such file or directory"
    )


@pytest.mark.usefixtures("fake_xllamacpp")
def test_a_wheel_that_loads_is_no_problem() -> None:
    assert prebuilt_problem() is None


def test_the_unavailable_message_is_one_line_that_offers_the_build() -> None:
    message = unavailable_message("no wheel")
    assert "\n" not in message
    assert message.startswith("the prebuilt llama.cpp engine cannot run here (no wheel); ")
    assert "`leanloop local setup --build`" in message
