"""Output for people: aligned tables, local times, durations and sizes in plain words."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` wins); 120 when stdout is not a terminal."""
    try:
        columns = int(os.environ.get("COLUMNS", "0")) or os.get_terminal_size().columns
    except (OSError, ValueError):
        columns = 120
    return max(60, columns)


def stdout_is_terminal() -> bool:
    try:
        return os.isatty(1)
    except OSError:
        return False


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    width: int | None = None,
    overflow: str | None = None,
) -> str:
    """Columns padded to their widest cell. The last column, when it is wider than what the
    terminal leaves it, is ``"wrap"``-ped onto indented lines (the default on a terminal),
    ``"cut"`` with an ellipsis, or left whole (``"none"``: the default when stdout is a pipe
    or a file, so nothing a script reads is ever lost)."""
    if overflow is None:
        overflow = "wrap" if stdout_is_terminal() else "none"
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(value))
    limit = terminal_width() if width is None else width
    lead = sum(widths[:-1]) + 2 * (len(widths) - 1)
    last = max(20, limit - lead)
    lines = []
    for row in [list(headers), *cells]:
        padded = [value.ljust(widths[i]) for i, value in enumerate(row[:-1])]
        tail = row[-1] if row else ""
        if len(tail) <= last or overflow == "none":
            lines.append("  ".join([*padded, tail]).rstrip())
        elif overflow == "cut":
            lines.append("  ".join([*padded, tail[: last - 1] + "…"]).rstrip())
        else:
            import textwrap

            chunks = textwrap.wrap(tail, last, break_on_hyphens=False) or [""]
            lines.append("  ".join([*padded, chunks[0]]).rstrip())
            lines += [" " * lead + chunk for chunk in chunks[1:]]
    return "\n".join(lines)


BAR_CELLS = 5


def bar(value: Any) -> str:
    """A 0..1 score as a small bar for people (``0.62`` -> ``███▏ ``), fixed width; ASCII
    (``###--``) when stdout cannot encode the block characters."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return ""
    share = min(max(float(value), 0.0), 1.0)
    if not _unicode_ok():
        full = round(share * BAR_CELLS)
        return "#" * full + "-" * (BAR_CELLS - full)
    eighths = round(share * BAR_CELLS * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + ("" if part == 0 else " ▏▎▍▌▋▊▉"[part])
    return text.ljust(BAR_CELLS)


def _unicode_ok() -> bool:
    import sys

    try:
        "█▏".encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def score(value: Any) -> str:
    """``0.62 ███▏`` (the number, then its bar)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    return f"{float(value):.2f} {bar(value)}".rstrip()


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v) for v in value) or "-"
    return " ".join(str(value).split())  # one line per cell


def key_values(pairs: Sequence[tuple[str, Any]]) -> str:
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{k + ':':<{width + 1}} {_cell(v)}" for k, v in pairs)


def local_time(value: Any) -> str:
    """An ISO timestamp or epoch seconds as local time; anything else unchanged."""
    import datetime as dt  # only commands that show times pay for it

    moment: dt.datetime | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        moment = dt.datetime.fromtimestamp(value).astimezone()
    elif isinstance(value, str) and value:
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        if len(value) <= 10:  # a bare date stays a date
            return value
        moment = moment.astimezone() if moment.tzinfo else moment
    if moment is None:
        return "-" if value in (None, "") else str(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return "-"
    total = int(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


def size(n_bytes: Any) -> str:
    if not isinstance(n_bytes, int | float) or isinstance(n_bytes, bool):
        return "-"
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def home_relative(path: Any) -> str:
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def plural(count: int, word: str, plural_word: str | None = None) -> str:
    return f"{count} {word if count == 1 else (plural_word or word + 's')}"
