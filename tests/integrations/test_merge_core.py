"""``core.merge``: the entry-level three-way merge on texts (line merge: ``git merge-file``)."""

from __future__ import annotations

from maestro_memory.client.integrations.gitmerge import git_merge_file
from maestro_memory.core.markdown import parse
from maestro_memory.core.merge import MergeResult, detect_kind, merge

TODAY = "2026-02-01"

BASE = """# Semantic Memory

A person's note about this file: keep it short.

## User Preferences
- [2026-01-01] [0.90] Prefers terse commit messages <!-- mm:id=s-00000001 o=0.90 u=0 -->
- Likes examples in Python

## Architecture Decisions
- [2026-01-01] [0.70] Rate limiting: 10 req/min <!-- mm:id=s-00000002 o=0.70 u=0 -->

## Quality Rules
- [2026-01-01] [1.00] Always run tests before committing <!-- mm:id=s-00000003 o=1.00 u=0 -->

## Project Context

## Maintenance Log
- [2026-01-01] Removed: "old" (confidence decayed to 0.15)
"""


def run(base: str, ours: str, theirs: str, kind: str = "semantic", **kw: object) -> MergeResult:
    return merge(
        kind,
        base,
        ours,
        theirs,
        line_merge=git_merge_file,
        today=TODAY,  # type: ignore[arg-type]
        **kw,
    )  # type: ignore[arg-type]


def add_after(text: str, anchor: str, line: str) -> str:
    assert anchor in text
    return text.replace(anchor, anchor + line, 1)


def entries(text: str, kind: str = "semantic") -> dict[str, tuple[str, float]]:
    return {e.id: (e.text, e.confidence) for e in parse(kind, text).entries()}  # type: ignore[arg-type]


def test_nothing_changed_is_byte_for_byte() -> None:
    assert run(BASE, BASE, BASE).text == BASE
    crlf = BASE.replace("\n", "\r\n")
    result = run(crlf, crlf, crlf)
    assert result.text == crlf and not result.conflicted
    bom = "\ufeff" + BASE
    assert run(bom, bom, bom).text == bom


def test_a_change_on_one_side_is_taken_exactly() -> None:
    ours = BASE.replace("[0.70] Rate limiting", "[0.65] Rate limiting")
    assert run(BASE, ours, BASE).text == ours
    assert run(BASE, BASE, ours).text == ours


def test_additions_on_both_sides_are_kept_ours_first() -> None:
    anchor = "<!-- mm:id=s-00000003 o=1.00 u=0 -->\n"
    ours = add_after(
        BASE,
        anchor,
        "- [2026-01-02] [1.00] Never use default exports <!-- mm:id=s-0000000a o=1.00 u=0 -->\n",
    )
    theirs = add_after(BASE, anchor, "- Test files end in .test.ts\n")
    result = run(BASE, ours, theirs)
    assert not result.conflicted and result.notes == []
    section = result.text.split("## Quality Rules\n")[1].split("\n\n")[0].splitlines()
    assert section == [
        "- [2026-01-01] [1.00] Always run tests before committing "
        "<!-- mm:id=s-00000003 o=1.00 u=0 -->",
        "- [2026-01-02] [1.00] Never use default exports <!-- mm:id=s-0000000a o=1.00 u=0 -->",
        "- Test files end in .test.ts",
    ]
    assert parse("semantic", result.text).problems == []


def test_a_deletion_is_honoured_even_if_the_other_side_changed_the_entry() -> None:
    line = "- [2026-01-01] [0.70] Rate limiting: 10 req/min <!-- mm:id=s-00000002 o=0.70 u=0 -->\n"
    ours = BASE.replace(line, "")
    theirs = BASE.replace("[0.70] Rate limiting", "[0.95] Rate limiting")
    for a, b in ((ours, theirs), (theirs, ours)):
        result = run(BASE, a, b)
        assert "s-00000002" not in entries(result.text)
        assert "Rate limiting" not in result.text


