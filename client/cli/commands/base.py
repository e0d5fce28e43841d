"""The contract every ``maestroctl`` command follows, and the registry (``COMMANDS``).

A command is one function registered with ``@command(name, summary, arguments)`` in the
module of its group (``commands/<group>.py``). It receives the ``Context`` (global options,
the project, a lazily made ``Client``) and its parsed arguments, and returns an ``Outcome``:
the JSON-safe result, the text a person reads and the exit code. It raises ``MaestroError``
(exit 1), ``DaemonUnavailable`` (exit 3) or ``UsageProblem`` (exit 2). ``cli/main.py`` is the one
renderer: the text, or exactly one JSON document with ``--json`` (errors included).

The few commands that speak another program's protocol on stdout (``hook``, ``mcp``,
``merge-driver``) write it themselves and return ``Outcome.printed``: the renderer then
prints nothing and only passes on the exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ....common import layout
from ..._client import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from ..._client import Client
from ...errors import DaemonTimeout
from ..exits import EXIT_ERROR as EXIT_ERROR  # the exit statuses are the CLI's (exits.py)
from ..exits import EXIT_OK as EXIT_OK
from ..exits import EXIT_UNAVAILABLE as EXIT_UNAVAILABLE
from ..exits import EXIT_USAGE as EXIT_USAGE

if TYPE_CHECKING:
    import subprocess

    from ....common.paths import Paths

START_TIMEOUT = 15.0  # how long `start` waits for the new daemon to answer hello
STOP_TIMEOUT = 15.0  # how long `stop` waits for the daemon to release its lock
POLL_INTERVAL = 0.05
DEFAULT_CATEGORY = "project_context"
DEFAULT_EPISODIC_SESSION = "manual"
SESSION_ENV = "MAESTRO_SESSION_ID"
DECISIONS = ("remove", "archive", "reinforce", "rewrite")
BACKGROUND_LOG = "maestrod.out.log"
NOT_RUNNING_HINT = (
    "Start it with 'maestroctl start', or have it start at login with "
    "'maestroctl service install'. Memory commands keep working without it "
    "(they read and write the files directly)."
)


class UsageProblem(Exception):
    """A command line that parsed but makes no sense (exit 2)."""


# -- context and outcome -----------------------------------------------------------------------
def find_project(start: str) -> str:
    """The nearest directory at or above ``start`` holding ``.maestro/``, else ``start``
    itself: ``maestroctl init`` in a fresh directory makes the memory there."""
    return layout.project_or_here(start)


@dataclass
class Context:
    project_arg: str | None
    json: bool
    debug: bool
    require_daemon: bool | None
    timeout: float
    _client: Client | None = None
    _project: str | None = None

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Context:
        return cls(
            project_arg=getattr(ns, "project", None),
            json=bool(getattr(ns, "json", False)),
            debug=bool(getattr(ns, "debug", False)),
            # None lets the client read MAESTRO_REQUIRE_DAEMON.
            require_daemon=True if getattr(ns, "require_daemon", False) else None,
            timeout=float(getattr(ns, "timeout", DEFAULT_TIMEOUT)),
        )

    @property
    def project(self) -> str:
        if self._project is None:
            if self.project_arg is not None:
                self._project = os.path.abspath(os.path.expanduser(self.project_arg))
            else:
                self._project = find_project(os.getcwd())
        return self._project

    def client(self) -> Client:
        if self._client is None:
            self._client = Client(
                self.project, timeout=self.timeout, require_daemon=self.require_daemon
            )
        return self._client

    @property
    def paths(self) -> Paths:
        return self.client().paths

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


@dataclass
class Outcome:
    result: Mapping[str, Any]  # JSON-safe; a Client reply (TypedDict) as it came
    text: str = ""
    exit_code: int = EXIT_OK
    via: str | None = None
    project: str | None = None
    notice: str = ""  # human mode only: printed on stderr after the text
    printed: bool = False  # the command wrote its own output (another program's protocol)

    @classmethod
    def already_printed(cls, exit_code: int) -> Outcome:
        return cls({}, exit_code=exit_code, printed=True)


def memory_outcome(ctx: Context, result: Mapping[str, Any], text: str, notice: str = "") -> Outcome:
    return Outcome(result, text, via=ctx.client().last_via, project=ctx.project, notice=notice)


# -- the registry ------------------------------------------------------------------------------
Runner = Callable[[Context, argparse.Namespace], Outcome]
Configurer = Callable[[argparse.ArgumentParser], None]


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    description: str
    arguments: Configurer
    run: Runner


COMMANDS: dict[str, Command] = {}


def command(
    name: str, summary: str, arguments: Configurer = _no_arguments, description: str = ""
) -> Callable[[Runner], Runner]:
    def register(fn: Runner) -> Runner:
        COMMANDS[name] = Command(
            name, summary, description or summary[:1].upper() + summary[1:] + ".", arguments, fn
        )
        return fn

    return register


# -- shared helpers ----------------------------------------------------------------------------
def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _entry_line(entry: dict[str, Any]) -> str:
    bits = [f"confidence {entry.get('confidence', 0.0):.2f}"]
    if entry.get("salience") is not None:
        bits.append(f"salience {entry['salience']:.2f}")
    return ", ".join(bits)


def _category_words(category: Any) -> str:
    return str(category).replace("_", " ") if category else "-"


def _daemon_pid(ctx: Context) -> int | None:
    """The running daemon's pid from its pid file (no request needed)."""
    try:
        return int(ctx.paths.pid_path.read_text().strip())
    except (OSError, ValueError):
        return None


def _wait(proc: subprocess.Popen[bytes] | None) -> None:
    """Pause one polling interval (returns early if ``proc`` exits meanwhile)."""
    if proc is not None:
        import subprocess

        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(POLL_INTERVAL)
    else:
        time.sleep(POLL_INTERVAL)


def _answers_hello(paths: Paths, timeout: float = 0.3) -> dict[str, Any] | None:
    """One quick hello, straight over the socket (no lock probing: the daemon may be taking
    its lock right now); ``timeout``: how long this one try waits for the reply."""
    if not os.path.exists(paths.socket_path):
        return None
    with Client(timeout=timeout, retries=0, require_daemon=True, paths=paths) as probe:
        try:
            return probe._request("hello", None, {})
        except DaemonTimeout:
            return None
