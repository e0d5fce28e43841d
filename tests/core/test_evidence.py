"""Evidence (core/evidence.py): which paths an entry names, and what a check decides from what
the working tree showed. Pure: the stats and git answers are values here; the real working
tree, git and daemon are in tests/daemon/test_daemon_evidence.py."""

from __future__ import annotations

import pytest

from maestro_memory.core import evidence
from maestro_memory.core.evidence import Ledger, Probe, extract, named_paths

ROOT = "/home/dev/proj"


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("Session tokens are validated in `src/auth.py`.", ["src/auth.py"]),
        ("Session tokens are validated in src/auth.py.", ["src/auth.py"]),
        ("Tests live in tests/unit/ next to ./run.sh", ["tests/unit", "run.sh"]),
        ("The API is in `src/api` (see docs/API.md:12)", ["src/api", "docs/API.md"]),
        ("Handlers live in src/app/handlers", ["src/app/handlers"]),
        (f"Config is read from {ROOT}/conf/app.toml", ["conf/app.toml"]),
        ("Run `pytest tests/core -x -q` before pushing", ["tests/core"]),
        ("`src/auth.py` and `./src/auth.py` are one file", ["src/auth.py"]),
    ],
)
def test_the_paths_an_entry_names(text: str, paths: list[str]) -> None:
    assert named_paths(text, ROOT) == paths


@pytest.mark.parametrize(
    "text",
    [
        "Docs at https://example.com/docs/setup.html and github.com/owner/repo",
        "Pin requests to v1.2 and use 1.2.3, not 2.0",
        "Pass --flag=src/x.py or --out=build/ to the tool",
        "Use tabs, e.g. in Makefiles, i.e. everywhere",
        "It is a client/server design with read/write locks and input/output on TCP/IP",
        "Released 12/05/2024; half is 1/2",
        "Config lives in `~/.config/tool/x.toml` and $HOME/.cache/x",
        "Outside the project: /etc/passwd and /home/dev/other/file.py and ../sibling/x.py",
        "Globs such as `src/**/*.py` are patterns, not files",
        "auth.py has the validation",  # no folder: could be anywhere, not checked
        "Install `@types/node` for the types",
    ],
)
def test_what_is_not_a_project_path(text: str) -> None:
    assert named_paths(text, ROOT) == []


def test_a_folder_written_with_a_slash_must_be_a_folder() -> None:
    (named,) = extract("Fixtures go in tests/fixtures/", ROOT)
    assert named.folder and named.path == "tests/fixtures"
    checked = evidence.plan([("Fixtures go in tests/fixtures/", "2026-01-01")], ROOT)
    assert checked.folders == frozenset({"tests/fixtures"})


def _check(ledger: Ledger, texts: list[str], exists: dict[str, bool], **git: object) -> Ledger:
    checked = evidence.plan([(t, "2026-01-01") for t in texts], ROOT)
    probe = Probe(exists, **git)  # type: ignore[arg-type]
    return evidence.record(ledger, checked, probe, "2026-02-01", ["e1", "e2"])


FACT = "Session tokens are validated in `src/auth.py`."


def test_a_path_that_exists_changes_nothing() -> None:
    ledger = _check(Ledger(), [FACT], {"src/auth.py": True})
    assert ledger.missing == {} and ledger.seen == ["src/auth.py"]
    assert evidence.finding(FACT, "e1", ledger) is None


def test_a_path_seen_then_gone_makes_the_entry_stale() -> None:
    seen = _check(Ledger(), [FACT], {"src/auth.py": True})
    gone = _check(seen, [FACT], {"src/auth.py": False})
    found = evidence.finding(FACT, "e1", gone)
    assert found is not None and found.reason == "`src/auth.py` no longer exists"
    assert evidence.proposal_action(found.moved) == "review"
    # It comes back (another branch checked out): the entry is served again.
    back = _check(gone, [FACT], {"src/auth.py": True})
    assert evidence.finding(FACT, "e1", back) is None


def test_a_path_never_seen_and_unknown_to_git_is_not_evidence() -> None:
    advice = "In Django projects templates go in templates/app/"
    ledger = _check(Ledger(), [advice], {"templates/app": False})
    assert ledger.missing == {} and ledger.absent == ["templates/app"]
    assert evidence.finding(advice, "e1", ledger) is None
    # Git is not asked again about it while it stays missing.
    assert not evidence.needs_git(ledger, ["templates/app"])
    assert evidence.needs_git(ledger, ["templates/app", "src/new.py"])


