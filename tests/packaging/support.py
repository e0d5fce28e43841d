"""The package as a user gets it: the built sdist and wheel, and a copy installed from the wheel.

* ``build_dists(out)`` runs ``python -m build`` on this checkout: the sdist, then the wheel
  built *from the sdist* (what pip, pipx and uv do with a source tree).
* ``expected_wheel_files()`` is what the wheel must hold, read from the checkout's folders
  without asking the build: every file of every top-level folder that is a package
  (``core/`` → ``maestro_memory/core/``), caches aside. A new subpackage or data file that the
  build misses makes the two differ.
* ``make_installed_venv(wheel, dest)`` makes a virtualenv outside the checkout and installs the
  wheel with the ``ui`` and ``mcp`` extras, as the README tells a user to.

CI builds once and installs once (``.ci/run``) and names the results in ``MAESTRO_DIST_DIR``
and ``MAESTRO_INSTALLED_VENV``; without them the fixtures in ``conftest.py`` do it themselves,
once per test session.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "maestro_memory"
DIST_ENV = "MAESTRO_DIST_DIR"
VENV_ENV = "MAESTRO_INSTALLED_VENV"
# Top-level folders with an __init__.py that are not shipped: the benchmark runs from a checkout.
NOT_SHIPPED = frozenset({"bench", "tests", "tools"})
CACHE_PARTS = frozenset({"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})
BUILD_TIMEOUT = 600.0
INSTALL_TIMEOUT = 900.0


def project_version() -> str:
    """The version pyproject.toml declares (the one source of it)."""
    import tomllib

    with (REPO / "pyproject.toml").open("rb") as fh:
        return str(tomllib.load(fh)["project"]["version"])


def distribution_name() -> str:
    import tomllib

    with (REPO / "pyproject.toml").open("rb") as fh:
        return str(tomllib.load(fh)["project"]["name"])


def shipped_roots() -> list[str]:
    """Top-level folders of the checkout that are packages (hold an ``__init__.py``)."""
    return sorted(
        child.name
        for child in REPO.iterdir()
        if child.is_dir() and (child / "__init__.py").is_file() and child.name not in NOT_SHIPPED
    )


def expected_wheel_files() -> set[str]:
    found: set[str] = set()
    for root in shipped_roots():
        for path in (REPO / root).rglob("*"):
            rel = path.relative_to(REPO)
            if not path.is_file() or CACHE_PARTS & set(rel.parts) or path.suffix == ".pyc":
                continue
            found.add(f"{PACKAGE}/{rel.as_posix()}")
    return found


def wheel_files(wheel: Path) -> set[str]:
    """The wheel's files, its ``.dist-info`` metadata aside."""
    with zipfile.ZipFile(wheel) as zf:
        return {n for n in zf.namelist() if ".dist-info/" not in n and not n.endswith("/")}


def wheel_digests(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as zf:
        return {
            name: hashlib.sha256(zf.read(name)).hexdigest()
            for name in zf.namelist()
            if not name.endswith(("/", ".dist-info/RECORD"))
        }


def build_dists(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), *extra, str(REPO)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"python -m build failed:\n{done.stdout}\n{done.stderr}"
    return done


def only(folder: Path, pattern: str) -> Path:
    matches = sorted(folder.glob(pattern))
    assert len(matches) == 1, f"expected one {pattern} in {folder}, found {matches}"
    return matches[0]


def make_installed_venv(wheel: Path, dest: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(dest)
    pip = dest / "bin" / "pip"
    done = subprocess.run(
        [str(pip), "install", "-q", f"{wheel}[ui,mcp]"],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        stdin=subprocess.DEVNULL,
        cwd=dest,
    )
    assert done.returncode == 0, f"pip install of the wheel failed:\n{done.stderr[-4000:]}"
    return dest


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a process of the installed copy: nothing of the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env.update(extra)
    return env
