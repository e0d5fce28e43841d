"""The frame comparator (core/frame.py) and the "may replace" link of save_semantic: pure
functions over a real MemoryStore in a temporary folder, the real shipped meaning model."""

from __future__ import annotations

from pathlib import Path

import pytest

from maestro_memory.core import frame
from maestro_memory.core.contradiction import classify
from maestro_memory.core.store import MemoryStore

ISSUE_CASES = [
    ("From now on always use pnpm, never npm",
     "Actually, switch to bun instead of pnpm from now on", "replaced"),
    ("Always use pnpm", "Use yarn, not pnpm", "replaced"),
    ("Service A runs on port 8001", "Service B runs on port 8002", "added"),
    ("Release step 2 is building the image", "Release step 3 is pushing the image", "added"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "want"), ISSUE_CASES)
def test_the_issues_cases_come_out_right(old: str, new: str, want: str) -> None:
    assert classify(new, [("s-1", old)]).action == want


def test_a_changed_identifier_alone_is_left_to_the_patterns() -> None:
    assert frame.compare("Python 3.11 is required", "Python 3.12 is required") is None
    assert frame.compare("Service A runs on port 8001", "Service A runs on port 8002") is None


def test_a_conditional_in_a_long_rule_is_no_switch() -> None:
    where = "is not available in the container image used by the CI runners here, use"
    old = f"If `gofumpt` {where} `goimports`."
    new = f"If `goimports` {where} `gofmt`."
    assert frame.compare(old, new) is None


@pytest.fixture
def meaning(monkeypatch: pytest.MonkeyPatch) -> object:
    # The mechanism under test, not the threshold: this pair's meanings are 0.82 alike.
    monkeypatch.setattr(frame, "MAY_REPLACE", 0.8)
    previous = frame._similar
    frame.use_meaning()
    yield
    frame._similar = previous


def test_unsure_links_both_and_review_resolves_it(tmp_path: Path, meaning: object) -> None:
    store = MemoryStore(tmp_path)
    old = "Run the full test suite before submitting"
    new = "Run any relevant tests before submitting"
    assert classify(new, [("x", old)]).action == "added"  # the patterns cannot tell
    first = store.run(lambda m: m.save_semantic(old, "quality_rule", 0.9)).result
    second = store.run(lambda m: m.save_semantic(new, "quality_rule", 0.9)).result
    assert second.action == "added" and second.may_replace == first.entry.id
    view = store.read().view()
    by_id = {e.id: e for e in view.semantic}
    assert by_id[first.entry.id].state == "superseded"
    assert by_id[first.entry.id].superseded_by == second.entry.id
    assert by_id[second.entry.id].may_replace == first.entry.id
    text = (tmp_path / ".maestro" / "memory" / "semantic.md").read_text()
    assert second.entry.id in text.split(old)[1].split(new)[0]  # marked in the older's block
    report = store.run(lambda m: m.memory_maintenance(dry_run=True)).result
    waiting = [p for p in report.proposals if p.entry.id == first.entry.id]
    assert waiting and waiting[0].action == "review" and new in waiting[0].reason
    # A sweep without decisions leaves it waiting; archiving it resolves the link.
    store.run(lambda m: m.memory_maintenance())
    assert first.entry.id in {e.id for e in store.read().view().semantic}
    store.run(lambda m: m.memory_maintenance(decisions={first.entry.id: "archive"}))
    after = {e.id: e for e in store.read().view().semantic}
    assert first.entry.id not in after and after[second.entry.id].may_replace is None


def test_keeping_both_unlinks_them(tmp_path: Path, meaning: object) -> None:
    store = MemoryStore(tmp_path)
    a = store.run(lambda m: m.save_semantic("Run the full test suite before submitting",
                                            "quality_rule", 0.9)).result  # fmt: skip
    b = store.run(lambda m: m.save_semantic("Run any relevant tests before submitting",
                                            "quality_rule", 0.9)).result  # fmt: skip
    assert b.may_replace == a.entry.id
    store.run(lambda m: m.memory_maintenance(decisions={a.entry.id: "reinforce"}))
    after = {e.id: e for e in store.read().view().semantic}
    assert after[a.entry.id].state == "active" and after[b.entry.id].may_replace is None


def test_refusals_add_up_and_are_never_linked(tmp_path: Path, meaning: object) -> None:
    store = MemoryStore(tmp_path)
    days = [f"Never deploy on {day}" for day in ("Monday", "Tuesday", "Wednesday")]
    assert frame.similar(days[0], days[1]) >= frame.MAY_REPLACE  # close enough to be linked
    saved = [store.run(lambda m, t=t: m.save_semantic(t, "project_context", 1.0)).result
             for t in days]  # fmt: skip
    assert [s.action for s in saved] == ["added"] * 3
    assert all(s.may_replace is None for s in saved)
    assert {e.state for e in store.read().view().semantic} == {"active"}
    # One word more may refine a refusal, and a changed choice may replace one: both linkable.
    assert not frame._two_refusals("Never deploy on Monday", "Never deploy on Monday mornings")
    assert not frame._two_refusals("Deploy on Monday", "Deploy on Tuesday")


def test_identifiers_without_words_are_never_linked(tmp_path: Path) -> None:
    # bench P3's writes: each a new fact; by their fragments they were 0.9 alike and each
    # was linked to the one before (a log line and a review item per save).
    previous = frame._similar
    frame.use_meaning()
    try:
        store = MemoryStore(tmp_path)
        saved = [store.run(lambda m, i=i: m.save_semantic(f"w0q{i} w0k{i} w0z{i}",
                                                          "project_context", 0.9)).result
                 for i in range(3)]  # fmt: skip
    finally:
        frame._similar = previous
    assert [(s.action, s.may_replace) for s in saved] == [("added", None)] * 3


