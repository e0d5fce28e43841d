"""The ``maestroctl ui`` process: bind 127.0.0.1, print the URL, serve until a signal.

The socket is bound here (not by uvicorn) so that port 0 resolves to the real port before the
URL is printed; the URL is the first line of stdout, flushed, so a script can read it. uvicorn
handles SIGINT and SIGTERM (graceful exit); open event streams end at the next poll.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import webbrowser
from types import FrameType

import uvicorn

from ..client import Client
from .app import Secrets, create_app
from .source import Source

HOST = "127.0.0.1"


def _project(chosen: str | None) -> str:
    from ..common.layout import project_or_here
    from ..common.ops import resolve_project

    if chosen is None:
        chosen = project_or_here(os.getcwd())
    return str(resolve_project(os.path.abspath(os.path.expanduser(chosen))))


def _context_budget() -> int:
    # The budget of the session-start hook: the block shown is the one an agent gets.
    from ..client.integrations.hooks import hook_budget

    return hook_budget()


def _open(url: str) -> None:
    """Open ``url`` in a graphical browser, in the background; never a console one.

    Without a display, ``webbrowser`` falls back to text browsers (lynx, www-browser) that would
    take over this terminal and block until they exit; then the URL printed above is the way in.
    """
    if sys.platform != "darwin" and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        sys.stderr.write("maestroctl ui: no display; open the URL above in your browser\n")
        return
    threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, stopping: threading.Event) -> None:
        super().__init__(config)
        self.stopping = stopping

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.stopping.set()  # event streams stop, so the graceful exit does not wait on them
        super().handle_exit(sig, frame)


def serve(
    *,
    project: str | None,
    port: int,
    open_browser: bool,
    timeout: float,
    require_daemon: bool | None = None,
) -> int:
    root = _project(project)
    if not os.path.isdir(root):
        sys.stderr.write(f"maestroctl ui: project directory {root} does not exist\n")
        return 1
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        sys.stderr.write(f"maestroctl ui: cannot listen on {HOST}:{port}: {exc.strerror}\n")
        return 1
    sock.listen(64)
    bound = int(sock.getsockname()[1])
    keys = Secrets()
    stopping = threading.Event()
    with Client(root, timeout=timeout, require_daemon=require_daemon) as client:
        source = Source(root, client, context_budget=_context_budget())
        app = create_app(source, keys, lambda: bound, stopping)
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            timeout_graceful_shutdown=2,
        )
        server = _Server(config, stopping)

        def on_signal(sig: int, frame: FrameType | None) -> None:
            # Until uvicorn installs its own handlers (and after it restores these and re-raises
            # what it caught), a signal asks for a clean stop rather than killing the process.
            stopping.set()
            server.should_exit = True

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        url = f"http://{HOST}:{bound}/?token={keys.token}"
        sys.stdout.write(url + "\n")
        sys.stdout.flush()
        sys.stderr.write(f"maestroctl ui: serving {root} on {HOST}:{bound}; Ctrl-C stops\n")
        if open_browser:
            _open(url)
        server.run(sockets=[sock])
    return 0
