"""Claude Code hooks (``maestroctl hook claude <event>``) and ``maestroctl integrate claude``.

A hook reads Claude Code's JSON from stdin and answers on stdout:

* ``session-start`` (SessionStart, every ``source``, ``compact`` included): ``initialize`` for
  the hook's session, then ``build_context`` for it; prints ``hookSpecificOutput`` with the
  context block as ``additionalContext`` (the core's block is already fenced and labelled as
  reference data).
* ``user-prompt`` (UserPromptSubmit): ``detect_signals`` on the prompt; what it saved comes
  back as one short line ("Remembered: …"), or nothing.
* ``session-end`` (SessionEnd; ``stop`` for a Stop hook): the project's maintenance.

Every hook is fail-open and bounded. Whatever goes wrong -- garbage on stdin, no ``.maestro/``
above ``cwd``, a dead or hung daemon, a bug -- it exits 0 and prints nothing, and the reason
goes to ``<log dir>/hooks.log``. The daemon gets a short timeout; after it, calls that may be
repeated safely run in direct mode instead. A watchdog ends the hook before ``DEADLINE``
whatever it is waiting for, and nothing longer than the token budget is ever printed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from ..common.layout import find_project
from .errors import DaemonTimeout, MaestroError

if TYPE_CHECKING:
    from ._client import Client

R = TypeVar("R")
EVENTS: tuple[str, ...] = ("session-start", "user-prompt", "session-end", "stop")
HOOK_EVENT_NAMES: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt": "UserPromptSubmit",
    "session-end": "SessionEnd",
    "stop": "Stop",
}
# The tool a hook runs for, told by where it keeps its transcript (Gemini and Codex run the
# same ``hook claude`` command): its context leaves out what was imported from its own memory.
TRANSCRIPT_TOOLS: tuple[tuple[str, str], ...] = (
    ("/.claude/", "claude"),
    ("/.gemini/", "gemini"),
    ("/.codex/", "codex"),
)
DAEMON_TIMEOUT = 0.3  # seconds for the daemon to answer one call from a hook
DEADLINE = 0.95  # seconds after the hook starts: the watchdog ends it here
HARD_DEADLINE = 1.15  # ... and the process, should anything not let go
DEADLINE_ENV = "MAESTRO_HOOK_DEADLINE"  # seconds, to widen both on a slow or busy machine
MAX_STDIN = 1 << 20
DEFAULT_MAX_TOKENS = 500
MAX_TOKENS_ENV = "MAESTRO_HOOK_MAX_TOKENS"
REMEMBERED_LIMIT = 200
LOG_NAME = "hooks.log"
LOG_ROTATE_BYTES = 1 << 20


class _Skip(Exception):
    """Nothing to do, for a reason worth logging (no project, bad input …)."""


class _Deadline(BaseException):
    """The watchdog fired: stop whatever is running (a BaseException, so nothing swallows it)."""


def hook_budget(env: dict[str, str] | os._Environ[str] | None = None) -> int:
    """The token budget of a hook's output: ``MAESTRO_HOOK_MAX_TOKENS`` or 500."""
    raw = (os.environ if env is None else env).get(MAX_TOKENS_ENV, "").strip()
    if raw.isdigit():
        return int(raw)
    return DEFAULT_MAX_TOKENS


