"""Issue 33 point 7, the daemon's side: a request frame over the limit is answered
``too_large`` within a second (its id echoed, nothing applied), through the real socket, from a
pyzmq DEALER and from the standard library's ZMTP client (``client/_zmtp.py``) alike."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import zmq
from maestrod_testkit import DaemonHandle

from maestro_memory.client._zmtp import ZmtpDealer, ipc_path
from maestro_memory.common.limits import MESSAGE_MAX_BYTES, RECEIVE_MAX_BYTES


def _oversized_save(project: Path, req_id: str, size: int) -> bytes:
    body: dict[str, Any] = {
        "v": 1,
        "id": req_id,
        "op": "save_semantic",
        "project": str(project),
        "args": {"fact": "", "category": "project_context"},
    }
    body["args"]["fact"] = "Use pnpm " + "x" * (size - len(json.dumps(body)) - 9)
    frame = json.dumps(body).encode()
    assert len(frame) == size
    return frame


def _assert_too_large(reply: dict[str, Any], req_id: str, elapsed: float, size: int) -> None:
    assert reply["ok"] is False and reply["id"] == req_id, reply
    assert reply["error"]["code"] == "too_large"
    message = reply["error"]["message"]
    assert f"{size:,} bytes" in message and f"{MESSAGE_MAX_BYTES:,} bytes" in message
    assert elapsed < 1.0, f"the error took {elapsed:.2f} s"  # the bound (~50x margin)


def _nothing_saved(daemon: DaemonHandle, project: Path) -> None:
    assert daemon.result("entries", project)["entries"] == []
    assert daemon.result("ping")["pong"] is True


def test_a_frame_over_the_limit_gets_too_large_from_pyzmq(
    daemon: DaemonHandle, project: Path
) -> None:
    daemon.register(project)
    size = MESSAGE_MAX_BYTES + 1
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    try:
        sock.connect(daemon.endpoint)
        started = time.monotonic()
        sock.send(_oversized_save(project, "big-1", size))
        assert sock.poll(5000), "no reply: the frame was dropped"
        reply = json.loads(sock.recv())
        _assert_too_large(reply, "big-1", time.monotonic() - started, size)
    finally:
        sock.close()
    _nothing_saved(daemon, project)
    assert "too_large" in daemon.log_text()


def test_a_frame_over_the_limit_gets_too_large_from_the_light_client(
    daemon: DaemonHandle, project: Path
) -> None:
    daemon.register(project)
    size = 4 * MESSAGE_MAX_BYTES  # a 4 MiB fact: well past the limit, under the ceiling
    path = ipc_path(daemon.endpoint)
    assert path is not None
    dealer = ZmtpDealer(path, 5.0)
    try:
        started = time.monotonic()
        dealer.send(_oversized_save(project, "big-2", size), 5.0)
        frames = dealer.recv(time.monotonic() + 5.0)
        _assert_too_large(json.loads(frames[-1]), "big-2", time.monotonic() - started, size)
        # The same connection still serves.
        dealer.send(json.dumps({"v": 1, "id": "p", "op": "ping"}).encode(), 5.0)
        assert json.loads(dealer.recv(time.monotonic() + 5.0)[-1])["result"]["pong"] is True
    finally:
        dealer.close()
    _nothing_saved(daemon, project)


def test_a_frame_just_under_the_limit_is_decoded(daemon: DaemonHandle, project: Path) -> None:
    # Under the frame limit the request is read: its fact is over the fact cap, said as such.
    daemon.register(project)
    frame = _oversized_save(project, "near", MESSAGE_MAX_BYTES - 1)
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    try:
        sock.connect(daemon.endpoint)
        sock.send(frame)
        assert sock.poll(5000)
        reply = json.loads(sock.recv())
    finally:
        sock.close()
    assert reply["error"]["code"] == "too_large" and "4,000" in reply["error"]["message"]
    _nothing_saved(daemon, project)


def test_past_the_receive_ceiling_the_connection_is_closed_and_the_daemon_serves(
    daemon: DaemonHandle,
) -> None:
    # Past RECEIVE_MAX_BYTES libzmq closes the connection unread (a bound on the memory a
    # peer can make the daemon hold): no reply, and the daemon goes on serving.
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    try:
        sock.connect(daemon.endpoint)
        sock.send(b"x" * (RECEIVE_MAX_BYTES + 1))
        assert not sock.poll(500)
    finally:
        sock.close()
    assert daemon.result("ping")["pong"] is True
