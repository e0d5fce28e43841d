"""systemd's readiness protocol, with the standard library only.

``notify("READY=1")`` sends one datagram to the AF_UNIX socket named by ``$NOTIFY_SOCKET``
(a leading ``@`` means the abstract namespace). Without ``$NOTIFY_SOCKET`` (not started by
systemd with ``Type=notify``) it does nothing; a failure to send is logged, never fatal.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger("maestrod")


def notify(state: str) -> bool:
    """Send ``state`` (e.g. ``"READY=1"``); True if a datagram was sent."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    target = "\0" + address[1:] if address.startswith("@") else address
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(target)
            sock.sendall(state.encode())
    except OSError as exc:
        log.warning("sd_notify %s to %s failed: %s", state, address, exc)
        return False
    return True


def notify_serving(projects: int) -> bool:
    """The one-line status ``systemctl --user status maestrod`` shows."""
    return notify(f"STATUS=serving {projects} project{'' if projects == 1 else 's'}")
