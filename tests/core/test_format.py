"""The file formats: the spec's markdown, read leniently and written back without losing a byte
the tool does not own."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from maestro_memory.core import MemoryStore
from maestro_memory.core.markdown import parse

SPEC_SEMANTIC = """# Semantic Memory

## User Preferences
-[2026-01-05] [0.95] Prefers Sonnet for all execution tasks (cost reason)
-[2026-01-05] [0.70] Likes terse commit messages — inferred from corrections

## Architecture Decisions
- [2026-01-06] [1.00] JWT with 15min expiry, refresh tokens in httpOnly cookies

## Quality Rules
- Always check for null relations before accessing nested properties

## Project Context
-[2026-01-07] [1.00] Main branch is "develop", not "main"
"""

SPEC_EPISODIC = """# Episodic Memory

## Entries

### [salience: 1.0] [confidence: 0.90] [2026-01-05] [sess-a]
Working on user authentication feature. 5 stories decomposed.
Auth middleware uses passport.js with local strategy.

### [salience: 0.8] [confidence: 0.70] [2026-01-04] [sess-b]
Fixed rate limiting bug. Was applying per-route instead of per-IP.
"""


def write(root: Path, name: str, text: str | bytes) -> Path:
    d = root / ".maestro" / "memory"
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    if isinstance(text, str):
        p.write_text(text, encoding="utf-8", newline="")
    else:
        p.write_bytes(text)
    return p


def test_spec_semantic_file_parses_both_dash_forms_and_hand_entries(tmp_path: Path) -> None:
    write(tmp_path, "semantic.md", SPEC_SEMANTIC)
    entries = MemoryStore(tmp_path).semantic_entries()
    by_text = {e.text: e for e in entries}
    assert len(entries) == 5
    assert by_text["Prefers Sonnet for all execution tasks (cost reason)"].confidence == 0.95
    assert by_text["Prefers Sonnet for all execution tasks (cost reason)"].category == (
        "user_preference"
    )
    jwt = by_text["JWT with 15min expiry, refresh tokens in httpOnly cookies"]
    assert (jwt.category, jwt.date, jwt.confidence) == ("architecture_decision", "2026-01-06", 1.0)
    hand = by_text["Always check for null relations before accessing nested properties"]
    assert hand.category == "quality_rule" and hand.confidence == 1.0 and hand.date == ""
    assert by_text['Main branch is "develop", not "main"'].category == "project_context"
    assert len({e.id for e in entries}) == 5


def test_spec_episodic_file_parses_multiline_bodies(tmp_path: Path) -> None:
    write(tmp_path, "episodic.md", SPEC_EPISODIC)
    entries = MemoryStore(tmp_path).episodic_entries()
    assert [e.session_id for e in entries] == ["sess-a", "sess-b"]
    assert entries[0].salience == 1.0 and entries[0].confidence == 0.9
    assert entries[0].text.startswith("Working on user authentication feature.")
    assert "passport.js" in entries[0].text


def test_ids_are_stable_across_reads_and_survive_a_hand_edit_of_the_text(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    saved = store.save_semantic("Use pnpm for installs", "project_context", 0.9)
    assert saved.entry is not None
    path = tmp_path / ".maestro" / "memory" / "semantic.md"
    text = path.read_text()
    assert "Use pnpm for installs" in text
    path.write_text(text.replace("Use pnpm for installs", "Use pnpm for all installs"))
    [entry] = store.semantic_entries()
    assert entry.id == saved.entry.id
    assert entry.text == "Use pnpm for all installs"


def test_rewrite_keeps_unowned_lines_crlf_and_bom_byte_for_byte(tmp_path: Path) -> None:
    original = (
        "\ufeff# Semantic Memory\r\n"
        "A note a person wrote at the top.   \r\n"
        "\r\n"
        "## User Preferences\r\n"
        "-[2026-01-05] [0.95] Prefers Sonnet   \r\n"
        "   some indented remark\r\n"
        "\r\n"
        "## My Own Section\r\n"
        "- [2026-01-01] [0.50] not an entry: unknown section\r\n"
        "<!-- a comment -->\r\n"
        "\r\n"
        "## Quality Rules\r\n"
        "- [2026-01-05] [1.5] invalid number stays as written\r\n"
    )
    path = write(tmp_path, "semantic.md", original.encode("utf-8"))
    store = MemoryStore(tmp_path)
    store.save_semantic("Always run the linter before pushing", "quality_rule", 1.0)
    after = path.read_bytes().decode("utf-8")
    assert after.startswith("\ufeff# Semantic Memory\r\nA note a person wrote at the top.   \r\n")
    for line in original.lstrip("\ufeff").split("\r\n"):
        assert line in after.lstrip("\ufeff").split("\r\n"), line
    assert "\n" not in after.replace("\r\n", "")  # no bare LF introduced
    assert "Always run the linter before pushing" in after
    # The unknown section's bullet is not an entry; the invalid number is reported, not used.
    texts = [e.text for e in store.semantic_entries()]
    assert "not an entry: unknown section" not in texts
    assert "invalid number stays as written" not in texts
    problems = store.read().problems()
    assert any("1.5" in p for p in problems["semantic.md"])


def test_writer_uses_the_spec_formats(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, clock=lambda: "2026-12-02")
    store.save_semantic("Never use default exports", "quality_rule", 1.0)
    store.save_episodic("Refactored routes.\nPattern: router groups", "s1", 0.9)
    for _ in range(3):
        store.decay_sweep()
    sem = (tmp_path / ".maestro/memory/semantic.md").read_text()
    epi = (tmp_path / ".maestro/memory/episodic.md").read_text()
    assert "- [2026-12-02] [1.00] Never use default exports <!-- mm:" in sem
    assert "### [salience: 0.512] [confidence: 0.461] [2026-12-02] [s1] <!-- mm:" in epi
    assert "Refactored routes.\nPattern: router groups\n" in epi
    for text in (sem, epi):
        assert text.rstrip().splitlines()[-1].startswith("## Maintenance Log") or (
            "## Maintenance Log" in text
        )
        log_at = text.index("## Maintenance Log")
        assert "\n## " not in text[log_at + 3 :], "Maintenance Log must be the last section"


def test_maintenance_log_stays_at_the_bottom_when_a_section_is_added(tmp_path: Path) -> None:
    write(
        tmp_path,
        "semantic.md",
        '# Semantic Memory\n\n## Maintenance Log\n- [2026-01-01] Removed: "x" (y)\n',
    )
    MemoryStore(tmp_path).save_semantic("Deploys go through staging first", "project_context", 0.9)
    text = (tmp_path / ".maestro/memory/semantic.md").read_text()
    assert text.index("## Project Context") < text.index("## Maintenance Log")
    assert text.index("Deploys go through staging") < text.index("## Maintenance Log")
    assert '- [2026-01-01] Removed: "x" (y)' in text


def test_episodic_body_lines_that_look_like_headings_cannot_split_an_entry(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.save_episodic("Notes\n## Not a section\n### not an entry", "s1")
    [entry] = store.episodic_entries()
    assert entry.text == "Notes ## Not a section ### not an entry"
    assert len(store.read().docs["episodic"].sections) == 3  # preamble, Entries, Log


# Lines a person might type: anything without a newline, including markdown-ish noise.
unknown_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
    max_size=60,
).filter(lambda s: not s.lstrip().startswith(("-", "*", "#")))


@settings(max_examples=150, deadline=None)
@given(
    pre=st.lists(unknown_line, max_size=4),
    mid=st.lists(unknown_line, max_size=4),
    post=st.lists(unknown_line, max_size=4),
    crlf=st.booleans(),
)
def test_roundtrip_unknown_lines_survive_a_write(
    tmp_path_factory: object, pre: list[str], mid: list[str], post: list[str], crlf: bool
) -> None:
    import tempfile

    nl = "\r\n" if crlf else "\n"
    body = (
        nl.join(
            [
                "# Semantic Memory",
                *pre,
                "## User Preferences",
                "- [2026-01-01] [0.90] Prefers tabs",
                *mid,
                "## Notes",
                *post,
            ]
        )
        + nl
    )
    assert parse("semantic", body).render() == body  # parse/render is the identity
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        write(root, "semantic.md", body.encode("utf-8"))
        MemoryStore(root).save_semantic("Deploy on Fridays is forbidden", "project_context", 0.9)
        after = (root / ".maestro/memory/semantic.md").read_bytes().decode("utf-8")
        lines = after.split(nl)
        for line in [*pre, *mid, *post]:
            assert line in lines
        assert after.index("Prefers tabs") < after.index("## Notes")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_parser_never_raises_and_rendering_an_untouched_file_is_identity(text: str) -> None:
    for kind in ("semantic", "episodic", "archive"):
        doc = parse(kind, text)  # type: ignore[arg-type]
        assert doc.render() == text
