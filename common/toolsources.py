"""Where each agent tool keeps its own memory for a project, and reading it (read only).

The I/O edge of ``core/toolmem.py``: find the folders the way each tool computes them, read
their files into ``Note`` values, and tell cheaply whether anything changed since the last
import (the session-start hook asks that before it starts a transaction). Nothing here ever
writes to, creates or locks anything in a tool's folder.

* **Claude Code**: ``~/.claude/projects/<key>/memory/*.md`` (``MEMORY.md`` is its index, not a
  fact), ``<key>`` from the project's git root (``toolmem.claude_project_key``); Claude Code's
  own ``autoMemoryDirectory`` in ``~/.claude/settings.json`` moves it.
* **Gemini CLI**: ``~/.gemini/tmp/<slug>/memory/MEMORY.md``, the slug from
  ``~/.gemini/projects.json`` (``{"projects": {"<abs path>": "<slug>"}}``).
* **Codex**: ``$CODEX_HOME/memories/*.md`` (``~/.codex``), when its memories feature made it.

``config.toml`` (the daemon's, ``maestroctl doctor`` shows the path)::

    [import]
    claude = true                 # false: never import Claude Code's memory
    gemini = true
    codex = true
    claude_dir = "~/elsewhere"    # override a computed folder (also gemini_dir, codex_dir)
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.toolmem import (
    CLAUDE_INDEX,
    Note,
    bullet_notes,
    claude_note,
    claude_project_key,
    index_lines,
    index_targets,
)
from . import paths as paths_mod
from .agents import AGENTS as TOOLS
from .layout import MEMORY_DIR, STATE_FILE, memory_dir

MAX_FILE_BYTES = 256 * 1024  # a memory note is small; a bigger file is reported, not read
MAX_FILES = 500


@dataclass
class Location:
    tool: str
    folder: Path | None  # None: the tool has no folder for this project (reason says why)
    enabled: bool
    how: str  # how the folder was found (computed, config, the tool's own setting)

    @property
    def exists(self) -> bool:
        return self.folder is not None and self.folder.is_dir()

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "folder": str(self.folder) if self.folder else None,
            "exists": self.exists,
            "enabled": self.enabled,
            "how": self.how,
        }


def check_import_config(table: object) -> dict[str, Any]:
    """``table`` (the ``[import]`` table) if every key is known and has the right type; else
    ValueError naming the key (the daemon refuses such a config at start, direct mode and
    ``doctor`` say so)."""
    if not isinstance(table, dict):
        raise ValueError("[import] must be a table")
    for key, value in table.items():
        if key in TOOLS:
            if not isinstance(value, bool):
                raise ValueError(f"[import] {key} must be true or false, got {value!r}")
        elif key.endswith("_dir") and key[: -len("_dir")] in TOOLS:
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"[import] {key} must be a non-empty path")
            if not (value.startswith("~/") or os.path.isabs(value)):
                raise ValueError(f"[import] {key} must be absolute or start with ~/, got {value!r}")
        else:
            known = ", ".join([*TOOLS, *(f"{t}_dir" for t in TOOLS)])
            raise ValueError(f"[import] unknown key {key!r}; known: {known}")
    return table


def import_config(config_path: Path | None = None) -> dict[str, Any]:
    """The ``[import]`` table of ``config.toml`` ({} when there is no file: the defaults).
    ValueError when the file does not parse or the table is wrong."""
    path = config_path if config_path is not None else paths_mod.resolve_safe().config_path
    from .settings import SettingsError, read_config

    try:
        data = read_config(path)
    except SettingsError as exc:
        raise ValueError(exc.message) from exc
    try:
        return check_import_config(data.get("import", {}))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc


def git_root(project: Path) -> Path:
    """The project's git root as Claude Code keys it: the main worktree's root for a linked
    worktree (``.git`` a file pointing into ``<root>/.git/worktrees/``), else the nearest
    folder holding ``.git``, else the project itself."""
    here = project
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return folder
            gitdir = Path(line.removeprefix("gitdir:").strip())
            if not gitdir.is_absolute():
                gitdir = (folder / gitdir).resolve()
            if gitdir.parent.name == "worktrees" and gitdir.parent.parent.name == ".git":
                return gitdir.parent.parent.parent
            return folder
    return project


def _expand(value: str, home: Path) -> Path:
    return home / value[2:] if value.startswith("~/") else Path(value)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None


def locate(project: Path, home: Path, config: dict[str, Any]) -> dict[str, Location]:
    """Each tool's memory folder for ``project`` (an absolute, resolved path)."""
    out: dict[str, Location] = {}
    for tool in TOOLS:
        enabled = config.get(tool, True) is not False
        override = config.get(f"{tool}_dir")
        if isinstance(override, str) and override:
            out[tool] = Location(tool, _expand(override, home), enabled, "config.toml")
            continue
        if tool == "claude":
            settings = _json(home / ".claude" / "settings.json")
            moved = settings.get("autoMemoryDirectory") if isinstance(settings, dict) else None
            if isinstance(moved, str) and moved:
                out[tool] = Location(
                    tool, _expand(moved, home), enabled, "autoMemoryDirectory in settings.json"
                )
                continue
            key = claude_project_key(str(git_root(project)))
            folder = home / ".claude" / "projects" / key / "memory"
            out[tool] = Location(tool, folder, enabled, "computed from the git root")
        elif tool == "gemini":
            registry = _json(home / ".gemini" / "projects.json")
            projects = registry.get("projects") if isinstance(registry, dict) else None
            slug = None
            if isinstance(projects, dict):
                for candidate in (project, git_root(project)):
                    value = projects.get(str(candidate))
                    if isinstance(value, str) and value and "/" not in value and value != "..":
                        slug = value
                        break
            gemini_folder = home / ".gemini" / "tmp" / slug / "memory" if slug else None
            how = "slug from ~/.gemini/projects.json" if slug else "project not in projects.json"
            out[tool] = Location(tool, gemini_folder, enabled, how)
        else:
            codex_home = os.environ.get("CODEX_HOME")
            base = Path(codex_home) if codex_home else home / ".codex"
            out[tool] = Location(tool, base / "memories", enabled, "$CODEX_HOME/memories")
    return out


