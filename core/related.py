"""A pre-filter in front of ``contradiction.classify``: keep only the entries that may relate.

``classify`` compares a new fact with every entry of its category, and its first test
(``contradiction._may_relate``) already discards, cheaply, every pair that shares no content
word and no known family: for those pairs no rule can give anything but "added". This module
asks that same question of many entries at once, through set operations on keys computed once
per text, so the write path does not pay ``classify``'s per-entry checks for the many
unrelated entries of a large memory. It is a filter, not a rule: it calls nothing but the rule
module's own parse, the entries it keeps are passed to ``classify`` unchanged and in their
order, so the verdict is the one ``classify`` gives on the whole list (the tie-break on
position only compares positions). ``tests/core/test_related.py`` checks that identity on a
large generated corpus; if the rules ever relate texts that share no key, that test fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

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
    """The ``(entry_id, text)`` pairs of ``existing`` that may relate to ``new_text``, in order."""
    new = relation_keys(new_text)
    if new is None:
        return list(existing)
    out = []
    for pair in existing:
        keys = relation_keys(pair[1])
        if keys is None or not new.isdisjoint(keys):
            out.append(pair)
    return out
