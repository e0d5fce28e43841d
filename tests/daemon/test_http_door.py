"""The loopback HTTP door of a real maestrod (``daemon/http_door/``), with real requests:
who gets an answer (this user, from a tool) and who gets nothing or a refusal (another uid, a
web page's ``Origin``, a foreign ``Host``, a body too large or not JSON), and what a hook
request is answered."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from maestrod_testkit import DaemonHandle

from maestro_memory.common.httpdoor import recorded_port
from maestro_memory.daemon import http_door
from maestro_memory.daemon.http_guard import MAX_BODY

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/net/tcp"), reason="the door needs the kernel's TCP table (Linux)"
)

RULE = "From now on always use tabs for indentation in this project."


@pytest.fixture
def door(daemon_factory: Any, project: Path) -> tuple[DaemonHandle, int, Path]:
    """A daemon with its door on any free port, and a registered project."""
    (project / ".maestro" / "memory").mkdir(parents=True)
    daemon = daemon_factory(config="[http]\nport = 0\n")
    daemon.register(project)
    port = recorded_port(daemon.paths)
    assert port is not None, daemon.stderr_text()
    return daemon, port, project


def request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request; ``headers`` win over the defaults (Host, JSON Content-Type)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        sent = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json"}
        sent.update(headers or {})
        conn.request(method, path, body=body, headers={k: v for k, v in sent.items() if v})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def prompt_payload(project: Path, prompt: str = RULE, session: str = "s-http-1") -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "cwd": str(project),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    ).encode()


def facts(daemon: DaemonHandle, project: Path) -> list[str]:
    result = daemon.result("entries", project, sector="semantic")
    return [e["text"] for e in result["entries"]]


def test_a_prompt_hook_over_http_is_answered_as_the_command_hook_answers(
    door: tuple[DaemonHandle, int, Path],
) -> None:
    daemon, port, project = door
    status, headers, body = request(
        port, "POST", "/hook/claude/user-prompt", prompt_payload(project)
    )
    assert status == 200 and headers["content-type"] == "application/json"
    answer = json.loads(body)
    assert answer["systemMessage"] == "Remembered: Always use tabs for indentation in this project"
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "UserPromptSubmit"
    assert "Always use tabs for indentation" in specific["additionalContext"]
    assert facts(daemon, project) == ["Always use tabs for indentation in this project"]

    # The command hook, given the same kind of prompt, prints the same shape.
    command = subprocess.run(
        [sys.executable, "-m", "maestro_memory.client.cli", "hook", "claude", "user-prompt"],
        input=prompt_payload(project, "From now on never commit generated files.", "s-cmd"),
        capture_output=True,
        cwd=project,
        env={**os.environ, "MAESTRO_HOME": str(daemon.home), "MAESTRO_HOOK_DEADLINE": "8"},
        timeout=60,
        check=True,
    )
    printed = json.loads(command.stdout)
    assert set(printed) == set(answer)
    assert printed["systemMessage"].startswith("Remembered: Never commit generated files")


def test_a_hook_with_nothing_to_say_answers_an_empty_object(
    door: tuple[DaemonHandle, int, Path],
) -> None:
    _, port, project = door
    payload = json.dumps({"session_id": "s2", "cwd": str(project)}).encode()
    assert request(port, "POST", "/hook/claude/stop", payload)[::2] == (200, b"{}")
    assert request(port, "POST", "/hook/claude/no-such-event", payload)[0] == 404
    assert request(port, "POST", "/hook/nobody/user-prompt", payload)[0] == 404


def test_a_kept_alive_connection_is_answered_request_after_request(
    door: tuple[DaemonHandle, int, Path],
) -> None:
    """An MCP client keeps its connection: each answer comes whole on it. The handler turns
    Nagle's algorithm off, or every answer after the first waited for the client's delayed
    ACK (40 ms on Linux; see RequestHandler)."""
    from maestro_memory.daemon.http_door.handler import RequestHandler

    assert RequestHandler.disable_nagle_algorithm is True
    _, port, project = door
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json"}
    try:
        payload = json.dumps({"session_id": "s-keep", "cwd": str(project)})
        for _ in range(3):
            conn.request("POST", "/hook/claude/stop", body=payload, headers=headers)
            response = conn.getresponse()
            assert (response.status, response.read()) == (200, b"{}")
    finally:
        conn.close()


def test_a_web_pages_origin_is_refused_and_nothing_is_remembered(
    door: tuple[DaemonHandle, int, Path],
) -> None:
    daemon, port, project = door
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{port}"):
        status, _, body = request(
            port, "POST", "/hook/claude/user-prompt", prompt_payload(project), {"Origin": origin}
        )
        assert status == 403 and b"Origin" in body
    assert facts(daemon, project) == []


def test_a_foreign_host_is_refused(door: tuple[DaemonHandle, int, Path]) -> None:
    daemon, port, project = door
    for host in ("evil.example", f"evil.example:{port}", f"localhost:{port}", "127.0.0.1"):
        status, _, body = request(
            port, "POST", "/hook/claude/user-prompt", prompt_payload(project), {"Host": host}
        )
        assert status == 403 and b"Host" in body, host
    assert facts(daemon, project) == []


def test_an_oversized_body_is_refused_before_it_is_read(
    door: tuple[DaemonHandle, int, Path],
) -> None:
    daemon, port, project = door
    # Only the headers are sent: the refusal comes without the body being waited for.
    too_long = {"Content-Length": str(MAX_BODY + 1)}
    status, _, body = request(port, "POST", "/hook/claude/user-prompt", None, too_long)
    assert status == 413 and b"at most" in body
    status, _, _ = request(port, "POST", "/mcp", None, {"Content-Length": str(10 * MAX_BODY)})
    assert status == 413
    assert facts(daemon, project) == []


def test_a_body_that_is_not_json_is_refused(door: tuple[DaemonHandle, int, Path]) -> None:
    daemon, port, project = door
    for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""):
        status, _, _ = request(
            port, "POST", "/hook/claude/user-prompt", prompt_payload(project),
            {"Content-Type": media},
        )  # fmt: skip
        assert status == 415, media
    status, _, body = request(port, "POST", "/mcp", b"{not json")
    assert status == 400 and json.loads(body)["error"]["code"] == -32700
    assert request(port, "GET", "/mcp")[0] == 405  # no event stream is offered
    assert facts(daemon, project) == []


def test_an_mcp_request_needs_its_session(door: tuple[DaemonHandle, int, Path]) -> None:
    _, port, project = door
    listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()
    assert request(port, "POST", "/mcp", listing)[0] == 400
    assert request(port, "POST", "/mcp", listing, {"Mcp-Session-Id": "0" * 32})[0] == 404
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    status, headers, _ = request(port, "POST", f"/mcp?project={project}", json.dumps(init).encode())
    session = headers["mcp-session-id"]
    assert status == 200 and len(session) == 32
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert request(port, "POST", "/mcp", note, {"Mcp-Session-Id": session})[0] == 202
    status, _, body = request(port, "POST", "/mcp", listing, {"Mcp-Session-Id": session})
    assert status == 200 and len(json.loads(body)["result"]["tools"]) == 6
    assert request(port, "DELETE", "/mcp", None, {"Mcp-Session-Id": session})[0] == 200
    assert request(port, "POST", "/mcp", listing, {"Mcp-Session-Id": session})[0] == 404


def test_connections_past_the_limit_are_answered_busy(
    door: tuple[DaemonHandle, int, Path],
) -> None:
    _, port, _ = door
    held = [socket.create_connection(("127.0.0.1", port), timeout=30)]
    try:
        # Each held connection takes a slot once accepted: the accept loop takes them in order.
        held += [
            socket.create_connection(("127.0.0.1", port), timeout=30)
            for _ in range(http_door.MAX_CONNECTIONS - 1)
        ]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as extra:
            answer = extra.makefile("rb").read()
        assert answer.startswith(b"HTTP/1.1 503 ")
    finally:
        for conn in held:
            conn.close()


ANOTHER_USER = """
import json, socket, sys
port, body = int(sys.argv[1]), sys.argv[2].encode()
s = socket.create_connection(("127.0.0.1", port), timeout=30)
head = (
    f"POST /hook/claude/user-prompt HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\n"
    f"Content-Type: application/json\\r\\nContent-Length: {len(body)}\\r\\n\\r\\n"
)
got = b""
try:
    s.sendall(head.encode() + body)
    while chunk := s.recv(65536):
        got += chunk
