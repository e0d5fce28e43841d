"""The patterns of shown content (``core/shown.py`` is the splitter that applies them).

Regular expressions and the word alternations they are built from, in the order the splitter
uses them: paste wrappers and markup, the line shapes of code, quotes, diffs, traces, logs,
terminal sessions, emails and configs, then the introductions that present a paste, quoted
objects of a request, and the words with which a person turns back to the agent.
"""

from __future__ import annotations

import re

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

TAG_NAMES = "|".join(re.escape(t) for t in sorted(PASTE_TAGS, key=len, reverse=True))
WRAPPER_OPEN = re.compile(r"<(?P<tag>" + TAG_NAMES + r")(?:\s[^<>]*)?>", re.I)
OPEN_ENDED = frozenset(OPEN_ENDED_TAGS)
OPEN_TAG_LINE = re.compile(r"^\s*<(?P<tag>[A-Za-z][\w:.-]*)(?:\s[^<>]*)?>\s*$")
MARKUP_LINE = re.compile(
    r"^\s*(?:<[A-Za-z][^<>]*>.*</[\w:.-]+>|<!--.*-->|</?[A-Za-z][^<>]*/?>|<[!?][^<>]*>)\s*$"
)
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
QUOTE = re.compile(r"^\s*>(?!>>\s)")
BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s")

DIFF_START = re.compile(r"^(?:diff --git |diff -\w|Index: |@@ -\d)")
DIFF_META = re.compile(
    r"^(?:diff |index [0-9a-f]|new file mode|deleted file mode|old mode|new mode|similarity |"
    r"rename (?:from|to) |Binary files |--- \S|\+\+\+ \S|={10,}$|Index: )"
)
HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")

TRACE_START = re.compile(
    r"^(?:Traceback \(most recent call last\):|Exception in thread |panic: |goroutine \d+ \[|"
    r"thread '[^']*' panicked at|Uncaught \w*(?:Error|Exception)|Fatal error: |"
    r"\s*(?:[\w$]+\.)*[\w$]*(?:Error|Exception)(?:: .*)?$)"
)
FRAME = re.compile(
    r"^(?:\s+at |\s+File \"|\s+\.\.\. \d+ more|Caused by: |\s*During handling of|\s*The above "
    r"exception|\s+\S|#\d+ |\d+: 0x)"
)
TIMESTAMP = re.compile(
    r"^\s*[\[(]?(?:\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{1,2}:\d{2}|\d{1,2}:\d{2}:\d{2}|"
    r"\d{2}/\d{2}/\d{4}|[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}|\d+\.\d{3,}\]|\d{10,13}\b)"
)
LEVEL = re.compile(
    r"^\s*[\[(](?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|SEVERE|PANIC|"
    r"FAIL|FAILED|PASSED)[\])]|^\s*(?:TRACE|DEBUG|INFO|WARN|ERRO|FATA)\[\d+\]|level=\w+ "
    r"|^\s*(?:npm|yarn|pnpm|pip|cargo|go|mvn|gradle)(?: ERR!| WARN\b|:? error\b|:? warning\b)"
    r"|^[\w.-]+(?:[-_]\d+)?\s+\|\s"
    r"|^::(?:error|warning|notice|group|endgroup|debug)\b|^##\[(?:error|warning|group|section)"
    r"|^(?:error|warning)\[[A-Z]?\d+\]:|^\S+\.\w{1,5}:\d+(?::\d+)?: (?:error|warning|note)"
    r"|^={3,} .+ ={3,}$|^[EWIF]\d{4} \d{2}:\d{2}|^(?:FAILED|PASSED|ERROR) \S+::"
    # Python's logging ("mcp.server - INFO - …", "WARNING:root:…") and warnings ("x.py:3:
    # DeprecationWarning: …", "DeprecationWarning: …") formats.
    r"|^[\w.]+ - (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - "
    r"|^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:"
    r"|^\S+\.py:\d+: \w*(?:Warning|Error):|^(?:Warning: )?(?:\w+\.)*\w+Warning: "
    # An exception's line ("IntegrityError at /unit/create/", "TypeError: x is undefined"), a
    # tool's namespaced tag ("[plugin:vite:vue] …"), a bare location ("src/App.vue:3:14"), a
    # debug page's tab-separated fields ("Request Method:<TAB>POST").
    r"|^(?:\w+\.)*[A-Z][a-z]\w*(?:Error|Exception)(?::\s|\s+at\s+/)"
    r"|^\[[\w.-]+(?::[\w.-]+)+\]\s|^\S+\.\w{1,5}:\d+:\d+\s*$|^[A-Z][\w ]{1,30}:\t"
)
# Alone, these could be a person's own label ("WARNING: never …"): a log only two or more together.
WEAK_LEVEL = re.compile(
    r"^\s*(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|SEVERE|PANIC|FAIL|"
    r"FAILED|PASSED)(?:[\s:|-]|$)"
)
SOFT_LEVEL = re.compile(r"^\s*(?:error|warning|fatal|note|help|hint):\s|" + WEAK_LEVEL.pattern)
LOG_CONTINUATION = re.compile(r"^(?:\s+\S|\s*[|^]|\s*-->|\s*= )")

