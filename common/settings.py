"""The core settings (``[core]`` of ``config.toml``), read the same way by the daemon and by
direct mode, so both paths run the core with the same settings.

::

    [core]
    decay_unit = "day"          # or "session"
    reinforce_on = "injected"   # or "relevant"; the earlier name injection = "all" | "relevant"

    [trust]
    directories = ["/srv/shared/project"]   # projects whose memory another user owns or can
                                            # write, trusted on purpose (maestroctl trust PATH)

A missing file means the defaults; a file that does not parse, or a bad value, is a
``SettingsError`` naming the file and the key.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.memory import Settings
from ..core.model import InputError
from .atomic import write_atomic
from .errors import MaestroError


class SettingsError(MaestroError):
    """config.toml's ``[core]`` table cannot be used (the message names the file and key)."""

    code = "config_error"


def _string(core: Mapping[str, Any], key: str, where: str) -> str | None:
    value = core.get(key)
    if value is not None and not isinstance(value, str):
        raise SettingsError(f"{where}: [core] {key} must be a string")
    return value


def core_settings(core: Mapping[str, Any], where: str) -> Settings:
    """``Settings`` from a parsed ``[core]`` table; ``where`` names the file in errors."""
    decay_unit = _string(core, "decay_unit", where)
    reinforce_on = _string(core, "reinforce_on", where)
    old = _string(core, "injection", where)
    if old is not None:
        if reinforce_on is not None:
            raise SettingsError(
                f"{where}: [core] set reinforce_on or its earlier name injection, not both"
            )
        reinforce_on = {"all": "injected", "relevant": "relevant"}.get(old)
        if reinforce_on is None:
            raise SettingsError(
                f"{where}: [core] injection must be 'relevant' or 'all', got {old!r}"
            )
    try:
        return Settings(
            decay_unit="day" if decay_unit is None else decay_unit,  # type: ignore[arg-type]
            reinforce_on="injected" if reinforce_on is None else reinforce_on,  # type: ignore[arg-type]
        )
    except InputError as exc:
        raise SettingsError(f"{where}: [core] {exc}") from exc


def trusted_directories(data: Mapping[str, Any], where: str) -> frozenset[str]:
    """``[trust] directories`` of a parsed ``config.toml``: canonical project folders (the
    rule that uses them is ``core/fsio.folder_problem``)."""
    table = data.get("trust", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{where}: [trust] must be a table")
    items = table.get("directories", [])
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise SettingsError(f"{where}: [trust] directories must be a list of folder paths")
    if not all(os.path.isabs(os.path.expanduser(i)) for i in items):
        raise SettingsError(f"{where}: [trust] directories must be absolute paths")
    return frozenset(os.path.realpath(os.path.expanduser(i)) for i in items)


def read_config(path: Path) -> dict[str, Any]:
    """Every table of ``config.toml`` at ``path``, parsed ({} when there is no file).

    The one reader of the file: the daemon's ``[maintenance]``, ``[core]``, ``[watcher]`` and
    ``[import]`` (``daemon/config.py``), direct mode's ``[core]`` (``load_core_settings``) and
    the tool import's ``[import]`` (``toolsources.import_config``) all start here. Raises
    ``SettingsError`` ("<path>: <why>") when the file cannot be read or parsed."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: {exc}") from exc


def load_core_settings(path: Path) -> Settings:
    """The ``[core]`` settings of ``config.toml`` at ``path``, with ``[trust]`` (defaults when
    it is missing)."""
    data = read_config(path)
    core = data.get("core", {})
    if not isinstance(core, dict):
        raise SettingsError(f"{path}: [core] must be a table")
    settings = core_settings(core, str(path))
    return dataclasses.replace(settings, trusted=trusted_directories(data, str(path)))


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (JSON's escapes are TOML's for these)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def add_trusted(path: Path, folder: str) -> bool:
    """Add ``folder`` (canonical) to ``[trust] directories`` of ``config.toml`` at ``path``;
    False when it is there already. The rest of the file is kept as written: a ``[trust]``
    table is appended, or its ``directories`` line replaced. The result is parsed again
    before it replaces the file (``SettingsError`` when an edit by hand is needed)."""

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    data = read_config(path)
    trusted = sorted(trusted_directories(data, str(path)))
    if folder in trusted:
        return False
    wanted = [*trusted, folder]
    line = "directories = [" + ", ".join(_toml_string(d) for d in wanted) + "]"
    lines = text.splitlines()
    start = next((i for i, x in enumerate(lines) if x.strip() == "[trust]"), None)
    if start is None:
        new = text + ("\n" if text and not text.endswith("\n") else "") + f"\n[trust]\n{line}\n"
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
            len(lines),
        )
        keys = [i for i in range(start + 1, end) if lines[i].split("=")[0].strip() == "directories"]
        if keys:
            lines[keys[0]] = line  # a one-line list; a list over several lines: by hand
        else:
            lines.insert(start + 1, line)
        new = "\n".join(lines) + "\n"
    try:
        check = tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: cannot add to [trust] ({exc}); add it by hand") from exc
    if sorted(trusted_directories(check, str(path))) != sorted(wanted):
        raise SettingsError(f"{path}: cannot add to [trust] directories; add {folder} by hand")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, new.encode("utf-8"), mode=0o600)
    return True
