"""``maestroctl mcp``: one project's memory as an MCP server over stdio.

Every agent session starts its own ``maestroctl mcp`` (that is how the tools run MCP servers),
so this process is kept to the floor: the standard library and the client (whose light socket,
``client/_zmtp.py``, talks to the daemon without pyzmq) -- no MCP SDK, no pydantic, no memory
core while the daemon is up. It speaks MCP's JSON-RPC itself
(``McpServer.handle``: ``initialize``, ``ping``, ``tools/list``, ``tools/call``,
``resources/list``, ``resources/read``, ``resources/templates/list``, ``prompts/list``) and
every tool call is one op of the ``Client``: the daemon answers it from the memory it already
holds in its cache, and its writer serialises the writes. When no daemon runs (or it stops
mid-session), the same ``Client`` runs the op in direct mode in this process, as every other
door does, so the server always answers. The same ``McpServer`` serves MCP's streamable HTTP
transport inside ``maestrod`` (``daemon/http_door/``: one per MCP session, its ``Client``
on the daemon's own socket), so a tool wired to that door starts no process and gets the same
answers.

Tools (``mcp_tools.TOOLS``): ``get_context``, ``remember``, ``note``, ``search``, ``reinforce``,
``forget``, with annotations and bounded, described parameters; an argument that fails the
check gets one readable sentence back. Resources: ``memory://semantic``, ``memory://episodic``,
``memory://archive`` (the files as they are on disk). The server counts as one session
(``mcp-<random>``): context it builds reinforces the entries it found relevant at most once, as
any session's would. Started outside any project (no ``.maestro/`` at or above the working
directory, no ``-C``), every tool call says so (``outside_project``) and nothing is created.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ...common import layout
from ...common.hidden import show_hidden
from ..errors import MaestroError
from .mcp_tools import BY_NAME, INSTRUCTIONS, TOOLS, InvalidArguments

if TYPE_CHECKING:
    from .._opmethods import OpMethods

SERVER_NAME = "maestro-memory"
# The handshake's protocol revisions, oldest to newest: a client asking for one of these gets
# it; any other request gets the newest (the client then decides whether it can go on).
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
FILES = layout.MEMORY_FILES
MAX_LINE = 16 << 20  # a JSON-RPC message longer than this is refused, not read into memory

# JSON-RPC error codes (the MCP spec's for an unknown resource).
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
RESOURCE_NOT_FOUND = -32002


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def rpc_error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class McpServer:
    """MCP over JSON-RPC for one connection: ``handle`` takes one parsed message and returns
    the reply to send, or None (a notification, or a response to nothing we asked)."""

    def __init__(
        self,
        project: Path,
        memory: OpMethods,
        session_id: str | None = None,
        *,
        in_project: bool = True,
    ) -> None:
        self.project = project
        self.memory = memory
        # Started outside any project (no ``.maestro/`` at or above it, no ``-C``): every tool
        # answers with ``outside_project`` and nothing is read, written or created.
        self.in_project = in_project
        self.session_id = session_id if session_id is not None else f"mcp-{os.urandom(6).hex()}"
        self._methods: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
            "initialize": self._initialize,
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": [tool.listing() for tool in TOOLS]},
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/read": self._read_resource,
            "resources/templates/list": lambda params: {"resourceTemplates": []},
            "prompts/list": lambda params: {"prompts": []},
        }

    def handle(self, message: Any) -> dict[str, Any] | list[dict[str, Any]] | None:
        if isinstance(message, list):  # a batch (protocol 2025-03-26)
            if not message:
                return rpc_error(None, INVALID_REQUEST, "empty batch")
            replies = [r for r in (self._one(m) for m in message) if r is not None]
            return replies or None
        return self._one(message)

    def _one(self, message: Any) -> dict[str, Any] | None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return rpc_error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        method = message.get("method")
        if not isinstance(method, str):
            return None  # a response (we send no requests) or junk without an id to answer
        notification = "id" not in message
        request_id = message.get("id")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        handler = self._methods.get(method)
        if notification:
            return None  # initialized, cancelled, roots changed …: nothing to do
        if handler is None:
            return rpc_error(request_id, METHOD_NOT_FOUND, f"method not found: {method}")
        try:
            result = handler(params)
        except _RpcError as exc:
            return rpc_error(request_id, exc.code, str(exc))
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _version(self) -> str:
        """The server's version: the daemon's, which answers the calls, when it runs; else this
        install's (read from the package metadata, which only the direct path pays for)."""
        try:
            return str(self.memory.hello()["version"])
        except (MaestroError, KeyError):
            from ...common.version import package_version

            return package_version()

    def _initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        return {
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": False},
                "resources": {"subscribe": False, "listChanged": False},
            },
            "serverInfo": {"name": SERVER_NAME, "version": self._version()},
            "instructions": INSTRUCTIONS,
        }

    def _call_tool(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        tool = BY_NAME.get(name) if isinstance(name, str) else None
        if tool is None:
            raise _RpcError(INVALID_PARAMS, f"unknown tool: {name!r}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        try:
            if not isinstance(arguments, dict):
                raise InvalidArguments(f"{tool.name}: invalid arguments: not an object.")
            checked = tool.check_arguments(arguments)
            if not self.in_project:
                text = outside_project(self.project)
                return {"content": [{"type": "text", "text": text}], "isError": True}
            result = tool.run(self.memory, checked, self.session_id)
        except (InvalidArguments, MaestroError) as exc:
            return {"content": [{"type": "text", "text": str(exc)}], "isError": True}
        if isinstance(result, str):
            return {"content": [{"type": "text", "text": result}], "isError": False}
        text = json.dumps(result, ensure_ascii=False, indent=2, default=str)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": result,
            "isError": False,
        }

    def _list_resources(self, params: Mapping[str, Any]) -> dict[str, Any]:
        if not self.in_project:
            return {"resources": []}
        return {
            "resources": [
                {
                    "uri": f"memory://{kind}",
                    "name": f"{kind}.md",
                    "description": f"The project's {kind} memory file, as written on disk.",
                    "mimeType": "text/markdown",
                }
                for kind in FILES
            ]
        }

    def _read_resource(self, params: Mapping[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        kind = uri.removeprefix("memory://") if isinstance(uri, str) else None
        if kind not in FILES or uri != f"memory://{kind}" or not self.in_project:
            raise _RpcError(RESOURCE_NOT_FOUND, f"resource not found: {uri!r}")
        from ...core import fsio
        from ...core.store import MemoryStore

        path = layout.memory_dir(self.project) / FILES[kind]
        try:
            # Read like every read: never through a link, refused for an untrusted folder or
            # an unsafe MAESTRO_HOME (whose [trust] list is not read).
            store = MemoryStore(self.project, settings=self.memory.core_settings())
            raw = store.file_texts()[FILES[kind]]
        except MaestroError as exc:
            raise _RpcError(INVALID_PARAMS, f"{uri} is refused: {exc.message}") from exc
        except OSError as exc:
            raise _RpcError(INVALID_PARAMS, f"cannot read {path}: {exc}") from exc
        text = "" if raw is None else fsio.encode(raw).decode("utf-8", "replace")
        # Hidden characters typed into the file by hand are shown, as everywhere else.
        text = show_hidden(text)
        return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}


def outside_project(folder: Path) -> str:
    """What every tool answers when the server was started outside any project."""
    return (
        f"Not in a project: there is no .maestro/ folder in {folder} or above it, so nothing "
        "was remembered, read or created. Run 'maestroctl init' in the project's folder, or "
        "start the server as 'maestroctl -C PROJECT mcp'."
    )


def _reply(message: bytes, server: McpServer) -> dict[str, Any] | list[dict[str, Any]] | None:
    try:
        parsed = json.loads(message)
    except ValueError as exc:  # UnicodeDecodeError is one
        return rpc_error(None, PARSE_ERROR, f"not JSON: {exc}")
    return server.handle(parsed)


def serve_lines(server: McpServer, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """MCP's stdio transport: one JSON-RPC message per line in, one reply per line out, until
    the client closes stdin."""
    while True:
        line = stdin.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # skip the rest of the oversized line
                line = stdin.readline(MAX_LINE)
            reply: Any = rpc_error(None, INVALID_REQUEST, f"message longer than {MAX_LINE} bytes")
        elif not line.strip():
            continue
        else:
            reply = _reply(line, server)
        if reply is not None:
            out = json.dumps(reply, ensure_ascii=False, separators=(",", ":"), default=str)
            stdout.write(out.encode("utf-8") + b"\n")
            stdout.flush()


def serve(project: Path | None = None) -> int:
    """Serve over stdio until the client hangs up (the project: ``-C``, else the nearest
    ``.maestro/`` at or above the working directory; with neither, every tool call says so and
    nothing is created)."""
    from .._client import Client

    found = project if project is not None else layout.find_project(os.getcwd())
    root = Path(os.path.abspath(found if found is not None else os.getcwd()))
    with Client(root, light_socket=True) as client:  # no pyzmq: one per agent session
        server = McpServer(root, client, in_project=found is not None)
        serve_lines(server, sys.stdin.buffer, sys.stdout.buffer)
    return 0
