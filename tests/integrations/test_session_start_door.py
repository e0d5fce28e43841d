"""The session start ``integrate claude --scope local`` writes while maestrod's HTTP door is
open: a POSIX sh command that POSTs the hook's JSON to the door with ``curl`` (no Python
started), and runs the Python hook with the same input when that gets no answer (door down,
refusing, too slow, or no curl). Each test runs the exact command from the written settings
with ``/bin/sh -c``, as Claude Code does, against a real daemon."""

from __future__ import annotations

import contextlib
import fcntl
import http.client
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from maestro_memory.client.integrations.agent_checks import DOOR_DOWN
from maestro_memory.client.integrations.agent_settings import (
    DOOR_DAEMON_TIMEOUT,
    door_hook_command,
)
from maestro_memory.client.integrations.hooks import DAEMON_TIMEOUT
from maestro_memory.common.httpdoor import hook_url, recorded_port

from .support import person_env, run_cli

pytestmark = [
    pytest.mark.skipif(
        not os.path.exists("/proc/net/tcp"), reason="the door needs the kernel's TCP table"
    ),
    pytest.mark.skipif(shutil.which("curl") is None, reason="the door's session start uses curl"),
]

RULE = "Always use pnpm instead of npm"
DOWN = DOOR_DOWN.format(what="prompts (nothing is remembered)")


@pytest.fixture
def env(tmp_path: Path, maestro_home: Path) -> dict[str, str]:
    return person_env(tmp_path)


@pytest.fixture
def door(daemon_factory: Any, project: Path, env: dict[str, str]) -> tuple[Any, int, str]:
    """A daemon with its door on a free port, a project holding one rule, and the session
    start command ``integrate claude --scope local`` wrote for it."""
    (project / ".maestro" / "memory").mkdir(parents=True)
    daemon = daemon_factory(config="[http]\nport = 0\n")
    daemon.register(project)
    port = recorded_port(daemon.paths)
    assert port is not None
    save = ["save-semantic", RULE, "--category", "user_preference", "--confidence", "1.0"]
    saved = run_cli(["-C", str(project), *save], env=env)
    assert saved.returncode == 0, saved.stderr
    done = run_cli(["-C", str(project), "integrate", "claude", "--scope", "local"], env=env)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    [group] = settings["hooks"]["SessionStart"]
    [hook] = group["hooks"]
    assert hook["type"] == "command"
    return daemon, port, hook["command"]


def start_input(project: Path, session: str) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    ).encode()


def run_start(
    command: str, project: Path, env: dict[str, str], session: str
) -> tuple[int, dict[str, Any]]:
    """The command as Claude Code runs it: ``/bin/sh -c``, the event's JSON on stdin."""
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=start_input(project, session),
        capture_output=True,
        cwd=project,
        env={**env, "CLAUDE_PROJECT_DIR": str(project)},
        timeout=60,
    )
    printed: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, printed


def memory_of(printed: dict[str, Any]) -> str:
    context: str = printed.get("hookSpecificOutput", {}).get("additionalContext", "")
    return context


NO_PYTHON = {"PYTHONHOME": "/nonexistent"}  # any Python started dies before it prints


