"""What runs and where: ``status``, ``paths``."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ...common import layout
from .. import _output as out
from .base import (
    EXIT_UNAVAILABLE,
    NOT_RUNNING_HINT,
    Context,
    Outcome,
    _dict,
    command,
)


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


def _status_text(st: dict[str, Any]) -> str:
    process = _dict(st.get("process"))
    lines = [
        f"maestrod is running (pid {process.get('pid', '?')}, up "
        f"{out.duration(process.get('uptime_s'))}, version {st.get('version', '?')})."
    ]
    requests = _dict(st.get("requests"))
    open_files = process.get("open_files")
    pairs: list[tuple[str, Any]] = [
        ("memory", out.size(process.get("rss_bytes"))),
        ("cpu", f"{process.get('cpu_percent', 0.0):.1f} %"),
        ("threads", process.get("threads")),
        ("open files", open_files if isinstance(open_files, int) and open_files >= 0 else "-"),
        ("requests", f"{requests.get('served', 0)} served, {requests.get('failed', 0)} failed"),
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
    projects = _dict(st.get("projects"))
    if projects:
        rows: list[list[Any]] = []
        for path, p in projects.items():
            info = _dict(p)
            maintenance = _dict(info.get("maintenance"))
            problems = _dict(info.get("problems"))
            notes = []
            if not info.get("memory_dir_exists", True):
                notes.append("no memory dir yet")
            if info.get("read_error"):
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
                _dict(v).get("p50_ms"),
                _dict(v).get("p99_ms"),
            ]
            for op, v in ops.items()
        ]
        lines += ["", out.table(["OP", "REQUESTS", "FAILED", "P50 MS", "P99 MS"], op_rows)]
    return "\n".join(lines)


@command(
    "status",
    "say whether maestrod is running and what it is doing",
    description="Say whether maestrod is running and what it is doing. Exits 3 when it is "
    "not running (like 'systemctl status'), 0 when it is.",
)
def cmd_status(ctx: Context, ns: argparse.Namespace) -> Outcome:
    client = ctx.client()
    if not client.daemon_running():
        result = {"running": False, "socket": str(ctx.paths.socket_path), "hint": NOT_RUNNING_HINT}
        text = f"maestrod is not running.\n{NOT_RUNNING_HINT}"
        return Outcome(result, text, exit_code=EXIT_UNAVAILABLE)
    st = client.status()
    return Outcome({"running": True, **st}, _status_text(st), via="daemon")


def _paths_result(ctx: Context) -> dict[str, Any]:
    from .._service import find_maestrod, manager_for

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
