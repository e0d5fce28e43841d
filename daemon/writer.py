"""The single writer thread: every mutation of every project goes through it, group-committed.

The main thread queues jobs; the writer takes the next one and, for a memory op, also every
other memory op already queued for the same project, and applies them all in one core
transaction::

    MemoryStore.run: project lock -> recover -> parsed Memory (``load``: the kept one if the
      files are unchanged on disk) -> each request's handler (ops.dispatch_memory_op)
      -> one commit (retried on ChangedUnderneath)
    then: publish memory.view() to the read cache -> journal -> every reply

The transaction is the core's; this module only batches, journals and replies.

A reply goes out (through an inproc PUSH socket to the main thread, which alone owns the
ROUTER) only after the commit that made its write durable. An ``OpError`` fails only its own
request: the core validates before it mutates. Any other exception fails its request with
``internal``, the batch's Memory is thrown away and the remaining requests are re-applied to
a fresh parse. A failed commit fails the whole batch; the files on disk are the previous ones.

The writer also runs the watcher's checks (so a check never races one of our own commits) and
the control tasks (register, unregister, config reload) that touch daemon state.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from ..common import layout
from ..common.ops import Args, core_errors, dispatch_memory_op, forget_ids
from ..common.protocol import INTERNAL, NOT_REGISTERED, OpError, error_reply, ok_reply
from ..core import fsio
from ..core.markdown import EntryBlock
from ..core.memory import Memory, MemoryView, Settings
from ..core.model import MemoryWriteError, TooLarge, UnsafeMemory
from ..core.store import READ_NAMES, MemoryStore, Signature, today
from . import journal as jr
from .cache import ReadCache

log = logging.getLogger("maestrod")

MAX_BATCH = 512
ANALYSIS_THREADS = 2  # readying jobs off the writer: a long digest does not hold up a prompt
DRAINED = b"drained"


class _Crashed(Exception):
    """Internal: a request raised an unexpected exception inside the transaction."""

    def __init__(self, job: MemoryJob) -> None:
        super().__init__(job.op)
        self.job = job


class Closed(Exception):
    """The write queue no longer accepts jobs (the daemon is stopping)."""


@dataclass(frozen=True)
class JobOutcome:
    ok: bool
    result: dict[str, Any] | None = None
    code: str = ""
    message: str = ""

    @classmethod
    def success(cls, result: dict[str, Any]) -> JobOutcome:
        return cls(True, result=result)

    @classmethod
    def failure(cls, code: str, message: str) -> JobOutcome:
        return cls(False, code=code, message=message)

    def encode(self, req_id: str) -> bytes:
        if self.ok:
            return ok_reply(req_id, self.result or {})
        return error_reply(req_id, self.code, self.message)


@dataclass(frozen=True)
class ReplyTo:
    """Where a client's reply goes: the ROUTER route, the request id, for metrics the op and
    the time the request arrived."""

    route: tuple[bytes, ...]
    req_id: str
    op: str
    started: float


@dataclass(eq=False)
class _Job:
    reply_to: ReplyTo | None = field(default=None, kw_only=True)
    future: Future[JobOutcome] | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class MemoryJob(_Job):
    """A memory op (or an internal mutation ``apply``) for one project."""

    project: Path
    op: str
    args: Args = field(default_factory=dict)
    pid: int | None = None
    apply: Callable[[Memory], dict[str, Any]] | None = None


@dataclass(eq=False)
class TaskJob(_Job):
    """Control work run on the writer thread (register, unregister, reload)."""

    name: str
    fn: Callable[[], dict[str, Any]]


@dataclass(eq=False)
class CheckJob(_Job):
    """Look at a project's files for a change made by someone else (``thorough``: compare
    their content even when their stat is the one we know: one was written in place)."""

    project: Path
    thorough: bool = False


Job = MemoryJob | TaskJob | CheckJob


class WriteQueue:
    """FIFO of jobs that lets the writer take all queued memory ops of one project at once."""

    def __init__(self) -> None:
        self._items: deque[Job] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._abandoned = False
        self._preparing = 0  # jobs being prepared off the writer thread (``reserve``)
        self._checks: dict[Path, CheckJob] = {}

    def put(self, job: Job) -> None:
        with self._cond:
            if self._closed:
                raise Closed("the daemon is shutting down")
            if isinstance(job, CheckJob):
                pending = self._checks.get(job.project)
                if pending is not None:  # one pending check per project is enough
                    pending.thorough = pending.thorough or job.thorough
                    return
                self._checks[job.project] = job
            self._items.append(job)
            self._cond.notify()

    def reserve(self) -> None:
        """A place for a job still being prepared (``put_prepared`` fills it): the queue
        does not end while one is held, so a job accepted before a shutdown is still run."""
        with self._cond:
            if self._closed:
                raise Closed("the daemon is shutting down")
            self._preparing += 1

    def put_prepared(self, job: Job) -> None:
        """Queue the job of a ``reserve`` (accepted even while closing; not once abandoned)."""
        with self._cond:
            if self._abandoned:  # (its count went with the abandon)
                raise Closed("the daemon stopped before this request was prepared")
            self._preparing -= 1
            self._items.append(job)
            self._cond.notify()

    def take(self) -> Job | None:
        """The next job; None once closed, empty and with nothing being prepared."""
        with self._cond:
            while not self._items and (not self._closed or self._preparing):
                self._cond.wait()
            if not self._items:
                return None
            job = self._items.popleft()
            if isinstance(job, CheckJob):
                self._checks.pop(job.project, None)
            return job

    def take_same_project(self, project: Path, limit: int) -> list[MemoryJob]:
        with self._cond:
            taken: list[MemoryJob] = []
            kept: deque[Job] = deque()
            for job in self._items:
                if len(taken) < limit and isinstance(job, MemoryJob) and job.project == project:
                    taken.append(job)
                else:
                    kept.append(job)
            self._items = kept
            return taken

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def abandon(self) -> list[Job]:
        """Close and take every job not yet started (the shutdown budget ran out): the
        caller answers them; the writer will not run them."""
        with self._cond:
            self._closed = self._abandoned = True
            self._preparing = 0
            left = list(self._items)
            self._items.clear()
            self._checks.clear()
            self._cond.notify_all()
            return left

    def depth(self) -> int:
        return len(self._items)


NO_FILES: Signature = (None,) * len(READ_NAMES)  # the signature of a missing memory folder


def content_hash(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(fsio.encode(text)).hexdigest()


@dataclass
class _Tracked:
    """What the writer last read from, or wrote to, one project's files."""

    memory: Memory | None = None  # parsed from exactly what is on disk
    signature: Signature | None = None
    hashes: dict[str, str | None] = field(default_factory=dict)
    ledger: jr.ScoreLedger | None = None  # the journal's scores, for ``memory`` only

    def ledger_for(self, memory: Memory) -> jr.ScoreLedger:
        """The journal's ledger of ``memory`` (a new one for a Memory parsed since)."""
        if self.ledger is None or self.ledger.memory is not memory:
            self.ledger = jr.ScoreLedger(memory)
        return self.ledger


