"""Issue 33 point 7 at the agents' doors: the MCP tools declare and check the one cap on a
memory's text (``common/limits.FACT_MAX_CHARS``), and a prompt hook whose request would pass
the frame limit says so in one line instead of waiting out its deadline. Real ``maestroctl
mcp`` and hook processes, with the daemon up and in direct mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")  # the SDK is the test's client (the test extra)

from maestro_memory.client.integrations.hooks import MAX_STDIN
from maestro_memory.common.limits import FACT_MAX_CHARS
from maestro_memory.core import MemoryStore

from .support import in_mcp_session
from .test_hooks import hook

OVER = "Use pnpm. " * (FACT_MAX_CHARS // 10) + "x"
RULE = "Always run the linter before committing."


@pytest.mark.parametrize("with_daemon", [False, True], ids=["direct", "daemon"])
def test_the_mcp_tools_declare_and_check_the_cap(
    request: pytest.FixtureRequest, maestro_home: Path, project: Path, with_daemon: bool
) -> None:
    (project / ".maestro").mkdir()
    if with_daemon:
        request.getfixturevalue("daemon").register(project)

    async def body(session: Any) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        for tool, param in (("remember", "fact"), ("note", "context")):
            schema = tools[tool].input_schema["properties"][param]
            assert schema["maxLength"] == FACT_MAX_CHARS, (tool, schema)
        remember = await session.call_tool("remember", {"fact": OVER, "category": "quality_rule"})
        note = await session.call_tool("note", {"context": OVER})
        for result, param in ((remember, "fact"), (note, "context")):
            assert result.is_error
            message = "".join(c.text for c in result.content if c.type == "text")
            most = f"at most {FACT_MAX_CHARS} characters, not {FACT_MAX_CHARS + 1:,}"
            assert f"'{param}' should have {most}" in message, message

    in_mcp_session(project, body)
    store = MemoryStore(project)
    assert store.semantic_entries() == [] and store.episodic_entries() == []


@pytest.mark.parametrize("with_daemon", [False, True], ids=["direct", "daemon"])
def test_a_prompt_too_large_to_send_is_told_not_waited_for(
    request: pytest.FixtureRequest, maestro_home: Path, project: Path, with_daemon: bool
) -> None:
    # The hook reads at most MAX_STDIN bytes; a prompt just under that makes a request over
    # the frame limit (the envelope is longer than the hook's input around the prompt).
    (project / ".maestro").mkdir()
    if with_daemon:
        request.getfixturevalue("daemon").register(project)
    payload = {"session_id": "s-1", "cwd": str(project), "prompt": ""}
    room = MAX_STDIN - len(json.dumps(payload).encode()) - 8
    payload["prompt"] = f"{RULE}\n\n" + "y" * (room - len(RULE) - 2)
    data = json.dumps(payload).encode()
    assert len(data) <= MAX_STDIN
    proc, _ = hook("user-prompt", data)
    assert proc.returncode == 0, proc.stderr
    message = json.loads(proc.stdout)["systemMessage"]
    assert message.startswith(f"Not remembered (too large): {RULE.rstrip('.')}"), message
    assert MemoryStore(project).semantic_entries() == []
