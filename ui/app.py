"""The web app behind ``maestroctl ui``: a guard in front of a few JSON routes and static files.

Why Starlette + uvicorn rather than the standard library's ``http.server``: the page needs
routing, cookies, query and JSON body parsing, and a server-sent-events stream that stays open
while other requests are served. ``http.server`` gives none of that ready-made, and every piece
written by hand here (header parsing, chunked streaming, keep-alive, request limits) would be a
place to get security wrong. Starlette is small, typed, and only routes and parses; uvicorn is
the ASGI server it is made for. Both are an optional extra (``maestro-agent-memory[ui]``).

The guard (``Guard``), in order, for every request:

1. ``Host`` must be ``127.0.0.1:PORT`` or ``localhost:PORT``: a page on another site that
   rebinds its DNS name to 127.0.0.1 still sends its own name, and is refused (403).
2. ``GET /?token=…`` with the right token sets the session cookie (``HttpOnly``,
   ``SameSite=Strict``, path ``/``) and redirects to ``/``, so the token leaves the address bar.
   The token is one-time: once it has bought the cookie it opens nothing again (403
   ``token_used``; a browser that already holds the cookie is just sent to ``/``), so a URL
   left in a history, a log or a shell's scrollback is worth nothing.
3. Everything else needs that cookie: without it, 401 and no data.
4. ``POST`` also needs an ``Origin`` equal to this server's own origin and the CSRF token (sent
   by the page in ``X-CSRF-Token``, handed out by ``/api/session``): 403 otherwise.

Every response carries a strict Content-Security-Policy (scripts, styles and connections from
this origin only, no inline code, no framing), ``nosniff``, ``no-referrer`` and ``no-store``.
The page renders every piece of memory text with ``textContent``, never as HTML.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..client.errors import DaemonUnavailable, MaestroError, RequestError
from ..common.hidden import shown_value
from .source import Source, UnknownProject

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
POLL_SECONDS = 0.5  # how often the event stream looks for a change
HEARTBEAT_SECONDS = 15.0
MAX_BODY = 64 * 1024


@dataclass
class Secrets:
    """The URL token (good once), the cookie's session value and the CSRF token."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    token_used: bool = False  # set by the first request the token opened (one event loop)


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


class Guard:
    """ASGI middleware: the checks of the module docstring, and the security headers."""

    def __init__(self, app: ASGIApp, keys: Secrets, port: Callable[[], int]) -> None:
        self.app = app
        self.keys = keys
        self.port = port

    def cookie_name(self) -> str:
        # Cookies ignore ports: two pages on two ports must not overwrite each other's cookie.
        return f"maestro_ui_{self.port()}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS
            await send(message)

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send_secured)
            return
        await self.app(scope, receive, send_secured)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        port = self.port()
        host = headers.get("host", "")
        if host not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return _error(403, "forbidden_host", "this server answers only to 127.0.0.1/localhost")
        method, path = scope["method"], scope["path"]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        cookies = _cookies(headers.get("cookie", ""))
        has_session = _same(cookies.get(self.cookie_name()), self.keys.session)
        if path == "/" and "token" in query and method == "GET":
            if not _same(query["token"][0], self.keys.token):
                return _error(403, "bad_token", "wrong token: open the URL maestroctl ui printed")
            redirect = Response(status_code=303, headers={"location": "/"})
            if has_session:
                return redirect  # the browser it opened, back at the URL: nothing new to give
            if self.keys.token_used:
                return _error(
                    403,
                    "token_used",
                    "this URL's token was used already: open the viewer in the browser it "
                    "opened, or restart maestroctl ui for a new URL",
                )
            self.keys.token_used = True
            redirect.set_cookie(
                self.cookie_name(),
                self.keys.session,
                path="/",
                httponly=True,
                samesite="strict",
            )
            return redirect
        if not has_session:
            return _error(
                401, "unauthorized", "no session: open the URL that maestroctl ui printed"
            )
        if method not in ("GET", "HEAD"):
            if headers.get("origin") != f"http://{host}":
                return _error(403, "bad_origin", "cross-origin request refused")
            if not _same(headers.get("x-csrf-token"), self.keys.csrf):
                return _error(403, "bad_csrf", "missing or wrong CSRF token")
        return None


