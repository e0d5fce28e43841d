"""Issue 20 with the real Claude Code: its model saves a memory the way Claude Code's prompt
tells it to (the ``# Memory`` section of the system prompt: a file with frontmatter, then a
pointer line in ``MEMORY.md``, both with the ``Write`` tool), and Maestro Memory takes it in:
with its source, screened, once, and not served back to Claude Code a second time."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from maestrod_testkit import DaemonFactory, wait_for

from maestro_memory.core.toolmem import claude_project_key

from .agents import ClaudeAgent, GeminiAgent, maestroctl
from .conftest import run_maestroctl
from .fake_base import ToolCall

FACT = "Always run the database migrations with the dry-run flag first"


def memory_dir(claude: ClaudeAgent) -> Path:
    key = claude_project_key(os.path.realpath(claude.project))
    return claude.home / ".claude" / "projects" / key / "memory"


def memory_file(name: str, fact: str, kind: str = "feedback") -> str:
    return (
        f"---\nname: {name}\ndescription: {fact[:40]}\nmetadata:\n  type: {kind}\n---\n\n"
        f"{fact}\n\n**Why:** the user said so.\n**How to apply:** every time.\n"
    )


def script_save(claude: ClaudeAgent, marker: str, name: str, fact: str) -> Path:
    """The model's answer to ``marker``: the two Write calls Claude Code's prompt asks for."""
    folder = memory_dir(claude)
    target = folder / f"{name}.md"
    index = f"- [{name}]({name}.md) — {fact[:30]}\n"
    claude.api.script.on(
        marker,
        ToolCall("Write", {"file_path": str(target), "content": memory_file(name, fact)}),
        ToolCall("Write", {"file_path": str(folder / "MEMORY.md"), "content": index}),
    )
    return target


def maestro(claude: ClaudeAgent, *args: str) -> dict[str, object]:
    """``maestroctl … --json`` as the person whose HOME Claude Code uses."""
    done = subprocess.run(
        [maestroctl(), "-C", str(claude.project), *args, "--json"],
        env={**os.environ, "HOME": str(claude.home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, object] = json.loads(done.stdout)["result"]
    return result


def test_a_memory_claude_code_saves_is_imported_once_and_not_served_back_twice(
    claude: ClaudeAgent, maestro_project: Path
) -> None:
    first = claude.run("SAVE-MIGRATIONS remember this", "--permission-mode", "acceptEdits")
    system = json.dumps(first.model_requests[0].body.get("system"))
    assert str(memory_dir(claude)) in system  # where Claude Code tells its model to write
    assert "frontmatter" in system and "MEMORY.md" in system
    target = script_save(claude, "SAVE-MIGRATIONS", "migrations-dry-run", FACT)
    claude.run("SAVE-MIGRATIONS remember this", "--permission-mode", "acceptEdits")
    assert FACT in target.read_text()
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in memory_dir(claude).iterdir()}

    result = maestro(claude, "import", "claude")
    assert [i["src"] for i in result["imported"]] == ["claude:migrations-dry-run.md"]  # type: ignore[index]
    semantic = (maestro_project / ".maestro" / "memory" / "semantic.md").read_text()
    line = next(x for x in semantic.splitlines() if FACT in x)
    assert "src=claude:migrations-dry-run.md" in line and "[0.70]" in line
    assert maestro(claude, "import")["unchanged"] == 1  # twice: still one entry
    assert semantic.count(FACT) == 1

    # Another tool's context has it (0.70: the medium band, so for a task it is relevant to).
    context = maestro(claude, "context", "--task", "run the database migrations", "--for", "gemini")
    assert FACT in str(context["context"])

    # Claude Code's own next request: its index once, our block without the fact.
    run_maestroctl("-C", str(maestro_project), "integrate", "claude")
    run_maestroctl("-C", str(maestro_project), "save-semantic", "Use pnpm", "--confidence", "1.0")
    nxt = claude.run("Plan the next migration.")
    blocks = nxt.memory()
    assert blocks and any("Use pnpm" in b for b in blocks), nxt.hook_log()
    assert not any(FACT in b for b in blocks)
    request = json.dumps(nxt.model_requests[0].body)
    assert request.count("migrations-dry-run.md") == 1  # Claude Code's own index line
    assert request.count(FACT) == 0  # the fact's file is not sent; our copy is left out
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in memory_dir(claude).iterdir()}
    assert after == before  # we never wrote into Claude Code's folder

    # The model deletes the memory: the entry is flagged for review, not removed.
    target.unlink()
    flagged = maestro(claude, "import")["flagged"]
    assert [f["src"] for f in flagged] == ["claude:migrations-dry-run.md"]  # type: ignore[index]
    entries = maestro(claude, "entries")["entries"]
    assert [e["state"] for e in entries if e["text"] == FACT] == ["flagged"]  # type: ignore[index]


def test_a_fact_claude_codes_model_saved_reaches_the_next_gemini_session(
    claude: ClaudeAgent, gemini: GeminiAgent, maestro_project: Path
) -> None:
    script_save(claude, "SAVE-MIGRATIONS", "migrations-dry-run", FACT)
    claude.run("SAVE-MIGRATIONS remember this", "--permission-mode", "acceptEdits")
    assert maestro(claude, "import", "claude")["imported"]
    gemini.maestroctl("integrate", "gemini", "--trust")
    # 0.70, the medium band: the prompt hook (BeforeAgent) brings it for a task it fits.
    run = gemini.run("Run the database migrations for the release.")
    assert any(FACT in b for b in run.memory()), (
        f"not in Gemini's request; hooks.log:\n{run.hook_log()}\n{run.stderr[-2000:]}"
    )


def test_a_memory_holding_a_credential_is_reported_not_copied(
    claude: ClaudeAgent, maestro_project: Path
) -> None:
    secret = "The staging deploy key is AKIAIOSFODNN7EXAMPLE"
    script_save(claude, "SAVE-KEY", "staging-key", secret)
    claude.run("SAVE-KEY remember it", "--permission-mode", "acceptEdits")
    result = maestro(claude, "import")
    assert [b["src"] for b in result["blocked"]] == ["claude:staging-key.md"]  # type: ignore[index]
    assert result["imported"] == []
    assert "AKIA" not in (maestro_project / ".maestro" / "memory" / "semantic.md").read_text()


PARALLEL = (
    "The billing service talks to Stripe through a queue",
    "Release tags follow calendar versioning",
    "Staging databases are reset every Monday morning",
    "The mobile app ships through Fastlane lanes",
)


def test_parallel_sessions_each_saving_a_memory_all_reach_this_memory(
    claude: ClaudeAgent, git_project: Path, daemon_factory: DaemonFactory
) -> None:
    # maestrod runs as the person Claude Code runs as (same HOME): it watches the memory
    # folder, which does not exist yet, and imports as the sessions write.
    daemon_factory(env={"HOME": str(claude.home)})
    run_maestroctl("-C", str(git_project), "init")
    run_maestroctl("-C", str(git_project), "register")
    for i, fact in enumerate(PARALLEL):
        script_save(claude, f"SAVE-{i}-NOW", f"fact-{i}", fact)
    runs, _ = claude.run_parallel(
        [f"SAVE-{i}-NOW remember" for i in range(len(PARALLEL))],
        "--permission-mode",
        "acceptEdits",
    )
    for run in runs:
        run.check()
    files = sorted(p.name for p in memory_dir(claude).glob("fact-*.md"))
    index = (memory_dir(claude) / "MEMORY.md").read_text()
    kept = sum(1 for line in index.splitlines() if line.startswith("- ["))
    semantic = git_project / ".maestro" / "memory" / "semantic.md"

    def imported() -> list[str]:
        return [x for x in semantic.read_text().splitlines() if "src=claude:fact-" in x]

    lines = wait_for(lambda: len(imported()) == len(PARALLEL) and imported(), 30.0)
    print(
        f"parallel sessions: {len(PARALLEL)}; memory files written {len(files)}; "
        f"Claude Code's index kept {kept}; reached semantic.md {len(lines)}"
    )
    assert len(files) == len(PARALLEL)
    assert kept < len(PARALLEL)  # each session's Write replaced the index: lines are lost there
    assert all(any(fact in x for x in lines) for fact in PARALLEL)  # ... and none here
    assert maestro(claude, "import")["unchanged"] == len(PARALLEL)  # nothing left to take in
