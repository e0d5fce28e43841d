"""The real agent CLIs, run headless against the stand-in model APIs.

Where the CLIs live: ``MAESTRO_E2E_BIN_DIR`` (a folder holding ``claude``, ``codex``,
``gemini``) when set, else the cache folder ``install_clis.sh`` fills:
``${MAESTRO_E2E_CACHE:-~/.cache/maestro-e2e}/<sha256(package.json)[:16]>/node_modules/.bin``.

Each ``*Agent`` owns a temporary HOME (and the CLI's config in it), knows the environment that
keeps the CLI offline and pointed at its stand-in, and runs one headless session with
``run(prompt, *args) -> Run``. ``wire_hooks`` writes the CLI's hooks config by hand, in the
CLI's own format, with whatever trust entries the CLI needs; what each CLI needs is documented
on the method (and in README.md next to this file).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fake_anthropic import FakeAnthropic
from .fake_base import FakeApi, Recorded
from .fake_gemini import FakeGemini
from .fake_openai import FakeOpenAI

HERE = Path(__file__).resolve().parent
PINS = HERE / "package.json"
CAPTURE_HOOK = HERE / "capture_hook.py"
# The hooks' own deadline (0.95 s by default) is a laptop's; on 2 cores shared by a whole test
# run a session-start hook was seen giving up at 0.96 s and the session got no memory. The
# suite widens it (below every CLI's hook timeout) so it tests what reaches the model.
HOOK_DEADLINE = "8"
RUN_TIMEOUT = 180.0  # seconds for one headless run: node start-up and hooks on 2 busy cores
CLIS = ("claude", "codex", "gemini")
MEMORY_BLOCK = re.compile(r"\[Project Memory\].*?\[End Project Memory\]", re.S)
# Host variables that would point a CLI at a real account or config: never passed through.
_FOREIGN = ("ANTHROPIC_", "CLAUDE", "CODEX_", "OPENAI_", "GEMINI_", "GOOGLE_", "VERTEX")


def pins_hash() -> str:
    return hashlib.sha256(PINS.read_bytes()).hexdigest()[:16]


def cache_dir() -> Path:
    root = os.environ.get("MAESTRO_E2E_CACHE") or str(Path.home() / ".cache" / "maestro-e2e")
    return Path(root) / pins_hash()


def bin_dir() -> Path:
    override = os.environ.get("MAESTRO_E2E_BIN_DIR")
    return Path(override) if override else cache_dir() / "node_modules" / ".bin"


def find_cli(name: str) -> tuple[str | None, str]:
    """(the CLI's path, or None and the reason it is not usable)."""
    where = bin_dir()
    path = where / name
    if not path.exists():
        hint = "" if shutil.which("npm") else " (and npm is not installed)"
        return None, f"{name} not found in {where}: run tests/e2e/install_clis.sh{hint}"
    return str(path), ""


def pinned_version(package: str) -> str:
    pins: dict[str, str] = json.loads(PINS.read_text())["dependencies"]
    return pins[package]


def memory_blocks(body: Any) -> list[str]:
    """Every ``[Project Memory] … [End Project Memory]`` block in a request body's strings."""
    return [m.group(0) for s in _strings(body) for m in MEMORY_BLOCK.finditer(s)]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _maestro_home() -> str:
    return os.environ.get("MAESTRO_HOME", "")


INSTALLED_VENV_ENV = "MAESTRO_INSTALLED_VENV"


def installed_python() -> str | None:
    """The interpreter of the copy CI installed from the wheel (``$MAESTRO_INSTALLED_VENV``,
    see tests/packaging), or None when the tests run against this checkout."""
    venv = os.environ.get(INSTALLED_VENV_ENV)
    return str(Path(venv) / "bin" / "python") if venv else None


def maestroctl() -> str:
    """The ``maestroctl`` the agent CLIs' hooks and MCP server call: the installed copy's when CI
    installed the wheel (as on a user's machine), else the one of the Python running the tests."""
    python = installed_python()
    if python:
        installed = Path(python).parent / "maestroctl"
        assert installed.exists(), f"${INSTALLED_VENV_ENV} has no bin/maestroctl: {installed}"
        return str(installed)
    beside = Path(sys.executable).parent / "maestroctl"
    found = str(beside) if beside.exists() else shutil.which("maestroctl")
    assert found, "maestroctl is not installed beside this Python nor on PATH"
    return found


def hook_command(event: str) -> str:
    """Today's hook command (``maestroctl hook claude <event>``), as every CLI runs it."""
    return f"{maestroctl()} hook claude {event}"


@dataclass
class Run:
    """One headless run: what the CLI printed and exited with, and what it asked the model."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[Recorded]  # every request to the stand-in during the run
    model_requests: list[Recorded]  # ... those that asked the model for the turn

    def check(self) -> Run:
        assert self.returncode == 0, (
            f"{self.args[:3]} exited {self.returncode}\nstdout:\n{self.stdout[-3000:]}\n"
            f"stderr:\n{self.stderr[-3000:]}"
        )
        return self

    def hook_log(self) -> str:
        """Why a run may lack memory: the hooks' own log (fail-open hooks are silent)."""
        from maestro_memory.client.integrations.hooks import log_path

        try:
            return log_path().read_text(errors="replace")[-3000:]
        except OSError:
            return "(no hooks.log)"

    def memory(self) -> list[str]:
        """The memory blocks in the model requests of this run (the turn's context)."""
        return [b for r in self.model_requests for b in memory_blocks(r.body)]


@dataclass
class Agent:
    """A CLI with its own HOME, in one project, talking to one stand-in API."""

    binary: str
    home: Path
    project: Path
    api: FakeApi
    extra_env: dict[str, str] = field(default_factory=dict)
    name = "agent"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)}
        env["HOME"] = str(self.home)
        # maestroctl on PATH, as installed on a person's machine: the hooks `integrate claude`
        # writes for a project find it there (they name no path of one machine).
        env["PATH"] = os.pathsep.join([os.path.dirname(maestroctl()), env.get("PATH", "")])
        env.setdefault("MAESTRO_HOOK_DEADLINE", HOOK_DEADLINE)
        env.pop("XDG_CONFIG_HOME", None)
        env.pop("XDG_DATA_HOME", None)
        env.pop("XDG_CACHE_HOME", None)
        env.update(self.cli_env())
        env.update(self.extra_env)
        return env

    def cli_env(self) -> dict[str, str]:
        raise NotImplementedError

    def argv(self, prompt: str, *args: str) -> list[str]:
        raise NotImplementedError

    def run(
        self,
        prompt: str,
        *args: str,
        cwd: Path | None = None,
        timeout: float = RUN_TIMEOUT,
        check: bool = True,
    ) -> Run:
        mark = self.api.mark()
        argv = self.argv(prompt, *args)
        started = time.monotonic()
        done = subprocess.run(
            argv,
            cwd=cwd or self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        seconds = time.monotonic() - started
        run = Run(
            argv,
            done.returncode,
            done.stdout,
            done.stderr,
            seconds,
            self.api.since(mark),
            list(self.api.model_requests(mark)),
        )
        return run.check() if check else run

    def start(self, prompt: str, *args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
        """The same run in the background (for parallel agents); its requests are mixed."""
        return subprocess.Popen(
            self.argv(prompt, *args),
            cwd=cwd or self.project,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )

    def run_parallel(
        self, prompts: list[str], *args: str, timeout: float = RUN_TIMEOUT
    ) -> tuple[list[Run], list[Recorded]]:
        """One headless session per prompt, all at once (parallel agents on one project).
        Returns each session's Run (its ``requests`` empty: they interleave) and every model
        request of the lot."""
        mark = self.api.mark()
        started = time.monotonic()
        procs = [self.start(prompt, *args) for prompt in prompts]
        runs = []
        for proc in procs:
            try:
                out, err = proc.communicate(
                    timeout=max(1.0, timeout - (time.monotonic() - started))
                )
            except subprocess.TimeoutExpired:
                for p in procs:
                    p.kill()
                raise
            runs.append(
                Run(
                    list(map(str, proc.args)),
                    proc.returncode,
                    out,
                    err,
                    time.monotonic() - started,
                    [],
                    [],
                )
            )
        return runs, list(self.api.model_requests(mark))

    def maestroctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``maestroctl ARGS`` in the project, with this agent's HOME (and CODEX_HOME …): what
        a person runs in their shell, e.g. ``integrate codex --trust``."""
        done = subprocess.run(
            [maestroctl(), *args],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        if check:
            assert done.returncode == 0, f"maestroctl {args}: {done.stdout}{done.stderr}"
        return done

    def tool(self, *args: str, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """Any other subcommand of the CLI (``mcp list``, ``plugin validate`` …)."""
        return subprocess.run(
            [self.binary, *args],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


# -------------------------------------------------------------------------------------------
# Claude Code
# -------------------------------------------------------------------------------------------
@dataclass
class ClaudeAgent(Agent):
    """``claude -p``. Offline with ``ANTHROPIC_BASE_URL`` + a dummy ``ANTHROPIC_API_KEY`` +
    ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``: no onboarding, no trust dialog in -p mode
    (2.1.332 writes ~/.claude.json itself); project hooks in ``.claude/settings.json`` run."""

    name = "claude"

    def cli_env(self) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": self.api.url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            # Headless -p starts the first turn without waiting for MCP servers (2.1.332: the
            # "single_shot" hold), so on a loaded machine `maestroctl mcp` was not connected
            # yet and the model's call failed with "No such tool available". Wait for the
            # servers before the first turn (up to 2 min), and give their start as long.
            "CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "120000",
            "MCP_TIMEOUT": "120000",
        }

    def argv(self, prompt: str, *args: str) -> list[str]:
        return [self.binary, "-p", prompt, *args]

    def wire_hooks(self, commands: Mapping[str, str], timeout: int = 10) -> Path:
        """Project hooks by hand: ``{"SessionStart": cmd, …}`` -> ``.claude/settings.json``."""
        path = self.project / ".claude" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        settings = json.loads(path.read_text()) if path.exists() else {}
        hooks = settings.setdefault("hooks", {})
        for event, command in commands.items():
            hooks.setdefault(event, []).append(
                {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
            )
        path.write_text(json.dumps(settings, indent=2))
        return path

    def wire_mcp(self, name: str = "maestro") -> None:
        """``claude mcp add NAME -- maestroctl mcp`` (local scope: ~/.claude.json, under the
        project's path; connects without any approval)."""
        env = [f"--env=MAESTRO_HOME={os.environ['MAESTRO_HOME']}"] if _maestro_home() else []
        done = self.tool("mcp", "add", *env, name, "--", maestroctl(), "mcp")
        assert done.returncode == 0, done.stderr


# -------------------------------------------------------------------------------------------
# Codex CLI
# -------------------------------------------------------------------------------------------
CODEX_EVENTS = {  # hooks.json event name -> the snake_case name in trust keys and hashes
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "Stop": "stop",
    "SessionEnd": "session_end",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
}
CODEX_MATCHER_EVENTS = {"session_start", "pre_tool_use", "post_tool_use", "pre_compact"}
CODEX_DEFAULT_TIMEOUT = 600
CODEX_SESSION_END_MAX_TIMEOUT = 3


def codex_hook_hash(
    event: str,
    command: str,
    timeout: int | None = None,
    matcher: str | None = None,
    status_message: str | None = None,
) -> str:
    """The ``trusted_hash`` Codex 0.171.0 expects for one command hook (checked against
    ``codex app-server``'s ``hooks/list`` by test_codex_trust.py).

    sha256 over the compact, key-sorted JSON of the hook's normalized identity
    ``{"event_name": <snake_case event>, "matcher": <only if set and the event takes one>,
    "hooks": [{"type": "command", "command": …, "timeout": <effective seconds>,
    "async": false, "statusMessage": <only if set>}]}``; the timeout is the effective one
    (600 when unset, SessionEnd clamped to 3)."""
    snake = CODEX_EVENTS.get(event, event)
    effective = CODEX_DEFAULT_TIMEOUT if timeout is None else max(1, timeout)
    if snake == "session_end":
        effective = min(effective, CODEX_SESSION_END_MAX_TIMEOUT)
    handler: dict[str, Any] = {
        "type": "command",
        "command": command,
        "timeout": effective,
        "async": False,
    }
    if status_message is not None:
        handler["statusMessage"] = status_message
    identity: dict[str, Any] = {"event_name": snake, "hooks": [handler]}
    if matcher is not None and snake in CODEX_MATCHER_EVENTS:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


@dataclass
class CodexAgent(Agent):
    """``codex exec``. ``$CODEX_HOME/config.toml`` names a ``[model_providers.standin]`` with
    ``wire_api = "responses"`` and marks the project trusted (``[projects."<abs>"]
    trust_level = "trusted"``), without which a project's ``.codex/`` is not read."""

    name = "codex"
    trust_entries: list[str] = field(default_factory=list)
    mcp_entries: list[str] = field(default_factory=list)

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def cli_env(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.codex_home), "STANDIN_API_KEY": "e2e-dummy"}

    def argv(self, prompt: str, *args: str) -> list[str]:
        return [self.binary, "exec", *args, prompt]

    def write_config(self) -> Path:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        path = self.codex_home / "config.toml"
        path.write_text(
            "\n".join(
                [
                    'model = "gpt-stand-in"',
                    'model_provider = "standin"',
                    "",
                    "[model_providers.standin]",
                    'name = "stand-in"',
                    f"base_url = {toml_str(self.api.url + '/v1')}",
                    'env_key = "STANDIN_API_KEY"',
                    'wire_api = "responses"',
                    "",
                    f"[projects.{toml_str(str(self.project))}]",
                    'trust_level = "trusted"',
                    "",
                    *self.mcp_entries,
                    *self.trust_entries,
                ]
            )
            + "\n"
        )
        return path

    def wire_mcp(self, name: str = "maestro") -> None:
        """``[mcp_servers.NAME]`` in config.toml; ``default_tools_approval_mode = "approve"``
        so ``codex exec`` (no one to ask) may call its tools."""
        self.mcp_entries += [
            f"[mcp_servers.{name}]",
            f"command = {toml_str(maestroctl())}",
            'args = ["mcp"]',
            'default_tools_approval_mode = "approve"',
            # Codex starts MCP servers with a filtered environment (HOME, PATH, LANG …).
            *(
                [f"env = {{ MAESTRO_HOME = {toml_str(_maestro_home())} }}"]
                if _maestro_home()
                else []
            ),
            "",
        ]
        self.write_config()

    def hooks_list(self, timeout: float = 60.0) -> dict[str, Any]:
        """Codex's own view of the hooks for this project: ``codex app-server`` (JSON-RPC 2.0,
        one JSON object per line on stdio), ``initialize`` then ``hooks/list`` with
        ``{"cwds": [project]}``. Each hook has ``key``, ``currentHash``, ``trustStatus``
        ("trusted" | "untrusted" | …), ``timeoutSec``, ``sourcePath``; plus ``warnings``."""
        proc = subprocess.Popen(
            [self.binary, "app-server"],
            cwd=self.project,
            env=self.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        deadline = time.monotonic() + timeout
        buffer = b""

        def call(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            nonlocal buffer
            message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            while True:
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    reply = json.loads(line)
                    if reply.get("id") == id_:
                        assert "result" in reply, reply
                        result: dict[str, Any] = reply["result"]
                        return result
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"codex app-server: no answer to {method} in {timeout}s"
                ready, _, _ = select.select([proc.stdout], [], [], remaining)
                if ready:
                    chunk = os.read(proc.stdout.fileno(), 65536)
                    assert chunk, f"codex app-server exited ({proc.poll()}) before {method}"
                    buffer += chunk

        try:
            call(1, "initialize", {"clientInfo": {"name": "maestro-e2e", "version": "0"}})
            proc.stdin.write(b'{"jsonrpc": "2.0", "method": "initialized"}\n')
            result = call(2, "hooks/list", {"cwds": [str(self.project)]})
            data: dict[str, Any] = result["data"][0]
            return data
        finally:
            proc.kill()
            proc.wait(timeout=30)

    def wire_hooks(
        self, commands: Mapping[str, str], timeout: int = 10, scope: str = "user"
    ) -> Path:
        """``hooks.json`` (Claude Code's shape) in ``$CODEX_HOME`` (``scope="user"``) or
        ``<project>/.codex/``, and one ``[hooks.state."<hooks.json>:<event>:<group>:<handler>"]
        trusted_hash = "sha256:…"`` per hook in config.toml: untrusted hooks are skipped
        without a word."""
        folder = self.codex_home if scope == "user" else self.project / ".codex"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "hooks.json"
        hooks = json.loads(path.read_text())["hooks"] if path.exists() else {}
        for event, command in commands.items():
            groups = hooks.setdefault(event, [])
            groups.append({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
            key = f"{path}:{CODEX_EVENTS[event]}:{len(groups) - 1}:0"
            self.trust_entries += [
                f"[hooks.state.{toml_str(key)}]",
                f"trusted_hash = {toml_str(codex_hook_hash(event, command, timeout))}",
                "",
            ]
        path.write_text(json.dumps({"hooks": hooks}, indent=2))
        self.write_config()
        return path


# -------------------------------------------------------------------------------------------
# Gemini CLI
# -------------------------------------------------------------------------------------------
@dataclass
class GeminiAgent(Agent):
    """``gemini -p``. ``GEMINI_API_KEY`` + ``GOOGLE_GEMINI_BASE_URL``, and
    ``security.auth.selectedType = "gemini-api-key"`` in ~/.gemini/settings.json: with only the
    environment, 0.61.0 picks the auth type "gateway" (because of the base URL) and then
    rejects it ("Invalid auth method selected.", exit 41). The project must be in
    ~/.gemini/trustedFolders.json (``{"<abs>": "TRUST_FOLDER"}``), else exit 55.
    ``GEMINI_CLI_NO_RELAUNCH=true`` keeps it from starting a second node process."""

    name = "gemini"

    @property
    def gemini_dir(self) -> Path:
        return self.home / ".gemini"

    def cli_env(self) -> dict[str, str]:
        return {
            "GEMINI_API_KEY": "e2e-dummy",
            "GOOGLE_GEMINI_BASE_URL": self.api.url,
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "NO_COLOR": "1",
        }

    def argv(self, prompt: str, *args: str) -> list[str]:
        return [self.binary, "-p", prompt, *args]

    def write_config(self, trust: bool = True) -> None:
        self.gemini_dir.mkdir(parents=True, exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (self.gemini_dir / "settings.json").write_text(json.dumps(settings, indent=2))
        if trust:
            trusted = {str(self.project): "TRUST_FOLDER"}
            (self.gemini_dir / "trustedFolders.json").write_text(json.dumps(trusted, indent=2))

    def wire_hooks(self, commands: Mapping[str, str], timeout_ms: int = 10000) -> Path:
        """``<project>/.gemini/settings.json`` ``hooks`` (Claude Code's shape; the timeout is
        in milliseconds). Gemini events: SessionStart, BeforeAgent (has ``prompt``),
        AfterAgent (every turn), SessionEnd."""
        path = self.project / ".gemini" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        settings = json.loads(path.read_text()) if path.exists() else {}
        hooks = settings.setdefault("hooks", {})
        for event, command in commands.items():
            hooks.setdefault(event, []).append(
                {"hooks": [{"type": "command", "command": command, "timeout": timeout_ms}]}
            )
        path.write_text(json.dumps(settings, indent=2))
        return path

    def wire_mcp(self, name: str = "maestro") -> None:
        """``mcpServers.NAME`` in ~/.gemini/settings.json, ``trust: true`` (no confirmation);
        its tools reach the model as ``mcp_NAME_<tool>``."""
        path = self.gemini_dir / "settings.json"
        settings = json.loads(path.read_text())
        settings.setdefault("mcpServers", {})[name] = {
            "command": maestroctl(),
            "args": ["mcp"],
            "trust": True,
            **({"env": {"MAESTRO_HOME": _maestro_home()}} if _maestro_home() else {}),
        }
        path.write_text(json.dumps(settings, indent=2))


AGENTS: dict[str, tuple[type[Agent], type[FakeApi]]] = {
    "claude": (ClaudeAgent, FakeAnthropic),
    "codex": (CodexAgent, FakeOpenAI),
    "gemini": (GeminiAgent, FakeGemini),
}

# Today's maestroctl hooks in each CLI's event names.
CLAUDE_MAESTRO_HOOKS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt",
    "SessionEnd": "session-end",
}
CODEX_MAESTRO_HOOKS = CLAUDE_MAESTRO_HOOKS
GEMINI_MAESTRO_HOOKS = {
    "SessionStart": "session-start",
    "BeforeAgent": "user-prompt",
    "SessionEnd": "session-end",
}
