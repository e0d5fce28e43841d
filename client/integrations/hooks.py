"""Agent hooks: ``maestroctl hook <tool> <event>`` for Claude Code, Codex CLI and Gemini CLI.

The three tools send the same JSON shape on stdin (``session_id``, ``cwd``, ``prompt`` …) and
read the same ``hookSpecificOutput`` back; only their event names differ. The events here are
ours, the same for every tool; each tool's settings module maps its own events onto them
(``claude_settings``, ``codex_settings``, ``gemini_settings``): Claude Code and Codex
``SessionStart``/``UserPromptSubmit``/``SessionEnd``, Gemini ``SessionStart``/``BeforeAgent``/
``SessionEnd``. ``<tool>`` names who acted: it is in every ``hooks.log`` line, the output's
``hookEventName`` is the tool's own, the handlers see it as ``_Run.tool``, and the session
id of a Codex or Gemini session is prefixed with it (``codex:<id>``, ``gemini:<id>``), so the
session ledger, the journal and every episodic entry of that session (its ``[session]``, shown
by ``entries``) say which tool it was. Claude Code's ids stay bare, as they always were.

A hook reads the tool's JSON from stdin and answers on stdout:

* ``session-start`` (SessionStart, every ``source``, ``compact`` included): ``initialize`` for
  the hook's session; when no daemon answered (a daemon imports on its watcher's events), the
  agent tools' own memories changed since the last import are imported, the project lock
  waited for only within the time budget; then ``build_context`` for it; prints
  ``hookSpecificOutput`` with the context block as ``additionalContext`` (the core's block is
  already fenced and labelled as reference data). A running daemon that does not own the
  project registers it first when it holds ``.maestro/memory`` (``_registers``; logged), so
  an integrated project is served by the daemon without a ``maestroctl register``.
* ``user-prompt`` (UserPromptSubmit): ``detect_signals`` on the prompt, whose saves are shown to
  the person as ``systemMessage`` ("Remembered: …"); then a context build with the prompt as the
  task, ``unseen_only`` (entries relevant to it that this session has not been shown, at most
  ``PROMPT_MAX_TOKENS``), injected as ``additionalContext``; those count as referenced. Both
  builds pass ``for_tool``: the facts imported from this tool's own memory are left out (it
  loads them itself; issue 20).
* ``session-end`` (SessionEnd): the session's note — its ``transcript_path`` distilled by
  ``core.digest`` (task, files edited, commands, commits), one episodic entry per session id,
  none when the session had no prompt — then the project's maintenance. With a daemon that owns
  the project this is its ``end_session`` op: acknowledged at once, done on its writer; without
  one the hook does it (``ops.session_note``, then the two ops in direct mode).
* ``stop`` (Stop): nothing. Stop fires after every reply; it is not the end of a session and
  must not run maintenance (accepted so that an older settings file stays harmless).

The project is the nearest ``.maestro/`` at or above ``$CLAUDE_PROJECT_DIR`` (where Claude Code
was started), else above the hook's ``cwd`` (which follows the agent's ``cd``).

Every hook is fail-open and bounded. Whatever goes wrong -- garbage on stdin, no ``.maestro/``
above ``cwd``, a dead or hung daemon, a bug -- it exits 0 and prints nothing, and the reason
goes to ``<log dir>/hooks.log``; but a session start that found its project is never silently
without memory: it prints the last block served there (kept in the state dir after every
session start), marked as possibly out of date, or one line saying memory was not loaded.
The daemon gets a short timeout; after it, calls that may be
repeated safely run in direct mode instead. A watchdog ends the hook before ``DEADLINE``
whatever it is waiting for, and nothing longer than the token budget is ever printed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from ...common import layout
from ...common.agents import AGENTS
from ...common.atomic import write_atomic
from ...common.hookio import (
    PROMPT_MAX_TOKENS,
    ContextRefused,
    cut,
    hook_output,
    prompt_output,
    reasons,
    remembered,
    reply_context,
    start_limit,
)
from ...common.layout import canonical_project, find_project
from ...common.limits import CONTEXT_MAX_TOKENS, TOO_LARGE, estimate_tokens
from ...common.paths import UnsafeHome
from ..errors import DaemonTimeout, DaemonUnavailable, MaestroError, RequestError

if TYPE_CHECKING:
    from .._client import Client

R = TypeVar("R")
EVENTS: tuple[str, ...] = ("session-start", "user-prompt", "session-end", "stop")
TOOLS: tuple[str, ...] = tuple(sorted(AGENTS))  # the agents, in hook/integrate order
DAEMON_TIMEOUT = 0.3  # seconds for the daemon to answer one call from a hook
DEADLINE = 0.95  # seconds after the hook starts: the watchdog ends it here
HARD_DEADLINE = 1.15  # ... and the process, should anything not let go
# Tests on a loaded machine stretch the limits (all three in proportion) with this; a user
# has no reason to, Claude Code's own hook timeout being the outer bound.
DEADLINE_ENV = "MAESTRO_HOOK_DEADLINE"


def time_limits(
    env: dict[str, str] | os._Environ[str] | None = None,
) -> tuple[float, float, float]:
    """(deadline, hard deadline, daemon timeout) in seconds: the defaults, or scaled to
    ``MAESTRO_HOOK_DEADLINE`` when that is a positive number of seconds below an hour."""
    raw = (os.environ if env is None else env).get(DEADLINE_ENV, "").strip()
    try:
        deadline = float(raw) if raw else DEADLINE
    except ValueError:
        deadline = DEADLINE
    if not 0 < deadline < 3600:  # nan and inf fail this too
        deadline = DEADLINE
    scale = deadline / DEADLINE
    return deadline, HARD_DEADLINE * scale, DAEMON_TIMEOUT * scale


def _scaled(seconds: float) -> float:
    """A step's time budget inside the hook, stretched like the deadline it lives under."""
    return seconds * time_limits()[0] / DEADLINE


