"""Evidence: the project paths a semantic entry names, and whether the working tree still has
them (pure: texts and what the edge saw in, decisions out).

A fact such as "Session tokens are validated in `src/auth.py`" is only as true as the file it
names. The paths are *derived from the text* every time (never stored on the entry's line, so
they cannot go stale or disagree with an edited text). What a check found is kept in the
sidecar ``.state.json`` (``Ledger``), because it is a property of this working tree (a branch,
a clone), not of the memory:

* ``seen``: named paths a check found present. A missing path counts as evidence only once it
  was seen, or git saw it deleted or renamed: a path that never existed here ("templates go in
  `templates/app/`" as general advice) proves nothing;
* ``missing``: named paths found gone: ``""`` (no longer exists) or the path git saw it renamed
  to. An entry naming one is *stale*: it leaves the context block and waits in the review queue
  with the reason; nothing is deleted;
* ``absent``: missing paths never seen (not evidence); remembered so that the next check does
  not ask git about them again;
* ``kept``: per entry, missing paths a person reviewed and kept the entry anyway.

What counts as a path (``extract``): a token with a ``/`` that is not a URL, a domain, a flag,
a glob, a placeholder, an environment variable, a home path, a date or a fraction. Outside
backticks prose is full of ``and/or``, ``read/write``, ``client/server``: a bare token counts
only with a file extension on its last part (``src/auth.py``), a trailing slash (``tests/``),
a leading ``./`` or three parts or more. A name without a folder (``auth.py``) is not checked:
it could live anywhere in the tree, and a tree scan is what this must not do. An absolute path
counts only inside the project (then made relative); ``..`` that leaves it drops the path.

Cheap by construction: one stat per distinct named path at session start and at maintenance
(``common/worktree.py``), git only when a path is newly missing, nothing on the read path.
"""

from __future__ import annotations

import dataclasses
import functools
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .lexicon import CODE_SPAN

# A stale entry's proposal: it waits for a person (maintenance without decisions skips it).
WAITING: tuple[str, ...] = ("rewrite", "review")
SEEN_LIMIT = 5000  # the ledger keeps at most this many seen paths (only those still named)
RENAME_HOPS = 20  # a -> b -> c … followed at most this far
EXTRACT_CACHE = 8192  # texts whose paths are remembered (one entry each, a few hundred bytes)

_TOKEN = re.compile(r"\S+")
_STRIP_LEAD = "([{<\"'"
_STRIP_TRAIL = ".,;:!?)]}>\"'"
_LINE_SUFFIX = re.compile(r"(?::\d+){1,2}$|#L?\d+(?:-L?\d+)?$")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
_DOMAIN = re.compile(r"^(?:[a-z0-9-]+\.)+[a-z]{2,24}$", re.IGNORECASE)
_NUMERIC = re.compile(r"^[\d.,%]+$")
_FORBIDDEN = set("*?[]{}<>$=|;&@~\\,'\"()")


@dataclass(frozen=True)
class Named:
    """A path as the text spells it (``raw``) and as the project knows it (``path``: relative
    to the project root, ``/``-separated, a folder without its trailing slash)."""

    raw: str
    path: str
    folder: bool = False  # written with a trailing slash


def _clean(token: str) -> str:
    token = token.lstrip(_STRIP_LEAD).rstrip(_STRIP_TRAIL)
    return _LINE_SUFFIX.sub("", token)


def _relative(token: str, root: str) -> tuple[str, bool] | None:
    """``token`` as a project-relative path (and whether it names a folder), or None."""
    folder = token.endswith("/")
    if token.startswith("/"):
        if not root:
            return None
        base = posixpath.normpath(root)
        full = posixpath.normpath(token)
        if full == base or not full.startswith(base.rstrip("/") + "/"):
            return None  # outside the project: not evidence about it
        rel = full[len(base.rstrip("/")) + 1 :]
    else:
        rel = posixpath.normpath(token)
    if rel in (".", "") or rel == ".." or rel.startswith("../"):
        return None
    return rel, folder


def _pathlike(token: str, *, quoted: bool) -> bool:
    if "/" not in token or "://" in token or token.startswith(("-", "//")):
        return False
    if any(ch in _FORBIDDEN for ch in token):
        return False
    parts = [p for p in token.split("/") if p]
    # 12/05/2024, 1/2, 50/50: numbers, not folders
    if not parts or any(_NUMERIC.match(p) for p in parts if p not in (".", "..")):
        return False
    if _DOMAIN.match(parts[0]) and not token.startswith("./"):
        return False  # github.com/owner/repo, docs.rs/x: a web address without a scheme
    if quoted or token.startswith("./") or token.startswith("/"):
        return True
    return bool(token.endswith("/") or _EXTENSION.search(parts[-1]) or len(parts) >= 3)


def extract(text: str, root: str = "") -> list[Named]:
    """The project paths ``text`` names, in order, each once. ``root``: the project's absolute
    path (absolute paths inside it are kept, made relative; without it they are dropped)."""
    if "/" not in text:  # most entries: no path at all
        return []
    return list(_extract(text, root))


