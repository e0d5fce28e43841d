"""Where maestrod's log lines go (one copy of each), who started it, and its recent errors.

* **Under systemd** (``INVOCATION_ID`` set, or ``JOURNAL_STREAM`` naming our stderr): stderr
  only, without timestamps: journald stamps, stores and rotates each line.
* **Otherwise** (``maestroctl start``, by hand, launchd): the log file only, a stdlib
  ``RotatingFileHandler`` (``MAX_BYTES``, ``BACKUPS`` old copies). Under launchd stderr is a
  plain file (``StandardErrorPath``) that nothing stamps or rotates, so the rotating file is the
  better home there too. A person running maestrod in a terminal also sees the lines on it.

``RECENT`` keeps the last error lines in memory for ``status`` (whatever the destination);
``ORIGIN`` says who started this daemon, read once at start-up.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FILE_FORMAT = "%(asctime)s %(levelname)s [%(threadName)s] %(message)s"
JOURNAL_FORMAT = "%(levelname)s [%(threadName)s] %(message)s"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3
RECENT_LINES = 5
STARTED_BY_ENV = "MAESTRO_STARTED_BY"  # set by `maestroctl start` for the daemon it spawns


def _stderr_is(journal_stream: str) -> bool:
    """``JOURNAL_STREAM`` is ``<device>:<inode>`` of the journal's socket; it holds for us only
    when our stderr is that very socket (a child with redirected stderr inherits the variable)."""
    try:
        device, inode = (int(x) for x in journal_stream.split(":"))
        st = os.fstat(2)
    except (ValueError, OSError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


def service_manager(env: Mapping[str, str]) -> str | None:
    """``"systemd"``, ``"launchd"`` or ``None`` (started by a person or a program)."""
    if env.get("INVOCATION_ID") or (
        env.get("JOURNAL_STREAM") and _stderr_is(env["JOURNAL_STREAM"])
    ):
        return "systemd"
    # Terminal sessions on macOS carry XPC_SERVICE_NAME=0; a launchd job carries its label.
    if env.get("XPC_SERVICE_NAME", "0") not in ("", "0"):
        return "launchd"
    return None


def _parent_name() -> str:
    try:
        import psutil  # type: ignore[import-untyped]

        return str(psutil.Process(os.getppid()).name())
    except Exception:  # gone already, or not allowed to look
        return "?"


def started_by(env: Mapping[str, str]) -> dict[str, Any]:
    """``{"how": systemd|launchd|maestroctl start|by hand, "detail": …}``."""
    manager = service_manager(env)
    if manager == "systemd":
        unit = env.get("INVOCATION_ID", "")
        return {"how": "systemd", "detail": f"invocation {unit}" if unit else "journald stream"}
    if manager == "launchd":
        return {"how": "launchd", "detail": env.get("XPC_SERVICE_NAME", "")}
    if env.get(STARTED_BY_ENV) == "maestroctl":
        return {"how": "maestroctl start", "detail": f"pid {os.getpid()}"}
    return {"how": "by hand", "detail": f"from {_parent_name()} (pid {os.getppid()})"}


class RecentErrors(logging.Handler):
    """The last ``RECENT_LINES`` records at ERROR or above, formatted with their time."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: deque[str] = deque(maxlen=RECENT_LINES)
        self.setFormatter(logging.Formatter(FILE_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record).splitlines()[0])
        except Exception:  # logging must never raise into the caller
            self.handleError(record)


class RedactingFilter(logging.Filter):
    """Every log record passes the privacy screen: a message (or a traceback) that quotes a
    client's text never writes a secret into the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        from ..core.secrets import redact

        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


RECENT = RecentErrors()
ORIGIN: dict[str, Any] = {}
DESTINATION: dict[str, Any] = {}


def setup_logging(
    log_path: Path, verbose: bool, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Install the handlers; returns where the lines go (``{"to": "journal"|"file", …}``)."""
    env = os.environ if env is None else env
    root = logging.getLogger()
    handlers: list[logging.Handler] = [RECENT]
    if service_manager(env) == "systemd":
        to_journal = logging.StreamHandler(sys.stderr)
        to_journal.setFormatter(logging.Formatter(JOURNAL_FORMAT))
        handlers.append(to_journal)
        destination: dict[str, Any] = {"to": "journal", "path": None, "stderr": True}
    else:
        to_file = logging.handlers.RotatingFileHandler(
            log_path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
        )
        to_file.setFormatter(logging.Formatter(FILE_FORMAT))
        handlers.append(to_file)
        destination = {"to": "file", "path": str(log_path), "stderr": False}
        if sys.stderr is not None and sys.stderr.isatty():  # a person is watching
            destination["stderr"] = True
            to_terminal = logging.StreamHandler(sys.stderr)
            to_terminal.setFormatter(logging.Formatter(FILE_FORMAT))
            handlers.append(to_terminal)
    for handler in handlers:
        handler.addFilter(RedactingFilter())
        root.addHandler(handler)
    from ..core.secrets import preload

    preload()  # the screen's library, once, before the first request or log line
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in ("apscheduler", "watchdog"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    ORIGIN.clear()
    ORIGIN.update(started_by(env), started_at=time.time())
    DESTINATION.clear()
    DESTINATION.update(destination)
    return destination


def logs_to_stderr() -> bool:
    """Whether log lines already reach stderr (so a fatal message need not be printed again)."""
    return bool(DESTINATION.get("stderr"))
