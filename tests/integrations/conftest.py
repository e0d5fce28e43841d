"""Fixtures of the integration tests (helpers: ``support.py``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .support import Repo, driver_program_args, run_cli


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig-global"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    """A fresh repository on ``main`` with the merge driver set up through the real command."""
    root = tmp_path / "repo"
    root.mkdir()
    r = Repo(root)
    r.git("init", "-q", "-b", "main")
    r.git("config", "user.name", "Test Person")
    r.git("config", "user.email", "test@example.invalid")
    r.git("config", "commit.gpgsign", "false")
    setup = run_cli(["git-setup", "-C", str(root), *driver_program_args()])
    assert setup.returncode == 0, setup.stderr.decode()
    (root / "README.md").write_text("project\n")
    r.commit_all("start")
    yield r


@pytest.fixture
def env_home(tmp_path: Path) -> dict[str, str]:
    """An environment with a private HOME and MAESTRO_HOME (for subprocesses)."""
    home = tmp_path / "userhome"
    home.mkdir()
    env = dict(os.environ)
    env["HOME"] = str(home)
    env["MAESTRO_HOME"] = str(tmp_path / "maestro-home")
    return env
