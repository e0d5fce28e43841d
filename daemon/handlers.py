"""The daemon's op registry: the memory ops of ``ops.MEMORY_OPS`` plus the daemon's own.

Every op is one small handler registered by name (``@daemon_op``). A handler gets a ``Call``
(the decoded request, its resolved project, the ``Services``) and returns the result dict, or
``None`` when it queued the request to the writer, which sends the reply once the write is
durable. Each op's facts (scope, read or write) come from the op table, ``protocol.OPS``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil  # type: ignore[import-untyped]

from ..common import layout
from ..common.ops import (
    MEMORY_OPS,
    TRANSCRIPT_BUDGET,
    OpSpec,
    dispatch_memory_op,
    opt_int,
    opt_str,
    read_signals,
    resolve_project,
    saved_signals,
    session_note,
)
from ..common.protocol import (
    BAD_REQUEST,
    CONFLICT,
    NOT_REGISTERED,
    OPS,
    READ_OPS,
    SHUTTING_DOWN,
    SUPPORTED_VERSIONS,
    OpError,
    Request,
)
from ..common.statefiles import LOG_LIMIT_DEFAULT, log_reply, missing, project_listing
from ..common.version import package_version as package_version
from ..core.memory import Memory, MemoryView
from .logsetup import DESTINATION, ORIGIN, RECENT
from .sdnotify import notify_serving
from .writer import Closed, MemoryJob, ReplyTo, TaskJob

if TYPE_CHECKING:
    from ..common.paths import Paths
    from .cache import ReadCache
    from .journal import Journal
    from .metrics import Metrics
    from .registry import Registry
    from .scheduler import MaintenanceScheduler
    from .watcher import Watcher
    from .writer import Writer


log = logging.getLogger("maestrod")


@dataclass(frozen=True)
class Services:
    """What the handlers use of the daemon, and nothing more (the server builds it; the
    handlers never see the server, so this module does not import it)."""

    paths: Paths
    registry: Registry
    cache: ReadCache
    journal: Journal
    metrics: Metrics
    writer: Writer
    watcher: Watcher
    scheduler: MaintenanceScheduler
    process: psutil.Process
    started_at: float
    stopping: Callable[[], bool]
    request_shutdown: Callable[[str], None]


@dataclass(frozen=True)
class Call:
    services: Services
    request: Request
    project: Path | None
    route: tuple[bytes, ...]
    started: float

    @property
    def args(self) -> dict[str, Any]:
        return self.request.args

    def reply_to(self) -> ReplyTo:
        return ReplyTo(self.route, self.request.id, self.request.op, self.started)

    def queue(self, job: MemoryJob | TaskJob) -> None:
        """Hand the request to the writer; it replies."""
        job.reply_to = self.reply_to()
        try:
            self.services.writer.submit(job)
        except Closed as exc:
            raise OpError(SHUTTING_DOWN, str(exc)) from exc


DaemonHandler = Callable[[Call], dict[str, Any] | None]


@dataclass(frozen=True)
class DaemonOpSpec:
    name: str
    handler: DaemonHandler
    args: frozenset[str]
    scoped: bool  # needs a registered project
    project_arg: str | None = None  # this argument may name the project instead


DAEMON_OPS: dict[str, DaemonOpSpec] = {}


def daemon_op(
    name: str, *args: str, project_arg: str | None = None
) -> Callable[[DaemonHandler], DaemonHandler]:
    def register(fn: DaemonHandler) -> DaemonHandler:
        DAEMON_OPS[name] = DaemonOpSpec(name, fn, frozenset(args), OPS[name].scoped, project_arg)
        return fn

    return register


# -- memory ops ---------------------------------------------------------------------------------
class CacheBackend:
    """``ops.Backend`` for reads on the main thread: the cached view; reinforcement queued."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def read(self, project: Path) -> MemoryView:
        return self.services.cache.view(project)

    def write(self, project: Path, op: str, fn: Callable[[Memory], Any]) -> Any:
        raise RuntimeError(f"{op} must run on the writer thread")

    def import_config(self) -> dict[str, Any]:
        return dict(self.services.writer.imports)

    def reinforce_later(self, project: Path, entry_ids: list[str], session_id: str) -> None:
        ids = list(entry_ids)

        def apply(memory: Memory) -> dict[str, Any]:
            return {"entries": [e.to_dict() for e in memory.reinforce_referenced(ids, session_id)]}

        # Stopping (Closed): a reference boost is not worth delaying shutdown for.
        with contextlib.suppress(Closed):
            self.services.writer.submit(
                MemoryJob(project, "reinforce_referenced", {"session_id": session_id}, apply=apply)
            )


