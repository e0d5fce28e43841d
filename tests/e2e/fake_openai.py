"""A stand-in for the OpenAI Responses API, enough for Codex CLI (``codex exec``).

``POST /v1/responses`` streams SSE: response.created, response.output_item.added/done per
output item (an assistant ``message``, or ``function_call`` items when the script says so),
response.completed. ``GET /v1/models`` answers an empty list; anything else an empty 200 JSON
object (recorded). A scripted marker in the newest user text makes the reply function calls
(``ToolCall.input`` becomes the JSON ``arguments``); a request whose newest input item is a
``function_call_output`` gets the canned text.
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
        items: list[dict[str, Any]] = []
        for call in calls:
            n = next(_ids)
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{n:08d}",
                    "call_id": f"call_{n:08d}",
                    "name": call.name,
                    "arguments": json.dumps(call.input),
                }
            )
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


__all__ = ["FakeOpenAI", "ToolCall", "user_text"]
