"""``Client`` transport rules, against a stand-in daemon this test controls.

The stand-in holds the daemon's lock (so the client believes a daemon is alive) and binds a
ROUTER on the daemon's socket path; each test decides what it answers, and when.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from maestrod_testkit import wait_for

from maestro_memory.client import (
    Client,
    DaemonNotRunning,
    DaemonTimeout,
    DaemonUnavailable,
    MaestroError,
    ProtocolError,
    RequestError,
)
from maestro_memory.client._client import MEMORY_OP_NAMES
from maestro_memory.common import ops, paths, protocol

# reply(frame_dict) -> list of raw reply payloads to send back (possibly none)
Responder = Callable[[dict[str, Any]], list[bytes]]


class FakeDaemon:
    """A ROUTER that records each request with its peer identity and answers via a script."""

    def __init__(self, p: paths.Paths, responder: Responder) -> None:
        self.paths = p
        self.responder = responder
        self.requests: queue.Queue[tuple[bytes, dict[str, Any]]] = queue.Queue()
        self.seen: list[tuple[bytes, dict[str, Any]]] = []
        self.deferred: list[tuple[bytes, bytes]] = []
        self._stop = threading.Event()
        p.runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock_fd = os.open(p.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._ctx = zmq.Context()
        self._sock = self._ctx.socket(zmq.ROUTER)
        self._sock.linger = 0
        self._sock.bind(p.endpoint)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            if not self._sock.poll(20):
                continue
            identity, payload = self._sock.recv_multipart()
            request = json.loads(payload)
            self.seen.append((identity, request))
            self.requests.put((identity, request))
            for reply in self.responder(request):
                self._sock.send_multipart([identity, reply])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()
        self._ctx.term()
        os.close(self._lock_fd)


def ok(request: dict[str, Any], result: dict[str, Any] | None = None) -> bytes:
    return protocol.ok_reply(
        request["id"], result if result is not None else {"op": request["op"], "id": request["id"]}
    )


@pytest.fixture
def home_paths(tmp_path: Path) -> paths.Paths:
    return paths.resolve({"MAESTRO_HOME": str(tmp_path / "home")})


@pytest.fixture
def fake(home_paths: paths.Paths) -> Iterator[Callable[[Responder], FakeDaemon]]:
    made: list[FakeDaemon] = []

    def start(responder: Responder) -> FakeDaemon:
        daemon = FakeDaemon(home_paths, responder)
        made.append(daemon)
        return daemon

    yield start
    for daemon in made:
        daemon.close()


def test_timeout_then_fresh_socket_and_late_reply_dropped(
    fake: Callable[[Responder], FakeDaemon], home_paths: paths.Paths
) -> None:
    first: dict[str, Any] = {}

    def responder(request: dict[str, Any]) -> list[bytes]:
        if not first:
            first.update(request)  # never answered in time
            return []
        # The answer to the first request arrives late, ahead of the real one: on the old
        # socket's identity it is undeliverable, and here it carries the wrong id.
        stale = protocol.ok_reply(first["id"], {"stale": True})
        return [stale, ok(request)]

    daemon = fake(responder)
    # Timeouts long enough for the fake's thread to answer on a loaded machine (a reply that
    # should arrive in time must not depend on scheduling).
    with Client(timeout=1.0, retries=0, paths=home_paths) as client:
        started = time.monotonic()
        with pytest.raises(DaemonTimeout) as excinfo:
            client.call(
                "save_semantic", {"fact": "x", "category": "project_context"}, project="/tmp"
            )
        assert 0.9 < time.monotonic() - started < 20.0  # waited its timeout; no retry loop
        assert "may or may not have applied" in str(excinfo.value)
        result = client.ping()
    assert result == {"op": "ping", "id": daemon.seen[1][1]["id"]}
    assert client.last_via == "daemon"
    # the second request came from a new socket (a new routing identity)
    assert daemon.seen[0][0] != daemon.seen[1][0]
    assert [r["pid"] for _, r in daemon.seen] == [os.getpid()] * 2


def test_reply_with_another_id_is_skipped_on_the_same_socket(
    fake: Callable[[Responder], FakeDaemon], home_paths: paths.Paths
) -> None:
    def responder(request: dict[str, Any]) -> list[bytes]:
        return [protocol.ok_reply("someone-else", {"wrong": True}), ok(request)]

    fake(responder)
    with Client(timeout=2.0, paths=home_paths) as client:
        assert client.hello()["op"] == "hello"
        assert client.status()["op"] == "status"


def test_only_idempotent_ops_are_retried(
    fake: Callable[[Responder], FakeDaemon], home_paths: paths.Paths
) -> None:
    counts: dict[str, int] = {}

    def responder(request: dict[str, Any]) -> list[bytes]:
        counts[request["op"]] = counts.get(request["op"], 0) + 1
        return [] if counts[request["op"]] == 1 else [ok(request)]

    daemon = fake(responder)
    with Client(timeout=2.0, retries=1, paths=home_paths) as client:
        assert client.entries(project="/tmp")["op"] == "entries"  # retried, then answered
        with pytest.raises(DaemonTimeout):
            client.reinforce("s-1", project="/tmp")  # not retried
    # The fake counts in its own thread: wait until it has seen the last request.
    wait_for(lambda: counts.get("reinforce"), message="the fake to see the reinforce")
    assert counts == {"entries": 2, "reinforce": 1}
    entries_ids = [r["id"] for _, r in daemon.seen if r["op"] == "entries"]
    assert len(set(entries_ids)) == 2  # each attempt has its own id
    assert {"hello", "build_context", "entries", "initialize"} <= protocol.IDEMPOTENT_OPS
    assert "save_semantic" not in protocol.IDEMPOTENT_OPS


@pytest.mark.parametrize("code", protocol.ERROR_CODES)
def test_error_replies_become_request_errors(
    fake: Callable[[Responder], FakeDaemon], home_paths: paths.Paths, code: str
) -> None:
    fake(lambda request: [protocol.error_reply(request["id"], code, f"it is {code}")])
    with Client(paths=home_paths) as client, pytest.raises(RequestError) as excinfo:
        client.status()
    assert excinfo.value.code == code
    assert excinfo.value.message == f"it is {code}"
    assert isinstance(excinfo.value, MaestroError)


def test_garbled_replies_are_protocol_errors(
    fake: Callable[[Responder], FakeDaemon], home_paths: paths.Paths
) -> None:
    replies = iter(
        [
            b"\xff not json",
            json.dumps([1, 2]).encode(),
            json.dumps({"v": 9, "id": None, "ok": True}).encode(),
        ]
    )

    def responder(request: dict[str, Any]) -> list[bytes]:
        raw = next(replies)
        data = json.loads(raw) if raw.startswith(b"{") else None
        if isinstance(data, dict):
            data["id"] = request["id"]
            raw = json.dumps(data).encode()
        return [raw]

    fake(responder)
    with Client(paths=home_paths) as client:
        for _ in range(3):
            with pytest.raises(ProtocolError):
                client.ping()


def test_nothing_listening_is_known_at_once(home_paths: paths.Paths, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with Client(project, paths=home_paths, timeout=30.0) as client:
        # no socket file at all
        started = time.monotonic()
        with pytest.raises(DaemonNotRunning):
            client.status()
        assert client.daemon_running() is False
        # a socket left by a killed daemon, with a lock file nobody holds
        home_paths.runtime_dir.mkdir(parents=True, mode=0o700)
        home_paths.lock_path.write_text("")
        ctx = zmq.Context()
        stale = ctx.socket(zmq.ROUTER)
        stale.bind(home_paths.endpoint)  # a real socket file...
        try:
            assert home_paths.socket_path.exists()
            assert client.daemon_running() is False  # ...but the lock is free
            with pytest.raises(DaemonNotRunning):
                client.projects()
            # memory ops go to the files instead, without waiting for the 30 s timeout
            saved = client.save_semantic("Direct mode works", "project_context")
            assert saved["action"] == "added" and client.last_via == "direct"
        finally:
            stale.close(linger=0)
            ctx.term()
        assert time.monotonic() - started < 20.0  # not the 30 s timeout
        # and the lock probe released what it took: an exclusive lock is still available
        fd = os.open(home_paths.lock_path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)


def test_require_daemon_refuses_direct_mode(
    home_paths: paths.Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        Client(tmp_path, paths=home_paths, require_daemon=True) as client,
        pytest.raises(DaemonUnavailable),
    ):
        client.build_context()
    monkeypatch.setenv("MAESTRO_REQUIRE_DAEMON", "1")
    with Client(tmp_path, paths=home_paths) as client, pytest.raises(DaemonNotRunning):
        client.initialize()
    assert not (tmp_path / ".maestro").exists()


def test_direct_mode_matches_the_shared_handlers(home_paths: paths.Paths, tmp_path: Path) -> None:
    """The client's list of memory ops is the registry's, and its results are the handlers'."""
    assert frozenset(ops.MEMORY_OPS) == MEMORY_OP_NAMES
    project = tmp_path / "proj"
    project.mkdir()
    with Client(project, paths=home_paths) as client:
        client.initialize("s1")
        client.save_semantic("Never force-push to main", "quality_rule", 1.0)
        mine = client.build_context(task="git")
    theirs = ops.dispatch_memory_op(
        ops.DirectBackend(), "build_context", ops.resolve_project(str(project)), {"task": "git"}
    )
    assert mine == theirs and "Never force-push to main" in mine["context"]