@functools.lru_cache(maxsize=EXTRACT_CACHE)
def _extract(text: str, root: str) -> tuple[Named, ...]:
    """Cached: a check at every session start parses the same texts again."""
    found: dict[str, Named] = {}

    def consider(token: str, quoted: bool) -> None:
        token = _clean(token)
        if not _pathlike(token, quoted=quoted):
            return
        rel = _relative(token, root)
        if rel is not None and rel[0] not in found:
            found[rel[0]] = Named(token, rel[0], rel[1])

    spans = [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)]
    for m in CODE_SPAN.finditer(text):
        for token in _TOKEN.findall(m.group(1)):
            consider(token, True)
    outside = text
    for start, end in reversed(spans):
        outside = outside[:start] + " " + outside[end:]
    for token in _TOKEN.findall(outside):
        consider(token, False)
    return tuple(found.values())


def named_paths(text: str, root: str = "") -> list[str]:
    return [n.path for n in extract(text, root)]


# -- the ledger ----------------------------------------------------------------------------
@dataclass
class Ledger:
    """What the checks found, kept in ``.state.json`` under ``"evidence"``."""

    seen: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # path -> "" (gone) or its new path
    absent: list[str] = field(default_factory=list)
    kept: dict[str, list[str]] = field(default_factory=dict)  # entry id -> paths kept anyway
    unsettled: list[str] = field(default_factory=list)  # missing; git did not finish: ask again
    checked: str = ""  # the day of the last check
    root: str = ""  # the project's path at that check (absolute paths in a text are read in it)

    @classmethod
    def from_json(cls, data: object) -> Ledger:
        """A ledger from its JSON form; whatever is malformed is dropped (it is a cache of what
        the working tree showed: the next check rebuilds it)."""
        if not isinstance(data, dict):
            return cls()

        def strings(value: object) -> list[str]:
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

        missing = data.get("missing")
        kept = data.get("kept")
        unsettled = data.get("unsettled")
        checked = data.get("checked")
        root = data.get("root")
        return cls(
            seen=strings(data.get("seen")),
            missing={k: v for k, v in missing.items() if isinstance(k, str) and isinstance(v, str)}
            if isinstance(missing, dict)
            else {},
            absent=strings(data.get("absent")),
            kept={k: strings(v) for k, v in kept.items() if isinstance(k, str)}
            if isinstance(kept, dict)
            else {},
            unsettled=strings(unsettled),
            checked=checked if isinstance(checked, str) else "",
            root=root if isinstance(root, str) else "",
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"checked": self.checked, "root": self.root}
        if self.seen:
            data["seen"] = self.seen
        if self.missing:
            data["missing"] = self.missing
        if self.absent:
            data["absent"] = self.absent
        if self.kept:
            data["kept"] = self.kept
        if self.unsettled:
            data["unsettled"] = self.unsettled
        return data

    def __bool__(self) -> bool:
        return bool(
            self.checked or self.seen or self.missing or self.absent or self.kept or self.unsettled
        )


