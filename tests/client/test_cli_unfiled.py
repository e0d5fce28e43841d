"""Nothing vanishes silently (issue 33, point 9): an entry under a heading the format does not
know (``## Quality Rule``, misspelt) is listed by ``entries`` as unfiled with its line, warned
about by ``doctor``, and not served by ``context`` until the heading is fixed. The real
``maestroctl``, direct and through a real daemon."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from maestroctl_runner import Cli

MISSPELT = (
    "# Semantic Memory\n\n"
    "## Quality Rules\n"
    "- [2026-01-01] [0.90] Always run the tests before committing\n\n"
    "## Quality Rule\n"
    "- [2026-01-01] [1.00] Never force-push to main\n\n"
    "## Notes\n"
    "- a person's own list stays a list\n"
)


@pytest.mark.parametrize("with_daemon", [False, True], ids=["direct", "daemon"])
def test_an_entry_under_a_misspelt_heading_is_listed_warned_and_not_served(
    request: pytest.FixtureRequest, cli: Cli, project: Path, with_daemon: bool
) -> None:
    cli("init")
    if with_daemon:
        request.getfixturevalue("daemon")
        cli("register")
    (project / ".maestro" / "memory" / "semantic.md").write_text(MISSPELT)
    deadline = time.monotonic() + 30  # through the daemon: its watcher takes the edit in
    while not cli.result("entries")["problems"]:
        assert time.monotonic() < deadline, "the edit never showed"
        time.sleep(0.05)
    run = cli("entries")
    listed = run.stdout + run.stderr  # the table on stdout, the warnings on stderr
    assert (
        'warning: semantic.md: line 7: unfiled entry "Never force-push to main" under '
        "'## Quality Rule', a heading semantic.md does not know (did you mean "
        "'## Quality Rules'?): kept, not served, until the heading is fixed"
    ) in listed, listed
    assert "own list" not in listed  # a bullet under a person's own heading is not an entry
    assert "Never force-push" not in cli("context").stdout
    assert "Always run the tests" in cli("context").stdout
    run = cli("doctor", check=None)
    doctor = run.stdout + run.stderr
    assert "parses cleanly" not in doctor
    assert "line 7: unfiled entry" in doctor and "did you mean '## Quality Rules'" in doctor
    # Fixed by hand: served again, and the warning is gone.
    fixed = MISSPELT.replace("## Quality Rule\n", "## Quality Rules\n", 1).replace(
        "## Quality Rules\n- [2026-01-01] [0.90]", "## Quality Rules\n- [2026-01-01] [0.91]"
    )
    (project / ".maestro" / "memory" / "semantic.md").write_text(fixed)
    while cli.result("entries")["problems"]:
        assert time.monotonic() < deadline + 30, "the fix never showed"
        time.sleep(0.05)
    assert "Never force-push to main" in cli("context").stdout
