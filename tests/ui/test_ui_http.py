"""``maestroctl ui`` over raw HTTP: each security rule against the real server process.

http.client is used (not a browser) so that the tests can send what a browser would never
send from the page itself: a foreign Host header, a POST without the CSRF token, a foreign
Origin, no cookie at all.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ui_support import RENAMED_REASON, UiServer, renamed_path_project, start_ui

from maestro_memory.client import Client

CLI = [sys.executable, "-m", "maestro_memory.client.cli"]


def request(
    server: UiServer,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    host: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{server.port}")
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def login(server: UiServer) -> str:
    """The Cookie header the token buys."""
    status, headers, _ = request(server, "GET", f"/?token={server.token}")
    assert status == 303 and headers["location"] == "/"
    return headers["set-cookie"].split(";", 1)[0]


def csrf(server: UiServer, cookie: str) -> str:
    status, _, body = request(server, "GET", "/api/session", headers={"Cookie": cookie})
    assert status == 200
    token = json.loads(body)["csrf"]
    assert isinstance(token, str) and len(token) >= 32
    return token


def post_review(
    server: UiServer, entry_id: str, action: str, headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    body = json.dumps({"id": entry_id, "action": action}).encode()
    status, _, raw = request(
        server,
        "POST",
        "/api/review",
        headers={"Content-Type": "application/json", **headers},
        body=body,
    )
    return status, json.loads(raw or b"{}")


def semantic_text(project: Path) -> str:
    return (project / ".maestro" / "memory" / "semantic.md").read_text()


def test_url_is_the_first_line_and_the_server_binds_loopback_only(ui_server: UiServer) -> None:
    assert ui_server.url.startswith("http://127.0.0.1:")
    assert "token=" in ui_server.url
    # Listening on 127.0.0.1 only: the port is closed on every other local address.
    other = socket.gethostbyname(socket.gethostname())
    addresses = [a for a in {other} if not a.startswith("127.")]
    for address in addresses:
        with pytest.raises(OSError), socket.create_connection((address, ui_server.port), 2):
            pass
    if not Path("/proc/net/tcp").exists():
        pytest.skip("the listening-socket check reads Linux's /proc/net/tcp")
    ss = Path("/proc/net/tcp").read_text().splitlines()[1:]
    listening = [
        line.split()[1] for line in ss if line.split()[3] == "0A"
    ]  # state LISTEN: local address as HEXIP:HEXPORT
    ours = [a for a in listening if int(a.split(":")[1], 16) == ui_server.port]
    assert ours == ["0100007F:" + f"{ui_server.port:04X}"]


def test_the_token_sets_a_strict_httponly_cookie_and_leaves_the_url(ui_server: UiServer) -> None:
    status, headers, _ = request(ui_server, "GET", f"/?token={ui_server.token}")
    assert status == 303
    assert headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    assert "Path=/" in cookie
    assert ui_server.token not in cookie  # the cookie is a separate secret


@pytest.mark.parametrize(
    "path", ["/", "/api/session", "/api/overview", "/api/search?q=tests", "/static/app.js"]
)
def test_without_the_cookie_there_is_no_data(ui_server: UiServer, path: str) -> None:
    status, _, body = request(ui_server, "GET", path)
    assert status == 401
    assert b"tests" not in body and b"csrf" not in body
    assert json.loads(body)["error"]["code"] == "unauthorized"


def test_the_token_is_good_once(ui_server: UiServer) -> None:
    cookie = login(ui_server)
    again, headers, body = request(ui_server, "GET", f"/?token={ui_server.token}")
    assert again == 403 and "set-cookie" not in headers  # a fresh client, the same URL
    assert json.loads(body)["error"]["code"] == "token_used"
    status, _, _ = request(ui_server, "GET", "/api/overview")
    assert status == 401
    back, headers, _ = request(
        ui_server, "GET", f"/?token={ui_server.token}", headers={"Cookie": cookie}
    )
    assert back == 303 and headers["location"] == "/" and "set-cookie" not in headers
    status, _, _ = request(ui_server, "GET", "/api/overview", headers={"Cookie": cookie})
    assert status == 200  # the cookie carries the session


def test_a_wrong_token_or_cookie_is_refused(ui_server: UiServer) -> None:
    status, headers, _ = request(ui_server, "GET", "/?token=" + "x" * 43)
    assert status == 403 and "set-cookie" not in headers
    port = ui_server.port
    status, _, body = request(
        ui_server, "GET", "/api/overview", headers={"Cookie": f"maestro_ui_{port}=guess"}
    )
    assert status == 401 and b"semantic" not in body


def test_with_the_cookie_the_data_is_served(ui_server: UiServer, seeded: dict[str, str]) -> None:
    cookie = login(ui_server)
    status, _, body = request(ui_server, "GET", "/api/overview", headers={"Cookie": cookie})
    assert status == 200
    data = json.loads(body)
    assert seeded["tests"] in [e["id"] for e in data["semantic"]]
    assert data["context"]["tokens"] > 0


@pytest.mark.parametrize(
    "host",
    ["evil.example:{port}", "127.0.0.1:1", "localhost", "127.0.0.1", "attacker.test", ""],
)
def test_a_foreign_host_header_is_refused(ui_server: UiServer, host: str) -> None:
    cookie = login(ui_server)
    status, _, body = request(
        ui_server,
        "GET",
        "/api/overview",
        headers={"Cookie": cookie},
        host=host.format(port=ui_server.port),
    )
    assert status == 403
    assert json.loads(body)["error"]["code"] == "forbidden_host"
    # Even the token is not honoured under a foreign name (a rebinding page cannot log in).
    status, headers, _ = request(
        ui_server, "GET", f"/?token={ui_server.token}", host=host.format(port=ui_server.port)
    )
    assert status == 403 and "set-cookie" not in headers


def test_localhost_is_accepted_as_a_host(ui_server: UiServer) -> None:
    status, _, _ = request(
        ui_server, "GET", f"/?token={ui_server.token}", host=f"localhost:{ui_server.port}"
    )
    assert status == 303


def test_a_post_needs_the_csrf_token_and_our_origin(
    ui_server: UiServer, seeded: dict[str, str]
) -> None:
    cookie = login(ui_server)
    token = csrf(ui_server, cookie)
    flaky = seeded["flaky"]
    before = semantic_text(ui_server.project)
    origin = ui_server.origin
    refused = [
        ({"Cookie": cookie, "Origin": origin}, "bad_csrf"),
        ({"Cookie": cookie, "Origin": origin, "X-CSRF-Token": "wrong"}, "bad_csrf"),
        ({"Cookie": cookie, "X-CSRF-Token": token}, "bad_origin"),
        ({"Cookie": cookie, "Origin": "http://evil.example", "X-CSRF-Token": token}, "bad_origin"),
        ({"Cookie": cookie, "Origin": "null", "X-CSRF-Token": token}, "bad_origin"),
        ({"Origin": origin, "X-CSRF-Token": token}, "unauthorized"),
    ]
    for headers, code in refused:
        status, body = post_review(ui_server, flaky, "remove", headers)
        assert status in (401, 403), headers
        assert body["error"]["code"] == code, headers
    assert semantic_text(ui_server.project) == before  # nothing changed
    status, body = post_review(
        ui_server, flaky, "remove", {"Cookie": cookie, "Origin": origin, "X-CSRF-Token": token}
    )
    assert status == 200, body
    assert [p["entry"]["id"] for p in body["applied"]] == [flaky]
    after = semantic_text(ui_server.project)
    assert f"mm:id={flaky}" not in after  # the entry is gone ...
    assert 'Removed: "Integration tests were flaky on Tuesdays"' in after  # ... and logged


def test_state_changes_are_post_only(ui_server: UiServer, seeded: dict[str, str]) -> None:
    cookie = login(ui_server)
    status, _, _ = request(
        ui_server,
        "GET",
        f"/api/review?id={seeded['flaky']}&action=remove",
        headers={"Cookie": cookie},
    )
    assert status == 405
    assert f"mm:id={seeded['flaky']}" in semantic_text(ui_server.project)


def test_bad_review_requests_change_nothing(ui_server: UiServer, seeded: dict[str, str]) -> None:
    cookie = login(ui_server)
    headers = {
        "Cookie": cookie,
        "Origin": ui_server.origin,
        "X-CSRF-Token": csrf(ui_server, cookie),
    }
    before = semantic_text(ui_server.project)
    status, body = post_review(ui_server, seeded["flaky"], "explode", headers)
    assert status == 400 and "must be one of" in body["error"]["message"]
    status, body = post_review(ui_server, seeded["tests"], "remove", headers)  # not flagged
    assert status == 400 and body["error"]["code"] == "rejected"
    status, body = post_review(ui_server, "s-00000000", "remove", headers)
    assert status == 404
    for content_type, raw in [
        ("text/plain", b'{"id": "x", "action": "remove"}'),  # a form could send this
        ("application/json", b"not json"),
        ("application/json", b"[]"),
        ("application/json", b'{"id": 7, "action": "remove"}'),
    ]:
        status, _, _ = request(
            ui_server,
            "POST",
            "/api/review",
            headers={**headers, "Content-Type": content_type},
            body=raw,
        )
        assert status == 400, (content_type, raw)
    assert semantic_text(ui_server.project) == before


def test_every_response_carries_a_strict_csp(ui_server: UiServer) -> None:
    cookie = login(ui_server)
    for path in ("/", "/static/app.js", "/api/session", "/api/nothing-here"):
        _, headers, _ = request(ui_server, "GET", path, headers={"Cookie": cookie})
        csp = headers["content-security-policy"]
        assert "default-src 'self'" in csp
        assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
        assert "frame-ancestors 'none'" in csp
        assert headers["x-content-type-options"] == "nosniff"
    _, headers, _ = request(ui_server, "GET", "/api/session")  # refusals too
    assert "default-src 'self'" in headers["content-security-policy"]


def test_the_page_has_no_inline_script_style_or_handlers(ui_server: UiServer) -> None:
    cookie = login(ui_server)
    _, _, html = request(ui_server, "GET", "/", headers={"Cookie": cookie})
    text = html.decode()
    assert "<script src=" in text
    assert "<script>" not in text and "<style" not in text and "style=" not in text
    assert not re.search(r"\son[a-z]+\s*=", text, re.IGNORECASE)  # no inline handlers
    _, _, js = request(ui_server, "GET", "/static/app.js", headers={"Cookie": cookie})
    assert b"innerHTML" not in js.replace(b"never through innerHTML", b"")


def test_a_project_outside_the_list_is_refused(ui_server: UiServer, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with Client(other, direct=True) as client:
        client.save_semantic("Secret of another project", "project_context", 0.9)
    cookie = login(ui_server)
    status, _, body = request(
        ui_server, "GET", f"/api/overview?project={other}", headers={"Cookie": cookie}
    )
    assert status == 404 and b"Secret" not in body


@pytest.mark.parametrize("missing", ["starlette", "uvicorn"])
def test_without_the_extra_the_command_says_how_to_install_it(
    missing: str, project: Path, ui_env: dict[str, str], tmp_path: Path
) -> None:
    # A real 'pip uninstall' would break the other tests; a module that fails to import the
    # way an absent package does is the closest honest stand-in.
    shadow = tmp_path / "shadow"
    (shadow / missing).mkdir(parents=True)
    (shadow / missing / "__init__.py").write_text(
        f"raise ModuleNotFoundError('No module named {missing}', name={missing!r})\n"
    )
    env = {**ui_env, "PYTHONPATH": str(shadow)}
    done = subprocess.run(
        [*CLI, "-C", str(project), "ui", "--no-open"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1
    assert "pip install 'maestro-agent-memory[ui]'" in done.stderr
    assert done.stdout == ""


def test_sigint_stops_it_cleanly_even_with_an_event_stream_open(
    ui_server: UiServer,
) -> None:
    cookie = login(ui_server)
    conn = http.client.HTTPConnection("127.0.0.1", ui_server.port, timeout=20)
    conn.request("GET", "/api/events", headers={"Cookie": cookie})
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.getheader("content-type", "").startswith("text/event-stream")
    assert resp.readline() == b"event: hello\n"
    ui_server.proc.send_signal(signal.SIGINT)
    assert ui_server.proc.wait(15) == 0
    conn.close()


def test_a_port_in_use_is_a_clear_error(project: Path, ui_env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*CLI, "-C", str(project), "ui", "--no-open", "--port", str(port)],
            capture_output=True,
            text=True,
            env=ui_env,
            timeout=60,
        )
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert done.stdout == ""


def test_it_opens_the_url_in_the_browser_unless_told_not_to(
    ui_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    # BROWSER is webbrowser's own override: a script stands in for the user's browser.
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    browser.chmod(0o755)
    env = {**ui_env, "BROWSER": f"{browser} %s", "DISPLAY": ":0"}
    server = start_ui(project, env, open_browser=True)
    try:
        deadline = time.monotonic() + 20
        while not (opened.exists() and opened.read_text()):
            assert time.monotonic() < deadline, "the browser was not opened"
            time.sleep(0.05)  # polling a condition with a deadline
        assert opened.read_text() == server.url
    finally:
        assert server.stop() == 0
    # Without a display nothing is launched (a console browser would take the terminal).
    opened.unlink()
    env = {k: v for k, v in env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    server = start_ui(project, env, open_browser=True)
    try:
        status, _, _ = request(server, "GET", f"/?token={server.token}")
        assert status == 303  # it serves
    finally:
        assert server.stop() == 0
    assert not opened.exists()
    assert "no display" in (server.proc.stderr.read().decode() if server.proc.stderr else "")


def test_when_the_daemon_is_required_and_absent_the_page_says_so(
    ui_env: dict[str, str], project: Path, seeded: dict[str, str]
) -> None:
    server = start_ui(project, {**ui_env, "MAESTRO_REQUIRE_DAEMON": "1"})
    try:
        cookie = login(server)
        status, _, body = request(server, "GET", "/api/overview", headers={"Cookie": cookie})
        assert status == 503
        assert "maestrod is not running" in json.loads(body)["error"]["message"]
        assert b"Always run the tests" not in body
    finally:
        assert server.stop() == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_stale_entry_shows_why_and_the_review_rewrites_it(ui_factory: Any, project: Path) -> None:
    entry_id = renamed_path_project(project)
    server = ui_factory(project)
    cookie = login(server)
    status, _, body = request(server, "GET", "/api/overview", headers={"Cookie": cookie})
    assert status == 200
    data = json.loads(body)
    (entry,) = [e for e in data["semantic"] if e["id"] == entry_id]
    assert entry["band"] == "stale" and entry["state"] == "stale"
    assert entry["stale"] == RENAMED_REASON
    assert [p["action"] for p in data["review"] if p["entry"]["id"] == entry_id] == ["rewrite"]
    assert entry_id not in data["context"]["included"]
    headers = {"Cookie": cookie, "Origin": server.origin, "X-CSRF-Token": csrf(server, cookie)}
    status, _ = post_review(server, entry_id, "rewrite", headers)
    assert status == 200
    (line,) = [x for x in semantic_text(project).splitlines() if "<!-- mm:" in x]
    assert "] Session tokens are validated in `src/login.py`." in line
