"""The patterns of signal detection (``core/signals.py`` is the detector that applies them).

Regular expressions and the regex word alternations they are built from, in the order the
detector uses them: masking code, cutting sentences and clauses, lead-ins, chatter (questions,
one-off requests, narration), the signal patterns by confidence, context inference, labels, and
the category keyword groups. Plain word lists are in ``core/lexicon.py``.
"""

from __future__ import annotations

import re

from .lexicon import PAST_FORMS

FENCE = re.compile(r"```.*?(?:```|$)", re.S)


URL = re.compile(r"\b(?:https?://|www\.)\S+")

PLACEHOLDER = re.compile(r"\ue000(\d+)\ue001")

ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|incl|esp|cf|ca)\.", re.I)

BULLET = re.compile(r"^\s*(?:[-*\u2022+>]|\d{1,3}[.)])\s+")

SENTENCE_END = re.compile(r"(?<=[.!?\u2026])\s+")

DOT = "\ue002"

# Words that begin a new rule inside a sentence: a clause boundary is put in front of them.
SIGNAL_HEAD = (
    r"(?:(?:please|also|just|and|then)\s+)*"
    r"(?:always|never|don'?t|do\s+not|stop\s+\w+ing|avoid|from\s+now\s+on|going\s+forward|"
    r"remember\s+(?:that|to)|keep\s+in\s+mind|(?:i|we)\s+(?:also\s+)?prefer|prefer|"
    r"use\s+\S+(?:\s+\S+){0,3}\s+(?:instead\s+of|rather\s+than))\b"
)

CLAUSE_SPLIT = re.compile(
    r"\s*;\s*"
    r"|\s+(?:\u2014|\u2013|--|-)\s+"
    r"|\s*:\s+(?=" + SIGNAL_HEAD + r")"
    r"|,?\s+(?:and|but|plus|also|then)\s+(?:also\s+)?(?=" + SIGNAL_HEAD + r")",
    re.I,
)

LEADIN_WORDS = (
    r"ok(?:ay)?|k|kk|thanks(?:\s+a\s+lot)?|thank\s+you(?:\s+so\s+much)?|thx|ty|cheers|"
    r"hey|hi|hello|oh|ah|hmm+|um+|uh|so|and|also|plus|but|btw|by\s+the\s+way|fyi|"
    r"one\s+more\s+thing|another\s+thing|just|please|pls|plz|kindly|actually|honestly|"
    r"in\s+general|generally|as\s+a\s+(?:general\s+)?rule|for\s+the\s+record|"
    r"just\s+so\s+you\s+know|as\s+you\s+(?:can\s+)?see|ps|p\.s\.?"
)

# Labels that are lead-ins only when punctuated: "Note: never ...", "Rule - always ...".
LABEL_WORDS = (
    r"note|important|reminder|gentle\s+reminder|quick\s+note|side\s+note|heads\s+up|rule|"
    r"new\s+rule|general\s+rule|house\s+rule|tip|correction|update|fyi"
)

# Acknowledgements that are lead-ins only when punctuated: "Great, ..." but not "Good tests ...".
ACK_WORDS = (
    r"cool|great|perfect|nice|awesome|good|excellent|alright|all\s+right|right|yes|yeah|yep|"
    r"yup|sure|well|fine|got\s+it|understood|noted|lgtm|looks\s+good|sounds\s+good|works"
)

LEADIN = re.compile(
    r"^(?:(?:"
    + LEADIN_WORDS
    + r")\b\s*[,:!.\u2014\u2013-]*|no+(?:[\s,]+no+)*\s*[,:!.\u2014\u2013-]+"
    r"|(?:" + LABEL_WORDS + r")\s*[:!\u2014\u2013-]+"
    r"|(?:" + ACK_WORDS + r")\s*[,:!.\u2014\u2013-]+)"
    r"\s*",
    re.I,
)

REQUEST_LEADIN = re.compile(
    r"^(?:i\s+(?:really\s+)?(?:want|need|would\s+like|'d\s+like|d\s+like)\s+you\s+to|"
    r"i'd\s+like\s+you\s+to|can\s+you|could\s+you|would\s+you|will\s+you|"
    r"make\s+sure\s+(?:that\s+)?(?:you\s+|we\s+)?(?:to\s+)?(?=always|never|don|do\s+not)|"
    r"be\s+sure\s+to(?=\s+(?:always|never))|try\s+to(?=\s+(?:always|never))|"
    r"remember\s+to(?=\s+(?:always|never))|i\s+think|i\s+guess|i\s+believe|"
    r"i\s+feel\s+like|let'?s(?!\s+not\b)|let\s+us(?!\s+not\b))\b\s*,?\s*",
    re.I,
)

