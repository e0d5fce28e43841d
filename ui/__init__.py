"""``maestroctl ui``: look at a project's memory in a browser, on 127.0.0.1 only.

``add_arguments(parser)`` declares the command's options and ``run_ui(args)`` runs it; that is
all the CLI knows of this package. The web server needs the optional extra ``ui``
(Starlette and uvicorn); without it the command says how to install it and exits 1. See
``app.py`` for the security model and ``serve.py`` for the process (URL on the first line of
stdout, until SIGINT/SIGTERM).
"""

from __future__ import annotations

import argparse
import sys

INSTALL_HINT = (
    "maestroctl ui needs the web extra: "
    "pip install 'maestro-agent-memory[ui]' (Starlette and uvicorn)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        metavar="N",
        help="the port on 127.0.0.1 (default: 0, any free port)",
    )
    parser.add_argument(
        "--no-open", action="store_true", help="print the URL but do not open a browser"
    )


def run_ui(args: argparse.Namespace) -> int:
    """Serve the page for ``args.project`` (or the nearest project) until interrupted."""
    port = int(getattr(args, "port", 0))
    if not 0 <= port <= 65535:
        sys.stderr.write(f"maestroctl ui: --port must be between 0 and 65535, got {port}\n")
        return 2
    try:
        from .serve import serve
    except ModuleNotFoundError as exc:
        if exc.name not in ("starlette", "uvicorn") and not str(exc.name).startswith(
            ("starlette.", "uvicorn.")
        ):
            raise
        sys.stderr.write(f"{INSTALL_HINT}\n")
        return 1
    return serve(
        project=getattr(args, "project", None),
        port=port,
        open_browser=not getattr(args, "no_open", False),
        timeout=float(getattr(args, "timeout", 2.0)),
        # None lets the client read MAESTRO_REQUIRE_DAEMON, as every other command does.
        require_daemon=True if getattr(args, "require_daemon", False) else None,
    )
