"""One copy of each log line, who started the daemon, its recent errors, and failures apart
from fallbacks in ``status``."""

from __future__ import annotations

import logging
import logging.handlers
import re
import signal
from pathlib import Path

from maestrod_testkit import DaemonFactory, DaemonHandle, wait_for

from maestro_memory.daemon import logsetup

STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def test_by_hand_the_lines_go_to_the_rotating_file_only(daemon: DaemonHandle) -> None:
    assert daemon.result("ping")["pong"]
    log = daemon.log_text()
    assert "listening on" in log
    assert all(STAMP.match(line) for line in log.splitlines() if line.strip())
    stderr = daemon.stderr_path.read_text(errors="replace")
    assert "listening on" not in stderr  # not a second copy
    status = daemon.status()
    assert status["log"]["to"] == "file" and status["log"]["path"] == str(daemon.paths.log_path)
    assert status["started"]["by"] == "by hand"


def test_under_systemd_the_lines_go_to_stderr_without_timestamps(
    daemon_factory: DaemonFactory,
) -> None:
    daemon = daemon_factory(env={"INVOCATION_ID": "0123456789abcdef"})
    assert daemon.result("ping")["pong"]
    stderr = daemon.stderr_path.read_text(errors="replace")
    started = [line for line in stderr.splitlines() if "listening on" in line]
    assert len(started) == 1 and started[0].startswith("INFO [")  # journald adds the time
    assert "listening on" not in daemon.log_text()
    status = daemon.status()
    assert status["log"]["to"] == "journal"
    assert status["started"]["by"] == "systemd"
    assert "0123456789abcdef" in status["started"]["detail"]


def test_status_keeps_the_last_error_lines(daemon_factory: DaemonFactory) -> None:
    daemon = daemon_factory()
    daemon.paths.config_path.write_text("this is [not toml\n")
    daemon.signal(signal.SIGHUP)
    wait_for(
        lambda: any(
            "keeping the running configuration" in line
            for line in daemon.status()["log"]["recent_errors"]
        ),
        message="the SIGHUP error in status",
    )


def test_fallbacks_are_not_failures(daemon: DaemonHandle, tmp_path: Path) -> None:
    stranger = tmp_path / "not-registered"
    stranger.mkdir()
    for _ in range(3):
        reply = daemon.request("entries", stranger)
        assert reply["error"]["code"] == "not_registered"
    assert daemon.request("no_such_op")["error"]["code"] == "unknown_op"
    requests = daemon.status()["requests"]
    assert requests["fallbacks"] == 3
    assert requests["failed"] == 1
    assert requests["errors"] == {"not_registered": 3, "unknown_op": 1}
    assert requests["ops"]["entries"]["failed"] == 0
    assert requests["ops"]["entries"]["fallbacks"] == 3


def test_setup_logging_by_hand_is_one_rotating_file(tmp_path: Path) -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        where = logsetup.setup_logging(tmp_path / "maestrod.log", False, env={})
        added = [h for h in root.handlers if h not in before]
        files = [h for h in added if isinstance(h, logging.handlers.RotatingFileHandler)]
        assert len(files) == 1 and files[0].maxBytes == logsetup.MAX_BYTES
        assert files[0].backupCount == logsetup.BACKUPS
        assert where == {"to": "file", "path": str(tmp_path / "maestrod.log"), "stderr": False}
    finally:
        for handler in list(root.handlers):
            if handler not in before:
                root.removeHandler(handler)
                handler.close()


def test_who_started_it() -> None:
    assert logsetup.started_by({"INVOCATION_ID": "abc"})["how"] == "systemd"
    assert logsetup.started_by({"XPC_SERVICE_NAME": "com.maestro.memory"})["how"] == "launchd"
    # macOS terminals carry XPC_SERVICE_NAME=0: that is a person.
    assert logsetup.started_by({"XPC_SERVICE_NAME": "0"})["how"] == "by hand"
    assert logsetup.started_by({"MAESTRO_STARTED_BY": "maestroctl"})["how"] == "maestroctl start"
    # A JOURNAL_STREAM inherited by a process whose stderr is elsewhere is not the journal.
    assert logsetup.service_manager({"JOURNAL_STREAM": "1:1"}) is None
