"""MCP over streamable HTTP from maestrod's door, spoken to by the official MCP SDK's client,
against ``maestroctl mcp`` over stdio on the same daemon: the same tools, the same answers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")  # the SDK is the test's client (the test extra)

import anyio
from mcp import Client as McpClient

from maestro_memory.common.httpdoor import mcp_url, recorded_port

from .support import in_mcp_session

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/net/tcp"), reason="the door needs the kernel's TCP table (Linux)"
)


def over_http(url: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """``tools/list`` and each call's result (text, structured content, error flag)."""
    out: dict[str, Any] = {}

    async def main() -> None:
        async with McpClient(url, mode="legacy") as session:
            out.update(await _exchange(session, calls))

    anyio.run(main)
    return out


def over_stdio(project: Path, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}

    async def body(session: Any) -> None:
        out.update(await _exchange(session, calls))

    in_mcp_session(project, body)
    return out


async def _exchange(session: Any, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    listed = await session.list_tools()
    out: dict[str, Any] = {
        "tools": [t.model_dump(mode="json", exclude_none=True) for t in listed.tools],
        "calls": [],
    }
    for name, arguments in calls:
        result = await session.call_tool(name, arguments)
        text = "".join(c.text for c in result.content if c.type == "text")
        out["calls"].append((result.is_error, text, result.structured_content))
    return out


def test_http_and_stdio_give_the_same_tools_and_answers(daemon_factory: Any, project: Path) -> None:
    (project / ".maestro" / "memory").mkdir(parents=True)
    daemon = daemon_factory(config="[http]\nport = 0\n")
    daemon.register(project)
    port = recorded_port(daemon.paths)
    assert port is not None
    url = mcp_url(port, project)

    # Writes first: the rule, a context build for the session the reads use (its reinforcement
    # is queued to the writer), and a note, acknowledged after that reinforcement's commit
    # (one writer, in order): the reads below then change nothing, whichever door asks.
    saved = over_http(
        url,
        [
            (
                "remember",
                {"fact": "Always run the tests before committing", "category": "quality_rule"},
            ),
            ("get_context", {"task": "commit the change", "session_id": "same-session"}),
            ("note", {"context": "Set up the release branch"}),
        ],
    )
    is_error, _, entry = saved["calls"][0]
    assert is_error is False and entry["action"] == "added"

    reads: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "tests before committing"}),
        ("get_context", {"task": "commit the change", "session_id": "same-session"}),
        ("remember", {"fact": "", "category": "quality_rule"}),  # a refused argument
        ("forget", {"entry_id": "s-nothere"}),  # an error from the memory
    ]
    http_answers = over_http(url, reads)
    stdio_answers = over_stdio(project, reads)
    assert http_answers["tools"] == stdio_answers["tools"]
    assert {t["name"] for t in http_answers["tools"]} == {
        "get_context",
        "remember",
        "note",
        "search",
        "reinforce",
        "forget",
    }
    assert http_answers["calls"] == stdio_answers["calls"]
    found = http_answers["calls"][0][2]["results"]
    assert found[0]["text"] == "Always run the tests before committing"
    assert "Always run the tests before committing" in http_answers["calls"][1][1]
    assert http_answers["calls"][2][0] is True and http_answers["calls"][3][0] is True


def test_a_project_outside_any_memory_is_told_so_over_http(
    daemon_factory: Any, tmp_path: Path
) -> None:
    daemon = daemon_factory(config="[http]\nport = 0\n")
    port = recorded_port(daemon.paths)
    assert port is not None
    elsewhere = tmp_path / "not-a-project"
    elsewhere.mkdir()
    answers = over_http(mcp_url(port, elsewhere), [("search", {"query": "x"})])
    is_error, text, _ = answers["calls"][0]
    assert is_error is True and text.startswith("Not in a project")
    assert not (elsewhere / ".maestro").exists()


def test_without_a_project_in_the_url_the_tools_working_directory_names_it(
    daemon_factory: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / ".maestro" / "memory").mkdir(parents=True)
    (project / "src").mkdir()
    daemon = daemon_factory(config="[http]\nport = 0\n")
    daemon.register(project)
    daemon.result(
        "save_semantic", project, fact="Deploys go out on Tuesdays", category="project_context"
    )
    port = recorded_port(daemon.paths)
    assert port is not None
    monkeypatch.chdir(project / "src")  # the tool runs in the project (here: this process)
    answers = over_http(f"http://127.0.0.1:{port}/mcp", [("search", {"query": "deploys"})])
    is_error, _, found = answers["calls"][0]
    assert is_error is False
    assert [r["text"] for r in found["results"]] == ["Deploys go out on Tuesdays"]


def test_a_project_the_daemon_does_not_own_yet_is_registered_by_its_first_call(
    daemon_factory: Any, project: Path
) -> None:
    (project / ".maestro" / "memory").mkdir(parents=True)
    daemon = daemon_factory(config="[http]\nport = 0\n")
    port = recorded_port(daemon.paths)
    assert port is not None
    fact = {"fact": "Releases are tagged on main", "category": "project_context"}
    answers = over_http(mcp_url(port, project), [("remember", fact)])
    assert answers["calls"][0][0] is False
    owned = [p["path"] for p in daemon.result("projects")["projects"]]
    assert str(project) in owned  # its writes then go through the daemon's writer
