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
from .rundir import InstanceLock, StartupError, prepare_dirs
from .scheduler import build_trigger
from .server import Server

log = logging.getLogger("maestrod")
LOG_FORMAT = "%(asctime)s %(levelname)s [%(threadName)s] %(message)s"


class RedactingFilter(logging.Filter):
    """Every log record passes the privacy screen: a message (or a traceback) that quotes a
    client's text never writes a secret into the log file."""

    def filter(self, record: logging.LogRecord) -> bool:
        from ..core.secrets import redact

        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


def setup_logging(log_path: Path, verbose: bool) -> None:
    formatter = logging.Formatter(LOG_FORMAT)
    file_handler = logging.FileHandler(log_path, encoding="utf-8")
    stderr_handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    for handler in (file_handler, stderr_handler):
        handler.setFormatter(formatter)
        handler.addFilter(RedactingFilter())
        root.addHandler(handler)
    from ..core.secrets import preload

    preload()  # the screen's library, once, before the first request or log line
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("apscheduler", "watchdog"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def fail(message: str) -> int:
    if logging.getLogger().handlers:
        log.error("%s", message)  # to the log file and stderr
    else:
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
