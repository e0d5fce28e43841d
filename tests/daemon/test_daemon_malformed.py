"""Garbage in: a coded error out, a log line, and a daemon that keeps serving."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import zmq
from maestrod_testkit import DaemonHandle, send_frames, wait_for


def reply_of(frames: list[bytes]) -> dict[str, object]:
    reply: dict[str, object] = json.loads(frames[-1])
    return reply


def code_of(reply: dict[str, object]) -> str:
    assert reply["ok"] is False, reply
    error = reply["error"]
    assert isinstance(error, dict) and error["message"]
    code: str = error["code"]
    return code


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"\xff\xfe\x00garbage", "bad_request"),
        (b"{not json", "bad_request"),
        (b"[1, 2, 3]", "bad_request"),
        (b'"a string"', "bad_request"),
        (b"NaN", "bad_request"),
        (b"", "bad_request"),
        (b'{"v": 1, "op": "ping"}', "bad_request"),  # no id
        (b'{"v": 1, "id": 7, "op": "ping"}', "bad_request"),
        (b'{"v": "1", "id": "a", "op": "ping"}', "bad_request"),
        (b'{"v": 1, "id": "a", "op": 3}', "bad_request"),
        (b'{"v": 1, "id": "a", "op": "ping", "args": []}', "bad_request"),
        (b'{"v": 1, "id": "a", "op": "ping", "project": 5}', "bad_request"),
        (b'{"v": 1, "id": "a", "op": "ping", "pid": "me"}', "bad_request"),
        (b'{"v": 1, "id": "a", "op": "ping", "args": {"x": 1}}', "bad_request"),
        (b'{"v": 1, "id": "a", "op": "frobnicate"}', "unknown_op"),
        (b'{"v": 2, "id": "a", "op": "ping"}', "unsupported_version"),
        (b'{"v": 1, "id": "a", "op": "entries"}', "bad_request"),  # needs a project
        (b"[" * 100_000, "bad_request"),
    ],
)
def test_malformed_frame_gets_coded_error(daemon: DaemonHandle, body: bytes, code: str) -> None:
    reply = reply_of(send_frames(daemon.endpoint, [body]))
    assert code_of(reply) == code
    if body.startswith(b'{"v"') and b'"id": "a"' in body:
        assert reply["id"] == "a"  # the id is echoed whenever it could be read
    assert daemon.result("ping")["pong"] is True


def test_random_bytes_never_kill_the_daemon(daemon: DaemonHandle) -> None:
    rng = random.Random(1234)
    for _ in range(200):
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        reply = reply_of(send_frames(daemon.endpoint, [body]))
        assert reply["ok"] is False
    assert daemon.result("ping")["pong"] is True
    assert "bad request" in daemon.log_text()


def test_req_socket_envelope_is_echoed(daemon: DaemonHandle) -> None:
    """A REQ client (empty delimiter frame) is answered too."""
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.REQ)
    sock.linger = 0
    try:
        sock.connect(daemon.endpoint)
        sock.send(json.dumps({"v": 1, "id": "q1", "op": "ping"}).encode())
        assert sock.poll(5000)
        assert json.loads(sock.recv())["id"] == "q1"
    finally:
        sock.close()


# A frame over the size limit: tests/daemon/test_daemon_size.py.


def test_unregistered_project_refused(daemon: DaemonHandle, project: Path) -> None:
    for op, args in [
        ("build_context", {}),
        ("entries", {}),
        ("initialize", {"session_id": "s"}),
        ("save_semantic", {"fact": "Use pnpm", "category": "project_context"}),
        ("log", {}),
    ]:
        reply = daemon.send(op, project, args)
        assert code_of(reply) == "not_registered", op
    assert not (project / ".maestro").exists()  # nothing was written


def test_project_outside_registered_root_refused(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    sub = project / "sub"
    sub.mkdir()
    assert code_of(daemon.send("entries", sub)) == "not_registered"
    assert daemon.send("entries", f"{project}/sub/..")["ok"] is True  # resolved: the project


def test_a_folder_in_place_of_a_memory_file_is_refused_and_daemon_serves(
    daemon: DaemonHandle, project: Path
) -> None:
    # A write that fails inside the writer replies "internal" (tests/reliability's injected
    # faults and full disk); a folder where semantic.md belongs is refused before any write.
    daemon.register(project)
    memory_dir = project / ".maestro" / "memory"
    memory_dir.mkdir(parents=True)
    (memory_dir / "semantic.md").mkdir()
    reply = daemon.request("save_semantic", project, fact="Use pnpm", category="project_context")
    assert code_of(reply) == "unsafe_memory"
    assert "semantic.md" in str(reply["error"])
    assert (memory_dir / "semantic.md").is_dir()  # nothing was put in its place
    assert daemon.result("ping")["pong"] is True
    # The writer re-reads the project after replying: read_error is filled asynchronously.
    read_error = wait_for(
        lambda: daemon.status()["projects"][str(project)]["read_error"],
        message="the refused memory file to show as the project's read_error",
    )
    assert "semantic.md" in read_error
