"""The shared part of the model API stand-ins: a threaded HTTP server on 127.0.0.1 that records
every request and lets a test script replies by a marker in the prompt.

Each API module (``fake_anthropic``, ``fake_openai``, ``fake_gemini``) subclasses ``FakeApi``
and implements ``handle(request) -> Response``. ``Recorded`` keeps what the CLI sent; ``Script``
maps a marker (text the newest user turn contains) to the tool calls the stand-in answers
with; once the tool results come back the stand-in ends the turn with its canned text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CANNED_TEXT = "OK from the stand-in model."


@dataclass(frozen=True)
class ToolCall:
    """One tool call the stand-in makes: the tool's name as the CLI names it, its input."""

    name: str
    input: dict[str, Any]


@dataclass
class Script:
    """Marker -> tool calls. The first rule whose marker is in the newest user text wins."""

    rules: list[tuple[str, list[ToolCall]]] = field(default_factory=list)

    def on(self, marker: str, *calls: ToolCall) -> None:
        self.rules.append((marker, list(calls)))

    def calls_for(self, user_text: str) -> list[ToolCall]:
        for marker, calls in self.rules:
            if marker in user_text:
                return calls
        return []


@dataclass(frozen=True)
class Recorded:
    """One request as received: method, path (with query), selected headers, parsed body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def text(self) -> str:
        """The body as JSON text: what a test greps for 'did the memory reach the model'."""
        return json.dumps(self.body, ensure_ascii=False)


@dataclass
class Response:
    status: int = 200
    json_body: Any = None
    sse_events: list[tuple[str | None, Any]] | None = None  # (event name or None, data)
    content_type: str | None = None


class FakeApi:
    """Subclass and implement ``handle``. Use as a context manager; ``url`` is the base URL."""

    name = "fake"

    def __init__(self, log_path: Path | None = None) -> None:
        self.requests: list[Recorded] = []
        self.script = Script()
        self.log_path = log_path
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- to implement -------------------------------------------------------------------------
    def handle(self, request: Recorded) -> Response:
        raise NotImplementedError

    # -- the server ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeApi:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the recorded requests are the log

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                for secret in ("authorization", "x-api-key", "x-goog-api-key"):
                    if secret in headers:
                        headers[secret] = "<redacted>"
                rec = Recorded(self.command, self.path, headers, body)
                api._record(rec)
                try:
                    resp = api.handle(rec)
                except Exception as exc:  # a stand-in bug: answer 500, keep serving
                    resp = Response(500, {"error": {"message": f"stand-in: {exc!r}"}})
                self._send(resp)

            def _send(self, resp: Response) -> None:
                if resp.sse_events is not None:
                    chunks = []
                    for event, data in resp.sse_events:
                        head = f"event: {event}\n" if event else ""
                        chunks.append(f"{head}data: {json.dumps(data)}\n\n")
                    payload = "".join(chunks).encode()
                    ctype = resp.content_type or "text/event-stream"
                else:
                    payload = json.dumps(resp.json_body if resp.json_body is not None else {})
                    payload = payload.encode()
                    ctype = resp.content_type or "application/json"
                self.send_response(resp.status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_POST = _serve
            do_GET = _serve
            do_PUT = _serve
            do_DELETE = _serve
            do_HEAD = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"{self.name}-api", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeApi:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(rec.__dict__, ensure_ascii=False) + "\n")

    # -- for tests ----------------------------------------------------------------------------
    def mark(self) -> int:
        """The number of requests so far: pass to ``since`` to see one run's requests."""
        with self._lock:
            return len(self.requests)

    def since(self, mark: int) -> list[Recorded]:
        with self._lock:
            return list(self.requests[mark:])

    def model_requests(self, mark: int = 0) -> Iterator[Recorded]:
        """The requests that asked the model something (subclasses narrow this)."""
        yield from self.since(mark)
