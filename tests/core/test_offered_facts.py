"""Facts offered as information inside a request for work (issue 35, durable facts captured):
"This is my Stationpedia app, built for the game Stationeers. Please gather context …". The
request once scoped every plain statement of its message to the task, so the project's stack,
host and purpose were never kept. Now such a statement, with a subject and a name of its own,
is proposed (kept, shown in review, not served); a bare name and its role, a labelled value
and anything said in a bug report still belong to the task. Also here: rules said in another
language (proposed) and a rule's short reason (kept with it). Real ``Memory``, real rules; the
wordings are this project's, of the shapes the labelled dev prompts show."""

from __future__ import annotations

import pytest

from maestro_memory.core.memory import Memory
from maestro_memory.core.signal_languages import foreign_rules
from maestro_memory.core.signals import detect_signals

DAY = "2026-12-04"


def _kept(prompt: str) -> list[tuple[str, str, float]]:
    m = Memory.load({}, today=DAY)
    m.detect_semantic_signals(prompt)
    return [(e.text, e.state, e.confidence) for e in m.semantic_entries()]


@pytest.mark.parametrize(
    ("prompt", "fragment"),
    [
        (
            "This is my Tidewatch app that is built for the game Seafarers. Please read the"
            " changelog and add a button that opens the planner.",
            "built for the game Seafarers",
        ),
        (
            "this is my home server. It's serving a few services including gitea, miniflux,"
            " navidrome, and more. Can you help me find why one of them redirects?",
            "including gitea, miniflux",
        ),
        ("im using hetzner cloud. Set up the deploy script for the staging box.", "hetzner"),
        (
            "As you see, I have two repos: one for the Linux build and one for the Windows"
            " build. Check which installer goes where.",
            "one for the Linux build",
        ),
        (".NET SDK installed. Build the solution and run the tests.", ".NET SDK installed"),
    ],
)
def test_a_fact_offered_in_a_request_is_proposed_not_served(prompt: str, fragment: str) -> None:
    kept = _kept(prompt)
    hits = [k for k in kept if fragment.lower() in k[0].lower()]
    assert hits, kept
    assert all(state == "proposed" and conf == 0.5 for _, state, conf in hits), kept


@pytest.mark.parametrize(
    "prompt",
    [
        "Add the export page. Jest for tests, Playwright for the browser runs.",  # roles
        "Add input checks to the form. Fields: email (required), name (required).",  # values
        "This is my app built with Next.js and it crashes with an error on the login page,"
        " the build failed twice.",  # a bug report
    ],
)
def test_what_specifies_or_reports_the_task_stays_with_it(prompt: str) -> None:
    assert _kept(prompt) == []


def test_lets_not_is_a_prohibition() -> None:
    [found] = detect_signals("No, let's not use keyword triggers.")
    assert (found.fact, found.confidence) == ("Don't use keyword triggers", 0.9)
    assert detect_signals("let's not worry about that now") == []


@pytest.mark.parametrize(
    ("prompt", "sentence", "confidence"),
    [
        (
            "Crea la estructura del proyecto. Usa siempre pnpm para instalar.",
            "Usa siempre pnpm para instalar",
            1.0,
        ),
        (
            "Implementa la fase 2. Lembre de usar soluções de código aberto.",
            "Lembre de usar soluções de código aberto",
            1.0,
        ),
        ("Da ora in poi scrivi i commenti in inglese.", "Da ora in poi scrivi i commenti", 1.0),
        ("Utilise Tailwind au lieu de Bootstrap.", "Utilise Tailwind au lieu de Bootstrap", 0.9),
        ("使用主题色\uff0c而不是设置一个灰色颜色", "使用主题色\uff0c而不是设置一个灰色颜色", 0.9),
        ("Никогда не меняй файл миграций вручную.", "Никогда не меняй файл миграций", 1.0),
    ],
)
def test_a_rule_in_another_language_is_proposed_in_the_persons_words(
    prompt: str, sentence: str, confidence: float
) -> None:
    # The door reads scope and task in English only: such a rule is kept, never served at once.
    kept = _kept(prompt)
    assert [(state, conf) for text, state, conf in kept if sentence in text] == [
        ("proposed", confidence)
    ], kept


@pytest.mark.parametrize(
    "prompt",
    [
        "¿Por qué siempre falla el build?",  # a question
        "Always run the tests before you commit.",  # English: the English door's
        "Arregla el botón de inicio de sesión.",  # no operator: a task
    ],
)
def test_questions_english_and_plain_tasks_are_not_read_as_foreign_rules(prompt: str) -> None:
    assert foreign_rules(prompt) == []


@pytest.mark.parametrize(
    ("prompt", "facts"),
    [
        (
            "make sure you don't actually build the project. it builds in CI",
            ["Don't actually build the project; it builds in CI"],
        ),
        (
            "Never use mocks. It makes the tests brittle.",
            ["Never use mocks; it makes the tests brittle"],
        ),
        ("Never push to main. It is broken right now.", ["Never push to main"]),  # trouble
        ("Always run ruff. Use black too.", ["Always run ruff", "Use black too"]),  # a rule
        ("Always use pnpm. Is that ok?", ["Always use pnpm"]),  # a question
    ],
)
def test_a_rule_keeps_the_short_reason_said_after_it(prompt: str, facts: list[str]) -> None:
    assert [s.fact for s in detect_signals(prompt)] == facts