MAX_STDIN = 1 << 20
MAX_TOKENS_ENV = "MAESTRO_HOOK_MAX_TOKENS"
# Seconds before the deadline a write stops waiting for a busy project lock, so the prompt
# hook can still say what it could not remember.
NOTICE_RESERVE = 0.15
PROMPT_BUILD_UNTIL = 0.5  # seconds after the hook starts: later, skip the prompt's block
LOG_NAME = "hooks.log"
LOG_ROTATE_BYTES = 1 << 20


class _Skip(Exception):
    """Nothing to do, for a reason worth logging (no project, bad input …)."""


class _Deadline(BaseException):
    """The watchdog fired: stop whatever is running (a BaseException, so nothing swallows it)."""


def hook_budget(env: dict[str, str] | os._Environ[str] | None = None) -> int:
    """The token budget of a hook's output: ``MAESTRO_HOOK_MAX_TOKENS``, else the default."""
    raw = (os.environ if env is None else env).get(MAX_TOKENS_ENV, "").strip()
    if raw.isdigit():
        return int(raw)
    return CONTEXT_MAX_TOKENS


def _reply_context(result: Mapping[str, object], budget: int) -> str:
    """``hookio.reply_context``: a refused block is a reason worth logging (``_Skip``)."""
    try:
        return reply_context(result, budget)
    except ContextRefused as exc:
        raise _Skip(str(exc)) from None


# -------------------------------------------------------------------------------------------
# Logging (never raises)
# -------------------------------------------------------------------------------------------


def log_path() -> Path:
    from ...common import paths

    return paths.resolve_safe().log_dir / LOG_NAME