def hook_deadlines(env: dict[str, str] | os._Environ[str] | None = None) -> tuple[float, float]:
    """(deadline, hard deadline) in seconds: ``MAESTRO_HOOK_DEADLINE`` when it is a positive
    number (the hard one 0.2 s later), else ``DEADLINE`` and ``HARD_DEADLINE``."""
    raw = (os.environ if env is None else env).get(DEADLINE_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEADLINE, HARD_DEADLINE
    if not 0 < value < 3600:  # nan and inf fail this too
        return DEADLINE, HARD_DEADLINE
    return value, value + (HARD_DEADLINE - DEADLINE)


def estimate_tokens(text: str) -> int:
    from ..core.text import estimate_tokens as estimate

    return estimate(text)


# -------------------------------------------------------------------------------------------
# Logging (never raises)
# -------------------------------------------------------------------------------------------


def log_path() -> Path:
    from ..common import paths

    return paths.resolve().log_dir / LOG_NAME


def log_reason(event: str, reason: str) -> None:
    try:
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            if path.stat().st_size > LOG_ROTATE_BYTES:
                os.replace(path, path.with_name(LOG_NAME + ".1"))
        except FileNotFoundError:
            pass
        stamp = dt.datetime.now().astimezone().isoformat(timespec="milliseconds")
        line = " ".join(f"{stamp} pid={os.getpid()} claude {event}: {reason}".split())
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, (line + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # logging must never make a hook fail
        pass


# -------------------------------------------------------------------------------------------
# The watchdog
# -------------------------------------------------------------------------------------------


class _Watchdog:
    """SIGALRM at the deadline (interrupts any blocking wait), ``os._exit(0)`` as a backstop."""

    def __init__(self, event: str, started: float) -> None:
        self.event = event
        self.started = started
        self.deadline, self.hard_deadline = hook_deadlines()
        self._done = threading.Event()
        self._armed = False
        self._previous: Any = signal.SIG_DFL

    def _alarm(self, signum: int, frame: types.FrameType | None) -> None:
        raise _Deadline

    def _backstop(self) -> None:
        remaining = self.hard_deadline - (time.monotonic() - self.started)
        if not self._done.wait(max(0.0, remaining)):
            log_reason(self.event, f"still running after {self.hard_deadline:g} s; exited")
            os._exit(0)

    def __enter__(self) -> _Watchdog:
        threading.Thread(target=self._backstop, name="hook-backstop", daemon=True).start()
        remaining = self.deadline - (time.monotonic() - self.started)
        try:
            self._previous = signal.signal(signal.SIGALRM, self._alarm)
            signal.setitimer(signal.ITIMER_REAL, max(0.01, remaining))
            self._armed = True
        except (ValueError, OSError, AttributeError):  # not the main thread, or no SIGALRM
            pass
        return self

    def disarm(self) -> None:
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self._armed = False

    def __exit__(self, *exc_info: object) -> None:
        self.disarm()
        self._done.set()


# -------------------------------------------------------------------------------------------
# The hooks
# -------------------------------------------------------------------------------------------


class _Memory:
    """The client for one hook: the daemon with a short timeout, then direct mode."""

    def __init__(self, project: Path, event: str) -> None:
        from ._client import Client

        self.project = project
        self.event = event
        self.client = Client(project, timeout=DAEMON_TIMEOUT, retries=0)

    def call(self, op: Callable[[Client], R], *, repeatable: bool) -> R:
        """Run ``op(client)``; after a daemon timeout, again in direct mode if ``repeatable``."""
        try:
            return op(self.client)
        except DaemonTimeout as exc:
            if not repeatable or self.client.direct or self.client.require_daemon:
                raise
            log_reason(self.event, f"{exc.message}; using the files directly")
            from ._client import Client

            self.client.close()
            self.client = Client(self.project, direct=True)
            return op(self.client)

    def close(self) -> None:
        self.client.close()


def _read_input(stdin: IO[bytes]) -> dict[str, Any]:
    if stdin.isatty():
        raise _Skip("stdin is a terminal, not hook JSON")
    raw = stdin.read(MAX_STDIN + 1)
    if len(raw) > MAX_STDIN:
        raise _Skip(f"hook input is larger than {MAX_STDIN} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Skip(f"hook input is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise _Skip(f"hook input is a JSON {type(data).__name__}, not an object")
    return data


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _hook_output(event: str, context: str) -> str:
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": HOOK_EVENT_NAMES[event],
                "additionalContext": context,
            }
        },
        ensure_ascii=False,
    )


def _hook_tool(data: dict[str, Any]) -> str | None:
    transcript = _text(data, "transcript_path") or ""
    return next((tool for part, tool in TRANSCRIPT_TOOLS if part in transcript), None)


def _import_tool_memories(memory: _Memory) -> None:
    """Take in what the agent tools saved in their own memories, when a file changed since
    the last import (a stat of each file against the ledger: no transaction otherwise).
    Until the daemon watches those folders, this and ``maestroctl import`` are the ways in."""
    from ..common import toolsources
    from ..core.toolmem import TOOLS

    config = toolsources.import_config()
    locations = toolsources.locate(memory.project, Path.home(), config)
    if not toolsources.needs_import(memory.project, locations, list(TOOLS)):
        return
    try:
        memory.call(lambda c: c.import_tool_memories(), repeatable=True)
    except MaestroError as exc:  # the context still matters more than the import
        log_reason(memory.event, f"tool memory import failed: {exc}")


