"""The maestrod test kit: start a real daemon, talk protocol v1 to it with raw pyzmq.

Shared by ``tests/conftest.py`` (the ``daemon`` fixtures) and the daemon tests. Deliberately
independent of the client library.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import zmq

from maestro_memory.common import paths as daemon_paths

# Hang guards, not speed limits: a daemon start or a drained stop on a loaded machine (two
# suite copies and a CPU hog on 2 cores) took more than 20 s; speed lives in bench/.
START_TIMEOUT = 120.0
STOP_TIMEOUT = 60.0
_ids = itertools.count(1)


class DaemonGone(RuntimeError):
    """The daemon process exited while a test waited for it."""


def wait_for(
    condition: Callable[[], Any],
    timeout: float = 10.0,
    interval: float = 0.02,
    message: str = "condition",
) -> Any:
    """Poll ``condition`` until it returns something truthy; fail the test at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.1f}s waiting for {message}")
        time.sleep(interval)


def raw_request(
    endpoint: str,
    op: str,
    project: str | None = None,
    args: Mapping[str, Any] | None = None,
    *,
    timeout: float = 10.0,
    context: zmq.Context[Any] | None = None,
) -> dict[str, Any]:
    """One request over a fresh DEALER socket; returns the decoded reply."""
    ctx = context or zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    try:
        sock.connect(endpoint)
        body: dict[str, Any] = {
            "v": 1,
            "id": f"t{next(_ids)}",
            "op": op,
            "args": dict(args or {}),
            "pid": os.getpid(),
        }
        if project is not None:
            body["project"] = project
        sock.send(json.dumps(body).encode())
        if not sock.poll(int(timeout * 1000)):
            raise TimeoutError(f"no reply to {op!r} within {timeout}s")
        reply: dict[str, Any] = json.loads(sock.recv())
        assert reply["id"] == body["id"], reply
        return reply
    finally:
        sock.close()


def send_frames(endpoint: str, frames: list[bytes], *, timeout: float = 5.0) -> list[bytes]:
    """Send raw frames (malformed on purpose) and return the reply frames."""
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    try:
        sock.connect(endpoint)
        sock.send_multipart(frames)
        if not sock.poll(int(timeout * 1000)):
            raise TimeoutError("no reply")
        return list(sock.recv_multipart())
    finally:
        sock.close()


@dataclass
class DaemonHandle:
    home: Path
    paths: daemon_paths.Paths
    proc: subprocess.Popen[bytes]
    env: dict[str, str]
    stderr_path: Path
    _sock: zmq.Socket[Any] | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return self.paths.endpoint

    def _socket(self) -> zmq.Socket[Any]:
        if self._sock is None:
            sock: zmq.Socket[Any] = zmq.Context.instance().socket(zmq.DEALER)
            sock.linger = 0
            sock.connect(self.endpoint)
            self._sock = sock
        return self._sock

    def _reset(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def send(
        self,
        op: str,
        project: str | os.PathLike[str] | None = None,
        args: Mapping[str, Any] | None = None,
        *,
        timeout: float = 15.0,
        **envelope: Any,
    ) -> dict[str, Any]:
        """A request; ``envelope`` overrides fields (``v=2`` …). Returns the whole reply."""
        body: dict[str, Any] = {
            "v": 1,
            "id": f"r{next(_ids)}",
            "op": op,
            "args": dict(args or {}),
            "pid": os.getpid(),
        }
        if project is not None:
            body["project"] = os.fspath(project)
        body.update(envelope)
        sock = self._socket()
        sock.send(json.dumps(body).encode())
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not sock.poll(int(remaining * 1000)):
                self._reset()  # a late reply must not be read as the next one's
                if self.proc.poll() is not None:
                    raise DaemonGone(
                        f"maestrod exited with {self.proc.returncode}: {self.stderr_text()[-2000:]}"
                    )
                raise TimeoutError(f"no reply to {op!r} within {timeout}s")
            reply: dict[str, Any] = json.loads(sock.recv())
            if reply.get("id") == body["id"]:
                return reply

    def request(
        self, op: str, project: str | os.PathLike[str] | None = None, **args: Any
    ) -> dict[str, Any]:
        """``request("save_semantic", proj, fact=..., category=...)`` -> the reply dict."""
        return self.send(op, project, args)

    def result(
        self, op: str, project: str | os.PathLike[str] | None = None, **args: Any
    ) -> dict[str, Any]:
        """Like ``request`` but asserts success and returns ``reply["result"]``."""
        reply = self.send(op, project, args)
        assert reply["ok"], reply
        result: dict[str, Any] = reply["result"]
        return result

    def register(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        return self.result("register", path=os.fspath(path))

    def status(self) -> dict[str, Any]:
        return self.result("status")

    def stderr_text(self) -> str:
        """Its stderr, and its log file (where the lines go when not under systemd)."""
        try:
            text = self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            text = ""
        return text + self.log_text()

    def log_text(self) -> str:
        try:
            return self.paths.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM and wait; SIGKILL if it does not exit in time. Returns the exit code."""
        self._reset()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self) -> None:
        self._reset()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def spawn_daemon(
    home: Path,
    env: Mapping[str, str] | None = None,
    argv_prefix: list[str] | None = None,
    python: str | None = None,
) -> tuple[subprocess.Popen[bytes], Path, dict[str, str]]:
    """Start ``maestrod`` for ``home`` without waiting for it (``python``: another
    interpreter's installed copy, e.g. the wheel's in the e2e tests)."""
    full_env = dict(os.environ)
    full_env["MAESTRO_HOME"] = str(home)
    full_env.pop("NOTIFY_SOCKET", None)
    # Not under a service manager unless a test says so (the runner itself may be one's child).
    for name in ("INVOCATION_ID", "JOURNAL_STREAM", "XPC_SERVICE_NAME", "MAESTRO_STARTED_BY"):
        full_env.pop(name, None)
    full_env.update(env or {})
    home.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="maestrod-stderr-", dir=str(home.parent))
    os.close(fd)  # reopened below; kept open, one descriptor leaked per daemon started
    stderr_path = Path(name)
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            [*(argv_prefix or []), python or sys.executable, "-m", "maestro_memory.daemon"],
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
        )
    return proc, stderr_path, full_env


def wait_ready(handle: DaemonHandle, timeout: float = START_TIMEOUT) -> None:
    """Until a ``hello`` is answered (or the process dies).

    Each attempt waits longer than the last (0.5 s doubling to 5 s): with a fixed 0.5 s, a
    loaded machine where one round trip took longer never got an answer (each retry is a
    fresh socket, so a late reply to the previous one is lost)."""
    deadline = time.monotonic() + timeout
    attempt = 0.5
    while True:
        if handle.proc.poll() is not None:
            raise DaemonGone(
                f"maestrod exited with {handle.proc.returncode} during start: "
                f"{handle.stderr_text()[-3000:]}"
            )
        try:
            reply = raw_request(handle.endpoint, "hello", timeout=attempt)
        except TimeoutError:
            reply = None
        attempt = min(attempt * 2, 5.0)
        if reply is not None and reply.get("ok"):
            return
        if time.monotonic() > deadline:
            handle.kill()
            raise TimeoutError(
                f"maestrod not ready after {timeout}s: {handle.stderr_text()[-3000:]}"
            )


DaemonFactory = Callable[..., DaemonHandle]