def log_reason(event: str, reason: str, *, screen: bool = True, tool: str = "claude") -> None:
    """Append one line to the hook log. ``reason`` passes the privacy screen first (it may
    quote what a daemon or a payload said); ``screen=False`` is for this module's own fixed
    messages on the deadline paths, which must not wait for the screen to load."""
    try:
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if screen:
            from ...core.secrets import redact  # loads only when a hook has something to log

            reason = redact(reason)
        import datetime as dt  # only when there is something to log

        stamp = dt.datetime.now().astimezone().isoformat(timespec="milliseconds")
        line = " ".join(f"{stamp} pid={os.getpid()} {tool} {event}: {reason}".split())
        append_rotating(path, (line + "\n").encode("utf-8", "replace"), LOG_ROTATE_BYTES)
    except Exception:  # logging must never make a hook fail
        pass


def append_rotating(path: Path, data: bytes, limit: int) -> None:
    """Append ``data`` to the log at ``path``; a log over ``limit`` bytes is first renamed to
    ``<name>.1`` (the one older generation kept).

    Hooks run concurrently, so the check and the rename happen under an exclusive ``flock`` on
    the open log itself, and a log renamed by another hook while this one waited for the lock
    is let go for the file now at ``path``: two hooks never both rotate (which renamed a fresh,
    nearly empty log over the ``.1`` just made), and no line lands in a file already rotated.
    The log is never opened through a symbolic link.
    """
    import fcntl

    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    for _ in range(8):  # another hook rotating under us each time: a bounded number of tries
        fd = os.open(path, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            try:
                current = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                continue  # rotated away while we waited: open the new one
            if (current.st_dev, current.st_ino) != (held.st_dev, held.st_ino):
                continue
            if held.st_size > limit:
                os.replace(path, path.with_name(path.name + ".1"))
                continue  # the next turn creates the new log (and locks it)
            os.write(fd, data)
            return
        finally:
            os.close(fd)  # also releases the lock


# -------------------------------------------------------------------------------------------
# The watchdog
# -------------------------------------------------------------------------------------------


class _Watchdog:
    """SIGALRM at the deadline (interrupts any blocking wait), ``os._exit(0)`` as a backstop."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.started = run.started
        self.deadline, self.hard_deadline, _ = time_limits()
        self._done = threading.Event()
        self._armed = False
        self._previous: Any = signal.SIG_DFL

    def _alarm(self, signum: int, frame: types.FrameType | None) -> None:
        raise _Deadline

    def _backstop(self) -> None:
        remaining = self.hard_deadline - (time.monotonic() - self.started)
        if not self._done.wait(max(0.0, remaining)):
            self.run.log(f"still running after {self.hard_deadline:g} s; exited", screen=False)
            if self.run.event == "session-start" and self.run.project is not None:
                # Not silently without memory, even here (the file read is all it costs).
                why = f"the hook's {self.hard_deadline:g} s hard deadline passed"
                _write(self.run, _not_loaded(self.run, why), self.run.stdout, wait=0.05)
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


class _Run:
    """This hook process's one run: the tool it serves, the event, when it started, the
    project once found, and the block a session start built (kept after the output)."""

    __slots__ = ("built", "event", "in_door", "printed", "project", "started", "stdout", "tool")

    def __init__(self, tool: str, event: str, started: float) -> None:
        self.tool = tool  # who acted: "claude" | "codex" | "gemini"
        self.event = event
        self.started = started  # time.monotonic() at the start: the deadlines count from it
        self.project: Path | None = None
        self.built: tuple[str, int] | None = None  # (block, tokens) of a session start
        self.stdout: IO[str] | None = None  # where the output goes (None: sys.stdout)
        self.printed = threading.Lock()  # held by whoever prints: one output, never two
        self.in_door = False  # answered by the daemon's HTTP door (answer_http), not a process

    def log(self, reason: str, *, screen: bool = True) -> None:
        log_reason(self.event, reason, screen=screen, tool=self.tool)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


class _HookClient:
    """The ``Client`` of one hook run: the daemon with a short timeout, then direct mode."""

    def __init__(self, run: _Run, project: Path) -> None:
        from .._client import Client

        self.run = run
        self.project = project
        self.event = run.event
        self.tool = run.tool
        timeout = time_limits()[2]  # then the files, for the ops safe to repeat (Client's)
        if run.in_door:  # never to the files past the daemon's own writer: waits longer
            from .agent_settings import DOOR_DAEMON_TIMEOUT as timeout
        self.client = Client(
            project,
            timeout=timeout,
            retries=0,
            fallback_after_timeout=not run.in_door,
            on_fallback=run.log,
            light_socket=True,  # no pyzmq in a process every agent session starts
            # The session start registers; so does every hook the daemon's door answers (run
            # in the daemon, direct mode would write past its writer).
            register_unowned=(
                _registers(run) if run.event == "session-start" or run.in_door else None
            ),
            # A prompt's capture stops waiting for a busy lock in time to say so.
            lock_deadline=(
                run.started + time_limits()[0] - _scaled(NOTICE_RESERVE)
                if run.event == "user-prompt"
                else None
            ),
        )

    def call(self, op: Callable[[Client], R]) -> R:
        """Run ``op(client)`` (after a daemon timeout, in direct mode when the op may be
        repeated: ``Client(fallback_after_timeout=True)``)."""
        return op(self.client)

    def close(self) -> None:
        self.client.close()


def _registers(run: _Run) -> Callable[[str], bool]:
    """A session start's answer to a running daemon that does not own its project: register
    it (so this session and the next are served by the daemon, not the files) when the
    project already holds its memory as a real directory, ``.maestro/memory`` (made by
    ``init``, a first save or a clone): a bare ``.maestro/`` above some ``cwd`` is not
    enough, and a link is not followed. Logged, so the person can see why it appeared."""

    def decide(project: str) -> bool:
        if not holds_memory(project):
            return False
        run.log(f"registering {project} with the running daemon (it holds .maestro/memory)")
        return True

    return decide


def holds_memory(project: str) -> bool:
    """Whether ``project`` holds its memory as a real directory, ``.maestro/memory`` (no link
    followed): the rule for registering a project the running daemon does not own."""
    root = Path(project)
    memory = layout.memory_dir(root)
    if (root / layout.MAESTRO_DIR).is_symlink() or memory.is_symlink():
        return False
    return memory.is_dir()


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


_hook_output = hook_output


IMPORT_RESERVE = 0.35  # seconds of the deadline a direct-mode import leaves for the context


def _import_tool_memories(memory: _HookClient) -> None:
    """Take in what the agent tools saved in their own memories since the last import, when
    no daemon serves the project: a daemon imports on its watcher's events, so after a call
    it answered there is nothing to do here. Without it: a stat of each file against the
    ledger first (no transaction when nothing changed), then one direct transaction that
    waits for the project lock only until the hook's deadline less ``IMPORT_RESERVE`` (kept
    for the context); a lock held past that skips the import (logged; the next session start,
    ``maestroctl import`` or the daemon takes it in). The context never waits for it."""
    if memory.client.last_via == "daemon":
        return
    from ...common import toolsources
    from .._client import Client

    try:
        config = toolsources.import_config()
    except ValueError as exc:
        memory.run.log(f"tool memories not imported: {exc}")
        return
    locations = toolsources.locate(memory.project, Path.home(), config)
    if not toolsources.needs_import(memory.project, locations, list(AGENTS)):
        return
    until = memory.run.started + time_limits()[0] - _scaled(IMPORT_RESERVE)
    if time.monotonic() >= until:
        memory.run.log("no time left to import the tool memories; skipped")
        return
    try:
        with Client(memory.project, direct=True, lock_deadline=until) as client:
            client.import_tool_memories()
    except MaestroError as exc:  # the context matters more than the import
        memory.run.log(f"tool memories not imported: {exc}")


def _session_start(memory: _HookClient, data: dict[str, Any], budget: int) -> str:
    session_id = _text(data, "session_id")
    if session_id is None:
        # Without an id every start would count as a new session and decay the memory again.
        memory.run.log("no session_id in the hook input; decay not applied")
    else:
        try:
            memory.call(lambda c: c.initialize(session_id))
        except MaestroError as exc:  # a file at its size limit: still served, not decayed
            if getattr(exc, "code", None) != TOO_LARGE:
                raise
            memory.run.log(f"session not started (no decay this time): {exc}")
    _import_tool_memories(memory)
    limit = _start_limit(budget)  # room for the out-of-date line, should it be served later
    result = memory.call(
        lambda c: c.build_context(max_tokens=limit, session_id=session_id, for_tool=memory.tool)
    )
    context = _reply_context(result, budget)
    memory.run.built = (context, int(result.get("tokens", 0)))
    output = _hook_output(memory.tool, "session-start", context) if context else ""
    try:
        return _door_notice(memory, output)
    except Exception as exc:  # the notice must never cost the session its memory
        memory.run.log(f"cannot check the HTTP door: {type(exc).__name__}: {exc}")
        return output


def _door_notice(memory: _HookClient, output: str) -> str:
    """A session whose other hooks or memory tools go to the daemon's HTTP door gets nothing
    from them when no door is open: the session start, always a command, says so
    (``agent_checks.door_down_notice``). Only looked into when no door is recorded."""
    from ...common import httpdoor, paths

    if httpdoor.recorded_port(paths.resolve_safe()) is not None:
        return output
    from .agent_checks import door_down_notice

    tell = door_down_notice(memory.tool, memory.project, Path.home())
    if tell is None:
        return output
    memory.run.log(tell)
    out = json.loads(output or _hook_output(memory.tool, "session-start", ""))
    out["systemMessage"] = tell
    return json.dumps(out, ensure_ascii=False)


def _user_prompt(memory: _HookClient, data: dict[str, Any], budget: int) -> str:
    prompt = _text(data, "prompt")
    if prompt is None:
        return ""
    # Gemini's BeforeAgent prompt starts with the session-start block (<hook_context>…): the
    # core strips it from both the detection and the task (core/injected.py), for every door.
    # Not repeated in direct mode after a timeout: the daemon may still apply it.
    try:
        result = memory.call(lambda c: c.detect_signals(prompt))
    except MaestroError as exc:  # the save failed: say so, if the prompt stated a rule
        memory.run.log(f"{type(exc).__name__}: {exc}")
        return prompt_output(memory.tool, _not_remembered(prompt, exc), "")
    for reason in reasons(result):  # why the door proposed or refused a line
        memory.run.log(reason)
    line = remembered(result)  # shown to the person: capture is never silent (nor a refusal)
    context = ""
    session_id = _text(data, "session_id")
    if session_id is not None and memory.run.elapsed() > _scaled(PROMPT_BUILD_UNTIL):
        memory.run.log("no time left for the prompt's context; only capture reported")
    elif session_id is not None:
        # The prompt is the task: what memory holds about it that this session has not seen.
        limit = min(budget, PROMPT_MAX_TOKENS)
        try:
            built = memory.call(
                lambda c: c.build_context(
                    task=prompt,
                    max_tokens=limit,
                    session_id=session_id,
                    unseen_only=True,
                    for_tool=memory.tool,  # it loads its own memory itself
                )
            )
            context = _reply_context(built, limit)
        except (_Skip, MaestroError) as exc:  # the capture above still stands: report it
            memory.run.log(str(exc))
    return prompt_output(memory.tool, line, context)


# The memory refused itself (a link, a foreign owner, an oversized file): the person is told
# exactly why, not sent to the log.
REFUSED_CODES = frozenset({"unsafe_memory", "link_refused", "untrusted_folder", TOO_LARGE})


def _refused(exc: MaestroError) -> str:
    """The refusal's own message when the memory refused itself, else ''."""
    code = getattr(exc, "code", None)
    return str(getattr(exc, "message", exc)) if code in REFUSED_CODES else ""


