"""``maestroctl start / stop / restart / status`` with a real detached maestrod."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from maestroctl_runner import Cli

from maestro_memory.client import Client
from maestro_memory.client._liveness import lock_is_held
from maestro_memory.common import paths


def alive(pid: int) -> bool:
    """Running (a zombie left for a non-reaping init does not count)."""
    import psutil  # type: ignore[import-untyped]

    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


@pytest.mark.usefixtures("stop_background")
def test_start_status_stop_restart(cli: Cli, maestro_home: Path, project: Path) -> None:
    p = paths.resolve({"MAESTRO_HOME": str(maestro_home)})
    started = cli.result("start")
    assert started["started"] is True and started["started_by"] == "process"
    pid = started["pid"]
    assert isinstance(pid, int) and int(p.pid_path.read_text()) == pid
    assert alive(pid)
    # detached: its own session, so a hook's process group ending does not take it along
    assert os.getsid(pid) == pid
    assert lock_is_held(p.lock_path)

    again = cli("start")
    assert again.stdout.strip() == f"maestrod is already running (pid {pid})."
    assert cli.result("start")["started"] is False

    status = cli.result("status")
    assert status["running"] is True and status["process"]["pid"] == pid
    assert f"maestrod is running (pid {pid}" in cli("status").stdout
    cli("register")
    assert cli.json("context")["via"] == "daemon"

    restarted = cli.result("restart")
    assert restarted["stopped"]["pid"] == pid and restarted["started"]["started"] is True
    new_pid = restarted["started"]["pid"]
    assert new_pid != pid
    assert not alive(pid) and alive(new_pid)
    assert cli.result("projects")["projects"][0]["path"] == str(project)  # survived

    stopped = cli("stop")
    assert stopped.stdout.strip() == f"maestrod stopped (pid {new_pid})."
    # stop returns only once the lock is free and the socket is gone
    assert not lock_is_held(p.lock_path)
    assert not p.socket_path.exists()
    assert cli.json("status", check=3)["result"]["running"] is False
    assert cli.result("stop")["was_running"] is False


def test_start_reports_a_daemon_that_cannot_start(cli: Cli, maestro_home: Path) -> None:
    run_dir = maestro_home / "run"
    run_dir.mkdir(mode=0o700)
    run_dir.chmod(0o777)  # maestrod refuses a runtime dir others can write
    try:
        doc = cli.json("start", check=1)
    finally:
        run_dir.chmod(0o700)
    assert doc["error"]["code"] == "client_error"
    assert "exited during start" in doc["error"]["message"]
    assert str(run_dir) in doc["error"]["message"]  # the daemon's own reason is passed on


def test_start_foreground_runs_in_this_process(cli: Cli, maestro_home: Path) -> None:
    p = paths.resolve({"MAESTRO_HOME": str(maestro_home)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "maestro_memory.client.cli", "start", "--foreground"],
        env=cli.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Hang guards (a loaded machine is slow, not broken): 120 s to come up, 30 s per reply.
        with Client(paths=p, timeout=30) as client:
            deadline = time.monotonic() + 120
            while not client.daemon_running():
                assert proc.poll() is None, "maestrod --foreground exited early"
                assert time.monotonic() < deadline, "maestrod did not come up"
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(0.05)
            assert client.hello()["pid"] == proc.pid  # exec'd: same process
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
