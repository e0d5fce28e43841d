"""``maestroctl integrate codex``: Maestro Memory's hooks and MCP server in Codex CLI.

What is written (Codex 0.171.0, checked by tests/e2e):

* **Hooks** in ``<project>/.codex/hooks.json`` (``--scope project``) or
  ``$CODEX_HOME/hooks.json`` (``--scope user``; ``CODEX_HOME`` defaults to ``~/.codex``), Claude
  Code's shape: ``SessionStart`` -> ``session-start``, ``UserPromptSubmit`` -> ``user-prompt``,
  ``SessionEnd`` -> ``session-end`` (timeouts in seconds; Codex clamps SessionEnd to 3, so 3 is
  written). ``Stop`` runs after every turn and is not a session end: not wired. Codex sets no
  ``CLAUDE_PROJECT_DIR``; the hook finds the project from ``cwd``. In the user file, while
  the daemon's HTTP door is open, each is a command that asks the door with curl first
  (``agent_settings.door_hooks``; Codex runs command hooks only).
* **MCP server** ``[mcp_servers.maestro]`` in ``$CODEX_HOME/config.toml``: while the daemon's
  HTTP door is open, ``url = "http://127.0.0.1:<port>/mcp"`` (streamable HTTP, no process; the
  daemon serves the project of Codex's working directory); else this machine's maestroctl,
  ``args = ["mcp"]``, and ``env = { MAESTRO_HOME = … }`` when ``MAESTRO_HOME`` is set (Codex
  starts MCP servers with a filtered environment).
* **Trust, only with ``--trust``** (the person's decision): Codex runs a hook only when the user
  config.toml holds ``[hooks.state."<abs hooks.json>:<event_snake>:<group>:<handler>"]
  trusted_hash = "sha256:…"`` (``hook_hash``, computed exactly as Codex does), and reads a
  project's ``.codex/`` only under ``[projects."<abs>"] trust_level = "trusted"``; ``--trust``
  writes both, and ``default_tools_approval_mode = "approve"`` for our MCP server (``codex
  exec`` has nobody to ask). Without it the report lists exactly what is missing.

config.toml is the person's file: it is never re-serialised. Everything we add is one block
between two marker comments at its end (``# >>> maestro-memory …`` / ``# <<< maestro-memory
<<<``); re-running replaces the block, ``--remove`` takes it out and leaves the file as it was
before. A table the person already has (their own ``[mcp_servers.maestro]``, a project trust
level, a hook's trust entry) is left alone and reported. The result is parsed with ``tomllib``
before anything is written; TOML we cannot extend safely is an error that changes nothing.
(No TOML writer dependency: appending whole tables needs none, and it keeps the person's
formatting and comments byte for byte.)
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any

from ...common import layout
from ...common.hookio import TOOL_EVENT_NAMES
from . import agent_settings as common
from .agent_settings import IntegrationError

TOOL = "codex"
SCOPES = ("project", "user")
MCP_NAME = "maestro"
# Codex event -> (our event, timeout in seconds); the names are hookio's.
CODEX_HOOKS: tuple[tuple[str, str, int], ...] = tuple(
    (TOOL_EVENT_NAMES["codex"][event], event, timeout)
    for event, timeout in (("session-start", 10), ("user-prompt", 10), ("session-end", 3))
)
EVENT_SNAKE = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "Stop": "stop",
    "SessionEnd": "session_end",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
}
MATCHER_EVENTS = {"session_start", "pre_tool_use", "post_tool_use", "pre_compact"}
DEFAULT_TIMEOUT = 600
SESSION_END_MAX_TIMEOUT = 3
BEGIN = "# >>> maestro-memory (maestroctl integrate codex; undo: --remove) >>>"
BEGIN_NO_NEWLINE = BEGIN + " +newline"  # the file had no final newline before the block
END = "# <<< maestro-memory <<<"


def codex_home() -> Path:
    raw = os.environ.get("CODEX_HOME", "").strip()
    return Path(raw) if raw else Path.home() / ".codex"


def config_path() -> Path:
    return codex_home() / "config.toml"


def hooks_path(scope: str, project: Path) -> Path:
    if scope == "user":
        return codex_home() / "hooks.json"
    return Path(os.path.abspath(project)) / ".codex" / "hooks.json"


def toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def hook_hash(
    event: str,
    command: str,
    timeout: Any = None,
    matcher: Any = None,
    status_message: Any = None,
) -> str:
    """The ``trusted_hash`` Codex computes for one command hook: sha256 over the compact,
    key-sorted JSON of ``{"event_name": <snake event>, "hooks": [{"type": "command",
    "command", "timeout": <effective s: 600 unset, SessionEnd <= 3>, "async": false,
    "statusMessage"?}], "matcher"? (events that take one)}``."""
    snake = EVENT_SNAKE.get(event, event)
    effective = DEFAULT_TIMEOUT if not isinstance(timeout, int) else max(1, timeout)
    if snake == "session_end":
        effective = min(effective, SESSION_END_MAX_TIMEOUT)
    handler: dict[str, Any] = {
        "type": "command",
        "command": command,
        "timeout": effective,
        "async": False,
    }
    if isinstance(status_message, str):
        handler["statusMessage"] = status_message
    identity: dict[str, Any] = {"event_name": snake, "hooks": [handler]}
    if isinstance(matcher, str) and snake in MATCHER_EVENTS:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def our_trust_keys(path: Path, hooks_doc: dict[str, Any]) -> dict[str, str]:
    """``{trust key: hash}`` for each of our hooks in a hooks.json document, keyed as Codex
    keys them (``<abs hooks.json>:<event_snake>:<group index>:<handler index>``)."""
    out: dict[str, str] = {}
    hooks = hooks_doc.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        if event not in EVENT_SNAKE or not isinstance(groups, list):
            continue
        for gi, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for hi, hook in enumerate(group["hooks"]):
                if common.our_event(hook, TOOL) is None:
                    continue
                key = f"{path}:{EVENT_SNAKE[event]}:{gi}:{hi}"
                out[key] = hook_hash(
                    event,
                    hook["command"],
                    hook.get("timeout"),
                    group.get("matcher"),
                    hook.get("statusMessage"),
                )
    return out


# -- config.toml: our block ------------------------------------------------------------------------
def split_block(text: str) -> tuple[str, str | None]:
    """(the file without our block, exactly as it was before; the block's body or None)."""
    for begin, sep in ((BEGIN_NO_NEWLINE, "\n\n"), (BEGIN, "\n")):
        start = text.find(begin + "\n")
        if start < 0:
            continue
        end = text.find(END, start)
        if end < 0:
            raise IntegrationError(
                f"{config_path()}: the maestro-memory block has no end marker ({END!r}); "
                "fix it by hand, nothing was changed"
            )
        after = end + len(END)
        if text[after : after + 1] == "\n":
            after += 1
        head = text[:start]
        if head.endswith(sep):
            head = head[: -len(sep)]
        elif head.endswith("\n") and sep == "\n\n":
            head = head[:-1]
        body = text[start + len(begin) + 1 : end]
        return head + text[after:], body
    return text, None


def join_block(base: str, lines: list[str]) -> str:
    if not lines:
        return base
    if not base:
        return BEGIN + "\n" + "\n".join(lines) + "\n" + END + "\n"
    begin, sep = (BEGIN, "\n") if base.endswith("\n") else (BEGIN_NO_NEWLINE, "\n\n")
    return base + sep + begin + "\n" + "\n".join(lines) + "\n" + END + "\n"


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise IntegrationError(f"{path} is not valid TOML ({exc}); fix it first") from exc


def _table(doc: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


def _mcp_lines(trust: bool) -> list[str]:
    port = common.door_port()
    if port is not None:  # the daemon answers over streamable HTTP: no process per session
        from ...common.httpdoor import LOOPBACK, MCP_PATH

        url = f"http://{LOOPBACK}:{port}{MCP_PATH}"
        lines = [f"[mcp_servers.{MCP_NAME}]", f"url = {toml_str(url)}"]
    else:
        lines = [
            f"[mcp_servers.{MCP_NAME}]",
            f"command = {toml_str(common.maestroctl_path())}",
            'args = ["mcp"]',
        ]
        home = os.environ.get("MAESTRO_HOME", "")
        if home:
            lines.append(f"env = {{ MAESTRO_HOME = {toml_str(home)} }}")
    if trust:
        lines.append('default_tools_approval_mode = "approve"')
    return lines


def integrate_codex(
    project: Path,
    scope: str = "project",
    dry_run: bool = False,
    remove: bool = False,
    trust: bool = False,
    mcp: bool = True,
) -> common.Report:
    if scope not in SCOPES:
        raise IntegrationError(f"unknown scope {scope!r} for codex; use one of {SCOPES}")
    project = Path(os.path.abspath(project))
    report = common.Report(TOOL, scope, trust, remove, dry_run)
    hpath = hooks_path(scope, project)
    cpath = config_path()

    # hooks.json
    hooks_before = common.read_text(hpath)
    hooks_doc = common.load_json(hpath, hooks_before)
    if remove:
        changed = common.remove_hooks(hooks_doc, TOOL)
        hooks_after = (
            None if changed and not hooks_doc else common.dump_json(hooks_doc, hooks_before)
        )
        if not changed:
            hooks_after = hooks_before
    else:
        common.add_hooks(
            hooks_doc,
            TOOL,
            CODEX_HOOKS,
            portable=scope == "project",
            urls=common.door_hooks(TOOL, scope, CODEX_HOOKS, report),
            http_events=(),  # Codex runs command hooks only
        )
        hooks_after = common.dump_json(hooks_doc, hooks_before)
    report.changes.append(common.FileChange(hpath, hooks_before, hooks_after))

    # config.toml
    config_before = common.read_text(cpath)
    base, old_block = split_block(config_before or "")
    trust = trust or (old_block is not None and "trusted_hash" in old_block and not remove)
    report.trust = trust
    lines: list[str] = []
    if not remove:
        doc = _parse(cpath, base)
        if not mcp:
            pass
        elif _table(doc, "mcp_servers", MCP_NAME) is None:
            lines += [*_mcp_lines(trust), ""]
        else:
            report.notes.append(
                f"{cpath} already has its own [mcp_servers.{MCP_NAME}]; left as it is"
            )
        wanted = our_trust_keys(hpath, hooks_doc)
        states = _table(doc, "hooks", "state") or {}
        trust_lines: list[str] = []
        for key, digest in wanted.items():
            have = _table(states, key, "trusted_hash") if isinstance(states, dict) else None
            if have == digest:
                continue
            if have is not None:
                report.notes.append(f"{cpath} trusts an older version of hook {key}")
            if have is None:
                trust_lines += [
                    f"[hooks.state.{toml_str(key)}]",
                    f"trusted_hash = {toml_str(digest)}",
                    "",
                ]
            else:
                report.todo.append(
                    f"in {cpath}, set [hooks.state.{toml_str(key)}] "
                    f"trusted_hash = {toml_str(digest)}"
                )
        level = _table(doc, "projects", str(project), "trust_level")
        project_lines: list[str] = []
        if scope == "project" and level != "trusted":
            if level is None:
                project_lines = [f"[projects.{toml_str(str(project))}]", 'trust_level = "trusted"']
            else:
                report.todo.append(
                    f"{cpath} sets trust_level = {toml_str(str(level))} for {project}; Codex "
                    'reads its .codex/hooks.json only when it is "trusted" (your call)'
                )
        if trust:
            lines += trust_lines + project_lines
        elif trust_lines or project_lines:
            report.todo.append(
                "Codex skips untrusted hooks without a word. Trust them with "
                "'maestroctl integrate codex --trust', or add to "
                f"{cpath}:\n"
                + "\n".join(("    " + line) if line else "" for line in trust_lines + project_lines)
            )
        while lines and lines[-1] == "":
            lines.pop()
    config_after_text = join_block(base, lines)
    config_after: str | None = config_after_text
    if config_before is None and not config_after_text:
        config_after = None
    _parse(cpath, config_after_text)  # what we write must read back
    report.changes.append(common.FileChange(cpath, config_before, config_after))
    if remove:
        report.notes.append(
            "Codex's own settings (model, projects you trusted yourself) are left as they were"
        )
    elif scope == "project" and not (project / layout.MAESTRO_DIR).is_dir():
        report.notes.append(
            f"{project} has no .maestro/ yet; the hooks stay silent until 'maestroctl init'"
        )
    report.apply()
    return report


def mcp_url() -> str | None:
    """The ``url`` of ``[mcp_servers.maestro]`` in config.toml (MCP over HTTP), None without one
    or when the file cannot be read."""
    try:
        doc = tomllib.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    url = _table(doc, "mcp_servers", MCP_NAME, "url")
    return url if isinstance(url, str) else None


def status(project: Path) -> dict[str, Any]:
    """For ``doctor``: are our hooks present and trusted, is the project trusted, is the MCP
    server registered? ``{"found": bool, "hooks": {scope: {...}}, "mcp": bool, ...}``."""
    cpath = config_path()
    project = Path(os.path.abspath(project))
    try:
        config_text = common.read_text(cpath) or ""
        doc = tomllib.loads(config_text)
    except (IntegrationError, tomllib.TOMLDecodeError) as exc:
        return {"found": True, "error": f"{cpath}: {exc}"}
    found = codex_home().is_dir()
    out: dict[str, Any] = {
        "found": found,
        "config": str(cpath),
        "mcp": _table(doc, "mcp_servers", MCP_NAME) is not None,
        "project_trusted": _table(doc, "projects", str(project), "trust_level") == "trusted",
        "hooks": {},
    }
    states = _table(doc, "hooks", "state") or {}
    for scope in SCOPES:
        hpath = hooks_path(scope, project)
        try:
            hooks_doc = common.load_json(hpath, common.read_text(hpath))
        except IntegrationError as exc:
            out["hooks"][scope] = {"path": str(hpath), "error": str(exc)}
            continue
        keys = our_trust_keys(hpath, hooks_doc)
        if not keys:
            continue
        untrusted = [k for k, h in keys.items() if _table(states, k, "trusted_hash") != h]
        out["hooks"][scope] = {"path": str(hpath), "count": len(keys), "untrusted": untrusted}
    return out
