"""SIGTERM with requests in flight: every request the daemon received gets a reply.

Eight client threads, each on its own DEALER socket, pipeline writes to a real daemon. Each
then sends a ``ping``: the ROUTER delivers one peer's messages in order, so the ping's answer
proves the daemon has read every write that client sent before it. Once every client has its
ping answer, SIGTERM goes out and each client sends more writes at once. Checked:

* every write sent before the signal is acknowledged ``ok`` (none refused, none unanswered)
  and is in the files afterwards;
* a write sent after the signal is answered ``ok`` (then it is in the files; the daemon may
  read it before it handles the signal) or ``shutting_down`` (then it is not), or not at all
  only if the daemon had already closed its socket;
* the daemon exits 0 without "did not drain".
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zmq
from maestrod_testkit import DaemonFactory, wait_for

from maestro_memory.core import MemoryStore

CLIENTS = 8
BEFORE = 15  # writes per client before the signal
AFTER = 10  # writes per client after it


def fact_text(client: int, phase: str, i: int) -> str:
    """Distinct words per write, so no two facts are taken for the same rule."""
    return f"k{client}{phase}{i}x k{client}{phase}{i}y k{client}{phase}{i}z"


class Writer(threading.Thread):
    def __init__(
        self,
        n: int,
        endpoint: str,
        project: Path,
        go_on: threading.Event,
        exited: Callable[[], bool],
    ) -> None:
        super().__init__(name=f"client-{n}", daemon=True)
        self.n, self.endpoint, self.project, self.go_on = n, endpoint, project, go_on
        self.exited = exited
        self.sent_before: list[str] = []
        self.sent_after: list[str] = []
        self.replies: dict[str, dict[str, Any]] = {}
        self.barrier_passed = threading.Event()
        self.error: BaseException | None = None

    def body(self, rid: str, fact: str) -> bytes:
        return json.dumps(
            {
                "v": 1,
                "id": rid,
                "op": "save_semantic",
                "project": str(self.project),
                "args": {"fact": fact, "category": "project_context", "confidence": 0.9},
            }
        ).encode()

    def run(self) -> None:
        ctx = zmq.Context()
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        try:
            sock.connect(self.endpoint)
            for i in range(BEFORE):
                rid = f"c{self.n}-b{i}"
                sock.send(self.body(rid, fact_text(self.n, "b", i)))
                self.sent_before.append(rid)
            sock.send(json.dumps({"v": 1, "id": f"c{self.n}-ping", "op": "ping"}).encode())
            self._collect(sock, until=lambda: f"c{self.n}-ping" in self.replies)
            self.barrier_passed.set()
            self.go_on.wait(60)
            for i in range(AFTER):
                rid = f"c{self.n}-a{i}"
                sock.send(self.body(rid, fact_text(self.n, "a", i)))
                self.sent_after.append(rid)
            total = len(self.sent_before) + len(self.sent_after) + 1
            self._collect(sock, until=lambda: len(self.replies) >= total, after_exit=True)
        except BaseException as exc:  # reported to the test
            self.error = exc
        finally:
            sock.close(linger=0)
            ctx.term()

    def _collect(self, sock: Any, until: Any, after_exit: bool = False) -> None:
        """Receive until ``until()``; with ``after_exit``, also stop once the daemon process
        has exited and nothing more arrives (what is missing then was never read by it)."""
        deadline = time.monotonic() + 120
        while not until():
            if time.monotonic() > deadline:
                raise TimeoutError(f"client {self.n}: {len(self.replies)} replies")
            gone = after_exit and self.exited()  # checked before the poll: no race
            if sock.poll(2000):
                reply = json.loads(sock.recv())
                self.replies[reply["id"]] = reply
            elif gone:
                return


def test_sigterm_answers_every_request_received(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    daemon = daemon_factory()
    daemon.register(project)
    go_on = threading.Event()
    exited = lambda: daemon.proc.poll() is not None  # noqa: E731
    clients = [Writer(n, daemon.endpoint, project, go_on, exited) for n in range(CLIENTS)]
    for c in clients:
        c.start()
    wait_for(
        lambda: all(c.barrier_passed.is_set() or c.error for c in clients),
        timeout=120,
        message="every client's writes to be read by the daemon",
    )
    assert [c.error for c in clients if c.error] == []
    daemon.signal(signal.SIGTERM)
    go_on.set()
    for c in clients:
        c.join(180)
    assert daemon.proc.wait(60) == 0
    assert [c.error for c in clients if c.error] == []
    log = daemon.log_text()
    assert "did not drain" not in log
    assert "stopping (received SIGTERM)" in log

    facts = {e.text for e in MemoryStore(project).semantic_entries()}
    acked_before = refused_after = acked_after = 0
    for c in clients:
        for rid in c.sent_before:
            reply = c.replies.get(rid)
            assert reply is not None, f"{rid} was received before SIGTERM but got no reply"
            assert reply["ok"], reply
            assert reply["result"]["entry"]["text"] in facts, f"{rid} acknowledged, not on disk"
            acked_before += 1
        for i, rid in enumerate(c.sent_after):
            fact = fact_text(c.n, "a", i)
            reply = c.replies.get(rid)
            if reply is None:
                assert fact not in facts
            elif reply["ok"]:
                assert fact in facts, f"{rid} acknowledged, not on disk"
                acked_after += 1
            else:
                assert reply["error"]["code"] == "shutting_down", reply
                assert fact not in facts, f"{rid} refused but applied"
                refused_after += 1
    assert acked_before == CLIENTS * BEFORE
    # How many writes sent after the signal were read before the socket closed depends on
    # the race with the exit: reported, not asserted.
    print(f"after SIGTERM: {acked_after} acknowledged, {refused_after} shutting_down")
