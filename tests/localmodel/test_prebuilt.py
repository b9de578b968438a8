"""The prebuilt engine's child: llama-server's flags onto xllamacpp's parameters (ADR 0033)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from leanloop.localmodel.paths import CachePaths
from leanloop.localmodel.prebuilt import ServeArgs, configure, parse_args
from leanloop.localmodel.server import TEMPLATE_FILE, ServerOptions, server_command


def _params() -> SimpleNamespace:
    """xllamacpp's CommonParams fields leanloop sets, at llama.cpp's defaults."""
    return SimpleNamespace(
        model=SimpleNamespace(path=""), hostnames=["127.0.0.1"], port=0, n_ctx=0,
        n_parallel=1, ui=True, model_alias=set(), use_jinja=True, chat_template="",
        offline=False,
    )  # fmt: skip


def _flags(options: ServerOptions, paths: CachePaths) -> list[str]:
    command = server_command(options, paths, engine="prebuilt")
    assert command[1:3] == ["-m", "leanloop.localmodel.prebuilt"], command
    return command[3:]


def test_the_server_command_flags_parse_into_what_llama_server_gets(tmp_path: Path) -> None:
    paths = CachePaths(tmp_path)
    args = parse_args(_flags(ServerOptions(port=9123, ctx_size=3072), paths))
    assert args == ServeArgs(
        model=paths.model_file, host="127.0.0.1", port=9123, ctx_size=3072, parallel=1,
        ui=False, alias="local-test", jinja=True, template_file=TEMPLATE_FILE,
    )  # fmt: skip


def test_without_the_template_jinja_and_the_template_stay_llama_cpp_defaults(
    tmp_path: Path,
) -> None:
    args = parse_args(_flags(ServerOptions(template=False), CachePaths(tmp_path)))
    assert args is not None
    assert args.jinja is None and args.template_file is None


def test_configure_sets_every_field_and_the_template_text(tmp_path: Path) -> None:
    args = parse_args(_flags(ServerOptions(port=9123, ctx_size=2048), CachePaths(tmp_path)))
    assert args is not None
    params = _params()
    configure(params, args, template="{{ messages }}")
    assert params.model.path == str(CachePaths(tmp_path).model_file)
    assert (params.hostnames, params.port, params.n_ctx) == (["127.0.0.1"], 9123, 2048)
    assert (params.n_parallel, params.ui, params.model_alias) == (1, False, {"local-test"})
    assert (params.use_jinja, params.chat_template) == (True, "{{ messages }}")
    assert params.offline is True  # never a model hub


def test_configure_keeps_the_defaults_of_flags_not_given() -> None:
    params = _params()
    configure(params, ServeArgs(model=Path("m.gguf")))
    assert params.model_alias == set() and params.use_jinja is True
    assert params.chat_template == "" and params.ui is True


def test_no_jinja_turns_jinja_off() -> None:
    args = parse_args(["-m", "m.gguf", "--no-jinja"])
    assert args is not None and args.jinja is False


def test_version_needs_no_model() -> None:
    assert parse_args(["--version"]) is None


@pytest.mark.parametrize(
    "argv", [["-m", "m.gguf", "--threads", "4"], ["--port", "9123"]], ids=["unknown", "no-model"]
)
def test_an_unknown_flag_or_no_model_exits_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        parse_args(argv)
    assert caught.value.code == 2
    assert "python -m leanloop.localmodel.prebuilt" in capsys.readouterr().err
