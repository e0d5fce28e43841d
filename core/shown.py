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
  comment lines (``//``, ``/*``), ``#`` comment lines over commands with flags (a script, a
  tool's documentation: ``# Voice input`` / ``aider --voice``), runs of two or more lines
  with code's shapes (a call ending the line, a brace, ``def f(``, ``const x =`` …; ``pnpm
  (not npm)`` is prose);
* **a quote**: block-quote lines (``>``);
* **a diff**: ``diff --git`` / ``---``+``+++`` headers and hunks (``@@ -a,b +c,d @@``, read
  for as many lines as the header counts);
* **a stack trace**: Python tracebacks, Java/JavaScript ``at …`` frames with their exception
  line, Go panics, Rust panics;
* **a log**: lines opening with a timestamp, an upper-case level (``ERROR``, ``[WARN]``), a
  tool's marker (``npm ERR!``, ``::error``, ``error[E0308]:``, ``FAILED``, ``[plugin:vite]``),
  Python's logging and warnings formats (``mcp.server - INFO - …``, ``WARNING:root:…``,
  ``DeprecationWarning: …``), an exception's line (``IntegrityError at /x/``, ``TypeError:
  …``), a bare location (``src/App.vue:3:14``) or a debug page's tab-separated fields, with
  their continuation lines and up to two lines between two of them; lower-case
  ``error:``/``warning:`` lines only two or more together;
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
* **an agent's answer** pasted back: two narrations of an agent's work among the person's
  lines, one only an agent says ("Let me implement this:", "I'll first read …", "Would you
  like me to proceed?"; a person may say "I need to update …" or "Looking at the logs"): from
  the paragraph of the first to the end, less the last paragraphs that turn back to the agent;
* **a comment copied from a forge's page**: from its header ("octocat commented 2 days ago",
  or "commented" over "1 minute ago") to the end, less the last paragraphs that turn back;
* **quoted text** that is the object of a request or someone else's words: ``"…"``/``'…'`` of
  three words or more right after ``translate``/``rewrite``/``summarise``/``review``/
  ``explain``/``proofread`` …, after ``says``/``wrote``/``suggests`` …, or followed by ``is this
  right?``/``who is right?``; a rule word between the verb and the quote makes it the person's
  (``explain simply and never say '…'``).

The patterns themselves are in ``core/shown_patterns.py``. A pure function of the text.
``Memory.detect_semantic_signals`` (``core/saving.py``, the one detection path of every door)
mines ``own`` only; ``core/digest.py`` writes ``own`` and the summary into a session note.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

from . import shown_patterns as pat
from .shown_patterns import OPEN_ENDED_TAGS, PASTE_TAGS

