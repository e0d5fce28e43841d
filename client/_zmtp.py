"""A DEALER that speaks ZMTP 3 (RFC 23/ZMTP, NULL mechanism) over a Unix socket, in the standard
library: the wire of the processes every agent session starts (the hooks, ``maestroctl mcp``).

Why not pyzmq there: ``import zmq`` costs those short-lived processes about as much as the
interpreter's own start (~30 ms of ~60 on this kind of machine) and they send a handful of
requests to one peer. Everything else -- the daemon, ``maestroctl``, the UI -- uses pyzmq; the
daemon's ROUTER cannot tell the two apart (the tests run both against the real daemon).

What it does: connect to the ``ipc://`` path; send our greeting (signature, version 3.1,
mechanism NULL, as client) and read the peer's; send READY with ``Socket-Type: DEALER``; read
the peer's READY (or its ERROR: the daemon's ZAP handler refused us). Then each message is one
frame out, and frames in until one without the MORE flag. Commands that arrive between messages
(PING) are read and dropped. Any deviation raises ``ZmtpError``; a timeout raises
``TimeoutError`` (``socket.timeout``); the caller drops the connection and starts over.
"""

from __future__ import annotations

import select
import socket
import struct
import time

SIGNATURE = b"\xff" + b"\x00" * 8 + b"\x7f"
GREETING = SIGNATURE + b"\x03\x01" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31
MORE, LONG, COMMAND = 0x01, 0x02, 0x04
MAX_FRAME = 16 << 20  # a reply larger than this is not one of ours


class ZmtpError(OSError):
    """The peer broke the protocol or refused us."""


class ZmtpClosed(ZmtpError):
    """The peer hung up."""


def ipc_path(endpoint: str) -> str | None:
    """The file system path of an ``ipc://`` endpoint, None for any other transport."""
    if not endpoint.startswith("ipc://"):
        return None
    path = endpoint.removeprefix("ipc://")
    return "\0" + path[1:] if path.startswith("@") else path


def _frame(flags: int, body: bytes) -> bytes:
    if len(body) < 256:
        return bytes((flags, len(body))) + body
    return bytes((flags | LONG,)) + struct.pack(">Q", len(body)) + body


def _ready(socket_type: bytes) -> bytes:
    prop = b"\x0bSocket-Type" + struct.pack(">I", len(socket_type)) + socket_type
    return _frame(COMMAND, b"\x05READY" + prop)


class ZmtpDealer:
    """One connection to a ROUTER. ``send`` one frame; ``recv`` the next message's frames."""

    def __init__(self, path: str, timeout: float) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._buf = bytearray()
        try:
            self._sock.settimeout(timeout)
            self._sock.connect(path)
            self._sock.sendall(GREETING + _ready(b"DEALER"))
            greeting = self._take(64)
            if greeting[:1] != b"\xff" or greeting[9:10] != b"\x7f" or greeting[10] < 3:
                raise ZmtpError("the peer does not speak ZMTP 3")
            if greeting[12:32].rstrip(b"\x00") != b"NULL":
                raise ZmtpError("the peer wants a security mechanism other than NULL")
            flags, body = self._read_frame()
            if not flags & COMMAND:
                raise ZmtpError("the peer sent a message before its READY")
            name = body[1 : 1 + body[0]] if body else b""
            if name == b"ERROR":
                reason = body[7 : 7 + body[6]] if len(body) > 6 else b""
                raise ZmtpError(
                    f"the peer refused the connection: {reason.decode(errors='replace')}"
                )
            if name != b"READY":
                raise ZmtpError(f"the peer sent {name!r} instead of READY")
        except BaseException:
            self._sock.close()
            raise

    def close(self) -> None:
        self._sock.close()

    def alive(self) -> bool:
        """False when the peer has closed the connection (one non-blocking peek; a kept
        connection is checked before it is used again)."""
        try:
            readable, _, _ = select.select([self._sock], [], [], 0)
            if not readable:
                return True  # nothing pending: open
            # (MSG_DONTWAIT alone would not do: with a timeout set, Python waits for it first.)
            return self._sock.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

    def send(self, data: bytes, timeout: float) -> None:
        self._sock.settimeout(max(0.001, timeout))
        self._sock.sendall(_frame(0, data))

    def recv(self, deadline: float) -> list[bytes]:
        """The next message (its frames), waiting until ``deadline`` (``time.monotonic()``)."""
        parts: list[bytes] = []
        while True:
            flags, body = self._read_frame(deadline)
            if flags & COMMAND:
                continue  # PING and the like: nothing a one-shot client needs to answer
            parts.append(body)
            if not flags & MORE:
                return parts

    def _read_frame(self, deadline: float | None = None) -> tuple[int, bytes]:
        head = self._take(2, deadline)
        flags = head[0]
        if flags & LONG:
            size = struct.unpack(">Q", bytes(head[1:2]) + self._take(7, deadline))[0]
        else:
            size = head[1]
        if size > MAX_FRAME:
            raise ZmtpError(f"the peer sent a frame of {size} bytes")
        return flags, self._take(size, deadline)

    def _take(self, n: int, deadline: float | None = None) -> bytes:
        while len(self._buf) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no reply in time")
                self._sock.settimeout(left)
            chunk = self._sock.recv(max(65536, n - len(self._buf)))
            if not chunk:
                raise ZmtpClosed("the peer closed the connection")
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out