PROMPT = re.compile(
    r"^\s*[$%]\s+\S|^\s*>>>\s|^\s*In \[\d+\]:|^\s*PS [^>\n]{0,80}>\s"
    r"|^\s*(?:\([\w.-]+\)\s+)?[\w.-]+@[\w.-]+[^\n$#%]{0,60}[$#%](?:\s|$)|^\s*C:\\[^>\n]{0,80}>"
    r"|^\s*\([\w.-]+\)\s+[^\n]{0,60}?[$#%]\s"
)
# A command with a flag ("aider --watch-files", "npm run build -- --watch"): after a "# …"
# comment line, a script's or a tool's documentation, not a person's heading.
COMMAND_LINE = re.compile(r"^\s*[a-z][\w.-]*(?:\s+[\w./:@=-]+)*?\s+--?[a-z][\w-]*")
SHELL_HASH = re.compile(r"^\s*#\s+(?:sudo|cd|ls|git|apt|yum|cat|echo|make|pip|npm|docker)\b")

EMAIL_MARK = re.compile(
    r"^\s*(?:-{2,}\s*(?:Original Message|Forwarded message)\s*-*|Begin forwarded message:|"
    r"_{5,}\s*$)",
    re.I,
)
WROTE = re.compile(r"^\s*(?:On|Am|Le|El)\s.{4,200}(?:wrote|schrieb|a écrit|escribió)\s*:\s*$")
WROTE_OPEN = re.compile(r"^\s*On\s.{4,200}$")
WROTE_CLOSE = re.compile(r"^.{0,200}wrote:\s*$")
HEADER = re.compile(r"^\s*(?:From|To|Cc|Bcc|Sent|Date|Subject|Reply-To|Von|An|Betreff):\s*\S")
SIGN_OFF = re.compile(
    r"^\s*(?:best|best regards|kind regards|regards|warm regards|thanks|thank you|many thanks|"
    r"thanks again|cheers|sincerely|yours|all the best|br|cordially|talk soon)[,!.]?\s*$"
    r"|^\s*--\s*$",
    re.I,
)

INI_SECTION = re.compile(r"^\s*\[[\w .\"'-]+\]\s*$")
KEY_VALUE = re.compile(r"^\s*(?P<key>[A-Za-z_][\w.-]*)\s*(?P<sep>[:=])(?:\s|$)")
ENV_LINE = re.compile(r"^\s*(?:export\s+)?[A-Z_][A-Z0-9_]*=\S*\s*$")
YAML_ITEM = re.compile(r"^\s+-\s|^-\s+[\w.-]+:\s")