# -- one check -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """What a check must look at: every distinct path the entries name, and whether git must be
    asked (a path is newly missing, which only the stats can tell: see ``needs_git``)."""

    paths: tuple[str, ...]
    folders: frozenset[str]  # paths written with a trailing slash: must be a folder
    since: str  # the oldest day of an entry that names a path ("" none)
    root: str = ""


def plan(entries: Iterable[tuple[str, str]], root: str) -> Plan:
    """``entries``: (text, date) of each semantic entry."""
    paths: dict[str, None] = {}
    folders: set[str] = set()
    since = ""
    for text, date in entries:
        named = extract(text, root)
        if not named:
            continue
        if date and (not since or date < since):
            since = date
        for n in named:
            paths[n.path] = None
            if n.folder:
                folders.add(n.path)
    return Plan(tuple(paths), frozenset(folders), since, root)


def needs_git(ledger: Ledger, missing: Iterable[str]) -> bool:
    """Git is asked only about a path missing now that the last check did not already settle
    (gone, renamed, or never seen), or one git could not finish looking at last time: repeated
    session starts cost the stats alone."""
    unsettled = set(ledger.unsettled)
    return any(
        p in unsettled or (p not in ledger.missing and p not in ledger.absent) for p in missing
    )


@dataclass(frozen=True)
class Probe:
    """What the edge saw: which named paths exist, and what git said (when it was asked)."""

    exists: Mapping[str, bool]
    renamed: Mapping[str, str] = field(default_factory=dict)  # old -> new, file or folder
    removed: frozenset[str] = frozenset()  # paths git saw deleted (or renamed away)
    settled: bool = True  # False: git was asked and could not finish in time


def _follow(path: str, renamed: Mapping[str, str]) -> str:
    hops = 0
    while path in renamed and hops < RENAME_HOPS:
        path = renamed[path]
        hops += 1
    return path


def new_location(path: str, renamed: Mapping[str, str]) -> str | None:
    """Where git saw ``path`` go: the file itself, or a folder whose files all moved together
    (``src/auth/x.py`` -> ``lib/auth/x.py`` makes ``src/auth`` -> ``lib/auth``)."""
    if path in renamed:
        return _follow(path, renamed)
    prefix = path + "/"
    targets: dict[str, int] = {}
    for old in renamed:
        if old.startswith(prefix):
            rest = old[len(prefix) :]
            final = _follow(old, renamed)
            if final.endswith("/" + rest):
                base = final[: -len(rest) - 1]
                targets[base] = targets.get(base, 0) + 1
    if not targets:
        return None
    return max(sorted(targets), key=lambda t: targets[t])


def _existed(path: str, seen: set[str], removed: frozenset[str]) -> bool:
    if path in seen or path in removed:
        return True
    prefix = path + "/"
    return any(p.startswith(prefix) for p in removed)


def record(ledger: Ledger, checked: Plan, probe: Probe, today: str, ids: Iterable[str]) -> Ledger:
    """The ledger after a check (a new value; ``ids``: the entries that exist now, so that a
    person's "keep" of a removed entry does not linger)."""
    seen = set(ledger.seen)
    missing: dict[str, str] = {}
    absent: list[str] = []
    unsettled: list[str] = []
    for path in checked.paths:
        if probe.exists.get(path, False):
            seen.add(path)
            continue
        if not probe.settled:
            unsettled.append(path)  # git may still tell a rename: ask again next time
        new = new_location(path, probe.renamed)
        if new is not None and new != path and probe.exists.get(new, False):
            missing[path] = new
        elif path in ledger.missing:
            missing[path] = ledger.missing[path]  # settled by an earlier check
        elif _existed(path, seen, probe.removed):
            missing[path] = ""
        else:
            absent.append(path)
    named = set(checked.paths)
    before = set(ledger.seen)
    kept_seen = [p for p in ledger.seen if p in named]
    kept_seen += [p for p in checked.paths if p in seen and p not in before]
    live = set(ids)
    return Ledger(
        seen=kept_seen[-SEEN_LIMIT:],
        missing=missing,
        absent=absent,
        unsettled=[p for p in unsettled if not missing.get(p)],
        kept={
            i: [p for p in paths if p in missing]
            for i, paths in ledger.kept.items()
            if i in live and any(p in missing for p in paths)
        },
        checked=today,
        root=checked.root,
    )


# -- what an entry is, given the ledger ------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    """Why an entry is stale: the paths gone, and where git saw the renamed ones go."""

    gone: tuple[str, ...]
    moved: Mapping[str, str]

    @property
    def reason(self) -> str:
        parts = [f"`{old}` was renamed to `{new}`" for old, new in self.moved.items()]
        parts += [f"`{p}` no longer exists" for p in self.gone]
        return "; ".join(parts)


def finding(text: str, entry_id: str, ledger: Ledger) -> Finding | None:
    """The entry's finding, or None when nothing it names is missing (or a person kept it)."""
    if not ledger.missing:
        return None
    if not any(p in text for p in ledger.missing):  # most entries: a substring test, no parse
        return None
    kept = set(ledger.kept.get(entry_id, ()))
    gone: list[str] = []
    moved: dict[str, str] = {}
    for path in named_paths(text, ledger.root):
        if path not in ledger.missing or path in kept:
            continue
        new = ledger.missing[path]
        if new:
            moved[path] = new
        else:
            gone.append(path)
    if not gone and not moved:
        return None
    return Finding(tuple(gone), moved)


def rewritten(text: str, moved: Mapping[str, str], root: str = "") -> str:
    """``text`` with every renamed path it names replaced by the new one, spelled the way the
    text spelled it (``./`` and a trailing slash kept)."""
    out = text
    for n in sorted(extract(text, root), key=lambda n: -len(n.raw)):
        new = moved.get(n.path)
        if new is None:
            continue
        spelled = new
        if n.raw.startswith("./"):
            spelled = "./" + new
        elif n.raw.startswith("/") and root:
            spelled = posixpath.join(root, new)
        if n.folder:
            spelled += "/"
        out = re.sub(
            r"(?<![\w./-])" + re.escape(n.raw) + r"(?![\w/-]|\.[\w])",
            lambda _m, s=spelled: s,  # type: ignore[misc]
            out,
        )
    return out


def proposal_action(moved: Mapping[str, str] | None) -> Literal["rewrite", "review"]:
    """What the review proposes for a stale entry: rewrite it when git saw where its paths
    went, else a person's decision (keep with ``reinforce``, ``archive``, ``remove``)."""
    return "rewrite" if moved else "review"


def kept_after_review(ledger: Ledger, entry_id: str, found: Finding) -> Ledger:
    """A person reviewed a stale entry and kept it: its missing paths no longer flag it."""
    paths = list(dict.fromkeys([*ledger.kept.get(entry_id, []), *found.gone, *found.moved]))
    kept = dict(ledger.kept)
    kept[entry_id] = paths
    return dataclasses.replace(ledger, kept=kept)
