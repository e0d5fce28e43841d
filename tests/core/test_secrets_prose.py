"""Credentials stated in words (core/secret_prose.py) on the authored set ``secrets_prose.jsonl``.

The set: sentences written as developers write them (ssh, mysql, psql, docker, curl, kubectl,
git URLs, .env and YAML lines, prose in a few languages), each labelled ``secret`` true or
false; the benign ones are rules *about* secrets (policies, env-var names, placeholders, hashes,
docs of the tools' safe ways). Split by a stable hash of the text: an even first byte of its
SHA-256 is the development half (the rules were tuned on it), an odd one the validation half.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.core.secrets import screen

DATA = Path(__file__).resolve().parents[1] / "data" / "secrets_prose.jsonl"
MAX_BENIGN_REFUSED = 0.01  # of the benign sentences, in each half


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]


def half(text: str) -> str:
    return "dev" if hashlib.sha256(text.encode("utf-8")).digest()[0] % 2 == 0 else "val"


ROWS = _rows()


def test_the_set_is_large_enough_and_well_formed() -> None:
    secrets = [r for r in ROWS if r["secret"]]
    benign = [r for r in ROWS if not r["secret"]]
    assert len(ROWS) >= 300 and len(secrets) >= 150 and len(benign) >= 150
    assert len({r["text"] for r in ROWS}) == len(ROWS)
    assert all(r["value"] in r["text"] for r in secrets)
    assert {half(r["text"]) for r in ROWS} == {"dev", "val"}


@pytest.mark.parametrize("part", ["dev", "val"])
def test_every_secret_is_caught_and_few_rules_about_secrets_are_refused(part: str) -> None:
    secrets = [r for r in ROWS if r["secret"] and half(r["text"]) == part]
    benign = [r for r in ROWS if not r["secret"] and half(r["text"]) == part]
    missed = [r["text"] for r in secrets if not screen(r["text"]).kinds]
    leaked = [r["text"] for r in secrets if r["value"] in screen(r["text"]).text]
    refused = [r["text"] for r in benign if screen(r["text"]).kinds]
    print(
        f"\n{part}: secrets caught {len(secrets) - len(missed)}/{len(secrets)}, "
        f"benign refused {len(refused)}/{len(benign)}"
    )
    assert missed == []
    assert leaked == []  # the marker covers the whole value, so an episodic note keeps none of it
    assert len(refused) <= MAX_BENIGN_REFUSED * len(benign), refused


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("ssh root@10.0.4.12 with password hunter2!", "password"),
        ("the PIN is 4821", "pin"),
        ("set the API token to Qx81kLm2", "token"),
        ("mysql -u root -pR00tpw app", "password"),
    ],
)
def test_the_kind_names_what_was_found_never_the_value(text: str, kind: str) -> None:
    out = screen(text)
    assert out.kinds == (kind,)
    assert f"[redacted: {kind}]" in out.text