def _detect_signals(call: Call) -> None:
    """``detect_signals``: the prompt is read (``ops.read_signals``: what the memory injected
    and what the person shows left out, then the detector) on an analysis thread, and only the
    saves it found run in the writer's transaction (``ops.saved_signals``): the writer never
    waits for a prompt's analysis (issue 36). Same reply, same errors as the direct path."""
    assert call.project is not None
    args = dict(call.args)
    job = MemoryJob(call.project, "detect_signals", args, call.request.pid)
    job.reply_to = call.reply_to()

    def prepare() -> None:
        try:
            job.apply = saved_signals(read_signals(args))
        except OpError as exc:
            job.apply = _fails(exc)

    try:
        call.services.writer.submit_prepared(job, prepare)
    except Closed as exc:
        raise OpError(SHUTTING_DOWN, str(exc)) from exc


def _fails(exc: OpError) -> Callable[[Memory], dict[str, Any]]:
    """A transaction step that fails its request with ``exc`` (and changes nothing)."""

    def step(memory: Memory) -> dict[str, Any]:
        raise exc

    return step


# The memory ops whose daemon handler does part of the work off the writer thread.
PREPARED_OPS: dict[str, Callable[[Call], None]] = {"detect_signals": _detect_signals}


def _memory_spec(spec: OpSpec) -> DaemonOpSpec:
    if spec.name in PREPARED_OPS:
        return DaemonOpSpec(spec.name, PREPARED_OPS[spec.name], spec.args, True)
    if spec.name in READ_OPS:

        def handler(call: Call) -> dict[str, Any] | None:
            assert call.project is not None
            backend = CacheBackend(call.services)
            return dispatch_memory_op(backend, spec.name, call.project, call.args)
    else:

        def handler(call: Call) -> dict[str, Any] | None:
            assert call.project is not None
            call.queue(MemoryJob(call.project, spec.name, call.args, call.request.pid))
            return None

    return DaemonOpSpec(spec.name, handler, spec.args, True)


def build_registry() -> dict[str, DaemonOpSpec]:
    registry = {name: _memory_spec(spec) for name, spec in MEMORY_OPS.items()}
    overlap = registry.keys() & DAEMON_OPS.keys()
    if overlap:
        raise RuntimeError(f"ops registered twice: {sorted(overlap)}")
    registry.update(DAEMON_OPS)
    if registry.keys() != OPS.keys():
        raise RuntimeError(
            f"op table and handlers disagree: {sorted(registry.keys() ^ OPS.keys())}"
        )
    return registry


# -- daemon ops ---------------------------------------------------------------------------------
@daemon_op("hello", "versions")
def op_hello(call: Call) -> dict[str, Any]:
    wanted = call.args.get("versions")
    if wanted is not None and (
        not isinstance(wanted, list) or not all(isinstance(v, int) for v in wanted)
    ):
        raise OpError(BAD_REQUEST, "'versions' must be a list of integers")
    return {"versions": list(SUPPORTED_VERSIONS), "version": package_version(), "pid": os.getpid()}


@daemon_op("ping")
def op_ping(call: Call) -> dict[str, Any]:
    return {"pong": True, "time": time.time()}


