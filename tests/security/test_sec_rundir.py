"""The runtime dir and what is in it: private, owned by the user, never redirected.

Extends tests/daemon/test_daemon_lifecycle.py (group/other-writable and foreign-owned runtime
dirs refused) and tests/daemon/test_daemon_peer_uid.py (another uid refused at the handshake
even when the socket is reachable): here, what a running daemon's files look like, planted
symlinks, and that with the default modes another uid cannot even reach the socket.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle, spawn_daemon

from maestro_memory.common import paths as daemon_paths


@pytest.fixture
def short_home() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mm-sec-", dir="/tmp") as tmp:
        os.chmod(tmp, 0o711)  # traversable by others, as a home directory often is
        yield Path(tmp) / "h"


def refused(home: Path) -> tuple[int, str]:
    proc, stderr_path, _ = spawn_daemon(home)
    try:
        code = proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("the daemon started when it should have refused")
    return code, stderr_path.read_text()


def test_a_running_daemon_keeps_everything_private(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    daemon.result(
        "save_semantic", project, fact="Private rule zzp", category="quality_rule", confidence=0.9
    )
    uid = os.getuid()
    p = daemon.paths
    for directory in (*p.all_dirs(), p.journal_dir, p.socket_path.parent):
        st = os.lstat(directory)
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == uid, directory
        assert stat.S_IMODE(st.st_mode) == 0o700, (directory, oct(st.st_mode))
    sock = os.lstat(p.socket_path)
    assert stat.S_ISSOCK(sock.st_mode) and sock.st_uid == uid
    assert stat.S_IMODE(sock.st_mode) & 0o077 == 0, oct(sock.st_mode)
    lock = os.lstat(p.lock_path)
    assert stat.S_ISREG(lock.st_mode) and stat.S_IMODE(lock.st_mode) == 0o600
    for root in (p.runtime_dir, p.state_dir, p.log_dir):
        for path in root.rglob("*"):
            st = os.lstat(path)
            assert st.st_uid == uid and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH), path


def test_runtime_dir_that_is_a_symlink_is_refused(short_home: Path, tmp_path: Path) -> None:
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(short_home)})
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    short_home.mkdir(mode=0o700)
    paths.runtime_dir.symlink_to(target)
    code, err = refused(short_home)
    assert code != 0 and "symlink" in err
    assert list(target.iterdir()) == []


def test_planted_lock_symlink_is_refused(short_home: Path, tmp_path: Path) -> None:
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(short_home)})
    paths.runtime_dir.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    paths.lock_path.symlink_to(victim)
    code, err = refused(short_home)
    assert code != 0 and "lock file" in err
    assert victim.read_text() == "precious\n"


def test_planted_pid_and_socket_symlinks_are_removed_not_followed(
    daemon_factory: DaemonFactory, short_home: Path, tmp_path: Path
) -> None:
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(short_home)})
    paths.runtime_dir.mkdir(parents=True, mode=0o700)
    victims = [tmp_path / "victim-pid", tmp_path / "victim-sock"]
    for victim in victims:
        victim.write_text("precious\n")
    paths.pid_path.symlink_to(victims[0])
    paths.socket_path.symlink_to(victims[1])
    daemon = daemon_factory(home=short_home)
    assert daemon.result("ping")["pong"]
    assert not paths.pid_path.is_symlink() and not paths.socket_path.is_symlink()
    assert [v.read_text() for v in victims] == ["precious\n", "precious\n"]


PROBE = textwrap.dedent("""
    import json, os, sys
    out = {"uid": os.getuid()}
    for name, path in (("runtime", sys.argv[1]), ("socket", sys.argv[2])):
        try:
            os.stat(path)
            out[name] = "reachable"
        except PermissionError:
            out[name] = "EACCES"
        except OSError as exc:
            out[name] = exc.strerror
    print(json.dumps(out))
""")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a probe as another user")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv(1)")
def test_other_uid_cannot_reach_the_socket_with_default_modes(
    daemon_factory: DaemonFactory, short_home: Path
) -> None:
    daemon = daemon_factory(home=short_home)
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            sys.executable,
            "-c",
            PROBE,
            str(daemon.paths.runtime_dir / "x"),
            str(daemon.paths.socket_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(done.stdout)
    assert seen["uid"] != 0
    assert seen == {"uid": seen["uid"], "runtime": "EACCES", "socket": "EACCES"}
    assert daemon.result("ping")["pong"]
