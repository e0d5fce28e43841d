"""The loopback HTTP door (issue 36): agents reach the daemon without starting a process.

One listening socket on ``127.0.0.1:<port>`` (``common/httpdoor.py``: the port, the paths, the
record of the port in the runtime dir), an accept thread, and one thread per connection, at
most ``MAX_CONNECTIONS`` (more are answered 503 and closed). Every connection and request
passes ``http_guard`` first:

* the peer is this user: the uid that owns the connection's client end, from the kernel
  (Linux ``/proc/net/tcp``); another user's connection is closed before a byte is read. Where
  the kernel does not say (no ``/proc/net/tcp``), the door does not open;
* no ``Origin`` (a browser page), a ``Host`` of exactly ``127.0.0.1:<port>`` (DNS rebinding),
  a JSON body of at most ``MAX_BODY`` bytes with its ``Content-Length``.

What passes is answered by the same code as the other doors, as a client of the daemon's own
socket: the writer still serialises every write, and the answers are those of the command
hooks and ``maestroctl mcp`` by construction.

* ``POST /mcp[?project=DIR]``: MCP's streamable HTTP transport (without ``?project=``, the
  project at or above the connecting process's working directory, read from ``/proc``),
  JSON responses (no SSE stream: ``GET`` is 405), one ``McpServer``
  (``client/integrations/mcp_server.py``) per MCP session, named by the ``Mcp-Session-Id``
  header of the ``initialize`` response; at most ``MAX_SESSIONS``, the least recently used
  dropped first (its client then gets 404 and initializes again, as the transport says).
  ``DELETE /mcp`` ends a session.
* ``POST /hook/<tool>/<event>``: the hook's JSON, answered with what ``maestroctl hook <tool>
  <event>`` prints (``hooks.answer_http``), ``{}`` when that is nothing.

The request handling (``handler.py``, with ``http.server``) is imported on the first
connection and the client side (``Client``, the MCP server, the hook runtime) on the first
request that needs it, so an idle daemon carries neither.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...common import httpdoor
from ...common.atomic import write_atomic
from ...common.httpdoor import default_port
from ...common.paths import Paths
from ..config import Config
from ..http_guard import LOOPBACK, kernel_peer

if TYPE_CHECKING:
    from ...client.integrations.mcp_server import McpServer

log = logging.getLogger("maestrod")

MAX_CONNECTIONS = 32  # connection threads at once; the next is answered 503
MAX_SESSIONS = 64  # MCP sessions kept; the least recently used goes first
IDLE_SECONDS = 30.0  # a kept-alive connection that sends nothing for this long is closed


class _Session:
    """One MCP session: its server (and the server's ``Client``), used by one request at a
    time (a client may send several at once; ``Client`` is not thread-safe)."""

    def __init__(self, server: McpServer, closer: Any) -> None:
        self.server = server
        self.closer = closer
        self.lock = threading.Lock()


class HttpDoor:
    """The listener and its sessions. ``open`` binds (False, logged, when it cannot: the
    daemon serves its socket either way); ``close`` stops accepting and drops the record."""

    def __init__(self, paths: Paths, port: int) -> None:
        self.paths = paths
        self.wanted = port
        self.port = 0  # the bound port, once open
        self.uid = os.getuid()
        self._listener: socket.socket | None = None
        self._closing = False
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._sessions_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> bool:
        if not os.path.exists("/proc/net/tcp"):
            log.info("HTTP door not opened: this system does not tell a TCP peer's uid")
            return False
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # A daemon restarted within a minute of its last one closing a connection (its stop
        # closes one itself) found the port held by TIME_WAIT and opened no door. Linux lets
        # SO_REUSEADDR bind past TIME_WAIT only, never past another socket listening there.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((LOOPBACK, self.wanted))
            listener.listen(64)
        except OSError as exc:
            listener.close()
            log.warning(
                "HTTP door not opened: cannot listen on %s:%d (%s); the agents' http hooks "
                "and MCP over HTTP get no answer (set [http] port in config.toml)",
                LOOPBACK,
                self.wanted,
                exc.strerror,
            )
            return False
        self._listener = listener
        self.port = listener.getsockname()[1]
        record = {"port": self.port, "pid": os.getpid()}
        write_atomic(Path(httpdoor.record_path(self.paths)), json.dumps(record).encode("utf-8"))
        self._thread = threading.Thread(target=self._accept_loop, name="http-door", daemon=True)
        self._thread.start()
        log.info("HTTP door on %s:%d", LOOPBACK, self.port)
        return True

    def close(self) -> None:
        listener = self._listener
        if listener is None:
            return
        self._closing = True
        with contextlib.suppress(OSError):
            os.unlink(httpdoor.record_path(self.paths))
        # Wake the blocked accept() with a connection of our own (portable, unlike shutdown).
        with contextlib.suppress(OSError):
            socket.create_connection((LOOPBACK, self.port), timeout=1).close()
        if self._thread is not None:
            self._thread.join(2)
        listener.close()
        self._listener = None
        with self._sessions_lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            _close_quietly(session.closer)

    # -- connections -----------------------------------------------------------------------
    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._closing:
            try:
                conn, address = self._listener.accept()
            except OSError:
                if self._closing:
                    return
                time.sleep(0.05)  # EMFILE and the like: do not spin
                continue
            if self._closing:
                conn.close()
                return
            peer = kernel_peer(self.port, address[1])
            uid = None if peer is None else peer[0]
            if peer is None or uid != self.uid:
                log.warning(
                    "HTTP door: closed a connection from port %d: uid %s is not the owner (uid %d)",
                    address[1],
                    "unknown" if uid is None else uid,
                    self.uid,
                )
                conn.close()
                continue
            if not self._slots.acquire(blocking=False):
                _busy(conn)
                continue
            threading.Thread(
                target=self._serve_connection, args=(conn, address, peer[1]), daemon=True
            ).start()

    def _serve_connection(self, conn: socket.socket, address: tuple[str, int], inode: int) -> None:
        try:
            conn.settimeout(IDLE_SECONDS)
            from .handler import RequestHandler  # on the first connection: an idle daemon
            #                                        carries no HTTP server code

            RequestHandler(conn, address, self, inode)
        except Exception as exc:  # the connection, not the daemon
            log.info("HTTP door: connection from port %d ended: %s", address[1], exc)
        finally:
            _close_quietly(conn)
            self._slots.release()

    # -- MCP sessions ----------------------------------------------------------------------
    def new_session(self, project: str) -> tuple[str, _Session]:
        from ...client._client import Client
        from ...client.integrations.mcp_server import McpServer
        from ...common import layout

        found = layout.find_project(project) if project else None
        root = Path(os.path.abspath(found if found is not None else (project or "/")))
        from ...client.integrations.hooks import holds_memory

        # No zmq context (and thread) per session; a project the daemon does not own yet is
        # registered (as a session start does), so its writes go through the writer.
        client = Client(root, light_socket=True, register_unowned=holds_memory)
        server = McpServer(root, client, in_project=found is not None)
        session_id = os.urandom(16).hex()
        session = _Session(server, client)
        with self._sessions_lock:
            self._sessions[session_id] = session
            dropped = []
            while len(self._sessions) > MAX_SESSIONS:
                dropped.append(self._sessions.popitem(last=False)[1])
        for old in dropped:
            _close_quietly(old.closer)
        return session_id, session

    def session(self, session_id: str) -> _Session | None:
        with self._sessions_lock:
            session = self._sessions.get(session_id)
            if session is not None:
                self._sessions.move_to_end(session_id)
            return session

    def end_session(self, session_id: str) -> bool:
        with self._sessions_lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        _close_quietly(session.closer)
        return True


def open_door(paths: Paths, config: Config) -> HttpDoor | None:
    """The door ``config`` asks for, open; None when it is off or could not open (logged)."""
    if not config.http_enabled:
        return None
    port = default_port(paths) if config.http_port is None else config.http_port
    door = HttpDoor(paths, port)
    return door if door.open() else None


def close_door(door: HttpDoor | None) -> None:
    if door is not None:
        door.close()


def _close_quietly(thing: Any) -> None:
    with contextlib.suppress(Exception):  # closing is best effort
        thing.close()


def _busy(conn: socket.socket) -> None:
    body = b'{"error": "too many connections; try again"}'
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    try:
        conn.settimeout(1)
        conn.sendall(head.encode("ascii") + body)
    except OSError:
        pass
    finally:
        conn.close()
