"""The entry-level merge driver under real ``git merge`` between branches.

Each test builds a repository, sets the driver up with the real ``git-setup`` command, writes
memory with the real core (``MemoryStore``) on two branches and merges them with git.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from maestro_memory.client.integrations.gitmerge import ATTRIBUTE_LINE, git_setup_missing
from maestro_memory.core import MemoryStore, Settings
from maestro_memory.core.contradiction import same_rule
from maestro_memory.core.markdown import parse

from .support import Repo, driver_program_args, run_cli


def store(repo: Repo, day: str) -> MemoryStore:
    # Decay per session id (the spec literally), so that a test can age memory within a day.
    return MemoryStore(repo.root, clock=lambda: day, settings=Settings(decay_unit="session"))


def merge(repo: Repo, branch: str) -> tuple[int, str]:
    proc = repo.git("merge", "--no-edit", branch, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def assert_clean_memory(repo: Repo) -> None:
    """Every memory file parses without problems; no id and no rule appears twice."""
    for name, kind in (
        ("semantic.md", "semantic"),
        ("episodic.md", "episodic"),
        ("archive.md", "archive"),
    ):
        path = repo.memory_dir / name
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        assert "<<<<<<<" not in text and ">>>>>>>" not in text, text
        doc = parse(kind, text)  # type: ignore[arg-type]
        assert doc.problems == [], (name, doc.problems)
        ids = [e.id for e in doc.entries()]
        assert len(ids) == len(set(ids)), (name, ids)
        if kind == "semantic":
            active = [e for e in doc.entries() if e.confidence > 0.0]
            for a, b in itertools.combinations(active, 2):
                if a.category == b.category:
                    assert not same_rule(a.text, b.text), (a.text, b.text)


def log_lines(repo: Repo, name: str = "semantic.md") -> list[str]:
    kind = name.removesuffix(".md")
    return parse(kind, repo.read(name)).log_lines()  # type: ignore[arg-type]


def semantic(repo: Repo) -> dict[str, tuple[float, str]]:
    doc = parse("semantic", repo.read("semantic.md"))
    return {e.text: (e.confidence, e.category or "") for e in doc.entries()}


def saving(repo: Repo, day: str, fact: str, category: str, confidence: float) -> Callable[[], None]:
    def work() -> None:
        store(repo, day).save_semantic(fact, category, confidence)

    return work


def on_branch(
    repo: Repo, branch: str, work: Callable[[], None], message: str, create: bool = False
) -> None:
    repo.git("checkout", "-q", *(["-b"] if create else []), branch)
    work()
    repo.commit_all(message)


# -- setup ---------------------------------------------------------------------------------------
def test_git_setup_configures_the_clone_once(repo: Repo) -> None:
    driver = repo.git("config", "--get", "merge.maestro-memory.driver").stdout.strip()
    assert driver.endswith("merge-driver %O %A %B %P")
    name = repo.git("config", "--get", "merge.maestro-memory.name").stdout.strip()
    assert name == "Maestro Memory entry-level merge"
    again = run_cli(["git-setup", "-C", str(repo.root), *driver_program_args()])
    assert again.returncode == 0, again.stderr
    attributes = (repo.root / ".gitattributes").read_text().splitlines()
    assert attributes.count(ATTRIBUTE_LINE) == 1
    attr = repo.git("check-attr", "merge", "--", ".maestro/memory/semantic.md").stdout
    assert attr.strip().endswith("merge: maestro-memory")
    assert git_setup_missing(repo.root) is None


def test_git_setup_keeps_existing_attributes(tmp_path: Path) -> None:
    root = tmp_path / "other"
    root.mkdir()
    r = Repo(root)
    r.git("init", "-q")
    (root / ".gitattributes").write_text("*.png binary")  # no final newline
    proc = run_cli(["git-setup", *driver_program_args()], cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (root / ".gitattributes").read_text() == f"*.png binary\n{ATTRIBUTE_LINE}\n"


def test_missing_setup_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "bare-clone"
    root.mkdir()
    Repo(root).git("init", "-q")
    warning = git_setup_missing(root)
    assert warning is not None and "git-setup" in warning and "merge" in warning
    assert git_setup_missing(tmp_path / "not-a-repo-dir") is None
    (tmp_path / "plain").mkdir()
    assert git_setup_missing(tmp_path / "plain") is None  # not in a work tree: nothing to say


# -- merges --------------------------------------------------------------------------------------
def test_both_sides_add_entries(repo: Repo) -> None:
    base = store(repo, "2026-01-01")
    base.save_semantic("Prefers terse commit messages", "user_preference", 0.9)
    base.save_episodic("Set up the repository layout", "sess-base", 0.9)
    repo.commit_all("base memory")

    def ours() -> None:
        s = store(repo, "2026-01-02")
        s.save_semantic("Always run the tests before committing", "quality_rule", 1.0)
        s.save_semantic("Never use default exports", "quality_rule", 1.0)
        s.save_episodic("Wrote the login form", "sess-main", 0.8)

    def theirs() -> None:
        s = store(repo, "2026-01-03")
        s.save_semantic("Supabase Auth chosen over Auth0 for cost", "architecture_decision", 0.9)
        s.save_semantic("Test files must follow *.test.ts naming", "quality_rule", 1.0)
        s.save_episodic("Fixed the rate limiter", "sess-feature", 0.7)

    on_branch(repo, "feature", theirs, "feature memory", create=True)
    on_branch(repo, "main", ours, "main memory")
    code, output = merge(repo, "feature")
    assert code == 0, output
    assert_clean_memory(repo)
    facts = semantic(repo)
    assert set(facts) == {
        "Prefers terse commit messages",
        "Always run the tests before committing",
        "Never use default exports",
        "Supabase Auth chosen over Auth0 for cost",
        "Test files must follow *.test.ts naming",
    }
    assert facts["Test files must follow *.test.ts naming"] == (1.0, "quality_rule")
    texts = [e.text for e in parse("episodic", repo.read("episodic.md")).entries()]
    assert sorted(texts) == [
        "Fixed the rate limiter",
        "Set up the repository layout",
        "Wrote the login form",
    ]
    # The merged memory is usable by the core as it is.
    merged = store(repo, "2026-01-04").read()
    assert merged.problems() == {}
    assert len(merged.semantic_entries()) == 5


def test_one_side_decays_while_the_other_adds(repo: Repo) -> None:
    base = store(repo, "2026-01-01")
    base.save_semantic("Prefers Sonnet for all execution tasks", "user_preference", 0.95)
    base.save_semantic("CI runs on GitHub Actions", "project_context", 0.9)
    base.save_episodic("Decomposed the auth feature into five stories", "sess-0", 0.9)
    repo.commit_all("base memory")

    def theirs() -> None:
        s = store(repo, "2026-01-02")
        s.save_semantic("Main branch is develop, not main", "project_context", 1.0)
        s.save_episodic("Added the refresh token cookie", "sess-f", 0.9)

    def ours() -> None:
        store(repo, "2026-01-03").initialize("sess-main")

    on_branch(repo, "feature", theirs, "feature adds", create=True)
    on_branch(repo, "main", ours, "main decays")

    code, output = merge(repo, "feature")
    assert code == 0, output
    assert_clean_memory(repo)
    facts = semantic(repo)
    assert facts["Prefers Sonnet for all execution tasks"][0] == 0.90  # decayed on main
    assert facts["CI runs on GitHub Actions"][0] == 0.85
    assert facts["Main branch is develop, not main"][0] == 1.0  # added on feature, kept
    episodes = {e.text: e for e in parse("episodic", repo.read("episodic.md")).entries()}
    assert episodes["Decomposed the auth feature into five stories"].salience == 0.8
    assert episodes["Added the refresh token cookie"].salience == 1.0


def test_both_sides_change_the_same_entry(repo: Repo) -> None:
    base = store(repo, "2026-01-01")
    kept = base.save_semantic("Likes terse commit messages", "user_preference", 0.7)
    dated = base.save_semantic(
        "Rate limiting: 10 req/min on public endpoints", "architecture_decision", 0.7
    )
    repo.commit_all("base memory")
    assert kept.entry is not None and dated.entry is not None
    kept_id, dated_id = kept.entry.id, dated.entry.id

    def theirs() -> None:
        store(repo, "2026-01-02").initialize("sess-f")  # every entry decays: 0.65
        # A person edits the visible text and date of one entry; its id rides along.
        path = repo.memory_dir / "semantic.md"
        text = path.read_text()
        path.write_text(
            text.replace(
                "- [2026-01-01] [0.65] Rate limiting: 10 req/min",
                "- [2026-01-09] [0.65] Rate limiting: 20 req/min",
            )
        )

    def ours() -> None:
        s = store(repo, "2026-01-03")
        s.reinforce(kept_id, confirmed=True)  # 0.80
        s.reinforce(dated_id, confirmed=True)  # 0.80, but the date stays 2026-01-01

    on_branch(repo, "feature", theirs, "feature changes", create=True)
    on_branch(repo, "main", ours, "main changes")
    code, output = merge(repo, "feature")
    assert code == 0, output
    assert_clean_memory(repo)
    doc = parse("semantic", repo.read("semantic.md"))
    by_id = {e.id: e for e in doc.entries()}
    assert by_id[kept_id].confidence == 0.8  # same date: the higher confidence wins
    assert by_id[dated_id].text == "Rate limiting: 20 req/min on public endpoints"
    assert by_id[dated_id].date == "2026-01-09"  # the later date wins
    assert len(doc.entries()) == 2


def test_contradiction_across_branches(repo: Repo) -> None:
    store(repo, "2026-01-01").save_semantic(
        "Supabase Auth chosen over Auth0", "architecture_decision", 0.9
    )
    repo.commit_all("base memory")
    on_branch(
        repo,
        "feature",
        saving(repo, "2026-01-03", "JWT with 30min expiry", "architecture_decision", 0.9),
        "30min",
        create=True,
    )
    on_branch(
        repo,
        "main",
        saving(repo, "2026-01-02", "JWT with 15min expiry", "architecture_decision", 1.0),
        "15min",
    )

    code, output = merge(repo, "feature")
    assert code == 0, output
    assert_clean_memory(repo)
    facts = semantic(repo)
    assert facts["JWT with 30min expiry"][0] == 0.9  # the later statement wins
    assert facts["JWT with 15min expiry"][0] == 0.0  # the loser: contradicted
    log = log_lines(repo)
    assert any(
        line.startswith("- [")
        and 'Contradicted (merge): "JWT with 15min expiry"' in line
        and 'by "JWT with 30min expiry"' in line
        for line in log
    ), log
    # The core's next maintenance archives the contradicted entry.
    s = store(repo, "2026-01-04")
    report = s.memory_maintenance()
    assert [p.entry.text for p in report.applied] == ["JWT with 15min expiry"]
    assert "JWT with 15min expiry" not in semantic(repo)
    assert "JWT with 15min expiry" in repo.read("archive.md")


def test_the_same_rule_learned_on_both_branches_is_kept_once(repo: Repo) -> None:
    store(repo, "2026-01-01").save_semantic("Prefers Sonnet for execution", "user_preference", 0.9)
    repo.commit_all("base memory")
    on_branch(
        repo,
        "feature",
        saving(repo, "2026-01-02", "Always run the tests before committing", "quality_rule", 0.9),
        "feature",
        create=True,
    )
    on_branch(
        repo,
        "main",
        saving(repo, "2026-01-02", "always run tests before committing", "quality_rule", 1.0),
        "main",
    )
    code, output = merge(repo, "feature")
    assert code == 0, output
    assert_clean_memory(repo)
    rules = [t for t, (_, cat) in semantic(repo).items() if cat == "quality_rule"]
    assert rules == ["always run tests before committing"]  # the more confident one
    assert any("Merged:" in line and "added on both branches" in line for line in log_lines(repo))


def test_replacement_on_both_branches_merges_the_archive(repo: Repo) -> None:
    store(repo, "2026-01-01").save_semantic(
        "Rate limiting: 10 req/min on public endpoints", "architecture_decision", 0.7
    )
    repo.commit_all("base memory")
    on_branch(
        repo,
        "feature",
        saving(
            repo,
            "2026-01-03",
            "Rate limiting: 30 req/min on public endpoints",
            "architecture_decision",
            0.9,
        ),
        "feature",
        create=True,
    )
    on_branch(
        repo,
        "main",
        saving(
            repo,
            "2026-01-02",
            "Rate limiting: 20 req/min on public endpoints",
            "architecture_decision",
            0.9,
        ),
        "main",
    )
    code, output = merge(repo, "feature")
    assert code == 0, output
    assert_clean_memory(repo)
    facts = semantic(repo)
    assert facts["Rate limiting: 30 req/min on public endpoints"][0] == 0.9
    assert facts["Rate limiting: 20 req/min on public endpoints"][0] == 0.0
    assert "Rate limiting: 10 req/min on public endpoints" not in facts
    archived = parse("archive", repo.read("archive.md")).entries()
    assert [e.text for e in archived] == ["Rate limiting: 10 req/min on public endpoints"]
    assert "merge" not in repo.read("archive.md").lower()  # the driver never adds to it


def test_maintenance_logs_are_united_in_date_order(repo: Repo) -> None:
    base = store(repo, "2026-01-01")
    base.save_semantic("Prefers dark mode in examples", "user_preference", 0.5)
    base.save_semantic("Uses tabs in the Makefile", "project_context", 0.5)
    base.save_semantic("Keep functions short", "quality_rule", 0.9)
    repo.commit_all("base memory")

    def decay_and_remove(day: str, session: str, category: str) -> Callable[[], None]:
        def work() -> None:
            s = store(repo, day)
            for n in range(7):  # 0.50 -> 0.15: flagged for maintenance
                s.initialize(f"{session}-{n}")
            s.memory_maintenance(
                {
                    e.id: "remove"
                    for e in s.semantic_entries()
                    if e.category == category and e.confidence < 0.2
                }
            )

        return work

    on_branch(
        repo,
        "feature",
        decay_and_remove("2026-01-05", "b", "project_context"),
        "feature",
        create=True,
    )
    on_branch(repo, "main", decay_and_remove("2026-01-03", "a", "user_preference"), "main")
    code, output = merge(repo, "feature")
    assert code == 0, output
    assert_clean_memory(repo)
    log = log_lines(repo)
    removed = [line for line in log if "Removed:" in line]
    assert len(removed) == 2, log
    assert removed[0].startswith("- [2026-01-03]") and "dark mode" in removed[0]
    assert removed[1].startswith("- [2026-01-05]") and "tabs" in removed[1]
    dates = [line[3:13] for line in log]
    assert dates == sorted(dates)
    assert len(log) == len(set(log))
    # Both removals are honoured (deleted on one side); the rule both sides decayed alike stays.
    assert set(semantic(repo)) == {"Keep functions short"}
    text = repo.read("semantic.md")
    assert text.rstrip().splitlines()[-len(log) - 1] == "## Maintenance Log"


def test_episodic_cap_holds_after_the_merge(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    s = store(repo, "2026-01-02")
    for n in range(12):
        s.save_episodic(f"Feature step {n}", "sess-f", 0.9)
    repo.commit_all("feature notes")
    repo.git("checkout", "-q", "main")
    s = store(repo, "2026-01-01")
    for n in range(12):
        s.save_episodic(f"Main step {n}", "sess-m", 0.9)
    s.initialize("sess-next")  # main's entries decay to salience 0.8
    repo.commit_all("main notes")
    code, output = merge(repo, "feature")
    assert code == 0, output
    assert_clean_memory(repo)
    entries = parse("episodic", repo.read("episodic.md")).entries()
    assert len(entries) == 20
    # The four lowest (main's decayed, oldest first) went, each logged with its full text.
    log = log_lines(repo, "episodic.md")
    gone = [line for line in log if "Removed (merge):" in line]
    assert len(gone) == 4
    remaining = {e.text for e in entries}
    for line in gone:
        text = line.split('"')[1]
        assert text.startswith("Main step") and text not in remaining
    assert all(f"Feature step {n}" in remaining for n in range(12))


def test_unowned_lines_edited_on_both_sides_conflict(repo: Repo) -> None:
    s = store(repo, "2026-01-01")
    s.save_semantic("Prefers terse commit messages", "user_preference", 0.9)
    path = repo.memory_dir / "semantic.md"
    path.write_text(
        path.read_text().replace(
            "# Semantic Memory\n", "# Semantic Memory\n\nTeam note: review this file monthly.\n"
        )
    )
    repo.commit_all("base memory")

    def edit(note: str, fact: str) -> Callable[[], None]:
        def work() -> None:
            store(repo, "2026-01-02").save_semantic(fact, "quality_rule", 1.0)
            path.write_text(path.read_text().replace("review this file monthly", note))

        return work

    on_branch(
        repo,
        "feature",
        edit("review this file weekly", "Never use default exports"),
        "feature",
        create=True,
    )
    on_branch(repo, "main", edit("review it every sprint", "Always check null relations"), "main")
    code, output = merge(repo, "feature")
    assert code != 0, output
    assert "CONFLICT" in output
    text = path.read_text()
    assert "<<<<<<< " in text and "=======" in text and ">>>>>>> " in text
    assert "Team note: review it every sprint." in text
    assert "Team note: review this file weekly." in text
    # The entries are merged all the same, outside the markers.
    assert text.count("Never use default exports") == 1
    assert text.count("Always check null relations") == 1
    assert text.count("Prefers terse commit messages") == 1


def test_driver_command_exit_codes(tmp_path: Path) -> None:
    """The command itself: 0 and the merge in %A when clean, 1 with markers otherwise."""
    base = "# Semantic Memory\n\nNote: one.\n\n## Quality Rules\n- Keep it simple\n"
    ours = base.replace("- Keep it simple\n", "- Keep it simple\n- Write tests first\n")
    theirs = base.replace("- Keep it simple\n", "- Keep it simple\n- Name things well\n")
    o, a, b = tmp_path / "o", tmp_path / "a", tmp_path / "b"
    o.write_text(base)
    a.write_text(ours)
    b.write_text(theirs)
    proc = run_cli(["merge-driver", str(o), str(a), str(b), ".maestro/memory/semantic.md"])
    assert proc.returncode == 0, proc.stderr
    assert a.read_text() == base.replace(
        "- Keep it simple\n", "- Keep it simple\n- Write tests first\n- Name things well\n"
    )

    a.write_text(ours.replace("Note: one.", "Note: two."))
    b.write_text(theirs.replace("Note: one.", "Note: three."))
    proc = run_cli(["merge-driver", str(o), str(a), str(b)])  # kind from the title line
    assert proc.returncode == 1
    merged = a.read_text()
    assert "<<<<<<< ours\nNote: two.\n=======\nNote: three.\n>>>>>>> theirs\n" in merged
    assert merged.count("- Write tests first") == 1 and merged.count("- Name things well") == 1
