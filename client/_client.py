"""``Client``: one typed method per protocol op (``OpMethods``), over the daemon's socket or in
direct mode.

Transport (daemon mode): a DEALER socket with ``LINGER 0``. Each request carries a fresh id and
the caller's pid; the reply with that id is awaited for ``timeout`` seconds, and replies with any
other id (late answers to an earlier call that timed out) are dropped. After a timeout the
socket is closed and a new one is made for the next attempt, so nothing stale can arrive on it.
Only ops in ``protocol.IDEMPOTENT_OPS`` are sent again after a timeout (``initialize`` only
with a session id); nothing else is, because the daemon may have applied it.

Direct mode: when no daemon is listening (see ``_liveness``), a memory op runs in this process
through ``ops.dispatch_memory_op(DirectBackend(), ...)`` -- the same handlers the daemon runs,
under the same project lock -- so both paths return the same result dicts by construction.
``require_daemon`` (or ``MAESTRO_REQUIRE_DAEMON=1``) turns that fallback off. The client never
starts a daemon.

zmq, the paths module and the core are imported on first use: ``maestroctl`` runs inside agent
hooks, and a direct-mode call never needs zmq, nor a daemon call the core.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

# The op table and the envelope: light, they load no core. Imported once here, not per call.
from ..common.limits import (
    FACT_ARGS,
    FACT_MAX_CHARS,
    MESSAGE_MAX_BYTES,
    TOO_LARGE,
    fact_too_long,
    frame_too_large,
)
from ..common.protocol import (
    GLOBAL_OPS,
    IDEMPOTENT_OPS,
    MAX_ID_LENGTH,
    MEMORY_OP_NAMES,
    SUPPORTED_VERSIONS,
    encode_request,
)
from ._liveness import daemon_listening
from ._opmethods import OpMethods, Result
from .errors import (
    DaemonNotRunning,
    DaemonTimeout,
    DaemonUnavailable,
    ProtocolError,
    RequestError,
)

if TYPE_CHECKING:
    import zmq

    from ..common.paths import Paths
    from ..core.memory import Settings
    from ._zmtp import ZmtpDealer

Via = Literal["daemon", "direct"]
DEFAULT_TIMEOUT = 2.0
REQUIRE_DAEMON_ENV = "MAESTRO_REQUIRE_DAEMON"
_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


def require_daemon_from_env(env: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if env is None else env).get(REQUIRE_DAEMON_ENV, "")
    return value.strip().lower() in _TRUE_WORDS


class Client(OpMethods):
    """Talk to ``maestrod``, or to the memory files directly when it is not running.

    ``project`` is the default project of the memory ops (each method also takes
    ``project=``); it is resolved to its canonical path the way the daemon resolves it.
    A ``Client`` may be shared between threads (calls are serialised) and survives ``fork``
    (the child makes its own socket). Use it as a context manager, or call ``close()``.
    """

    def __init__(
        self,
        project: str | os.PathLike[str] | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 1,
        require_daemon: bool | None = None,
        direct: bool = False,
        paths: Paths | None = None,
        lock_deadline: float | None = None,
        fallback_after_timeout: bool = False,
        on_fallback: Callable[[str], None] | None = None,
        light_socket: bool = False,
        register_unowned: Callable[[str], bool] | None = None,
    ) -> None:
        """``lock_deadline`` (a ``time.monotonic()`` value; direct mode): a write that cannot
        take the project lock by then fails (``internal``, "held by another writer") instead
        of waiting for it — for a hook's bounded work. None waits.

        The timeout policy, one for every caller: a daemon that does not answer within
        ``timeout`` raises ``DaemonTimeout`` (it may still apply the op). With
        ``fallback_after_timeout`` (the agent hooks set it), a memory op that is safe to repeat
        (``IDEMPOTENT_OPS``) runs again in direct mode instead, and so does every later call
        of this client; ``on_fallback`` is told why, once.

        ``light_socket``: talk to the daemon over ``_zmtp`` (the standard library's sockets)
        instead of pyzmq, which then never loads -- for the processes every agent session
        starts (the hooks, ``maestroctl mcp``). Same requests, same replies.

        ``register_unowned``: when the daemon answers a memory op with ``not_registered``
        and this returns True for the project's path, the project is registered (the control
        op ``register``) and the op sent to the daemon again, once per client; else, and
        after that, direct mode as usual (a session start in an integrated project)."""
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        if retries < 0:
            raise ValueError(f"retries must be zero or more, got {retries!r}")
        self.project: str | None = None if project is None else os.fspath(project)
        self.require_daemon = (
            require_daemon_from_env() if require_daemon is None else require_daemon
        )
        if direct and self.require_daemon:
            raise ValueError("direct=True and require_daemon=True exclude each other")
        self.direct = direct
        #: How the last successful call was served: "daemon", "direct", or None.
        self.last_via: Via | None = None
        self._paths = paths
        self.lock_deadline = lock_deadline
        self.fallback_after_timeout = fallback_after_timeout
        self.on_fallback = on_fallback
        self.register_unowned = register_unowned
        self._lock = threading.RLock()
        self._transport = _Transport(
            float(timeout), retries, lambda: self.paths, self.daemon_running, light_socket
        )
        self._probe_paths: tuple[str, str] | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._transport.close()

    @property
    def timeout(self) -> float:
        """Seconds a daemon call waits for its reply."""
        return self._transport.timeout

    @property
    def retries(self) -> int:
        """How many times a call that is safe to repeat is sent again after a timeout."""
        return self._transport.retries

    @property
    def paths(self) -> Paths:
        """The daemon's paths for this user (or ``MAESTRO_HOME``), as the daemon resolves them."""
        if self._paths is None:
            import warnings

            from ..common import paths

            with warnings.catch_warnings():
                # platformdirs warns when XDG_RUNTIME_DIR is unset and it falls back to /tmp;
                # the daemon resolves the same fallback, so there is nothing to tell the user.
                warnings.simplefilter("ignore")
                # An unsafe MAESTRO_HOME is UnsafeHome: no config, state or socket in it is
                # used (common/paths.home_refusal, the one rule of every process).
                self._paths = paths.resolve_safe()
        return self._paths

    def core_settings(self) -> Settings:
        """The core settings direct mode runs with: config.toml's ``[core]`` and ``[trust]``,
        as the daemon reads them (``common/settings.py``), from a safe home only
        (``paths``). Raises ``SettingsError`` for a config.toml that cannot be used."""
        from ..common.settings import load_core_settings

        return load_core_settings(self.paths.config_path)

    def daemon_running(self) -> bool:
        """Whether a daemon is listening, from the socket and lock files alone (no waiting)."""
        if self._probe_paths is None:  # resolved once: this runs before every request
            self._probe_paths = (str(self.paths.socket_path), str(self.paths.lock_path))
        return daemon_listening(*self._probe_paths)

    # -- dispatch ----------------------------------------------------------------------------
    def call(
        self,
        op: str,
        args: Mapping[str, Any] | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> Result:
        """Send ``op`` to the daemon, or run it in direct mode; return the result dict.

        Raises ``RequestError`` for a coded error reply, ``DaemonUnavailable`` when the op needs
        a daemon that is not there (or did not answer), ``ProtocolError`` for a garbled reply.
        """
        payload = dict(args or {})
        is_memory_op = op in MEMORY_OP_NAMES
        scoped = is_memory_op or op not in GLOBAL_OPS or project is not None
        target = self._project_path(project) if scoped else None
        check_size(op, target, payload)  # before anything is sent, in either mode
        with self._lock:
            if self.direct:
                if not is_memory_op:
                    raise DaemonUnavailable(f"'{op}' needs maestrod; this client is in direct mode")
                return self._direct(op, target, payload)
            if not self.daemon_running():
                if is_memory_op and not self.require_daemon:
                    return self._direct(op, target, payload)
                raise DaemonNotRunning(self._not_running_message(op))
            try:
                result = self._request(op, target, payload)
            except DaemonTimeout as exc:
                if (
                    self.fallback_after_timeout
                    and is_memory_op
                    and not self.require_daemon
                    and _repeatable(op, payload)
                ):
                    self._transport.drop_socket()
                    self.direct = True  # a daemon that timed out once: not waited for again
                    if self.on_fallback is not None:
                        self.on_fallback(f"{exc.message}; using the files directly")
                    return self._direct(op, target, payload)
                raise
            except DaemonNotRunning:
                # It went away while we waited. Running the op again here is safe only when
                # repeating it changes nothing.
                if is_memory_op and not self.require_daemon and _repeatable(op, payload):
                    return self._direct(op, target, payload)
                raise
            except RequestError as exc:
                # A project the daemon does not own is not the daemon's to guard: serve it from
                # the files, as if no daemon ran (unless the caller insists on the daemon).
                if exc.code == "not_registered" and is_memory_op and not self.require_daemon:
                    registered = self._register_then(op, target, payload)
                    return self._direct(op, target, payload) if registered is None else registered
                raise
            self.last_via = "daemon"
            return result

    def _register_then(self, op: str, project: str | None, args: dict[str, Any]) -> Result | None:
        """``op`` answered by the daemon after registering ``project`` (``register_unowned``
        said yes), or None: not asked, refused, or not answered; direct mode then."""
        decide, self.register_unowned = self.register_unowned, None  # asked once per client
        if decide is None or project is None or not decide(project):
            return None
        try:
            self._request("register", None, {"path": project})
        except (DaemonUnavailable, RequestError):
            return None
        try:
            result = self._request(op, project, args)
        except (DaemonTimeout, DaemonNotRunning) as exc:  # call()'s policy for either
            timed_out = isinstance(exc, DaemonTimeout)
            if not _repeatable(op, args) or (timed_out and not self.fallback_after_timeout):
                raise
            if timed_out:
                self._transport.drop_socket()
                self.direct = True
            return None
        self.last_via = "daemon"
        return result

    def _request(self, op: str, project: str | None, args: dict[str, Any]) -> Result:
        """One request to the daemon, retried if safe: no liveness probe, no direct mode."""
        return self._transport.request(op, project, args)

    def _not_running_message(self, op: str) -> str:
        if op in MEMORY_OP_NAMES:
            return (
                f"maestrod is not running and the daemon is required "
                f"({REQUIRE_DAEMON_ENV} or --require-daemon); start it with "
                "'maestroctl start'"
            )
        return f"maestrod is not running ('{op}' needs it); start it with 'maestroctl start'"

    def _project_path(self, project: str | os.PathLike[str] | None) -> str:
        chosen = project if project is not None else self.project
        if chosen is None:
            chosen = os.getcwd()
        # The daemon canonicalises the path itself (ops.resolve_project); an absolute path keeps
        # the request meaningful whatever the daemon's working directory. Direct mode runs it
        # through ops.resolve_project below.
        text = os.fspath(chosen)
        if "\x00" in text:
            raise RequestError("bad_request", "project path must not contain NUL characters")
        return os.path.abspath(os.path.expanduser(text))

    def _call_or_read(
        self, op: str, args: dict[str, Any], project: str | os.PathLike[str] | None
    ) -> Result:
        """``op`` through the daemon when it answers, else read from the daemon's state files
        (``projects``, ``log``: read-only, so reading them without the daemon is safe)."""
        if not self.direct and self.daemon_running():
            try:
                return self.call(op, args, project=project)
            except (DaemonUnavailable, RequestError):
                pass  # it stopped, or does not own the project: read the file below
        from ..common import ops, statefiles
        from ..common.protocol import OpError

        try:
            if op == "projects":
                try:
                    registered = statefiles.read_registry(self.paths.registry_path)
                except (OSError, ValueError):
                    registered = []  # the daemon logs this when it starts; a reader sees none
                result = statefiles.project_listing(registered)
            else:
                root = ops.resolve_project(self._project_path(project))
                limit = ops.opt_int(args, "limit", statefiles.LOG_LIMIT_DEFAULT)
                result = statefiles.log_reply(self.paths.journal_dir, root, limit)
        except OpError as exc:
            raise RequestError(exc.code, exc.message) from exc
        self.last_via = "direct"
        return result

    # -- direct mode -------------------------------------------------------------------------
    def _direct(self, op: str, project: str | None, args: dict[str, Any]) -> Result:
        from ..common import ops
        from ..common.protocol import CONFLICT, INTERNAL, OpError
        from ..common.settings import SettingsError
        from ..core.model import UnsafeMemory

        assert project is not None
        try:
            root = ops.resolve_project(project)
            if not root.is_dir():
                # MemoryStore would create the directories; a typo in -C must not do that.
                raise OpError(CONFLICT, f"project directory {root} does not exist")
            # The daemon's [core] settings, so that both paths age and reinforce alike.
            settings = self.core_settings()
            backend = ops.DirectBackend(settings=settings, lock_deadline=self.lock_deadline)
            result = ops.dispatch_memory_op(backend, op, root, args)
        except SettingsError as exc:
            raise RequestError(INTERNAL, f"{op} in direct mode: bad configuration: {exc}") from exc
        except OpError as exc:
            raise RequestError(exc.code, exc.message) from exc
        except UnsafeMemory as exc:  # the daemon answers with the same code and message
            raise RequestError(exc.code, exc.message) from exc
        except OSError as exc:
            raise RequestError(INTERNAL, f"{op} failed in direct mode: {exc}") from exc
        self.last_via = "direct"
        return result


class _Transport:
    """Daemon mode's wire: one DEALER socket per process (a forked child makes its own), a
    fresh id per request, the bounded wait for the reply with that id, and the retries of what
    is safe to repeat (see the module docstring)."""

    def __init__(
        self,
        timeout: float,
        retries: int,
        paths: Callable[[], Paths],
        daemon_running: Callable[[], bool],
        light: bool = False,
    ) -> None:
        self.timeout = timeout
        self.light = light
        self._light: ZmtpDealer | None = None  # the light socket, when ``light``
        self.retries = retries
        self._get_paths = paths
        self.daemon_running = daemon_running
        self._context: zmq.Context[Any] | None = None
        self._socket: zmq.Socket[Any] | None = None
        self._pid = os.getpid()
        self._counter = 0
        self._id_prefix = os.urandom(4).hex()
        self._rcvtimeo = -1  # the RCVTIMEO last set on the socket, in ms

    @property
    def paths(self) -> Paths:
        return self._get_paths()

    def close(self) -> None:
        self.drop_socket()
        if self._context is not None:
            if self._pid == os.getpid():
                self._context.term()
            self._context = None

    def request(self, op: str, project: str | None, args: dict[str, Any]) -> Result:
        repeatable = _repeatable(op, args)
        attempts = 1 + (self.retries if repeatable else 0)
        for attempt in range(1, attempts + 1):
            try:
                return self._roundtrip(op, project, args)
            except _NoReply:
                self.drop_socket()
                if attempt == attempts:
                    break
                if not self.daemon_running():
                    raise DaemonNotRunning(
                        f"maestrod stopped while '{op}' was waiting for its reply"
                    ) from None
        again = "" if repeatable else " (not retried: it may or may not have applied)"
        raise DaemonTimeout(
            f"maestrod did not answer '{op}' within {self.timeout:g} s{again}; "
            "see 'maestroctl status' and its log"
        )

    def _next_id(self) -> str:
        self._counter += 1
        return f"{self._pid}-{self._id_prefix}-{self._counter}"

    def _ensure_socket(self) -> zmq.Socket[Any]:
        import zmq

        if self._pid != os.getpid():
            # A forked child must not touch its parent's context or socket.
            self._context = None
            self._socket = None
            self._pid = os.getpid()
        if self._socket is None:
            if self._context is None:
                self._context = zmq.Context()
            sock = self._context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDTIMEO, max(1, int(self.timeout * 1000)))
            sock.connect(self.paths.endpoint)
            self._socket = sock
            self._rcvtimeo = -1
        return self._socket

    def drop_socket(self) -> None:
        if self._light is not None:
            self._light.close()
            self._light = None
        if self._socket is not None:
            if self._pid == os.getpid():
                self._socket.close(linger=0)
            self._socket = None

    def _roundtrip_light(self, frame: bytes, req_id: str) -> Result:
        """``_roundtrip`` over ``_zmtp``. A connection kept from an earlier call that the daemon
        closed since (it restarted) is made again before anything is sent on it; a socket
        nobody listens on is ``DaemonNotRunning`` (nothing was sent: direct mode may take it)."""
        from ._zmtp import ZmtpClosed, ZmtpDealer, ipc_path

        deadline = time.monotonic() + self.timeout
        path = ipc_path(self.paths.endpoint)
        if path is None:
            raise DaemonUnavailable(f"no light socket for {self.paths.endpoint}: ipc:// only")
        try:
            if self._light is not None and (self._pid != os.getpid() or not self._light.alive()):
                self.drop_socket()
            if self._light is None:
                self._pid = os.getpid()
                try:
                    self._light = ZmtpDealer(path, max(0.001, deadline - time.monotonic()))
                except (FileNotFoundError, ConnectionRefusedError) as exc:
                    raise DaemonNotRunning(f"maestrod is not listening at {path}: {exc}") from None
            self._light.send(frame, deadline - time.monotonic())
            while True:
                assert self._light is not None
                frames = self._light.recv(deadline)
                reply = _decode_reply(frames[-1] if frames else b"")
                if reply.get("id") == req_id:  # else a late reply to a call that gave up
                    return _unwrap(reply)
        except TimeoutError:
            raise _NoReply from None
        except ZmtpClosed:
            self.drop_socket()
            raise _NoReply from None  # it went away with our request: as a timeout
        except OSError as exc:  # ZmtpError among them: refused, or not ZMTP
            self.drop_socket()
            raise DaemonUnavailable(f"cannot talk to maestrod at {path}: {exc}") from exc

    def _roundtrip(self, op: str, project: str | None, args: dict[str, Any]) -> Result:
        if self.light:
            req_id = self._next_id()
            return self._roundtrip_light(
                encode_request(req_id, op, project, args, pid=self._pid), req_id
            )
        import zmq

        req_id = self._next_id()
        frame = encode_request(req_id, op, project, args, pid=self._pid)
        deadline = time.monotonic() + self.timeout
        try:
            sock = self._ensure_socket()
            sock.send(frame)
            while True:
                # A blocking recv bounded by RCVTIMEO: cheaper than a poll per call, which
                # matters because every agent start-up waits on this round trip.
                remaining_ms = int((deadline - time.monotonic()) * 1000)
                if remaining_ms <= 0:
                    raise _NoReply
                if remaining_ms != self._rcvtimeo:
                    sock.setsockopt(zmq.RCVTIMEO, remaining_ms)
                    self._rcvtimeo = remaining_ms
                frames = sock.recv_multipart()
                reply = _decode_reply(frames[-1] if frames else b"")
                if reply.get("id") != req_id:
                    continue  # a late reply to a call that already gave up: not ours
                return _unwrap(reply)
        except zmq.Again:
            raise _NoReply from None
        except zmq.ZMQError as exc:
            self.drop_socket()
            raise DaemonUnavailable(
                f"cannot talk to maestrod at {self.paths.endpoint}: {exc}"
            ) from exc


