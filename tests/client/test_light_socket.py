"""The light socket (``client/_zmtp.py``): the standard library speaking ZMTP 3 to the real
daemon (and to libzmq peers set up to misbehave), with the same replies as pyzmq."""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from maestro_memory.client import Client
from maestro_memory.client._zmtp import ZmtpDealer, ZmtpError, ipc_path
from maestro_memory.client.errors import DaemonTimeout, DaemonUnavailable


def _rule(client: Client) -> str:
    saved = client.save_semantic("Always run ruff before committing", "quality_rule", 0.9)
    return str(saved["entry"]["id"])


def test_light_and_pyzmq_clients_get_the_same_replies(daemon: Any, project: Path) -> None:
    daemon.register(project)
    with Client(project, light_socket=True) as light, Client(project) as heavy:
        entry_id = _rule(light)
        assert light.last_via == "daemon"
        # Large enough for ZMTP's long frames (over 255 bytes) both ways.
        task = "commit " + "x" * 600
        assert light.build_context(task=task) == heavy.build_context(task=task)
        assert light.entries() == heavy.entries()
        assert [e["id"] for e in light.entries()["entries"]] == [entry_id]
        assert light.hello()["version"] == heavy.hello()["version"]
        # One connection for all of these: a live one is kept, not made again per call.
        kept = light._transport._light
        light.ping()
        assert kept is not None and light._transport._light is kept


def test_a_write_after_a_daemon_restart_reaches_the_new_daemon(
    daemon_factory: Any, project: Path
) -> None:
    # save_semantic is not retried after a timeout: the dead connection must be noticed before
    # the request is sent on it, not after.
    first = daemon_factory()
    first.register(project)
    with Client(project, light_socket=True) as light:
        _rule(light)
        assert first.stop() == 0
        second = daemon_factory()  # same MAESTRO_HOME, same socket path, a new process
        second.register(project)
        saved = light.save_semantic("Use pnpm, not npm", "project_context", 0.9)
        assert saved["action"] == "added" and light.last_via == "daemon"
        context = str(light.build_context()["context"])
        assert "Always run ruff before committing" in context and "Use pnpm" in context
    assert [r["op"] for r in second.result("log", project)["records"]][-1] == "save_semantic"


def test_a_socket_nobody_listens_on_goes_direct(
    maestro_home: Path, project: Path, short_dir: Path
) -> None:
    """A daemon that died without cleaning up while something still holds its lock: the
    liveness probe says running, the connect is refused, nothing was sent."""
    import fcntl

    from maestro_memory.common import paths as paths_mod

    real = paths_mod.resolve()
    paths = real._replace(runtime_dir=short_dir)
    paths.runtime_dir.mkdir(parents=True, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(paths.socket_path))
    stale.close()  # the file stays, nobody listens
    lock = os.open(paths.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        with Client(project, light_socket=True, paths=paths) as light:
            assert light.daemon_running()
            light.build_context(task="anything")  # safe to run here: it does
            assert light.last_via == "direct"
    finally:
        os.close(lock)


def test_a_hung_daemon_times_out(daemon: Any, project: Path) -> None:
    daemon.register(project)
    with Client(project, light_socket=True, timeout=0.5, retries=0) as light:
        light.ping()
        daemon.signal(signal.SIGSTOP)
        try:
            with pytest.raises(DaemonTimeout):
                light.save_semantic("Use pnpm", "project_context")
        finally:
            daemon.signal(signal.SIGCONT)


@pytest.fixture
def short_dir() -> Iterator[Path]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="zmtp-", dir="/tmp") as d:
        yield Path(d)


def test_a_peer_that_refuses_us_is_reported_with_its_reason(short_dir: Path) -> None:
    """A libzmq ROUTER whose ZAP handler says no, as the daemon's does to another uid."""
    ctx = zmq.Context()
    zap = ctx.socket(zmq.REP)
    zap.bind("inproc://zeromq.zap.01")
    router = ctx.socket(zmq.ROUTER)
    router.zap_domain = b"test"
    endpoint = f"ipc://{short_dir / 's'}"
    router.bind(endpoint)

    def deny() -> None:
        request = zap.recv_multipart()
        version, sequence = request[0], request[1]
        zap.send_multipart([version, sequence, b"400", b"not the owner", b"", b""])

    handler = threading.Thread(target=deny)
    handler.start()
    try:
        path = ipc_path(endpoint)
        assert path is not None
        with pytest.raises(ZmtpError, match="refused the connection: 400"):
            ZmtpDealer(path, 5.0)
    finally:
        handler.join(10)
        router.close(0)
        zap.close(0)
        ctx.term()


def test_a_peer_that_is_not_zmtp_is_an_error_not_a_hang(short_dir: Path) -> None:
    path = str(short_dir / "s")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        conn.recv(1024)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" + b"\0" * 64)
        conn.close()

    peer = threading.Thread(target=answer)
    peer.start()
    try:
        with pytest.raises(ZmtpError, match="does not speak ZMTP 3"):
            ZmtpDealer(path, 5.0)
    finally:
        peer.join(10)
        server.close()


def test_only_ipc_endpoints_have_a_path() -> None:
    assert (
        ipc_path("ipc:///run/user/1/maestro/maestrod.sock") == "/run/user/1/maestro/maestrod.sock"
    )
    assert ipc_path("ipc://@maestro") == "\0maestro"
    assert ipc_path("tcp://127.0.0.1:5555") is None


def test_a_client_without_a_daemon_still_goes_direct(maestro_home: Path, project: Path) -> None:
    with Client(project, light_socket=True) as light:
        _rule(light)
        assert light.last_via == "direct"
    with (
        Client(project, light_socket=True, require_daemon=True) as strict,
        pytest.raises(DaemonUnavailable),
    ):
        strict.entries()
    assert not any(p.name.endswith(".sock") for p in maestro_home.rglob("*"))
    assert os.path.exists(project / ".maestro" / "memory" / "semantic.md")