def _why_not_saved(exc: MaestroError) -> str:
    """A failed save's reason in a few words, for the person (the details are in hooks.log)."""
    import errno

    text = str(exc)
    if isinstance(exc, DaemonTimeout):
        return "the memory did not answer in time; it may still be saved"
    if os.strerror(errno.ENOSPC) in text:
        return "disk full"
    if "held by another writer" in text:
        return "the memory is busy (another writer holds its lock)"
    if isinstance(exc, RequestError) and exc.code == "rejected":
        return text.split(";")[0]
    if isinstance(exc, RequestError) and exc.code == TOO_LARGE:
        return "too large"
    return f"{text.splitlines()[0][:80] if text else type(exc).__name__}; see hooks.log"


def _not_remembered(prompt: str, exc: MaestroError) -> str:
    """The line for a capture that failed: the rules the prompt stated, and why they were
    not kept; nothing when it stated none (a failed save of nothing is no news)."""
    from ...core.saving import stated_signals
    from ...core.secrets import redact

    facts = [
        redact(" ".join(f.fact.split())) for f in stated_signals(prompt) if f.verdict != "refused"
    ]
    if not facts:
        return ""
    return cut(f"Not remembered ({_why_not_saved(exc)}): " + "; ".join(facts))


def _session_note(memory: _HookClient, session_id: str | None, path: str | None) -> None:
    """Direct path: distil the transcript into the session's episodic note (``ops.session_note``,
    read until ``TRANSCRIPT_BUDGET`` after the hook started), if it had a prompt. A missing or
    unreadable transcript is no error: no note."""
    if session_id is None or path is None:
        return
    from ...common.ops import TRANSCRIPT_BUDGET, session_note

    def late() -> bool:
        return memory.run.elapsed() > _scaled(TRANSCRIPT_BUDGET)

    try:
        note = session_note(memory.project, path, late)
    except OSError as exc:
        memory.run.log(f"no session note: cannot read the transcript ({exc})")
        return
    if note is not None:
        memory.call(lambda c: c.save_session_note(note, session_id))


