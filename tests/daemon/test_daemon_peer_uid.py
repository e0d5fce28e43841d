"""Only the owning uid may talk to the daemon, even when the socket file is reachable."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
from maestrod_testkit import DaemonFactory
from zmq.utils.monitor import recv_monitor_message

from maestro_memory.daemon.routing import peer_uid


def _probe_in_this_process(endpoint: str, seconds: float) -> dict[str, object]:
    """Send ``hello`` and report the reply and what the socket monitor saw."""
    ctx = zmq.Context()  # never the parent's context: this may run in a forked child
    try:
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        monitor = sock.get_monitor_socket()
        sock.connect(endpoint)
        sock.send(json.dumps({"v": 1, "id": "x", "op": "hello"}).encode())
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        events: list[str] = []
        reply: object = None
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and reply is None:
            ready = dict(poller.poll(100))
            if sock in ready:
                reply = json.loads(sock.recv())
            if monitor in ready:
                events.append(zmq.Event(recv_monitor_message(monitor)["event"]).name)
        monitor.close(linger=0)
        sock.close(linger=0)
    finally:
        ctx.term()
    return {"uid": os.getuid(), "reply": reply, "events": events}


def probe_as(user: str | None, endpoint: str, seconds: float) -> dict[str, object]:
    """Run the probe in a forked child, as ``user`` when given (setgroups/setgid/setuid).

    No exec: the child keeps the interpreter and modules already loaded, so it works even
    when the interpreter lives where the other user cannot read (e.g. /root/.pyenv, 0700).
    The result comes back as JSON through a pipe; any failure in the child comes back as
    ``{"error": ...}`` and fails the test."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 0
        try:
            os.close(read_end)
            if user is not None:
                entry = pwd.getpwnam(user)
                os.setgroups([])
                os.setgid(entry.pw_gid)
                os.setuid(entry.pw_uid)
            out: dict[str, object] = _probe_in_this_process(endpoint, seconds)
        except BaseException as exc:  # report everything: the parent asserts on it
            out = {"error": f"{type(exc).__name__}: {exc}"}
            status = 1
        try:
            os.write(write_end, json.dumps(out).encode())
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    with os.fdopen(read_end, "rb") as reader:
        while chunk := reader.read(65536):
            chunks.append(chunk)
    _, wait_status = os.waitpid(pid, 0)
    result: dict[str, object] = json.loads(b"".join(chunks) or b"{}")
    assert "error" not in result, result
    assert os.waitstatus_to_exitcode(wait_status) == 0, result
    return result


def test_peer_uid_parsing() -> None:
    assert peer_uid("localhost:1000:1000:4242") == 1000
    assert peer_uid(":501:20:") == 501  # BSD/macOS LOCAL_PEERCRED has no pid
    assert peer_uid("localhost") is None
    assert peer_uid("") is None
    assert peer_uid("host:x:1:2") is None


@pytest.fixture
def open_home() -> Iterator[Path]:
    """A MAESTRO_HOME another user can traverse (o+x, never writable)."""
    tmp = Path(tempfile.mkdtemp(prefix="mm-uid-", dir="/tmp"))
    os.chmod(tmp, 0o711)
    try:
        yield tmp / "h"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user")
def test_other_uid_is_refused(daemon_factory: DaemonFactory, open_home: Path) -> None:
    daemon = daemon_factory(home=open_home)
    # Open the path to the socket on purpose, as a misconfiguration would: the directory
    # modes are the first line of defence, the peer uid check the second, tested here.
    os.chmod(open_home, 0o711)
    os.chmod(daemon.paths.runtime_dir, 0o711)
    os.chmod(daemon.paths.socket_path, 0o777)

    mine = probe_as(None, daemon.endpoint, 5.0)
    assert mine["reply"] is not None and mine["reply"]["ok"] is True  # type: ignore[index]

    other = probe_as("nobody", daemon.endpoint, 2.0)
    assert other["uid"] != 0
    assert other["reply"] is None
    assert "HANDSHAKE_FAILED_AUTH" in other["events"]  # type: ignore[operator]
    assert f"uid {other['uid']} is not the owner" in daemon.log_text()
    assert daemon.result("ping")["pong"]
