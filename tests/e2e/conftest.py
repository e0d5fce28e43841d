"""Fixtures of the end-to-end tests: real agent CLIs, a real daemon, stand-in model APIs.

* ``maestro_project`` -- a temporary git project with ``.maestro/`` created by ``maestroctl
  init`` and registered with the test's daemon (``daemon``: the installed copy's maestrod when
  ``$MAESTRO_INSTALLED_VENV`` names one, as CI does, else this checkout's).
* ``fake_anthropic`` / ``fake_openai`` / ``fake_gemini`` -- the stand-ins, recording every
  request (also to ``<tmp>/<name>-requests.jsonl`` for a look after a failure).
* ``claude`` / ``codex`` / ``gemini`` -- an ``Agent`` for that CLI with its own temporary HOME
  (``agent.run(prompt) -> Run``); skipped with the reason when the CLI is not installed, failed
  instead when ``MAESTRO_E2E_REQUIRED=1`` (CI sets it: there the CLIs must run).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle

from .agents import (
    ClaudeAgent,
    CodexAgent,
    GeminiAgent,
    find_cli,
    installed_python,
    maestroctl,
)
from .fake_anthropic import FakeAnthropic
from .fake_gemini import FakeGemini
from .fake_openai import FakeOpenAI

REQUIRED_ENV = "MAESTRO_E2E_REQUIRED"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


def cli_or_skip(name: str) -> str:
    path, reason = find_cli(name)
    if path is None:
        if os.environ.get(REQUIRED_ENV) == "1":
            pytest.fail(f"{REQUIRED_ENV}=1 but {reason}")
        pytest.skip(reason)
    return path


def run_maestroctl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [maestroctl(), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"maestroctl {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


@pytest.fixture
def daemon(daemon_factory: DaemonFactory) -> DaemonHandle:
    """The test's maestrod: the installed copy's when CI installed the wheel (the CLIs' hooks
    then talk to the daemon a user would run), else this checkout's."""
    return daemon_factory(python=installed_python())


@pytest.fixture
def git_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "E2E Person"],
        ["config", "user.email", "e2e@example.invalid"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    (root / "README.md").write_text("An e2e test project.\n")
    return root


@pytest.fixture
def maestro_project(git_project: Path, daemon: object) -> Path:
    """The git project with Maestro Memory set up and registered with the running daemon."""
    run_maestroctl("-C", str(git_project), "init")
    run_maestroctl("-C", str(git_project), "register")
    return git_project


def _home(tmp_path: Path, name: str) -> Path:
    home = tmp_path / f"home-{name}"
    home.mkdir()
    return home


@pytest.fixture
def fake_anthropic(tmp_path: Path) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(tmp_path / "anthropic-requests.jsonl") as api:
        yield api  # type: ignore[misc]


@pytest.fixture
def fake_openai(tmp_path: Path) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(tmp_path / "openai-requests.jsonl") as api:
        yield api  # type: ignore[misc]


@pytest.fixture
def fake_gemini(tmp_path: Path) -> Iterator[FakeGemini]:
    with FakeGemini(tmp_path / "gemini-requests.jsonl") as api:
        yield api  # type: ignore[misc]


@pytest.fixture
def claude(tmp_path: Path, git_project: Path, fake_anthropic: FakeAnthropic) -> ClaudeAgent:
    return ClaudeAgent(
        cli_or_skip("claude"), _home(tmp_path, "claude"), git_project, fake_anthropic
    )


@pytest.fixture
def codex(tmp_path: Path, git_project: Path, fake_openai: FakeOpenAI) -> CodexAgent:
    agent = CodexAgent(cli_or_skip("codex"), _home(tmp_path, "codex"), git_project, fake_openai)
    agent.write_config()
    return agent


@pytest.fixture
def gemini(tmp_path: Path, git_project: Path, fake_gemini: FakeGemini) -> GeminiAgent:
    agent = GeminiAgent(cli_or_skip("gemini"), _home(tmp_path, "gemini"), git_project, fake_gemini)
    agent.write_config()
    return agent
