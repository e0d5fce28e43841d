"""What runs and where: ``status``, ``paths``."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ....common import layout
from .. import output as out
from .base import (
    EXIT_UNAVAILABLE,
    NOT_RUNNING_HINT,
    Context,
    Outcome,
    _dict,
    command,
)

if TYPE_CHECKING:
    from ....common.replies import StatusReply


# -- status, paths, doctor ---------------------------------------------------------------------
def _counts_text(counts: dict[str, Any]) -> str:
    shown = [f"{v} {k}" for k, v in counts.items() if isinstance(v, int) and v]
    return ", ".join(shown) or "empty"


def _maintenance_cell(last: dict[str, Any]) -> str:
    if not last:
        return "never"
    when = out.local_time(last.get("time"))
    outcome = str(last.get("outcome") or "?")
    if outcome != "ok" and last.get("message"):
        outcome += f" ({last['message']})"
    return f"{when} {outcome}"


def _status_text(st: StatusReply) -> str:
    process = _dict(st.get("process"))
    lines = [
        f"maestrod is running (pid {process.get('pid', '?')}, up "
        f"{out.duration(process.get('uptime_s'))}, version {st.get('version', '?')})."
    ]
    requests = _dict(st.get("requests"))
    started = _dict(st.get("started"))
    log = _dict(st.get("log"))
    open_files = process.get("open_files")
    pairs: list[tuple[str, Any]] = [
        (
            "started",
            f"{out.local_time(started.get('at'))} by {started.get('by', '?')}"
            + (f" ({started['detail']})" if started.get("detail") else ""),
        ),
        ("memory", out.size(process.get("rss_bytes"))),
        ("cpu", f"{process.get('cpu_percent', 0.0):.1f} %"),
        ("threads", process.get("threads")),
        ("open files", open_files if isinstance(open_files, int) and open_files >= 0 else "-"),
        ("requests", _requests_cell(requests)),
        (
            "log",
            "the journal (journalctl --user -u maestrod)"
            if log.get("to") == "journal"
            else log.get("path") or "-",
        ),
        ("write queue", st.get("write_queue_depth")),
        ("socket", st.get("endpoint")),
    ]
    schedule = _dict(st.get("maintenance"))
    if schedule:
        pairs.append(
            (
                "maintenance",
                f"'{schedule.get('cron')}' ({schedule.get('timezone')}), "
                f"next {out.local_time(schedule.get('next_run'))}",
            )
        )
    if st.get("stopping"):
        pairs.append(("state", "shutting down"))
    lines.append(out.key_values(pairs))
    recent = [str(x) for x in log.get("recent_errors") or []]
    if recent:
        lines += ["", "Last errors in its log:", *[f"  {line}" for line in recent]]
    projects = _dict(st.get("projects"))
    if projects:
        rows: list[list[Any]] = []
        for path, p in projects.items():
            info = _dict(p)
            maintenance = _dict(info.get("maintenance"))
            problems = _dict(info.get("problems"))
            notes = []
            if info.get("missing"):
                notes.append(f"MISSING: {info['missing']} (not maintained, never re-created)")
            elif not info.get("memory_dir_exists", True):
                notes.append("no memory dir yet")
            if info.get("refused"):
                notes.append(f"REFUSED ({info['refused']}): {info.get('read_error')}")
            elif info.get("read_error"):
                notes.append(f"read error: {info['read_error']}")
            if problems:
                notes.append(f"{sum(len(v) for v in problems.values())} parse problem(s)")
            rows.append(
                [
                    out.home_relative(path),
                    _counts_text(_dict(info.get("entries"))),
                    info.get("watcher", "-"),
                    out.local_time(info.get("last_external_edit")),
                    _maintenance_cell(_dict(maintenance.get("last"))),
                    "; ".join(notes) or "ok",
                ]
            )
        lines += [
            "",
            out.table(
                [
                    "PROJECT",
                    "ENTRIES",
                    "WATCHER",
                    "LAST EXTERNAL EDIT",
                    "LAST MAINTENANCE",
                    "NOTES",
                ],
                rows,
            ),
        ]
    else:
        lines += ["", "No projects registered yet: 'maestroctl register' in a project adds it."]
    ops = _dict(requests.get("ops"))
    if ops:
        op_rows = [
            [
                op,
                _dict(v).get("count"),
                _dict(v).get("failed"),
                _dict(v).get("fallbacks", 0),
                _dict(v).get("p50_ms"),
                _dict(v).get("p99_ms"),
            ]
            for op, v in ops.items()
        ]
        headers = ["OP", "REQUESTS", "FAILED", "NOT REGISTERED", "P50 MS", "P99 MS"]
        lines += ["", out.table(headers, op_rows)]
    return "\n".join(lines)


def _requests_cell(requests: dict[str, Any]) -> str:
    """Real failures apart from ``not_registered`` answers (a client then uses the files
    directly, as designed: not a failure)."""
    text = f"{requests.get('served', 0)} served, {requests.get('failed', 0)} failed"
    errors = {k: v for k, v in _dict(requests.get("errors")).items() if k != "not_registered"}
    if errors:
        text += " (" + ", ".join(f"{v} {k}" for k, v in errors.items()) + ")"
    fallbacks = requests.get("fallbacks", 0)
    if fallbacks:
        text += f"; {fallbacks} for unregistered projects (served from the files directly)"
    return text


ERROR_TAIL_BYTES = 64 * 1024
ERROR_LINES = 5


def _last_errors(path: Any) -> list[str]:
    """The last ERROR/CRITICAL lines of a log file, reading only its end."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - ERROR_TAIL_BYTES))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    hits = [
        line.strip()
        for line in tail.splitlines()
        if " ERROR " in line or " CRITICAL " in line or line.startswith("maestrod: ")
    ]
    return hits[-ERROR_LINES:]


