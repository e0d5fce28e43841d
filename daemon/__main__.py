"""``maestrod``: run the Maestro Memory daemon in the foreground until SIGTERM/SIGINT.

Start-up order matters: private directories, then the instance lock, then the config, then
the socket. So a second daemon, an unsafe runtime dir or a bad config stops us before we
could steal a running daemon's socket.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from ..common.paths import Paths, maestro_home, resolve
from .config import ConfigError, load_config
from .handlers import package_version
from .logsetup import logs_to_stderr, setup_logging
from .rundir import InstanceLock, StartupError, prepare_dirs
from .scheduler import build_trigger
from .server import Server

log = logging.getLogger("maestrod")


def fail(message: str) -> int:
    if logging.getLogger().handlers:
        log.error("%s", message)  # to the log (journal or file) ...
    if not logs_to_stderr():  # ... and stderr, which 'maestroctl start' shows, once
        print(f"maestrod: {message}", file=sys.stderr)
    return 1


def run(paths: Paths, verbose: bool = False, home: Path | None = None) -> int:
    try:
        prepare_dirs(paths, home)
    except StartupError as exc:
        return fail(str(exc))
    setup_logging(paths.log_path, verbose)
    lock = InstanceLock(paths)
    try:
        lock.acquire()
    except StartupError as exc:
        return fail(str(exc))
    try:
        config = load_config(paths.config_path)
        build_trigger(config)
    except ConfigError as exc:
        lock.release()
        return fail(f"bad configuration: {exc}")

    server = Server(paths, config)
    clean = True
    try:
        server.start()
        server.serve()
    except Exception as exc:
        log.exception("fatal error: %s", exc)
        return_code = 1
    else:
        return_code = 0
    finally:
        try:
            clean = server.close()
        finally:
            lock.release()
    if not clean:
        logging.shutdown()
        os._exit(return_code)  # a stuck writer holds a socket: skip the context teardown
    return return_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="maestrod",
        description="Maestro Memory daemon: serves project memory over a local ZeroMQ "
        "socket. Runs in the foreground; MAESTRO_HOME roots all its paths.",
    )
    parser.add_argument("--version", action="version", version=f"maestrod {package_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    args = parser.parse_args(argv)
    return run(resolve(), verbose=args.verbose, home=maestro_home())


if __name__ == "__main__":
    sys.exit(main())
