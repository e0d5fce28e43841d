"""Helpers for the ``maestroctl ui`` tests (the fixtures are in ``conftest.py``).

``ui_server`` runs ``maestroctl -C <project> ui --no-open --port 0`` as a subprocess (the real
uvicorn, the real socket), reads the URL from its first line of stdout with a deadline, and
stops it with SIGTERM at teardown, checking that it exits 0. ``browser`` is Debian's headless
chromium driven by Playwright (Playwright cannot download its own browser here); the browser
tests skip, saying why, only when ``/usr/bin/chromium`` is missing (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from maestro_memory.client import Client

CHROMIUM = "/usr/bin/chromium"
REQUIRE_BROWSER_ENV = "MAESTRO_REQUIRE_BROWSER"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0
HOSTILE = (
    '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script> '
    "**bold** [x](javascript:window.__pwned=1)"
)


def seed(project: Path, client: Client, *, hostile: bool = True) -> dict[str, str]:
    """A realistic memory (plus one hostile entry); returns the ids of entries by role."""
    ids: dict[str, str] = {}

    def sem(role: str, fact: str, category: str, confidence: float) -> None:
        result = client.save_semantic(fact, category, confidence, project=project)
        ids[role] = result["entry"]["id"]

    pref, arch, rule, ctx = (
        "user_preference",
        "architecture_decision",
        "quality_rule",
        "project_context",
    )
    client.initialize("seed-1", project=project)
    sem("tests", "Always run the tests before committing", rule, 1.0)
    sem("pref", "Prefers small focused pull requests with a why in the message", pref, 0.9)
    sem("auth", "JWT auth with 15 min expiry, refresh token in an HttpOnly cookie", arch, 0.95)
    sem("supabase", "Supabase Auth chosen over Auth0 for cost and integration", arch, 0.6)
    sem("ci", "CI runs on GitHub Actions and must pass before merge", ctx, 0.9)
    sem("lint", "The legacy lint step is allowed to warn on generated files", ctx, 0.3)
    sem("flaky", "Integration tests were flaky on Tuesdays", ctx, 0.15)
    if hostile:
        sem("hostile", HOSTILE, ctx, 0.8)
    else:
        sem("nulls", "Always check for null relations before nested access", rule, 1.0)
        sem("exports", "Never use default exports in the web client", pref, 1.0)
    e1 = client.save_episodic(
        "Worked on user auth: 5 stories, passport.js local strategy, refresh rotation",
        "seed-1",
        0.9,
        project=project,
    )
    ids["episode"] = e1["entry"]["id"]
    client.initialize("seed-2", project=project)
    e2 = client.save_episodic(
        "Fixed the flaky upload test by waiting on the progress event",
        "seed-2",
        0.8,
        project=project,
    )
    ids["episode2"] = e2["entry"]["id"]
    client.reinforce(ids["tests"], confirmed=True, project=project)
    return ids


@dataclass
class UiServer:
    proc: subprocess.Popen[bytes]
    url: str  # with the token
    project: Path

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("maestroctl ui did not stop on SIGTERM") from None
        return self.proc.returncode


def start_ui(
    project: Path, env: dict[str, str], *extra: str, open_browser: bool = False
) -> UiServer:
    argv = [sys.executable, "-m", "maestro_memory.client.cli", "-C", str(project), "ui"]
    proc = subprocess.Popen(
        [*argv, *([] if open_browser else ["--no-open"]), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None
    line = b""
    deadline = time.monotonic() + START_TIMEOUT
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or proc.poll() is not None:
                proc.kill()
                _, err = proc.communicate()
                raise AssertionError(
                    f"maestroctl ui printed no URL: {err.decode(errors='replace')}"
                )
            if sel.select(left):
                chunk = os.read(proc.stdout.fileno(), 1)
                if not chunk:
                    continue
                line += chunk
    return UiServer(proc, line.decode().strip(), project)


RENAMED_REASON = "`src/auth.py` was renamed to `src/login.py`"


def renamed_path_project(project: Path) -> str:
    """A git project whose entry names ``src/auth.py``, then renamed to ``src/login.py`` and
    noticed by the next session start; returns the (now stale) entry's id. Needs git."""

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "dev@example.com")
    git("config", "user.name", "Dev")
    (project / "src").mkdir()
    (project / "src" / "auth.py").write_text("def check(token): ...\n")
    git("add", "-A")
    git("commit", "-qm", "start")
    with Client(project, direct=True) as client:
        fact = "Session tokens are validated in `src/auth.py`."
        entry_id = str(client.save_semantic(fact, "architecture_decision", 0.9)["entry"]["id"])
        client.initialize("s1")
        git("mv", "src/auth.py", "src/login.py")
        git("commit", "-qm", "rename")
        client.initialize("s2")  # the session start that notices
    return entry_id
