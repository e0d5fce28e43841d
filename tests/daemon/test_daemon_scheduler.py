"""End-of-day maintenance fired by its real cron trigger, and its outcome in status."""

from __future__ import annotations

import datetime as dt
import json
import signal
from pathlib import Path
from typing import Any

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle, wait_for

from maestro_memory.core import MemoryStore
from maestro_memory.daemon.config import Config, ConfigError, load_config, parse_cron

LEAD_SECONDS = 4


def near_future(seconds: int = LEAD_SECONDS) -> tuple[str, str]:
    """A six-field cron (seconds first) for one moment soon, and that moment in ISO form."""
    at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).replace(microsecond=0)
    cron = f"{at.second} {at.minute} {at.hour} {at.day} {at.month} *"
    return cron, at.isoformat()


def config_for(cron: str) -> str:
    return f'[maintenance]\ncron = "{cron}"\ntimezone = "UTC"\n'


def schedule_soon(daemon: DaemonHandle) -> str:
    """Point the maintenance job at a moment a few seconds away, through config.toml and
    SIGHUP (the real reload path); returns that moment. Retried if a slow machine let the
    moment pass before the reload was applied."""
    # The lead grows on each retry: on a loaded machine a reload can take longer than 4 s.
    for lead in (LEAD_SECONDS, LEAD_SECONDS * 3, LEAD_SECONDS * 10):
        cron, at = near_future(lead)
        daemon.paths.config_path.write_text(config_for(cron))
        daemon.signal(signal.SIGHUP)
        seen = wait_for(
            lambda at=at: _next_or_late(daemon, at),  # type: ignore[misc]
            message="the rescheduled job",
        )
        if seen == at:
            return at
    pytest.fail("could not schedule the job in the near future")


def _next_or_late(daemon: DaemonHandle, at: str) -> str | None:
    current: str | None = daemon.status()["maintenance"]["next_run"]
    if current == at:
        return at
    if dt.datetime.now(dt.UTC) > dt.datetime.fromisoformat(at):
        return "late"
    return None


def last_run(daemon: DaemonHandle, project: Path) -> dict[str, Any] | None:
    run: dict[str, Any] | None = daemon.status()["projects"][str(project)]["maintenance"]["last"]
    return run


def with_flagged_entry(project: Path) -> None:
    MemoryStore(project).initialize("setup")
    path = project / ".maestro" / "memory" / "semantic.md"
    path.write_text(
        path.read_text().replace(
            "## Project Context\n",
            "## Project Context\n- [2026-01-01] [0.10] Old rule nobody follows any more\n",
            1,
        )
    )


def test_scheduled_maintenance_runs_and_is_recorded(
    daemon_factory: DaemonFactory, project: Path
) -> None:
    with_flagged_entry(project)
    daemon = daemon_factory(config=config_for("0 0 1 1 *"))
    daemon.register(project)
    assert daemon.status()["maintenance"]["cron"] == "0 0 1 1 *"  # read at start
    at = schedule_soon(daemon)
    assert daemon.status()["projects"][str(project)]["maintenance"]["next"] == at
    run = wait_for(
        lambda: last_run(daemon, project),
        timeout=LEAD_SECONDS * 10 + 120,  # a deadline to fail by, not a timing
        message="the scheduled maintenance",
    )
    assert run["outcome"] == "ok", run
    assert run["counts"]["remove"] + run["counts"]["archive"] == 1
    assert (
        "Old rule nobody follows"
        not in (project / ".maestro" / "memory" / "semantic.md")
        .read_text()
        .split("## Maintenance Log")[0]
    )
    # status shows the outcome first; the history file is written right after: wait for it.
    history = wait_for(
        lambda: daemon.paths.jobs_path.exists() and json.loads(daemon.paths.jobs_path.read_text()),
        message="the maintenance history file",
    )
    assert history["projects"][str(project)]["outcome"] == "ok"
    # After the run the one-shot schedule has no future date this year but the job remains.
    assert daemon.result("ping")["pong"]
    records = daemon.result("log", project)["records"]
    assert any(r["op"] == "maintenance" and r["changes"] for r in records)


