"""Package discovery for the build (setuptools reads everything else from pyproject.toml).

The import package ``maestro_memory`` is assembled from top-level folders of the checkout
(``core/`` is ``maestro_memory.core``, ...). pyproject.toml cannot say "every package under a
mapped folder", and a hand-kept list once missed ``client/commands/``, so the list is found here:
every folder under a root that holds an ``__init__.py`` is a package, and every file in a package
folder that is not Python source (service templates, the viewer's static files) is package data.
``tests/packaging`` compares the built wheel with these folders.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
ROOTS = ("core", "daemon", "client", "common", "systemd", "launchd", "ui")
PREFIX = "maestro_memory"
SKIP_SUFFIXES = {".py", ".pyc", ".pyo"}


def _data_files(folder: Path) -> list[str]:
    """Every non-source file under a package folder, relative to it (subfolders that are not
    packages themselves, such as ``ui/static``, included)."""
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or "__pycache__" in rel.parts or path.suffix in SKIP_SUFFIXES:
            continue
        parents = (folder / Path(*rel.parts[:i]) for i in range(1, len(rel.parts)))
        if any((parent / "__init__.py").is_file() for parent in parents):
            continue  # it belongs to a subpackage, which lists it itself
        found.append(rel.as_posix())
    return found


packages: list[str] = []
package_dir: dict[str, str] = {}
package_data: dict[str, list[str]] = {}
for root in ROOTS:
    for sub in ["", *find_packages(str(HERE / root))]:
        name = f"{PREFIX}.{root}" + (f".{sub}" if sub else "")
        packages.append(name)
        folder = HERE / root / Path(*sub.split(".")) if sub else HERE / root
        data = _data_files(folder)
        if data:
            package_data[name] = data
    package_dir[f"{PREFIX}.{root}"] = root

setup(packages=packages, package_dir=package_dir, package_data=package_data)
