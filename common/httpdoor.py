"""What the daemon's loopback HTTP door and its clients (``integrate``, ``doctor``, tests) both
need to know: where it listens, the paths it serves, and the file the running daemon records
its port in. Standard library only (the hooks' side reads it).

::

    [http]
    enabled = true      # false: no HTTP door; the tools use the command hooks and maestroctl mcp
    port = 24810        # default: a number derived from this user's runtime directory
                        # (0: any free port, recorded; for tests)

The door (``daemon/http_door/``) serves two kinds of POST, JSON only:

* ``/mcp`` (``?project=DIR``): MCP's streamable HTTP transport, the same tools and answers as
  ``maestroctl mcp`` over stdio;
* ``/hook/<tool>/<event>`` (``?project=DIR`` optional): a hook's JSON, answered with what
  ``maestroctl hook <tool> <event>`` would print.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from .paths import Paths

LOOPBACK = "127.0.0.1"
MCP_PATH = "/mcp"
HOOK_PATH = "/hook"
RECORD_NAME = "http.json"  # in the runtime dir: {"port": …, "pid": …} while the door is open
# Below Linux's ephemeral range (32768-60999): an outgoing connection never holds the port.
PORT_BASE, PORT_SPAN = 20000, 12000


def default_port(paths: Paths) -> int:
    """This user's (and this ``MAESTRO_HOME``'s) default port: FNV-1a of the uid and the
    runtime directory, so two users, or two homes of one user, rarely meet on one port."""
    key = 0xCBF29CE484222325
    for byte in os.fsencode(f"{os.getuid()}:{paths.runtime_dir}"):
        key = ((key ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return PORT_BASE + key % PORT_SPAN


def door_settings(data: Mapping[str, Any]) -> tuple[bool, int | None]:
    """``(enabled, port)`` from a parsed ``config.toml`` (port None: ``default_port``);
    ValueError names a bad value."""
    table = data.get("http", {})
    if not isinstance(table, dict):
        raise ValueError("[http] must be a table")
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError("[http] enabled must be true or false")
    port = table.get("port")
    if port is None:
        return enabled, None
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError("[http] port must be a number from 0 to 65535")
    return enabled, port


def configured_port(paths: Paths, data: Mapping[str, Any]) -> int | None:
    """The port the door is configured to listen on (0: any), None when it is off."""
    enabled, port = door_settings(data)
    if not enabled:
        return None
    return default_port(paths) if port is None else port


def record_path(paths: Paths) -> str:
    return os.path.join(paths.runtime_dir, RECORD_NAME)


def recorded_port(paths: Paths) -> int | None:
    """The port the running daemon's door listens on (its record, when that daemon is alive);
    None when no door is open."""
    try:
        with open(record_path(paths), encoding="utf-8") as record:
            data = json.load(record)
        port, pid = data["port"], data["pid"]
        if not isinstance(port, int) or not isinstance(pid, int):
            return None
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return port


def mcp_url(port: int, project: str | os.PathLike[str]) -> str:
    return f"http://{LOOPBACK}:{port}{MCP_PATH}?project={quote(os.fspath(project), safe='/')}"


def hook_url(
    port: int, tool: str, event: str, project: str | os.PathLike[str] | None = None
) -> str:
    url = f"http://{LOOPBACK}:{port}{HOOK_PATH}/{tool}/{event}"
    if project is not None:
        url += f"?project={quote(os.fspath(project), safe='/')}"
    return url


def door_path(url: object) -> tuple[int, str] | None:
    """``(port, path)`` when ``url`` is one of the door's (``http://127.0.0.1:<port>/…``, the
    query left out), else None: how ``integrate`` and ``doctor`` know a setting is ours."""
    if not isinstance(url, str):
        return None
    prefix = f"http://{LOOPBACK}:"
    if not url.startswith(prefix):
        return None
    port, slash, path = url[len(prefix) :].partition("/")
    if not slash or not port.isdigit() or not 0 < int(port) <= 65535:
        return None
    path = "/" + path.split("?", 1)[0]
    if path != MCP_PATH and not path.startswith(HOOK_PATH + "/"):
        return None
    return int(port), path
