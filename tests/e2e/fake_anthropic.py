"""A stand-in for the Anthropic Messages API, enough for Claude Code (``claude -p``).

``POST /v1/messages`` streams (SSE: message_start, content_block_start/delta/stop,
message_delta, message_stop) or answers in one JSON document when ``stream`` is false;
``POST /v1/messages/count_tokens`` answers a rough count; anything else gets an empty 200
JSON object (recorded, so a test can see what else the CLI asked). A scripted marker in the
newest user text makes the reply a list of ``tool_use`` blocks; the turn that carries their
``tool_result`` gets the canned text.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from .fake_base import CANNED_TEXT, FakeApi, Recorded, Response, ToolCall

_ids = itertools.count(1)


def user_text(body: Any) -> tuple[str, bool]:
    """(the newest user message's text, whether it carries tool results).

    Claude Code 2.1.332 may put a ``"role": "system"`` message after the user's in
    ``messages``, so this looks for the last ``user`` one rather than the last one."""
    messages = body.get("messages") if isinstance(body, dict) else None
    users = [m for m in messages or [] if m.get("role") == "user"]
    if not users:
        return "", False
    content = users[-1].get("content")
    if isinstance(content, str):
        return content, False
    texts, tool_result = [], False
    for block in content or []:
        if block.get("type") == "text":
            texts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            tool_result = True
    return "\n".join(texts), tool_result


class FakeAnthropic(FakeApi):
    name = "anthropic"

    def handle(self, request: Recorded) -> Response:
        path = request.path.split("?", 1)[0]
        if request.method == "POST" and path == "/v1/messages/count_tokens":
            return Response(json_body={"input_tokens": max(1, len(request.text) // 4)})
        if request.method == "POST" and path == "/v1/messages":
            return self._message(request.body)
        return Response(json_body={})

    def model_requests(self, mark: int = 0) -> Any:
        for r in self.since(mark):
            if r.path.split("?", 1)[0] == "/v1/messages":
                yield r

    def _message(self, body: dict[str, Any]) -> Response:
        text, tool_result = user_text(body)
        calls = [] if tool_result else self.script.calls_for(text)
        model = body.get("model", "claude-stand-in")
        blocks: list[dict[str, Any]] = []
        if calls:
            for call in calls:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": f"toolu_{next(_ids):08d}",
                        "name": call.name,
                        "input": call.input,
                    }
                )
        else:
            blocks.append({"type": "text", "text": CANNED_TEXT})
        stop = "tool_use" if calls else "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {
            "id": f"msg_{next(_ids):08d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return Response(json_body=message)
        events: list[tuple[str | None, Any]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {**message, "content": [], "stop_reason": None, "usage": usage},
                },
            )
        ]
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": start},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": i}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return Response(sse_events=events)


__all__ = ["FakeAnthropic", "ToolCall", "user_text"]