def check_size(op: str, project: str | None, args: dict[str, Any]) -> None:
    """Refuse, before sending (``too_large``), a memory's text over ``FACT_MAX_CHARS`` and a
    request whose frame could exceed ``MESSAGE_MAX_BYTES`` (measured with the longest id and
    pid, so the frame the transport builds always fits): the daemon would answer the same,
    and direct mode refuses alike, so both paths give one result."""
    arg = FACT_ARGS.get(op)
    text = args.get(arg) if arg is not None else None
    if isinstance(text, str) and len(text) > FACT_MAX_CHARS:
        raise RequestError(TOO_LARGE, fact_too_long(arg or "text", len(text)))
    try:
        size = len(encode_request("x" * MAX_ID_LENGTH, op, project, args, pid=-(2**63)))
    except (TypeError, ValueError):  # not JSON: the transport says so, direct mode may run it
        return
    if size > MESSAGE_MAX_BYTES:
        raise RequestError(TOO_LARGE, frame_too_large(size))


def _repeatable(op: str, args: Mapping[str, Any]) -> bool:
    """Whether sending ``op`` twice is the same as sending it once (``IDEMPOTENT_OPS``).

    ``initialize`` is idempotent per session id; without one the daemon makes up a new session
    each time, and a second attempt would decay the memory twice.
    """
    if op == "initialize" and args.get("session_id") is None:
        return False
    return op in IDEMPOTENT_OPS


class _NoReply(Exception):
    """Internal: the reply did not come in time."""


def _decode_reply(frame: bytes) -> dict[str, Any]:
    try:
        data = json.loads(frame.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"maestrod sent a reply that is not UTF-8 JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ProtocolError(f"maestrod sent a {type(data).__name__}, not a JSON object")
    return data


def _unwrap(reply: dict[str, Any]) -> Result:
    if reply.get("v") not in SUPPORTED_VERSIONS:
        raise ProtocolError(
            f"maestrod answered with protocol version {reply.get('v')!r}; "
            f"this client speaks {list(SUPPORTED_VERSIONS)}"
        )
    if reply.get("ok") is True:
        result = reply.get("result")
        if result is None:
            return {}
        if not isinstance(result, dict):
            raise ProtocolError("maestrod sent a result that is not an object")
        return result
    if reply.get("ok") is False:
        error = reply.get("error")
        if isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            if isinstance(code, str):
                raise RequestError(code, str(message or code))
    raise ProtocolError("maestrod sent a reply with neither a result nor a coded error")
