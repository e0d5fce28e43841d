"""``maestroctl integrate gemini``: Maestro Memory's hooks and MCP server in Gemini CLI.

What is written (Gemini CLI 0.61.0, checked by tests/e2e):

* **Hooks** in ``<project>/.gemini/settings.json`` (``--scope project``) or
  ``~/.gemini/settings.json`` (``--scope user``), Claude Code's group shape with timeouts in
  **milliseconds**: ``SessionStart`` -> ``session-start``, ``BeforeAgent`` (carries the prompt)
  -> ``user-prompt``, ``SessionEnd`` -> ``session-end`` (Gemini does not wait for it).
  ``AfterAgent`` runs after every turn and is not a session end: not wired. BeforeAgent's
  prompt arrives with the session-start block in front of it (``<hook_context>…``); the core
  strips it before detection (``core/injected.py``). In the user file, while the daemon's
  HTTP door is open, each is a command that asks the door with curl first
  (``agent_settings.door_hooks``; Gemini runs command hooks only).
* **MCP server** ``mcpServers.maestro`` in ``~/.gemini/settings.json``: while the daemon's
  HTTP door is open, ``httpUrl: "http://127.0.0.1:<port>/mcp"`` (streamable HTTP, no process;
  the daemon serves the project of Gemini's working directory); else this machine's
  maestroctl, ``args: ["mcp"]``, ``env.MAESTRO_HOME`` when set. Its tools reach the model as
  ``mcp_maestro_<tool>``.
* **Trust, only with ``--trust``**: Gemini refuses to run in a folder it does not trust (exit 55
  in ``-p``), so ``--trust`` adds ``{"<abs project>": "TRUST_FOLDER"}`` to
  ``~/.gemini/trustedFolders.json`` and ``"trust": true`` on our MCP server (its tool calls are
  not confirmed one by one). Without it the report says exactly what is missing.

``--remove`` takes out our hooks and our MCP server and leaves everything else as it was; the
folder's trust is the person's and stays (the report says where to undo it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...common import layout
from ...common.hookio import TOOL_EVENT_NAMES
from . import agent_settings as common
from .agent_settings import IntegrationError

TOOL = "gemini"
SCOPES = ("project", "user")
MCP_NAME = "maestro"
TRUST_FOLDER = "TRUST_FOLDER"
TIMEOUT_MS = 10_000
# Gemini event -> (our event, timeout in milliseconds); the names are hookio's.
GEMINI_HOOKS: tuple[tuple[str, str, int], ...] = tuple(
    (TOOL_EVENT_NAMES["gemini"][event], event, TIMEOUT_MS)
    for event in ("session-start", "user-prompt", "session-end")
)


def gemini_dir() -> Path:
    return Path.home() / ".gemini"


def settings_path(scope: str, project: Path) -> Path:
    if scope == "user":
        return gemini_dir() / "settings.json"
    return Path(os.path.abspath(project)) / ".gemini" / "settings.json"


def trusted_folders_path() -> Path:
    return gemini_dir() / "trustedFolders.json"


def _mcp_server(trust: bool) -> dict[str, Any]:
    port = common.door_port()
    server: dict[str, Any]
    if port is not None:  # the daemon answers over streamable HTTP: no process per session
        from ...common.httpdoor import LOOPBACK, MCP_PATH

        server = {"httpUrl": f"http://{LOOPBACK}:{port}{MCP_PATH}"}
    else:
        server = {"command": common.maestroctl_path(), "args": ["mcp"]}
        home = os.environ.get("MAESTRO_HOME", "")
        if home:
            server["env"] = {"MAESTRO_HOME": home}
    if trust:
        server["trust"] = True
    return server


def _is_our_mcp(server: object) -> bool:
    if not isinstance(server, dict):
        return False
    from ...common.httpdoor import MCP_PATH, door_path

    door = door_path(server.get("httpUrl"))
    if door is not None and door[1] == MCP_PATH:
        return True
    return (
        server.get("args") == ["mcp"]
        and os.path.basename(str(server.get("command", ""))) == "maestroctl"
    )


class _File:
    """One JSON file being edited: its text before and its document."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.before = common.read_text(path)
        self.doc = common.load_json(path, self.before)
        self.dirty = False

    def change(self) -> common.FileChange:
        if not self.dirty:
            return common.FileChange(self.path, self.before, self.before)
        if not self.doc:  # only a removal empties a file: it held only ours
            return common.FileChange(self.path, self.before, None)
        return common.FileChange(self.path, self.before, common.dump_json(self.doc, self.before))