__all__ = ["OPEN_ENDED_TAGS", "PASTE_TAGS", "Piece", "Split", "split_shown"]

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
    "answer": "an agent's answer",
    "comment": "a comment",
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
    m = pat.KEY_VALUE.match(line)
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
        if pat.SIGN_OFF.match(t.lines[j]):
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
    marker = pat.ADDRESS  # the last paragraph; one before it needs a plain question or request
    while len(paragraphs) > 1:
        first, last = paragraphs[-1]
        text = " ".join(t.lines[first:last]).strip()
        if marker.match(text) or text.endswith("?"):
            end = first
            paragraphs.pop()
            marker = pat.ASKS
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

        fence = pat.FENCE.match(line)
        if fence:
            mark = fence.group(1)[0] * 3
            j = i + 1
            while j < n and not lines[j].strip().startswith(mark):
                j += 1
            i = t.mark(i, min(j + 1, n), "code")
            continue

        tag = pat.OPEN_TAG_LINE.match(line)
        if tag and t.last_close(tag.group("tag")) > i:
            close = re.compile(r"</" + re.escape(tag.group("tag")) + r"\s*>", re.I)
            j = i + 1
            while j < n and not close.search(lines[j]):
                j += 1
            if j < n:
                i = t.mark(i, j + 1, "markup")
                continue
        if pat.MARKUP_LINE.match(line):
            i = t.mark(i, _block_end(t, i, pat.MARKUP_LINE), "markup")
            continue

        if pat.QUOTE.match(line):
            i = t.mark(i, _block_end(t, i, pat.QUOTE), "quote")
            continue

        if pat.EMAIL_MARK.match(line) or pat.WROTE.match(line) or _email_headers(t, i):
            end = _give_back_trailing(t, i, _sign_off_end(t, i))
            i = t.mark(i, end, "email")
            continue
        if pat.WROTE_OPEN.match(line) and i + 1 < n and pat.WROTE_CLOSE.match(lines[i + 1]):
            end = _give_back_trailing(t, i, _sign_off_end(t, i + 1))
            i = t.mark(i, end, "email")
            continue

        if pat.DIFF_START.match(line) or (
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
        if pat.TRACE_START.match(line) and (
            stripped.startswith(("Traceback", "Exception in", "panic:", "goroutine", "thread '"))
            or (
                i + 1 < n
                and pat.FRAME.match(lines[i + 1])
                and lines[i + 1].strip().startswith("at ")
            )
        ):
            j = i + 1
            while j < n and (
                pat.FRAME.match(lines[j]) or (not t.blank(j) and pat.TRACE_START.match(lines[j]))
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

        if pat.TIMESTAMP.match(line) or pat.LEVEL.match(line):
            i = t.mark(i, _log_end(t, i), "log")
            continue
        if pat.SOFT_LEVEL.match(line):
            j = i + 1
            while j < n and (
                pat.SOFT_LEVEL.match(lines[j]) or pat.LOG_CONTINUATION.match(lines[j])
            ):
                j += 1
            if j - i >= 2 and not pat.BULLET.match(line):
                i = t.mark(i, j, "log")
                continue

        if pat.PROMPT.match(line) or pat.SHELL_HASH.match(line):
            j = i + 1
            while j < n:
                if t.blank(j):
                    if j + 1 < n and (pat.PROMPT.match(lines[j + 1])):
                        j += 1
                        continue
                    break
                j += 1
            i = t.mark(i, j, "terminal")
            continue

        if stripped[0] in "{[" and not pat.INI_SECTION.match(line):
            json_end = _json_end(lines, i)
            if json_end is not None:
                i = t.mark(i, json_end, "config")
                continue
        if (
            pat.INI_SECTION.match(line)
            and i + 1 < n
            and (pat.KEY_VALUE.match(lines[i + 1]) or _comment(lines[i + 1]))
        ):
            j = i + 1
            while j < n and (
                pat.KEY_VALUE.match(lines[j])
                or pat.INI_SECTION.match(lines[j])
                or _comment(lines[j])
                or (t.blank(j) and j + 1 < n and pat.INI_SECTION.match(lines[j + 1]))
            ):
                j += 1
            i = t.mark(i, j, "config")
            continue
        if lines[i].strip() == "---" or _config_key(line) or pat.ENV_LINE.match(line):
            j = i + 1 if lines[i].strip() == "---" else i
            keys = 0
            while j < n and (
                _config_key(lines[j])
                or pat.ENV_LINE.match(lines[j])
                or (keys and (pat.YAML_ITEM.match(lines[j]) or lines[j][:1].isspace()))
                or (keys and pat.HASH_COMMENT.match(lines[j]))
            ):
                keys += bool(_config_key(lines[j]) or pat.ENV_LINE.match(lines[j]))
                j += 1
            if keys >= 2:
                i = t.mark(i, j, "config")
                continue

        if (
            prev_blank
            and (line.startswith("\t") or line.startswith("    "))
            and not (pat.BULLET.match(line) or _after_list(t, i))
        ):
            j = i
            while j < n and (
                lines[j].startswith(("\t", "    "))
                or (t.blank(j) and j + 1 < n and lines[j + 1].startswith(("\t", "    ")))
            ):
                j += 1
            # Indented prose is the person's (or, after an intro, a text: see _intros).
            if any(
                pat.CODE_LINE.match(x.strip())
                or pat.COMMENT_LINE.match(x)
                or pat.HASH_COMMENT.match(x)
                for x in lines[i:j]
            ):
                i = t.mark(i, j, "code")
                continue

        if pat.COMMENT_LINE.match(line):
            i = t.mark(i, _code_end(t, i, allow_single=True), "code")
            continue
        if pat.HASH_COMMENT.match(line) and _script_line(t, i + 1):
            j = i + 1  # "# Start it in watch mode" / "aider --watch-files": a script's lines
            while j < n and (_script_line(t, j) or (t.blank(j) and _script_line(t, j + 1))):
                j += 1
            i = t.mark(i, j, "code")
            continue
        if pat.CODE_LINE.match(line) and not pat.BULLET.match(line):
            j = _code_end(t, i, allow_single=False)
            if j - i >= 2:
                i = t.mark(i, j, "code")
                continue
        i += 1


def _script_line(t: _Lines, j: int) -> bool:
    """Line ``j`` is a ``#`` comment or a command with a flag."""
    return j < len(t.lines) and bool(
        pat.HASH_COMMENT.match(t.lines[j]) or pat.COMMAND_LINE.match(t.lines[j])
    )


def _comment(line: str) -> bool:
    return bool(re.match(r"^\s*[#;]", line))


def _after_list(t: _Lines, i: int) -> bool:
    """Is line ``i`` inside a list (a bullet above it, before any other paragraph)?"""
    j = i - 1
    while j >= 0 and t.blank(j):
        j -= 1
    return j >= 0 and bool(pat.BULLET.match(t.lines[j]))


def _code_end(t: _Lines, i: int, *, allow_single: bool) -> int:
    """Where a run of code lines starting at ``i`` ends (blank lines inside it kept when code
    follows them)."""
    lines, n = t.lines, len(t.lines)
    j = i
    code_lines = 0
    while j < n:
        line = lines[j]
        if t.blank(j):
            if j + 1 < n and (
                pat.CODE_LINE.match(lines[j + 1]) or pat.COMMENT_LINE.match(lines[j + 1])
            ):
                j += 1
                continue
            break
        if (pat.CODE_LINE.match(line) and not pat.BULLET.match(line)) or pat.COMMENT_LINE.match(
            line
        ):
            code_lines += 1
        elif not (code_lines and (line[:1].isspace() or pat.HASH_COMMENT.match(line))):
            break
        j += 1
    if code_lines < 2 and not allow_single:
        return i
    return j


def _email_headers(t: _Lines, i: int) -> bool:
    """Two or more mail headers, one of them an address, a subject or a date ("From: staging /
    To: production" is the person's own shorthand)."""
    j = i
    while j < len(t.lines) and pat.HEADER.match(t.lines[j]):
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
        hunk = pat.HUNK.match(line)
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
        if pat.DIFF_META.match(line) or line.startswith("\\ No newline"):
            j += 1
            continue
        if (
            not line.strip()
            and j + 1 < n
            and (pat.DIFF_META.match(lines[j + 1]) or pat.HUNK.match(lines[j + 1]))
        ):
            j += 1
            continue
        break
    return max(j, i + 1)


def _between_log_lines(t: _Lines, j: int) -> bool:
    """Line ``j`` and at most one more, not blank, stand before a log line: the log goes on
    ("Exception Value:" / "NOT NULL constraint failed: …" / "Exception Location:<TAB>…")."""
    n = len(t.lines)
    for k in (j + 1, j + 2):
        if k >= n or t.blank(k - 1):
            return False
        if pat.LEVEL.match(t.lines[k]):
            return True
    return False


def _log_end(t: _Lines, i: int) -> int:
    lines, n = t.lines, len(t.lines)
    j = i + 1
    while j < n:
        line = lines[j]
        if (
            pat.TIMESTAMP.match(line)
            or pat.LEVEL.match(line)
            or pat.SOFT_LEVEL.match(line)
            or (not t.blank(j) and (pat.LOG_CONTINUATION.match(line) or pat.FRAME.match(line)))
            or _between_log_lines(t, j)
            or (
                t.blank(j)
                and j + 1 < n
                and (pat.TIMESTAMP.match(lines[j + 1]) or pat.LEVEL.match(lines[j + 1]))
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
            (pat.INTRO.search(line) or pat.RELAYED_INTRO.search(line))
            and not pat.OWN_INTRO.search(line)
            and not pat.LEADING_SUBORDINATE.match(line)
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
        inline = pat.INLINE_INTRO.match(line)
        if (
            inline
            and not pat.OWN_INTRO.search(inline.group("head"))
            and not pat.SUBORDINATE.search(inline.group("head"))
            and not _ends_sentence(inline.group("head"))
        ):
            tails.append((i, inline.group("tail")))
        i += 1
    return tails


def _agent_answer(t: _Lines) -> None:
    """An agent's answer pasted back, when the person's lines narrate an agent's work twice,
    once at least as only an agent does: from the paragraph of the first narration to the end
    of the text, less the last paragraphs when they turn back to the agent."""
    found = []  # (line, narrations only an agent says, narrations a person may say too)
    for i, line in enumerate(t.lines):
        if t.kind[i] is None:
            strong, weak = pat.AGENT_STRONG.findall(line), pat.AGENT_WEAK.findall(line)
            if strong or weak:
                found.append((i, len(strong), len(weak)))
    if sum(s + w for _, s, w in found) < 2 or not any(s for _, s, _ in found):
        return
    start = found[0][0]
    while start > 0 and not t.blank(start - 1):
        start -= 1
    end = max(_give_back_trailing(t, start, len(t.lines)), found[-1][0] + 1)
    for j in range(start, end):
        if t.kind[j] is None:
            t.kind[j] = "answer"


def _forge_comment(t: _Lines) -> None:
    """A comment copied from a forge's page: from its header ("commented" and "1 minute ago",
    on one line or two, the author's name on the line above) to the end, less the last
    paragraphs when they turn back to the agent."""
    for i, line in enumerate(t.lines):
        if t.kind[i] is not None or not pat.COMMENT_HEADER.match(line):
            continue
        dated = re.search(r"\bago\s*$", line) or (
            i + 1 < len(t.lines) and pat.AGO_LINE.match(t.lines[i + 1])
        )
        if not dated:
            continue
        start = i - 1 if i > 0 and not t.blank(i - 1) and len(t.lines[i - 1].split()) <= 3 else i
        end = _give_back_trailing(t, start, len(t.lines))
        for j in range(start, end):
            if t.kind[j] is None:
                t.kind[j] = "comment"
        return


def _ends_sentence(head: str) -> bool:
    return bool(re.search(r"[.!?]\s", head))


def _quoted(own: str) -> tuple[str, list[Piece]]:
    """Quoted text that is a request's object or someone else's words, taken out of ``own``."""
    pieces: list[Piece] = []
    out = []
    for line in own.split("\n"):
        parts: list[str] = []
        pos = 0
        for m in pat.QUOTED.finditer(line):
            body = m.group("a") or m.group("b") or m.group("c") or ""
            if len(body.split()) < 3:
                continue  # a word or a name in quotes, not a text
            # The sentence around the quote (a quote may hold sentences of its own).
            before = line[: m.start()]
            ends = list(pat.SENTENCE_END.finditer(before))
            after = pat.SENTENCE_END.search(line, m.end())
            # The verb is the quote's own: just before it ("translate '…'", "says '…'") or the
            # question just after it ("'…' - is this right?"); "Explain simply and never say
            # '…'" keeps its quote.
            lead = before[ends[-1].end() if ends else 0 :][-40:]
            tail = line[m.end() : after.start() + 1 if after else len(line)]
            verbs = list(pat.QUOTE_CONTEXT.finditer(lead))
            if verbs and pat.RULE_BETWEEN.search(lead[verbs[-1].end() :]):
                verbs = []  # "explain simply and never say '…'": the quote is the rule's
            if not (verbs or pat.QUOTE_QUESTION.search(tail)):
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
        m = pat.WRAPPER_OPEN.search(text, pos)
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
        if end is None and tag in pat.OPEN_ENDED:
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
    _agent_answer(t)
    _forge_comment(t)
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