def _project_arg(call: Call) -> Path:
    raw = call.args.get("path")
    if not isinstance(raw, str) or not raw:
        raise OpError(BAD_REQUEST, "'path' must be a non-empty string")
    return resolve_project(raw)


@daemon_op("register", "path")
def op_register(call: Call) -> dict[str, Any] | None:
    project = _project_arg(call)
    if not project.exists():
        raise OpError(BAD_REQUEST, f"cannot register {project}: no such directory")
    if not project.is_dir():
        raise OpError(CONFLICT, f"cannot register {project}: it is not a directory")
    svc = call.services

    def register() -> dict[str, Any]:
        added = svc.registry.add(project)
        if added:
            notify_serving(len(svc.registry.projects()))
        if added or svc.cache.info(project) is None:
            svc.writer.projects.attach(project)
            svc.watcher.watch(project)
        return {
            "path": str(project),
            "added": added,
            "memory_dir": str(layout.memory_dir(project)),
        }

    call.queue(TaskJob("register", register))
    return None


@daemon_op("unregister", "path", project_arg="path")
def op_unregister(call: Call) -> dict[str, Any] | None:
    project = call.project
    assert project is not None
    svc = call.services

    def unregister() -> dict[str, Any]:
        removed = svc.registry.remove(project)
        if removed:
            notify_serving(len(svc.registry.projects()))
        svc.watcher.unwatch(project)
        svc.writer.projects.detach(project)
        return {"path": str(project), "removed": removed}

    call.queue(TaskJob("unregister", unregister))
    return None


@daemon_op("projects")
def op_projects(call: Call) -> dict[str, Any]:
    return project_listing(call.services.registry.projects())


@daemon_op("log", "limit")
def op_log(call: Call) -> dict[str, Any]:
    assert call.project is not None
    limit = opt_int(call.args, "limit", LOG_LIMIT_DEFAULT)
    journal = call.services.journal
    return log_reply(journal.directory, call.project, limit, journal.keep)


@daemon_op("end_session", "session_id", "transcript_path")
def op_end_session(call: Call) -> dict[str, Any]:
    """A session ended: acknowledged at once (the session-end hook does not wait), then on the
    writer its transcript is distilled into its note (``ops.session_note``) and the
    ``save_session_note`` and ``maintenance`` ops run, each its own transaction: what the
    hook's direct path does. Every failure after the acknowledgement is logged."""
    project = call.project
    assert project is not None
    session_id = opt_str(call.args, "session_id")
    transcript = opt_str(call.args, "transcript_path")
    if transcript is not None and not os.path.isabs(transcript):
        raise OpError(BAD_REQUEST, "'transcript_path' must be an absolute path")
    writer = call.services.writer
    notes: list[str] = []

    def distil() -> None:  # on an analysis thread: the writer never waits for a digest
        note = _session_note(project, session_id, transcript)
        if note is not None:
            notes.append(note)

    def end() -> dict[str, Any]:
        _end_session(writer, project, session_id, notes[0] if notes else None, call.request.pid)
        return {}

    try:  # no reply_to: the reply is this one
        writer.submit_prepared(TaskJob("end_session", end), distil)
    except Closed as exc:
        raise OpError(SHUTTING_DOWN, str(exc)) from exc
    return {"queued": True, "session_id": session_id}


def _session_note(project: Path, session_id: str | None, transcript: str | None) -> str | None:
    """The session's note from its transcript (``ops.session_note``, read for at most
    ``TRANSCRIPT_BUDGET``), or None; an unreadable transcript is logged."""
    if session_id is None or transcript is None:
        return None
    until = time.monotonic() + TRANSCRIPT_BUDGET
    try:
        return session_note(project, transcript, lambda: time.monotonic() > until)
    except OSError as exc:
        log.warning(
            "end_session %s: no session note: cannot read the transcript (%s)", project, exc
        )
        return None