def _down_facts(ctx: Context) -> tuple[dict[str, Any], list[str]]:
    """What status can still say with the daemon down."""
    from ...integrations.service import manager_for
    from .base import BACKGROUND_LOG

    p = ctx.paths
    manager = manager_for()
    service_installed = manager.service_file.exists()
    memory = layout.memory_dir(ctx.project)
    files = {kind: (memory / name).exists() for kind, name in layout.MEMORY_FILES.items()}
    errors = (_last_errors(p.log_path) + _last_errors(p.log_dir / BACKGROUND_LOG))[-ERROR_LINES:]
    facts = {
        "service_installed": service_installed,
        "service_file": str(manager.service_file),
        "project": ctx.project,
        "memory_dir": str(memory),
        "memory_present": any(files.values()),
        "memory_files": files,
        "log": str(p.log_path),
        "recent_errors": errors,
    }
    lines = [
        out.key_values(
            [
                (
                    "service",
                    f"installed ({out.home_relative(manager.service_file)}); "
                    "start it with 'maestroctl start' or your service manager "
                    "(systemctl --user start maestrod)"
                    if service_installed
                    else "not installed ('maestroctl service install' starts it at login)",
                ),
                (
                    "this project",
                    f"memory in {out.home_relative(memory)}: "
                    + (", ".join(k for k, v in files.items() if v) or "none yet")
                    + " (commands still work: they use the files directly)",
                ),
                ("log", out.home_relative(p.log_path)),
            ]
        )
    ]
    if errors:
        lines += ["", "Last errors in its log:", *[f"  {x}" for x in errors]]
    return facts, lines


@command(
    "status",
    "say whether maestrod is running and what it is doing",
    description="Say whether maestrod is running and what it is doing. Exits 3 when it is "
    "not running (like 'systemctl status'), 0 when it is.",
)
def cmd_status(ctx: Context, ns: argparse.Namespace) -> Outcome:
    client = ctx.client()
    if not client.daemon_running():
        facts, lines = _down_facts(ctx)
        result = {
            "running": False,
            "socket": str(ctx.paths.socket_path),
            "hint": NOT_RUNNING_HINT,
            **facts,
        }
        text = "\n".join([f"maestrod is not running.\n{NOT_RUNNING_HINT}", "", *lines])
        return Outcome(result, text, exit_code=EXIT_UNAVAILABLE)
    st = client.status()
    return Outcome({"running": True, **st}, _status_text(st), via="daemon")


def _paths_result(ctx: Context) -> dict[str, Any]:
    from ...integrations.service import find_maestrod, manager_for

    p = ctx.paths
    manager = manager_for()
    return {
        "maestro_home": os.environ.get("MAESTRO_HOME") or None,
        "runtime_dir": str(p.runtime_dir),
        "socket": str(p.socket_path),
        "lock": str(p.lock_path),
        "pid_file": str(p.pid_path),
        "state_dir": str(p.state_dir),
        "registry": str(p.registry_path),
        "journal_dir": str(p.journal_dir),
        "config_dir": str(p.config_dir),
        "config": str(p.config_path),
        "log_dir": str(p.log_dir),
        "log": str(p.log_path),
        "maestrod": str(find_maestrod() or "") or None,
        "service_file": str(manager.service_file),
        "project": ctx.project,
        "memory_dir": str(layout.memory_dir(ctx.project)),
    }


@command("paths", "show where the socket, state, config, logs and service file live")
def cmd_paths(ctx: Context, ns: argparse.Namespace) -> Outcome:
    result = _paths_result(ctx)
    labels = [(k.replace("_", " "), v if v is not None else "-") for k, v in result.items()]
    return Outcome(result, out.key_values(labels), project=ctx.project)