TRAILING_POLITE = re.compile(
    r"(?:[,\s]+(?:please|pls|plz|thanks|thank\s+you|thx|ok(?:ay)?|cheers|btw|by\s+the\s+way|fyi))+"
    r"\s*[.!]*\s*$",
    re.I,
)

AUXILIARIES = (
    "should|shall|do|does|did|is|are|was|were|am|can|could|would|will|have|has|had|may|might|"
    "must|isn't|aren't|wasn't|weren't|doesn't|didn't|don't|won't|wouldn't|shouldn't|couldn't|"
    "can't|haven't|hasn't"
)

QUESTION_START = re.compile(
    r"^(?:(?:" + AUXILIARIES + r")\s+(?:we|you|i|it|they|he|she|this|that|these|those|there|"
    r"the|a|an|our|your|my|any|anyone|anybody|everyone|people)\b"
    r"|(?:what|why|how|which|who|whom|whose|where)\b"
    r"|when\s+(?:" + AUXILIARIES + r")\b"
    r"|(?:any\s+idea|is\s+there|i\s+wonder|wondering|not\s+sure\s+(?:if|whether)|"
    r"do\s+you\s+know|how\s+about|what\s+about)\b)",
    re.I,
)

HEDGE = re.compile(r"\b(?:wonder(?:ing)?\s+(?:if|whether)|not\s+sure\s+(?:if|whether))\b", re.I)

NEVER_MIND = re.compile(r"\bnever\s*mind(?:\s+(?:that|this|it)(?=\s*[,.!;:]))?\b[,.!;:]*\s*", re.I)

ONE_OFF = re.compile(
    r"\b(?:for\s+now|(?:just\s+)?(?:this|that)\s+(?:time|once)|right\s+now|today|tonight|"
    r"at\s+the\s+moment|for\s+the\s+moment|yet|just\s+yet|"
    r"(?:for|in|on)\s+this\s+(?:one|task|pr|commit|branch|change|session|ticket|issue|run)|"
    r"until\b|when\s+you(?:'re|\s+are)\s+done|when\s+(?:you(?:'ve)?\s+)?finish\w*|"
    r"once\s+you(?:'re|\s+are)\s+done|(?<!only\s)(?<!than\s)once\s*$|"
    r"after\s+(?:this|that)|afterwards|mid-\w+|"
    r"(?:that|this|it)(?:'s|\s+is)\s+(?:next|later)|next\s+(?:sprint|week|time))\b",
    re.I,
)

# A bug report or narration in progress: "X is throwing a 500", "the build keeps failing".
IN_PROGRESS = re.compile(
    r"\b(?:is|are|was|were|keeps|kept|been)\s+"
    r"(?:(?!(?:every|any|some|no)?thing\b|string\b)\w+ing|broken|slow|stuck|missing)\b",
    re.I,
)

# Future talk and hedges: "we can always add caching later", "we might not always need".
FUTURE_HEDGE = re.compile(
    r"^(?:we|you|i|it|this|that|they)\s+(?:can|could|might|may|would|will|'ll)\b"
    r"|\b(?:later|eventually|someday|some\s+day|perhaps|maybe|probably)\b",
    re.I,
)

WORD = re.compile(r"[A-Za-z0-9\ue000-\ue001][A-Za-z0-9_'.*/+#\-\ue000\ue001]*")

SHOUTED = re.compile(r"\b(ALWAYS|NEVER|DON'T|DO NOT|NOT|STOP|AVOID|PLEASE)\b")

TIME_PHRASE = re.compile(
    r"[,\s]*\b(?:from\s+now\s+on|going\s+forward|moving\s+forward|from\s+here\s+on(?:\s+out)?|"
    r"henceforth)\b[,]*",
    re.I,
)

MAX_CLAUSE = 600  # characters: a stated rule is a sentence, not a page

MAX_KEYWORDS = 4  # always/never occurrences examined per clause

FROM_NOW_ON = re.compile(
    r"(?:^|,\s*|\s)(?:from\s+now\s+on|going\s+forward|moving\s+forward|from\s+here\s+on(?:\s+out)?"
    r"|henceforth|in\s+(?:the\s+)?future)\b\s*,?\s*",
    re.I,
)

REMEMBER = re.compile(
    r"^(?:remember|keep\s+in\s+mind|bear\s+in\s+mind|don'?t\s+forget|do\s+not\s+forget)"
    r"(?:\s+that\b|(?:\s+this)?\s*[:,\u2014\u2013-]|\s+(?=(?:we|i|our|my)\s))\s*(?P<fact>.+)$",
    re.I,
)

