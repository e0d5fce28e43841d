"""Credentials a person states in words: the privacy screen's rules for typed secrets.

``prose_findings(text)`` returns ``(kind, start, end)`` for each credential value stated in a
sentence, a command line or a config line, the value alone (``core/secrets.py`` turns them into
findings beside the format and entropy detectors):

* a value after a credential word: "the password is X", "token: X", "pw=X", "with password X",
  "the password you need is X", "set the API key to X", "PIN 4821", "le mot de passe est X";
* a value before it: "use X as the admin password", "X is the password for the drive";
* a user and a password: "deploy / X", "admin:X@host", "user admin pass X", "-U user%X";
* flags and settings: ``--password=X``, ``-storepass X``, ``-p X`` after ``mysql`` or
  ``docker login``, ``pass:X``, ``DB_PASSWORD=X``, ``db_password: 'X'``, ``"token": "X"``.

What keeps rules *about* secrets out ("Never commit passwords", "the token lives in the TOKEN
env var", ``--password-stdin``): a value must look like a credential. A reference is not one
(``$DB_PASSWORD``, ``${{ secrets.X }}``, ``<password>``, ``changeme``, ``os.environ[…]``, a
function call, a dotted name), nor an ordinary word ("the password is wrong"). Where the shape
alone says little (no "is" or "=" ties the value to the word), the value must also be *strong*:
letters with a digit or a symbol, or six digits and more. "use X as the password" after a
negation ("never use changeme as a password") is a rule, not a credential.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .lexicon import (
    ADMIN_NAMES,
    CREDENTIAL_NOUNS,
    GRAMMAR_ENDINGS,
    LOGIN_NAMES,
    ORDINARY_VALUES,
    STOP_WORDS,
)

Span = tuple[str, int, int]  # (kind, start, end) of a value

# -- what a value is ------------------------------------------------------------------------------
PLACEHOLDER = re.compile(
    r"^(?:<.*|\$\{.*|\$\(.*|\$[A-Za-z_][A-Za-z0-9_]*|%\(?[A-Za-z_]*\)?s?|\{\{.*|"
    r"x{3,}|.*\*{3,}.*|\.{3,}|…|•+|os\.environ.*|getenv.*|env\..*|process\.env.*|env:.*|file:.*|"
    r"(?:your|my|the|some)[_-].*|change_?me|change[_-]it|replace[_-]?me.*|set[_-]?me|"
    r"todo|tbd|fixme|redacted.*|\[redacted.*|!vault.*)$",
    re.IGNORECASE,
)
_CODE_REF = re.compile(
    r"[\w.]*\(|^[A-Za-z_][A-Za-z_]*\d*(?:\.[A-Za-z_][A-Za-z_]*\d*)+$|^[A-Za-z_]\w*\["
)
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+[\w.+-]*$")
_WORDS_JOINED = re.compile(r"[A-Za-z]+(?:[-_][A-Za-z]+)+")
_SYMBOL = re.compile(r"[!@#$%^&*+=?|\\~]")
_TRAILING = ".,:;?)"


def is_placeholder(value: str) -> bool:
    """A reference to a secret or a stand-in for one, not its value."""
    return PLACEHOLDER.match(value.strip("\"'`")) is not None


def credential_like(value: str) -> bool:
    """``value`` could be a credential: not a placeholder, a reference or an ordinary word."""
    word = value.strip("\"'`.,;:!?()[]{}")
    if len(word) < 3 or is_placeholder(value) or is_placeholder(word):
        return False
    if _CODE_REF.search(value) or _VERSION.match(word):
        return False  # getpass.getpass(), settings.DB_PASSWORD, os.environ[…], 3.11
    low = word.lower()
    if low in ORDINARY_VALUES or low in CREDENTIAL_NOUNS:
        return False
    if _WORDS_JOINED.fullmatch(word):
        return False  # a name made of words: X-Api-Key, api_key_header, short-lived
    if word.isalpha() and word.islower():
        # A plain lower-case word: a credential only if it is not grammar ("is stored").
        return not low.endswith(tuple(GRAMMAR_ENDINGS))
    return True


def strong(value: str) -> bool:
    """A credential-like value that could not be a word of the sentence: letters with a digit
    or a symbol, or a run of six digits and more."""
    word = value.strip("\"'`").rstrip(_TRAILING)
    if len(word) < 4 or word.startswith(("-", "/", "~")) or not credential_like(word):
        return False
    letters = any(c.isalpha() for c in word)
    digits = any(c.isdigit() for c in word)
    if word.isdigit():
        return len(word) >= 6
    if re.match(r"\w+=", word):
        return False  # highlight=False: an argument, not a value
    return letters and (digits or _SYMBOL.search(word) is not None)


# -- the rules ---------------------------------------------------------------------------------
# A value: quoted (spaces allowed) or one bare run.
_VALUE = r"(?:(?P<q>[\"'`])(?P<quoted>[^\"'`\n]{3,}?)(?P=q)|(?P<bare>[^\s\"'`,;)\]]{3,}))"
# A value the loose shapes take: it holds a digit or a symbol, so the regex backtracks past a
# word ("the password was changed to X" tries "was", then "changed to").
_STRONG_VALUE = (
    r"(?:(?P<q>[\"'`])(?P<quoted>[^\"'`\n]{3,}?)(?P=q)|"
    r"(?P<bare>(?=[^\s\"'`,;)\]]*[\d!@#$%^&*+=?|\\~])[^\s\"'`,;)\]]{3,}))"
)
_CRED_WORDS = (
    r"pass(?:word|wd|phrase|code)?|pw|pwd|psk|secret(?:[ _-]?key)?|(?:api|access|auth|bearer|"
    r"session|refresh|deploy|private|secret|signing|license|master|admin|root|app|wifi|wi-fi|"
    r"wpa|network|service[ _-]account)[ _-]?(?:token|key|secret|password|pass)|token|"
    r"api[ _-]?key|apikey|credentials?|client[ _-]?secret|pin|"
    r"wachtwoord|mot de passe|passwort|kennwort|contrase(?:ñ|n)a|senha|clave|hasło|haslo|"
    r"lösenord|salasana|пароль"
)
_LINK = r"(?:is|was|are|est|ist|es|é|è|är|on|=|:|:=|=>|->)"
# "password is X", "token: X", "the password for the staging db is X".
_STATED = re.compile(
    rf"(?i)(?<![\w-])(?:{_CRED_WORDS})(?![\w-])"
    r"(?:\s+(?:for|of|to|on)(?:\s+[\w.-]+){1,3}?)?"
    rf"[ \t]*(?:{_LINK}[ \t]*|[ \t]+(?:is|was)[ \t]+(?:now[ \t]+|still[ \t]+)?)" + _VALUE
)
# "the password you need is X", "the new password is going to be X", "changed to X": a strong X.
_STATED_LOOSELY = re.compile(
    rf"(?i)(?<![\w-])(?:{_CRED_WORDS})(?![\w-])(?:\s+[\w'\u2019]+){{0,3}}?\s+"
    r"(?:is going to be|will be|changed to|set to|reset to|is|was)\s+" + _STRONG_VALUE
)
# "with password X", "its password X", "PIN 2580", "passwd X": no link, so a strong X.
_NEXT_TO = re.compile(
    r"(?i)(?<![\w-])(?:password|passwd|passphrase|pw|pwd|psk|token|secret|api[ _-]?key|"
    r"requirepass|masterauth|pin(?:\s+(?:code|number))?|pin's|passcode)\s+" + _STRONG_VALUE
)
# "set the API key to X", "change the password to X".
_SET_TO = re.compile(
    r"(?i)\b(?:set|sets|setting|change|changed|reset|update|updated)\s+"
    r"(?:the\s+|my\s+|our\s+|its\s+|their\s+|your\s+)?(?:[\w-]+\s+){0,2}?"
    rf"(?:{_CRED_WORDS})(?![\w-])\s+(?:to|=)\s+" + _STRONG_VALUE
)
# "use X as the admin password", "X is the password for the shared drive".
_BEFORE = re.compile(
    r"(?i)(?:(?<=\s)|^)(?P<value>[^\s\"'`]{4,}|[\"'`][^\"'`\n]{3,}?[\"'`])\s+"
    r"(?:as|is)\s+(?:the\s+|a\s+|our\s+|my\s+|your\s+|its\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:password|passphrase|passcode|pin|token|secret|api[ _-]?key|credentials)\b"
)
_NEGATED = re.compile(r"(?i)\b(?:never|not|no|don'?t|do not|avoid|must not|banned)\b")
# PIN: four to eight digits near the word ("the PIN is 4821", "PIN number 90210").
_PIN = re.compile(
    r"(?i)(?<![\w-])(?:pin|pins|passcode|pin's)\b[^\d\n.;]{0,14}?(?<!\d)(\d{4,8})(?![\d]|\.\d)"
)
# A user and a password: "deploy / X", "admin/X", "ftpuser and X".
_SLASH_PAIR = re.compile(
    r"(?<![\w/.:`'\"\\-])(?P<user>[A-Za-z][\w.@+-]{0,40})(?P<gap>\s*)/\s*(?P<bare>[^\s\"'`,;)\]/]{4,})(?![\w/])"
)
_COLON_PAIR = re.compile(
    r"(?<![\w/.:@%-])(?P<user>[A-Za-z][\w.+-]{1,40}):(?P<bare>[^\s\"'`:/@,;)=\\]{3,})(?P<at>@)?"
)
_LOGIN_WORDS = re.compile(
    r"(?i)\b(?:log\s*in|login|logon|log into|sign\s*in|creds?|credentials|account|user(?:name)?|"
    r"ssh|vpn|ftp|panel|web ui|ui|controller|console|auth|admin|root)\b"
)
_USER_PASS = re.compile(
    r"(?i)\b(?:user(?:name)?|login)\s*[:=]?\s*(?P<user>[\w.@+-]+)[,;]?\s+(?:and\s+)?"
    r"(?:pass(?:word)?|pw|pwd)\s*[:=]?\s*" + _VALUE
)
_CREDS_ARE = re.compile(
    r"(?i)\bcredentials?(?:\s+[\w-]+){0,4}?\s+(?:are|is|:)\s+(?P<user>[\w.@+-]+)\s+"
    r"(?:and|/)\s+" + _VALUE
)
_SMB_PAIR = re.compile(r"-U\s+['\"]?[^%\s'\"]+%" + _VALUE)
# Flags: --password=X, --password X, -storepass X, -PmavenPassword=X, --user_pass=X.
_FLAG = re.compile(
    r"(?i)(?<![\w-])--?[\w.-]*?(?:password|passwd|pass|pwd|token|secret|api-?key|apikey|auth|"
    r"storepass|keypass|passphrase|literal=password)(?:=|\s+)" + _VALUE
)
_CURL_USER = re.compile(r"(?<![\w-])(?:-u|--user)[\s=]+[\"']?[^\s:\"']+:" + _VALUE)
# "my passphrase: correct horse battery staple": three words and more to the end of the line.
_PASSPHRASE_WORDS = re.compile(
    r"(?im)\bpass ?phrase\s*(?:is|was|:|=)\s*(?P<bare>[a-z]+(?:[ -][a-z]+){2,})\s*[.!]?\s*$"
)
_OPENSSL_PASS = re.compile(r"(?<![\w-])pass:" + _VALUE)
# A short flag that takes the password on the command lines that have one.
_SHORT_FLAG = re.compile(
    r"(?i)\b(?P<tool>mysql\w*|mariadb\w*|mongo\w*|sshpass|docker\s+login|podman\s+login|"
    r"az\s+login|oc\s+login|twine\s+upload|helm\s+registry\s+login|redis-cli|ldap\w+)\b"
    r"[^\n|;&]*?(?<=\s)(?P<flag>-p|-a|-w)(?P<space>\s*)" + _VALUE
)
_SHORT_FLAG_OF = {"-a": ("redis-cli",), "-w": ("ldap",)}
# KEY=value, key: value, "key": "value" where the key's name ends with a credential word.
_SETTING = re.compile(
    r"(?i)(?<![\w.${-])[\"']?(?:[A-Za-z_][\w.-]*?)?(?:password|passwd|pass|pwd|secret|token|api_?key|"
    r"apikey|secret_?key|master_?key|passphrase|psk)(?![\w-])[\"']?[ \t]*(?::=|=|:)[ \t]*" + _VALUE
)
_LOGIN_TOKEN = re.compile(
    r"(?i)\b(?:vault|gh|heroku|fly|doctl)\s+(?:auth\s+)?login\s+(?:--token[= ])?" + _VALUE
)
_AUTH_HEADER = re.compile(r"(?i)\bauthorization:\s*(?:basic|bearer|token)\s+" + _VALUE)


def _value_span(m: re.Match[str]) -> tuple[str, int, int] | None:
    """The matched value, trailing punctuation off, and where it is."""
    group = "quoted" if m.groupdict().get("quoted") is not None else "bare"
    if m.group(group) is None:
        return None
    value = m.group(group)
    if group == "bare":
        value = value.rstrip(_TRAILING)
    start = m.start(group)
    return value, start, start + len(value)


def _kind(phrase: str) -> str:
    low = phrase.lower()
    for word, kind in (
        ("deploy", "deploy key"),
        ("private", "private key"),
        ("client", "client secret"),
        ("pin", "pin"),
        ("passcode", "pin"),
        ("token", "token"),
        ("api", "api key"),
        ("secret", "secret"),
        ("key", "key"),
        ("credential", "credentials"),
    ):
        if re.search(rf"\b{word}", low):
            return kind
    return "password"


def _tied(text: str) -> Iterator[Span]:
    """A value tied to its word by "is", "=", ":" or a flag: credential-like is enough."""
    for pattern in (_STATED, _SETTING, _FLAG, _CURL_USER, _OPENSSL_PASS, _AUTH_HEADER):
        for m in pattern.finditer(text):
            found = _value_span(m)
            if found is None or not credential_like(found[0]):
                continue
            bare = m.group("quoted") is None
            pin = pattern is _STATED and bare and _kind(m.group(0)) == "pin"
            if pin and not any(c.isdigit() for c in found[0]):
                continue  # "the PIN is four digits"
            if pattern is _FLAG and bare and not strong(found[0]) and "=" not in m.group(0):
                continue  # "--token takes the path of a file"
            yield _kind(m.group(0)), found[1], found[2]


def _loose(text: str) -> Iterator[Span]:
    """A value the shape ties more loosely: it must be strong."""
    for pattern in (_STATED_LOOSELY, _NEXT_TO, _SET_TO, _LOGIN_TOKEN, _SMB_PAIR):
        for m in pattern.finditer(text):
            found = _value_span(m)
            if found is not None and strong(found[0]):
                yield _kind(m.group(0)), found[1], found[2]
    for m in _PASSPHRASE_WORDS.finditer(text):
        if not set(m.group("bare").split()) & STOP_WORDS:
            yield "password", m.start("bare"), m.end("bare")
    for m in _PIN.finditer(text):
        yield "pin", m.start(1), m.end(1)
    for m in _BEFORE.finditer(text):
        value = m.group("value")
        clause = re.split(r"[.;!?]\s", text[: m.start()])[-1]
        if strong(value) and not _NEGATED.search(clause):
            yield (
                _kind(m.group(0)[len(value) :]),
                m.start(),
                m.start() + len(value.rstrip(_TRAILING)),
            )


def _pairs(text: str) -> Iterator[Span]:
    """A user name and a password side by side."""
    login = _LOGIN_WORDS.search(text) is not None
    for m in _SLASH_PAIR.finditer(text):
        value = m.group("bare").rstrip(_TRAILING)
        known = m.group("user").lower() in LOGIN_NAMES
        if strong(value) and (known or (login and m.group("gap"))):  # "deploy / X", "admin/X"
            yield "password", m.start("bare"), m.start("bare") + len(value)
    for m in _COLON_PAIR.finditer(text):
        value = m.group("bare").rstrip(_TRAILING)
        user = m.group("user").lower()
        if user.startswith(("http", "ftp", "ssh", "git")) and not m.group("at"):
            continue
        ok = strong(value) or (user in ADMIN_NAMES and login and credential_like(value))
        if ok and (login or m.group("at") or user in LOGIN_NAMES):
            yield "password", m.start("bare"), m.start("bare") + len(value)
    for pattern in (_USER_PASS, _CREDS_ARE):
        for m in pattern.finditer(text):
            found = _value_span(m)
            if found is not None and strong(found[0]):
                yield "password", found[1], found[2]


def _short_flags(text: str) -> Iterator[Span]:
    """``mysql -pX``, ``docker login -p X``, ``redis-cli -a X``, ``ldapsearch -w X``."""
    for m in _SHORT_FLAG.finditer(text):
        tool, flag = m.group("tool").lower(), m.group("flag")
        if flag in _SHORT_FLAG_OF and not tool.startswith(_SHORT_FLAG_OF[flag]):
            continue
        found = _value_span(m)
        if found is None or found[0].startswith("-"):
            continue
        attached = not m.group("space")
        if strong(found[0]) or (attached and credential_like(found[0])):
            yield "password", found[1], found[2]


_HINT = re.compile(
    r"(?i)pass|pw|pin|secret|token|key|credential|auth|psk|login|user|[:/@]|\s-[pwa]|"
    r"wachtwoord|mot de|contrase|senha|clave|hasło|haslo|lösenord|salasana|пароль"
)


def prose_findings(text: str) -> list[Span]:
    """Every credential value stated in words in ``text``: (kind, start, end)."""
    if not _HINT.search(text):
        return []
    out: list[Span] = []
    for rule in (_tied, _loose, _pairs, _short_flags):
        out.extend(rule(text))
    return out