def integrate_gemini(
    project: Path,
    scope: str = "project",
    dry_run: bool = False,
    remove: bool = False,
    trust: bool = False,
    mcp: bool = True,
) -> common.Report:
    if scope not in SCOPES:
        raise IntegrationError(f"unknown scope {scope!r} for gemini; use one of {SCOPES}")
    project = Path(os.path.abspath(project))
    report = common.Report(TOOL, scope, trust, remove, dry_run)
    hooks_file = _File(settings_path(scope, project))
    user_path = settings_path("user", project)
    user_file = hooks_file if hooks_file.path == user_path else _File(user_path)

    if remove:
        hooks_file.dirty = common.remove_hooks(hooks_file.doc, TOOL)
        servers = user_file.doc.get("mcpServers")
        if isinstance(servers, dict) and _is_our_mcp(servers.get(MCP_NAME)):
            del servers[MCP_NAME]
            if not servers:
                del user_file.doc["mcpServers"]
            user_file.dirty = True
        report.notes.append(
            f"the folder trust in {trusted_folders_path()} is yours and was left as it is"
        )
    else:
        before = repr(hooks_file.doc.get("hooks"))
        common.add_hooks(
            hooks_file.doc,
            TOOL,
            GEMINI_HOOKS,
            portable=scope == "project",
            urls=common.door_hooks(TOOL, scope, GEMINI_HOOKS, report),
            http_events=(),  # Gemini CLI runs command hooks only
        )
        hooks_file.dirty = repr(hooks_file.doc.get("hooks")) != before
        servers = user_file.doc.setdefault("mcpServers", {}) if mcp else None
        if servers is None:
            pass
        elif not isinstance(servers, dict):
            raise IntegrationError(f"{user_path}: 'mcpServers' is not an object")
        elif (current := servers.get(MCP_NAME)) is None or _is_our_mcp(current):
            keep_trust = isinstance(current, dict) and current.get("trust") is True
            wanted = _mcp_server(trust or keep_trust)
            if current != wanted:
                servers[MCP_NAME] = wanted
                user_file.dirty = True
        else:
            report.notes.append(f"{user_path} has its own mcpServers.{MCP_NAME}; left as it is")

    report.changes.append(hooks_file.change())
    if user_file is not hooks_file:
        report.changes.append(user_file.change())

    if not remove:
        tpath = trusted_folders_path()
        trusted = _File(tpath)
        if trusted.doc.get(str(project)) != TRUST_FOLDER:
            if trust:
                trusted.doc[str(project)] = TRUST_FOLDER
                trusted.dirty = True
                report.changes.append(trusted.change())
            else:
                report.todo.append(
                    f"Gemini will not run in {project} until you trust the folder (in -p mode "
                    "it exits 55): 'maestroctl integrate gemini --trust', or answer Gemini's "
                    f'trust prompt, or add "{project}": "{TRUST_FOLDER}" to {tpath}'
                )
        servers = user_file.doc.get("mcpServers")
        ours = servers.get(MCP_NAME) if isinstance(servers, dict) else None
        if _is_our_mcp(ours) and not (isinstance(ours, dict) and ours.get("trust") is True):
            report.todo.append(
                "Gemini asks before each call of the memory's MCP tools (headless -p runs "
                'cannot answer): --trust sets "trust": true on mcpServers.maestro'
            )
        if scope == "project" and not (project / layout.MAESTRO_DIR).is_dir():
            report.notes.append(
                f"{project} has no .maestro/ yet; the hooks stay silent until 'maestroctl init'"
            )
    report.apply()
    return report


def status(project: Path) -> dict[str, Any]:
    """For ``doctor``: hooks present, folder trusted, MCP server registered."""
    project = Path(os.path.abspath(project))
    out: dict[str, Any] = {"found": gemini_dir().is_dir(), "hooks": {}}
    try:
        trusted = _File(trusted_folders_path()).doc
        user = _File(settings_path("user", project)).doc
    except IntegrationError as exc:
        return {"found": True, "error": str(exc)}
    # Trust is inherited from a trusted parent folder too.
    out["folder_trusted"] = any(
        v == TRUST_FOLDER and (project == Path(k) or Path(k) in project.parents)
        for k, v in trusted.items()
    )
    servers = user.get("mcpServers")
    out["mcp"] = isinstance(servers, dict) and _is_our_mcp(servers.get(MCP_NAME))
    for scope in SCOPES:
        path = settings_path(scope, project)
        try:
            doc = _File(path).doc
        except IntegrationError as exc:
            out["hooks"][scope] = {"path": str(path), "error": str(exc)}
            continue
        hooks = doc.get("hooks")
        count = 0
        if isinstance(hooks, dict):
            for groups in hooks.values():
                for group in groups if isinstance(groups, list) else []:
                    if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                        count += sum(1 for h in group["hooks"] if common.our_event(h, TOOL))
        if count:
            out["hooks"][scope] = {"path": str(path), "count": count}
    return out