REMEMBER_TRAILING = re.compile(
    r"^(?P<fact>.+?)[,\s\u2014\u2013-]+(?:please\s+)?(?:remember|keep\s+in\s+mind|"
    r"don'?t\s+forget)\s+(?:that|this)\s*[.!]*$",
    re.I,
)

REMEMBER_TO = re.compile(r"^(?:remember|don'?t\s+forget|do\s+not\s+forget)\s+to\s+(?P<x>.+)$", re.I)

FINITE = re.compile(
    r"\b(?:is|are|isn't|aren't|'s|'re|must|should|shall|needs?|has|have|can|cannot|can't|"
    r"doesn't|don't|won't|will|only|always|never|lives?|runs?|uses?|goes|go|belongs?|sits?|"
    r"points?|means?|requires?|depends?|expects?|contains?|holds?|deploys?|ships?|happens?|"
    r"works?|takes?|stays?|comes?|lands?|breaks?|fails?|stores?|keeps?|calls?)\b",
    re.I,
)

# "remember that bug we fixed": a bare noun (phrase) followed by a relative clause, or an event.
RELATIVE_NOUN = re.compile(
    r"^(?:[a-z][\w-]*\s+){1,2}(?:we|you|i|they|he|she|that\s+we|that\s+you)\s+\w+"
    r"|^(?:time|day|night|week|month|meeting|conversation|call|chat|talk|discussion|incident|"
    r"outage|one|thing|issue|bug|error|problem)\b",
)

PAST_VERB = re.compile(
    r"^(?:we|you|i|they|he|she|it|the\s+[\w-]+|our\s+[\w-]+)\s+(?:\w+ed|"
    + "|".join(sorted(PAST_FORMS))
    + r")\b",
    re.I,
)

PREFER = re.compile(
    r"^(?:i|we|the\s+team|our\s+team|my\s+team|everyone|the\s+user)"
    r"(?:'d|\s+would|\s+really|\s+generally|\s+usually|\s+strongly|\s+also|\s+do|\s+kind\s+of|"
    r"\s+definitely|\s+much|\s+all|\s+always|\s+still)*\s+"
    r"(?P<verb>prefers?|rather)\b\s*:?\s*(?P<rest>.*)$",
    re.I,
)

PREFER_IMPERATIVE = re.compile(r"^(?:always\s+)?prefer\s+(?P<rest>.+)$", re.I)

PREFERENCE_IS = re.compile(
    r"^(?:my|our)\s+preference\s+(?:is\s+(?:to\s+)?|:\s*)(?P<rest>.+)$", re.I
)

PREFERRED = re.compile(r"^(?P<x>.+?)\s+(?:is|are)\s+(?:always\s+)?preferred\b(?P<rest>.*)$", re.I)

INSTEAD = re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\b", re.I)

INSTEAD_END = re.compile(r"\binstead\s*$", re.I)

CORRECTION_NOT_FIRST = re.compile(
    r"^(?:no+\b[,.!]*\s*)?(?:not|don'?t\s+use|do\s+not\s+use|never\s+use|stop\s+using)\s+"
    r"(?P<x>.+?)\s*(?:[,;:\u2014\u2013]|--|\s-\s)\s*(?:please\s+|just\s+|instead\s+)*"
    r"(?P<verb>use|try|go\s+with|switch\s+to|prefer|pick|choose|we\s+use)"
    r"\s+(?P<y>.+?)(?:\s+instead)?$",
    re.I,
)

CORRECTION_NOT_LAST = re.compile(
    r"^(?:no+\b[,.!]*\s*)?(?:(?:we|i)\s+(?:only\s+|always\s+)?)?(?P<verb>use|try|go\s+with|switch\s+to|pick|choose)\s+(?P<y>.+?)"
    r"\s*(?:,|;|\u2014|\u2013|--|\s-)?\s+(?:and\s+|but\s+)?not\s+(?P<x>[^,;]+?)"
    r"(?:\s*,\s*(?P<tail>(?:for|in|on|when|with|across|throughout)\b[^,;]*))?$",
    re.I,
)

# "not jest, vitest": a bare correction between two short names.
CORRECTION_BARE = re.compile(
    r"^not\s+(?P<x>[^,;\s]+(?:\s+[^,;\s]+){0,2})\s*(?:[,;:\u2014\u2013]|--|\s-)\s*(?:but\s+)?"
    r"(?:use\s+)?(?P<y>[^,;\s]+(?:\s+[^,;\s]+){0,2})$",
    re.I,
)