def test_failing_maintenance_is_failed_in_status(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    daemon.result("initialize", project, session_id="s1")
    semantic = project / ".maestro" / "memory" / "semantic.md"
    semantic.unlink()
    semantic.mkdir()  # fails as root too: a directory cannot be read as the file
    schedule_soon(daemon)
    run = wait_for(
        lambda: last_run(daemon, project),
        timeout=LEAD_SECONDS * 10 + 120,  # a deadline to fail by, not a timing
        message="the scheduled maintenance",
    )
    assert run["outcome"] == "failed"
    assert "semantic.md" in run["message"]
    assert daemon.result("ping")["pong"]


def test_history_survives_restart(daemon_factory: DaemonFactory, project: Path) -> None:
    first = daemon_factory()
    first.register(project)
    schedule_soon(first)
    wait_for(
        lambda: last_run(first, project),
        timeout=LEAD_SECONDS * 10 + 120,  # a deadline to fail by, not a timing
        message="the scheduled maintenance",
    )
    assert first.stop() == 0
    first.paths.config_path.unlink()
    second = daemon_factory()
    assert last_run(second, project) is not None
    assert second.status()["maintenance"]["cron"] == "30 23 * * *"


def test_parse_cron_fields() -> None:
    five = parse_cron("30 23 * * *")
    assert (five.second, five.minute, five.hour, five.day_of_week) == ("0", "30", "23", "*")
    six = parse_cron("5 30 23 * * *")
    assert six.second == "5"
    with pytest.raises(ConfigError):
        parse_cron("* * *")


# Crontab's meaning of each day-of-week form (Sunday = 0 = 7), as crontab(5) defines it.
CRONTAB_DAYS = {
    "*": "sun mon tue wed thu fri sat",
    "*/2": "sun tue thu sat",
    "*/3": "sun wed sat",
    "1-5": "mon tue wed thu fri",
    "1-5/2": "mon wed fri",
    "0": "sun",
    "7": "sun",
    "0,7": "sun",
    "5-7": "fri sat sun",
    "1/2": "mon wed fri sun",
    "6,0": "sun sat",
    "mon-fri": "mon tue wed thu fri",
    "Sat,sun": "sun sat",
    "mon,3-4,sat": "mon wed thu sat",
}


@pytest.mark.parametrize("field", sorted(CRONTAB_DAYS))
def test_day_of_week_uses_crontab_numbering_in_every_form(field: str) -> None:
    from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]

    trigger = CronTrigger(**parse_cron(f"0 9 * * {field}").fields(), timezone="UTC")
    start = dt.datetime(2026, 1, 4, tzinfo=dt.UTC)  # a Sunday
    fired: list[str] = []
    previous = None
    now = start
    while (now - start).days < 7:
        now = trigger.get_next_fire_time(previous, now)
        if (now - start).days >= 7:
            break
        fired.append(now.strftime("%a").lower())
        previous, now = now, now + dt.timedelta(seconds=1)
    week = "sun mon tue wed thu fri sat".split()
    assert fired == sorted(CRONTAB_DAYS[field].split(), key=week.index), field


@pytest.mark.parametrize("field", ["8", "*/0", "5-1", "fun", "1-", "*/x"])
def test_a_bad_day_of_week_is_refused(field: str) -> None:
    with pytest.raises(ConfigError, match="day of week"):
        parse_cron(f"0 9 * * {field}")


def test_load_config(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert load_config(path).cron == "30 23 * * *"
    path.write_text(
        '[maintenance]\ncron = "0 22 * * *"\ntimezone = "Europe/Paris"\n'
        '[core]\ndecay_unit = "session"\nreinforce_on = "relevant"\n'
    )
    config = load_config(path)
    assert (config.cron, config.timezone) == ("0 22 * * *", "Europe/Paris")
    assert (config.decay_unit, config.reinforce_on) == ("session", "relevant")
    assert (load_config(tmp_path / "none.toml").decay_unit, Config().reinforce_on) == (
        "day",
        "injected",
    )
    path.write_text('[core]\ninjection = "all"\n')  # the setting's earlier name
    assert load_config(path).reinforce_on == "injected"
    for bad in (
        '[core]\ninjection = "some"\n',
        '[core]\ninjection = "all"\nreinforce_on = "injected"\n',
        '[core]\nreinforce_on = "all"\n',
        '[core]\ndecay_unit = "week"\n',
        '[maintenance]\ntimezone = "Mars/Base"\n',
        "not toml at all = =",
        "[maintenance]\ncron = 5\n",
    ):
        path.write_text(bad)
        with pytest.raises(ConfigError):
            load_config(path)
