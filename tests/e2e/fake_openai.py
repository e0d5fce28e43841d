"""A stand-in for the OpenAI Responses API, enough for Codex CLI (``codex exec``).

``POST /v1/responses`` streams SSE: response.created, response.output_item.added/done per
output item (an assistant ``message``, or ``function_call`` items when the script says so),
response.completed. ``GET /v1/models`` answers an empty list; anything else an empty 200 JSON
object (recorded). A scripted marker in the newest user text makes the reply function calls
(``ToolCall.input`` becomes the JSON ``arguments``); a request whose newest input item is a
``function_call_output`` gets the canned text.

Tools come in the request's ``tools`` list either at the top level (``{"type": "function",
"name": "exec_command", …}``) or nested in an entry ``{"type": "namespace", "name":
"mcp__maestro", "tools": [{"type": "function", "name": "search", …}, …]}``: Codex 0.171.0
offers each MCP server's tools that way. A model calls a nested tool by its own name with the
namespace beside it (``{"type": "function_call", "namespace": "mcp__maestro", "name":
"search", …}``); Codex refuses the flat ``mcp__maestro__search`` as "unsupported call". A
script names a nested tool ``<namespace>__<tool>`` (``mcp__maestro__search``); the stand-in
finds it among the tools this request offered and answers in the namespaced form. A name
offered nowhere is sent as it is (the CLI's refusal then shows in the next request).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from .fake_base import CANNED_TEXT, FakeApi, Recorded, Response, ToolCall

_ids = itertools.count(1)


def user_text(body: Any) -> tuple[str, bool]:
    """(the newest user message's text, whether the newest input item is a tool result)."""
    items = body.get("input") if isinstance(body, dict) else None
    if not isinstance(items, list) or not items:
        return (items if isinstance(items, str) else ""), False
    if items[-1].get("type") in ("function_call_output", "custom_tool_call_output"):
        return "", True
    for item in reversed(items):
        if item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content, False
            return "\n".join(c.get("text", "") for c in content or []), False
    return "", False


def offered_tools(body: Any) -> dict[str, tuple[str | None, str]]:
    """The tools a request offers: ``{name a script uses: (namespace or None, tool name)}``;
    a tool nested in namespace ``N`` is ``N__<tool>``."""
    tools = body.get("tools") if isinstance(body, dict) else None
    offered: dict[str, tuple[str | None, str]] = {}
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    offered[f"{tool['name']}__{inner['name']}"] = (tool["name"], inner["name"])
        else:
            offered[tool["name"]] = (None, tool["name"])
    return offered


def function_call(call: ToolCall, offered: dict[str, tuple[str | None, str]]) -> dict[str, Any]:
    """The ``function_call`` output item a model sends for ``call``."""
    n = next(_ids)
    namespace, name = offered.get(call.name, (None, call.name))
    item: dict[str, Any] = {
        "type": "function_call",
        "id": f"fc_{n:08d}",
        "call_id": f"call_{n:08d}",
        "name": name,
        "arguments": json.dumps(call.input),
        "status": "completed",
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


class FakeOpenAI(FakeApi):
    name = "openai"

    def handle(self, request: Recorded) -> Response:
        path = request.path.split("?", 1)[0]
        if request.method == "POST" and path.endswith("/responses"):
            return self._response(request.body)
        if request.method == "GET" and path.endswith("/models"):
            return Response(json_body={"object": "list", "data": [], "models": []})
        return Response(json_body={})

    def model_requests(self, mark: int = 0) -> Any:
        for r in self.since(mark):
            if r.path.split("?", 1)[0].endswith("/responses"):
                yield r

    def _response(self, body: dict[str, Any]) -> Response:
        text, tool_result = user_text(body)
        calls = [] if tool_result else self.script.calls_for(text)
        rid = f"resp_{next(_ids):08d}"
        offered = offered_tools(body)
        items: list[dict[str, Any]] = [function_call(call, offered) for call in calls]
        if not calls:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{next(_ids):08d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": CANNED_TEXT, "annotations": []}],
                }
            )
        base = {"id": rid, "object": "response", "model": body.get("model", "stand-in")}
        events: list[tuple[str | None, Any]] = [
            (
                "response.created",
                {"type": "response.created", "response": {**base, "status": "in_progress"}},
            )
        ]
        for i, item in enumerate(items):
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": i, "item": item},
                )
            )
            if item["type"] == "message":
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "output_index": i,
                            "item_id": item["id"],
                            "content_index": 0,
                            "delta": CANNED_TEXT,
                        },
                    )
                )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": i, "item": item},
                )
            )
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        events.append(
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {**base, "status": "completed", "output": items, "usage": usage},
                },
            )
        )
        return Response(sse_events=events)


__all__ = ["FakeOpenAI", "ToolCall", "function_call", "offered_tools", "user_text"]