def _change_marker(memory: Memory) -> tuple[object, ...]:
    """Changes whenever a request changes anything the commit would write."""
    return (
        memory.generation,
        len(memory.state.sessions),
        memory.state.changed,
        *(doc.changed for doc in memory.docs.values()),
    )


class _TransactionBackend:
    """``ops.Backend`` over the Memory of the transaction in progress."""

    def __init__(self, project: Path, memory: Memory, imports: dict[str, Any]) -> None:
        self.project = project
        self.memory = memory
        self.imports = imports

    def _same(self, project: Path) -> None:
        if project != self.project:
            raise OpError(INTERNAL, f"handler for {self.project} touched {project}")

    def read(self, project: Path) -> MemoryView:
        self._same(project)
        return self.memory.view()

    def write(self, project: Path, op: str, fn: Callable[[Memory], Any]) -> Any:
        self._same(project)
        return fn(self.memory)

    def reinforce_later(self, project: Path, entry_ids: list[str], session_id: str) -> None:
        self._same(project)
        self.memory.reinforce_referenced(entry_ids, session_id)

    def import_config(self) -> dict[str, Any]:
        return dict(self.imports)  # the daemon's [import]: read at start or at the last reload


class ProjectFiles:
    """What the writer last read from, or wrote to, each project's files (writer thread only):
    the parsed Memory kept while the files are unchanged, their signature and hashes, and an
    edit by someone else seen, journalled and published."""

    def __init__(self, cache: ReadCache, journal: jr.Journal, settings: Settings) -> None:
        self.cache = cache
        self.journal = journal
        self.settings = settings
        self._tracked: dict[Path, _Tracked] = {}

    def get(self, project: Path) -> _Tracked | None:
        return self._tracked.get(project)

    def attach(self, project: Path) -> None:
        """Start tracking ``project``: parse its files and publish the first view."""
        tracked = self._tracked.setdefault(project, _Tracked())
        try:
            # (reliability) A commit a crash cut short is completed before the first read, so
            # the cache never serves half of it (never called holding the project lock).
            memory = self.read(project, tracked, reuse=False, recover=True)
        except (UnsafeMemory, TooLarge) as exc:  # refused: a link, a foreign owner, a huge file
            log.error("%s: %s", project, exc)
            self.cache.read_failed(project, str(exc), refused=exc.code)
            return
        except Exception as exc:
            log.error("cannot read the memory of %s: %s", project, exc)
            self.cache.read_failed(project, f"cannot read the memory files: {exc}")
            return
        self.cache.publish(project, memory.view())

    def detach(self, project: Path) -> None:
        self._tracked.pop(project, None)
        self.cache.drop(project)

    def set_settings(self, settings: Settings) -> None:
        self.settings = settings
        for project, tracked in self._tracked.items():
            if tracked.memory is not None:
                tracked.memory.settings = settings
                self.cache.publish(project, tracked.memory.view())

    def check(self, project: Path, *, thorough: bool = False) -> None:
        """The watcher's question: did someone else change the files? (No lock: a commit
        replaces files atomically, so what we read is whole; a multi-file commit caught half
        way is followed by more events, and a later check sees the rest.) ``thorough``: read
        and hash them even when their stat is the one we know."""
        tracked = self._tracked.get(project)
        if tracked is None:
            return
        try:
            self.read(project, tracked, reuse=True, verify=thorough)
        except Exception as exc:
            refused = exc.code if isinstance(exc, UnsafeMemory | TooLarge) else None
            reason = str(exc) if refused else f"cannot read the memory files: {exc}"
            info = self.cache.info(project)
            if info is None or info.read_error != reason:
                log.error("%s: %s", project, reason)
            tracked.memory = None
            self.cache.read_failed(project, reason, refused)

    def read(
        self,
        project: Path,
        tracked: _Tracked,
        *,
        reuse: bool,
        recover: bool = False,
        verify: bool = False,
    ) -> Memory:
        """``load`` outside a transaction: the memory folder opened for this one read (never
        through a link, refused when not trusted: ``fsio.open_folder``); a missing folder is
        an empty memory. ``recover``: first complete a commit a crash cut short."""
        memory_dir = layout.memory_dir(project)
        try:
            with fsio.open_folder(memory_dir, trusted=self.settings.trusted) as folder:
                if recover:
                    fsio.recover_if_interrupted(folder)
                return self.load(project, tracked, folder, reuse=reuse, verify=verify)
        except FileNotFoundError:
            return self.load(project, tracked, None, reuse=reuse)

    def load(
        self,
        project: Path,
        tracked: _Tracked,
        folder: fsio.Folder | None,
        *,
        reuse: bool,
        basis: Signature | None = None,
        verify: bool = False,
    ) -> Memory:
        """The parsed Memory of ``project`` from ``folder`` (None: there is none yet): the
        tracked one if the files have not changed since we last read or wrote them, else a
        fresh parse (an external edit if the content differs from what we knew). ``basis``:
        the signature already taken (in a transaction). ``verify``: "not changed" needs the
        same content hashes too, not only the same stat (a file written in place)."""
        if basis is not None:
            signature = basis
        else:  # taken before reading: a change after it shows later
            signature = NO_FILES if folder is None else fsio.signature(folder, READ_NAMES)
        same = reuse and tracked.memory is not None and signature == tracked.signature
        texts = None
        if same and verify and folder is not None:
            texts = fsio.read_files(folder, READ_NAMES)
            same = all(content_hash(texts.get(n)) == tracked.hashes.get(n) for n in READ_NAMES)
        if same and tracked.memory is not None:
            tracked.memory.today = today()
            tracked.memory.settings = self.settings
            return tracked.memory
        if texts is None:
            texts = {} if folder is None else fsio.read_files(folder, READ_NAMES)
        hashes = {name: content_hash(texts.get(name)) for name in READ_NAMES}
        memory = Memory.load(texts, today=today(), settings=self.settings)
        known = tracked.signature is not None
        changed = [name for name in READ_NAMES if hashes[name] != tracked.hashes.get(name)]
        tracked.memory, tracked.signature, tracked.hashes = memory, signature, hashes
        info = self.cache.info(project)
        if known and changed:
            self._external_edit(project, memory, changed, info.view if info else None)
        elif info is not None and info.read_error is not None:
            self.cache.publish(project, memory.view())
        return memory

    def _external_edit(
        self, project: Path, memory: Memory, files: list[str], previous: MemoryView | None
    ) -> None:
        view = memory.view()
        changes = jr.diff_values(jr.view_values(previous), jr.view_values(view))
        when = jr.now_iso()
        log.info(
            "external edit of %s in %s (%d entries changed)",
            ", ".join(files),
            project,
            len(changes),
        )
        self.journal.append(
            project,
            [jr.record("external_edit", session_id=None, pid=None, changes=changes, files=files)],
        )
        self.cache.publish(project, view)
        self.cache.external_edit(project, when)


