"""The ROUTER side of the main thread: who may connect, each request to its handler, each reply
out (with its metrics).

Every new connection is authenticated on the ZAP socket (libzmq asks it; we accept only the uid
that owns the daemon -- libzmq puts ``<host>:<uid>:<gid>:<pid>`` of an ipc peer, from
``SO_PEERCRED``, in the request's address), and each message's ``Peer-Address`` is checked
again, so a connection that somehow skipped ZAP is still refused. A request is decoded, checked
against the op table and handed to its handler (``daemon/handlers.py``); a handler that queued
a write returns None and the writer's reply comes back through the server (``send``).

Only the main thread calls this (ZeroMQ sockets are not thread-safe); the server owns the
lifecycle (the poll loop, signals, the shutdown drain).
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections.abc import Callable
from typing import Any

import zmq

from ..common.ops import check_args
from ..common.protocol import (
    BAD_REQUEST,
    INTERNAL,
    SHUTTING_DOWN,
    UNKNOWN_OP,
    OpError,
    decode_request,
    error_reply,
    ok_reply,
    request_id,
)
from . import handlers
from .metrics import Metrics
from .registry import Registry

log = logging.getLogger("maestrod")

BURST = 64  # messages handled from one socket before looking at the others


def peer_uid(address: str) -> int | None:
    """The uid in a libzmq ipc peer address: ``host:uid:gid:pid`` (Linux ``SO_PEERCRED``)
    or ``host:uid:gid:`` (BSD/macOS ``LOCAL_PEERCRED``). None when absent."""
    parts = address.rsplit(":", 3)
    if len(parts) != 4:
        return None
    try:
        return int(parts[1])
    except ValueError:
        return None


class Routing:
    """The ZAP and ROUTER sockets' work: peer checks, dispatch, replies."""

    def __init__(
        self,
        zap: zmq.Socket[Any],
        metrics: Metrics,
        ops: dict[str, handlers.DaemonOpSpec],
        registry: Registry,
        services: handlers.Services,
        stopping: Callable[[], bool],
    ) -> None:
        self.uid = os.getuid()
        self.zap = zap
        self.metrics = metrics
        self.ops = ops
        self.registry = registry
        self.services = services
        self.stopping = stopping
        self.router: zmq.Socket[Any] | None = None  # bound by the server at start

    # -- peers -----------------------------------------------------------------------------
    def handle_zap(self) -> None:
        frames = self.zap.recv_multipart()
        version, sequence = frames[0], frames[1]
        address = frames[3].decode("utf-8", "replace") if len(frames) > 3 else ""
        uid = peer_uid(address)
        if uid == self.uid:
            self.zap.send_multipart([version, sequence, b"200", b"OK", str(uid).encode(), b""])
            return
        log.warning(
            "refused a connection from %s: uid %s is not the owner (uid %d)",
            address or "an unknown peer",
            "unknown" if uid is None else uid,
            self.uid,
        )
        self.zap.send_multipart(
            [version, sequence, b"400", b"only the owning user may connect", b"", b""]
        )

    def _peer_allowed(self, frame: zmq.Frame) -> bool:
        try:
            address = frame.get("Peer-Address")
        except zmq.ZMQError:
            address = ""
        uid = peer_uid(str(address))
        if uid == self.uid:
            return True
        log.warning("dropped a message from %s: not the owning uid", address or "unknown peer")
        return False

    # -- requests ----------------------------------------------------------------------------
    def handle_requests(self) -> bool:
        """Handle up to BURST requests; True if there may be more waiting."""
        assert self.router is not None
        for _ in range(BURST):
            try:
                frames = self.router.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return False
            started = time.monotonic()
            if len(frames) < 2 or not self._peer_allowed(frames[-1]):
                continue
            route = tuple(f.bytes for f in frames[:-1])
            self._handle_one(route, frames[-1].bytes, started)
        return True

    def _handle_one(self, route: tuple[bytes, ...], body: bytes, started: float) -> None:
        try:
            request = decode_request(body)
        except OpError as exc:
            log.warning("bad request (%s): %s", exc.code, exc.message)
            self.send(
                route,
                error_reply(request_id(body), exc.code, exc.message),
                "(undecodable)",
                started,
                ok=False,
            )
            return
        op = request.op
        try:
            if self.stopping():
                raise OpError(SHUTTING_DOWN, "the daemon is shutting down")
            spec = self.ops.get(op)
            if spec is None:
                # (reliability) Metrics and status are keyed by op: never by a client's string.
                name, op = op, "(unknown op)"
                raise OpError(
                    UNKNOWN_OP,
                    f"unknown op {name[:100]!r}; known ops: {', '.join(sorted(self.ops))}",
                )
            check_args(spec.args, request.args)
            project = handlers.resolve_scope(spec, request, self.registry.projects())
            call = handlers.Call(self.services, request, project, route, started)
            result = spec.handler(call)
        except OpError as exc:
            if exc.code in (BAD_REQUEST, UNKNOWN_OP):
                log.warning("%s %s: %s", op, exc.code, exc.message)
            self.send(route, error_reply(request.id, exc.code, exc.message), op, started, ok=False)
            return
        except Exception:
            log.error("internal error in %s:\n%s", op, traceback.format_exc().rstrip())
            self.send(
                route,
                error_reply(request.id, INTERNAL, f"internal error in {op}; see the daemon log"),
                op,
                started,
                ok=False,
            )
            return
        if result is not None:
            self.send(route, ok_reply(request.id, result), op, started, ok=True)

    def send(
        self, route: tuple[bytes, ...], reply: bytes, op: str, started: float, *, ok: bool
    ) -> None:
        assert self.router is not None
        self.metrics.record(op, time.monotonic() - started, ok, None if ok else _error_code(reply))
        try:
            self.router.send_multipart([*route, reply], zmq.NOBLOCK)
        except zmq.ZMQError as exc:
            # EHOSTUNREACH (ROUTER_MANDATORY): the client went away; EAGAIN: it stopped reading.
            log.info("reply to %s not delivered: %s", op, exc.strerror)


def _error_code(reply: bytes) -> str:
    """The code of an error reply (failures are rare: parsing one costs nothing that matters)."""
    try:
        code = json.loads(reply)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return INTERNAL
    return code if isinstance(code, str) else INTERNAL
