"""Protocol v1: the envelope, the error codes, and strict decoding of a request frame.

One UTF-8 JSON object per ZeroMQ message::

    request  {"v": 1, "id": "<string>", "op": "<name>", "project": "<path>", "args": {...}}
    reply    {"v": 1, "id": <same>, "ok": true,  "result": {...}}
             {"v": 1, "id": <same>, "ok": false, "error": {"code": "<code>", "message": "…"}}

``pid`` (the client's process id, an integer) may accompany a request; the journal records it.
The full description, with every op and its arguments, is in docs/protocol.md.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .limits import MESSAGE_MAX_BYTES, TOO_LARGE, frame_too_large

VERSION = 1
SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
MAX_MESSAGE_BYTES = MESSAGE_MAX_BYTES  # the limit's home is common/limits.py
MAX_ID_LENGTH = 200

BAD_REQUEST = "bad_request"  # the frame or its arguments are malformed
UNSUPPORTED_VERSION = "unsupported_version"
UNKNOWN_OP = "unknown_op"
NOT_REGISTERED = "not_registered"  # the project is not registered with this daemon
NOT_FOUND = "not_found"  # an entry id that names no entry
REJECTED = "rejected"  # well-formed, but the memory refuses it (e.g. entry not flagged)
CONFLICT = "conflict"  # the request collides with the current state (e.g. path not a dir)
INTERNAL = "internal"  # a bug or an I/O failure; the daemon logs the traceback
SHUTTING_DOWN = "shutting_down"
# TOO_LARGE ("too_large", common/limits.py): a frame or a memory's text over its limit.

ERROR_CODES: tuple[str, ...] = (
    BAD_REQUEST,
    UNSUPPORTED_VERSION,
    UNKNOWN_OP,
    NOT_REGISTERED,
    NOT_FOUND,
    REJECTED,
    CONFLICT,
    INTERNAL,
    SHUTTING_DOWN,
    TOO_LARGE,
)


class OpFacts(NamedTuple):
    """What every part needs to know about one op, spelled once: the daemon's registry, its
    scope check and its writer routing, and the client's retry and direct-mode decisions all
    derive from ``OPS``. (Named tuples, not dataclasses, here and in ``Request``: the client
    imports this module inside agent hooks, and ``dataclasses`` costs more than all of it.)"""

    name: str
    scoped: bool  # needs a (registered) project
    retry: bool  # repeating it changes nothing more: safe for a client to send again
    kind: str  # "read": answered on the main thread; "write": runs on the writer; "control"
    memory: bool = False  # a memory op (``ops.MEMORY_OPS``): runs in direct mode too


def _facts(*rows: tuple[str, bool, bool, str, bool]) -> dict[str, OpFacts]:
    return {row[0]: OpFacts(*row) for row in rows}


# fmt: off
OPS: dict[str, OpFacts] = _facts(
    # name             scoped retry  kind       memory
    ("hello",          False, True,  "read",    False),
    ("ping",           False, True,  "read",    False),
    ("status",         False, True,  "read",    False),
    ("projects",       False, True,  "read",    False),
    ("register",       False, True,  "write",   False),
    ("unregister",     True,  True,  "write",   False),
    ("shutdown",       False, False, "control", False),
    ("log",            True,  True,  "read",    False),
    ("initialize",     True,  True,  "write",   True),  # per session id: see the client
    ("build_context",  True,  True,  "read",    True),
    ("entries",        True,  True,  "read",    True),
    ("search",         True,  True,  "read",    True),
    ("save_semantic",  True,  False, "write",   True),
    ("save_episodic",  True,  False, "write",   True),
    ("save_session_note", True, True, "write",  True),  # one note per session id: an upsert
    ("detect_signals", True,  False, "write",   True),
    ("reinforce",      True,  False, "write",   True),
    ("maintenance",    True,  False, "write",   True),
    ("forget",         True,  False, "write",   True),  # a repeat is not_found: no retry
    ("import_tool_memories", True, True, "write", True),  # idempotent: see core/toolmem.py
    ("end_session",    True,  False, "write",   False),  # acknowledged, then done on the writer
)
# fmt: on

# Derived views of ``OPS``.
IDEMPOTENT_OPS: frozenset[str] = frozenset(n for n, f in OPS.items() if f.retry)
GLOBAL_OPS: frozenset[str] = frozenset(n for n, f in OPS.items() if not f.scoped)
MEMORY_OP_NAMES: frozenset[str] = frozenset(n for n, f in OPS.items() if f.memory)
READ_OPS: frozenset[str] = frozenset(n for n, f in OPS.items() if f.kind == "read")


class OpError(Exception):
    """A request that gets a coded error reply."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Request(NamedTuple):
    id: str
    op: str
    project: str | None
    args: dict[str, Any]
    pid: int | None = None


