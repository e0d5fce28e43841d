"""A memory never learns from its own output: ``core.injected.strip_injected`` and the one
detection path that calls it (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from maestro_memory.core import MemoryStore
from maestro_memory.core.injected import strip_injected

DAY = "2026-12-02"
RULE = "Always use pnpm instead of npm"


@pytest.mark.parametrize(
    ("text", "left"),
    [
        # Gemini CLI 0.61.0's BeforeAgent prompt, exactly as tests/e2e/test_hook_payloads.py
        # recorded it: the SessionStart context in front of the person's words.
        (
            "<hook_context>[Project Memory] START-CONTEXT [End Project Memory]</hook_context>"
            "\n\nfirst prompt",
            "first prompt",
        ),
        ("[Project Memory]\n- Always use pnpm\n[End Project Memory]\nhello", "hello"),
        ("<system-reminder>\nAlways run the tests\n</system-reminder>\nfix it", "fix it"),
        ("<user-prompt-submit-hook>Remembered: x</user-prompt-submit-hook> go", "go"),
        ("<HOOK_CONTEXT>never push</hook_context>ok", "ok"),
        ("Remembered: Always use pnpm\nthanks", "thanks"),
        # Unterminated: a truncated wrapper or block is still not the person's words.
        ("before\n<hook_context>[Project Memory] Always lint", "before"),
        ("before\n[Project Memory]\n- Never push on Friday", "before"),
        # Nothing injected: the text is the text.
        ("Always use pnpm instead of npm", "Always use pnpm instead of npm"),
        ("I remembered: nothing", "I remembered: nothing"),
        ("", ""),
    ],
)
def test_strip_injected(text: str, left: str) -> None:
    assert strip_injected(text) == left


def test_strip_injected_refuses_a_non_string() -> None:
    with pytest.raises(TypeError):
        strip_injected(None)  # type: ignore[arg-type]


def test_an_injected_rule_is_not_reinforced_by_detection(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, clock=lambda: DAY)
    saved = store.save_semantic(RULE, "user_preference", 0.9)
    assert saved.entry is not None
    block = store.build_context()
    assert RULE in block
    gemini_prompt = f"<hook_context>{block}</hook_context>\n\nAdd a dependency on left-pad."

    assert store.detect_semantic_signals(gemini_prompt) == []
    # Claude Code's and a pasted shape too; then nothing changed.
    assert store.detect_semantic_signals(f"<system-reminder>{block}</system-reminder>") == []
    assert store.detect_semantic_signals(block + "\nRemembered: " + RULE) == []
    [entry] = store.semantic_entries()
    assert entry.confidence == pytest.approx(0.9)


def test_the_persons_words_after_the_block_are_still_mined(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, clock=lambda: DAY)
    store.save_semantic(RULE, "user_preference", 0.9)
    prompt = f"<hook_context>{store.build_context()}</hook_context>\n\nNever commit secrets."
    [signal] = store.detect_semantic_signals(prompt)
    assert signal.fact == "Never commit secrets"
    facts = {e.text for e in store.semantic_entries()}
    assert facts == {RULE, "Never commit secrets"}


def test_the_block_in_a_prompt_used_as_the_task_references_nothing(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, clock=lambda: DAY)
    store.save_semantic(RULE, "user_preference", 0.9)
    block = store.build_context()
    task = f"<hook_context>{block}</hook_context>\n\nFix the login form."
    result = store.build_context_result(task=task, session_id="s", unseen_only=True)
    assert result.context == ""
    named = store.build_context_result(task="Switch to pnpm", session_id="t", unseen_only=True)
    assert RULE in named.context  # the person's own words still find it