def test_the_session_start_gets_its_memory_through_the_door_without_python(
    door: tuple[Any, int, str], project: Path, env: dict[str, str]
) -> None:
    _, port, command = door
    assert hook_url(port, "claude", "session-start", project) in command
    # The premise: under NO_PYTHON the Python hook prints nothing.
    direct = subprocess.run(
        [str(Path(sys.executable).parent / "maestroctl"), "hook", "claude", "session-start"],
        input=start_input(project, "s-premise"),
        capture_output=True,
        env={**env, **NO_PYTHON},
        timeout=60,
    )
    assert direct.stdout == b""
    code, printed = run_start(command, project, {**env, **NO_PYTHON}, "s-door")
    assert code == 0
    assert "[Project Memory]" in memory_of(printed) and RULE in memory_of(printed)
    assert "systemMessage" not in printed
    assert printed["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_the_user_scope_session_start_names_no_project_and_is_served_from_cwd(
    door: tuple[Any, int, str], project: Path, env: dict[str, str]
) -> None:
    _, port, _ = door
    done = run_cli(["-C", str(project), "integrate", "claude", "--scope", "user"], env=env)
    assert done.returncode == 0, done.stderr
    settings = json.loads((Path(env["HOME"]) / ".claude" / "settings.json").read_text())
    [hook] = [h for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert hook_url(port, "claude", "session-start") + " 2>" in hook["command"]  # no ?project=
    code, printed = run_start(hook["command"], project, {**env, **NO_PYTHON}, "s-user")
    assert code == 0 and RULE in memory_of(printed)


def test_with_the_daemon_down_the_python_hook_answers_and_says_so(
    door: tuple[Any, int, str], project: Path, env: dict[str, str]
) -> None:
    daemon, _, command = door
    assert daemon.stop() == 0
    code, printed = run_start(command, project, env, "s-down")
    assert code == 0
    assert RULE in memory_of(printed)  # from the files, as the command hook reads them
    assert printed["systemMessage"] == DOWN


def test_without_curl_the_python_hook_answers(
    door: tuple[Any, int, str], project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    _, _, command = door
    bare = tmp_path / "bin-without-curl"
    bare.mkdir()
    cat = shutil.which("cat")
    assert cat is not None
    (bare / "cat").symlink_to(cat)
    code, printed = run_start(command, project, {**env, "PATH": str(bare)}, "s-nocurl")
    assert code == 0
    assert RULE in memory_of(printed)
    assert "systemMessage" not in printed  # the door is open: nothing to tell
    code, printed = run_start(command, project, {**env, "PATH": str(bare), **NO_PYTHON}, "s-x")
    assert (code, printed) == (0, {})  # that answer was the Python hook's


class _Refusing(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_error(403, "not the door")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def listener_on(port: int, answer: bool) -> Iterator[None]:
    """Something else on the door's port: an HTTP server that refuses every request, or a
    socket that accepts connections (the kernel's backlog) and never answers."""
    if answer:
        http.server.ThreadingHTTPServer.allow_reuse_address = True
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Refusing)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield
        finally:
            server.shutdown()
            server.server_close()
        return
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(8)
        yield
    finally:
        sock.close()


@pytest.mark.parametrize("answer", [True, False], ids=["refused", "no-answer"])
def test_a_port_that_refuses_or_never_answers_falls_back_to_python(
    door: tuple[Any, int, str], project: Path, env: dict[str, str], answer: bool
) -> None:
    daemon, port, command = door
    assert daemon.stop() == 0
    with listener_on(port, answer):
        code, printed = run_start(command, project, env, f"s-{answer}")
    assert code == 0
    assert RULE in memory_of(printed)
    assert printed["systemMessage"] == DOWN


def test_doctor_accepts_the_door_command_and_checks_its_program(
    door: tuple[Any, int, str], project: Path, env: dict[str, str]
) -> None:
    _, port, _ = door
    checks = doctor_checks(project, env)
    assert [c["status"] for c in checks] == ["ok"], checks
    local = project / ".claude" / "settings.local.json"
    settings = json.loads(local.read_text())
    url = hook_url(port, "claude", "session-start", project)
    gone = "/nonexistent/bin/maestroctl"
    settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] = door_hook_command(
        "claude", "session-start", url, program=gone
    )
    local.write_text(json.dumps(settings))
    [check] = doctor_checks(project, env)
    assert check["status"] == "fail" and gone in check["detail"], check
    # integrate puts its own command back in place of that one, not beside it
    done = run_cli(["-C", str(project), "integrate", "claude", "--scope", "local"], env=env)
    assert done.returncode == 0, done.stderr
    groups = json.loads(local.read_text())["hooks"]["SessionStart"]
    [start] = [h for g in groups for h in g["hooks"]]
    assert gone not in start["command"]
    assert [c["status"] for c in doctor_checks(project, env)] == ["ok"]


def doctor_checks(project: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    proc = run_cli(["doctor", "-C", str(project), "--json"], env=env)
    checks = json.loads(proc.stdout)["result"]["checks"]
    return [c for c in checks if c["name"] == "claude hooks"]


# -------------------------------------------------------------------------------------------
# A busy writer: the door waits for it, and never writes past it
# -------------------------------------------------------------------------------------------
@contextlib.contextmanager
def writer_kept_busy(project: Path) -> Iterator[Callable[[], None]]:
    """The project's lock held from here (the daemon's writer waits for it, as behind a long
    commit); yields the release, also done on the way out."""
    fd = os.open(project / ".maestro" / "memory" / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    released = threading.Event()

    def release() -> None:
        if not released.is_set():
            released.set()
            os.close(fd)

    try:
        yield release
    finally:
        release()


def door_fallbacks(maestro_home: Path, daemon_pid: int) -> list[str]:
    """hooks.log lines in which the daemon's own door went to the files past its writer."""
    logs = list(maestro_home.rglob("hooks.log"))
    lines = [line for log in logs for line in log.read_text().splitlines()]
    return [line for line in lines if f"pid={daemon_pid} " in line and "directly" in line]


def test_a_session_start_waits_for_a_busy_writer_instead_of_writing_past_it(
    door: tuple[Any, int, str], project: Path, env: dict[str, str], maestro_home: Path
) -> None:
    daemon, _, command = door
    # A writer busy 0.8 s: past a hook process's daemon timeout, within the door's. (The
    # timer is the load, not a synchronisation: the assertions hold however late it fires.)
    assert DAEMON_TIMEOUT < 0.8 < DOOR_DAEMON_TIMEOUT
    with writer_kept_busy(project) as release:
        timer = threading.Timer(0.8, release)
        timer.start()
        code, printed = run_start(command, project, env, "s-busy")
        timer.cancel()
    assert code == 0
    assert RULE in memory_of(printed)
    # Before, the door's call timed out at the hook's 0.3 s and "used the files directly":
    # a second writer, in the daemon, beside its own.
    assert door_fallbacks(maestro_home, daemon.proc.pid) == []


def test_a_session_start_the_writer_keeps_waiting_is_answered_503_for_the_python_hook(
    door: tuple[Any, int, str], project: Path, maestro_home: Path
) -> None:
    daemon, port, _ = door
    url = urlsplit(hook_url(port, "claude", "session-start", project))
    semantic = (project / ".maestro" / "memory" / "semantic.md").read_bytes()
    with writer_kept_busy(project):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request(
                "POST",
                f"{url.path}?{url.query}",
                body=start_input(project, "s-kept-waiting"),
                headers={"Content-Type": "application/json", "Host": f"127.0.0.1:{port}"},
            )
            reply = conn.getresponse()
            status, body = reply.status, json.loads(reply.read())
        finally:
            conn.close()
        # Answered while the lock is still held: the door gave up, it did not go around.
        assert (project / ".maestro" / "memory" / "semantic.md").read_bytes() == semantic
    assert status == 503, body  # curl -f fails on it and the command runs the Python hook
    assert "did not answer 'initialize'" in body["error"]
    assert door_fallbacks(maestro_home, daemon.proc.pid) == []