def test_git_saw_it_deleted_before_any_check() -> None:
    ledger = _check(Ledger(), [FACT], {"src/auth.py": False}, removed=frozenset({"src/auth.py"}))
    assert ledger.missing == {"src/auth.py": ""}


def test_a_rename_names_the_new_path_and_the_rewrite_replaces_it() -> None:
    ledger = _check(
        Ledger(),
        [FACT],
        {"src/auth.py": False, "src/login.py": True},
        renamed={"src/auth.py": "src/login.py"},
        removed=frozenset({"src/auth.py"}),
    )
    found = evidence.finding(FACT, "e1", ledger)
    assert found is not None and found.moved == {"src/auth.py": "src/login.py"}
    assert found.reason == "`src/auth.py` was renamed to `src/login.py`"
    assert evidence.proposal_action(found.moved) == "rewrite"
    assert evidence.rewritten(FACT, found.moved) == (
        "Session tokens are validated in `src/login.py`."
    )


def test_renames_are_followed_and_a_folder_follows_its_files() -> None:
    renamed = {"src/a.py": "src/b.py", "src/b.py": "src/c.py", "src/auth/tok.py": "lib/tok.py"}
    assert evidence.new_location("src/a.py", renamed) == "src/c.py"
    assert evidence.new_location("src/auth", renamed) == "lib"
    assert evidence.new_location("src/none.py", renamed) is None
    text = "Tokens: ./src/auth/ and src/a.py; not src/a.pyc"
    assert evidence.rewritten(text, {"src/auth": "lib", "src/a.py": "src/c.py"}) == (
        "Tokens: ./lib/ and src/c.py; not src/a.pyc"
    )


def test_a_renamed_path_whose_target_is_gone_too_is_gone() -> None:
    ledger = _check(
        Ledger(seen=["src/auth.py"]),
        [FACT],
        {"src/auth.py": False, "src/login.py": False},
        renamed={"src/auth.py": "src/login.py"},
    )
    assert ledger.missing == {"src/auth.py": ""}


def test_a_person_who_keeps_the_entry_is_not_asked_again() -> None:
    gone = _check(Ledger(seen=["src/auth.py"]), [FACT], {"src/auth.py": False})
    found = evidence.finding(FACT, "e1", gone)
    assert found is not None
    kept = evidence.kept_after_review(gone, "e1", found)
    assert evidence.finding(FACT, "e1", kept) is None
    assert evidence.finding(FACT, "e2", kept) is not None  # another entry naming it: still
    again = _check(kept, [FACT], {"src/auth.py": False})
    assert evidence.finding(FACT, "e1", again) is None
    # The entry is gone: its keep goes too.
    dropped = evidence.record(
        again, evidence.plan([(FACT, "")], ROOT), Probe({"src/auth.py": False}), "d", ["e2"]
    )
    assert dropped.kept == {}


def test_the_ledger_round_trips_and_garbage_is_dropped() -> None:
    ledger = Ledger(["a/b.py"], {"c/d.py": "", "e/f.py": "e/g.py"}, ["x/y"], {"e1": ["c/d.py"]})
    ledger.checked, ledger.root = "2026-02-01", ROOT
    assert Ledger.from_json(ledger.to_json()) == ledger
    assert Ledger.from_json({"seen": [1, "a/b"], "missing": [], "kept": {"x": 3}}) == Ledger(
        seen=["a/b"], kept={"x": []}
    )
    assert Ledger.from_json("nonsense") == Ledger()


def test_a_git_look_that_did_not_finish_is_asked_again() -> None:
    seen = _check(Ledger(), [FACT], {"src/auth.py": True})
    late = _check(seen, [FACT], {"src/auth.py": False}, settled=False)
    assert late.missing == {"src/auth.py": ""} and late.unsettled == ["src/auth.py"]
    assert evidence.needs_git(late, ["src/auth.py"])  # asked again at the next check
    found = _check(
        late,
        [FACT],
        {"src/auth.py": False, "src/login.py": True},
        renamed={"src/auth.py": "src/login.py"},
    )
    assert found.missing == {"src/auth.py": "src/login.py"} and found.unsettled == []
    assert not evidence.needs_git(found, ["src/auth.py"])