except OSError as exc:
    print(json.dumps({"error": type(exc).__name__}))
print(json.dumps({"got": got.decode("latin-1")}))
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root")
def test_another_user_gets_nothing(door: tuple[DaemonHandle, int, Path]) -> None:
    daemon, port, project = door
    nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    done = subprocess.run(
        [*nobody, sys.executable, "-I", "-c", ANOTHER_USER, str(port), prompt_payload(project)],
        capture_output=True,
        timeout=60,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    seen = [json.loads(line) for line in done.stdout.splitlines()]
    assert seen[-1] == {"got": ""}  # not a byte back: the connection was closed unread
    assert facts(daemon, project) == []
    assert "is not the owner" in daemon.log_text()
    # This user, the same request: answered.
    assert request(port, "POST", "/hook/claude/user-prompt", prompt_payload(project))[0] == 200


def test_the_door_is_closed_and_its_record_gone_when_the_daemon_stops(
    door: tuple[DaemonHandle, int, Path],
) -> None:
    daemon, port, _ = door
    assert daemon.stop() == 0
    assert recorded_port(daemon.paths) is None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_a_restarted_daemon_opens_its_door_on_the_same_port(
    door: tuple[DaemonHandle, int, Path], daemon_factory: Any
) -> None:
    """Connections the last daemon closed first (its stop closes one itself; a refusal closes
    another) leave the port in TIME_WAIT for a minute: the next daemon still listens there."""
    daemon, port, _ = door
    assert request(port, "GET", "/mcp")[0] == 405  # answered with Connection: close
    assert daemon.stop() == 0
    again = daemon_factory(config=f"[http]\nport = {port}\n")
    assert recorded_port(again.paths) == port, again.log_text()
    assert request(port, "GET", "/mcp")[0] == 405


def test_no_door_when_the_config_says_so(daemon_factory: Any) -> None:
    daemon = daemon_factory(config="[http]\nenabled = false\n")
    assert recorded_port(daemon.paths) is None
    assert "HTTP door on" not in daemon.log_text()