def _end_session(
    writer: Writer,
    project: Path,
    session_id: str | None,
    note: str | None,
    pid: int | None,
) -> None:
    """On the writer: the note saved, then the maintenance, each its own transaction."""
    jobs = [MemoryJob(project, "maintenance", {}, pid)]
    if note is not None:
        args = {"note": note, "session_id": session_id}
        jobs.insert(0, MemoryJob(project, "save_session_note", args, pid))
    for job in jobs:
        outcome = writer.run_now(job)
        if not outcome.ok:
            log.error(
                "end_session %s: %s failed: %s: %s", project, job.op, outcome.code, outcome.message
            )


@daemon_op("shutdown", "reason")
def op_shutdown(call: Call) -> dict[str, Any]:
    reason = opt_str(call.args, "reason") or "shutdown requested by a client"
    call.services.request_shutdown(reason)
    return {"stopping": True, "pid": os.getpid()}


@daemon_op("status")
def op_status(call: Call) -> dict[str, Any]:
    svc = call.services
    proc = svc.process
    with proc.oneshot():
        process = {
            "pid": proc.pid,
            "uptime_s": round(time.time() - svc.started_at, 3),
            "rss_bytes": proc.memory_info().rss,
            "cpu_percent": proc.cpu_percent(None),
            "threads": proc.num_threads(),
            "open_files": _open_files(proc),
        }
    projects = {str(p): _project_status(svc, p) for p in sorted(svc.registry.projects())}
    return {
        "version": package_version(),
        "versions": list(SUPPORTED_VERSIONS),
        "endpoint": svc.paths.endpoint,
        "process": process,
        "requests": svc.metrics.snapshot(),
        "write_queue_depth": svc.writer.queue.depth(),
        "writer": dict(svc.writer.stats),
        "maintenance": svc.scheduler.describe(),
        "projects": projects,
        "stopping": svc.stopping(),
        "started": {
            "at": _iso(svc.started_at),
            "by": ORIGIN.get("how", "unknown"),
            "detail": ORIGIN.get("detail", ""),
        },
        "log": {**DESTINATION, "recent_errors": list(RECENT.lines)},
    }


def _iso(epoch: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="seconds")


def _open_files(proc: psutil.Process) -> int:
    try:
        return len(proc.open_files())
    except psutil.Error:
        return -1


def _project_status(svc: Services, project: Path) -> dict[str, Any]:
    info = svc.cache.info(project)
    view = info.view if info is not None else None
    summary = view.summary() if view is not None else {}
    return {
        "memory_dir_exists": layout.memory_dir(project).is_dir(),
        "missing": missing(project),  # maintenance skips it; nothing re-creates it
        "refused": info.refused if info is not None else None,  # a link, another user's …
        "entries": {k: summary.get(k) for k in ("semantic", "episodic", "archived", "flagged")},
        "problems": summary.get("problems", {}),
        "read_error": info.read_error if info is not None else "not loaded",
        "last_external_edit": info.last_external_edit if info is not None else None,
        "external_edits": info.external_edits if info is not None else 0,
        "maintenance": {
            "last": svc.scheduler.last_run(project),
            "next": svc.scheduler.next_run(),
        },
        "watcher": svc.watcher.mode(project),
        "tool_watcher": svc.watcher.tool_mode(project),  # its agent tools' memory folders
    }


def resolve_scope(spec: DaemonOpSpec, request: Request, registered: frozenset[Path]) -> Path | None:
    """The registered project a scoped op works on (``not_registered`` otherwise)."""
    if not spec.scoped:
        return None
    raw = request.project
    if raw is None and spec.project_arg is not None:
        value = request.args.get(spec.project_arg)
        raw = value if isinstance(value, str) and value else None
    if raw is None:
        raise OpError(BAD_REQUEST, f"op {request.op!r} needs a 'project'")
    project = resolve_project(raw)
    if project not in registered:
        raise OpError(
            NOT_REGISTERED,
            f"project {project} is not registered with this daemon; register it first",
        )
    return project
