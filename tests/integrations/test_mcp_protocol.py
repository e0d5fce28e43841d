"""``maestroctl mcp``'s JSON-RPC, line by line, as a real process: the edges the SDK's client
never sends (bad JSON, unknown methods, batches, odd arguments), the handshake's version
choice, and a daemon that stops in the middle of a session."""

from __future__ import annotations

import json
import os
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.core import MemoryStore

from .support import maestroctl_cmd

REPLY_TIMEOUT = 30.0


class McpProcess:
    """A ``maestroctl mcp`` child: ``send`` a message (or raw line), ``reply`` reads one line."""

    def __init__(self, project: Path) -> None:
        self.proc = subprocess.Popen(
            [*maestroctl_cmd(), "mcp"],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
        )

    def send(self, message: Any) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> Any:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_TIMEOUT)
        assert ready, "no reply within the timeout"
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), line
        return json.loads(line)

    def ask(self, message: Any) -> Any:
        self.send(message)
        return self.reply()

    def call(self, n: int, tool: str, arguments: Any) -> dict[str, Any]:
        params = {"name": tool, "arguments": arguments}
        reply = self.ask({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        assert reply["id"] == n
        result: dict[str, Any] = reply["result"]
        return result

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=REPLY_TIMEOUT)


@pytest.fixture
def mcp(maestro_home: Path, project: Path) -> Iterator[McpProcess]:
    (project / ".maestro").mkdir(exist_ok=True)
    server = McpProcess(project)
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


def test_outside_any_project_it_creates_nothing_and_says_so(
    maestro_home: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"  # no .maestro/ here or above (as the system tmp folder)
    elsewhere.mkdir()
    server = McpProcess(elsewhere)
    try:
        initialize(server)
        calls = {
            "remember": {"fact": "Use pnpm", "category": "project_context"},
            "note": {"context": "Tried the build"},
            "get_context": {},
            "search": {"query": "pnpm"},
            "forget": {"entry_ids": ["s-1"]},
        }
        for n, (tool, arguments) in enumerate(calls.items(), start=1):
            result = server.call(n, tool, arguments)
            assert result["isError"] is True, (tool, result)
            text = result["content"][0]["text"]
            assert "Not in a project" in text and str(elsewhere) in text, text
            assert "maestroctl init" in text
        bad = server.call(9, "remember", {"fact": "x", "category": "nope"})
        assert "invalid arguments" in bad["content"][0]["text"]  # arguments still checked
        listed = server.ask({"jsonrpc": "2.0", "id": 10, "method": "resources/list"})
        assert listed["result"]["resources"] == []
        read = server.ask(
            {
                "jsonrpc": "2.0",
                "id": 11,
                "method": "resources/read",
                "params": {"uri": "memory://semantic"},
            }
        )
        assert "error" in read
        assert server.close() == 0
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    assert list(tmp_path.rglob(".maestro")) == []
    assert sorted(p.name for p in elsewhere.iterdir()) == []


def initialize(mcp: McpProcess, version: str = "2025-06-18") -> dict[str, Any]:
    reply = mcp.ask(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {}},
        }
    )
    mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    result: dict[str, Any] = reply["result"]
    return result


def test_the_handshake_keeps_a_known_version_and_offers_the_newest_otherwise(
    mcp: McpProcess,
) -> None:
    assert initialize(mcp, "2024-11-05")["protocolVersion"] == "2024-11-05"
    again = mcp.ask(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "9999"}}
    )
    assert again["result"]["protocolVersion"] == "2025-11-25"
    assert again["result"]["serverInfo"]["name"] == "maestro-memory"
    assert set(again["result"]["capabilities"]) == {"tools", "resources"}
    assert mcp.close() == 0


