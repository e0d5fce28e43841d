"""The privacy screen: every text on its way to a file this project writes passes ``screen``.

``screen(text)`` first removes ``<private>…</private>`` spans (case-insensitive, across lines; an
unclosed tag makes the rest of the text private), then looks for secrets and returns a
``Screened``: the text with each secret replaced by a marker such as ``[redacted: aws key]``, and
the kinds found. A caller either *rejects* (semantic facts: ``Screened.kinds`` non-empty means
nothing is written) or *redacts* (episodic contexts, archive notes, log lines, journal
records: ``Screened.text`` is written). A kind names what was found, never the value.

Detection, in order of authority:

1. ``detect-secrets``' own plugins, used as a library (their ``analyze_string``, no baseline, no
   settings, no verification, no network): provider key formats (AWS, GitHub, GitLab, Slack,
   Stripe, OpenAI, Twilio, SendGrid, npm, PyPI, Discord, Azure, Square, Telegram, Mailchimp),
   private key blocks, JWTs (formally valid ones only) and basic-auth URLs.
2. Formats that library does not know: Google API keys and OAuth client secrets, Anthropic and
   newer OpenAI keys, connection-string passwords (``Password=…;``), secrets in URL queries.
3. What a person types (``core/secret_prose.py``): "the password is X", "use X as the admin
   password", "deploy / X", ``--password=X``, ``mysql -pX``, ``DB_PASSWORD=X``, "PIN 4821" — a
   value stated as a credential, unless it is a reference or an ordinary word.
4. High-entropy tokens: Shannon entropy with a bar that grows with the token's length;
   hex-only tokens (commit hashes, digests), UUIDs, paths, dotted names and identifiers made of
   words are not flagged by entropy alone.

Cost. The library imports ``requests`` and takes a few hundred milliseconds to load, which a
Claude Code hook in direct mode cannot spend. So it loads lazily, and only for a text that one
of its plugins could match at all (``_may_hold_a_key``: a run of 16+ key characters with a
digit, a key block header, or credentials in a URL); plain prose never loads it. The rules of
2-4 are this module's own and always run.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .secret_prose import credential_like, prose_findings

# -- <private> spans -------------------------------------------------------------------------
_PRIVATE = re.compile(r"<private\s*>.*?(?:</private\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_STRAY_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)
_ANY_TAG = re.compile(r"</?private\s*>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """``text`` without its ``<private>…</private>`` spans; an unclosed tag hides the rest."""
    if "<" not in text or not _ANY_TAG.search(text):
        return text
    return _STRAY_CLOSE.sub(" ", _PRIVATE.sub(" ", text))


# -- results ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Finding:
    kind: str  # "aws key", "github token", "password" …: safe to show, never the value
    start: int
    end: int


@dataclass(frozen=True)
class Screened:
    text: str  # private spans removed, secrets replaced by markers
    kinds: tuple[str, ...]  # the kinds of secret found, in order of first appearance
    private: bool  # some text was inside <private> tags

    @property
    def empty(self) -> bool:
        """Nothing is left to store (the text was entirely private, or blank)."""
        return not self.text.strip()

    def reason(self) -> str:
        """A refusal naming the kinds of secret, not their values."""
        return f"contains a secret ({', '.join(self.kinds)}); not saved — nothing was written"


ENTROPY_KIND = "high-entropy string"


def marker(kind: str) -> str:
    return f"[redacted: {kind}]"


# -- the detectors -----------------------------------------------------------------------------
# detect-secrets' secret_type -> the kind we show.
_KIND_OF_TYPE = {
    "AWS Access Key": "aws key",
    "GitHub Token": "github token",
    "GitLab Token": "gitlab token",
    "Slack Token": "slack token",
    "Stripe Access Key": "stripe key",
    "OpenAI Token": "openai key",
    "JSON Web Token": "jwt",
    "Private Key": "private key",
    "Basic Auth Credentials": "url password",
    "Twilio API Key": "twilio key",
    "SendGrid API Key": "sendgrid key",
    "NPM tokens": "npm token",
    "PyPI Token": "pypi token",
    "Discord Bot Token": "discord token",
    "Azure Storage Account access key": "azure key",
    "Square OAuth Secret": "square secret",
    "Telegram Bot Token": "telegram token",
    "Mailchimp Access Key": "mailchimp key",
}
_PLUGIN_MODULES = (
    ("aws", "AWSKeyDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("slack", "SlackDetector"),
    ("stripe", "StripeDetector"),
    ("openai", "OpenAIDetector"),
    ("jwt", "JwtTokenDetector"),
    ("private_key", "PrivateKeyDetector"),
    ("basic_auth", "BasicAuthDetector"),
    ("twilio", "TwilioKeyDetector"),
    ("sendgrid", "SendGridDetector"),
    ("npm", "NpmDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("mailchimp", "MailchimpDetector"),
)

_OWN_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("google api key", re.compile(r"AIza[0-9A-Za-z_\-]{35}")),
    ("google oauth secret", re.compile(r"GOCSPX-[0-9A-Za-z_\-]{28}")),
    ("anthropic key", re.compile(r"sk-ant-[a-z0-9]+-[0-9A-Za-z_\-]{40,}")),
    ("openai key", re.compile(r"sk-(?:proj|svcacct|admin)-[0-9A-Za-z_\-]{40,}")),
    ("api key", re.compile(r"(?<![\w-])sk-[0-9A-Za-z]{32,}(?![\w-])")),
    ("github token", re.compile(r"github_pat_[0-9A-Za-z_]{60,}")),
    ("private key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")),
    # A password in any URL: scheme://user:X@host (also an empty user: redis://:X@cache).
    ("url password", re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s/:@]*:([^\s/@]{3,})@")),
    # Connection strings: Password=…; / pwd=… (ADO, JDBC, ODBC styles).
    (
        "connection string password",
        re.compile(r"(?i)(?<![\w])(?:password|pwd)\s*=\s*([^;\s\"']{3,})(?=;|\s|$|\"|')"),
    ),
    # A secret in a URL's query: ?token=…, &api_key=…, access_token, client_secret …
    (
        "url token",
        re.compile(
            r"(?i)[?&](?:access_?token|token|api_?key|apikey|key|secret|client_secret|"
            r"password|pass|pwd|sig|signature|auth)=([^&#\s\"'<>]{8,})"
        ),
    ),
)

# High entropy: candidate tokens of the base64/url-safe alphabet, 20+ characters.
_B64 = string.ascii_letters + string.digits + "+/-_="
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-=.~]{20,}")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{2,}(?![a-z])")


def _entropy(data: str) -> float:
    counts: dict[str, int] = {}
    for ch in data:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(data)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(token: str) -> bool:
    """A random-looking credential, not a hash, UUID, path, version or identifier."""
    core = token.strip("=.-_/~+")
    if len(core) < 20:
        return False
    if _HEX.match(core) or _UUID.match(core):
        return False  # commit hashes, digests, UUIDs: everyday in a coding conversation
    if core.count("/") >= 2 or core.count(".") >= 2 or "~" in core:
        return False  # paths, dotted names, versions
    has_digit = any(c.isdigit() for c in core)
    has_upper = any(c.isupper() for c in core)
    has_lower = any(c.islower() for c in core)
    if not (has_lower and (has_upper or has_digit)):
        return False
    # An identifier is mostly words: getUserAccountSettings, test_save_rejects_keys_2.
    worded = sum(len(m.group()) for m in _WORDISH.finditer(core))
    if worded >= 0.6 * len(core):
        return False
    if not has_digit and len(core) < 32:
        return False
    # Random text of length n over 64 symbols has entropy close to log2(min(n, 64)).
    bar = 0.82 * math.log2(min(len(core), 64))
    return _entropy(core) >= bar


@dataclass
class _Detectors:
    plugins: list[tuple[str, Callable[[str], Iterable[tuple[int, int]]]]]


def preload() -> None:
    """Load the library now (a long-lived process: the daemon), not inside its first write or
    log line, where the load would delay what follows."""
    _detectors()


def _plugin_spans(plugin: Any) -> Callable[[str], Iterable[tuple[int, int]]]:
    """Where a regex plugin's patterns match. Not ``analyze_string``: with a capturing group it
    yields the group alone, which for ``(ghp|gho|…)_…`` is just the prefix. A group of 8+
    characters is the secret itself (the AWS secret, the password of a URL); otherwise the
    whole match is. The plugin's own validity check (JWT) still applies."""
    patterns: list[re.Pattern[str]] = list(plugin.denylist)
    valid: Callable[[str], bool] = getattr(plugin, "is_formally_valid", lambda _: True)

    def spans(text: str) -> Iterator[tuple[int, int]]:
        for pattern in patterns:
            for m in pattern.finditer(text):
                group = m.group(1) if pattern.groups else None
                a, b = m.span(1) if group is not None and len(group) >= 8 else m.span()
                if b > a and valid(text[a:b]):
                    yield a, b

    return spans