def _session_start(memory: _Memory, data: dict[str, Any], budget: int) -> str:
    session_id = _text(data, "session_id")
    if session_id is None:
        # Without an id every start would count as a new session and decay the memory again.
        log_reason(memory.event, "no session_id in the hook input; decay not applied")
    else:
        memory.call(lambda c: c.initialize(session_id), repeatable=True)
    _import_tool_memories(memory)
    result = memory.call(
        lambda c: c.build_context(
            max_tokens=budget, session_id=session_id, exclude_source=_hook_tool(data)
        ),
        repeatable=True,
    )
    context = result.get("context")
    if not isinstance(context, str) or not context:
        return ""
    if estimate_tokens(context) > budget:
        raise _Skip(f"context of {estimate_tokens(context)} tokens exceeds the budget {budget}")
    return _hook_output("session-start", context)


def _user_prompt(memory: _Memory, data: dict[str, Any], budget: int) -> str:
    prompt = _text(data, "prompt")
    if prompt is None:
        return ""
    # Not repeated in direct mode after a timeout: the daemon may still apply it.
    result = memory.call(lambda c: c.detect_signals(prompt), repeatable=False)
    facts = [
        " ".join(str(s.get("fact", "")).split())
        for s in result.get("signals", [])
        if isinstance(s, dict) and s.get("action") in ("added", "replaced")
    ]
    facts = [f for f in facts if f]
    if not facts:
        return ""
    line = "Remembered: " + "; ".join(facts)
    if len(line) > REMEMBERED_LIMIT:
        line = line[: REMEMBERED_LIMIT - 1].rstrip() + "…"
    if estimate_tokens(line) > budget:
        return ""
    return _hook_output("user-prompt", line)


def _session_end(memory: _Memory, data: dict[str, Any], budget: int) -> str:
    memory.call(lambda c: c.maintenance(), repeatable=True)
    return ""


_HANDLERS: dict[str, Callable[[_Memory, dict[str, Any], int], str]] = {
    "session-start": _session_start,
    "user-prompt": _user_prompt,
    "session-end": _session_end,
    "stop": _session_end,
}


def _run(event: str, stdin: IO[bytes], memory_slot: list[_Memory]) -> str:
    if event not in _HANDLERS:
        raise _Skip(f"unknown hook event {event!r}")
    data = _read_input(stdin)
    cwd = _text(data, "cwd") or os.getcwd()
    project = find_project(cwd)
    if project is None:
        raise _Skip(f"no .maestro/ at or above {cwd}")
    memory = _Memory(project, event)
    memory_slot.append(memory)
    return _HANDLERS[event](memory, data, hook_budget())


def run_claude_hook(
    event: str, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None
) -> int:
    """Run one hook; always returns 0 (fail-open). Output only on success."""
    started = time.monotonic()
    output = ""
    memory: list[_Memory] = []
    try:
        with _Watchdog(event, started) as watchdog:
            try:
                output = _run(event, sys.stdin.buffer if stdin is None else stdin, memory)
            finally:
                watchdog.disarm()  # first: no alarm can interrupt the handling below
    except _Deadline:
        elapsed, deadline = time.monotonic() - started, hook_deadlines()[0]
        log_reason(event, f"gave up after {elapsed:.2f} s (deadline {deadline:g} s)")
    except _Skip as exc:
        log_reason(event, str(exc))
    except MaestroError as exc:
        log_reason(event, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug: still fail open, with the reason logged
        log_reason(event, f"unexpected {type(exc).__name__}: {exc}")
    finally:
        for m in memory:
            with contextlib.suppress(Exception):
                m.close()
    if output:
        out = sys.stdout if stdout is None else stdout
        try:
            out.write(output + "\n")
            out.flush()
        except OSError as exc:
            log_reason(event, f"cannot write the hook output: {exc}")
    return 0
