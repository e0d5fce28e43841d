"""Fixtures of the packaging tests: the built distributions and the installed copy.

``dists`` is the folder with the sdist and the wheel (CI's ``$MAESTRO_DIST_DIR``, else built
once per session); ``installed_venv`` the virtualenv with that wheel installed with
``[ui,mcp]`` (CI's ``$MAESTRO_INSTALLED_VENV``, else made once per session, outside the
checkout).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .support import DIST_ENV, VENV_ENV, build_dists, make_installed_venv, only


@pytest.fixture(scope="session")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get(DIST_ENV)
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("dist")
    build_dists(out)
    return out


@pytest.fixture(scope="session")
def wheel(dists: Path) -> Path:
    return only(dists, "*.whl")


@pytest.fixture(scope="session")
def sdist(dists: Path) -> Path:
    return only(dists, "*.tar.gz")


@pytest.fixture(scope="session")
def installed_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get(VENV_ENV)
    if given:
        return Path(given)
    return make_installed_venv(wheel, tmp_path_factory.mktemp("installed") / "venv")