BARE_REJECT = re.compile(
    r"\b(?:the|a|an|this|that|these|those|my|our|your|it|me|you|i|we|now|yet|really|sure|"
    r"quite|exactly|necessarily|bad|good|great|thanks|thank|please|sorry|ok|okay|much|only|"
    r"all|everything|everyone|today|here|there|again|anymore|really|so|too|very)\b",
    re.I,
)

NEGATIVE_START = re.compile(
    r"^(?:(?P<we>we|you\s+all)\s+)?(?P<neg>don'?t|do\s+not|dont)\s+(?:ever\s+)?(?P<rest>.+)$",
    re.I,
)

I_DONT_WANT = re.compile(
    r"^i\s+(?:really\s+)?(?:don'?t|do\s+not)\s+want\s+(?:you\s+to\s+|to\s+see\s+|any\s+)"
    r"(?P<rest>.+)$",
    re.I,
)

LETS_NOT = re.compile(r"^(?:let'?s|let\s+us)\s+not\s+(?P<rest>.+)$", re.I)

MODAL_NEGATIVE = re.compile(
    r"^(?P<subject>.+?)\s+(?:should\s+not|shouldn't|must\s+not|mustn't|shall\s+not|"
    r"may\s+not|are\s+not\s+to|is\s+not\s+to|are\s+not\s+allowed\s+to|is\s+not\s+allowed\s+to)"
    r"\s+(?:ever\s+)?(?P<rest>.+)$",
    re.I,
)

STOP = re.compile(r"^(?:stop|quit)\s+(?P<ger>\w+ing)\b(?P<rest>.*)$", re.I)

AVOID = re.compile(r"^(?:always\s+)?avoid\s+(?P<rest>.+)$", re.I)

DONT_EXCEPTIONS = re.compile(
    r"^(?:(?:worry|bother)(?!\s+(?:about|with)\s+(?!it\b|that\b|this\b|them\b)\w)|mind|panic|apologi[sz]e|be\s+sorry|sweat|stress|know|think|care|forget|"
    r"remember|understand|see|get\s+it|get\s+why|like\s+(?:it|this|that)|need\s+(?:it|that)|"
    r"have|do\s+(?:it|that|this)|touch\s+(?:it|that|this))\b",
    re.I,
)

SUBJECT_WE = re.compile(
    r"^(?:we|we\s+all|all\s+of\s+us|the\s+team|our\s+team|everyone|everybody)"
    r"(?:\s+(?:should|must|shall|will|'ll|need\s+to|have\s+to|ought\s+to|are\s+to|want\s+to|"
    r"always\s+want\s+to|try\s+to|can))?$",
    re.I,
)

SUBJECT_YOU_MODAL = re.compile(
    r"^(?:you|y'all|you\s+all|you\s+guys)\s+(?:should|must|shall|will|'ll|need\s+to|have\s+to|"
    r"ought\s+to|are\s+to|want\s+to)$",
    re.I,
)

MODAL_END = re.compile(
    r"\s(?:should|must|shall|needs?\s+to|has\s+to|have\s+to|ought\s+to|is\s+to|are\s+to|"
    r"will\s+have\s+to)$",
    re.I,
)

PRONOUN_SUBJECT = re.compile(
    r"^(?:it|this|that|they|he|she|i|things|stuff|there|which|what|someone|somebody|nobody)\b",
    re.I,
)

I_PREFERENCE = re.compile(r"^i(?:'d|\s+would)?$", re.I)

ENSURE = re.compile(r"^(?:make\s+sure|ensure|be\s+sure|check\s+that|see\s+to\s+it)\b", re.I)

TRAILING_ALWAYS = re.compile(r"^(?P<head>.+?)[,\s]+always\s*[.!]*$", re.I)

SPECULATION = re.compile(
    r"\b(?:might|may|could|would|maybe|perhaps|probably|possibly|hopefully)\b", re.I
)

ADVERBIAL = re.compile(
    r"^(?P<adv>(?:for|in|on|when|with|inside|within)\s[^,]{1,60}),\s*(?P<rest>.+)$", re.I
)

WE_USE = re.compile(r"^(?:we|you)\s+(?:should\s+|must\s+|will\s+|need\s+to\s+|have\s+to\s+)?", re.I)

NAME = (
    r"(?!(?i:this|that|it|there|here|these|those|they|he|she|we|you|i|which|what|who|the|a|an)\b)"
    r"(?:\ue000\d+\ue001|[A-Z][\w.+#/-]*|[a-z][\w.+#-]*[A-Z0-9.][\w.+#-]*|\d[\w.+-]*)"
)

