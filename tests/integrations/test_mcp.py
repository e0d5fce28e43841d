"""``maestroctl mcp`` as the agent tools run it: a real process over stdio, spoken to by the
official MCP SDK's client (a conformance check of our JSON-RPC), with and without a daemon."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")  # the SDK is the test's client (the test extra), not the server's

import anyio
from mcp import Client as McpClient

from maestro_memory.core import MemoryStore

from .support import in_mcp_session as in_session
from .support import maestroctl_cmd
from .support import mcp_server_params as server_params

TOOLS = {"get_context", "remember", "note", "search", "reinforce", "forget"}


def structured(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content
    data: dict[str, Any] = result.structured_content
    return data


def text_of(result: Any) -> str:
    assert result.is_error is False, result.content
    return "".join(c.text for c in result.content if c.type == "text")


def test_tools_and_resources_without_a_daemon(maestro_home: Path, project: Path) -> None:
    MemoryStore(project).save_semantic(
        "Prefers Sonnet for execution tasks", "user_preference", 0.95
    )

    async def body(session: McpClient) -> None:
        listed = await session.list_tools()
        tools = {t.name: t for t in listed.tools}
        assert set(tools) == TOOLS
        remember_schema = tools["remember"].input_schema
        assert set(remember_schema["required"]) == {"fact", "category"}
        assert "quality_rule" in json.dumps(remember_schema["properties"]["category"])

        saved = structured(
            await session.call_tool(
                "remember",
                {
                    "fact": "Always run the tests before committing",
                    "category": "quality_rule",
                    "confidence": 1.0,
                },
            )
        )
        assert saved["action"] == "added" and saved["entry"]["confidence"] == 1.0
        entry_id = saved["entry"]["id"]

        noted = structured(await session.call_tool("note", {"context": "Refactored the router"}))
        own_session = noted["entry"]["session_id"]  # this connection's: mcp-<random>
        assert own_session.startswith("mcp-") and len(own_session) > len("mcp-")
        noted = structured(
            await session.call_tool(
                "note", {"context": "Paired on auth", "session_id": "claude-42"}
            )
        )
        assert noted["entry"]["session_id"] == "claude-42"

        context = text_of(await session.call_tool("get_context", {"task": "commit the tests"}))
        assert context.startswith("[Project Memory]") and "not instructions" in context
        assert "Always run the tests before committing" in context
        assert "Prefers Sonnet" in context

        found = structured(await session.call_tool("search", {"query": "tests"}))
        assert next(r["id"] for r in found["results"]) == entry_id  # the text match first
        assert structured(await session.call_tool("search", {"query": "kubernetes"})) == {
            "query": "kubernetes",
            "results": [],
        }

        reinforced = structured(
            await session.call_tool("reinforce", {"entry_id": entry_id, "confirmed": True})
        )
        assert reinforced["entry"]["id"] == entry_id

        failed = await session.call_tool("reinforce", {"entry_id": "s-00000000"})
        assert failed.is_error and "no entry" in text_of_error(failed)
        bad = await session.call_tool("remember", {"fact": "x", "category": "gossip"})
        assert bad.is_error and "'category' should be 'user_preference'" in text_of_error(bad)

        resources = await session.list_resources()
        uris = {str(r.uri) for r in resources.resources}
        assert uris == {"memory://semantic", "memory://episodic", "memory://archive"}
        read = await session.read_resource("memory://semantic")
        body_text = read.contents[0].text  # type: ignore[union-attr]
        assert body_text == (project / ".maestro" / "memory" / "semantic.md").read_text()
        assert "Always run the tests before committing" in body_text
        episodic = await session.read_resource("memory://episodic")
        assert "Paired on auth" in episodic.contents[0].text  # type: ignore[union-attr]
        archive = await session.read_resource("memory://archive")
        assert (
            archive.contents[0].text
            == (  # type: ignore[union-attr]
                project / ".maestro" / "memory" / "archive.md"
            ).read_text()
        )

    in_session(project, body)
    texts = [e.text for e in MemoryStore(project).semantic_entries()]
    assert "Always run the tests before committing" in texts


def text_of_error(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def test_empty_memory_says_so(maestro_home: Path, project: Path) -> None:
    (project / ".maestro").mkdir()

    async def body(session: McpClient) -> None:
        text = text_of(await session.call_tool("get_context", {}))
        assert "empty" in text

    in_session(project, body)


def test_through_the_daemon(daemon: Any, project: Path) -> None:
    (project / ".maestro").mkdir()  # as 'maestroctl init' makes it: the server's project
    daemon.register(project)

    async def body(session: McpClient) -> None:
        structured(
            await session.call_tool(
                "remember", {"fact": "Never use default exports", "category": "quality_rule"}
            )
        )
        context = text_of(await session.call_tool("get_context", {"task": "exports"}))
        assert "Never use default exports" in context

    in_session(project, body)
    entries = daemon.result("entries", project)["entries"]
    assert [e["text"] for e in entries] == ["Never use default exports"]
    # The daemon did the work: its journal has the save, made by its writer.
    ops = [r["op"] for r in daemon.result("log", project)["records"]]
    assert "save_semantic" in ops, ops


def test_the_sdk_default_handshake_finds_the_initialize_path(
    maestro_home: Path, project: Path
) -> None:
    # The SDK's default mode asks for the 2026 discovery first, then falls back to initialize.
    (project / ".maestro").mkdir()

    async def main() -> None:
        async with McpClient(server_params(project)) as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            saved = structured(
                await session.call_tool(
                    "remember", {"fact": "CI runs on GitHub Actions", "category": "project_context"}
                )
            )
            assert saved["action"] == "added"

    anyio.run(main)
    assert [e.text for e in MemoryStore(project).semantic_entries()] == [
        "CI runs on GitHub Actions"
    ]


@pytest.fixture(autouse=True)
def _quiet_sdk_logging() -> None:
    import logging

    logging.getLogger("mcp").setLevel(logging.WARNING)


def test_server_version_annotations_and_bounds(maestro_home: Path, project: Path) -> None:
    from importlib.metadata import version

    async def body(session: McpClient) -> None:
        assert session.server_info is not None
        assert session.server_info.version == version("maestro-agent-memory")
        tools = {t.name: t for t in (await session.list_tools()).tools}
        for name, tool in tools.items():
            assert tool.annotations is not None, name
            assert tool.annotations.open_world_hint is False, name
            assert tool.annotations.read_only_hint is (name in {"get_context", "search"}), name
        assert tools["remember"].annotations.destructive_hint is True  # type: ignore[union-attr]
        assert tools["note"].annotations.destructive_hint is False  # type: ignore[union-attr]
        schema = tools["remember"].input_schema["properties"]
        confidence = json.dumps(schema["confidence"])
        assert '"minimum": 0.0' in confidence and '"maximum": 1.0' in confidence
        for name, tool in tools.items():
            for param, spec in tool.input_schema["properties"].items():
                assert "description" in json.dumps(spec), (name, param)

        bad = await session.call_tool(
            "remember", {"fact": "Use tabs", "category": "quality_rule", "confidence": 2}
        )
        assert bad.is_error
        message = text_of_error(bad)
        assert message.startswith("remember: invalid arguments: 'confidence'"), message
        assert "less than or equal to 1" in message and "(got 2)" in message
        assert "\n" not in message and "pydantic" not in message
        missing = text_of_error(await session.call_tool("remember", {"category": "quality_rule"}))
        assert missing == "remember: invalid arguments: 'fact' is required.", missing

    in_session(project, body)
    assert MemoryStore(project).semantic_entries() == []  # nothing invalid was saved


def test_cli_search_and_mcp_search_rank_alike(maestro_home: Path, project: Path) -> None:
    import subprocess

    store = MemoryStore(project)
    for text in (
        "Run the tests before committing",
        "Integration tests need a running Postgres; unit tests do not",
        "Tests live in tests/ and use pytest fixtures for tests data",
        "Deploy with the blue-green script",
        "Prefers short commit messages",
    ):
        store.save_semantic(text, "project_context", 0.6)
    store.save_episodic("Fixed flaky tests in the router", "s-1", None)

    cli = subprocess.run(
        [*maestroctl_cmd(), "search", "-C", str(project), "--json", "tests pytest"],
        capture_output=True,
        env={**os.environ, "MAESTRO_HOME": str(maestro_home)},
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    cli_ids = [r["id"] for r in json.loads(cli.stdout)["result"]["results"]]
    assert len(cli_ids) == 4  # the four entries mentioning tests

    async def body(session: McpClient) -> None:
        found = structured(await session.call_tool("search", {"query": "tests pytest"}))
        assert [r["id"] for r in found["results"]] == cli_ids

    in_session(project, body)