def _cookies(header: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name not in out:
            out[name] = value
    return out


def _error(status: int, code: str, message: str) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


def create_app(
    source: Source, keys: Secrets, port: Callable[[], int], stopping: threading.Event
) -> ASGIApp:
    """The guarded app for ``source``; ``port`` is the bound port (known once bound)."""
    files = {path: (_static(name), kind) for path, (name, kind) in STATIC.items()}

    def static(request: Request) -> Response:
        body, kind = files[request.url.path]
        return Response(body, headers={"content-type": kind})

    def guarded(fn: Callable[[Request], dict[str, Any]]) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(shown_value(fn(request)))  # hidden characters shown
            except UnknownProject as exc:
                return _error(404, "unknown_project", str(exc))
            except DaemonUnavailable as exc:
                return _error(503, exc.code, exc.message)
            except RequestError as exc:
                return _error(404 if exc.code == "not_found" else 400, exc.code, exc.message)
            except MaestroError as exc:
                return _error(500, exc.code, exc.message)

        return endpoint

    def project_of(request: Request) -> str:
        return source.check(request.query_params.get("project"))

    def session(request: Request) -> dict[str, Any]:
        return {
            "csrf": keys.csrf,
            "project": source.start_project,
            "projects": source.projects(),
            "via": source.via(),
            "capabilities": source.capabilities(),
        }

    def overview(request: Request) -> dict[str, Any]:
        return source.overview(project_of(request))

    def search(request: Request) -> dict[str, Any]:
        query = request.query_params.get("q", "")
        return {"query": query, "results": source.search(project_of(request), query)}

    def history(request: Request) -> dict[str, Any]:
        entry_id = request.query_params.get("id", "")
        return {"id": entry_id, "points": source.history(project_of(request), entry_id)}

    async def body_of(request: Request) -> dict[str, Any]:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise RequestError("bad_request", "send application/json")
        raw = await request.body()
        if len(raw) > MAX_BODY:
            raise RequestError("bad_request", "request body too large")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise RequestError("bad_request", f"body is not JSON: {exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise RequestError("bad_request", "body must be an object with a string 'id'")
        return data

    def posted(fn: Callable[[str, dict[str, Any]], dict[str, Any]]) -> Callable[..., Any]:
        async def endpoint(request: Request) -> Response:
            try:
                data = await body_of(request)
            except RequestError as exc:
                return _error(400, exc.code, exc.message)
            project = data.get("project")
            call = guarded(
                lambda _r: fn(source.check(project if isinstance(project, str) else None), data)
            )
            return await asyncio.to_thread(call, request)

        return endpoint

    def review(project: str, data: dict[str, Any]) -> dict[str, Any]:
        return dict(source.decide(project, data["id"], str(data.get("action", ""))))

    def forget(project: str, data: dict[str, Any]) -> dict[str, Any]:
        return source.forget(project, data["id"])

    async def events(request: Request) -> Response:
        try:
            project = await asyncio.to_thread(source.check, request.query_params.get("project"))
        except UnknownProject as exc:
            return _error(404, "unknown_project", str(exc))

        async def stream() -> Any:
            last = await asyncio.to_thread(source.version, project)
            yield f"event: hello\ndata: {json.dumps(last)}\n\n"
            quiet = 0.0
            while not stopping.is_set() and not await request.is_disconnected():
                await asyncio.sleep(POLL_SECONDS)
                now = await asyncio.to_thread(source.version, project)
                if now != last:
                    last, quiet = now, 0.0
                    yield f"event: change\ndata: {json.dumps(now)}\n\n"
                else:
                    quiet += POLL_SECONDS
                    if quiet >= HEARTBEAT_SECONDS:
                        quiet = 0.0
                        yield ": still here\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    routes = [
        *(Route(path, static, methods=["GET"]) for path in STATIC),
        Route("/api/session", guarded(session), methods=["GET"]),
        Route("/api/overview", guarded(overview), methods=["GET"]),
        Route("/api/search", guarded(search), methods=["GET"]),
        Route("/api/history", guarded(history), methods=["GET"]),
        Route("/api/events", events, methods=["GET"]),
        Route("/api/review", posted(review), methods=["POST"]),
        Route("/api/forget", posted(forget), methods=["POST"]),
    ]
    return Guard(Starlette(routes=routes), keys, port)
