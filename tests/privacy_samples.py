"""The labelled set for the privacy screen: secrets (synthetic, format-valid, never real) and
look-alikes that are not secrets. Shared by the screen's unit test and the door-to-door tests.

Each secret is ``(sentence, value)``: the value is what must never reach a file.
"""

from __future__ import annotations

import base64
import json


def _b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = (
    _b64url({"alg": "HS256", "typ": "JWT"})
    + "."
    + _b64url({"sub": "fake-user-0042", "iat": 1764000000})
    + ".Qm9ndXNTaWduYXR1cmVGb3JUZXN0c09ubHk"
)
RSA_BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAfakeFAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfake0123\n"
    "ZmFrZSBrZXkgbWF0ZXJpYWwgZm9yIHRlc3RzIG9ubHkgbm90IGEgcmVhbCBrZXk=\n"
    "-----END RSA PRIVATE KEY-----"
)
OPENSSH_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

SECRETS: list[tuple[str, str]] = [
    ("the deploy key is AKIAZ7QX2M4N5P6R8T3V for prod", "AKIAZ7QX2M4N5P6R8T3V"),
    (
        'aws_secret_access_key = "q8Vd2Lp0Xr7Ty4Mn1Bz6Kw3Hs9Jf5Gc0Ae2Ru7Ni"',
        "q8Vd2Lp0Xr7Ty4Mn1Bz6Kw3Hs9Jf5Gc0Ae2Ru7Ni",
    ),
    (
        "push with ghp_Fa4KeT0kenF0rTestsOnly1234567890abcd please",
        "ghp_Fa4KeT0kenF0rTestsOnly1234567890abcd",
    ),
    (
        "fine-grained: github_pat_11FAKE0000TESTONLY0000_"
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
        "github_pat_11FAKE0000TESTONLY0000_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
    ),
    ("gitlab uses glpat-Fak3T0kenF0rT3sts0nly now", "glpat-Fak3T0kenF0rT3sts0nly"),
    (
        "slack bot xoxb-123456789012-1234567890123-FakeTokenForTestsOnly0000",
        "xoxb-123456789012-1234567890123-FakeTokenForTestsOnly0000",
    ),
    (
        "webhook https://hooks.slack.com/services/T0FAKE000/B0FAKE000/FakeHookSecretForTests00",
        "FakeHookSecretForTests00",
    ),
    ("stripe sk_live_F4keStr1peKeyForTests000 in prod", "sk_live_F4keStr1peKeyForTests000"),
    (
        "the maps key AIzaSyFAKE-key_for_tests_only_0123456789 works",
        "AIzaSyFAKE-key_for_tests_only_0123456789",
    ),
    ("oauth GOCSPX-FakeClientSecretForTests0001 there", "GOCSPX-FakeClientSecretForTests0001"),
    (
        "openai sk-F4keOpenAiKeyForTest0T3BlbkFJF4keOpenAiKeyForTest0 here",
        "sk-F4keOpenAiKeyForTest0T3BlbkFJF4keOpenAiKeyForTest0",
    ),
    (
        "new openai sk-proj-FakeProjectKeyForTestsOnly0000000000000000000000abcd ok",
        "sk-proj-FakeProjectKeyForTestsOnly0000000000000000000000abcd",
    ),
    (
        "claude key sk-ant-api03-FakeAnthropicKeyForTestsOnly00000000000000000000000000000000"
        "000000000000000-AAAAAA",
        "sk-ant-api03-FakeAnthropicKeyForTestsOnly00000000000000000000000000000000000000000000000-AAAAAA",
    ),
    (
        f"key file:\n{RSA_BLOCK}\nend",
        "MIIEowIBAAKCAQEAfakeFAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfake0123",
    ),
    (f"ssh:\n{OPENSSH_BLOCK}", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz"),
    (f"Authorization: Bearer {JWT}", JWT),
    ("clone https://deploy:s3cr3tPa55w0rd@git.example.com/repo.git", "s3cr3tPa55w0rd"),
    ("db at postgres://app:Tr0ub4dorZ@db.internal:5432/app", "Tr0ub4dorZ"),
    ("mongodb+srv://admin:hunter2pass@cluster0.example.net/test", "hunter2pass"),
    ("Server=db;Database=app;User Id=sa;Password=Sup3rS3cret!;", "Sup3rS3cret!"),
    ("call https://api.example.com/v1/items?api_key=Zx81kQm2Lp9Rt4Vn&page=2", "Zx81kQm2Lp9Rt4Vn"),
    ("Remember that the staging database password is hunter2", "hunter2"),
    ("the password is swordfish", "swordfish"),
    ("token: 9f8e7d6c5b4a", "9f8e7d6c5b4a"),
    ("pw=Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("the deploy key is x7Kp2Qm9Wz", "x7Kp2Qm9Wz"),
    ("my api key is 'abc123def456ghi'", "abc123def456ghi"),
    ('passphrase: "correct horse battery staple"', "correct horse battery staple"),
    ("the admin password for the staging box is Gr33nTea!", "Gr33nTea!"),
    ("client_secret = Xy7Qw2Er9Ty4Ui1Op", "Xy7Qw2Er9Ty4Ui1Op"),
    (
        "export it as U2FsdGVkX1+vupppZksvRf5pq5g5XjFRlipRkwB0K1Y=",
        "U2FsdGVkX1+vupppZksvRf5pq5g5XjFRlipRkwB0K1Y",
    ),
    (
        "use kX9vQ2mZ7rT4pL8wN3yB6cF1hJ5dG0sA as the signing value",
        "kX9vQ2mZ7rT4pL8wN3yB6cF1hJ5dG0sA",
    ),
    (
        "sendgrid SG.FakeSendGridKey0000000.FakeSendGridSecretForTestsOnly0000000000000",
        "SG.FakeSendGridKey0000000.FakeSendGridSecretForTestsOnly0000000000000",
    ),
    (
        "//registry.npmjs.org/:_authToken=npm_FakeNpmTokenForTestsOnly000000000000",
        "npm_FakeNpmTokenForTestsOnly000000000000",
    ),
    ("twilio SKfa4e0000000000000000000000test01 here", "SKfa4e0000000000000000000000test01"),
]

LOOKALIKES: list[str] = [
    # commit hashes, digests, UUIDs
    "fixed in 4f832f6a1c9e0b7d2e5f8a3c6b9d0e1f2a3b4c5d on main",
    "see commit 4f832f6 and 2eddfcc",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 matches",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "session 9b2f4c1e8a7d4e3f9c0b1a2d3e4f5a6b ended",
    # versions
    "upgrade to 1.2.3 then v2.14.0-rc.1+build.20261203",
    "we need Python 3.11.4 and node 20.10.0",
    # paths
    "edit /home/user/projects/maestro/core/secrets.py first",
    "the component is src/components/UserProfileSettingsPanel.tsx",
    r"logs are in C:\Users\dev\AppData\Local\Temp\maestro",
    "config at ~/.config/maestro-memory/config.toml",
    # colours
    "the accent colour is #1a2b3c and the border rgba(12, 34, 56, 0.5)",
    "use #FF5733 for errors",
    # identifiers
    "rename test_save_semantic_rejects_aws_access_key_2 please",
    "call getUserAccountSettingsByIdAndRegion from the service",
    "set MAESTRO_HOOK_TIMEOUT_SECONDS to 5",
    "AbstractSingletonProxyFactoryBean is overkill",
    "the class HttpRequestRetryHandlerFactory2 handles it",
    # base64-ish words in prose, encodings
    "the base64EncodedPayloadHandler decodes aGVsbG8=",
    "the header is named X-Api-Key",
    # URLs without passwords
    "docs at https://github.com/Yelp/detect-secrets/blob/master/README.md",
    "https://example.com/search?q=password+reset&page=2",
    "connect to postgres://localhost:5432/app",
    "clone git@github.com:org/repo.git",
    "open https://user@example.com/path/to/thing",
    # prose about secrets
    "the password reset flow sends an email",
    "Tokens expire after 15 minutes",
    "the password is stored in Vault",
    "rotate the API key every 90 days",
    "password: required, at least 12 characters",
    "the token is invalid after logout",
    "set the token: see docs/auth.md",
    "the secret is to test early",
    "the API key is in the environment",
    "the password is wrong",
    "use an ssh-ed25519 deploy key for CI",
    "api_key = os.environ['API_KEY']",
    "password = ${DB_PASSWORD}",
    "token: <your-token-here>",
    # ordinary rules
    "Always run the tests before committing",
    "Use pnpm instead of npm",
    "Never push directly to main; open a pull request",
    "The timeout is 30 seconds and the retry count is 3",
]