def test_without_the_model_nothing_is_linked(tmp_path: Path) -> None:
    previous = frame._similar
    frame._similar = None  # a hook process: the model is never loaded there
    try:
        store = MemoryStore(tmp_path)
        store.run(lambda m: m.save_semantic("Run the full test suite before submitting",
                                            "quality_rule", 0.9))  # fmt: skip
        b = store.run(lambda m: m.save_semantic("Run any relevant tests before submitting",
                                                "quality_rule", 0.9)).result  # fmt: skip
        assert b.action == "added" and b.may_replace is None
    finally:
        frame._similar = previous


def test_one_fact_from_three_tools_in_their_words_is_one_entry(tmp_path: Path) -> None:
    from maestro_memory.core.toolmem import Note

    notes = [
        Note("claude", "claude:feedback_pnpm.md", "Always use pnpm, never npm, in this repository.",
             "project_context", "1:10"),
        Note("gemini", "gemini:GEMINI.md#1", "Use pnpm instead of npm for installs.",
             "project_context", "1:10"),
        Note("codex", "codex:memories.md#1", "The project uses pnpm as its package manager, "
             "not npm.", "project_context", "1:10"),
    ]  # fmt: skip
    store = MemoryStore(tmp_path)
    store.run(lambda m: m.import_notes(notes, ["claude", "gemini", "codex"]))
    texts = [e.text for e in store.read().view().semantic]
    # Reinforced, not replaced: the first wording stays, the other two restate it.
    assert texts == ["Always use pnpm, never npm, in this repository."], texts


def test_the_batched_cosines_give_the_pairwise_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    # A save compares with every entry at once (one matrix product); the verdict must be the
    # one of the pair-by-pair cosines, thresholds set right on the cosines that occur included.
    from maestro_memory.core import meaning

    previous = frame._similar
    frame.use_meaning()
    try:
        texts = [f"w{i % 7}q{i} w{i % 7}k{i} w{i % 7}z{i}" for i in range(60)] + [
            "Run the full test suite before submitting",
            "Run any relevant tests before submitting",
            "Always use pnpm, never npm",
            "Use yarn, not pnpm",
        ]
        existing = [(f"s-{i}", t) for i, t in enumerate(texts)]
        news = ["Run the tests before submitting", "w3q99 w3k99 w3z99", "Use bun, not pnpm"]
        pair = meaning.similarity
        for new in news:
            near = sorted(pair(t, new) for t in texts)
            for threshold in (0.9, near[-1], near[-2], near[len(near) // 2]):
                monkeypatch.setattr(frame, "MAY_REPLACE", threshold)
                batched = frame.may_replace(new, existing)
                monkeypatch.setattr(frame, "_batched", None)  # one pair at a time
                assert frame.may_replace(new, existing) == batched
                frame.use_meaning()
    finally:
        frame._similar = previous


# Changes the words see but cannot tell from another item of a list (core/contradiction.py,
# "Linked"): each pair (old, new) is linked, neither replaced nor added.
UNSURE = [
    ("**Correct:** cache hit", "**Correct:** memoize or hoist"),  # a description under a label
    ("**Impact: HIGH (caches across requests)**", "**Impact: LOW (avoids re-creation)**"),
    ("`*.e2e.test.ts` — end-to-end tests, next to source",
     "`*.unit.test.ts` — unit tests, next to source"),  # another opening, another word after
]  # fmt: skip
SURE = [  # the same shapes where the change is the rule's: replaced
    ("Doc test: `make doctest`", "Doc test: `uv run pytest --doctest-modules`"),
    ("Formatting: run black with line length 88", "Formatting: use ruff format"),
    ("`ChatMessage` - Represents a chat message", "`Message` - Represents a chat message"),
    ("Prefers Sonnet for all execution tasks (cost reason)",
     "Prefers Opus for all execution tasks"),  # a closing aside dropped is no other item
]  # fmt: skip


@pytest.mark.parametrize(("old", "new"), UNSURE)
def test_a_change_the_words_cannot_place_is_linked(old: str, new: str) -> None:
    verdict = classify(new, [("s-1", old)])
    assert (verdict.action, verdict.target) == ("linked", "s-1"), verdict


@pytest.mark.parametrize(("old", "new"), SURE)
def test_a_change_of_the_rule_itself_still_replaces(old: str, new: str) -> None:
    assert classify(new, [("s-1", old)]).action == "replaced"


def test_a_linked_verdict_keeps_both_without_the_model(tmp_path: Path) -> None:
    previous = frame._similar
    frame._similar = None  # the link comes from the patterns, not from the meaning layer
    try:
        store = MemoryStore(tmp_path)
        old, new = UNSURE[0]
        first = store.run(lambda m: m.save_semantic(old, "project_context", 0.9)).result
        second = store.run(lambda m: m.save_semantic(new, "project_context", 0.9)).result
        assert second.action == "added" and second.may_replace == first.entry.id
        assert second.replaced is None and "both kept" in second.reason
        by_id = {e.id: e for e in store.read().view().semantic}
        assert by_id[first.entry.id].superseded_by == second.entry.id  # served, marked
        assert by_id[second.entry.id].may_replace == first.entry.id
        # A third item under the label: the first is already waiting, so it is only added.
        third = store.run(lambda m: m.save_semantic("**Correct:** one lookup total",
                                                    "project_context", 0.9)).result  # fmt: skip
        assert third.action == "added"
        assert len(store.read().view().semantic) == 3
    finally:
        frame._similar = previous