_LOADED: list[_Detectors] = []


def _detectors() -> _Detectors:
    if not _LOADED:
        import importlib

        plugins: list[tuple[str, Callable[[str], Iterable[tuple[int, int]]]]] = []
        for module, cls in _PLUGIN_MODULES:
            found = importlib.import_module(f"detect_secrets.plugins.{module}")
            plugin: Any = getattr(found, cls)()
            plugins.append((_KIND_OF_TYPE[plugin.secret_type], _plugin_spans(plugin)))
        _LOADED.append(_Detectors(plugins))
    return _LOADED[0]


# Every detect-secrets plugin used here matches only inside a run of these characters at least
# 16 long (provider keys, JWTs) with a digit in it (random keys of that length without one are
# vanishingly rare), or on a key block header, or on credentials in a URL.
_KEY_RUN = re.compile(r"[A-Za-z0-9_\-+/=.:]{16,}")
_KEY_MARK = re.compile(r"PRIVATE KEY|PuTTY-User-Key|://[^\s/@]+:[^\s@]+@")
_DIGIT = re.compile(r"\d")


def _may_hold_a_key(text: str) -> bool:
    # Runs first, then a digit in each: linear (a lookahead per position was quadratic).
    if any(_DIGIT.search(m.group()) for m in _KEY_RUN.finditer(text)):
        return True
    return _KEY_MARK.search(text) is not None


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, as (kind, span); overlapping findings are merged."""
    found: list[Finding] = []
    plugins = _detectors().plugins if _may_hold_a_key(text) else []
    for kind, spans in plugins:
        for a, b in spans(text):
            if kind == "private key":
                found.extend(_private_key_blocks(text))
                continue
            if kind == "url password" and not credential_like(text[a:b]):
                continue  # postgres://app:<password>@db: a placeholder in the URL
            found.append(Finding(kind, a, b))
    for kind, pattern in _OWN_FORMATS:
        for m in pattern.finditer(text):
            if kind == "private key":
                found.extend(_private_key_blocks(text))
                continue
            a, b = m.span(1) if pattern.groups else m.span()
            if pattern.groups and not credential_like(m.group(1)):
                continue  # password=${DB_PASSWORD}, password = getpass(): not the value
            found.append(Finding(kind, a, b))
    found.extend(Finding(kind, a, b) for kind, a, b in prose_findings(text))
    for m in _TOKEN.finditer(text):
        if _high_entropy(m.group()):
            found.append(Finding(ENTROPY_KIND, m.start(), m.end()))
    return _merge(found)


def _private_key_blocks(text: str) -> list[Finding]:
    """A private key block, header to footer (or to the end when the footer is missing)."""
    out = []
    for m in re.finditer(r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----", text):
        end = text.find(f"-----END {m.group(1)}-----", m.end())
        stop = len(text) if end < 0 else end + len(f"-----END {m.group(1)}-----")
        out.append(Finding("private key", m.start(), stop))
    for m in re.finditer(r"PuTTY-User-Key-File-\d", text):
        out.append(Finding("private key", m.start(), len(text)))
    return out


def _merge(found: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.start, -f.end)):
        if out and f.start < out[-1].end:
            last = out[-1]
            # One span; its kind the most specific one found (a format beats "high entropy").
            kind = f.kind if last.kind == ENTROPY_KIND else last.kind
            out[-1] = Finding(kind, last.start, max(last.end, f.end))
            continue
        out.append(f)
    return out


# -- the screen ----------------------------------------------------------------------------------
def screen(text: str) -> Screened:
    """The one screen: drop private spans, then replace each secret by a marker."""
    visible = strip_private(text)
    private = visible != text
    findings = find_secrets(visible)
    if not findings:
        return Screened(visible, (), private)
    parts, at, kinds = [], 0, []
    for f in findings:
        parts += [visible[at : f.start], marker(f.kind)]
        at = f.end
        if f.kind not in kinds:
            kinds.append(f.kind)
    parts.append(visible[at:])
    return Screened("".join(parts), tuple(kinds), private)


def redact(text: str) -> str:
    """``screen(text).text``: for what is written anyway (episodic text, logs, journal)."""
    return screen(text).text


def redact_value(value: Any) -> Any:
    """``redact`` applied to every string inside a JSON-like value (journal records)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value