CODE_LINE = re.compile(
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
COMMENT_LINE = re.compile(r"^\s*(?://|/\*|\*/|<!--)")
HASH_COMMENT = re.compile(r"^\s*#(?!#)\s?\S")

# --------------------------------------------------------------------------------------------
# Introductions, quoted objects, turning back to the agent
# --------------------------------------------------------------------------------------------

REQUEST_VERBS = (
    r"translate|rewrite|re-?word|rephrase|paraphrase|summari[sz]e|sum up|tl;?dr|review|explain|"
    r"interpret|proofread|proof-read|correct|fix|improve|polish|shorten|simplify|edit|tidy up|"
    r"clean up|reformat|check|critique|evaluate|assess|grade|analy[sz]e|respond to|"
    r"reply to|answer|draft a reply to|comment on|look at|read|parse|classify|convert"
)
# The tighter list for a quote in a sentence: "translate 'Always back up first'".
QUOTE_VERBS = (
    r"translate|rewrite|re-?word|rephrase|paraphrase|summari[sz]e|sum up|review|explain|"
    r"interpret|proofread|improve|polish|shorten|simplify|critique|respond to|reply to|"
    r"fix (?:this|the|my|its|their|his|her)|what does|is (?:this|that|it) (?:right|correct|"
    r"true|ok|okay|good|accurate|valid|fine|grammatical)|what do you think"
)
REPORT_VERBS = (
    r"says|said|(?<!never )(?<!don't )(?<!not )(?<!always )(?<!to )say|wrote|writes|told me|"
    r"tells me|claims?|claimed|suggests?|"
    r"suggested|recommends?|recommended|posted|replied|commented|asked|sent|reads|states|"
    r"stated|insists?|insisted|argues|argued|according to|is saying"
)
PRESENT = (
    r"here(?:'s| is| are)|below is|below are|this is (?:the|a|an|what|how)|"
    r"these are|look at (?:this|these|the)|see (?:this|below|the)|pasted?|copied|"
    r"(?:i|we)(?:'m| am| are)? (?:get|got|getting|see|saw|seeing|received|receive|found)|"
    r"it (?:says|said|prints|printed|shows|showed|outputs|output|returns|returned|fails with|"
    r"failed with|gives|gave|spits out|logs|logged)|(?:fails|failed|crashes|crashed|errors|"
    r"errored|dies|died|breaks|broke) with"
)
# Nouns that name a paste: they introduce one at the end of a line ("The error:"), never inline
# ("Error handling: never swallow exceptions" is a label and a rule).
PASTE_NOUNS = (
    r"error|output|log|logs|trace|traceback|stack ?trace|"
    r"email|e-mail|message|readme|docs|documentation|diff|patch|config|comment|issue|"
    r"bug report|ticket|paragraph|section|snippet|excerpt|post|thread|reply|response|"
    r"commit message|pr description|changelog"
)
KEYWORDS = r"(?:" + PRESENT + r"|" + REQUEST_VERBS + r"|" + REPORT_VERBS + r")"
# A noun introduces a paste when it is pointed at ("the error:", "this log:", "my config:") or
# stands alone as a console's word ("Output:"); "Commit messages:" or "Docs:" heads a list of
# the person's own rules.
POINTED_NOUN = (
    r"(?:the|this|that|these|those|my|his|her|their|our|your|a|an|full|whole|following|below|"
    r"above|attached|same|original|old|new|entire)\s+(?:[\w-]+\s+){0,2}(?:" + PASTE_NOUNS + r")"
    r"|^\s*(?:error|output|log|logs|trace|traceback|stack ?trace|diff|patch|stdout|stderr|"
    r"console output|result)\s*(?=:)"
    r"|\b(?:"
    + PASTE_NOUNS
    + r"|pr|bug)\s+(?:#?[A-Z]*-?\d+\b|(?:from|of|by|sent by|du|de|des|von)\s)"
)
LINE_KEYWORDS = r"(?:" + KEYWORDS[3:-1] + r"|" + POINTED_NOUN + r")"
# An intro about the person's own rules, or one that is itself a rule, presents nothing shown.
OWN_INTRO = re.compile(
    r"\b(?:rules?|preferences?|conventions?|instructions?|guidelines?|policy|policies|"
    r"standards?|requirements?|constraints?|house style|remember|keep in mind|from now on|"
    r"going forward|note to self|always|never|must|should|make sure|don'?t|do not|"
    r"what (?:i|we) (?:want|need|expect|prefer|like|'d like|would like)|how (?:i|we) (?:want|like|"
    r"work|do)|what (?:you|to) (?:should )?do|the plan)\b",
    re.I,
)
# "When you review: …", "For the README: …" state a rule about the task, not an object.
SUBORDINATE = re.compile(
    r"^\s*(?:when|whenever|before|after|if|for|while|during|in|on|once|unless|each time|every "
    r"time|any time)\b|\byou\b",
    re.I,
)
INTRO = re.compile(r"(?:\b|^)" + LINE_KEYWORDS + r"(?:\b|(?=:))[^:\n]{0,120}:\s*$", re.I)
LEADING_SUBORDINATE = re.compile(
    r"^\s*(?:when|whenever|before|after|if|for|while|during|in|on|once|unless|each time|"
    r"every time|any time)\b",
    re.I,
)
# A line going on after the colon: "Rewrite this commit message: never squash merges". A verb
# that only ever takes a text, or any request verb whose object is a text ("fix this:", "review
# the wording:"); "Fix the login form: empty emails are accepted" is the person's description.
TEXT_VERBS = (
    r"translate|rewrite|re-?word|rephrase|paraphrase|summari[sz]e|sum up|tl;?dr|proofread|"
    r"proof-read|polish|shorten"
)
TEXT_OBJECT = (
    r"(?:this|that|these|those|it|the following|below)\b|(?:the|my|his|her|their|our|a|an|"
    r"this|that)\s+(?:[\w-]+\s+){0,2}(?:text|message|sentence|paragraph|email|e-mail|wording|"
    r"comment|docstring|title|description|copy|answer|post|reply|note|string|phrase|quote|lines?|"
    r"section|readme|doc|docs|changelog|tweet|summary|statement|claim|advice|snippet|excerpt|"
    r"translation|output|log|error|trace|report|issue|ticket)\b"
)
INLINE_HEAD = "|".join(
    (
        r"\b(?:" + TEXT_VERBS + r")\b",
        r"\b(?:" + REQUEST_VERBS + r")\s+" + TEXT_OBJECT,
        r"\b(?:" + PRESENT + r"|" + REPORT_VERBS + r")\b",
    )
)
INLINE_INTRO = re.compile(
    r"^(?P<head>[^:\n]{0,160}?(?:" + INLINE_HEAD + r")[^:\n]{0,120}?:)\s+(?P<tail>\S.*)$", re.I
)
QUOTED = re.compile(
    r"\"(?P<a>[^\"\n]{3,}?)\"|(?<![\w'])'(?P<b>[^'\n]{3,}?)'(?![\w'])|\u201c(?P<c>[^\u201d\n]{3,}?)"
    r"\u201d"
)
SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
QUOTE_CONTEXT = re.compile(r"\b(?:" + QUOTE_VERBS + r"|" + REPORT_VERBS + r")\b", re.I)
RULE_BETWEEN = re.compile(r"\b(?:never|always|don'?t|do not|avoid|use|say|write)\b", re.I)
QUOTE_QUESTION = re.compile(
    r"\b(?:is (?:this|that|it) (?:right|correct|true|ok|okay|good|accurate|valid|fine|"
    r"grammatical)|what does (?:this|that|it) mean|what do you think|who is right|true\?|"
    r"right\?|correct\?|agree\?)",
    re.I,
)
# The last paragraphs after a paste that turn back to the agent.
ADDRESS = re.compile(
    r"^\s*(?:(?:can|could|would|will|do|should) (?:you|we|i)\b|please\b|pls\b|also\b|"
    r"btw\b|by the way|ps\b|p\.s\.|thanks?\b|thank you|and (?:also|please|can|could|btw)\b|"
    r"what\b|why\b|how\b|where\b|which\b|who\b|is (?:this|that|it|there)\b|are (?:these|those|"
    r"they)\b|does\b|i (?:want|need|would)\b|i'd\b|my question|question:|help me\b|tell me|"
    r"let me know|(?:" + REQUEST_VERBS + r")\b|draft\b|write\b|give me|show me|"
    r"(?:ask|triage|implement|add|update|create|delete|remove|revert|run|make|reply|"
    r"investigate|find|send|open|merge|port|apply|refactor|debug|test|ignore|use|keep|"
    r"tell|decide|compare|list|port|move|rename|undo)\s+(?:the|a|an|this|that|these|it|them|"
    r"him|her|me|my|our|your|his|their|what|why|how|whether|if|both|all|one)\b|"
    r"(?:and |also,? )?for (?:the )?future\b|separately\b|unrelated\b|one more thing)",
    re.I,
)

ASKS = re.compile(
    r"^\s*(?:(?:can|could|would|will) you\b|please\b|i (?:want|need|would like)\b|i'd like\b)",
    re.I,
)

# A line that presents what follows as someone else's, without a colon (issue 35 point 4):
# "My colleague sent me this note, what do you think?", "I found these rules online."
RELAYED_INTRO = re.compile(
    r"^(?=.{0,160}$).*\b(?:sent me|forwarded|shared with me|found (?:this|these|the following)"
    r"|copied (?:this|these|from)|(?:colleague|co-?worker|teammate|lead|manager|boss|friend"
    r"|someone|client)\b.{0,40}\b(?:wrote|sent|says|said|shared|gave me))\b",
    re.I,
)

# An agent's answer pasted back (issue 35: "whose words"): the coding agent narrating its own
# work. Strong: only an agent says it of itself ("Let me implement this:", "Would you like me
# to proceed"); weak: a person may say it too ("I need to update", "Looking at the file").
_WORK = (
    r"(?:check|implement|look|run|execute|examine|read|search|create|update|fix|verify|start"
    r"|review|analy[sz]e|modify|add|write|open|test|find|inspect|proceed|investigate|provide"
    r"|mark|go\s+ahead|help)"
)
AGENT_STRONG = re.compile(
    r"(?:^|[.!:]\s+)(?:let me (?:now |first |also )?" + _WORK + r"\b"
    r"|i(?:'ll| will) (?:now |first |also )?" + _WORK + r"\b"
    r"|would you like me to\b|i(?:'ve| have) (?:now )?(?:updated|implemented|created|fixed"
    r"|added|modified|made the following|completed)\b)",
    re.I,
)
AGENT_WEAK = re.compile(
    r"(?:^|[.!:]\s+)(?:(?:now |first, )?i need to "
    + _WORK
    + r"\b|i should (?:now |first )?"
    + _WORK
    + r"\b|i can see (?:that|there)\b|looking at (?:the )?(?:[\w.`/-]+ ){0,2}(?:file|code"
    r"|output|error|logs?)\b|looking at `?[\w/-]+\.\w+\b|after running this\b)",
    re.I,
)

# A comment copied from a forge's page (GitHub, GitLab): "vercel bot" / "commented" / "1 minute
# ago", or "octocat commented 2 days ago" on one line.
COMMENT_HEADER = re.compile(
    r"^\s*(?:[\w.\[\]-]+(?:\s+bot)?\s+)?(?:commented|replied|reviewed)(?:\s+on\s+.{1,40}?)?"
    r"(?:\s+\d+\s+(?:second|minute|hour|day|week|month|year)s?\s+ago)?\s*$",
    re.I,
)
AGO_LINE = re.compile(
    r"^\s*(?:\d+|an?)\s+(?:second|minute|hour|day|week|month|year)s?\s+ago\s*$", re.I
)
