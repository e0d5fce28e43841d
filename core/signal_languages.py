"""Rules stated in a language other than English: the spec's operators, and only those.

The prompt door reads English: its lead-ins, scope words, bug-report cues and task verbs
(``core/signals.py``, ``core/durable.py``) are English, and the meaning layer's vocabulary is an
English one. On the labelled prompts a third of the explicit rules are in another language
("Pamiętaj aby użyć otwartoźródłowych rozwiązań …", "使用主题色 … 而不是 …"), and
none was ever kept. This module finds, in a sentence that is not English, the operators of the
spec's confidence mapping in the languages people write to coding agents in — always / never /
from now on / remember (1.0), instead of / prefer (0.9) — and nothing else: no scope, no task
verbs. ``core/durable.py`` therefore never serves such a statement at once: it is *proposed*
(kept, shown in review, not served) until the person confirms it. The sentence is kept whole,
in the person's words.

Pure functions of the text.
"""

from __future__ import annotations

import re

__all__ = ["foreign_rules", "reads_english"]

# The spec's operators (docs/prompt-labelling.md), by language: Spanish, Portuguese, Italian,
# French, German, Polish, Russian, Ukrainian, Chinese. A word boundary is kept for alphabetic
# scripts; Chinese has none.
_ALWAYS_NEVER_ON = (
    r"\b(?:siempre|nunca|jam[aá]s|a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante"
    r"|sempre|a\s+partir\s+de\s+agora|de\s+agora\s+em\s+diante"
    r"|mai\s+pi[uù]|da\s+ora\s+in\s+poi|d'ora\s+in\s+poi|da\s+ora"
    r"|toujours|jamais|d[ée]sormais|dor[ée]navant|[àa]\s+partir\s+de\s+maintenant"
    r"|immer|niemals|ab\s+jetzt|von\s+nun\s+an|ab\s+sofort"
    r"|zawsze|nigdy|od\s+teraz"
    r"|всегда|никогда|отныне|с\s+этого\s+момента|завжди|ніколи|відтепер)\b"  # noqa: RUF001
    r"|总是|始终|永远|一律|绝不|从不|从现在开始|今后"
)
_REMEMBER = (
    r"\b(?:recuerda|acu[ée]rdate|lembre|lembra|ricorda|ricordati|souviens-toi|rappelle-toi"
    r"|n'oublie\s+pas|denk\s+daran|merk\s+dir|pami[eę]taj|запомни|помни|пам'ятай)\b"
    r"|记住|牢记|别忘了"
)
_INSTEAD_PREFER = (
    r"\b(?:en\s+lugar\s+de|en\s+vez\s+de|prefiero|em\s+vez\s+de|ao\s+inv[ée]s\s+de|prefiro"
    r"|invece\s+di|preferisco|au\s+lieu\s+de|je\s+pr[ée]f[èe]re|anstatt|statt|lieber"
    r"|zamiast|wol[eę]|вместо|предпочитаю|замість)\b"
    r"|而不是|代替|更喜欢"
)
OPERATORS: tuple[tuple[float, re.Pattern[str]], ...] = (
    (1.0, re.compile(_ALWAYS_NEVER_ON + "|" + _REMEMBER, re.IGNORECASE)),
    (0.9, re.compile(_INSTEAD_PREFER, re.IGNORECASE)),
)

# A sentence ends at ". ", "!", "?", a Chinese full stop or a line break.
_SENTENCE = re.compile("(?<=[.!?])\\s+|[\u3002\uff01\uff1f!?\n]+")
_QUESTION = re.compile(
    "[?\uff1f]\\s*$|" r"\b(?:qu[ée]|c[oó]mo|por\s*qu[ée]|pourquoi|warum|czy)\b|吗|呢"
)
# Function words, English and not: a sentence in a Latin script is read as English unless it
# holds more of the others (a short imperative, "Run ruff before committing", holds neither).
_ENGLISH = re.compile(
    r"\b(?:the|an|of|and|is|are|for|with|it|this|that|you|be|not|don't|use|my|our|all"
    r"|should|must|always|never|please|from|when|before|after)\b",
    re.IGNORECASE,
)
_OTHERS = re.compile(
    r"\b(?:de|el|los|las|que|del|para|por|con|una|es|en|y|se|al|como|pero|m[aá]s"
    r"|um|n[aã]o|em|dos|das|com|[ée]|il|gli|della|di|da|che|per|sono|nel|alla"
    r"|le|les|des|du|est|et|une|pour|avec|dans|sur|pas|ne|qui|au"
    r"|der|das|und|ist|nicht|mit|f[uü]r|auf|ein|eine|zu|dem|von"
    r"|w|z|na|si[eę]|jest|nie|aby|[zż]e|oraz|jak|dla|od)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
MAX_WORDS = 40  # longer: part of a specification
MAX_CJK = 80  # characters of a sentence in a script written without spaces


def reads_english(text: str) -> bool:
    """True when ``text`` is English enough for the English door to read its scope."""
    if _CJK.search(text):
        return False
    letters = [c for c in text if c.isalpha()]
    if letters and sum(c.isascii() for c in letters) / len(letters) < 0.8:
        return False  # Cyrillic, Greek, Arabic …
    return len(_OTHERS.findall(text)) <= len(_ENGLISH.findall(text))


def _sentences(text: str) -> list[str]:
    return [s.strip(" \t,;:-*") for s in _SENTENCE.split(text) if s.strip(" \t,;:-*")]


def foreign_rules(text: str) -> list[tuple[str, float]]:
    """The sentences of ``text`` that are not English and state a rule with one of the spec's
    operators, each with the operator's confidence (the strongest wins), in order."""
    out = []
    for sentence in _sentences(text):
        if reads_english(sentence) or _QUESTION.search(sentence):
            continue
        if len(_WORD.findall(sentence)) > MAX_WORDS or len(_CJK.findall(sentence)) > MAX_CJK:
            continue
        levels = [level for level, pattern in OPERATORS if pattern.search(sentence)]
        if levels:
            out.append((sentence.rstrip(" ."), max(levels)))
    return out
