"""``python -m build`` prints no "Package would be ignored" warnings (issue 29, item 9).

setuptools warns for each folder under the package that Python could import (its name is
an identifier) but that the ``packages`` configuration leaves out: the demo's
``examples/`` folders, which are data. This test asks the same question of the
configuration in pyproject.toml, without building (a build needs a newer setuptools
than the test environment may have, and takes seconds).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, find_packages

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]


def _configured_packages() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found = config["tool"]["setuptools"]["packages"]["find"]
    where = ROOT / found["where"][0]
    finder = find_namespace_packages if found.get("namespaces", True) else find_packages
    return set(finder(where=str(where), include=found.get("include", ["*"])))


def _importable_folders() -> set[str]:
    """Every folder of the package whose dotted name Python could import."""
    source = ROOT / "src"
    names = set()
    for folder in (source / "leanloop").rglob("*"):
        parts = folder.relative_to(source).parts
        if folder.is_dir() and "__pycache__" not in parts and all(p.isidentifier() for p in parts):
            names.add(".".join(parts))
    return names | {"leanloop"}


def test_every_importable_folder_is_a_configured_package() -> None:
    missing = _importable_folders() - _configured_packages()

    assert not missing, f"setuptools would warn 'Package would be ignored' for {sorted(missing)}"


def test_the_demo_data_is_still_shipped_as_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["leanloop"]

    assert {"examples/*.yaml", "examples/workspace/**/*", "spec/*.json"} <= set(patterns)
