"""What a person *shows* the agent, taken apart from what they *say* (issue 27).

People paste into prompts: a bug report, a log, an email, a diff, a README section, a stack
trace, a commit message to rewrite. Those texts hold imperatives written by someone else
("always pass --insecure"); mined as the person's own words, they would become standing
instructions served to every later session, tool and teammate (memory poisoning). Rules are
therefore detected in the person's words only, and a session note quotes the person, not the
paste.

``split_shown(text)`` returns a ``Split``: ``own`` (the person's words; each shown part replaced
by a line break, so the sentences around it stay apart) and ``shown`` (the parts taken out, each
a ``Piece`` with its kind and line count); ``Split.summary()`` names them for a note
(``pasted: a log, 40 lines``). Shown content, decided from how real prompts carry pastes:

* **markup**: a paste wrapper (``<pasted>``, ``<quote>``, ``<document>``, ``<email>``,
  ``<log>``, ``<file …>``, an IDE selection, a tool's ``<environment_context>`` … see
  ``PASTE_TAGS``) with its content, even inline, unterminated ones to the end of the text; any
  other element whose tags stand on lines of their own (``<div>`` … ``</div>``); a line that is
  only markup (``<p>Always …</p>``, ``<!-- … -->``);
* **code**: fenced blocks (```` ``` ````, ``~~~``; unterminated to the end), indented blocks
  holding code (4 spaces or a tab after a blank line; list items and indented prose excepted),
  comment lines (``//``, ``/*``), runs of two or more lines with code's shapes (a call ending
  the line, a brace, ``def f(``, ``const x =`` …; ``pnpm (not npm)`` is prose);
* **a quote**: block-quote lines (``>``);
* **a diff**: ``diff --git`` / ``---``+``+++`` headers and hunks (``@@ -a,b +c,d @@``, read
  for as many lines as the header counts);
* **a stack trace**: Python tracebacks, Java/JavaScript ``at …`` frames with their exception
  line, Go panics, Rust panics;
* **a log**: lines opening with a timestamp, an upper-case level (``ERROR``, ``[WARN]``), a
  tool's marker (``npm ERR!``, ``::error``, ``error[E0308]:``, ``FAILED``), with their
  continuation lines; lower-case ``error:``/``warning:`` lines only two or more together;
* **terminal output**: a shell or REPL prompt line (``$ cmd``, ``user@host:~$``, ``>>>``,
  ``PS C:\\>``) and the output under it up to a blank line;
* **an email**: from ``-----Original Message-----``, ``---------- Forwarded message``,
  ``Begin forwarded message:``, ``On <date>, X wrote:`` or a block of two or more mail headers
  (``From:``, ``To:``, ``Subject:`` …; one with an address, a subject or a date) to its
  sign-off (``Best,``/``Thanks,`` and a name) or the end of the text, less the last paragraphs
  when they turn back to the agent;
* **a config**: JSON bodies (a line opening with ``{`` or ``[`` up to its balanced close),
  ``[section]`` + ``key = value`` blocks, two or more YAML/``KEY=value`` lines (lower-case or
  dotted keys: a person's ``Note:``/``Rule:`` labels stay words);
* **a text** introduced as shown: a line ending in a colon that presents what follows (``here
  is the README section:``, ``the user wrote:``, ``I get this:``, ``translate this:``, ``the
  error:``, ``issue #412:``, ``an email from X:``, a bare ``Output:``) makes the following
  paragraphs shown, except the last ones when they turn back to the agent (a question, ``can
  you``, ``please``, ``also``, a request such as ``fix it``/``ask the reporter``). A line that
  goes on after such a colon shows its rest (``rewrite this commit message: …``). An intro that
  names the person's own rules or is one (``here are my rules:``, ``here's what I want:``,
  ``always check:``), or starts with ``when``/``for``/``before`` … (``For the README:``), and a
  bare label (``Commit messages:``, ``Docs:``) present nothing;
* **quoted text** that is the object of a request or someone else's words: ``"…"``/``'…'`` of
  three words or more right after ``translate``/``rewrite``/``summarise``/``review``/
  ``explain``/``proofread`` …, after ``says``/``wrote``/``suggests`` …, or followed by ``is this
  right?``/``who is right?``; a rule word between the verb and the quote makes it the person's
  (``explain simply and never say '…'``).

A pure function of the text. ``Memory.detect_semantic_signals`` (the one detection path of every
door) mines ``own`` only; ``core/digest.py`` writes ``own`` and the summary into a session note.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["OPEN_ENDED_TAGS", "PASTE_TAGS", "Piece", "Split", "split_shown"]

# Wrappers a person, an editor or an agent tool puts around shown content.
PASTE_TAGS = (
    "pasted paste pasted_text pasted-text clipboard quote blockquote q cite document doc "
    "documents email mail message msg letter log logs output stdout stderr console terminal "
    "shell file attachment snippet excerpt example context transcript issue comment review "
    "text content source data input untrusted untrusted_input code pre ide_selection "
    "ide_opened_file ide_diagnostics selection environment_context user_instructions "
    "readme article post reply thread chat conversation"
).split()
# Of those, the ones that wrap nothing but a paste: unterminated, they run to the text's end.
OPEN_ENDED_TAGS = (
    "pasted paste pasted_text pasted-text clipboard document email log logs output stdout "
    "stderr attachment snippet excerpt transcript untrusted untrusted_input ide_selection "
    "ide_opened_file ide_diagnostics environment_context user_instructions"
).split()

_KIND_NAMES = {
    "code": "code",
    "quote": "a quote",
    "diff": "a diff",
    "trace": "a stack trace",
    "log": "a log",
    "terminal": "terminal output",
    "email": "an email",
    "config": "a config",
    "markup": "markup",
    "text": "a text",
    "quoted": "quoted text",
}


@dataclass(frozen=True)
class Piece:
    """One shown part: its kind (a key of the summary's names) and how many lines it has."""

    kind: str
    lines: int
    text: str


@dataclass(frozen=True)
class Split:
    """A text taken apart: the person's own words, and the parts they showed, in order found
    (wrappers first, then by line, then quotes)."""

    own: str
    shown: tuple[Piece, ...]

    def summary(self) -> str:
        """``pasted: a log, 40 lines`` — the shown parts by kind, in order of size; ``""`` when
        nothing was shown."""
        if not self.shown:
            return ""
        lines: Counter[str] = Counter()
        for piece in self.shown:
            lines[piece.kind] += piece.lines
        parts = []
        for kind, n in lines.most_common(3):
            parts.append(f"{_KIND_NAMES.get(kind, kind)}, {n} line{'s' if n != 1 else ''}")
        more = len(lines) - 3
        return "pasted: " + "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


# --------------------------------------------------------------------------------------------
# Line patterns
# --------------------------------------------------------------------------------------------

_TAG_NAMES = "|".join(re.escape(t) for t in sorted(PASTE_TAGS, key=len, reverse=True))
_WRAPPER_OPEN = re.compile(r"<(?P<tag>" + _TAG_NAMES + r")(?:\s[^<>]*)?>", re.I)
_OPEN_ENDED = frozenset(OPEN_ENDED_TAGS)
_OPEN_TAG_LINE = re.compile(r"^\s*<(?P<tag>[A-Za-z][\w:.-]*)(?:\s[^<>]*)?>\s*$")
_MARKUP_LINE = re.compile(
    r"^\s*(?:<[A-Za-z][^<>]*>.*</[\w:.-]+>|<!--.*-->|</?[A-Za-z][^<>]*/?>|<[!?][^<>]*>)\s*$"
)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_QUOTE = re.compile(r"^\s*>(?!>>\s)")
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s")

_DIFF_START = re.compile(r"^(?:diff --git |diff -\w|Index: |@@ -\d)")
_DIFF_META = re.compile(
    r"^(?:diff |index [0-9a-f]|new file mode|deleted file mode|old mode|new mode|similarity |"
    r"rename (?:from|to) |Binary files |--- \S|\+\+\+ \S|={10,}$|Index: )"
)
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")

_TRACE_START = re.compile(
    r"^(?:Traceback \(most recent call last\):|Exception in thread |panic: |goroutine \d+ \[|"
    r"thread '[^']*' panicked at|Uncaught \w*(?:Error|Exception)|Fatal error: |"
    r"\s*(?:[\w$]+\.)*[\w$]*(?:Error|Exception)(?:: .*)?$)"
)
_FRAME = re.compile(
    r"^(?:\s+at |\s+File \"|\s+\.\.\. \d+ more|Caused by: |\s*During handling of|\s*The above "
    r"exception|\s+\S|#\d+ |\d+: 0x)"
)
_TIMESTAMP = re.compile(
    r"^\s*[\[(]?(?:\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{1,2}:\d{2}|\d{1,2}:\d{2}:\d{2}|"
    r"\d{2}/\d{2}/\d{4}|[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}|\d+\.\d{3,}\]|\d{10,13}\b)"
)
_LEVEL = re.compile(
    r"^\s*[\[(](?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|SEVERE|PANIC|"
    r"FAIL|FAILED|PASSED)[\])]|^\s*(?:TRACE|DEBUG|INFO|WARN|ERRO|FATA)\[\d+\]|level=\w+ "
    r"|^\s*(?:npm|yarn|pnpm|pip|cargo|go|mvn|gradle)(?: ERR!| WARN\b|:? error\b|:? warning\b)"
    r"|^[\w.-]+(?:[-_]\d+)?\s+\|\s"
    r"|^::(?:error|warning|notice|group|endgroup|debug)\b|^##\[(?:error|warning|group|section)"
    r"|^(?:error|warning)\[[A-Z]?\d+\]:|^\S+\.\w{1,5}:\d+(?::\d+)?: (?:error|warning|note)"
    r"|^={3,} .+ ={3,}$|^[EWIF]\d{4} \d{2}:\d{2}|^(?:FAILED|PASSED|ERROR) \S+::"
)
# Alone, these could be a person's own label ("WARNING: never …"): a log only two or more together.
_WEAK_LEVEL = re.compile(
    r"^\s*(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|SEVERE|PANIC|FAIL|"
    r"FAILED|PASSED)(?:[\s:|-]|$)"
)
_SOFT_LEVEL = re.compile(r"^\s*(?:error|warning|fatal|note|help|hint):\s|" + _WEAK_LEVEL.pattern)
_LOG_CONTINUATION = re.compile(r"^(?:\s+\S|\s*[|^]|\s*-->|\s*= )")

_PROMPT = re.compile(
    r"^\s*[$%]\s+\S|^\s*>>>\s|^\s*In \[\d+\]:|^\s*PS [^>\n]{0,80}>\s"
    r"|^\s*(?:\([\w.-]+\)\s+)?[\w.-]+@[\w.-]+[^\n$#%]{0,60}[$#%](?:\s|$)|^\s*C:\\[^>\n]{0,80}>"
    r"|^\s*\([\w.-]+\)\s+[^\n]{0,60}?[$#%]\s"
)
_SHELL_HASH = re.compile(r"^\s*#\s+(?:sudo|cd|ls|git|apt|yum|cat|echo|make|pip|npm|docker)\b")

_EMAIL_MARK = re.compile(
    r"^\s*(?:-{2,}\s*(?:Original Message|Forwarded message)\s*-*|Begin forwarded message:|"
    r"_{5,}\s*$)",
    re.I,
)
_WROTE = re.compile(r"^\s*(?:On|Am|Le|El)\s.{4,200}(?:wrote|schrieb|a écrit|escribió)\s*:\s*$")
_WROTE_OPEN = re.compile(r"^\s*On\s.{4,200}$")
_WROTE_CLOSE = re.compile(r"^.{0,200}wrote:\s*$")
_HEADER = re.compile(r"^\s*(?:From|To|Cc|Bcc|Sent|Date|Subject|Reply-To|Von|An|Betreff):\s*\S")
_SIGN_OFF = re.compile(
    r"^\s*(?:best|best regards|kind regards|regards|warm regards|thanks|thank you|many thanks|"
    r"thanks again|cheers|sincerely|yours|all the best|br|cordially|talk soon)[,!.]?\s*$"
    r"|^\s*--\s*$",
    re.I,
)

_INI_SECTION = re.compile(r"^\s*\[[\w .\"'-]+\]\s*$")
_KEY_VALUE = re.compile(r"^\s*(?P<key>[A-Za-z_][\w.-]*)\s*(?P<sep>[:=])(?:\s|$)")
_ENV_LINE = re.compile(r"^\s*(?:export\s+)?[A-Z_][A-Z0-9_]*=\S*\s*$")
_YAML_ITEM = re.compile(r"^\s+-\s|^-\s+[\w.-]+:\s")

_CODE_LINE = re.compile(
    r"^\s*(?:def \w+\s*\(|class \w+\s*[(:{<]|import (?:[\w.]+(?:\s+as\s+\w+)?(?:,\s*[\w.]+)*;?$|"
    r"\{|\*|[\w.]+\s+from\s)|from [\w.]+ import |return\b.*[;)\]}\w]$|if \(|for \(|while \(|"
    r"function\s*\w*\s*\(|(?:const|let|var)\s+[\w$\[{]+\s*[=:;]|"
    r"(?:public|private|protected|static)\s+(?:[\w<>\[\],]+\s+)*[\w<>\[\]]+\s*[({=;]|"
    r"#include|#define|package [\w.]+;?\s*$|(?:pub )?fn \w+\s*[(<]|func (?:\([^)]*\)\s*)?\w+\s*\(|"
    r"(?:impl|struct|enum|interface|trait)\b.*[{;]\s*$|(?:async|await)\s+\w+\s*\(|try\s*[{:]|"
    r"except(?:\s+[\w.]+)?(?:\s+as\s+\w+)?\s*:|catch\s*\(|@[\w.]+(?:\(.*\))?\s*$|}|\)\s*;?$|"
    r"]\s*;?$|end$|else\s*[{:]|elif .*:$|switch\s*\(|case .+:$|"
    r"SELECT |INSERT |UPDATE |DELETE |CREATE |ALTER |DROP |FROM |WHERE )"
    # A call ending a line ("foo(bar)", "x.y(z);"), a brace, an arrow; a ";" only with code
    # punctuation ("pnpm (not npm)" and "tabs; never spaces;" are prose).
    r"|^[^\s].*(?:[\w\]]\(.*\)\s*[;{,]?|\{|=>)\s*$|^[^\s](?=.*[=(){}\[\]]).*;\s*$"
    r"|^\s*[\w.\[\]]+\s*(?:=|\+=|-=|:=)\s*[^=\s].*$"
)
_COMMENT_LINE = re.compile(r"^\s*(?://|/\*|\*/|<!--)")
_HASH_COMMENT = re.compile(r"^\s*#(?!#)\s?\S")

# --------------------------------------------------------------------------------------------
# Introductions, quoted objects, turning back to the agent
# --------------------------------------------------------------------------------------------

_REQUEST_VERBS = (
    r"translate|rewrite|re-?word|rephrase|paraphrase|summari[sz]e|sum up|tl;?dr|review|explain|"
    r"interpret|proofread|proof-read|correct|fix|improve|polish|shorten|simplify|edit|tidy up|"
    r"clean up|reformat|check|critique|evaluate|assess|grade|analy[sz]e|respond to|"
    r"reply to|answer|draft a reply to|comment on|look at|read|parse|classify|convert"
)
# The tighter list for a quote in a sentence: "translate 'Always back up first'".
_QUOTE_VERBS = (
    r"translate|rewrite|re-?word|rephrase|paraphrase|summari[sz]e|sum up|review|explain|"
    r"interpret|proofread|improve|polish|shorten|simplify|critique|respond to|reply to|"
    r"fix (?:this|the|my|its|their|his|her)|what does|is (?:this|that|it) (?:right|correct|"
    r"true|ok|okay|good|accurate|valid|fine|grammatical)|what do you think"
)
_REPORT_VERBS = (
    r"says|said|(?<!never )(?<!don't )(?<!not )(?<!always )(?<!to )say|wrote|writes|told me|"
    r"tells me|claims?|claimed|suggests?|"
    r"suggested|recommends?|recommended|posted|replied|commented|asked|sent|reads|states|"
    r"stated|insists?|insisted|argues|argued|according to|is saying"
)
_PRESENT = (
    r"here(?:'s| is| are)|below is|below are|this is (?:the|a|an|what|how)|"
    r"these are|look at (?:this|these|the)|see (?:this|below|the)|pasted?|copied|"
    r"(?:i|we)(?:'m| am| are)? (?:get|got|getting|see|saw|seeing|received|receive|found)|"
    r"it (?:says|said|prints|printed|shows|showed|outputs|output|returns|returned|fails with|"
    r"failed with|gives|gave|spits out|logs|logged)|(?:fails|failed|crashes|crashed|errors|"
    r"errored|dies|died|breaks|broke) with"
)
# Nouns that name a paste: they introduce one at the end of a line ("The error:"), never inline
# ("Error handling: never swallow exceptions" is a label and a rule).
_PASTE_NOUNS = (
    r"error|output|log|logs|trace|traceback|stack ?trace|"
    r"email|e-mail|message|readme|docs|documentation|diff|patch|config|comment|issue|"
    r"bug report|ticket|paragraph|section|snippet|excerpt|post|thread|reply|response|"
    r"commit message|pr description|changelog"
)
_KEYWORDS = r"(?:" + _PRESENT + r"|" + _REQUEST_VERBS + r"|" + _REPORT_VERBS + r")"
# A noun introduces a paste when it is pointed at ("the error:", "this log:", "my config:") or
# stands alone as a console's word ("Output:"); "Commit messages:" or "Docs:" heads a list of
# the person's own rules.
_POINTED_NOUN = (
    r"(?:the|this|that|these|those|my|his|her|their|our|your|a|an|full|whole|following|below|"
    r"above|attached|same|original|old|new|entire)\s+(?:[\w-]+\s+){0,2}(?:" + _PASTE_NOUNS + r")"
    r"|^\s*(?:error|output|log|logs|trace|traceback|stack ?trace|diff|patch|stdout|stderr|"
    r"console output|result)\s*(?=:)"
    r"|\b(?:"
    + _PASTE_NOUNS
    + r"|pr|bug)\s+(?:#?[A-Z]*-?\d+\b|(?:from|of|by|sent by|du|de|des|von)\s)"
)
_LINE_KEYWORDS = r"(?:" + _KEYWORDS[3:-1] + r"|" + _POINTED_NOUN + r")"
# An intro about the person's own rules, or one that is itself a rule, presents nothing shown.
_OWN_INTRO = re.compile(
    r"\b(?:rules?|preferences?|conventions?|instructions?|guidelines?|policy|policies|"
    r"standards?|requirements?|constraints?|house style|remember|keep in mind|from now on|"
    r"going forward|note to self|always|never|must|should|make sure|don'?t|do not|"
    r"what (?:i|we) (?:want|need|expect|prefer|like|'d like|would like)|how (?:i|we) (?:want|like|"
    r"work|do)|what (?:you|to) (?:should )?do|the plan)\b",
    re.I,
)
# "When you review: …", "For the README: …" state a rule about the task, not an object.
_SUBORDINATE = re.compile(
    r"^\s*(?:when|whenever|before|after|if|for|while|during|in|on|once|unless|each time|every "
    r"time|any time)\b|\byou\b",
    re.I,
)
_INTRO = re.compile(r"(?:\b|^)" + _LINE_KEYWORDS + r"(?:\b|(?=:))[^:\n]{0,120}:\s*$", re.I)
_LEADING_SUBORDINATE = re.compile(
    r"^\s*(?:when|whenever|before|after|if|for|while|during|in|on|once|unless|each time|"
    r"every time|any time)\b",
    re.I,
)
# A line going on after the colon: "Rewrite this commit message: never squash merges". A verb
# that only ever takes a text, or any request verb whose object is a text ("fix this:", "review
# the wording:"); "Fix the login form: empty emails are accepted" is the person's description.
_TEXT_VERBS = (
    r"translate|rewrite|re-?word|rephrase|paraphrase|summari[sz]e|sum up|tl;?dr|proofread|"
    r"proof-read|polish|shorten"
)
_TEXT_OBJECT = (
    r"(?:this|that|these|those|it|the following|below)\b|(?:the|my|his|her|their|our|a|an|"
    r"this|that)\s+(?:[\w-]+\s+){0,2}(?:text|message|sentence|paragraph|email|e-mail|wording|"
    r"comment|docstring|title|description|copy|answer|post|reply|note|string|phrase|quote|lines?|"
    r"section|readme|doc|docs|changelog|tweet|summary|statement|claim|advice|snippet|excerpt|"
    r"translation|output|log|error|trace|report|issue|ticket)\b"
)
_INLINE_HEAD = "|".join(
    (
        r"\b(?:" + _TEXT_VERBS + r")\b",
        r"\b(?:" + _REQUEST_VERBS + r")\s+" + _TEXT_OBJECT,
        r"\b(?:" + _PRESENT + r"|" + _REPORT_VERBS + r")\b",
    )
)
_INLINE_INTRO = re.compile(
    r"^(?P<head>[^:\n]{0,160}?(?:" + _INLINE_HEAD + r")[^:\n]{0,120}?:)\s+(?P<tail>\S.*)$", re.I
)
_QUOTED = re.compile(
    r"\"(?P<a>[^\"\n]{3,}?)\"|(?<![\w'])'(?P<b>[^'\n]{3,}?)'(?![\w'])|\u201c(?P<c>[^\u201d\n]{3,}?)"
    r"\u201d"
)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
_QUOTE_CONTEXT = re.compile(r"\b(?:" + _QUOTE_VERBS + r"|" + _REPORT_VERBS + r")\b", re.I)
_RULE_BETWEEN = re.compile(r"\b(?:never|always|don'?t|do not|avoid|use|say|write)\b", re.I)
_QUOTE_QUESTION = re.compile(
    r"\b(?:is (?:this|that|it) (?:right|correct|true|ok|okay|good|accurate|valid|fine|"
    r"grammatical)|what does (?:this|that|it) mean|what do you think|who is right|true\?|"
    r"right\?|correct\?|agree\?)",
    re.I,
)
# The last paragraphs after a paste that turn back to the agent.
_ADDRESS = re.compile(
    r"^\s*(?:(?:can|could|would|will|do|should) (?:you|we|i)\b|please\b|pls\b|also\b|"
    r"btw\b|by the way|ps\b|p\.s\.|thanks?\b|thank you|and (?:also|please|can|could|btw)\b|"
    r"what\b|why\b|how\b|where\b|which\b|who\b|is (?:this|that|it|there)\b|are (?:these|those|"
    r"they)\b|does\b|i (?:want|need|would)\b|i'd\b|my question|question:|help me\b|tell me|"
    r"let me know|(?:" + _REQUEST_VERBS + r")\b|draft\b|write\b|give me|show me|"
    r"(?:ask|triage|implement|add|update|create|delete|remove|revert|run|make|reply|"
    r"investigate|find|send|open|merge|port|apply|refactor|debug|test|ignore|use|keep|"
    r"tell|decide|compare|list|port|move|rename|undo)\s+(?:the|a|an|this|that|these|it|them|"
    r"him|her|me|my|our|your|his|their|what|why|how|whether|if|both|all|one)\b|"
    r"(?:and |also,? )?for (?:the )?future\b|separately\b|unrelated\b|one more thing)",
    re.I,
)

_ASKS = re.compile(
    r"^\s*(?:(?:can|could|would|will) you\b|please\b|i (?:want|need|would like)\b|i'd like\b)",
    re.I,
)

# --------------------------------------------------------------------------------------------
# The splitter
# --------------------------------------------------------------------------------------------


class _Lines:
    """The text's lines with a label each: None (the person's words) or a shown kind."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.kind: list[str | None] = [None] * len(self.lines)
        self._closes: dict[str, int] = {}

    def blank(self, i: int) -> bool:
        return not self.lines[i].strip()

    def last_close(self, tag: str) -> int:
        """The last line holding ``</tag`` (-1 if none): an element never closed is no element,
        found without a scan per opening tag."""
        key = tag.lower()
        if key not in self._closes:
            close = "</" + key
            self._closes[key] = next(
                (j for j in range(len(self.lines) - 1, -1, -1) if close in self.lines[j].lower()),
                -1,
            )
        return self._closes[key]

    def mark(self, start: int, end: int, kind: str) -> int:
        for j in range(start, end):
            self.kind[j] = kind
        return end


def _json_end(lines: list[str], start: int) -> int | None:
    """The line after a JSON body opening at ``start`` (balanced brackets), or None."""
    depth = 0
    in_string = False
    escaped = False
    for j in range(start, min(len(lines), start + 2000)):
        for ch in lines[j]:
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth <= 0:
                    body = "\n".join(lines[start : j + 1]).strip()
                    if j > start or _looks_json(body):
                        return j + 1
                    return None
    return None


def _looks_json(body: str) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return body.startswith("{") and '":' in body
    return True


def _config_key(line: str) -> bool:
    m = _KEY_VALUE.match(line)
    if m is None:
        return False
    key = m.group("key")
    indented = line[:1].isspace()
    # "Note: …", "Rule: …" are a person's labels; config keys are lower-case, dotted or indented.
    return indented or m.group("sep") == "=" or not key[0].isupper() or any(c in key for c in "_.")


def _sign_off_end(t: _Lines, start: int) -> int:
    """The end of an email starting at ``start``: after its sign-off and name, else the text's end
    (later paragraphs that turn back to the agent are given back by the caller)."""
    n = len(t.lines)
    for j in range(start + 1, n):
        if _SIGN_OFF.match(t.lines[j]):
            k = j + 1
            while k < n and not t.blank(k) and k - j <= 3 and len(t.lines[k].strip()) <= 60:
                k += 1
            return k
    return n


def _give_back_trailing(t: _Lines, start: int, end: int) -> int:
    """Trailing paragraphs of ``[start, end)`` that turn back to the agent are the person's:
    the new end of the shown part."""
    paragraphs: list[tuple[int, int]] = []
    j = start
    while j < end:
        while j < end and t.blank(j):
            j += 1
        k = j
        while k < end and not t.blank(k):
            k += 1
        if j < k:
            paragraphs.append((j, k))
        j = k
    marker = _ADDRESS  # the last paragraph; one before it needs a plain question or request
    while len(paragraphs) > 1:
        first, last = paragraphs[-1]
        text = " ".join(t.lines[first:last]).strip()
        if marker.match(text) or text.endswith("?"):
            end = first
            paragraphs.pop()
            marker = _ASKS
            continue
        break
    return end


def _block_end(t: _Lines, i: int, line_test: re.Pattern[str]) -> int:
    j = i
    while j < len(t.lines) and line_test.match(t.lines[j]):
        j += 1
    return j


def _scan(t: _Lines) -> None:
    lines, n = t.lines, len(t.lines)
    i = 0
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if not stripped or t.kind[i] is not None:
            i += 1
            continue
        prev_blank = i == 0 or t.blank(i - 1) or t.kind[i - 1] is not None

        fence = _FENCE.match(line)
        if fence:
            mark = fence.group(1)[0] * 3
            j = i + 1
            while j < n and not lines[j].strip().startswith(mark):
                j += 1
            i = t.mark(i, min(j + 1, n), "code")
            continue

        tag = _OPEN_TAG_LINE.match(line)
        if tag and t.last_close(tag.group("tag")) > i:
            close = re.compile(r"</" + re.escape(tag.group("tag")) + r"\s*>", re.I)
            j = i + 1
            while j < n and not close.search(lines[j]):
                j += 1
            if j < n:
                i = t.mark(i, j + 1, "markup")
                continue
        if _MARKUP_LINE.match(line):
            i = t.mark(i, _block_end(t, i, _MARKUP_LINE), "markup")
            continue

        if _QUOTE.match(line):
            i = t.mark(i, _block_end(t, i, _QUOTE), "quote")
            continue

        if _EMAIL_MARK.match(line) or _WROTE.match(line) or _email_headers(t, i):
            end = _give_back_trailing(t, i, _sign_off_end(t, i))
            i = t.mark(i, end, "email")
            continue
        if _WROTE_OPEN.match(line) and i + 1 < n and _WROTE_CLOSE.match(lines[i + 1]):
            end = _give_back_trailing(t, i, _sign_off_end(t, i + 1))
            i = t.mark(i, end, "email")
            continue

        if _DIFF_START.match(line) or (
            line.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ ")
        ):
            i = t.mark(i, _diff_end(t, i), "diff")
            continue

        if stripped.startswith(("panic: ", "goroutine ", "thread '")):
            j = i + 1
            while j < n and (
                not t.blank(j)
                or (j + 1 < n and lines[j + 1].startswith(("goroutine ", "\t", "exit status")))
            ):
                j += 1
            i = t.mark(i, j, "trace")
            continue
        if _TRACE_START.match(line) and (
            stripped.startswith(("Traceback", "Exception in", "panic:", "goroutine", "thread '"))
            or (i + 1 < n and _FRAME.match(lines[i + 1]) and lines[i + 1].strip().startswith("at "))
        ):
            j = i + 1
            while j < n and (
                _FRAME.match(lines[j]) or (not t.blank(j) and _TRACE_START.match(lines[j]))
            ):
                j += 1
            # Python's last line: the exception, not indented.
            if (
                j < n
                and not t.blank(j)
                and re.match(
                    r"^[\w.]+(?:Error|Exception|Exit|Interrupt|"
                    r"Warning)\b",
                    lines[j],
                )
            ):
                j += 1
            i = t.mark(i, j, "trace")
            continue
        if (
            stripped.startswith("at ")
            and line[:1].isspace()
            and i + 1 < n
            and (lines[i + 1].strip().startswith("at "))
        ):
            i = t.mark(i, _block_end(t, i, re.compile(r"^\s+at \S|^\s*\.\.\. \d+ more")), "trace")
            continue

        if _TIMESTAMP.match(line) or _LEVEL.match(line):
            i = t.mark(i, _log_end(t, i), "log")
            continue
        if _SOFT_LEVEL.match(line):
            j = i + 1
            while j < n and (_SOFT_LEVEL.match(lines[j]) or _LOG_CONTINUATION.match(lines[j])):
                j += 1
            if j - i >= 2 and not _BULLET.match(line):
                i = t.mark(i, j, "log")
                continue

        if _PROMPT.match(line) or _SHELL_HASH.match(line):
            j = i + 1
            while j < n:
                if t.blank(j):
                    if j + 1 < n and (_PROMPT.match(lines[j + 1])):
                        j += 1
                        continue
                    break
                j += 1
            i = t.mark(i, j, "terminal")
            continue

        if stripped[0] in "{[" and not _INI_SECTION.match(line):
            json_end = _json_end(lines, i)
            if json_end is not None:
                i = t.mark(i, json_end, "config")
                continue
        if (
            _INI_SECTION.match(line)
            and i + 1 < n
            and (_KEY_VALUE.match(lines[i + 1]) or _comment(lines[i + 1]))
        ):
            j = i + 1
            while j < n and (
                _KEY_VALUE.match(lines[j])
                or _INI_SECTION.match(lines[j])
                or _comment(lines[j])
                or (t.blank(j) and j + 1 < n and _INI_SECTION.match(lines[j + 1]))
            ):
                j += 1
            i = t.mark(i, j, "config")
            continue
        if lines[i].strip() == "---" or _config_key(line) or _ENV_LINE.match(line):
            j = i + 1 if lines[i].strip() == "---" else i
            keys = 0
            while j < n and (
                _config_key(lines[j])
                or _ENV_LINE.match(lines[j])
                or (keys and (_YAML_ITEM.match(lines[j]) or lines[j][:1].isspace()))
                or (keys and _HASH_COMMENT.match(lines[j]))
            ):
                keys += bool(_config_key(lines[j]) or _ENV_LINE.match(lines[j]))
                j += 1
            if keys >= 2:
                i = t.mark(i, j, "config")
                continue

        if (
            prev_blank
            and (line.startswith("\t") or line.startswith("    "))
            and not (_BULLET.match(line) or _after_list(t, i))
        ):
            j = i
            while j < n and (
                lines[j].startswith(("\t", "    "))
                or (t.blank(j) and j + 1 < n and lines[j + 1].startswith(("\t", "    ")))
            ):
                j += 1
            # Indented prose is the person's (or, after an intro, a text: see _intros).
            if any(
                _CODE_LINE.match(x.strip()) or _COMMENT_LINE.match(x) or _HASH_COMMENT.match(x)
                for x in lines[i:j]
            ):
                i = t.mark(i, j, "code")
                continue

        if _COMMENT_LINE.match(line):
            i = t.mark(i, _code_end(t, i, allow_single=True), "code")
            continue
        if _CODE_LINE.match(line) and not _BULLET.match(line):
            j = _code_end(t, i, allow_single=False)
            if j - i >= 2:
                i = t.mark(i, j, "code")
                continue
        i += 1


def _comment(line: str) -> bool:
    return bool(re.match(r"^\s*[#;]", line))


def _after_list(t: _Lines, i: int) -> bool:
    """Is line ``i`` inside a list (a bullet above it, before any other paragraph)?"""
    j = i - 1
    while j >= 0 and t.blank(j):
        j -= 1
    return j >= 0 and bool(_BULLET.match(t.lines[j]))


def _code_end(t: _Lines, i: int, *, allow_single: bool) -> int:
    """Where a run of code lines starting at ``i`` ends (blank lines inside it kept when code
    follows them)."""
    lines, n = t.lines, len(t.lines)
    j = i
    code_lines = 0
    while j < n:
        line = lines[j]
        if t.blank(j):
            if j + 1 < n and (_CODE_LINE.match(lines[j + 1]) or _COMMENT_LINE.match(lines[j + 1])):
                j += 1
                continue
            break
        if (_CODE_LINE.match(line) and not _BULLET.match(line)) or _COMMENT_LINE.match(line):
            code_lines += 1
        elif not (code_lines and (line[:1].isspace() or _HASH_COMMENT.match(line))):
            break
        j += 1
    if code_lines < 2 and not allow_single:
        return i
    return j


def _email_headers(t: _Lines, i: int) -> bool:
    """Two or more mail headers, one of them an address, a subject or a date ("From: staging /
    To: production" is the person's own shorthand)."""
    j = i
    while j < len(t.lines) and _HEADER.match(t.lines[j]):
        j += 1
    block = t.lines[i:j]
    return j - i >= 2 and any(
        "@" in line or re.match(r"^\s*(?:Subject|Sent|Date|Betreff):", line) for line in block
    )


def _diff_end(t: _Lines, i: int) -> int:
    lines, n = t.lines, len(t.lines)
    j = i
    while j < n:
        line = lines[j]
        hunk = _HUNK.match(line)
        if hunk:
            old = int(hunk.group(1)) if hunk.group(1) is not None else 1
            new = int(hunk.group(2)) if hunk.group(2) is not None else 1
            j += 1
            while j < n and (old > 0 or new > 0):
                body = lines[j]
                if body.startswith("\\"):
                    j += 1
                    continue
                if body.startswith("-"):
                    old -= 1
                elif body.startswith("+"):
                    new -= 1
                elif body.startswith(" ") or not body:
                    old -= 1
                    new -= 1
                else:
                    break  # a hand-trimmed hunk: what follows is not the diff's
                j += 1
            continue
        if _DIFF_META.match(line) or line.startswith("\\ No newline"):
            j += 1
            continue
        if (
            not line.strip()
            and j + 1 < n
            and (_DIFF_META.match(lines[j + 1]) or _HUNK.match(lines[j + 1]))
        ):
            j += 1
            continue
        break
    return max(j, i + 1)


def _log_end(t: _Lines, i: int) -> int:
    lines, n = t.lines, len(t.lines)
    j = i + 1
    while j < n:
        line = lines[j]
        if (
            _TIMESTAMP.match(line)
            or _LEVEL.match(line)
            or _SOFT_LEVEL.match(line)
            or (not t.blank(j) and (_LOG_CONTINUATION.match(line) or _FRAME.match(line)))
            or (
                t.blank(j)
                and j + 1 < n
                and (_TIMESTAMP.match(lines[j + 1]) or _LEVEL.match(lines[j + 1]))
            )
        ):
            j += 1
        else:
            break
    return j


def _intros(t: _Lines) -> list[tuple[int, str]]:
    """Lines of the person's that present what follows; mark the text they present. Returns the
    inline tails (line index, tail) shown after an intro's colon."""
    lines, n = t.lines, len(t.lines)
    tails: list[tuple[int, str]] = []
    i = 0
    while i < n:
        line = lines[i]
        if t.kind[i] is not None or not line.strip():
            i += 1
            continue
        if (
            _INTRO.search(line)
            and not _OWN_INTRO.search(line)
            and not _LEADING_SUBORDINATE.match(line)
        ):
            # The paragraphs that follow, to the next shown part of another kind or the end.
            j = i + 1
            while j < n and t.blank(j):
                j += 1
            k = j
            while k < n and t.kind[k] is None:
                k += 1
            if j < k:
                end = _give_back_trailing(t, j, k)
                t.mark(j, end, "text")
                i = end
                continue
        inline = _INLINE_INTRO.match(line)
        if (
            inline
            and not _OWN_INTRO.search(inline.group("head"))
            and not _SUBORDINATE.search(inline.group("head"))
            and not _ends_sentence(inline.group("head"))
        ):
            tails.append((i, inline.group("tail")))
        i += 1
    return tails


def _ends_sentence(head: str) -> bool:
    return bool(re.search(r"[.!?]\s", head))


def _quoted(own: str) -> tuple[str, list[Piece]]:
    """Quoted text that is a request's object or someone else's words, taken out of ``own``."""
    pieces: list[Piece] = []
    out = []
    for line in own.split("\n"):
        parts: list[str] = []
        pos = 0
        for m in _QUOTED.finditer(line):
            body = m.group("a") or m.group("b") or m.group("c") or ""
            if len(body.split()) < 3:
                continue  # a word or a name in quotes, not a text
            # The sentence around the quote (a quote may hold sentences of its own).
            before = line[: m.start()]
            ends = list(_SENTENCE_END.finditer(before))
            after = _SENTENCE_END.search(line, m.end())
            # The verb is the quote's own: just before it ("translate '…'", "says '…'") or the
            # question just after it ("'…' - is this right?"); "Explain simply and never say
            # '…'" keeps its quote.
            lead = before[ends[-1].end() if ends else 0 :][-40:]
            tail = line[m.end() : after.start() + 1 if after else len(line)]
            verbs = list(_QUOTE_CONTEXT.finditer(lead))
            if verbs and _RULE_BETWEEN.search(lead[verbs[-1].end() :]):
                verbs = []  # "explain simply and never say '…'": the quote is the rule's
            if not (verbs or _QUOTE_QUESTION.search(tail)):
                continue
            pieces.append(Piece("quoted", 1, body))
            parts.append(line[pos : m.start()] + "\u2026")
            pos = m.end()
        parts.append(line[pos:])
        out.append("".join(parts))
    return "\n".join(out), pieces


def _strip_wrappers(text: str, pieces: list[tuple[int, Piece]]) -> str:
    """Paste wrappers with their content replaced by a line break (appended to ``pieces``). A
    wrapper with no closing tag is left alone unless it only ever wraps a paste (then it runs
    to the end). Linear: each closing tag is looked for once per tag name."""
    lower = text.lower()
    last_close: dict[str, int] = {}
    out: list[str] = []
    pos = 0
    while True:
        m = _WRAPPER_OPEN.search(text, pos)
        if m is None:
            break
        tag = m.group("tag").lower()
        if tag not in last_close:
            last_close[tag] = lower.rfind("</" + tag)
        end: int | None = None
        if last_close[tag] >= m.end():
            close = re.compile(r"</" + re.escape(tag) + r"\s*>")
            found = close.search(lower, m.end())
            end = found.end() if found else None
        if end is None and tag in _OPEN_ENDED:
            end = len(text)
        if end is None:
            out.append(text[pos : m.end()])
            pos = m.end()
            continue
        body = text[m.start() : end]
        pieces.append((m.start(), Piece("markup", body.count("\n") + 1, body)))
        out.append(text[pos : m.start()] + "\n")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def split_shown(text: str) -> Split:
    """``text`` split into the person's own words and what they show (see the module doc)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    pieces: list[tuple[int, Piece]] = []

    text = _strip_wrappers(text.replace("\r\n", "\n").replace("\r", "\n"), pieces)
    t = _Lines(text)
    _scan(t)
    tails = _intros(t)
    line_pieces: list[Piece] = []
    own_lines: list[str] = []
    i = 0
    tail_at = dict(tails)
    while i < len(t.lines):
        kind = t.kind[i]
        if kind is None:
            line = t.lines[i]
            if i in tail_at:
                tail = tail_at[i]
                line_pieces.append(Piece("text", 1, tail))
                line = line[: len(line) - len(tail)].rstrip() + " \u2026"
            own_lines.append(line)
            i += 1
            continue
        j = i
        while j < len(t.lines) and t.kind[j] == kind:
            j += 1
        body = "\n".join(t.lines[i:j]).strip("\n")
        line_pieces.append(Piece(kind, sum(1 for x in t.lines[i:j] if x.strip()), body))
        own_lines.append("")
        i = j
    own, quoted = _quoted("\n".join(own_lines))
    own = re.sub(r"\n{3,}", "\n\n", own).strip()
    shown = tuple(p for _, p in pieces) + tuple(line_pieces) + tuple(quoted)
    return Split(own, shown)
