"""The HTTP door's checks: headers refused for the right reason, and the peer's uid read from
the kernel's TCP table for real loopback connections (this user's, and another user's)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from daemon.http_guard import (
    MAX_BODY,
    Refused,
    check_headers,
    kernel_peer_uid,
    peer_row,
    peer_uid,
)

GOOD = {"host": "127.0.0.1:8765", "content-type": "application/json"}


def _status(headers: dict[str, str], length: int | None = 2) -> int | None:
    try:
        check_headers(headers, 8765, length)
    except Refused as exc:
        return exc.status
    return None


def test_a_local_json_request_passes() -> None:
    assert _status(GOOD) is None
    assert _status({**GOOD, "content-type": "application/json; charset=utf-8"}) is None


@pytest.mark.parametrize(
    ("change", "length", "status"),
    [
        ({"origin": "https://example.com"}, 2, 403),
        ({"origin": "null"}, 2, 403),
        ({"host": "evil.example:8765"}, 2, 403),
        ({"host": "localhost:8765"}, 2, 403),
        ({"host": "127.0.0.1:9999"}, 2, 403),
        ({"content-type": "text/plain"}, 2, 415),
        ({}, None, 411),
        ({}, MAX_BODY + 1, 413),
    ],
)
def test_what_is_refused(change: dict[str, str], length: int | None, status: int) -> None:
    assert _status({**GOOD, **change}, length) == status


def test_a_missing_host_is_refused() -> None:
    assert _status({"content-type": "application/json"}) == 403


def test_the_table_parser_finds_the_client_end() -> None:
    table = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid"
        "  timeout inode\n"
        "   0: 0100007F:2231 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000"
        "        0 4711 1 0000000000000000 20 4 30 10 -1\n"
        "   1: 0100007F:D431 0100007F:2231 01 00000000:00000000 00:00000000 00000000  1001"
        "        0 4712 1 0000000000000000 20 4 30 10 -1\n"
    )
    assert peer_uid(table, 0x2231, 0xD431) == 1001
    assert peer_row(table, 0x2231, 0xD431) == (1001, 4712)
    assert peer_uid(table, 0x2231, 0x1234) is None


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    yield server
    server.close()


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="Linux's TCP table only")
def test_the_kernel_names_this_user_as_the_peer(listener: socket.socket) -> None:
    client = socket.create_connection(listener.getsockname(), timeout=5)
    conn, (_, client_port) = listener.accept()
    try:
        assert kernel_peer_uid(listener.getsockname()[1], client_port) == os.getuid()
    finally:
        conn.close()
        client.close()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root")
@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="Linux's TCP table only")
def test_the_kernel_names_another_user_as_the_peer(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    code = (
        "import socket,sys\n"
        f"s=socket.create_connection(('127.0.0.1',{port}),timeout=5)\n"
        "sys.stdin.read()\n"
    )
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    child = subprocess.Popen([*nobody, sys.executable, "-c", code], stdin=subprocess.PIPE)
    try:
        listener.settimeout(10)
        conn, (_, client_port) = listener.accept()
        try:
            uid = kernel_peer_uid(port, client_port)
            assert uid is not None and uid != os.getuid()
            assert uid == int(subprocess.check_output(["id", "-u", "nobody"]))
        finally:
            conn.close()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(10)
