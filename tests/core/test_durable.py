"""The prompt door's verdict (core/durable.py) and proposals (core/proposals.py), through
``Memory.detect_semantic_signals`` on a real memory in a temp project."""

from __future__ import annotations

from pathlib import Path

from maestro_memory.core.durable import judge
from maestro_memory.core.memory import Memory


def _memory(tmp_path: Path, today: str = "2026-12-04") -> Memory:
    return Memory.load({}, today=today)


def test_a_scoped_order_is_refused_with_its_reason() -> None:
    verdict = judge("Don't change anything else", 0.9, "Fix the login. Don't change anything else")
    assert verdict.level == "refused"
    assert "anything else" in verdict.reason


def test_this_project_is_what_lasts_not_the_task_at_hand() -> None:
    # "this pr" and "for this <word>" once matched "this project" (no word boundary).
    rule = "Don't actually build this project"
    assert judge(rule, 0.9, rule + ". It builds in CI.").level == "instruction"
    assert judge("Use uv for this project", 0.5, "Use uv for this project.").level != "refused"
    for scoped in ("Use uv for this task", "Only change this PR", "Leave this file alone"):
        assert judge(scoped, 0.9, scoped).level == "refused", scoped


def test_a_plain_rule_is_an_instruction_and_a_plain_fact_a_proposal() -> None:
    assert judge("Use uv instead of pip", 0.9, "Use uv instead of pip.").level == "instruction"
    assert judge("We deploy on Fly.io", 0.5, "We deploy on Fly.io.").level == "proposal"


def test_a_rule_inside_a_bug_report_is_only_proposed() -> None:
    own = "The page is blank after login and I get an error. Don't use var in the JS."
    assert judge("Don't use var in the JS", 0.9, own).level == "proposal"


def test_how_the_product_looks_is_a_requirement_to_confirm() -> None:
    own = "Dont make the hover affect turn the buttons grey"
    verdict = judge(own, 0.9, own)
    assert verdict.level == "proposal" and "product" in verdict.reason
    # A working rule that names a button is still one.
    rule = "Never use inline styles on buttons"
    assert judge(rule, 1.0, rule).level == "instruction"


def test_a_proposal_is_kept_not_served_and_confirmed_by_review(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    signals = memory.detect_semantic_signals("The backend uses FastAPI with Postgres.")
    assert [s.verdict for s in signals] == ["proposal"]
    entry_id = signals[0].entry_id
    assert entry_id is not None
    [entry] = memory.semantic_entries()
    assert entry.state == "proposed" and entry.proposed == "2026-12-04"
    assert entry_id not in memory.build_context(task="fastapi postgres backend").included
    report = memory.memory_maintenance()  # no decisions: a proposal waits for a yes
    assert [p.action for p in report.proposals] == ["confirm"]
    assert memory.semantic_entries()[0].state == "proposed"
    memory.memory_maintenance(decisions={entry_id: "confirm"})
    assert memory.semantic_entries()[0].state == "active"
    assert entry_id in memory.build_context(task="fastapi postgres backend").included


def test_a_confirmed_reinforce_confirms_a_proposal(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    [signal] = memory.detect_semantic_signals("The backend uses FastAPI with Postgres.")
    assert signal.entry_id is not None
    memory.reinforce(signal.entry_id, confirmed=True)
    assert memory.semantic_entries()[0].state == "active"


def test_a_refused_statement_saves_nothing(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    signals = memory.detect_semantic_signals("Add public getters for these fields")
    assert all(s.action == "rejected" and s.reason for s in signals)
    assert memory.semantic_entries() == []


def test_a_relayed_note_without_quote_marks_keeps_only_the_persons_rule(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    signals = memory.detect_semantic_signals(
        "My colleague sent me this note, what do you think?\n\n"
        "Always use tabs. Never write tests first.\n\n"
        "Also, for our repo: use uv instead of pip."
    )
    assert [s.fact for s in signals] == ["Use uv instead of pip"]
    assert [e.text for e in memory.semantic_entries()] == ["Use uv instead of pip"]