def _session_end(memory: _HookClient, data: dict[str, Any], budget: int) -> str:
    session_id, path = _text(data, "session_id"), _text(data, "transcript_path")
    if path is not None:
        path = os.path.abspath(path)
    try:  # the daemon acknowledges, then does the note and the maintenance on its writer
        memory.call(lambda c: c.end_session(session_id, path))
        return ""
    except DaemonTimeout:
        raise  # it may still do it: not done twice here (maintenance is not repeatable)
    except DaemonUnavailable:
        pass  # not running, or gone: the direct path below
    except RequestError as exc:
        if exc.code != "not_registered":
            raise
    _session_note(memory, session_id, path)
    # Not redone in direct mode after a timeout (the op table: maintenance is not repeatable);
    # the daemon that timed out still runs it, and the nightly job does it anyway.
    memory.call(lambda c: c.maintenance())
    return ""


_HANDLERS: dict[str, Callable[[_HookClient, dict[str, Any], int], str]] = {
    "session-start": _session_start,
    "user-prompt": _user_prompt,
    "session-end": _session_end,
    "stop": lambda memory, data, budget: "",
}


def _run(run: _Run, stdin: IO[bytes], memory_slot: list[_HookClient], started_in: str) -> str:
    event, tool = run.event, run.tool
    if event not in _HANDLERS:
        raise _Skip(f"unknown hook event {event!r}")
    data = _read_input(stdin)
    if event == "stop":
        return ""  # after every reply: not a session end, nothing to do
    sid = data.get("session_id")
    if tool != "claude" and isinstance(sid, str) and sid.strip():
        data["session_id"] = f"{tool}:{sid}"
    cwd = _text(data, "cwd") or os.getcwd()
    started_in = started_in.strip()
    project = (find_project(started_in) if started_in else None) or find_project(cwd)
    if project is None:
        where = f"{started_in} (CLAUDE_PROJECT_DIR) or {cwd}" if started_in else cwd
        raise _Skip(f"no .maestro/ at or above {where}")
    project = canonical_project(project)  # its state is kept under the one key (forget)
    run.project = project
    memory = _HookClient(run, project)
    memory_slot.append(memory)
    return _HANDLERS[event](memory, data, hook_budget())


