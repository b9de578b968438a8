"""import_object(..., near=folder): modules beside an agents file, imported in isolation.

A module found only in the agents file's folder is imported without leaving the folder on
``sys.path`` or the module in ``sys.modules``; each folder keeps its own modules, so two
folders with a ``mytools.py`` each never see each other's (issue 28).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from leanloop._imports import ImportPathError, import_object


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def _modules_under(folder: Path) -> list[str]:
    root = str(folder)
    return [
        name
        for name, module in list(sys.modules.items())
        if str(getattr(module, "__file__", None) or "").startswith(root)
    ]


@pytest.fixture
def tenants(tmp_path: Path) -> tuple[Path, Path]:
    def tenant(name: str) -> Path:
        return _write(
            tmp_path / name,
            {
                "helpers.py": f"WHO = {name!r}\n",
                "mytools.py": """
                    from helpers import WHO


                    def lookup(code: str) -> str:
                        return f"{WHO}: {code}"
                """,
            },
        )

    return tenant("tenant_a"), tenant("tenant_b")


def test_each_folder_gets_its_own_module_and_the_process_is_left_as_it_was(
    tenants: tuple[Path, Path],
) -> None:
    path_before = list(sys.path)
    first, second = (import_object("mytools:lookup", near=folder) for folder in tenants)
    assert (first("X"), second("X")) == ("tenant_a: X", "tenant_b: X")
    assert sys.path == path_before
    assert not _modules_under(tenants[0].parent)


def test_a_folder_module_is_imported_once(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "once",
        {
            "counted.py": """
                from pathlib import Path

                with open(Path(__file__).with_name("imports.log"), "a") as log:
                    log.write("imported\\n")


                def tool() -> str:
                    return "ok"
            """
        },
    )
    first = import_object("counted:tool", near=folder)
    again = import_object("counted:tool", near=folder)
    assert first is again
    assert (folder / "imports.log").read_text().splitlines() == ["imported"]


def test_a_package_beside_the_file_imports_its_own_submodules(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "pkg_tenant",
        {
            "mypkg/__init__.py": "",
            "mypkg/util.py": "PREFIX = 'from util'\n",
            "mypkg/tools.py": """
                from mypkg.util import PREFIX


                def lookup(code: str) -> str:
                    return f"{PREFIX}: {code}"
            """,
        },
    )
    assert import_object("mypkg.tools:lookup", near=folder)("X") == "from util: X"
    assert not _modules_under(folder)


def test_a_module_on_the_python_path_wins_over_one_in_the_folder(tmp_path: Path) -> None:
    folder = _write(tmp_path / "shadow", {"textwrap.py": "def dedent(text):\n    return 'mine'\n"})
    assert import_object("textwrap:dedent", near=folder) is textwrap.dedent


def test_a_module_that_fails_on_import_leaves_the_process_as_it_was(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "broken",
        {"fine.py": "X = 1\n", "failing.py": "import fine\nraise RuntimeError('no')\n"},
    )
    path_before = list(sys.path)
    with pytest.raises(ImportPathError, match="importing module 'failing' failed: RuntimeError"):
        import_object("failing:X", near=folder)
    assert sys.path == path_before
    assert not _modules_under(folder)


def test_a_missing_module_says_where_it_was_looked_for(tmp_path: Path) -> None:
    with pytest.raises(ImportPathError) as raised:
        import_object("nothere.tools:lookup", near=tmp_path)
    assert str(raised.value) == (
        "cannot import module 'nothere.tools' (No module named 'nothere'); "
        f"looked in {tmp_path} and the Python path"
    )


def test_a_pydantic_model_with_a_forward_reference_is_complete(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "schemas",
        {
            "answers.py": """
                from pydantic import BaseModel


                class Answer(BaseModel):
                    meaning: "Meaning"


                class Meaning(BaseModel):
                    text: str
                    detail: "Detail | None" = None


                class Detail(BaseModel):
                    note: str
            """
        },
    )
    answer = import_object("answers:Answer", near=folder)
    assert answer.model_validate({"meaning": {"text": "t"}}).model_dump() == {
        "meaning": {"text": "t", "detail": None}
    }
    # The module's other models are finished too, for code that uses them on their own.
    meaning = answer.model_fields["meaning"].annotation
    assert meaning.model_validate({"text": "t", "detail": {"note": "n"}}).detail.note == "n"