class Writer:
    def __init__(
        self,
        cache: ReadCache,
        journal: jr.Journal,
        settings: Settings,
        context: zmq.Context[Any],
        reply_endpoint: str,
        imports: dict[str, Any] | None = None,
    ) -> None:
        self.cache = cache
        # config.toml's [import] the daemon runs with (replaced whole at a reload).
        self.imports: dict[str, Any] = {} if imports is None else dict(imports)
        self.journal = journal
        self.projects = ProjectFiles(cache, journal, settings)  # project state: writer thread
        self._forgotten: dict[Path, list[str]] = {}  # texts to scrub from the journal
        self.queue = WriteQueue()
        self._context = context
        self._reply_endpoint = reply_endpoint
        self._push: zmq.Socket[Any] | None = None
        # Counters for status (written by the writer thread only).
        names = ("transactions", "requests", "commits", "failed_commits", "checks")
        self.stats = dict.fromkeys(names, 0)
        # Told the (inode, size, mtime_ns) of each file a commit renamed into place (the
        # watcher: the inotify event of that rename is ours, no check for it).
        self.on_committed: Callable[[Path, dict[str, fsio.FileSignature]], None] | None = None
        self._thread = threading.Thread(target=self._run, name="writer", daemon=True)
        # Where ``submit_prepared`` jobs are readied: its threads start on the first one.
        self._analysis = ThreadPoolExecutor(ANALYSIS_THREADS, thread_name_prefix="analysis")

    # -- the thread ------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Accept no more jobs; the thread finishes the queued ones, then says DRAINED."""
        self.queue.close()

    def join(self, timeout: float) -> bool:
        if self._thread.ident is None:
            return True  # never started
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def submit(self, job: Job) -> None:
        self.queue.put(job)

    def submit_future(self, job: Job) -> Future[JobOutcome]:
        """Queue ``job``; the future resolves to its outcome (or fails with ``Closed``)."""
        future: Future[JobOutcome] = Future()
        job.future = future
        self.queue.put(job)
        return future

    def submit_prepared(self, job: Job, prepare: Callable[[], None]) -> None:
        """Queue ``job`` once ``prepare`` has readied it on an analysis thread, never on the
        writer (a prompt's detection, a transcript's digest: the work that reads no memory;
        issue 36), so the writer only classifies and commits. ``prepare`` leaves what it
        cannot do for the job to report; should it raise anyway, that is logged and the job
        still runs. Accepted before a shutdown, the job is run by the drain (``reserve``)."""
        self.queue.reserve()
        self._analysis.submit(self._prepared, job, prepare)

    def _prepared(self, job: Job, prepare: Callable[[], None]) -> None:
        try:
            prepare()
        except Exception:
            log.exception("preparing %s failed", _job_name(job))
        try:
            self.queue.put_prepared(job)
        except Closed:  # the drain was abandoned (a stuck writer): nothing more can be done
            log.error("%s not run: the daemon stopped before it was prepared", _job_name(job))

    def run_now(self, job: MemoryJob) -> JobOutcome:
        """Run ``job`` at once, in its own transaction, from a ``TaskJob`` (writer thread
        only): for work that follows from what a task found (``end_session``'s note and
        maintenance), with nothing to queue and so nothing a shutdown could drop."""
        future: Future[JobOutcome] = Future()
        job.future = future
        self._apply_batch(job.project, [job])
        if not future.done():  # every path of _apply_batch finishes its jobs; just in case
            return JobOutcome.failure(INTERNAL, f"{job.op} was not run")
        return future.result()

    def _run(self) -> None:
        push = self._context.socket(zmq.PUSH)
        push.sndhwm = 0
        push.linger = 1000
        push.connect(self._reply_endpoint)
        self._push = push
        try:
            while (job := self.queue.take()) is not None:
                try:
                    self._handle(job)
                except Exception:
                    log.exception("writer: unexpected error in %s", type(job).__name__)
                    self._finish(
                        job,
                        JobOutcome.failure(
                            INTERNAL, "internal error in the writer; see the daemon log"
                        ),
                    )
        finally:
            push.send(DRAINED)
            push.close()
            self._push = None

    def _handle(self, job: Job) -> None:
        if isinstance(job, MemoryJob):
            batch = [job, *self.queue.take_same_project(job.project, MAX_BATCH - 1)]
            self._apply_batch(job.project, batch)
        elif isinstance(job, TaskJob):
            try:
                outcome = JobOutcome.success(job.fn())
            except OpError as exc:
                outcome = JobOutcome.failure(exc.code, exc.message)
            self._finish(job, outcome)
        else:
            self.stats["checks"] += 1
            self.projects.check(job.project, thorough=job.thorough)
            self._finish(job, JobOutcome.success({}))

    def _finish(self, job: Job, outcome: JobOutcome) -> None:
        if job.reply_to is not None and self._push is not None:
            meta = json.dumps(
                {"op": job.reply_to.op, "started": job.reply_to.started, "ok": outcome.ok}
            ).encode()
            self._push.send_multipart(
                [meta, *job.reply_to.route, outcome.encode(job.reply_to.req_id)]
            )
        if job.future is not None and not job.future.done():
            job.future.set_result(outcome)

    # -- group commit ----------------------------------------------------------------------
    def _apply_batch(self, project: Path, batch: list[MemoryJob]) -> None:
        tracked = self.projects.get(project)
        if tracked is None:
            for job in batch:
                self._finish(
                    job, JobOutcome.failure(NOT_REGISTERED, f"project {project} is not registered")
                )
            return
        store = MemoryStore(project, settings=self.projects.settings, create_project=False)
        pending = list(batch)
        started = time.monotonic()

        def apply(
            memory: Memory,
        ) -> tuple[list[tuple[MemoryJob, JobOutcome]], list[dict[str, Any]]]:
            results, records, crashed = self._run_requests(pending, memory, tracked)
            if crashed is not None:
                raise _Crashed(crashed)  # out of the transaction: nothing is committed
            return results, records

        def changed() -> None:
            log.info("%s changed while a commit was prepared; applying the batch again", project)
            tracked.memory = None

        try:
            while True:
                try:
                    done = store.run(
                        apply,
                        load=lambda folder, basis: self.projects.load(
                            project, tracked, folder, reuse=True, basis=basis
                        ),
                        on_changed=changed,
                    )
                    break
                except _Crashed as crash:
                    # The Memory may be half-changed: drop it, re-parse, re-apply the rest.
                    self._finish(
                        crash.job,
                        JobOutcome.failure(
                            INTERNAL, f"internal error in {crash.job.op}; see the daemon log"
                        ),
                    )
                    pending.remove(crash.job)
                    tracked.memory = None
                    if not pending:
                        return
        except Exception as exc:
            self._batch_failed(project, tracked, pending, exc)
            return
        results, records = done.result
        written = done.written
        self.stats["transactions"] += 1
        self.stats["requests"] += len(pending)
        if written:
            self.stats["commits"] += 1
            self._committed(tracked, written, done.memory)
            if self.on_committed is not None:
                self.on_committed(project, _signatures_of(written, done.signature))
        tracked.signature = done.signature
        self.cache.publish(project, done.memory.view())
        self.journal.append(project, records)
        forgotten = self._forgotten.pop(project, None)
        if forgotten:  # forget: no copy of the text in the journal either
            self.journal.scrub(project, forgotten)
        for job, outcome in results:
            self._finish(job, outcome)
        if len(pending) > 1 or written:
            log.debug(
                "%s: committed %d request(s), %s in %.1f ms",
                project,
                len(pending),
                ", ".join(written) or "no files",
                (time.monotonic() - started) * 1000,
            )

    def _committed(self, tracked: _Tracked, written: dict[str, str], memory: Memory) -> None:
        """Track what we just wrote. The commit left ``memory`` equal to the files (its
        ``mark_clean`` renders every committed entry into its lines), so the next transaction
        starts from it: no disk read, no parse."""
        ours = {name: text for name, text in written.items() if name in READ_NAMES}
        tracked.hashes.update({name: content_hash(text) for name, text in ours.items()})
        tracked.memory = memory

    def _run_requests(
        self, jobs: list[MemoryJob], memory: Memory, tracked: _Tracked
    ) -> tuple[list[tuple[MemoryJob, JobOutcome]], list[dict[str, Any]], MemoryJob | None]:
        results: list[tuple[MemoryJob, JobOutcome]] = []
        records: list[dict[str, Any]] = []
        ledger = tracked.ledger_for(memory)
        for job in jobs:
            marker = _change_marker(memory)
            texts = _forget_texts(memory, job.args) if job.op == "forget" else []
            touched: list[EntryBlock] = []  # the blocks this request reaches (O(changes))
            memory.touched = touched
            try:
                result = self._run_one(job, memory)
            except OpError as exc:
                ledger.changes(touched)  # none: the core validates before it changes anything
                results.append((job, JobOutcome.failure(exc.code, exc.message)))
                continue
            except Exception:
                log.exception(
                    "internal error in %s for %s (args %s)", job.op, job.project, sorted(job.args)
                )
                return results, records, job  # this Memory (and its ledger) is thrown away
            finally:
                memory.touched = None
            results.append((job, JobOutcome.success(result)))
            if texts and not result.get("dry_run"):
                self._forgotten.setdefault(job.project, []).extend(texts)
            changes = ledger.changes(touched)
            if _change_marker(memory) != marker:
                session = job.args.get("session_id", result.get("session_id"))
                records.append(
                    jr.record(
                        job.op,
                        session_id=session if isinstance(session, str) else None,
                        pid=job.pid,
                        changes=changes,
                    )
                )
        return results, records, None

    def _run_one(self, job: MemoryJob, memory: Memory) -> dict[str, Any]:
        apply = job.apply
        if apply is not None:
            return core_errors(lambda: apply(memory))
        return dispatch_memory_op(
            _TransactionBackend(job.project, memory, self.imports), job.op, job.project, job.args
        )

    def _batch_failed(
        self, project: Path, tracked: _Tracked, pending: list[MemoryJob], exc: Exception
    ) -> None:
        self.stats["failed_commits"] += 1
        if isinstance(exc, UnsafeMemory | TooLarge):  # refused: a link, a file over the limit
            log.error("%s: %s", project, exc)
            for job in pending:
                self._finish(job, JobOutcome.failure(exc.code, str(exc)))
            tracked.memory, tracked.signature, tracked.hashes = None, None, {}
            self.cache.read_failed(project, str(exc), exc.code)
            return
        if isinstance(exc, MemoryWriteError):
            message = str(exc.strerror or exc)
            log.error("commit in %s failed: %s", project, message)
        elif isinstance(exc, OSError):
            message = f"cannot read or lock the memory files of {project}: {exc}"
            log.error("%s", message)
        else:
            message = "internal error while committing; see the daemon log"
            log.exception("transaction for %s failed", project)
        # (reliability) Never claim "intact" when fsio says the new content is in place.
        if (
            "intact" not in message
            and "in place" not in message
            and isinstance(exc, MemoryWriteError)
        ):
            message += "; the previous files are intact"
        for job in pending:
            self._finish(job, JobOutcome.failure(INTERNAL, message))
        # Forget what we thought was on disk and read it again, lock-free.
        tracked.memory, tracked.signature, tracked.hashes = None, None, {}
        with contextlib.suppress(Exception):
            self.projects.attach(project)


def _signatures_of(written: dict[str, str], signature: Signature) -> dict[str, fsio.FileSignature]:
    """The (inode, size, mtime_ns) a commit left each of the read files it wrote with."""
    out = {}
    for name, sig in zip(READ_NAMES, signature, strict=True):
        if name in written and sig is not None:
            out[name] = sig
    return out


def _job_name(job: Job) -> str:
    if isinstance(job, TaskJob):
        return job.name
    return f"{job.op if isinstance(job, MemoryJob) else 'check'} for {job.project}"


def _forget_texts(memory: Memory, args: Args) -> list[str]:
    """The texts a ``forget`` request is about to remove (to scrub them from the journal)."""
    ids = args.get("entry_ids")
    match = args.get("match")
    if isinstance(match, str) and match.strip():
        wanted = set(forget_ids(memory, None, match))
    elif isinstance(ids, list):
        wanted = {i for i in ids if isinstance(i, str)}
    else:
        return []
    return [b.text for doc in memory.docs.values() for b in doc.entries() if b.id in wanted]
