"""The checks a request to the loopback HTTP door must pass before any op runs (issue 36).

Pure functions over what the listener saw: the request's headers and the kernel's TCP table
(Linux ``/proc/net/tcp``, ``/proc/net/tcp6``), called by the door (``daemon/http_door/``)
for every connection and request. The rules:

* no ``Origin`` header (a browser page sends one: refused, whatever it says);
* ``Host`` is exactly the loopback address and port the door listens on (DNS rebinding);
* ``Content-Type`` is JSON, and the body is at most ``MAX_BODY`` bytes;
* the peer is this user: the uid that owns the connection's client end, from the kernel;
* an MCP session without ``?project=`` serves the project of the peer process's working
  directory (``socket_owner_cwd``), as a stdio server started by that tool would.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

MAX_BODY = 1 << 20  # bytes: a hook's input is bounded the same way (hooks.MAX_STDIN)
LOOPBACK = "127.0.0.1"


class Refused(Exception):
    """A request the door does not serve: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def check_headers(headers: Mapping[str, str], port: int, length: int | None) -> None:
    """Raise ``Refused`` unless the headers (names lower-cased) are those of a local tool's
    JSON request to ``LOOPBACK:port`` with a body of ``length`` bytes."""
    check_address(headers, port)
    check_body(headers, length)


def check_address(headers: Mapping[str, str], port: int) -> None:
    """Every request: no ``Origin``, and ``Host`` is exactly ``LOOPBACK:port``."""
    if "origin" in headers:
        raise Refused(403, "requests from a web page (an Origin header) are refused")
    if headers.get("host", "") != f"{LOOPBACK}:{port}":
        raise Refused(403, f"the Host header must be {LOOPBACK}:{port}")


def check_body(headers: Mapping[str, str], length: int | None) -> None:
    """A request with a body: JSON, its length given and at most ``MAX_BODY`` bytes."""
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise Refused(415, "the body must be JSON (Content-Type: application/json)")
    if length is None:
        raise Refused(411, "a Content-Length header is required")
    if length < 0 or length > MAX_BODY:
        raise Refused(413, f"the body must be at most {MAX_BODY} bytes")


def _endpoint(field: str) -> tuple[str, int] | None:
    """``0100007F:1F90`` (hex address as the kernel stores it, hex port) -> (hex, port)."""
    address, _, port = field.partition(":")
    try:
        return address.upper(), int(port, 16)
    except ValueError:
        return None


def peer_row(table: str, server_port: int, client_port: int) -> tuple[int, int] | None:
    """(uid, socket inode) of the client end of a loopback connection to ``server_port`` from
    ``client_port``, from the text of ``/proc/net/tcp`` or ``tcp6``; None when not found. The
    client end is the row whose local port is ``client_port`` and whose remote port is
    ``server_port``."""
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10:
            continue
        local, remote = _endpoint(fields[1]), _endpoint(fields[2])
        if local is None or remote is None:
            continue
        if local[1] == client_port and remote[1] == server_port:
            try:
                return int(fields[7]), int(fields[9])
            except ValueError:
                return None
    return None


def peer_uid(table: str, server_port: int, client_port: int) -> int | None:
    """The uid of ``peer_row``."""
    row = peer_row(table, server_port, client_port)
    return None if row is None else row[0]


def kernel_peer(server_port: int, client_port: int) -> tuple[int, int] | None:
    """``peer_row`` over this machine's TCP tables (Linux); None where there are none."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name, encoding="ascii") as table:
                row = peer_row(table.read(), server_port, client_port)
        except OSError:
            continue
        if row is not None:
            return row
    return None


def kernel_peer_uid(server_port: int, client_port: int) -> int | None:
    row = kernel_peer(server_port, client_port)
    return None if row is None else row[0]


def socket_owner_cwd(inode: int, uid: int) -> str | None:
    """The working directory of this user's process that holds the socket ``inode`` (Linux
    ``/proc``), None when none is found: what a stdio server the tool started would have
    inherited. One pass over the processes of ``uid``; called once per MCP session."""
    wanted = f"socket:[{inode}]"
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == wanted:
                    return os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
    return None
