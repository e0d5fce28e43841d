"""``config.toml``: the maintenance schedule and the core settings the daemon runs with.

::

    [maintenance]
    cron = "30 23 * * *"        # minute hour day month day-of-week (crontab numbering: 0 = Sun)
    # cron = "0 30 23 * * *"    # six fields: seconds first
    timezone = "Europe/Paris"   # default: the local time zone

    [core]
    decay_unit = "day"          # or "session": when memory ages (see ARCHITECTURE.md)
    reinforce_on = "injected"   # or "relevant": which entries of a context count as used

    [watcher]
    force_polling = false       # poll instead of inotify (network filesystems)

    [http]                      # the loopback HTTP door (common/httpdoor.py)
    enabled = true              # false: none
    port = 24810                # default: derived from the uid and the runtime dir; 0: any

    [import]                    # the agent tools' own memories (common/toolsources.py)
    claude = true               # false: never import Claude Code's (also gemini, codex)
    claude_dir = "~/elsewhere"  # a folder other than the computed one (also gemini_dir …)

Read at start and on SIGHUP, every table alike (``[import]`` too: ``Config.imports``, which the
writer and the watcher use); ``[watcher] force_polling`` takes effect at the next start. A
missing file means the defaults; a file that does not parse is an error (at start: refuse;
on SIGHUP: keep the running configuration and log why). ``[http]`` too takes effect at the
next start. The ``[core]`` settings also apply to
direct mode: the client reads the same file (``common.settings``), so both paths run the same
core with the same settings (``common.settings`` reads ``[core]`` for both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..common.errors import MaestroError
from ..common.httpdoor import door_settings
from ..common.settings import SettingsError, core_settings, read_config, trusted_directories
from ..common.toolsources import check_import_config
from ..core.memory import Settings
from ..core.model import InputError

DEFAULT_CRON = "30 23 * * *"
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")


class ConfigError(MaestroError):
    """config.toml cannot be used: the daemon refuses to start (or keeps the old settings on
    SIGHUP), naming the file and the table."""

    code = "config_error"


@dataclass(frozen=True)
class CronSpec:
    """A crontab expression split into APScheduler ``CronTrigger`` fields."""

    second: str
    minute: str
    hour: str
    day: str
    month: str
    day_of_week: str

    def fields(self) -> dict[str, str]:
        return {
            "second": self.second,
            "minute": self.minute,
            "hour": self.hour,
            "day": self.day,
            "month": self.month,
            "day_of_week": self.day_of_week,
        }


def _weekday(word: str) -> int:
    """One crontab weekday, a number 0-7 (0 and 7 are Sunday) or a name, as 0-6."""
    name = word.lower()
    if name in _WEEKDAYS:
        return _WEEKDAYS.index(name)
    if not word.isdigit():
        raise ConfigError(f"day of week {word!r} is not a number 0-7 or a name (sun ... sat)")
    number = int(word)
    if number > 7:
        raise ConfigError(f"day of week {number} is out of range 0-7")
    return number % 7


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field as APScheduler 3.x must be told it.

    Crontab counts weekdays from Sunday = 0 (7 is Sunday too), APScheduler 3.x from Monday, so
    a number or a step passed through would land on other days (``*/2`` is Sun, Tue, Thu, Sat
    to crontab and Mon, Wed, Fri, Sun to APScheduler). Every form (``*``, ``*/n``, ``a``,
    ``a-b``, ``a-b/n``, names, lists of these) is expanded here, with crontab's numbering, into
    the days it means, and handed over as names, which mean the same to both.
    """
    if field == "*":
        return field
    days: set[int] = set()
    for part in field.split(","):
        span, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ConfigError(f"day of week {part!r}: the step must be a number from 1")
            step = int(step_text)
        if span == "*":
            first, last = 0, 7
        else:
            low, dash, high = span.partition("-")
            first = _weekday(low)
            last = _weekday(high) if dash else (7 if slash else first)  # '1/2': 1-7/2
            if dash and high.isdigit() and int(high) == 7:
                last = 7  # 'fri-7' runs Friday to Sunday
            if last < first:
                raise ConfigError(f"day of week {part!r}: a range runs from low to high")
        days.update(day % 7 for day in range(first, last + 1, step))
    return ",".join(_WEEKDAYS[day] for day in sorted(days))


def parse_cron(expr: str) -> CronSpec:
    parts = expr.split()
    if len(parts) == 5:
        parts = ["0", *parts]
    if len(parts) != 6:
        raise ConfigError(
            f"cron expression {expr!r} must have 5 fields (minute hour day month "
            "day-of-week) or 6 (seconds first)"
        )
    second, minute, hour, day, month, dow = parts
    return CronSpec(second, minute, hour, day, month, crontab_weekdays(dow))


@dataclass(frozen=True)
class Config:
    cron: str = DEFAULT_CRON
    timezone: str | None = None
    decay_unit: str = "day"
    reinforce_on: str = "injected"
    force_polling: bool = False
    # [import], checked (common/toolsources.check_import_config); {}: every tool, default folders
    imports: dict[str, Any] = field(default_factory=dict)
    trusted: frozenset[str] = frozenset()  # [trust] directories (common/settings.py)
    http_enabled: bool = True  # [http] (common/httpdoor.py); at the next start
    http_port: int | None = None  # None: common/httpdoor.default_port; 0: any free port

    @property
    def cron_spec(self) -> CronSpec:
        return parse_cron(self.cron)

    def settings(self) -> Settings:
        return Settings(
            decay_unit=self.decay_unit,  # type: ignore[arg-type]
            reinforce_on=self.reinforce_on,  # type: ignore[arg-type]
            trusted=self.trusted,
        )


def _table(data: dict[str, Any], name: str) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] must be a table")
    return table


def _string(table: dict[str, Any], section: str, key: str, default: str | None) -> str | None:
    value = table.get(key, default)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"[{section}] {key} must be a string")
    return value


def load_config(path: Path) -> Config:
    try:
        data = read_config(path)
    except SettingsError as exc:
        raise ConfigError(exc.message) from exc
    if not data:
        return Config()
    maintenance = _table(data, "maintenance")
    core = _table(data, "core")
    watcher = _table(data, "watcher")
    try:
        imports = check_import_config(_table(data, "import"))
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    cron = _string(maintenance, "maintenance", "cron", DEFAULT_CRON) or DEFAULT_CRON
    timezone = _string(maintenance, "maintenance", "timezone", None)
    try:
        settings = core_settings(core, str(path))
        trusted = trusted_directories(data, str(path))
    except SettingsError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        http_enabled, http_port = door_settings(data)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    force_polling = watcher.get("force_polling", False)
    if not isinstance(force_polling, bool):
        raise ConfigError("[watcher] force_polling must be true or false")
    config = Config(
        cron=cron,
        timezone=timezone,
        decay_unit=settings.decay_unit,
        reinforce_on=settings.reinforce_on,
        force_polling=force_polling,
        imports=dict(imports),
        trusted=trusted,
        http_enabled=http_enabled,
        http_port=http_port,
    )
    try:
        parse_cron(cron)
        config.settings()
    except InputError as exc:
        raise ConfigError(f"{path}: [core] {exc}") from exc
    except ConfigError as exc:
        raise ConfigError(f"{path}: [maintenance] {exc}") from exc
    if timezone is not None:
        _check_timezone(path, timezone)
    return config


def _check_timezone(path: Path, name: str) -> None:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"{path}: [maintenance] unknown timezone {name!r}") from exc
