"""core.text: the one word tokeniser (relevance, search, the contradiction checks)."""

from __future__ import annotations

import pytest

from maestro_memory.core.text import content_set, tokens, words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Verwende Umlaute für Ü-Tests", ["verwende", "umlaute", "fur", "u-tests"]),
        ("Straße \uff21\uff22\uff23", ["strasse", "abc"]),  # casefold; full-width is plain
        ("Используй pnpm, не npm", ["используй", "pnpm", "не", "npm"]),
        ("Ёлка и йод", ["ёлка", "и", "йод"]),  # a Cyrillic letter keeps its mark
        ("使用pnpm包管理器", ["使", "用", "pnpm", "包", "管", "理", "器"]),  # Han: one a word
        ("テストはpytestで実行", ["テスト", "は", "pytest", "で", "実", "行"]),  # kana: runs
        ("हिन्दी परीक्षण", ["हिन्दी", "परीक्षण"]),  # vowel signs belong to the word
        ("(cost) *.test.ts .env c++ _x foo.", ["cost", "*.test.ts", "env", "c++", "x", "foo"]),
    ],
)
def test_words_of_any_script(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_tokens_keep_case_and_marks_on_request() -> None:
    assert tokens("Package manager: pnpm = 5%") == ["Package", "manager", "pnpm", "5"]
    assert tokens("a: b = 5%", marks=True) == ["a", ":", "b", "=", "5", "%"]
    assert tokens(".env and *.spec.ts") == [".env", "and", "*.spec.ts"]


def test_content_set_matches_a_non_ascii_word() -> None:
    assert content_set("Umlaute für Ü-Tests prüfen") & content_set("ü-tests")
    assert "tests" not in content_set("über")  # English stemming leaves other words alone
    assert content_set("Проверка тестов") & content_set("тестов")