PROJECT_NOUN = (
    r"(?:project|repo|repository|codebase|app|application|library|package|service|monorepo|team|"
    r"extension|code|site|api|backend|frontend|server|cli|tool)"
)

CONTEXT_FACTS = (
    # "We use Linear as a ticket tracking system", "Our team follows trunk-based development".
    re.compile(
        r"^(?:we|our\s+team|the\s+team)\s+(?:only\s+|mainly\s+|mostly\s+)?"
        r"(?:use|follow|rely\s+on|deploy\s+(?:to|on|with)|host\s+(?:on|with)|target|"
        r"support|ship\s+(?:to|with|on)|store|build\s+with|write\s+in|track|manage)\s+"
        r"(?!(?:it|this|that|them|these|those|something|anything)\b)\S",
        re.I,
    ),
    # "This project uses Vitest as its testing framework", "The app is built with Next.js".
    re.compile(
        r"^(?:this|the|our)\s+(?:[\w-]+\s+)?" + PROJECT_NOUN + r"\s+"
        r"(?:uses|is\s+(?:built|written|deployed|hosted|tested|managed)\s+(?:with|in|on|to|by)|"
        r"runs\s+on|relies\s+on|targets|requires|supports|follows|depends\s+on)\s+"
        r"(?!(?:too|a\s+lot|lots|more|less|much|many|so)\b)\S",
        re.I,
    ),
    # "SQLite is the default backend", "Bun is the package manager and runtime".
    re.compile(r"^" + NAME + r"(?:\s+" + NAME + r")?\s+(?:is|are)\s+(?:the|our)\s+\S"),
    # "The main branch is called main", "The default model is Sonnet".
    re.compile(
        r"^the\s+(?:[\w-]+\s+){0,4}?(?:[\w-]+)\s+(?:for\s+this\s+\w+\s+)?"
        r"(?:is|are)\s+(?:called|named|set\s+to)\s+\S"
        r"|^the\s+(?:default|main|primary|preferred|standard)\s+(?:[\w-]+\s+){1,3}(?:is|are)\s+\S",
        re.I,
    ),
    # "Tests live in tests/", "Tests run against an embedded PostgreSQL engine".
    re.compile(
        r"^(?!(?:it|this|that|they|there|we|you|i|he|she)\b)(?:[\w\ue000\ue001./*-]+\s+){0,3}?"
        r"(?:live|lives|run|runs|are\s+(?:stored|located|kept|defined|generated)|"
        r"is\s+(?:stored|located|kept|defined|generated)|belong|belongs|go|goes)\s+"
        r"(?:in|under|inside|against|on|with|at|into)\s+\S",
        re.I,
    ),
    # Facts offered as information in a prompt (issue 35), each naming what it is about:
    # "This is my Stationpedia app that is built for the game Stationeers", "This is the GitHub
    # repo for my AI file organization app", "It's serving services including Jellyfin".
    re.compile(
        r"^(?:this|it)(?:'s|\s+is)\s+(?:(?:my|our|the|a|an)\s+(?:[\w.+#'-]+\s+){0,5}?"
        r"(?:" + PROJECT_NOUN + r"|webserver|mod|game|plugin|theme|bot|website|fork|workspace)s?"
        r"|(?:serving|hosting|running|built\s+(?:for|with|on)|written\s+in|deployed\s+(?:to|on)"
        r"|hosted\s+on))\b(?=.*\s(?-i:" + NAME + r"))",
        re.I,
    ),
    # "It's serving a number of services including jellyfin, jellyseerr, ampache": what it runs.
    re.compile(
        r"^(?:it|this|the\s+\w+)(?:'s|\s+is)\s+(?:serving|hosting|running)\b.{0,60}?"
        r"\b(?:including|such\s+as)\s+[\w.-]+,\s",
        re.I,
    ),
    # "im using digital ocean", "We're on Postgres 16", "I'm developing on LocalWP".
    re.compile(
        r"^(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:currently\s+|also\s+)?(?:using|on|running"
        r"|hosting\s+(?:on|with)|deploying\s+(?:to|on)|developing\s+(?:on|with|in)"
        r"|building\s+(?:with|on))\s+(?!(?:it|this|that|them|these|those|a\s+\w+\s+(?:issue"
        r"|problem|error|bug))\b)\S",
        re.I,
    ),
    # ".NET SDK installed", "Docker and Node 20 are already installed".
    re.compile(
        r"^\.?" + NAME + r"(?:\s+(?:and\s+)?" + NAME + r"){0,3}\s+(?:is\s+|are\s+)?"
        r"(?:already\s+)?(?:installed|downloaded|set\s+up|configured)\b",
    ),
    # "I have two repos: one for the Mac version and one for the Windows version".
    re.compile(
        r"^(?:i|we)\s+have\s+(?:\w+\s+){0,3}(?:repos|repositories|projects|apps|servers"
        r"|environments|deployments)\b(?=.*\s(?-i:" + NAME + r"))",
        re.I,
    ),
)
# "Jotai for atomic state management": a name and its role (no subject: a task's text has them).
NAME_FOR_ROLE = re.compile(r"^" + NAME + r"(?:\s+" + NAME + r")?\s+for\s+[a-z][\w -]{3,60}$")

