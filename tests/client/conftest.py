"""Fixtures for the client tests.

``cli`` runs the real ``maestroctl`` in a scrubbed environment: a private ``MAESTRO_HOME``
(the shared ``maestro_home`` fixture), a private ``HOME`` so that service files land in the
test's directory, and no ``MAESTRO_REQUIRE_DAEMON`` from the caller. The daemon itself comes
from the shared ``daemon`` fixture in ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from maestroctl_runner import Cli, scrubbed_env


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    return home


@pytest.fixture
def cli(maestro_home: Path, user_home: Path, project: Path) -> Cli:
    """``maestroctl`` with this test's MAESTRO_HOME and HOME, run in ``project``."""
    return Cli(scrubbed_env(maestro_home, user_home), project)


@pytest.fixture
def stop_background(maestro_home: Path) -> Iterator[None]:
    """Whatever daemon a test started with ``maestroctl start`` is stopped afterwards."""
    yield
    from maestro_memory.client._liveness import lock_is_held

    run_dir = maestro_home / "run"
    if not lock_is_held(run_dir / "maestrod.lock"):
        return
    pid = int((run_dir / "maestrod.pid").read_text().strip())
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while lock_is_held(run_dir / "maestrod.lock"):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            break
        time.sleep(0.05)
