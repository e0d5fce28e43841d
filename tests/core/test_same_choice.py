"""One fact, one entry, across tools and wordings (issue 34): the same rule imported from
Claude Code, Gemini and Codex in each tool's own words reinforces one entry. The meaning puts
the texts in one slot (``frame.SAME_CHOICE``) and the frame reads the same choice with the same
values (``frame.same_choice``); before, "Always use pnpm as the package manager" stood beside
"Use pnpm for package management" as a second rule. Real Memory, the real import rule, the
shipped meaning model."""

from __future__ import annotations

import pytest

from maestro_memory.core.frame import same_choice
from maestro_memory.core.memory import Memory
from maestro_memory.core.toolmem import bullet_notes

WORDINGS = (
    ("claude", "CLAUDE.md", "Use pnpm for package management"),
    ("gemini", "GEMINI.md", "Always use pnpm as the package manager"),
    ("codex", "AGENTS.md", "Package manager: pnpm"),
)


pytestmark = pytest.mark.usefixtures("meaning_layer")  # as the daemon saves


def test_three_tools_in_their_own_words_make_one_entry() -> None:
    m = Memory.load({}, today="2026-03-01")
    actions = []
    for tool, name, text in WORDINGS:
        report = m.import_notes(bullet_notes(tool, name, f"- {text}\n", "1"), [tool])
        actions += [item["action"] for item in report.imported]
    assert actions == ["added", "reinforced", "reinforced"]
    (entry,) = m.semantic_entries()
    assert entry.text == WORDINGS[0][2]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Used by: Gemini, Qwen, Tabnine", "Used by: Gemini, Tabnine"),  # a name dropped
        ("Use pnpm for installs", "Use pnpm only in the web package"),  # narrowed
        ("Use pnpm for installs", "Never use pnpm for installs"),  # turned round
        ("Use pnpm for installs", "Use yarn for installs"),  # another choice
        ("Use the staging database", "Always use the staging database"),  # no tool chosen
    ],
)
def test_not_the_same_choice(old: str, new: str) -> None:
    assert not same_choice(old, new)


def test_another_rule_on_the_same_tool_stays_its_own_entry() -> None:
    m = Memory.load({}, today="2026-03-01")
    m.save_semantic("Use ruff for linting", "project_context", 0.9)
    again = m.save_semantic("Use ruff for formatting", "project_context", 0.9)
    assert again.action != "reinforced"
    assert len(m.semantic_entries()) == 2