def run_claude_hook(
    event: str, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None
) -> int:
    """``run_hook("claude", …)``."""
    return run_hook("claude", event, stdin, stdout)


def run_hook(
    tool: str, event: str, stdin: IO[bytes] | None = None, stdout: IO[str] | None = None
) -> int:
    """Run one hook for ``tool``; always returns 0 (fail-open). A session start that found
    its project but not its context prints the last block served there, or says it did not
    load (``_not_loaded``); any other failure prints nothing."""
    started = time.monotonic()
    run = _Run(tool if tool in TOOLS else "claude", event, started)
    run.stdout = stdout
    memory: list[_HookClient] = []
    started_in = os.environ.get("CLAUDE_PROJECT_DIR", "")
    try:
        with _Watchdog(run) as watchdog:  # its backstop holds until the end of this block
            stream = sys.stdin.buffer if stdin is None else stdin
            # The watchdog is disarmed first: no alarm can interrupt the handling of the outcome.
            output = _answer(run, stream, memory, started_in, watchdog.disarm)
            _write(run, output, stdout)
            if run.built is not None and run.project is not None:
                _keep_last_block(run, run.project, *run.built)
    except _Deadline:  # the alarm rang between the handler's return and the disarm
        run.log("gave up at the deadline", screen=False)
    finally:
        for m in memory:
            with contextlib.suppress(Exception):
                m.close()
    return 0


