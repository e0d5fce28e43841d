"""The installed copy works as a user runs it: the wheel with ``[ui,mcp]`` in a virtualenv outside
the checkout, every process started from that venv's ``bin/``, in a folder outside the checkout,
with nothing of the checkout on the Python path.

One walk through what a new user does: every command's ``--help``; start, init, register, save,
context, search; a session-start hook of each agent tool; ``mcp`` (initialize, a tool list, a
tool call); ``ui`` serving its page and its script; ``doctor``; stop.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import selectors
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .support import REPO, clean_env, project_version

RULE = "Always run the tests before committing"
TIMEOUT = 60.0


@dataclass
class Installed:
    venv: Path
    home: Path
    project: Path
    env: dict[str, str]

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def ctl(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.bin("maestroctl"), *args],
            cwd=self.project,
            env=self.env,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        if check:
            assert done.returncode == 0, f"maestroctl {args}: {done.stdout}\n{done.stderr}"
        return done

    def json(self, *args: str) -> dict[str, Any]:
        out = json.loads(self.ctl("--json", *args).stdout)
        assert out["ok"] is True, out
        return dict(out["result"])


@pytest.fixture
def installed(installed_venv: Path, tmp_path: Path) -> Iterator[Installed]:
    home = tmp_path / "home"  # HOME and MAESTRO_HOME: nothing of the real user is touched
    home.mkdir(mode=0o700)
    project = tmp_path / "project"
    project.mkdir()
    env = clean_env(HOME=str(home), MAESTRO_HOME=str(home / "maestro"))
    env.pop("CLAUDE_PROJECT_DIR", None)
    inst = Installed(installed_venv, home, project, env)
    yield inst
    inst.ctl("stop", check=False)


def test_the_installed_copy_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    done = subprocess.run(
        [installed.bin("python"), "-c", "import maestro_memory.client as c; print(c.__file__)"],
        cwd=installed.project,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    where = Path(done.stdout.strip()).resolve()
    assert installed.venv.resolve() in where.parents, where
    assert REPO not in where.parents
    assert installed.ctl("--version").stdout == f"maestroctl {project_version()}\n"


def _commands(help_text: str) -> list[str]:
    """The sub-commands ``maestroctl --help`` lists (argparse's indented ``name  summary``)."""
    block = help_text.split("positional arguments:", 1)[1].split("options:", 1)[0]
    return re.findall(r"^    ([a-z][a-z-]*)(?:\s|$)", block, flags=re.MULTILINE)


def test_every_command_answers_help(installed: Installed) -> None:
    commands = _commands(installed.ctl("--help").stdout)
    for known in ("start", "stop", "status", "init", "context", "hook", "mcp", "ui", "doctor"):
        assert known in commands
    assert len(commands) >= 20, commands
    for command in commands:
        done = installed.ctl(command, "--help")
        assert done.stdout.startswith(f"usage: maestroctl {command}"), (command, done.stdout)


def _read_line(proc: subprocess.Popen[str], deadline: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if sel.select(timeout=max(0.0, deadline - time.monotonic())):
                return proc.stdout.readline()
    raise AssertionError("no line from the process before the deadline")


class _Mcp:
    """A stdio MCP session with ``maestroctl mcp``: newline-delimited JSON-RPC."""

    def __init__(self, installed: Installed) -> None:
        self.proc = subprocess.Popen(
            [installed.bin("maestroctl"), "mcp"],
            cwd=installed.project,
            env=installed.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while True:
            msg = json.loads(_read_line(self.proc, deadline))
            if msg.get("id") == self.next_id:
                assert "error" not in msg, msg
                return dict(msg["result"])

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def _mcp_round_trip(installed: Installed) -> None:
    mcp = _Mcp(installed)
    try:
        init = mcp.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "smoke", "version": "1"},
            },
        )
        assert init["serverInfo"]["version"] == project_version()
        mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = {t["name"] for t in mcp.request("tools/list", {})["tools"]}
        assert {"get_context", "remember", "search", "forget"} <= tools
        found = mcp.request("tools/call", {"name": "search", "arguments": {"query": "tests"}})
        assert found.get("isError") is not True, found
        assert RULE in json.dumps(found)
    finally:
        assert mcp.close() == 0


def _ui_page(installed: Installed) -> None:
    proc = subprocess.Popen(
        [installed.bin("maestroctl"), "ui", "--no-open", "--port", "0"],
        cwd=installed.project,
        env=installed.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = _read_line(proc, time.monotonic() + TIMEOUT).strip()
        assert url.startswith("http://127.0.0.1:"), url
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        with opener.open(url, timeout=TIMEOUT) as resp:
            page = resp.read().decode()
            base = f"{resp.url.split('/', 3)[0]}//{resp.url.split('/', 3)[2]}"
        assert resp.status == 200 and "<html" in page.lower(), page[:300]
        scripts = re.findall(r'<script[^>]+src="([^"]+)"', page)
        assert scripts, "the page loads no script"
        with opener.open(base + scripts[0], timeout=TIMEOUT) as resp:
            assert resp.status == 200 and len(resp.read()) > 1000
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=TIMEOUT) == 0, proc.stderr.read() if proc.stderr else ""


def _hook(installed: Installed, tool: str) -> str:
    payload = {
        "session_id": f"smoke-{tool}",
        "cwd": str(installed.project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    return installed.ctl("hook", tool, "session-start", stdin=json.dumps(payload)).stdout


def test_a_new_users_first_session_with_the_installed_copy(installed: Installed) -> None:
    installed.ctl("start")
    assert installed.json("status")["running"] is True
    installed.ctl("init")
    installed.ctl("register")
    saved = installed.json(
        "save-semantic", RULE, "--category", "quality_rule", "--confidence", "1.0"
    )
    assert saved["action"] == "added"
    context = installed.json("context", "--task", "commit a change")
    assert RULE in context["context"]
    hits = installed.json("search", "tests")
    assert RULE in json.dumps(hits)

    for tool in ("claude", "codex", "gemini"):
        out = _hook(installed, tool)
        assert RULE in out, (tool, out)

    _mcp_round_trip(installed)
    _ui_page(installed)

    doctor = installed.json("doctor")
    by_name = {c["name"]: c for c in doctor["checks"]}
    assert by_name["maestrod"]["status"] == "ok"
    assert by_name["maestrod"]["detail"] == installed.bin("maestrod"), by_name["maestrod"]
    assert by_name["daemon"]["status"] == "ok", by_name["daemon"]

    _stop_and_check_gone(installed)


def _stop_and_check_gone(installed: Installed) -> None:
    pid = installed.json("status")["process"]["pid"]
    assert isinstance(pid, int) and pid > 0
    assert installed.ctl("stop").stdout.strip() == f"maestrod stopped (pid {pid})."
    deadline = time.monotonic() + TIMEOUT
    while True:  # stop waited for the exit; the pid must be gone (or a zombie reaped by init)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, f"maestrod {pid} still runs after stop"
        time.sleep(0.05)
    down = installed.ctl("--json", "status", check=False)
    assert down.returncode == 3 and json.loads(down.stdout)["result"]["running"] is False


def test_the_installed_mcp_server_answers_with_the_daemon_down(installed: Installed) -> None:
    installed.ctl("init")
    installed.json("save-semantic", RULE, "--category", "quality_rule", "--confidence", "1.0")
    assert installed.ctl("status", check=False).returncode == 3  # no daemon
    _mcp_round_trip(installed)
