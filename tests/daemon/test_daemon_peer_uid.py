"""Only the owning uid may talk to the daemon, even when the socket file is reachable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory

from maestro_memory.daemon.server import peer_uid

# A client that reports whether it got a reply and what the socket monitor saw.
PROBE = textwrap.dedent("""
    import json, os, sys, time, zmq
    from zmq.utils.monitor import recv_monitor_message
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    monitor = sock.get_monitor_socket()
    sock.connect(sys.argv[1])
    sock.send(json.dumps({"v": 1, "id": "x", "op": "hello"}).encode())
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    poller.register(monitor, zmq.POLLIN)
    events, reply, deadline = [], None, time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline and reply is None:
        ready = dict(poller.poll(100))
        if sock in ready:
            reply = json.loads(sock.recv())
        if monitor in ready:
            events.append(zmq.Event(recv_monitor_message(monitor)["event"]).name)
    print(json.dumps({"uid": os.getuid(), "reply": reply, "events": events}))
""")


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


def probe(argv_prefix: list[str], endpoint: str, seconds: float) -> dict[str, object]:
    out = subprocess.run(
        [*argv_prefix, sys.executable, "-c", PROBE, endpoint, str(seconds)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv(1)")
def test_other_uid_is_refused(daemon_factory: DaemonFactory, open_home: Path) -> None:
    daemon = daemon_factory(home=open_home)
    # Open the path to the socket on purpose, as a misconfiguration would: the directory
    # modes are the first line of defence, the peer uid check the second, tested here.
    os.chmod(open_home, 0o711)
    os.chmod(daemon.paths.runtime_dir, 0o711)
    os.chmod(daemon.paths.socket_path, 0o777)

    mine = probe([], daemon.endpoint, 5.0)
    assert mine["reply"] is not None and mine["reply"]["ok"] is True  # type: ignore[index]

    other = probe(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"], daemon.endpoint, 2.0
    )
    assert other["uid"] != 0
    assert other["reply"] is None
    assert "HANDSHAKE_FAILED_AUTH" in other["events"]  # type: ignore[operator]
    assert f"uid {other['uid']} is not the owner" in daemon.log_text()
    assert daemon.result("ping")["pong"]
