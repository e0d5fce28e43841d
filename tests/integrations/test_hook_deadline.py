"""``MAESTRO_HOOK_DEADLINE`` widens the hooks' watchdog (the e2e suite sets it: on 2 busy
cores a session-start hook was seen giving up at 0.96 s of its 0.95 s)."""

from __future__ import annotations

import pytest

from maestro_memory.client.integrations import hooks

DEFAULTS = (hooks.DEADLINE, hooks.HARD_DEADLINE, hooks.DAEMON_TIMEOUT)


def test_the_default_deadlines_without_the_variable() -> None:
    assert hooks.time_limits({}) == DEFAULTS


def test_a_positive_number_of_seconds_sets_both_deadlines() -> None:
    deadline, hard, daemon = hooks.time_limits({"MAESTRO_HOOK_DEADLINE": " 8 "})
    assert deadline == 8.0
    scale = 8.0 / hooks.DEADLINE  # all three stretched in proportion
    assert hard == pytest.approx(hooks.HARD_DEADLINE * scale)
    assert daemon == pytest.approx(hooks.DAEMON_TIMEOUT * scale)


@pytest.mark.parametrize("raw", ["", "0", "-1", "soon", "nan", "inf", "1e9"])
def test_anything_else_keeps_the_defaults(raw: str) -> None:
    assert hooks.time_limits({"MAESTRO_HOOK_DEADLINE": raw}) == DEFAULTS
