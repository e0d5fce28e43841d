"""Projects the daemon owns: ``register``, ``unregister``, ``projects``."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from .. import output as out
from .base import (
    Context,
    Outcome,
    _dict,
    command,
)


# -- projects ----------------------------------------------------------------------------------
def _project_paths(result: Mapping[str, Any]) -> list[str]:
    items = result.get("projects") or []
    paths = []
    for item in items:
        if isinstance(item, str):
            paths.append(item)
        elif isinstance(item, dict) and isinstance(item.get("path"), str):
            paths.append(item["path"])
    return paths


def _path_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="the project directory (default: the current project)",
    )


def _chosen_path(ctx: Context, ns: argparse.Namespace) -> str:
    return os.path.abspath(os.path.expanduser(ns.path)) if ns.path else ctx.project


@command("register", "let maestrod own a project's memory (watch, cache, maintain)", _path_arg)
def cmd_register(ctx: Context, ns: argparse.Namespace) -> Outcome:
    path = _chosen_path(ctx, ns)
    result = ctx.client().register(path)
    shown = result.get("path", path)
    already = result.get("added") is False
    text = (
        f"{shown} was already registered."
        if already
        else f"Registered {shown}: maestrod now watches and maintains its memory."
    )
    return Outcome(result, text, via="daemon", project=str(shown))


@command("unregister", "stop maestrod owning a project (its files stay as they are)", _path_arg)
def cmd_unregister(ctx: Context, ns: argparse.Namespace) -> Outcome:
    path = _chosen_path(ctx, ns)
    result = ctx.client().unregister(path)
    shown = result.get("path", path)
    if result.get("removed") is False:
        return Outcome(result, f"{shown} was not registered.", via="daemon", project=str(shown))
    return Outcome(
        result,
        f"Unregistered {shown}; its memory files are untouched.",
        via="daemon",
        project=str(shown),
    )


@command("projects", "list the projects registered with maestrod")
def cmd_projects(ctx: Context, ns: argparse.Namespace) -> Outcome:
    result = ctx.client().projects()
    items = [_dict(p) for p in result.get("projects") or []]
    if not items:
        return Outcome(
            result,
            "No projects registered: 'maestroctl register' in a project adds it.",
            via="daemon",
        )
    rows: list[list[Any]] = []
    for item in items:
        if not item.get("exists", True):
            state = "directory missing"
        elif not item.get("memory_dir_exists", True):
            state = "no memory yet ('maestroctl init' creates it)"
        else:
            state = "ok"
        rows.append([out.home_relative(item.get("path", "?")), state])
    return Outcome(result, out.table(["PROJECT", "STATE"], rows), via="daemon")
