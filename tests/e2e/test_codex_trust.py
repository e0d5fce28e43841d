"""Codex runs a hook only when ``config.toml`` holds its ``trusted_hash``; ``codex_hook_hash``
computes it the way Codex 0.171.0 does, checked here against Codex's own ``hooks/list``
(``codex app-server``) -- the reference ``integrate codex --trust`` can build on."""

from __future__ import annotations

import json
from pathlib import Path

from .agents import CodexAgent, codex_hook_hash, hook_command


def test_computed_trust_hashes_match_codex_hooks_list(codex: CodexAgent) -> None:
    user_hooks = codex.codex_home / "hooks.json"
    project_hooks = codex.project / ".codex" / "hooks.json"
    project_hooks.parent.mkdir()
    # Shapes that change the hash: a matcher (SessionStart uses it, UserPromptSubmit ignores
    # it), no timeout (600 s), SessionEnd's timeout (clamped to 3 s), a statusMessage.
    user_hooks.write_text(
        json.dumps(
            {
                "hooks": {
                    "SessionStart": [
                        {
                            "matcher": "startup|resume",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": hook_command("session-start"),
                                    "timeout": 10,
                                }
                            ],
                        }
                    ],
                    "UserPromptSubmit": [
                        {
                            "matcher": "ignored",
                            "hooks": [{"type": "command", "command": hook_command("user-prompt")}],
                        }
                    ],
                    "SessionEnd": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": hook_command("session-end"),
                                    "timeout": 30,
                                }
                            ]
                        }
                    ],
                }
            }
        )
    )
    project_hooks.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "true",
                                    "timeout": 5,
                                    "statusMessage": "saving memory",
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    expected = {
        f"{user_hooks}:session_start:0:0": codex_hook_hash(
            "SessionStart", hook_command("session-start"), 10, matcher="startup|resume"
        ),
        f"{user_hooks}:user_prompt_submit:0:0": codex_hook_hash(
            "UserPromptSubmit", hook_command("user-prompt"), None, matcher="ignored"
        ),
        f"{user_hooks}:session_end:0:0": codex_hook_hash(
            "SessionEnd", hook_command("session-end"), 30
        ),
        f"{project_hooks}:stop:0:0": codex_hook_hash(
            "Stop", "true", 5, status_message="saving memory"
        ),
    }

    listed = {h["key"]: h for h in codex.hooks_list()["hooks"]}

    assert {k: listed[k]["currentHash"] for k in expected} == expected
    assert all(listed[k]["trustStatus"] == "untrusted" for k in expected)
    assert listed[f"{user_hooks}:session_end:0:0"]["timeoutSec"] == 3

    # Written as trust entries, Codex reports them trusted.
    codex.trust_entries += [
        line
        for key, digest in expected.items()
        for line in (f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(digest)}")
    ]
    codex.write_config()
    relisted = {h["key"]: h["trustStatus"] for h in codex.hooks_list()["hooks"]}
    assert {k: relisted[k] for k in expected} == dict.fromkeys(expected, "trusted")


def test_a_hook_nobody_trusted_is_skipped_silently(codex: CodexAgent, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (codex.codex_home / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "SessionStart": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]
                }
            }
        )
    )
    run = codex.run("hello")
    assert not marker.exists()
    # Nothing tells the person: no "hook: SessionStart" line (printed when a hook runs), no
    # word about trust.
    said = run.stderr.replace(str(tmp_path), "<tmp>")
    assert "hook: SessionStart" not in said
    assert "trust" not in said.lower(), said
