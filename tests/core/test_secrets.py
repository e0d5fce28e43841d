"""The privacy screen (core/secrets.py): private spans, detection, redaction, its error rates."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from privacy_samples import LOOKALIKES, SECRETS

from maestro_memory.core.secrets import find_secrets, redact, redact_value, screen, strip_private

MAX_FALSE_ALARM_RATE = 0.05


def test_labelled_set_error_rates() -> None:
    missed = [s for s, value in SECRETS if value in screen(s).text or not screen(s).kinds]
    alarms = [t for t in LOOKALIKES if screen(t).kinds]
    miss_rate = len(missed) / len(SECRETS)
    alarm_rate = len(alarms) / len(LOOKALIKES)
    print(
        f"\nprivacy screen: {len(SECRETS)} secrets, missed {len(missed)} ({miss_rate:.1%}); "
        f"{len(LOOKALIKES)} look-alikes, false alarms {len(alarms)} ({alarm_rate:.1%})"
    )
    assert missed == []
    assert alarm_rate <= MAX_FALSE_ALARM_RATE, alarms


@pytest.mark.parametrize(("sentence", "value"), SECRETS, ids=[v[:12] for _, v in SECRETS])
def test_each_secret_is_replaced_by_a_marker_naming_its_kind(sentence: str, value: str) -> None:
    out = screen(sentence)
    assert value not in out.text
    assert out.kinds
    assert all(f"[redacted: {k}]" in out.text for k in out.kinds if k != "private key") or (
        "[redacted: private key]" in out.text
    )
    for kind in out.kinds:
        assert value not in kind


def test_redaction_keeps_the_other_words() -> None:
    out = screen("Remember that the staging database password is hunter2 and AKIAZ7QX2M4N5P6R8T3V")
    assert out.text == (
        "Remember that the staging database password is [redacted: password] and "
        "[redacted: aws key]"
    )
    assert out.kinds == ("password", "aws key")
    assert "aws key" in out.reason() and "AKIA" not in out.reason()


def test_a_private_key_block_goes_whole() -> None:
    from privacy_samples import RSA_BLOCK

    out = screen(f"before\n{RSA_BLOCK}\nafter")
    assert out.text == "before\n[redacted: private key]\nafter"


def test_private_spans_are_removed_case_insensitively_across_lines() -> None:
    text = "keep this <PRIVATE>hide\nthis</Private> and this <private>rest\nof it"
    assert strip_private(text).split() == ["keep", "this", "and", "this"]
    assert strip_private("no tags here") == "no tags here"
    out = screen("<private>all of it, AKIAZ7QX2M4N5P6R8T3V</private>")
    assert out.empty and out.private and out.kinds == ()


def test_a_stray_closing_tag_is_dropped_but_text_kept() -> None:
    assert strip_private("a </private> b").split() == ["a", "b"]


def test_redact_value_walks_json_like_records() -> None:
    rec = {"op": "x", "args": ["ok", {"fact": "pw=Tr0ub4dor&3"}], "n": 3}
    out = redact_value(rec)
    assert out == {"op": "x", "args": ["ok", {"fact": "pw=[redacted: password]"}], "n": 3}


def test_findings_never_overlap() -> None:
    text = "postgres://app:Tr0ub4dorZ@db/app?password=Tr0ub4dorZ"
    spans = [(f.start, f.end) for f in find_secrets(text)]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    assert "Tr0ub4dorZ" not in redact(text)


def test_the_library_is_skipped_only_where_none_of_its_plugins_could_match() -> None:
    """The prefilter that spares plain prose the library's load time never hides a finding."""
    from maestro_memory.core import secrets

    for text in [s for s, _ in SECRETS] + LOOKALIKES:
        if secrets._may_hold_a_key(text):
            continue
        hits = [kind for kind, analyze in secrets._detectors().plugins if list(analyze(text))]
        assert hits == [], (text, hits)
