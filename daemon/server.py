"""The main thread's lifecycle: start, the poll loop, signals, config reload and the shutdown
drain. What arrives on the ROUTER and ZAP sockets (peer checks, dispatch, replies) is
``daemon/routing.py``'s.

Only this thread touches the ROUTER (ZeroMQ sockets are not thread-safe). One ``zmq.Poller``
waits on four things at once, so the daemon sleeps when idle:

* the ROUTER (requests),
* the inproc PULL the writer posts finished replies to,
* the ZAP socket (libzmq asks it to authenticate every new connection: ``routing.py``),
* the wakeup fd that signal handlers write to (SIGTERM/SIGINT stop, SIGHUP reloads).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import zmq

from ..common import toolsources
from ..common.agents import AGENTS as TOOLS
from ..common.limits import RECEIVE_MAX_BYTES
from ..common.paths import Paths
from ..common.protocol import (
    SHUTTING_DOWN,
    error_reply,
)
from ..core.frame import use_meaning
from . import handlers
from .cache import ReadCache
from .config import Config, ConfigError, load_config
from .http_door import HttpDoor, close_door, open_door
from .journal import Journal
from .metrics import Metrics
from .registry import Registry
from .routing import BURST, Routing
from .scheduler import MaintenanceScheduler
from .sdnotify import notify, notify_serving
from .watcher import Watcher
from .writer import DRAINED, CheckJob, Closed, MemoryJob, TaskJob, Writer

log = logging.getLogger("maestrod")

ZAP_ENDPOINT = "inproc://zeromq.zap.01"
REPLY_ENDPOINT = "inproc://maestrod-replies"
ZAP_DOMAIN = b"maestrod"
# Shutdown: the queued writes are drained while the writer makes progress (a reply at least
# every SHUTDOWN_BUDGET_SECONDS), for at most SHUTDOWN_LIMIT_SECONDS (under systemd's
# TimeoutStopSec=15 and launchd's 20 s, with WRITER_JOIN_SECONDS). Past either, what is
# still queued is answered shutting_down (not applied). A writer stuck in one commit for good
# is left behind (os._exit): replies not yet flushed then are lost, best effort.
SHUTDOWN_BUDGET_SECONDS = 4.0
SHUTDOWN_LIMIT_SECONDS = 10.0
WRITER_JOIN_SECONDS = 2.0  # after the loop: the batch in progress may still finish


class Server:
    def __init__(self, paths: Paths, config: Config) -> None:
        self.paths = paths
        self.config = config
        self.started_at = time.time()
        self.process = psutil.Process()
        self.process.cpu_percent(None)  # the first call only starts the measurement
        self.metrics = Metrics()
        self.registry = Registry(paths.registry_path)
        self.cache = ReadCache()
        self.journal = Journal(paths.journal_dir)
        self.ops = handlers.build_registry()
        self.stopping = False
        self._stop_reason = ""
        self._drained = False
        self._deadline = 0.0
        self._hard_deadline = 0.0
        self.context: zmq.Context[Any] = zmq.Context()
        # Bound before the writer connects (inproc) and before the ROUTER exists (ZAP).
        self.zap = self.context.socket(zmq.REP)
        self.zap.linger = 0
        self.zap.bind(ZAP_ENDPOINT)
        self.replies = self.context.socket(zmq.PULL)
        self.replies.rcvhwm = 0
        self.replies.linger = 0
        self.replies.bind(REPLY_ENDPOINT)
        self.writer = Writer(
            self.cache,
            self.journal,
            config.settings(),
            self.context,
            REPLY_ENDPOINT,
            config.imports,
        )
        self.watcher = Watcher(
            self._queue_check,
            force_polling=config.force_polling,
            on_tools=self._queue_import,
            tool_points=self._tool_points,
        )
        self.writer.on_committed = self.watcher.own.committed  # our own commits are not checked
        self.scheduler = MaintenanceScheduler(
            config, paths.jobs_path, self._submit_maintenance, self.registry.projects
        )
        self.services = handlers.Services(
            paths=paths,
            registry=self.registry,
            cache=self.cache,
            journal=self.journal,
            metrics=self.metrics,
            writer=self.writer,
            watcher=self.watcher,
            scheduler=self.scheduler,
            process=self.process,
            started_at=self.started_at,
            stopping=lambda: self.stopping,
            request_shutdown=self.request_shutdown,
        )
        self.routing = Routing(
            self.zap, self.metrics, self.ops, self.registry, self.services, lambda: self.stopping
        )
        self._wake_r, self._wake_w = socket.socketpair()
        self._pending_signals: list[int] = []
        self.http: HttpDoor | None = None  # opened at start (config.toml's [http])

    # -- start -----------------------------------------------------------------------------
    def start(self) -> None:
        self._install_signals()  # a SIGTERM from here on is a clean stop
        use_meaning()  # every save is judged by meaning; the model loads on first use
        for project in sorted(self.registry.projects()):
            self.writer.projects.attach(project)  # before the writer thread runs: no race
        router = self.context.socket(zmq.ROUTER)
        router.setsockopt(zmq.ROUTER_MANDATORY, 1)
        router.linger = 0
        # Above MESSAGE_MAX_BYTES a request is answered too_large (decode_request), not
        # dropped; only past RECEIVE_MAX_BYTES does libzmq close the connection.
        router.setsockopt(zmq.MAXMSGSIZE, RECEIVE_MAX_BYTES)
        router.zap_domain = ZAP_DOMAIN
        # libzmq creates the socket file with the umask: make it 0700 (no other thread runs
        # yet, so changing the process-wide umask here affects nothing else).
        previous = os.umask(0o077)
        try:
            router.bind(self.paths.endpoint)
        finally:
            os.umask(previous)
        self.routing.router = router
        self.writer.start()
        self.watcher.start()
        for project in sorted(self.registry.projects()):
            self.watcher.watch(project)
        self.scheduler.start()
        self.http = open_door(self.paths, self.config)  # after the socket: a client of it
        log.info(
            "maestrod %s (pid %d) listening on %s; %d project(s) registered",
            handlers.package_version(),
            os.getpid(),
            self.paths.endpoint,
            len(self.registry.projects()),
        )
        notify("READY=1")
        notify_serving(len(self.registry.projects()))

    def _install_signals(self) -> None:
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        signal.set_wakeup_fd(self._wake_w.fileno(), warn_on_full_buffer=False)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: object) -> None:
        self._pending_signals.append(signum)

    # -- the loop --------------------------------------------------------------------------
    def serve(self) -> None:
        router = self.routing.router
        assert router is not None
        poller = zmq.Poller()
        poller.register(router, zmq.POLLIN)
        poller.register(self.replies, zmq.POLLIN)
        poller.register(self.zap, zmq.POLLIN)
        poller.register(self._wake_r.fileno(), zmq.POLLIN)
        while True:
            timeout = None
            if self.stopping:
                if self._drained:
                    break
                timeout = max(0, int((self._deadline - time.monotonic()) * 1000))
                if timeout == 0:
                    self._abandon_queued()
                    break
            try:
                events = dict(poller.poll(timeout))
            except zmq.ZMQError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            if self._wake_r.fileno() in events:
                self._drain_wakeups()
            self._handle_signals()
            if self.zap in events:
                self.routing.handle_zap()
            if self.replies in events:
                self._forward_replies()
            if router in events:
                self.routing.handle_requests()

    def _drain_wakeups(self) -> None:
        try:
            while self._wake_r.recv(512):
                pass
        except BlockingIOError:
            pass

    def _handle_signals(self) -> None:
        while self._pending_signals:
            signum = self._pending_signals.pop(0)
            if signum == signal.SIGHUP:
                self.reload_config()
            else:
                self.request_shutdown(f"received {signal.Signals(signum).name}")

    def _forward_replies(self) -> None:
        for _ in range(BURST * 4):
            try:
                frames = self.replies.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if frames == [DRAINED]:
                self._drained = True
                continue
            if self.stopping:  # the writer is making progress: give it more time, up to the limit
                self._deadline = min(
                    self._hard_deadline, time.monotonic() + SHUTDOWN_BUDGET_SECONDS
                )
            meta = json.loads(frames[0])
            self.routing.send(
                tuple(frames[1:-1]), frames[-1], meta["op"], meta["started"], ok=meta["ok"]
            )

    def _abandon_queued(self) -> None:
        """(reliability) The shutdown budget ran out with writes still queued (the writer is
        stuck in a commit): every request not yet started is answered ``shutting_down`` --
        nothing of it was applied -- instead of being left without a reply."""
        left = self.writer.queue.abandon()
        log.error(
            "shutdown: the write queue did not drain (no progress for %.0f s or %.0f s in all); "
            "%d queued job(s) answered shutting_down (not applied)",
            SHUTDOWN_BUDGET_SECONDS,
            SHUTDOWN_LIMIT_SECONDS,
            len(left),
        )
        message = "the daemon stopped before this request was applied; nothing changed"
        for job in left:
            to = job.reply_to
            if to is not None:
                reply = error_reply(to.req_id, SHUTTING_DOWN, message)
                self.routing.send(to.route, reply, to.op, to.started, ok=False)
            if job.future is not None and not job.future.done():
                job.future.set_exception(Closed(message))

    # -- writer helpers ----------------------------------------------------------------------
    def _queue_check(self, project: Path, thorough: bool = False) -> None:
        self.writer.submit(CheckJob(project, thorough=thorough))

    def _queue_import(self, project: Path) -> None:
        """The watcher saw a project's agent tool folders change (or it started watching
        them): import, when a file differs from what the ledger holds (stats only here, in
        the watcher's clock thread; the import itself is one job for the writer)."""
        try:
            locations = toolsources.locate(project, Path.home(), self.config.imports)
            if not toolsources.needs_import(project, locations, list(TOOLS)):
                return
        except (OSError, ValueError) as exc:
            log.warning("agent tool memories of %s not imported: %s", project, exc)
            return
        future = self.writer.submit_future(MemoryJob(project, "import_tool_memories", {}))
        future.add_done_callback(lambda f: _log_import(project, f))

    def _tool_points(self, project: Path) -> list[tuple[Path, frozenset[str] | None]]:
        """The directories the watcher watches for ``project``'s agent tool memories."""
        home = Path.home()
        locations = toolsources.locate(project, home, self.config.imports)
        return toolsources.watch_points(locations, home)

    def _submit_maintenance(self, project: Path) -> Any:
        return self.writer.submit_future(MemoryJob(project, "maintenance", {}))

    # -- config and lifecycle --------------------------------------------------------------
    def reload_config(self) -> None:
        try:
            config = load_config(self.paths.config_path)
            self.scheduler.reschedule(config)
        except ConfigError as exc:
            log.error("SIGHUP: keeping the running configuration: %s", exc)
            return
        previous, self.config = self.config, config
        settings = config.settings()
        try:
            self.writer.submit(
                TaskJob("reload", lambda: self._apply_settings(settings, config.imports))
            )
        except Closed:
            return
        if config.force_polling != previous.force_polling:
            log.warning("SIGHUP: [watcher] force_polling changes at the next start")
        if config.imports != previous.imports:
            # The tools' folders may have moved or been turned on: watch what [import] names
            # now, and import what changed there (watch() catches up on a watched project).
            for project in sorted(self.registry.projects()):
                self.watcher.watch(project)
        log.info("SIGHUP: configuration reloaded from %s", self.paths.config_path)

    def _apply_settings(self, settings: Any, imports: dict[str, Any]) -> dict[str, Any]:
        self.writer.projects.set_settings(settings)
        self.writer.imports = dict(imports)
        return {}

    def request_shutdown(self, reason: str) -> None:
        if self.stopping:
            return
        self.stopping = True
        self._stop_reason = reason
        self._deadline = time.monotonic() + SHUTDOWN_BUDGET_SECONDS
        self._hard_deadline = time.monotonic() + SHUTDOWN_LIMIT_SECONDS
        log.info("stopping (%s): draining %d queued write(s)", reason, self.writer.queue.depth())
        notify("STOPPING=1")
        close_door(self.http)  # no new request through it; the socket drains what came
        self.scheduler.stop()
        self.writer.close()

    def close(self) -> bool:
        """After the loop: stop the threads, close the sockets (which removes the socket
        file). False if the writer is stuck: then the context cannot be terminated cleanly."""
        close_door(self.http)
        self.watcher.stop()
        self.scheduler.stop()
        self.writer.close()
        if not self.writer.join(WRITER_JOIN_SECONDS):
            log.error("the writer did not stop in time; exiting without it")
            return False
        self._forward_replies()
        router = self.routing.router
        if router is not None:
            # What already arrived is told shutting_down, not dropped: all of it, not one burst.
            while self.routing.handle_requests():
                pass
        signal.set_wakeup_fd(-1)
        if router is not None:
            # Give the replies just queued (the shutdown ack, drained writes) a moment to
            # leave; LINGER 0 otherwise drops them at close.
            router.linger = 500
            router.close()
        self.replies.close()
        self.zap.close()
        self.context.term()
        self._wake_r.close()
        self._wake_w.close()
        log.info("stopped (%s)", self._stop_reason or "loop ended")
        return True


def _log_import(project: Path, future: Any) -> None:
    """One log line per import the watcher started that changed something, or failed."""
    try:
        outcome = future.result()
    except Exception as exc:  # Closed: stopping
        log.debug("import for %s not run: %s", project, exc)
        return
    if not outcome.ok:
        log.warning("agent tool memories of %s not imported: %s", project, outcome.message)
        return
    r = outcome.result or {}
    counts = {k: len(r.get(k) or []) for k in ("imported", "updated", "blocked", "flagged")}
    if any(counts.values()):
        log.info(
            "agent tool memories of %s: %s",
            project,
            ", ".join(f"{n} {k}" for k, n in counts.items() if n),
        )
