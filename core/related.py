"""A pre-filter in front of ``contradiction.classify``: keep only the entries that may relate.

``classify`` compares a new fact with every entry of its category, and its first test
(``contradiction._may_relate``) already discards, cheaply, every pair that shares no content
word and no known family: for those pairs no rule can give anything but "added". This module
asks that same question of many entries at once, through set operations on keys computed once
per text, so the write path does not pay ``classify``'s per-entry checks for the many
unrelated entries of a large memory; an index from each key to the texts that hold it
(``_KeyIndex``) makes that question a few set unions, not one test per entry. It is a filter,
not a rule: it calls nothing but the rule module's own parse, the entries it keeps are passed
to ``classify`` unchanged and in their order, so the verdict is the one ``classify`` gives on
the whole list (the tie-break on position only compares positions).
``tests/core/test_related.py`` checks that identity on a large generated corpus; if the rules
ever relate texts that share no key, that test fails.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from operator import itemgetter

from .rule_reading import parse_rule

_FAMILY = "\x00"  # family keys cannot collide with a word


@lru_cache(maxsize=16384)
def relation_keys(text: str) -> frozenset[str] | None:
    """The words and families by which ``text`` may relate to another text; None when it has
    no words at all (then it may relate to anything)."""
    rule = parse_rule(text)
    if not rule.all_set:
        return None
    return rule.all_set | frozenset(_FAMILY + f for f in rule.families)


def may_relate(new_text: str, existing: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The ``(entry_id, text)`` pairs of ``existing`` that may relate to ``new_text``, in order:
    those whose keys meet ``new_text``'s, and those without words."""
    new = relation_keys(new_text)
    if new is None:
        return list(existing)
    related = _INDEX.sharing(new, list(map(itemgetter(1), existing)))
    if related is None:  # more texts than the index keeps: each one's keys
        return [p for p in existing if (k := relation_keys(p[1])) is None or not new.isdisjoint(k)]
    return [pair for pair in existing if pair[1] in related]


class _KeyIndex:
    """Which texts hold each key, for every text asked about (bounded: full, it starts again):
    a save then finds the few entries that share a key with it through a handful of set
    unions, not one test per entry of its category. Keyed by text, whose keys never change,
    so no edit of a memory can make it wrong; a lock, because the analysis threads and the
    writer may both ask."""

    LIMIT = 16384

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: set[str] = set()
        self._holding: dict[str, set[str]] = {}  # key -> the texts that hold it
        self._wordless: set[str] = set()  # texts without keys: they may relate to anything

    def sharing(self, keys: frozenset[str], texts: list[str]) -> set[str] | None:
        """Those of ``texts`` (and perhaps other texts) that hold one of ``keys`` or have no
        keys; None when ``texts`` are more than the index keeps."""
        with self._lock:
            if not self._texts.issuperset(texts):
                if len(texts) > self.LIMIT:
                    return None
                missing = [t for t in dict.fromkeys(texts) if t not in self._texts]
                if len(self._texts) + len(missing) > self.LIMIT:
                    self._texts.clear()
                    self._holding.clear()
                    self._wordless.clear()
                    missing = list(dict.fromkeys(texts))
                for text in missing:
                    self._add(text)
            out = set(self._wordless)
            for key in keys:
                holding = self._holding.get(key)
                if holding is not None:
                    out |= holding
            return out

    def _add(self, text: str) -> None:
        self._texts.add(text)
        keys = relation_keys(text)
        if keys is None:
            self._wordless.add(text)
            return
        for key in keys:
            self._holding.setdefault(key, set()).add(text)


_INDEX = _KeyIndex()
