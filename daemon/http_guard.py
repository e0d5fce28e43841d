"""The checks a request to the loopback HTTP door must pass before any op runs (issue 36).

Pure functions over what the listener saw: the request's headers and the kernel's TCP table
(Linux ``/proc/net/tcp``, ``/proc/net/tcp6``), called by the door (``daemon/http_door.py``)
for every connection and request. The rules:

* no ``Origin`` header (a browser page sends one: refused, whatever it says);
* ``Host`` is exactly the loopback address and port the door listens on (DNS rebinding);
* ``Content-Type`` is JSON, and the body is at most ``MAX_BODY`` bytes;
* the peer is this user: the uid that owns the connection's client end, from the kernel.
"""

from __future__ import annotations

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


def peer_uid(table: str, server_port: int, client_port: int) -> int | None:
    """The uid owning the client end of a loopback connection to ``server_port`` from
    ``client_port``, from the text of ``/proc/net/tcp`` or ``tcp6``; None when not found.
    The client end is the row whose local port is ``client_port`` and whose remote port is
    ``server_port``."""
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 8:
            continue
        local, remote = _endpoint(fields[1]), _endpoint(fields[2])
        if local is None or remote is None:
            continue
        if local[1] == client_port and remote[1] == server_port:
            try:
                return int(fields[7])
            except ValueError:
                return None
    return None


def kernel_peer_uid(server_port: int, client_port: int) -> int | None:
    """``peer_uid`` over this machine's TCP tables (Linux); None where there are none."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name, encoding="ascii") as table:
                uid = peer_uid(table.read(), server_port, client_port)
        except OSError:
            continue
        if uid is not None:
            return uid
    return None
