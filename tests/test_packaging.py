"""The package list of pyproject.toml names every package of the source tree, so that `pip install .`
(not only an editable install) ships all of dfir."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_of_the_tree_is_listed():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set()
    for package, directory in setuptools["package-dir"].items():
        for init in (ROOT / directory).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / directory)
            found.add(".".join([package, *relative.parts]))
    nested = {p for p in found if not any(part.startswith(("_", ".")) for part in p.split("."))}
    assert nested - set(setuptools["packages"]) == set()
