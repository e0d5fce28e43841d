"""MAESTRO_HOME and its parent must not be writable by others: maestrod refuses, doctor warns.

Whoever can write the home (or replace it, through a writable parent) can plant the socket
directory, the registry or the config the daemon trusts. Like the runtime dir check in
``daemon/rundir.py``; a sticky parent (as /tmp) is fine, since others cannot rename or delete
our entry there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory, spawn_daemon

from maestro_memory.common.paths import home_problems


def refused(home: Path) -> tuple[int, str]:
    proc, stderr_path, _ = spawn_daemon(home)
    try:
        code = proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the daemon started when it should have refused")
    return code, stderr_path.read_text()


def doctor(home: Path, tmp_path: Path) -> dict[str, dict[str, str]]:
    env = {**os.environ, "MAESTRO_HOME": str(home), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "maestro_memory.client.cli", "doctor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    doc = json.loads(done.stdout)
    checks = doc.get("result", doc)["checks"]
    return {c["name"]: c for c in checks}


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    p = tmp_path / "parent"
    p.mkdir(mode=0o700)
    return p


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_home_writable_by_others_is_refused(parent: Path, mode: int) -> None:
    home = parent / "h"
    home.mkdir()
    os.chmod(home, mode)
    code, stderr = refused(home)
    assert code == 1
    assert f"MAESTRO_HOME {home} is writable by group or others" in stderr
    assert not (home / "run").exists()  # refused before creating anything


@pytest.mark.parametrize("mode", [0o777, 0o770])
def test_parent_writable_by_others_is_refused(parent: Path, mode: int) -> None:
    home = parent / "h"
    os.chmod(parent, mode)
    code, stderr = refused(home)
    assert code == 1
    assert f"the parent of MAESTRO_HOME {parent} is writable by group or others" in stderr
    assert not (home / "run").exists()  # refused before creating anything


def test_sticky_world_writable_parent_is_accepted(
    daemon_factory: DaemonFactory, parent: Path
) -> None:
    os.chmod(parent, 0o1777)  # as /tmp
    daemon = daemon_factory(home=parent / "h")
    assert daemon.result("ping")["pong"] is True


def test_private_home_has_no_problem(parent: Path) -> None:
    assert home_problems(parent / "not-yet") == []
    (parent / "h").mkdir(mode=0o700)
    assert home_problems(parent / "h") == []


def test_doctor_fails_an_open_home(parent: Path, tmp_path: Path) -> None:
    home = parent / "h"
    home.mkdir()
    os.chmod(parent, 0o777)
    checks = doctor(home, tmp_path)
    check = checks["maestro home"]
    assert check["status"] == "fail", check  # every process refuses it, not only maestrod
    assert "writable by group or others" in check["detail"]
    os.chmod(parent, 0o700)
    assert doctor(home, tmp_path)["maestro home"]["status"] == "ok"
