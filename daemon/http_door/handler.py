"""The door's requests, one connection at a time (HTTP/1.1, kept alive): the guard's checks of
each request, then ``/mcp`` (an ``McpServer`` per session) or ``/hook/<tool>/<event>``
(``hooks.answer_http``). Imported on the door's first connection (``HttpDoor``)."""

from __future__ import annotations

import json
import logging
import os
import socket
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from ...common import httpdoor
from ...common.agents import AGENTS
from ..http_guard import Refused, check_address, check_body, socket_owner_cwd

if TYPE_CHECKING:
    from . import HttpDoor

log = logging.getLogger("maestrod")

HOOK_EVENTS = ("session-start", "user-prompt", "session-end", "stop")  # hooks.EVENTS


class RequestHandler(BaseHTTPRequestHandler):
    """One connection's requests (HTTP/1.1, kept alive). ``server`` is the ``HttpDoor``."""

    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: an answer leaves as two writes (head, then body). With Nagle's algorithm the
    # body waited for the client's delayed ACK of the head, 40 ms on Linux, on every request of
    # a kept-alive connection after its first: MCP's initialize, tools/list and resources/list
    # took 43-44 ms each, 0.4-2.4 ms without.
    disable_nagle_algorithm = True
    door: HttpDoor

    def __init__(
        self, conn: socket.socket, address: tuple[str, int], door: HttpDoor, inode: int
    ) -> None:
        self.door = door
        self.peer_inode = inode  # the client end's socket: whose working directory (MCP)
        super().__init__(conn, address, door)  # type: ignore[arg-type]

    def version_string(self) -> str:
        return "maestrod"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("HTTP door: " + format, *args)

    # -- answers ---------------------------------------------------------------------------
    def _send(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        data = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if data:
            self.wfile.write(data)

    def _refuse(self, status: int, message: str) -> None:
        self.close_connection = True
        self._send(status, {"error": message}, {"Connection": "close"})

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    # -- methods ---------------------------------------------------------------------------
    def do_POST(self) -> None:
        headers = self._headers()
        raw_length = headers.get("content-length")
        try:
            length = int(raw_length) if raw_length is not None else None
        except ValueError:
            length = -1
        try:
            check_address(headers, self.door.port)
            check_body(headers, length)
        except Refused as exc:
            log.warning("HTTP door: refused %s %s: %s", self.command, self.path[:200], exc)
            self._refuse(exc.status, str(exc))
            return
        assert length is not None
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        project = unquote(query.get("project", [""])[0])
        if project and not os.path.isabs(project):
            self._refuse(400, "?project= must be an absolute path")
            return
        if url.path == httpdoor.MCP_PATH:
            self._mcp(headers, body, project)
            return
        parts = url.path.split("/")
        if len(parts) == 4 and "/" + parts[1] == httpdoor.HOOK_PATH:
            self._hook(parts[2], parts[3], body, project)
            return
        self._refuse(404, f"no such path: {url.path[:200]}")

    def do_GET(self) -> None:
        self._other()

    def do_PUT(self) -> None:
        self._other()

    def do_DELETE(self) -> None:
        headers = self._headers()
        try:
            check_address(headers, self.door.port)
        except Refused as exc:
            self._refuse(exc.status, str(exc))
            return
        if urlsplit(self.path).path != httpdoor.MCP_PATH:
            self._refuse(404, "no such path")
            return
        ended = self.door.end_session(headers.get("mcp-session-id", ""))
        self._send(200 if ended else 404)

    def _other(self) -> None:
        try:
            check_address(self._headers(), self.door.port)
        except Refused as exc:
            self._refuse(exc.status, str(exc))
            return
        # No server-sent event stream is offered (the transport allows that: 405).
        self.close_connection = True
        self._send(405, {"error": "only POST is served"}, {"Allow": "POST", "Connection": "close"})

    # -- the two services --------------------------------------------------------------------
    def _mcp(self, headers: dict[str, str], body: bytes, project: str) -> None:
        from ...client.integrations.mcp_server import INVALID_REQUEST, PARSE_ERROR, rpc_error

        try:
            message = json.loads(body)
        except ValueError as exc:
            self._send(400, rpc_error(None, PARSE_ERROR, f"not JSON: {exc}"))
            return
        given = headers.get("mcp-session-id")
        reply_headers: dict[str, str] = {}
        if isinstance(message, dict) and message.get("method") == "initialize":
            # No ?project=: the tool's own working directory, as a stdio server would have.
            where = project or socket_owner_cwd(self.peer_inode, self.door.uid) or ""
            session_id, session = self.door.new_session(where)
            reply_headers["Mcp-Session-Id"] = session_id
        elif given is None:
            self._send(400, rpc_error(None, INVALID_REQUEST, "no Mcp-Session-Id: initialize first"))
            return
        else:
            found = self.door.session(given)
            if found is None:
                self._send(
                    404, rpc_error(None, INVALID_REQUEST, "unknown session: initialize again")
                )
                return
            session = found
        with session.lock:
            reply = session.server.handle(message)
        if reply is None:
            self._send(202, None, reply_headers)
        else:
            self._send(200, reply, reply_headers)

    def _hook(self, tool: str, event: str, body: bytes, project: str) -> None:
        if tool not in AGENTS or event not in HOOK_EVENTS:
            self._refuse(404, f"no hook {tool[:40]!r} {event[:40]!r}")
            return
        from ...client.errors import DaemonTimeout
        from ...client.integrations.hooks import answer_http

        try:
            output = answer_http(tool, event, body, project)
        except DaemonTimeout as exc:  # a session start the writer kept waiting: the command
            log.warning("http door: %s %s: %s", tool, event, exc)  # runs its Python hook
            self._refuse(503, str(exc))
            return
        self._send(200, json.loads(output) if output else {})
