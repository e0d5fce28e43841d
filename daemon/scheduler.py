"""End-of-day maintenance on a cron schedule (APScheduler 3.x ``BackgroundScheduler``).

One job, ``maintenance``, runs ``memory_maintenance()`` for every registered project through
the writer (so it queues behind, and groups with, client writes) and records each project's
outcome — ``ok`` or ``failed`` with the reason, never ``ok`` for a run that raised — in
``maintenance.json`` in the state dir. ``coalesce`` and a six-hour misfire grace mean a laptop
asleep at 23:30 runs it once when it wakes; a run missed beyond that, or a job that raises, is
recorded as failed from the scheduler's own events.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MISSED, JobExecutionEvent  # type: ignore[import-untyped]
from apscheduler.schedulers.background import BackgroundScheduler  # type: ignore[import-untyped]
from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]

from ..common.statefiles import missing
from .config import Config, ConfigError
from .journal import now_iso
from .registry import atomic_write_json
from .writer import JobOutcome

log = logging.getLogger("maestrod")

JOB_ID = "maintenance"
MISFIRE_GRACE_SECONDS = 6 * 3600
RUN_TIMEOUT_SECONDS = 600.0
EVENTS_KEPT = 20

Submit = Callable[[Path], Future[JobOutcome]]


def build_trigger(config: Config) -> CronTrigger:
    timezone = ZoneInfo(config.timezone) if config.timezone else None
    try:
        return CronTrigger(**config.cron_spec.fields(), timezone=timezone)
    except ValueError as exc:
        raise ConfigError(f"[maintenance] cron {config.cron!r}: {exc}") from exc


class MaintenanceScheduler:
    def __init__(
        self,
        config: Config,
        history_path: Path,
        submit: Submit,
        projects: Callable[[], Iterable[Path]],
    ) -> None:
        self._submit = submit
        self._projects = projects
        self._history_path = history_path
        self._lock = threading.Lock()
        self._history: dict[str, Any] = self._load_history()
        self._config = config
        self._scheduler = BackgroundScheduler(
            timezone=ZoneInfo(config.timezone) if config.timezone else None,
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": MISFIRE_GRACE_SECONDS,
            },
        )
        self._scheduler.add_listener(self._on_event, EVENT_JOB_ERROR | EVENT_JOB_MISSED)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._scheduler.add_job(
            self._run,
            build_trigger(self._config),
            id=JOB_ID,
            name="end-of-day maintenance",
            replace_existing=True,
        )
        self._scheduler.start()
        log.info(
            "maintenance scheduled %r (%s); next run %s",
            self._config.cron,
            self._config.timezone or "local time",
            self.next_run(),
        )

    def reschedule(self, config: Config) -> None:
        trigger = build_trigger(config)
        self._config = config
        self._scheduler.reschedule_job(JOB_ID, trigger=trigger)
        log.info(
            "maintenance rescheduled %r (%s); next run %s",
            config.cron,
            config.timezone or "local time",
            self.next_run(),
        )

    def stop(self) -> None:
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)

    # -- queries -----------------------------------------------------------------------------
    def next_run(self) -> str | None:
        job = self._scheduler.get_job(JOB_ID)
        when = getattr(job, "next_run_time", None) if job is not None else None
        return when.isoformat() if isinstance(when, dt.datetime) else None

    def describe(self) -> dict[str, Any]:
        return {
            "cron": self._config.cron,
            "timezone": self._config.timezone or "local",
            "next_run": self.next_run(),
            "events": list(self._history["events"]),
        }

    def last_run(self, project: Path) -> dict[str, Any] | None:
        entry = self._history["projects"].get(str(project))
        return dict(entry) if isinstance(entry, dict) else None

    # -- the job -----------------------------------------------------------------------------
    def _run(self) -> None:
        projects = sorted(self._projects())
        log.info("end-of-day maintenance of %d project(s)", len(projects))
        for project in projects:
            self._record(project, self._maintain(project))

    def _maintain(self, project: Path) -> dict[str, Any]:
        gone = missing(project)
        if gone is not None:  # never re-created: skipped and reported
            log.warning("maintenance of %s skipped: %s", project, gone)
            return {"time": now_iso(), "outcome": "missing", "message": gone, "counts": {}}
        try:
            outcome = self._submit(project).result(timeout=RUN_TIMEOUT_SECONDS)
        except FutureTimeout:
            return self._failed(f"no result within {RUN_TIMEOUT_SECONDS:.0f} s")
        except Exception as exc:  # Closed (stopping) or anything the writer raised
            return self._failed(f"not run: {exc}")
        if not outcome.ok:
            return self._failed(f"{outcome.code}: {outcome.message}")
        result = outcome.result or {}
        counts = result.get("counts", {})
        applied = len(result.get("applied", []))
        message = f"{applied} action(s) applied" if applied else "nothing flagged for maintenance"
        return {"time": now_iso(), "outcome": "ok", "message": message, "counts": counts}

    @staticmethod
    def _failed(message: str) -> dict[str, Any]:
        return {"time": now_iso(), "outcome": "failed", "message": message, "counts": {}}

    def _on_event(self, event: JobExecutionEvent) -> None:
        scheduled = event.scheduled_run_time
        when = scheduled.isoformat() if isinstance(scheduled, dt.datetime) else str(scheduled)
        if event.code == EVENT_JOB_MISSED:
            message = f"run scheduled for {when} was missed (beyond the misfire grace time)"
        else:
            message = f"run scheduled for {when} raised {event.exception!r}"
        log.error("maintenance job: %s", message)
        with self._lock:
            events = self._history["events"]
            events.append({"time": now_iso(), "outcome": "failed", "message": message})
            del events[:-EVENTS_KEPT]
        for project in self._projects():
            self._record(project, self._failed(message))

    # -- history -----------------------------------------------------------------------------
    def _load_history(self) -> dict[str, Any]:
        import json

        try:
            data = json.loads(self._history_path.read_text())
        except FileNotFoundError:
            data = {}
        except (OSError, ValueError) as exc:
            log.error(
                "maintenance history %s is unreadable (%s); starting afresh",
                self._history_path,
                exc,
            )
            data = {}
        projects = data.get("projects") if isinstance(data, dict) else None
        events = data.get("events") if isinstance(data, dict) else None
        return {
            "projects": projects if isinstance(projects, dict) else {},
            "events": events if isinstance(events, list) else [],
        }

    def _record(self, project: Path, entry: dict[str, Any]) -> None:
        level = logging.INFO if entry["outcome"] == "ok" else logging.ERROR
        log.log(level, "maintenance of %s: %s (%s)", project, entry["outcome"], entry["message"])
        with self._lock:
            self._history["projects"][str(project)] = entry
            try:
                atomic_write_json(self._history_path, {"v": 1, **self._history})
            except OSError as exc:
                log.error("cannot write %s: %s", self._history_path, exc)