# "Branch names must start with claude/", "Every pull request MUST have 100% coverage".
POSITIVE_MODAL = re.compile(
    r"^(?P<subject>(?:[\w\ue000\ue001./*'-]+\s+){1,6}?)"
    r"(?:must|should|shall|need\s+to|needs\s+to|have\s+to|has\s+to|are\s+to|is\s+to)\s+"
    r"(?!not\b|never\b|always\b)(?P<rest>\w.*)$",
    re.I,
)

NOT_SUBJECT = re.compile(
    r"\b(?:i|you|we|it|they|he|she|this|that|there|what|which|who|one|someone|says?|said)\b", re.I
)

GENERAL_CUE = re.compile(
    r"\b(?:all|every|each|any|whenever|when|unless|before|after|ideally|consistently|throughout|"
    r"across|only|otherwise|existing|up\s+to\s+date|in\s+sync)\b",
    re.I,
)

SPECIFIC_OBJECT = re.compile(
    r"^(?:the|this|that|these|those|my|your|a|an|it|them|whatever|whichever|something|"
    r"anything|everything)\b",
    re.I,
)

ADVERBIAL_LEAD = re.compile(
    r"^(?P<adv>(?:after|before|when|whenever|for|in|on|once|while|if|to)\b[^,]{2,80}),\s*"
    r"(?P<rest>.+)$",
    re.I,
)

PATHLIKE = re.compile(r"(?:^|\s)(?:[\w.-]+/)+[\w.-]+\.\w+\b")