GEMINI_REGISTRY = "projects.json"


def watch_points(
    locations: dict[str, Location], home: Path
) -> list[tuple[Path, frozenset[str] | None]]:
    """Where to watch to see the enabled tools' memories change: (directory, the entry names
    that count, None for any ``*.md``). A folder that exists is watched itself; one that does
    not yet, through its nearest existing ancestor, for the next name down the path (the
    daemon re-arms after each event, so the watch walks down as the folders appear). Gemini
    without a slug for the project: ``~/.gemini`` for ``projects.json`` (Gemini adds the
    project there on its first run in it). Stats only."""
    out: list[tuple[Path, frozenset[str] | None]] = []
    for loc in locations.values():
        if not loc.enabled:
            continue
        if loc.folder is None:
            if loc.tool == "gemini":
                out.append(_nearest(home / ".gemini" / GEMINI_REGISTRY))
            continue
        if loc.folder.is_dir():
            out.append((loc.folder, None))
        else:
            out.append(_nearest(loc.folder))
    return out


def _nearest(path: Path) -> tuple[Path, frozenset[str] | None]:
    """The nearest existing directory above ``path``, and the name below it on the path."""
    child = path
    for parent in path.parents:
        if parent.is_dir():
            return parent, frozenset({child.name})
        child = parent
    return Path(path.anchor or "/"), frozenset({child.name})


def _signature(info: os.stat_result) -> str:
    return f"{info.st_mtime_ns}:{info.st_size}"


def _files(folder: Path) -> list[tuple[str, Path, os.stat_result]]:
    """The regular ``*.md`` files directly in ``folder`` (symlinks are not followed)."""
    out = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names[:MAX_FILES]:
        if not name.endswith(".md") or name.startswith("."):
            continue
        path = folder / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            out.append((name, path, info))
    return out


def _read(path: Path, info: os.stat_result) -> str | None:
    if info.st_size > MAX_FILE_BYTES:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            return f.read(MAX_FILE_BYTES + 1).decode("utf-8", "replace")
    except OSError:
        return None


