"""docs/architecture.md names every package of leanloop, and only packages that exist
(issue 27): a folder with an ``__init__.py`` under src/leanloop is a package, and the
document's package table has a row for it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "leanloop"
DOC = ROOT / "docs" / "architecture.md"

# A row of the package table: "| `budget/` | what it holds |".
_ROW = re.compile(r"^\|\s*`(?P<package>[\w/]+)/`\s*\|", re.MULTILINE)


def _packages() -> set[str]:
    """Each package below ``leanloop``, as its path from there (``budget``, ``tools/x``)."""
    return {
        init.parent.relative_to(SOURCE).as_posix()
        for init in SOURCE.rglob("__init__.py")
        if init.parent != SOURCE and "__pycache__" not in init.parts
    }


def _named() -> set[str]:
    return set(_ROW.findall(DOC.read_text("utf-8")))


def test_the_package_scan_finds_the_known_packages() -> None:
    assert {"agent", "cli", "loop", "budget", "tools"} <= _packages()


def test_the_architecture_document_names_every_package() -> None:
    missing = _packages() - _named()

    assert not missing, f"docs/architecture.md has no row for: {sorted(missing)}"


def test_the_architecture_document_names_no_package_that_is_gone() -> None:
    gone = _named() - _packages()

    assert not gone, f"docs/architecture.md names packages that do not exist: {sorted(gone)}"