def answer_http(tool: str, event: str, body: bytes, project: str = "") -> str:
    """What ``maestroctl hook <tool> <event>`` would print for ``body``, computed in this
    process: the daemon's HTTP door (``daemon/http_door/``) answers a tool's ``http`` hook
    with it. ``project`` (the door's ``?project=``) plays ``$CLAUDE_PROJECT_DIR``'s part. No
    watchdog: the client's timeouts bound every wait. A session start the daemon did not
    answer in time raises ``DaemonTimeout`` (503: the command runs the Python hook)."""
    import io

    run = _Run(tool if tool in TOOLS else "claude", event, time.monotonic())
    run.in_door = True
    memory: list[_HookClient] = []
    try:
        output = _answer(run, io.BytesIO(body), memory, project)
        if run.built is not None and run.project is not None:
            _keep_last_block(run, run.project, *run.built)
    finally:
        for m in memory:
            with contextlib.suppress(Exception):
                m.close()
    return output


def _answer(
    run: _Run,
    stdin: IO[bytes],
    memory: list[_HookClient],
    started_in: str,
    done: Callable[[], None] = lambda: None,
) -> str:
    """The output of one hook run, fail-open: a failure is logged and prints nothing, except
    that a session start that found its project but not its context prints the last block
    served there, or says it did not load (``_not_loaded``). ``done`` runs as soon as the
    handler returns or raises (the command hook's watchdog is disarmed there)."""
    output, failed = "", ""
    try:
        try:
            output = _run(run, stdin, memory, started_in)
        finally:
            done()
    except _Deadline:
        elapsed, deadline = time.monotonic() - run.started, time_limits()[0]
        run.log(f"gave up after {elapsed:.2f} s (deadline {deadline:g} s)", screen=False)
        failed = f"the hook's {deadline:g} s deadline passed"
    except _Skip as exc:
        run.log(str(exc))
        failed = "see hooks.log"
    except UnsafeHome as exc:  # nothing of that home is read or written, not the log
        output = _unsafe_home_notice(run, exc)
    except MaestroError as exc:
        run.log(f"{type(exc).__name__}: {exc}")
        if run.in_door and run.event == "session-start" and isinstance(exc, DaemonTimeout):
            raise  # the door answers 503: the session start's Python hook runs instead
        failed = _refused(exc) or "the memory did not answer; see hooks.log"
    except Exception as exc:  # a bug: still fail open, with the reason logged
        run.log(f"unexpected {type(exc).__name__}: {exc}")
        failed = "an error; see hooks.log"
    if failed and not output and run.event == "session-start" and run.project:
        output = _not_loaded(run, failed)
    return output


