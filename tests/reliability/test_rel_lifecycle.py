"""Lifecycle under stress: two daemons started in the same instant, the leftovers of a SIGKILL,
and SIGTERM in the middle of a write storm from 16 client processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle, raw_request, wait_for
from reliability_kit import LONG, WorkerPool, disk_state

from maestro_memory.client import Client
from maestro_memory.common import paths as daemon_paths

ROUNDS = 25 if LONG else 5


GATED = (
    "import sys\n"
    "from maestro_memory.daemon.__main__ import main\n"
    "print('ready', flush=True)\n"
    "sys.stdin.readline()\n"  # the start gun
    "sys.exit(main([]))\n"
)


def released_together(home: Path, tmp: Path) -> list[tuple[subprocess.Popen[bytes], Path]]:
    """Two maestrod processes, imported and blocked on their stdin, released by two writes a
    few microseconds apart: they reach the instance lock in the same instant."""
    env = {**os.environ, "MAESTRO_HOME": str(home)}
    env.pop("NOTIFY_SOCKET", None)
    procs = []
    for k in range(2):
        err = tmp / f"maestrod-{k}-{time.monotonic_ns()}.err"
        with open(err, "wb") as f:
            proc = subprocess.Popen(
                [sys.executable, "-c", GATED],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=f,
            )
        procs.append((proc, err))
    for proc, _ in procs:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    for proc, _ in procs:
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
    return procs


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("after", ["clean", "sigkill"])
def test_two_daemons_at_once_exactly_one_runs(tmp_path: Path, after: str) -> None:
    home = tmp_path / "home"
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(home)})
    for _ in range(ROUNDS):
        procs = released_together(home, tmp_path)
        try:
            # The loser exits on its own; the winner keeps running.
            wait_for(
                lambda procs=procs: any(p.poll() is not None for p, _ in procs),  # type: ignore[misc]
                timeout=30,
                message="one of the two daemons to give up",
            )
            losers = [(p, e) for p, e in procs if p.poll() is not None]
            winners = [(p, e) for p, e in procs if p.poll() is None]
            assert len(losers) == 1 and len(winners) == 1, [p.poll() for p, _ in procs]
            (loser, loser_err), (winner, _) = losers[0], winners[0]
            assert loser.returncode != 0
            message = loser_err.read_text()
            assert "already running (pid " in message, message
            named = message.split("already running (pid ", 1)[1].split(")", 1)[0]
            # It names the daemon that runs, or says it does not know: never a dead one.
            assert named in (str(winner.pid), "unknown"), (named, winner.pid)
            wait_for(lambda: paths.socket_path.exists(), message="the winner's socket")
            reply = raw_request(paths.endpoint, "hello", timeout=20)
            assert reply["ok"] and reply["result"]["pid"] == winner.pid
            assert paths.pid_path.read_text().strip() == str(winner.pid)
        finally:
            for p, _ in procs:
                if p.poll() is None:
                    if after == "sigkill":
                        p.kill()  # leaves the socket and the pid file behind
                    else:
                        p.send_signal(signal.SIGTERM)
                    p.wait(15)
        if after == "sigkill":
            assert paths.pid_path.exists() and not pid_alive(int(paths.pid_path.read_text()))


def test_stale_socket_and_lock_after_sigkill(daemon_factory: DaemonFactory, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    first = daemon_factory()
    first.register(project)
    saved = first.result(
        "save_semantic",
        project,
        fact="Stale leftovers zzs",
        category="project_context",
        confidence=0.9,
    )
    first.kill()
    # What a SIGKILL leaves: the socket file, the lock file, the pid file of a dead process.
    assert first.paths.socket_path.exists() and first.paths.lock_path.exists()
    assert not pid_alive(int(first.paths.pid_path.read_text()))
    # A client knows at once that nobody listens (the lock is free), without a timeout.
    client = Client(project, require_daemon=True, timeout=30)
    started = time.monotonic()
    assert client.daemon_running() is False
    ctl = subprocess.run(
        [sys.executable, "-m", "maestro_memory.client.cli", "status", "--json"],
        env={**first.env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ctl.returncode == 3 and '"running": false' in ctl.stdout
    assert time.monotonic() - started < 25  # not the client's 30 s timeout
    second = daemon_factory()
    assert second.result("hello")["pid"] == second.proc.pid
    assert client.daemon_running() is True
    assert [e["id"] for e in client.entries()["entries"]] == [saved["entry"]["id"]]
    client.close()


def test_sigterm_during_a_write_storm(daemon_factory: DaemonFactory, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    daemon: DaemonHandle = daemon_factory()
    daemon.register(project)
    pool = WorkerPool(tmp_path / "stop")
    for w in range(16):
        pool.start("daemon", project, w, timeout=5.0)
    try:
        wait_for(lambda: pool.ack_count() >= 150, timeout=60, message="the storm to get going")
        started = time.monotonic()
        daemon.signal(signal.SIGTERM)
        code = daemon.proc.wait(60)
        elapsed = time.monotonic() - started
    finally:
        pool.stop()
    # Clean and drained: every queued write was committed before the exit (the time it took
    # is reported, not asserted: speed lives in bench/).
    assert code == 0, (code, elapsed)
    assert "did not drain" not in daemon.log_text()
    assert "stopping (received SIGTERM)" in daemon.log_text()
    acked = pool.acked()
    state = disk_state(project)
    assert state.problems == {} and state.leftovers == []
    counts = state.text_counts()
    assert all(counts[a["fact"]] == 1 for a in acked), "an acknowledged write is missing"
    assert max(counts.values()) == 1
    # The clients saw the stop as an error, never as a success that did not happen.
    assert sum(pool.errors().values()) > 0
    assert not daemon.paths.socket_path.exists() and not daemon.paths.pid_path.exists()