def test_bad_lines_get_json_rpc_errors_and_the_server_goes_on(mcp: McpProcess) -> None:
    initialize(mcp)
    assert mcp.ask(b"{not json")["error"]["code"] == -32700
    assert mcp.ask({"jsonrpc": "1.0", "id": 5, "method": "ping"})["error"]["code"] == -32600
    unknown = mcp.ask({"jsonrpc": "2.0", "id": "u", "method": "sampling/createMessage"})
    assert unknown == {
        "jsonrpc": "2.0",
        "id": "u",
        "error": {"code": -32601, "message": "method not found: sampling/createMessage"},
    }
    # A notification of any name gets no reply: the next line read answers the ping.
    mcp.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})
    assert mcp.ask({"jsonrpc": "2.0", "id": 6, "method": "ping"}) == {
        "jsonrpc": "2.0",
        "id": 6,
        "result": {},
    }
    batch = mcp.ask(
        [
            {"jsonrpc": "2.0", "id": 7, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 8, "method": "resources/templates/list"},
        ]
    )
    assert [r["id"] for r in batch] == [7, 8]
    assert batch[1]["result"] == {"resourceTemplates": []}
    missing = mcp.ask(
        {"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": "file:///etc"}}
    )
    assert missing["error"]["code"] == -32002
    no_tool = mcp.ask(
        {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "rm"}}
    )
    assert no_tool["error"] == {"code": -32602, "message": "unknown tool: 'rm'"}


def test_arguments_are_checked_and_nothing_invalid_is_saved(mcp: McpProcess, project: Path) -> None:
    initialize(mcp)
    wrong = mcp.call(1, "search", {"query": "", "limit": "ten"})
    assert wrong["isError"] is True
    assert wrong["content"][0]["text"] == (
        "search: invalid arguments: 'query' should have at least 1 character (got ''); "
        "'limit' should be a valid integer (got 'ten')."
    )
    flag = mcp.call(2, "reinforce", {"entry_id": "s-1", "confirmed": "yes"})
    assert "'confirmed' should be a valid boolean" in flag["content"][0]["text"]
    ids = mcp.call(3, "forget", {"entry_ids": []})
    assert "'entry_ids' should have at least 1 item (got [])" in ids["content"][0]["text"]
    not_object = mcp.call(4, "remember", ["Use pnpm"])
    assert not_object["content"][0]["text"] == "remember: invalid arguments: not an object."
    assert MemoryStore(project).semantic_entries() == []

    # null for an optional parameter is "not given"; 5.0 is an integer; extras are ignored.
    saved = mcp.call(
        5,
        "remember",
        {"fact": "Use pnpm", "category": "project_context", "confidence": None, "why": "x"},
    )
    assert saved["isError"] is False
    assert saved["structuredContent"]["entry"]["confidence"] == 0.5  # the default applied
    found = mcp.call(6, "search", {"query": "pnpm", "limit": 5.0})
    assert [r["text"] for r in found["structuredContent"]["results"]] == ["Use pnpm"]
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]


def test_a_daemon_that_stops_mid_session_leaves_the_server_answering(
    daemon: Any, project: Path
) -> None:
    (project / ".maestro").mkdir()
    daemon.register(project)
    server = McpProcess(project)
    try:
        info = initialize(server)
        assert info["serverInfo"]["version"] == daemon.result("hello")["version"]
        first = server.call(
            1, "remember", {"fact": "Use pnpm", "category": "project_context", "confidence": 0.9}
        )
        assert first["structuredContent"]["action"] == "added"
        assert [r["op"] for r in daemon.result("log", project)["records"]] == ["save_semantic"]

        assert daemon.stop() == 0  # SIGTERM, as the user's 'maestroctl stop'; the session goes on

        second = server.call(
            2,
            "remember",
            {"fact": "Deploy on Fridays never", "category": "quality_rule", "confidence": 0.9},
        )
        assert second["isError"] is False, second
        context = server.call(3, "get_context", {})
        assert "Use pnpm" in context["content"][0]["text"]
        assert "Deploy on Fridays never" in context["content"][0]["text"]
    finally:
        assert server.close() == 0
    texts = [e.text for e in MemoryStore(project).semantic_entries()]
    assert sorted(texts) == ["Deploy on Fridays never", "Use pnpm"]
