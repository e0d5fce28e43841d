"""A stand-in for the Gemini API, enough for Gemini CLI (``gemini -p``).

``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` streams one SSE ``data:`` chunk
(candidates with text or, when scripted, ``functionCall`` parts; finishReason STOP);
``:generateContent`` answers one JSON document and, when the request asks for
``responseMimeType: application/json`` (Gemini CLI's model-routing classifier does), a JSON
text made to fit the request's schema; ``:countTokens`` answers a rough count; anything else an
empty 200 JSON object (recorded).
"""

from __future__ import annotations

import json
from typing import Any

from .fake_base import CANNED_TEXT, FakeApi, Recorded, Response, ToolCall


def user_text(body: Any) -> tuple[str, bool]:
    """(the newest user turn's text, whether it carries function responses)."""
    contents = body.get("contents") if isinstance(body, dict) else None
    if not contents:
        return "", False
    parts = contents[-1].get("parts") or []
    if any("functionResponse" in p for p in parts):
        return "", True
    return "\n".join(p.get("text", "") for p in parts if isinstance(p.get("text"), str)), False


def instance_of(schema: Any) -> Any:
    """A small value that satisfies a JSON (or Gemini OpenAPI-subset) schema."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return instance_of(schema[key][0])
    kind = str(schema.get("type", "object")).lower()
    if isinstance(schema.get("type"), list):
        kind = str(schema["type"][0]).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: instance_of(sub) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        # 1, not 0: Gemini CLI's router asks for a "score from 1-100" without a minimum
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "stand-in"


class FakeGemini(FakeApi):
    name = "gemini"

    def handle(self, request: Recorded) -> Response:
        path = request.path.split("?", 1)[0]
        if request.method == "POST" and path.endswith(":streamGenerateContent"):
            return Response(sse_events=[(None, self._reply(request.body))])
        if request.method == "POST" and path.endswith(":generateContent"):
            return Response(json_body=self._reply(request.body))
        if request.method == "POST" and path.endswith(":countTokens"):
            return Response(json_body={"totalTokens": max(1, len(request.text) // 4)})
        return Response(json_body={})

    def model_requests(self, mark: int = 0) -> Any:
        for r in self.since(mark):
            if r.path.split("?", 1)[0].endswith(":streamGenerateContent"):
                yield r

    def _reply(self, body: dict[str, Any]) -> dict[str, Any]:
        config = body.get("generationConfig") or {}
        parts: list[dict[str, Any]]
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            parts = [{"text": json.dumps(instance_of(schema))}]
        else:
            text, tool_result = user_text(body)
            calls = [] if tool_result else self.script.calls_for(text)
            if calls:
                parts = [{"functionCall": {"name": c.name, "args": c.input}} for c in calls]
            else:
                parts = [{"text": CANNED_TEXT}]
        return {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": "gemini-stand-in",
        }


__all__ = ["FakeGemini", "ToolCall", "instance_of", "user_text"]