def test_direct_flag_never_touches_the_socket(
    fake: Callable[[Responder], FakeDaemon], home_paths: paths.Paths, tmp_path: Path
) -> None:
    daemon = fake(lambda request: [ok(request)])
    with Client(tmp_path, paths=home_paths, direct=True) as client:
        assert client.entries()["entries"] == []
        assert client.last_via == "direct"
        with pytest.raises(DaemonUnavailable):
            client.status()
    assert daemon.seen == []


def test_bad_construction_is_refused() -> None:
    with pytest.raises(ValueError):
        Client(timeout=0)
    with pytest.raises(ValueError):
        Client(direct=True, require_daemon=True)


def test_initialize_without_a_session_is_not_retried(
    fake: Callable[[Responder], FakeDaemon], home_paths: paths.Paths
) -> None:
    daemon = fake(lambda request: [])
    with Client(timeout=0.2, retries=3, paths=home_paths) as client:
        with pytest.raises(DaemonTimeout):
            client.initialize(project="/tmp")  # a new session each time: not repeatable
        with pytest.raises(DaemonTimeout):
            client.initialize("s1", project="/tmp")  # repeatable: 1 + 3 attempts
    wait_for(lambda: len(daemon.seen) >= 5, message="the fake to see every attempt")
    assert [r["args"].get("session_id") for _, r in daemon.seen] == [None, "s1", "s1", "s1", "s1"]


def test_daemon_gone_mid_request_falls_back_for_repeatable_reads(
    fake: Callable[[Responder], FakeDaemon], home_paths: paths.Paths, tmp_path: Path
) -> None:
    holder: list[FakeDaemon] = []

    def die(request: dict[str, Any]) -> list[bytes]:
        fcntl.flock(holder[0]._lock_fd, fcntl.LOCK_UN)  # as if the process had exited
        return []

    holder.append(fake(die))
    project = tmp_path / "proj"
    project.mkdir()
    with Client(project, timeout=2.0, retries=1, paths=home_paths) as client:
        assert client.entries() == {"entries": [], "problems": {}}
        assert client.last_via == "direct"
    assert len(holder[0].seen) == 1
