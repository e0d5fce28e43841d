"""The spec's numeric rules as pure functions: decay, reinforcement, flags and disposal."""

from __future__ import annotations

from typing import Literal

from .model import (
    ARCHIVE_ORIGINAL,
    DECAY_FLOOR,
    EPISODIC_FACTOR,
    FLAG_THRESHOLD,
    MAX_SALIENCE,
    PRUNE_SALIENCE,
    SEMANTIC_DECAY,
    EntryState,
)


def semantic_decayed(confidence: float) -> float:
    """One session without reinforcement: -0.05, never below the floor, never to zero.

    An entry at 0.0 is *contradicted*, a state a person or a contradiction put it in; decay
    must not manufacture that state, so it stops at ``DECAY_FLOOR``.
    """
    if confidence <= DECAY_FLOOR:
        return confidence
    return max(round(confidence - SEMANTIC_DECAY, 2), DECAY_FLOOR)


def episodic_decayed(salience: float, confidence: float) -> tuple[float, float]:
    """One sweep: salience and confidence both x0.8, kept to three decimals (0.512, 0.328 …)."""
    return round(salience * EPISODIC_FACTOR, 3), round(confidence * EPISODIC_FACTOR, 3)


def pruned_by_sweep(salience: float) -> bool:
    """The sweep prunes below 0.1 salience; low confidence only flags (see ARCHITECTURE.md)."""
    return salience < PRUNE_SALIENCE


def referenced_semantic(confidence: float, original: float) -> float:
    return round(min(confidence + 0.1, original), 2)


def confirmed_semantic(confidence: float) -> float:
    return round(min(confidence + 0.1, 1.0), 2)


def referenced_episodic(salience: float, confidence: float, original: float) -> tuple[float, float]:
    return round(min(salience + 0.2, MAX_SALIENCE), 3), round(min(confidence + 0.1, original), 3)


def confirmed_episodic(salience: float, confidence: float) -> tuple[float, float]:
    return round(min(salience + 0.2, MAX_SALIENCE), 3), round(min(confidence + 0.1, 1.0), 3)


def restated_confidence(current: float, stated: float) -> float:
    """A rule restated is a confirmation: +0.1 (to 1.0), or the stated value if higher."""
    return round(max(stated, min(current + 0.1, 1.0)), 2)


def state_of(confidence: float, salience: float | None = None) -> EntryState:
    if confidence == 0.0:
        return "contradicted"
    if confidence < FLAG_THRESHOLD or (salience is not None and salience < PRUNE_SALIENCE):
        return "flagged"
    return "active"


def disposal(original: float) -> Literal["remove", "archive"]:
    """Removing an entry: archive it if it was ever above 0.5 (it may resurface), else remove."""
    return "archive" if original > ARCHIVE_ORIGINAL else "remove"
