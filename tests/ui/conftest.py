"""Fixtures for ``maestroctl ui``: the real command in its own process, and real Chromium.

``ui_server`` runs ``maestroctl -C <project> ui --no-open --port 0`` as a subprocess (the real
uvicorn, the real socket), reads the URL from its first line of stdout with a deadline, and
stops it with SIGTERM at teardown, checking that it exits 0. ``browser`` is Debian's headless
chromium driven by Playwright (Playwright cannot download its own browser here); the browser
tests skip, saying why, only when ``/usr/bin/chromium`` is missing (``.ci/run`` installs it,
and sets ``MAESTRO_REQUIRE_BROWSER=1`` so that a missing browser fails CI instead).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import CHROMIUM, CHROMIUM_ARGS, REQUIRE_BROWSER_ENV, UiServer, seed, start_ui

from maestro_memory.client import Client


@pytest.fixture(autouse=True)
def decay_per_session(maestro_home: Path) -> None:
    """These pages show decay happening: several sessions in one test day must each age the
    memory, so the tests read the spec literally (decay_unit "session"), in daemon and direct
    mode alike (both read this config file)."""
    from maestro_memory.common.paths import resolve

    config = resolve({"MAESTRO_HOME": str(maestro_home)}).config_path
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[core]\ndecay_unit = "session"\n', encoding="utf-8")


@pytest.fixture
def ui_env(maestro_home: Path, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "user"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in {"MAESTRO_REQUIRE_DAEMON"}}
    env["MAESTRO_HOME"] = str(maestro_home)
    env["HOME"] = str(home)
    return env


@pytest.fixture
def seeded(project: Path, maestro_home: Path) -> dict[str, str]:
    with Client(project, direct=True) as client:
        return seed(project, client)


@pytest.fixture
def ui_factory(ui_env: dict[str, str]) -> Iterator[Callable[..., UiServer]]:
    started: list[UiServer] = []

    def start(project: Path, *extra: str) -> UiServer:
        server = start_ui(project, ui_env, *extra)
        started.append(server)
        return server

    yield start
    codes = [server.stop() for server in started]
    assert codes == [0] * len(codes), f"maestroctl ui exit codes on SIGTERM: {codes}"


@pytest.fixture
def ui_server(
    ui_factory: Callable[..., UiServer], project: Path, seeded: dict[str, str]
) -> UiServer:
    return ui_factory(project)


@pytest.fixture(scope="session")
def playwright_browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        reason = f"{CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)"
        if os.environ.get(REQUIRE_BROWSER_ENV) == "1":
            pytest.fail(f"{reason}, and {REQUIRE_BROWSER_ENV}=1 requires the browser tests")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(playwright_browser: Any) -> Iterator[Any]:
    context = playwright_browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    try:
        yield page
    finally:
        context.close()