# "the template at `.github/…`", "the `checkExhaustive` helper": a named object of "use".
NAMED_OBJECT = re.compile(
    r"^(?:the|a|an)\s+(?:[\w-]+\s+){0,2}?(?:\ue000\d+\ue001|[\w-]+\s+(?:at|in|from)\s+"
    r"\ue000\d+\ue001)",
    re.I,
)
# A standing requirement put to the agent: "You must disclose …", "You MUST be able to …".
AGENT_MUST = re.compile(r"^you\s+(?:must|MUST)\s+(?!not\b|never\b)(?P<rest>\w.*)$", re.I)
# A task verb's object is general when it carries one of these ("tests for changed behavior").
GENERAL_TASK_CUE = re.compile(
    r"\b(?:all|every|each|any|whenever|new|changed|changes|user-facing|public|alongside|"
    r"before|after)\b",
    re.I,
)
# "kebab-case for file names", "JSDoc comments for public APIs", "PostgreSQL in production".
NAMED_ROLE = re.compile(
    r"^(?P<head>\ue000\d+\ue001|[A-Za-z][\w.+#-]*|\d[\w.-]*)"
    r"(?:\s+[a-z][\w-]*){0,2}\s+(?:for|in|with|throughout)\s+[\w\ue000\ue001 ,./+-]{3,80}$"
)
# "Biome (tabs for code, 2 spaces for JSON)": a tool and its settings.
TOOL_SETTINGS = re.compile(r"^(?P<head>[A-Za-z][\w.+#-]*)\s*\([^()]{3,80}\)$")
# "This is a hybrid Rust and Node.js monorepo managed with pnpm and cargo".
PROJECT_IS = re.compile(
    r"^this\s+is\s+an?\s+(?:[\w.+#-]+\s+){0,5}?" + PROJECT_NOUN + r"\s+"
    r"(?:managed|built|written|deployed|tested)\s+(?:with|in|on|by)\s+\S",
    re.I,
)
# "Type hints required for all code", "Strict mypy type checking enabled".
REQUIREMENT = re.compile(
    r"^(?!(?:it|this|that|they|there|we|you|i|he|she)\b)(?:[\w\ue000\ue001./*+-]+\s+){1,4}"
    r"(?:is\s+|are\s+)?(?:required|mandatory|enforced|enabled|forbidden)\b",
    re.I,
)
# "E2E tests use Playwright", "Most tests use Vitest" ("The app uses too much memory" is not).
SUBJECT_USES = re.compile(
    r"^(?!(?:it|this|that|they|there|we|you|i|he|she|which|who|people|someone)\b)"
    r"(?:[\w\ue000\ue001./*-]+\s+){1,3}(?-i:use|uses)\s+"
    r"(?!(?:it|this|that|them|these|those|something|anything|too|a\s+lot|lots|more|less|much|"
    r"many|so)\b)\S",
    re.I,
)
# "Line length: 100 characters": a label's value, a number and its unit.
NUMBER_VALUE = re.compile(r"^\d[\d.,]*\s*[a-z%]{1,12}$", re.I)
# "`make test` - Run all test suites", "Dialog interface: `dialog/dialog.go`", "Labels: `fix`,
# `feat`, `chore`": a reference entry (a code span or a list of three or more, perhaps after a
# short label, then a dash, a colon or nothing).
REFERENCE_ENTRY = re.compile(
    r"^\s*(?:[A-Za-z][\w./&+-]*(?:\s+[\w./&+-]+){0,2}:\s*)?"
    r"(?:\ue000\d+\ue001(?:\s*,\s*\ue000\d+\ue001){2,}(?:,?\s*etc)?|\ue000\d+\ue001)"
    r"(?:\s*\([^()]*\))?\s*[.;]?\s*(?:$|-\s|:\s)"
)
# A prohibition; a plain imperative right after it names the alternative ("Do not use X -
# write Y"), not a second rule.
PROHIBITION = re.compile(r"^(?:\S+\s+){0,4}?(?:do\s+not|don'?t|must\s+not|never|avoid)\b", re.I)
# A label that forbids what follows: "FORBIDDEN: `uv pip install`" is a prohibition (0.9).
FORBIDDEN_LABEL = re.compile(r"^(?:forbidden|prohibited|banned|not\s+allowed)$", re.I)
# "No need to run it manually": nothing is asked.
NO_NEED = re.compile(r"^(?:[\w ]{1,40}:\s*)?no\s+need\s+to\b", re.I)
# A trailing rejected alternative: "uv (not pip)", "explain why, not what".
NOT_ALTERNATIVE = re.compile(
    r"(?:,\s*|\(\s*)not\s+(?:just\s+)?[^\s,;()]+(?:\s+[^\s,;()]+){0,2}\s*\)?\s*$", re.I
)

LABEL = re.compile(
    r"^(?P<label>[A-Za-z][\w.&/+#()-]*(?:\s+[\w.&/+#()-]+){0,3}?)\s*:\s+(?P<rest>\S.*)$"
)

BARE_VALUES = re.compile(
    r"^(?:\ue000\d+\ue001|[\w.+#/@-]+)(?:\s*\([^()]{1,40}\))?"
    r"(?:\s*(?:,|and|or|/|\+)\s*(?:\ue000\d+\ue001|[\w.+#/@-]+)(?:\s*\([^()]{1,40}\))?){0,6}$",
    re.I,
)

# An object pronoun with nothing it could stand for in the fact: "Never leave them in".
DANGLING_PRONOUN = re.compile(
    r"^(?:(?:never|always|don't|do\s+not|please|just)\s+)*(?:[\w'-]+\s+){1,2}?"
    r"(?:(?:them|it|these|those)(?=\s*$|\s+(?:in|out|up|on|off|to|with|at|for|again|anymore|"
    r"alone|unless|when|if|as|like)\b)|(?:this|that)\s*$)"
    r"|\b(?:these|those|both|the\s+above)\s+(?:\w+\s+)?(?:things|ones|items|points|steps)\b"
    r"|\b(?:of|with|to|for|about|on)\s+(?:this|that|it|them)\s*$",
    re.I,
)

OBJECT = re.compile(
    r"^(?:(?:never|always|don'?t|do\s+not|please|just|only|we|you|should|must)\s+)*"
    r"[\w'-]+\s+(?P<object>(?:(?:the|all|any|our|your)\s+)?[\w\ue000\ue001.-]+"
    r"(?:\s+(?!(?:by|in|on|with|for|to|at|from|into|unless|when|if|and|or)\b)"
    r"[\w\ue000\ue001.-]+)?)",
    re.I,
)

# "Linting: ruff, not flake8": under a label, a bare choice is a correction.
LABELLED_CHOICE = re.compile(
    r"^(?P<y>[^,;\s]+(?:\s+[^,;\s]+){0,2})\s*(?:,|;|\s-)?\s+(?:but\s+)?not\s+"
    r"(?P<x>[^,;\s]+(?:\s+[^,;\s]+){0,2})$",
    re.I,
)