def test_changed_on_both_sides_later_date_then_higher_confidence() -> None:
    ours = BASE.replace(
        "- [2026-01-01] [0.70] Rate limiting: 10 req/min",
        "- [2026-01-05] [0.60] Rate limiting: 20 req/min",
    )
    theirs = BASE.replace(
        "- [2026-01-01] [0.70] Rate limiting: 10 req/min",
        "- [2026-01-03] [0.90] Rate limiting: 30 req/min",
    )
    assert entries(run(BASE, ours, theirs).text)["s-00000002"] == ("Rate limiting: 20 req/min", 0.6)
    assert entries(run(BASE, theirs, ours).text)["s-00000002"] == ("Rate limiting: 20 req/min", 0.6)
    ours = BASE.replace("[0.90] Prefers terse", "[0.85] Prefers terse")
    theirs = BASE.replace("[0.90] Prefers terse", "[1.00] Prefers terse")
    assert entries(run(BASE, ours, theirs).text)["s-00000001"][1] == 1.0
    assert entries(run(BASE, theirs, ours).text)["s-00000001"][1] == 1.0


def test_the_same_id_added_on_both_sides_is_kept_once() -> None:
    line = "- [2026-01-02] [0.80] Uses pnpm <!-- mm:id=s-0000000b o=0.80 u=0 -->\n"
    both = add_after(BASE, "## Project Context\n", line)
    result = run(BASE, both, both)
    assert result.text == both
    assert result.text.count("Uses pnpm") == 1


def test_a_section_both_sides_created_is_not_a_conflict() -> None:
    base = BASE.replace("## Project Context\n\n", "")
    ours = base.replace(
        "## Maintenance Log", "## Project Context\n- Main branch is develop\n\n## Maintenance Log"
    )
    theirs = base.replace(
        "## Maintenance Log",
        "## Project Context\n- CI runs on GitHub Actions\n\n## Maintenance Log",
    )
    result = run(base, ours, theirs)
    assert not result.conflicted, result.text
    assert result.text.count("## Project Context") == 1
    texts = [t for t, _ in entries(result.text).values()]
    assert "Main branch is develop" in texts and "CI runs on GitHub Actions" in texts


def test_contradiction_between_additions() -> None:
    anchor = "<!-- mm:id=s-00000002 o=0.70 u=0 -->\n"
    ours = add_after(BASE, anchor, "- [2026-01-02] [1.00] JWT with 15min expiry\n")
    theirs = add_after(
        BASE,
        anchor,
        "- [2026-01-03] [0.90] JWT with 30min expiry <!-- mm:id=s-0000000c o=0.90 u=0 -->\n",
    )
    result = run(BASE, ours, theirs)
    doc = parse("semantic", result.text)
    by_text = {e.text: e for e in doc.entries()}
    assert by_text["JWT with 30min expiry"].confidence == 0.9
    loser = by_text["JWT with 15min expiry"]
    assert loser.confidence == 0.0
    assert loser.meta.get("o") == "1.00"  # its original: the next maintenance archives it
    assert loser.id in loser.lines[0]  # a hand entry gets its id written when re-rendered
    assert doc.log_lines()[-1] == (
        f'- [{TODAY}] Contradicted (merge): "JWT with 15min expiry" (by "JWT with 30min '
        'expiry": changed value: 15min -> 30min)'
    )
    assert result.notes == [doc.log_lines()[-1]]


def test_duplicates_across_branches_keep_the_more_confident() -> None:
    anchor = "## Project Context\n"
    ours = add_after(BASE, anchor, "- [2026-01-02] [0.70] Uses pnpm for packages\n")
    theirs = add_after(BASE, anchor, "- [2026-01-02] [0.90] uses pnpm for packages\n")
    result = run(BASE, ours, theirs)
    texts = [t for t, _ in entries(result.text).values()]
    assert "uses pnpm for packages" in texts and "Uses pnpm for packages" not in texts
    assert "Merged:" in parse("semantic", result.text).log_lines()[-1]


def test_logs_are_united_sorted_and_deletions_honoured() -> None:
    base = BASE.replace(
        '- [2026-01-01] Removed: "old" (confidence decayed to 0.15)\n',
        '- [2026-01-01] Removed: "old" (confidence decayed to 0.15)\n'
        '- [2026-01-02] Archived: "gone" (salience 0.08)\n',
    )
    ours = base.replace('- [2026-01-02] Archived: "gone" (salience 0.08)\n', "")
    ours += '- [2026-01-07] Removed: "ours" (x)\n  continued note without a date\n'
    theirs = base + '- [2026-01-04] Reinforced: "theirs" (y)\n'
    log = parse("semantic", run(base, ours, theirs).text).log_lines()
    assert log == [
        '- [2026-01-01] Removed: "old" (confidence decayed to 0.15)',
        '- [2026-01-04] Reinforced: "theirs" (y)',
        '- [2026-01-07] Removed: "ours" (x)',
        "  continued note without a date",
    ]


