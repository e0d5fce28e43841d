"""Start, refuse, stop, crash and restart: the process-level contract of maestrod."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from maestrod_testkit import DaemonFactory, DaemonHandle, spawn_daemon, wait_for

from maestro_memory.common import paths as daemon_paths


def run_refused(home: Path, timeout: float = 20.0) -> tuple[int, str]:
    """Start a daemon that is expected to refuse; its exit code and stderr."""
    proc, stderr_path, _ = spawn_daemon(home)
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the daemon started when it should have refused")
    return code, stderr_path.read_text()


@pytest.fixture
def short_home() -> Iterator[Path]:
    """A MAESTRO_HOME short enough for the socket to live in its runtime dir."""
    with tempfile.TemporaryDirectory(prefix="mm-", dir="/tmp") as tmp:
        yield Path(tmp) / "h"


def test_second_daemon_refuses_to_start(daemon: DaemonHandle) -> None:
    code, err = run_refused(daemon.home)
    assert code != 0
    assert f"already running (pid {daemon.proc.pid})" in err
    assert daemon.result("ping")["pong"]  # and the first one still owns its socket
    assert daemon.paths.pid_path.read_text().strip() == str(daemon.proc.pid)


def test_sigterm_exits_zero_and_cleans_up(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    assert daemon.paths.socket_path.exists() and daemon.paths.pid_path.exists()
    daemon.signal(signal.SIGTERM)
    # Exits by itself, cleanly (how fast is bench/'s business, not a test's).
    assert daemon.proc.wait(60) == 0
    assert "did not drain" not in daemon.log_text()
    assert not daemon.paths.socket_path.exists()
    assert not daemon.paths.pid_path.exists()
    assert "stopping (received SIGTERM)" in daemon.log_text()


def test_sigint_exits_zero(daemon: DaemonHandle) -> None:
    daemon.signal(signal.SIGINT)
    assert daemon.proc.wait(10) == 0
    assert not daemon.paths.socket_path.exists()


def test_sigterm_drains_queued_writes(daemon: DaemonHandle, project: Path) -> None:
    """Writes queued before the stop are committed and answered; later ones are refused."""
    daemon.register(project)
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(daemon.endpoint)
    try:
        sock.send(json.dumps({"v": 1, "id": "up", "op": "ping"}).encode())
        assert sock.poll(5000) and json.loads(sock.recv())["id"] == "up"  # connected
        count = 200
        for i in range(count):
            body = {
                "v": 1,
                "id": f"w{i}",
                "op": "save_episodic",
                "project": str(project),
                "args": {"context": f"episode number {i}", "session_id": "drain"},
            }
            sock.send(json.dumps(body).encode())
        assert sock.poll(10000)  # the daemon is working through them: now stop it
        first = json.loads(sock.recv())
        daemon.signal(signal.SIGTERM)
        replies = {first["id"]: first}
        deadline = time.monotonic() + 10
        while len(replies) < count and time.monotonic() < deadline:
            if sock.poll(200):
                reply = json.loads(sock.recv())
                replies[reply["id"]] = reply
    finally:
        sock.close()
    assert daemon.proc.wait(10) == 0
    ok = [r for r in replies.values() if r["ok"]]
    refused = [r for r in replies.values() if not r["ok"]]
    assert ok, "nothing was committed before the stop"
    # Requests still in flight when the socket closes get no reply at all (clients time
    # out); any reply sent is either a durable success or shutting_down.
    assert all(r["error"]["code"] == "shutting_down" for r in refused), refused[:2]
    text = (project / ".maestro/memory/episodic.md").read_text()
    # Every acknowledged write is on disk (the episodic cap keeps the newest 20 there).
    newest = sorted(ok, key=lambda r: int(r["id"][1:]))[-20:]
    assert all(r["result"]["entry"]["id"] in text for r in newest)
    records = [
        json.loads(line)
        for line in daemon.paths.journal_dir.glob("*.jsonl").__next__().read_text().splitlines()
    ]
    assert sum(1 for r in records if r["op"] == "save_episodic") == len(ok)


def test_sigkill_then_restart_on_same_home(daemon_factory: DaemonFactory, project: Path) -> None:
    first = daemon_factory()
    first.register(project)
    saved = first.result(
        "save_semantic",
        project,
        fact="Main branch is called develop",
        category="project_context",
        confidence=0.9,
    )
    first.kill()
    assert first.paths.pid_path.exists()  # stale pid file
    second = daemon_factory()
    assert second.result("hello")["pid"] == second.proc.pid
    assert second.paths.pid_path.read_text().strip() == str(second.proc.pid)
    # The registry survived; the memory is as the first daemon acknowledged it.
    assert [p["path"] for p in second.result("projects")["projects"]] == [str(project)]
    ids = [e["id"] for e in second.result("entries", project)["entries"]]
    assert ids == [saved["entry"]["id"]]
    assert second.result("save_episodic", project, context="after the restart", session_id="s2")[
        "entry"
    ]


def test_registry_survives_clean_restart(daemon_factory: DaemonFactory, project: Path) -> None:
    first = daemon_factory()
    first.register(project)
    assert first.stop() == 0
    second = daemon_factory()
    assert second.result("projects")["projects"][0]["path"] == str(project)


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_runtime_dir_writable_by_others_refused(short_home: Path, mode: int) -> None:
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(short_home)})
    paths.runtime_dir.mkdir(parents=True)
    os.chmod(paths.runtime_dir, mode)
    code, err = run_refused(short_home)
    assert code != 0
    assert "writable by group or others" in err and str(paths.runtime_dir) in err
    assert not paths.socket_path.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown to another user")
def test_runtime_dir_owned_by_another_user_refused(short_home: Path) -> None:
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(short_home)})
    paths.runtime_dir.mkdir(parents=True, mode=0o700)
    os.chown(paths.runtime_dir, 65534, 65534)
    code, err = run_refused(short_home)
    assert code != 0
    assert "owned by uid 65534" in err


def test_long_home_uses_short_socket_fallback(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    home = tmp_path / ("very-long-directory-name-" * 4) / "home"
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(home)})
    assert len(os.fsencode(paths.runtime_dir / "maestrod.sock")) >= daemon_paths.SUN_PATH_MAX
    daemon = daemon_factory(home=home)
    socket_path = daemon.paths.socket_path
    assert socket_path.parent == paths.socket_fallback_dir
    assert socket_path.exists()
    for directory in (socket_path.parent, socket_path.parent.parent):
        st = directory.stat()
        assert st.st_uid == os.getuid() and st.st_mode & 0o077 == 0, directory
    assert daemon.result("ping")["pong"]
    assert daemon.stop() == 0
    assert not socket_path.exists()


def test_fallback_dir_writable_by_others_refused(tmp_path: Path) -> None:
    home = tmp_path / ("another-very-long-directory-name-" * 4) / "home"
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(home)})
    fallback = paths.socket_fallback_dir
    fallback.mkdir(parents=True, exist_ok=True)
    os.chmod(fallback, 0o777)
    try:
        code, err = run_refused(home)
        assert code != 0 and str(fallback) in err
    finally:
        os.rmdir(fallback)


def test_socket_and_state_are_private(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    assert daemon.paths.socket_path.stat().st_mode & 0o077 == 0
    for directory in daemon.paths.all_dirs():
        assert directory.stat().st_mode & 0o777 == 0o700, directory


def test_bad_config_refuses_to_start(short_home: Path) -> None:
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(short_home)})
    paths.config_dir.mkdir(parents=True, mode=0o700)
    paths.config_path.write_text('[maintenance]\ncron = "61 25 * * *"\n')
    code, err = run_refused(short_home)
    assert code != 0 and "bad configuration" in err


def test_sighup_with_bad_config_keeps_running(daemon: DaemonHandle) -> None:
    before = daemon.status()["maintenance"]["next_run"]
    daemon.paths.config_path.write_text("this is = = not toml")
    daemon.signal(signal.SIGHUP)
    wait_for(
        lambda: "keeping the running configuration" in daemon.log_text(),
        message="the reload to be refused",
    )
    assert daemon.status()["maintenance"]["next_run"] == before


@pytest.mark.parametrize("abstract", [False, True])
def test_sd_notify_ready_and_stopping(
    daemon_factory: DaemonFactory, tmp_path: Path, abstract: bool
) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if abstract:
        name = f"@maestro-test-{os.getpid()}-{time.monotonic_ns()}"
        listener.bind("\0" + name[1:])
    else:
        name = str(tmp_path / "notify.sock")
        listener.bind(name)
    listener.settimeout(20)
    try:
        daemon = daemon_factory(env={"NOTIFY_SOCKET": name})
        assert listener.recv(256) == b"READY=1"
        # The status line `systemctl status` shows, again on every (un)registration.
        assert listener.recv(256) == b"STATUS=serving 0 projects"
        project = tmp_path / "proj"
        project.mkdir()
        daemon.register(project)
        assert listener.recv(256) == b"STATUS=serving 1 project"
        daemon.result("unregister", project)
        assert listener.recv(256) == b"STATUS=serving 0 projects"
        daemon.signal(signal.SIGTERM)
        assert listener.recv(256) == b"STOPPING=1"
        assert daemon.proc.wait(10) == 0
    finally:
        listener.close()


def test_no_notify_socket_is_fine(daemon: DaemonHandle) -> None:
    assert "NOTIFY_SOCKET" not in daemon.env
    assert daemon.result("ping")["pong"]