# Keyword groups, one regex alternative per word ("_" stands for a space).
CATEGORY_WORDS: dict[str, str] = {
    "user_preference": r"""
        prefer\w* like[sd]? love[sd]? hate[sd]? want me my i myself ask(?:ing)? tell explain\w*
        explanations? answers? repl(?:y|ies) respon(?:d|ses?) summar\w+ verbose terse concise
        brief emojis? tone chatty wordy english commit_messages? messages? confirm\w* permission
        editor vim emacs vs_?code dark_mode theme fonts? workflow pair(?:ing)? imperative_mood
        sonnet opus haiku models?
    """,
    "architecture_decision": r"""
        databases? db postgres\w* mysql sqlite mongo\w* redis orm prisma sqlalchemy drizzle
        supabase firebase auth\w* jwt oauth\w* sessions? tokens? cookies? apis? rest(?:ful)?
        graphql grpc endpoints? services? microservices? backend frontend framework\w*
        librar(?:y|ies) react vue svelte angular next(?:\.?js)? express fastapi django flask
        rails fetch axios http websockets? queues? kafka rabbitmq cach(?:e|ing) redux zustand
        state_management architecture monolith layers? schemas? storage s3 lambdas? serverless
        typescript javascript python golang rust tailwind sdks? dependenc(?:y|ies) packages?
        events? pub/?sub uuids? ids? rate_limit\w* middleware clients? server_components? ssr
        stripe protobuf json yaml xml csv
    """,
    "quality_rule": r"""
        tests? testing tested unit integration e2e coverage tdd specs? mocks? mocking fixtures?
        lint\w* eslint ruff flake8 pylint prettier black format\w* types? typed typing
        type_hints? annotations? mypy pyright strict any null undefined none optional errors?
        exceptions? handl\w+ try catch comments? docstrings? jsdoc naming names? variables?
        functions? methods? class(?:es)? exports? imports? indent\w* tabs spaces line_length
        semicolons? quotes refactor\w* dead_code duplicat\w+ magic_numbers? debug\w* print\w*
        console\.log logs? logging loggers? asserts? reviews? secrets? var let const eval
        globals? \.env credentials? passwords? api_keys? hard-?cod\w+ validat\w+ sanitiz\w+
        security todos? fixme warnings? readab\w+ complexity code_style style_guide pep_?8
        relations? properties nested edge_cases? assertions? snapshots? flaky regression
        tests?_files? \*\.\w+
    """,
    "project_context": r"""
        branch(?:es)? main master develop trunk ci cd ci/cd pipelines? github(?:_actions)?
        gitlab circleci jenkins deploy\w* releas\w+ staging production prod environments?
        servers? host(?:ed|ing)? vercel netlify heroku aws gcp azure docker\w* containers?
        kubernetes k8s clusters? repo repository monorepo folders? director(?:y|ies) dir paths?
        located lives? stored src package\.json makefile scripts? push\w* merg\w+ pr prs
        pull_requests? rebas\w+ squash\w* tags? version node_\d+ python_3\.\d+ ports? urls?
        domains? localhost changelog readme workspaces? pnpm npm yarn bun uv poetry pip called
        named on-?call jira tickets? sprint fridays? mondays? weekends? migrations?
    """,
}

CATEGORY_PATTERNS: dict[str, re.Pattern[str]] = {
    cat: re.compile(
        r"(?<![\w.])(?:" + "|".join(w.replace("_", r"\s+") for w in words.split()) + r")(?![\w])",
        re.I,
    )
    for cat, words in CATEGORY_WORDS.items()
}

# Which category wins a tie of keyword hits that the pattern's own default is not part of.
TIE_ORDER = ("project_context", "user_preference", "quality_rule", "architecture_decision")
KIND_DEFAULT = {
    "preference": "user_preference",
    "choice": "architecture_decision",
    "fact": "project_context",
    "rule": "quality_rule",
}

USE_HEAD = re.compile(
    r"^(?:please\s+|just\s+|we\s+|we\s+only\s+)?(?:use|try|go\s+with|switch\s+to)\s", re.I
)

NOT_HEAD = re.compile(
    r"^(?:no+\b[,.!]*\s*)?(?:not|don'?t\s+use|do\s+not\s+use|never\s+use|stop\s+using)\s", re.I
)

BARE_NOT = re.compile(r"^not\s+\S+(?:\s+\S+){0,2}$", re.I)