def _reject_constants(value: str) -> float:
    raise ValueError(f"{value} is not valid JSON")


def decode_request(frame: bytes) -> Request:
    """Decode and validate the envelope. Raises ``OpError``; ``request_id(frame)`` gives the id
    to answer with when decoding fails half-way."""
    if len(frame) > MAX_MESSAGE_BYTES:
        raise OpError(TOO_LARGE, frame_too_large(len(frame)))
    try:
        text = frame.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OpError(
            BAD_REQUEST, f"message is not UTF-8: {exc.reason} at byte {exc.start}"
        ) from exc
    try:
        data = json.loads(text, parse_constant=_reject_constants)
    except RecursionError as exc:
        raise OpError(BAD_REQUEST, "message is nested too deeply") from exc
    except ValueError as exc:
        raise OpError(BAD_REQUEST, f"message is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise OpError(BAD_REQUEST, f"message must be a JSON object, got {type(data).__name__}")
    req_id = data.get("id")
    if not isinstance(req_id, str) or not req_id or len(req_id) > MAX_ID_LENGTH:
        raise OpError(
            BAD_REQUEST, f"'id' must be a non-empty string of at most {MAX_ID_LENGTH} characters"
        )
    version = data.get("v")
    if isinstance(version, bool) or not isinstance(version, int):
        raise OpError(BAD_REQUEST, "'v' must be an integer protocol version")
    if version not in SUPPORTED_VERSIONS:
        raise OpError(
            UNSUPPORTED_VERSION,
            f"protocol version {version} is not supported; "
            f"this daemon speaks {list(SUPPORTED_VERSIONS)}",
        )
    op = data.get("op")
    if not isinstance(op, str) or not op:
        raise OpError(BAD_REQUEST, "'op' must be a non-empty string")
    project = data.get("project")
    if project is not None and (not isinstance(project, str) or not project):
        raise OpError(BAD_REQUEST, "'project' must be a non-empty string path")
    if project is not None and "\x00" in project:
        raise OpError(BAD_REQUEST, "'project' must not contain NUL characters")
    args = data.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise OpError(BAD_REQUEST, f"'args' must be an object, got {type(args).__name__}")
    pid = data.get("pid")
    if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int)):
        raise OpError(BAD_REQUEST, "'pid' must be an integer")
    return Request(id=req_id, op=op, project=project, args=args, pid=pid)


def request_id(frame: bytes) -> str | None:
    """Best-effort id of an undecodable request, so its error reply can be matched."""
    try:
        data = json.loads(frame.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    rid = data.get("id") if isinstance(data, dict) else None
    return rid if isinstance(rid, str) and len(rid) <= MAX_ID_LENGTH else None


def _encode(body: dict[str, Any]) -> bytes:
    # A string can hold a lone surrogate: from a request's "\ud800" escape (an id, a path
    # echoed in a message) or from a file's undecodable byte (surrogateescape). UTF-8 cannot
    # encode it; "backslashreplace" writes it back as that same JSON escape, so the reply is
    # valid UTF-8 JSON that decodes to the very same string, instead of an exception.
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "backslashreplace")


def ok_reply(req_id: str | None, result: dict[str, Any]) -> bytes:
    return _encode({"v": VERSION, "id": req_id, "ok": True, "result": result})


def error_reply(req_id: str | None, code: str, message: str) -> bytes:
    return _encode(
        {"v": VERSION, "id": req_id, "ok": False, "error": {"code": code, "message": message}}
    )


def encode_request(
    req_id: str, op: str, project: str | None, args: dict[str, Any], pid: int | None = None
) -> bytes:
    body: dict[str, Any] = {"v": VERSION, "id": req_id, "op": op, "args": args}
    if project is not None:
        body["project"] = project
    if pid is not None:
        body["pid"] = pid
    return _encode(body)
