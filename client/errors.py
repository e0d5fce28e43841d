"""The client's exceptions. A caller catches ``MaestroError``; nothing from zmq leaks out.

``MaestroError`` is the root of every error Maestro Memory raises, the core's included (the
whole tree is in ``common/errors.py``). The client's part::

    MaestroError                  the root (common/errors.py)
    ├── DaemonUnavailable         no daemon answered (``maestroctl`` exit code 3)
    │   ├── DaemonNotRunning      nothing listens: no socket, or the daemon's lock is free
    │   └── DaemonTimeout         a daemon holds the lock but did not answer in time
    ├── RequestError              the op got a coded error reply (``.code``: a protocol code)
    └── ProtocolError             a reply that does not follow protocol v1

Direct mode raises the same ``RequestError`` codes the daemon would send, because it runs the
same op handlers (``common/ops.py``).
"""

from __future__ import annotations

from ..common.errors import CLIENT_ERROR, MaestroError

# Codes the client uses for failures that never reached a handler; the protocol's own codes
# (``common/protocol.py``) travel in ``RequestError.code`` unchanged.
DAEMON_UNAVAILABLE = "daemon_unavailable"
DAEMON_TIMEOUT = "daemon_timeout"
PROTOCOL_ERROR = "protocol_error"


__all__ = [
    "CLIENT_ERROR",
    "DAEMON_TIMEOUT",
    "DAEMON_UNAVAILABLE",
    "PROTOCOL_ERROR",
    "DaemonNotRunning",
    "DaemonTimeout",
    "DaemonUnavailable",
    "MaestroError",
    "ProtocolError",
    "RequestError",
]


class DaemonUnavailable(MaestroError):
    """No daemon answered, and the call could not (or was told not to) run in direct mode."""

    code = DAEMON_UNAVAILABLE


class DaemonNotRunning(DaemonUnavailable):
    """Nothing is listening: there is no socket, or no process holds the daemon's lock."""


class DaemonTimeout(DaemonUnavailable):
    """The daemon holds its lock but gave no reply within the timeout."""

    code = DAEMON_TIMEOUT


class RequestError(MaestroError):
    """The request was answered with an error: ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __str__(self) -> str:
        return f"{self.message} [{self.code}]"


class ProtocolError(MaestroError):
    """A reply that is not valid protocol v1 (bad JSON, wrong version, missing fields)."""

    code = PROTOCOL_ERROR
