"""A package that imports its names lazily (a module ``__getattr__``) still declares them
in ``__all__``: the agents-file check, which reads without importing, takes those names and
refuses the others (leanloop.testing is such a package)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from leanloop._imports import ImportPathError
from leanloop.spec.refs import resolve_reference


def _package(tmp_path: Path, body: str) -> Path:
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "__init__.py").write_text(body, encoding="utf-8")
    (package / "heavy.py").write_text("class Model:\n    pass\n", encoding="utf-8")
    return tmp_path


LAZY = """\
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from lazypkg.heavy import Model
__all__ = ["Model", "Other"]
def __getattr__(name):
    raise AttributeError(name)
"""


def test_a_declared_lazy_name_resolves_and_an_undeclared_one_is_refused(tmp_path: Path) -> None:
    near = _package(tmp_path, LAZY)
    assert resolve_reference("lazypkg:Model", near).binding is not None
    assert resolve_reference("lazypkg:Other", near).binding is None  # made at run time
    with pytest.raises(ImportPathError, match="has no attribute 'Missing'"):
        resolve_reference("lazypkg:Missing", near)


def test_without_a_literal_all_a_getattr_module_may_make_any_name(tmp_path: Path) -> None:
    near = _package(tmp_path, "def __getattr__(name):\n    return name\n")
    assert resolve_reference("lazypkg:Anything", near).binding is None


def test_leanloop_testing_is_checked_by_its_all_and_imports_no_langchain() -> None:
    assert resolve_reference("leanloop.testing:ScriptedChatModel", None).binding is not None
    with pytest.raises(ImportPathError, match="has no attribute 'Missing'"):
        resolve_reference("leanloop.testing:Missing", None)
    code = "import sys, leanloop.testing.server; print('langchain_core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
