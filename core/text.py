"""Lexical basis shared by relevance ranking, duplicate detection and contradiction checks.

Everything here is a pure function of its input. The rules, written down once:

* **Tokenisation**: text is lower-cased and split on anything that is not a letter, a digit or
  one of ``. _ - * / + #`` inside a word; leading and trailing punctuation of a word is dropped,
  so ``"*.test.ts"`` stays one token while ``"(cost"`` becomes ``"cost"``.
* **Stop words**: a fixed list of English function words (``lexicon.STOP_WORDS``) carries no
  topic and is removed from *content* tokens. Negations (``lexicon.NEGATIONS``: ``not``,
  ``never``, ``don't`` …) are removed from topic comparison too.
* **Stemming**: a small suffix stripper (``stem``): plural ``-s``/``-es``/``-ies``, ``-ing``,
  ``-ed``, ``-ly``, ``-ment``, ``-ation`` …, applied once, never shortening a word below three
  letters. It is deliberately conservative: it must map ``tests``/``testing``/``tested`` together
  without merging unrelated words.
* **Token estimate** (``estimate_tokens``): ``ceil(characters / 4)``, the usual rule of thumb for
  English with BPE tokenisers; it over-counts slightly for plain prose, which keeps the context
  block inside its budget.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from .lexicon import NEGATIONS, STOP_WORDS

__all__ = [
    "NEGATIONS",
    "STOP_WORDS",
    "content_set",
    "content_tokens",
    "estimate_tokens",
    "stem",
    "words",
]

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-*/+#']*|\*[A-Za-z0-9._\-*/+#']+")
_TRAIL = ".-_/'+#"

_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ments", ""),
    ("ment", ""),
    ("ness", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("sses", "ss"),
    ("shes", "sh"),
    ("ches", "ch"),
    ("xes", "x"),
    ("edly", ""),
    ("ly", ""),
    ("ed", ""),
    ("es", "e"),
    ("s", ""),
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Strip one common English suffix; words with digits or punctuation are left alone."""
    if not word.isalpha() or len(word) <= 3:
        return word
    if word.endswith("ss") or word.endswith("us") or word.endswith("is"):
        return word
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix):
            base = word[: -len(suffix)] + repl
            if len(base) < 3:
                return word
            # "running" -> "runn" -> "run": undo a doubled final consonant left by -ing/-ed.
            if (
                suffix in ("ing", "ed", "ings")
                and len(base) > 3
                and base[-1] == base[-2]
                and base[-1] not in "lsz"
            ):
                base = base[:-1]
            return base
    return word


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``, punctuation at word edges removed."""
    out: list[str] = []
    for match in _WORD.finditer(text.lower()):
        token = match.group(0).rstrip(_TRAIL)
        if token:
            out.append(token)
    return out


def content_tokens(text: str) -> list[str]:
    """Stemmed tokens without stop words or negations: what a text is *about*."""
    return [stem(w) for w in words(text) if w not in STOP_WORDS and w not in NEGATIONS]


@lru_cache(maxsize=16384)
def content_set(text: str) -> frozenset[str]:
    """``content_tokens`` as a set, cached: the hot path of relevance ranking."""
    return frozenset(content_tokens(text))


def estimate_tokens(text: str) -> int:
    """Token estimate used for the context budget: ``ceil(len(text) / 4)``."""
    return math.ceil(len(text) / 4)