@dataclass
class Scan:
    notes: list[Note]
    tools: list[str]  # the tools whose folder was read (their missing sources are "gone")
    index: dict[str, dict[str, int]]  # tool -> {"files": n, "index_lines": m}
    # tool -> {"sig": the index file's signature ("" none), "files": the files it points to}
    indexes: dict[str, dict[str, Any]] = field(default_factory=dict)


def _unreadable(tool: str, name: str, sig: str) -> Note:
    note = Note(tool, f"{tool}:{name}", "", "project_context", sig)
    note.blocked = f"unreadable or larger than {MAX_FILE_BYTES} bytes"
    return note


def scan(locations: dict[str, Location], tools: list[str]) -> Scan:
    result = Scan([], [], {})
    for tool in tools:
        loc = locations[tool]
        if not loc.enabled or loc.folder is None or not loc.exists:
            continue
        result.tools.append(tool)
        files = _files(loc.folder)
        if tool == "claude":
            facts = [f for f in files if f[0] != CLAUDE_INDEX]
            index = next((f for f in files if f[0] == CLAUDE_INDEX), None)
            index_text = _read(index[1], index[2]) if index else None
            result.index[tool] = {
                "files": len(facts),
                "index_lines": index_lines(index_text) if index_text else 0,
            }
            result.indexes[tool] = {
                "sig": _signature(index[2]) if index else "",
                "files": index_targets(index_text) if index_text else [],
            }
            for name, path, info in facts:
                text = _read(path, info)
                sig = _signature(info)
                read = claude_note(name, text, sig) if text is not None else None
                result.notes.append(read or _unreadable(tool, name, sig))
        else:
            chosen = [f for f in files if f[0] == "MEMORY.md"] if tool == "gemini" else files
            for name, path, info in chosen:
                text = _read(path, info)
                if text is not None:
                    result.notes.extend(bullet_notes(tool, name, text, _signature(info)))
    return result


def _state_text(project: Path) -> str:
    """``.state.json`` as text, never through a link (the folders on the way included: a
    memory folder that is not where its path says is ``OSError``; the core refuses it)."""
    folder = memory_dir(project)
    if os.path.realpath(folder) != os.path.join(os.path.realpath(project), MEMORY_DIR):
        raise OSError(errno.ELOOP, f"{folder} is reached through a link")
    fd = os.open(folder / STATE_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, encoding="utf-8") as src:
        return src.read()


def needs_import(project: Path, locations: dict[str, Location], tools: list[str]) -> bool:
    """Whether an import could change anything: a tool file whose signature the ledger in
    ``.state.json`` does not hold, or a ledger source whose file is gone. Stats only (no file
    is read but the ledger), for the session-start hook."""
    try:
        data = json.loads(_state_text(project))
        ledger = data.get("imports", {}) if isinstance(data, dict) else {}
        indexes = data.get("indexes", {}) if isinstance(data, dict) else {}
    except (OSError, ValueError, RecursionError):
        ledger, indexes = {}, {}
    if not isinstance(ledger, dict):
        ledger = {}
    for tool in tools:
        loc = locations[tool]
        if not loc.enabled or loc.folder is None or not loc.exists:
            continue
        seen_sigs = {
            v.get("sig")
            for k, v in ledger.items()
            if k.startswith(f"{tool}:") and isinstance(v, dict)
        }
        listed = _files(loc.folder)
        files = [f for f in listed if tool != "claude" or f[0] != CLAUDE_INDEX]
        if tool == "gemini":
            files = [f for f in files if f[0] == "MEMORY.md"]
        names = {name for name, _, _ in files}
        if tool == "claude":  # its index changed: what it loads changed
            index = next((f for f in listed if f[0] == CLAUDE_INDEX), None)
            known = indexes.get(tool) if isinstance(indexes, dict) else None
            sig = _signature(index[2]) if index else ""
            if not isinstance(known, dict) or known.get("sig") != sig:
                return True
        for _, _, info in files:
            if _signature(info) not in seen_sigs:
                return True
        for src, led in ledger.items():
            gone = isinstance(led, dict) and "gone" in led  # already flagged
            file_name = src[len(tool) + 1 :].split("#")[0]
            if src.startswith(f"{tool}:") and not gone and file_name not in names:
                return True
    return False
