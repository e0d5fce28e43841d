"""Characters a person cannot see: which they are, taken out of what is saved, shown at output.

What a person reads in ``maestroctl entries`` must be what the model is served. So these never
reach a memory file through any door, and, when a person typed one into a file by hand, every
output shows it as a visible escape instead of letting the terminal act on it:

* C0 control characters except tab and newline (ESC, BEL, BS, CR …), DEL and the C1 controls
  (U+0080-U+009F): a terminal obeys them (``ESC[8m`` hides the rest of the line);
* every format character (Unicode category Cf): bidirectional controls (U+202A-U+202E,
  U+2066-U+2069, U+200E/U+200F, U+061C), zero-width space and joiners (U+200B-U+200D),
  U+2060, U+FEFF, the soft hyphen U+00AD, the tag characters (U+E0000-U+E007F) …;
* the line and paragraph separators U+2028 and U+2029, which end a line for some readers and
  not for others.

``remove_hidden`` gives the text without them and the names of what it removed, for the reply
("removed 1 control character (ESC)"); ``show_hidden`` renders them visibly (``\\x1b``,
``<U+202E>``). NUL is not removed: ``validate_text`` refuses a text holding one (binary data,
not a typing slip).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# The set, spelled as ranges (a scan of all of Unicode at import would cost a hook ~0.3 s);
# tests/core/test_hidden.py checks it equals the definition above for this Python's Unicode.
_RANGES = (
    "\x01-\x08\x0b-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"
)
HIDDEN = re.compile(f"[{_RANGES}]")

# Names of the C0 controls and DEL, as a person meets them in docs ("ESC", "BEL").
_C0_NAMES = (
    "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI "
    "DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US"
).split()


def is_hidden(ch: str) -> bool:
    """The definition, one character at a time (the regex above is its fast form)."""
    if ch in "\t\n" or ch == "\x00":
        return False
    category = unicodedata.category(ch)
    return category in ("Cc", "Cf", "Zl", "Zp") or 0xE0000 <= ord(ch) <= 0xE007F


def char_name(ch: str) -> str:
    """``ESC``, ``DEL``, ``U+202E RIGHT-TO-LEFT OVERRIDE``, ``U+0085``."""
    cp = ord(ch)
    if cp < 0x20:
        return _C0_NAMES[cp]
    if cp == 0x7F:
        return "DEL"
    name = unicodedata.name(ch, "")
    return f"U+{cp:04X} {name}" if name else f"U+{cp:04X}"


def remove_hidden(text: str) -> tuple[str, list[str]]:
    """``text`` without its hidden characters, and the name of each one removed (in order)."""
    if text.isprintable() or not HIDDEN.search(text):
        return text, []
    removed = [char_name(m.group()) for m in HIDDEN.finditer(text)]
    return HIDDEN.sub("", text), removed


def describe_removed(removed: list[str]) -> str:
    """ "removed 1 control character (ESC)", "removed 3 invisible characters (ESC x2, …)"."""
    if not removed:
        return ""
    counts: dict[str, int] = {}
    for name in removed:
        counts[name] = counts.get(name, 0) + 1
    names = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts.items())
    controls = all(n in _C0_NAMES or n == "DEL" for n in counts)
    what = "control character" if controls else "invisible character"
    plural = "" if len(removed) == 1 else "s"
    return f"removed {len(removed)} {what}{plural} ({names})"


def _visible(ch: str) -> str:
    cp = ord(ch)
    return f"\\x{cp:02x}" if cp < 0x100 and unicodedata.category(ch) == "Cc" else f"<U+{cp:04X}>"


def show_hidden(text: str) -> str:
    """``text`` with each hidden character shown as an escape: ``\\x1b``, ``<U+202E>``."""
    if text.isprintable() or not HIDDEN.search(text):
        return text
    return HIDDEN.sub(lambda m: _visible(m.group()), text)


def shown_value(value: Any) -> Any:
    """``show_hidden`` applied to every string inside a JSON-like value (the viewer's replies)."""
    if isinstance(value, str):
        return show_hidden(value)
    if isinstance(value, list | tuple):
        return [shown_value(v) for v in value]
    if isinstance(value, dict):
        return {k: shown_value(v) for k, v in value.items()}
    return value
