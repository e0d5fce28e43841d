"""The Python client of Maestro Memory, and ``maestroctl`` (``maestro_memory.client.cli``).

::

    from maestro_memory.client import Client, MaestroError

    with Client("/path/to/project") as memory:
        block = memory.build_context(task="fix the login bug")["context"]

``Client`` talks to ``maestrod`` when it runs and to the memory files directly when it does not
(same handlers, same results); ``require_daemon=True`` refuses the fallback.
"""

from ._client import DEFAULT_TIMEOUT, Client
from ._opmethods import Result
from .errors import (
    DaemonNotRunning,
    DaemonTimeout,
    DaemonUnavailable,
    MaestroError,
    ProtocolError,
    RequestError,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "Client",
    "DaemonNotRunning",
    "DaemonTimeout",
    "DaemonUnavailable",
    "MaestroError",
    "ProtocolError",
    "RequestError",
    "Result",
]