def test_the_log_stays_the_last_section() -> None:
    ours = BASE + "\n## Links\n- see the wiki\n"  # a person added a section below the log
    result = run(BASE, ours, BASE)
    assert result.text.index("## Links") < result.text.index("## Maintenance Log")
    assert result.text.rstrip().endswith('Removed: "old" (confidence decayed to 0.15)')
    assert "- see the wiki" in result.text


def test_a_true_conflict_keeps_markers_and_the_entries_outside_them() -> None:
    ours = BASE.replace("keep it short.", "keep it very short.")
    ours = add_after(ours, "## Project Context\n", "- Main branch is develop\n")
    theirs = BASE.replace("keep it short.", "keep it brief.")
    theirs = add_after(theirs, "## Project Context\n", "- CI runs on GitHub Actions\n")
    result = run(BASE, ours, theirs)
    assert result.conflicted
    assert (
        "<<<<<<< ours\nA person's note about this file: keep it very short.\n=======\n"
        "A person's note about this file: keep it brief.\n>>>>>>> theirs\n"
    ) in result.text
    assert result.text.count("- Main branch is develop") == 1
    assert result.text.count("- CI runs on GitHub Actions") == 1


def test_unowned_change_next_to_an_entry_change_is_not_a_conflict() -> None:
    ours = BASE.replace("[0.90] Prefers terse", "[0.85] Prefers terse")
    theirs = BASE.replace("## User Preferences\n", "## User Preferences\n(see also: style)\n")
    result = run(BASE, ours, theirs)
    assert not result.conflicted
    assert "(see also: style)\n- [2026-01-01] [0.85] Prefers terse" in result.text


EPISODIC = """# Episodic Memory

## Entries

### [salience: 1.0] [confidence: 0.90] [2026-01-01] [s0] <!-- mm:id=e-00000001 o=0.9 -->
Base entry.

## Maintenance Log
"""


def episode(n: int, salience: str, date: str) -> str:
    return (
        f"### [salience: {salience}] [confidence: 0.90] [{date}] [s] "
        f"<!-- mm:id=e-{n:08x} o=0.9 -->\nEntry number {n}.\n\n"
    )


def test_episodic_cap_removes_lowest_salience_then_oldest() -> None:
    anchor = "## Entries\n\n"
    ours = add_after(
        EPISODIC, anchor, episode(16, "0.8", "2026-01-03") + episode(17, "0.5", "2026-01-04")
    )
    theirs = add_after(
        EPISODIC, anchor, episode(32, "0.5", "2026-01-02") + episode(33, "1.0", "2026-01-05")
    )
    result = run(EPISODIC, ours, theirs, kind="episodic", episodic_cap=3)
    doc = parse("episodic", result.text)
    assert doc.problems == []
    kept = {e.text for e in doc.entries()}
    assert kept == {"Entry number 16.", "Entry number 33.", "Base entry."}
    assert doc.log_lines() == [
        f'- [{TODAY}] Removed (merge): "Entry number 32." (episodic cap of 3 entries after '
        "the merge, salience 0.500)",
        f'- [{TODAY}] Removed (merge): "Entry number 17." (episodic cap of 3 entries after '
        "the merge, salience 0.500)",
    ]


def test_episodic_additions_on_both_sides_at_the_top() -> None:
    anchor = "## Entries\n\n"
    ours = add_after(EPISODIC, anchor, episode(16, "1.0", "2026-01-03"))
    theirs = add_after(EPISODIC, anchor, episode(32, "1.0", "2026-01-04"))
    result = run(EPISODIC, ours, theirs, kind="episodic")
    assert not result.conflicted
    assert [e.text for e in parse("episodic", result.text).entries()] == [
        "Entry number 16.",
        "Entry number 32.",
        "Base entry.",
    ]


def test_detect_kind() -> None:
    assert detect_kind(BASE) == "semantic"
    assert detect_kind("\ufeff\n# Episodic Memory\n") == "episodic"
    assert detect_kind("# Memory Archive\n") == "archive"
    assert detect_kind("# Notes\n") is None
    assert detect_kind("") is None