def _write(run: _Run, output: str, stdout: IO[str] | None, wait: float = -1) -> None:
    """Print ``output``, once: the main thread, or the backstop when the main thread has not
    (``run.printed`` is never released: whoever takes it is the one output)."""
    if output and run.printed.acquire(timeout=wait):
        out = sys.stdout if stdout is None else stdout
        try:
            out.write(output + "\n")
            out.flush()
        except OSError as exc:
            run.log(f"cannot write the hook output: {exc}")


# -------------------------------------------------------------------------------------------
# The last block: what a session start gets when it cannot get its context in time
# -------------------------------------------------------------------------------------------

OUT_OF_DATE = (
    "(Project memory from an earlier session start, not loaded this time ({why}):"
    " it may be out of date.)"
)
NOT_LOADED = "Project memory could not be loaded this time ({why})."


_start_limit = start_limit


def _last_block_path(project: Path) -> Path:
    """Where the last block for ``project`` is kept (``Paths.hook_block_path``)."""
    from ...common import paths

    return paths.resolve_safe().hook_block_path(project)


def _keep_last_block(run: _Run, project: Path, block: str, tokens: int) -> None:
    """Keep the block this session start served (atomically, 0600), or forget the last one
    when it served none."""
    try:
        path = _last_block_path(project)
        if not block:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        kept = {"project": str(project), "tokens": tokens, "context": block}
        write_atomic(path, json.dumps(kept).encode("utf-8"), mode=0o600, nofollow=True)
    except (OSError, UnsafeHome) as exc:
        run.log(f"cannot keep the last block: {exc}", screen=False)


def _unsafe_home_notice(run: _Run, exc: UnsafeHome) -> str:
    """A session start under an unsafe ``MAESTRO_HOME`` says so, in one line (fail open: the
    session goes on without the memory); the other events print nothing."""
    if run.event != "session-start":
        return ""
    tell = NOT_LOADED.format(why=f"MAESTRO_HOME refused: {exc.message}")
    out = json.loads(_hook_output(run.tool, "session-start", tell))
    out["systemMessage"] = tell
    return json.dumps(out, ensure_ascii=False)


def _not_loaded(run: _Run, why: str) -> str:
    """What a session start whose context did not come prints: the last block served for
    the project, marked in one line as possibly out of date, when it fits the budget; else
    one line telling that the memory could not be loaded this time (and why)."""
    assert run.project is not None
    budget = hook_budget()
    try:
        fd = os.open(_last_block_path(run.project), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, encoding="utf-8") as kept:
            last = json.load(kept)
        block, tokens = last["context"], last["tokens"]
        if last["project"] == str(run.project) and isinstance(block, str) and block:
            mark = OUT_OF_DATE.format(why=why)
            if isinstance(tokens, int) and tokens + estimate_tokens(mark) + 1 <= budget:
                run.log("served the last block kept for this project", screen=False)
                return _hook_output(run.tool, "session-start", mark + "\n" + block)
    except (OSError, ValueError, KeyError, TypeError, UnsafeHome):
        pass  # none kept (or unreadable): say so instead
    tell = NOT_LOADED.format(why=why)
    if estimate_tokens(tell) > budget:
        return ""
    run.log("no last block for this project; the session is told", screen=False)
    out = json.loads(_hook_output(run.tool, "session-start", tell))
    out["systemMessage"] = tell
    return json.dumps(out, ensure_ascii=False)
