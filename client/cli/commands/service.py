"""``service install|uninstall|status``: start maestrod at login (systemd or launchd)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from .. import output as out
from .base import (
    Context,
    Outcome,
    UsageProblem,
    command,
)
from .lifecycle import stop_daemon

if TYPE_CHECKING:
    from ...integrations.service import ServiceManager


# -- service -----------------------------------------------------------------------------------
def _service_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("install", "uninstall", "status"))
    p.add_argument(
        "--dry-run", action="store_true", help="print what would be written and run; change nothing"
    )
    p.add_argument(
        "--manager",
        choices=("systemd", "launchd"),
        help="the service manager (default: launchd on macOS, systemd elsewhere)",
    )


def _plan_text(plan_dict: dict[str, Any], dry_run: bool) -> str:
    if plan_dict.get("note") and not plan_dict["actions"]:
        return str(plan_dict["note"]) + "."
    lines = ["Would:" if dry_run else "Done:"]
    for action in plan_dict["actions"]:
        lines.append(f"  {action['description']}")
        if dry_run and action.get("content"):
            lines += ["", *("    " + line for line in action["content"].splitlines()), ""]
    return "\n".join(lines)


@command(
    "service",
    "install, uninstall or show the login service (systemd or launchd)",
    _service_args,
    description="Install, uninstall or show the login service: a systemd user unit on "
    "Linux, a launchd LaunchAgent on macOS. 'install' renders the packaged "
    "template with this installation's maestrod, writes it, and enables it.",
)
def cmd_service(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from ...integrations import service as service

    manager = service.manager_for(ns.manager)
    if ns.action == "status":
        if ns.dry_run:
            raise UsageProblem("--dry-run applies to install and uninstall")
        return _service_status(manager)
    if ns.action == "install":
        plan = manager.install_plan(
            service.require_maestrod(),
            ctx.paths.log_dir,
            daemon_running=ctx.client().daemon_running(),
        )
    else:
        plan = manager.uninstall_plan()
    result: dict[str, Any] = {"dry_run": ns.dry_run, **plan.to_dict()}
    if not ns.dry_run:

        def stop_first() -> None:
            stop_daemon(ctx)

        result["done"] = service.execute(plan, stop_first)
    text = _plan_text(plan.to_dict(), ns.dry_run)
    if not ns.dry_run and ns.action == "install":
        text += "\nmaestrod now starts at login; 'maestroctl status' shows it."
    return Outcome(result, text)


def _service_status(manager: ServiceManager) -> Outcome:
    from ...integrations.service import find_maestrod

    target = manager.service_file
    installed = target.exists()
    result: dict[str, Any] = {
        "manager": manager.name,
        "service_file": str(target),
        "installed": installed,
    }
    if not installed:
        return Outcome(
            result,
            f"Not installed ({target} does not exist). 'maestroctl service install' sets it up.",
        )
    runs = manager.installed_maestrod()
    current = find_maestrod()
    state = manager.query()
    result.update(
        {
            "maestrod": runs,
            "maestrod_exists": bool(runs and os.access(runs, os.X_OK)),
            "current_maestrod": str(current) if current else None,
            "up_to_date": bool(current) and runs == str(current),
            "maestro_home": manager.installed_home(),
            "state": state,
        }
    )
    pairs: list[tuple[str, Any]] = [("service file", target), ("runs", runs or "-")]
    if not result["maestrod_exists"]:
        pairs.append(
            ("problem", "that maestrod does not exist; re-run 'maestroctl service install'")
        )
    elif not result["up_to_date"]:
        pairs.append(("note", f"this installation's maestrod is {current}"))
    for key in ("enabled", "active", "state"):
        if key in state:
            pairs.append((key, state[key]))
    if state.get("detail"):
        pairs.append(("manager says", state["detail"]))
    return Outcome(result, f"Installed ({manager.name}).\n" + out.key_values(pairs))
