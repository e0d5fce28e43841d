"""``maestroctl ui`` in real headless Chromium (Debian's), driven by Playwright.

The server is the real command in its own process; the memory is real files, written by the
client in direct mode (and, in the daemon test, by a real ``maestrod``). Waits are Playwright's
own condition waits with deadlines, never sleeps.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ui_support import HOSTILE, RENAMED_REASON, UiServer, renamed_path_project, seed

from maestro_memory.client import Client

WAIT_MS = 20_000
SCREENSHOT = os.environ.get("MAESTRO_UI_SCREENSHOT")  # set to write docs/ui.png from a run


def open_page(page: Any, server: UiServer) -> None:
    page.set_default_timeout(WAIT_MS)
    page.goto(server.url)
    page.wait_for_selector("body[data-ready='1']")


def entry(page: Any, entry_id: str, within: str = "#semantic") -> Any:
    return page.locator(f"{within} li.entry[data-id='{entry_id}']")


def test_the_page_renders_entries_a_chart_and_the_context_block(
    page: Any, ui_server: UiServer, seeded: dict[str, str]
) -> None:
    open_page(page, ui_server)
    assert page.url == f"{ui_server.origin}/"  # the token left the address bar
    tests = entry(page, seeded["tests"])
    assert tests.locator(".text").inner_text() == "Always run the tests before committing"
    assert tests.locator(".band").inner_text() == "always included"
    assert entry(page, seeded["supabase"]).locator(".band").inner_text() == "included when relevant"
    assert entry(page, seeded["lint"]).locator(".band").inner_text() == "only when queried"
    headings = page.locator("#semantic h3").all_inner_texts()
    assert sorted(h.lower() for h in headings) == [
        "architecture decisions",
        "project context",
        "quality rules",
        "user preferences",
    ]
    assert page.locator(f"#episodic li.entry[data-id='{seeded['episode']}']").count() == 1
    # The chart: an SVG with a confidence line, for the selected entry.
    # (A flat line has a zero-height box, which Playwright calls hidden: wait for it attached.)
    entry(page, seeded["auth"]).click()
    page.wait_for_selector("#chart svg.plot path.confidence", state="attached")
    assert page.locator("#chart svg.plot").is_visible()
    assert page.locator("#chart-title").inner_text().startswith("JWT auth")
    assert " H" in (page.locator("#chart path.confidence").get_attribute("d") or "")
    page.locator(f"#episodic li.entry[data-id='{seeded['episode']}']").click()
    page.wait_for_selector("#chart svg.plot path.salience", state="attached")
    # The context block is the one an agent gets now (same op, same budget).
    with Client(ui_server.project, direct=True) as client:
        expected = client.build_context(max_tokens=500)
    assert page.locator("#context").inner_text() == expected["context"]
    assert page.locator("#tokens").inner_text() == f"{expected['tokens']} / 500 tokens"
    assert page.js_errors == []


def test_hostile_entry_text_is_shown_as_text(
    page: Any, ui_server: UiServer, seeded: dict[str, str]
) -> None:
    open_page(page, ui_server)
    hostile = entry(page, seeded["hostile"])
    assert hostile.locator(".text").inner_text() == HOSTILE
    assert hostile.locator("img, script, a").count() == 0
    assert page.locator("#semantic img, #semantic script").count() == 0
    # Search renders it too, as text.
    page.fill("#search", "pwned")
    page.wait_for_selector(f"#results li.entry[data-id='{seeded['hostile']}']")
    assert page.evaluate("window.__pwned") is None
    assert page.js_errors == []


def test_search_ranks_matching_entries(
    page: Any, ui_server: UiServer, seeded: dict[str, str]
) -> None:
    open_page(page, ui_server)
    assert page.locator("#search-section").is_hidden()
    page.fill("#search", "auth cookie")
    page.wait_for_selector(f"#results li.entry[data-id='{seeded['auth']}']")
    ids = page.locator("#results li.entry").evaluate_all("els => els.map(e => e.dataset.id)")
    assert ids[0] == seeded["auth"]  # both words match: first
    assert seeded["supabase"] in ids  # one word matches
    assert seeded["ci"] not in ids
    page.fill("#search", "zzzz-nothing")
    page.wait_for_selector("#results li.empty")
    assert page.locator("#results li.entry").count() == 0


def test_an_imported_fact_shows_where_it_came_from(
    page: Any, ui_factory: Callable[..., UiServer], project: Path, seeded: dict[str, str]
) -> None:
    from maestro_memory.core import MemoryStore
    from maestro_memory.core.toolmem import claude_note

    text = "---\nname: n\nmetadata:\n  type: feedback\n---\n\nShip the docs with each release.\n"
    note = claude_note("feedback_docs.md", text, "1:1")
    report = MemoryStore(project).mutate(lambda m: m.import_notes([note], ["claude"]))
    imported = report.imported[0]["entry_id"]
    server = ui_factory(project)
    open_page(page, server)
    origin = entry(page, imported).locator(".origin")
    assert origin.inner_text() == "from Claude Code's memory (feedback_docs.md)"
    assert origin.get_attribute("title") == "claude:feedback_docs.md"
    assert entry(page, seeded["tests"]).locator(".origin").count() == 0  # stated here
    page.fill("#search", "docs release")  # the search results say it too
    page.wait_for_selector(f"#results li.entry[data-id='{imported}'] .origin")
    assert page.js_errors == []


def test_a_review_action_changes_the_file_on_disk(
    page: Any, ui_server: UiServer, seeded: dict[str, str]
) -> None:
    semantic = ui_server.project / ".maestro" / "memory" / "semantic.md"
    flaky = seeded["flaky"]
    assert f"mm:id={flaky}" in semantic.read_text()
    open_page(page, ui_server)
    item = page.locator(f"#review li.entry[data-id='{flaky}']")
    assert item.locator("button.proposed").inner_text() == "Remove"
    item.locator("button[data-action='remove']").click()
    page.wait_for_selector("#review li.empty")
    text = semantic.read_text()
    assert f"mm:id={flaky}" not in text
    assert 'Removed: "Integration tests were flaky on Tuesdays"' in text  # logged, as the CLI does
    assert page.locator(f"li.entry[data-id='{flaky}']").count() == 0
    assert page.locator("#error").is_hidden()


def test_archiving_from_the_review_queue_moves_the_entry_to_the_archive(
    page: Any, ui_server: UiServer, seeded: dict[str, str]
) -> None:
    memory = ui_server.project / ".maestro" / "memory"
    lint = seeded["lint"]
    with Client(ui_server.project, direct=True) as client:
        for n in range(3, 6):  # three sessions without reinforcement: 0.30 -> 0.15, flagged
            client.initialize(f"later-{n}")
    open_page(page, ui_server)
    assert page.locator("#archive-count").inner_text() == "0"
    page.locator(f"#review li.entry[data-id='{lint}'] button[data-action='archive']").click()
    page.wait_for_selector("#archive-count >> text=1")
    assert f"mm:id={lint}" not in (memory / "semantic.md").read_text()
    assert "The legacy lint step" in (memory / "archive.md").read_text()
    page.locator("#archive-details summary").click()
    archived = page.locator(f"#archive li.entry[data-id='{lint}']")
    assert archived.locator(".band").inner_text() == "archived"
    assert archived.locator("button").count() == 0


def test_the_page_follows_changes_live(
    page: Any, ui_server: UiServer, seeded: dict[str, str]
) -> None:
    open_page(page, ui_server)
    page.wait_for_selector("#live.live")
    with Client(ui_server.project, direct=True) as client:
        saved = client.save_semantic(
            "Use pnpm, not npm, in this repository", "user_preference", 1.0
        )
    new_id = saved["entry"]["id"]
    page.wait_for_selector(f"#semantic li.entry[data-id='{new_id}']")
    assert "Use pnpm, not npm" in page.locator("#context").inner_text()


def test_no_token_no_data(page: Any, ui_server: UiServer, seeded: dict[str, str]) -> None:
    page.set_default_timeout(WAIT_MS)
    response = page.goto(ui_server.origin + "/")
    assert response is not None and response.status == 401
    body = page.content()
    assert "Always run the tests" not in body
    assert page.locator("#semantic").count() == 0  # the page itself is not served


def test_the_token_opens_one_browser_only(
    page: Any, playwright_browser: Any, ui_server: UiServer, seeded: dict[str, str]
) -> None:
    open_page(page, ui_server)  # the first browser: the token buys its cookie
    page.reload()
    page.wait_for_selector("body[data-ready='1']")  # ... which keeps the session
    page.goto(ui_server.url)  # the same browser back at the URL: still in
    page.wait_for_selector("body[data-ready='1']")
    fresh = playwright_browser.new_context()  # a second browser, no cookie, the same URL
    try:
        other = fresh.new_page()
        other.set_default_timeout(WAIT_MS)
        response = other.goto(ui_server.url)
        assert response is not None and response.status == 403
        assert "token_used" in other.content()
        assert "Always run the tests" not in other.content()
        assert fresh.cookies() == []
    finally:
        fresh.close()


def test_through_the_daemon_with_its_journal(
    page: Any,
    daemon: Any,
    ui_factory: Callable[..., UiServer],
    maestro_home: Path,
    tmp_path: Path,
) -> None:
    project = tmp_path / "shop-api"
    other = tmp_path / "docs-site"
    project.mkdir()
    other.mkdir()
    daemon.register(str(project))
    daemon.register(str(other))
    with Client(project, require_daemon=True) as client:
        ids = seed(project, client, hostile=False)
        for n in range(3, 6):  # sessions pass: the journal records the decay
            client.initialize(f"seed-{n}")
        client.reinforce(ids["supabase"], confirmed=True)
    with Client(other, require_daemon=True) as client:
        client.save_semantic("The other project deploys with Fly.io", "project_context", 0.9)
    server = ui_factory(project)
    open_page(page, server)
    assert page.locator("#via").inner_text() == "via maestrod"
    entry(page, ids["supabase"]).click()
    page.wait_for_selector("#chart svg.plot circle.dot >> nth=4")
    note = page.locator("#chart p.muted").inner_text()
    assert int(note.split()[0]) >= 5  # added, 4 decays/reinforcement changes, from the journal
    assert entry(page, ids["supabase"]).locator(".facts").inner_text().count("reinforced ") == 1
    # The project switcher lists the registered projects and shows the other one.
    options = page.locator("#project option").evaluate_all("els => els.map(e => e.value)")
    assert options[0] == str(project.resolve()) and str(other.resolve()) in options
    page.select_option("#project", str(other.resolve()))
    page.wait_for_selector("#semantic li.entry >> text=The other project deploys with Fly.io")
    page.select_option("#project", str(project.resolve()))
    entry(page, ids["tests"]).wait_for()
    if SCREENSHOT:
        entry(page, ids["supabase"]).click()
        page.wait_for_selector("#chart svg.plot circle.dot >> nth=4")
        page.screenshot(path=SCREENSHOT, full_page=True)
    assert page.js_errors == []


def test_a_stale_entry_says_why_and_rewrites_from_the_review_queue(
    page: Any, ui_factory: Callable[..., UiServer], project: Path
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    stale = renamed_path_project(project)
    server = ui_factory(project)
    open_page(page, server)
    assert entry(page, stale).locator(".stale-reason").inner_text() == RENAMED_REASON
    assert entry(page, stale).locator(".band").inner_text() == "not served: a path it names is gone"
    item = entry(page, stale, "#review")
    assert item.locator("button.proposed").inner_text() == "Rewrite path"
    item.locator("button[data-action='rewrite']").click()
    page.wait_for_selector("#review li.empty")
    page.wait_for_selector(f"#semantic li.entry[data-id='{stale}']:not(.stale)")
    assert "`src/login.py`" in entry(page, stale).locator(".text").inner_text()
    assert page.js_errors == []
