"""Distil a Claude Code session transcript into one episodic note (pure: lines in, text out).

Claude Code writes a session's transcript as JSON Lines (``transcript_path`` in the hook input):
one record a line, ``type`` saying what it is. The records used here:

* ``{"type": "user", "message": {"content": "the prompt"}}`` — a prompt the person typed (the
  content may also be a list of ``{"type": "text"}`` blocks). ``isMeta`` records, sidechain
  (sub-agent) records, slash-command echoes (``<command-name>…``, ``<local-command-stdout>…``)
  and interruption notices are not the person's task;
* ``{"type": "assistant", "message": {"content": [{"type": "tool_use", "id", "name", "input"}]}}``
  — the tools the agent used: ``Edit``, ``Write``, ``MultiEdit`` (``input.file_path``),
  ``NotebookEdit`` (``input.notebook_path``), ``Bash`` (``input.command``);
* ``{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id",
  "is_error", "content"}]}}`` — a tool's outcome: whether a command failed, and git's
  ``[branch abc1234] subject`` line when it made a commit.

Every other record type (``summary``, ``system``, ``file-history-snapshot``, …), a line that is
not JSON, and a field of an unexpected shape is skipped. The transcript is streamed: a line is
parsed only when a substring test says it can matter, so the large tool results (file
contents) are never decoded; a line longer than ``MAX_LINE`` is skipped. ``should_stop`` lets
the caller bound the time: the digest then says it read only part of the transcript.

The note: the person's task (the first prompt), later prompts that change the subject (their
topic words share nothing with the tasks before), files created or edited, commands run and how
many failed, commits made. No prompt, no note (``None``).

A prompt is quoted in the person's own words (``core/shown.py``, issue 27): what they pasted (a
log, an email, a diff, text to translate …) is never copied into the note, only named by kind
(``Task: Why does the build fail? (pasted: a log, 40 lines)``); the memory's own injected block
is left out too (``core/injected.py``). A file edited outside the project (a tool's own memory
folder such as ``~/.claude/projects/…/memory/``, a temp file) is not one of the project's
"Files edited" — when the project root is known.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .injected import strip_injected
from .lexicon import TRIVIAL_REPLIES
from .shown import split_shown
from .text import content_set

MAX_LINE = 4 * 1024 * 1024  # bytes; a longer line is a giant tool result, never a prompt
MAX_TASKS = 4
TASK_CHARS = 200
MAX_FILES = 12
MAX_FAILED = 3
MAX_COMMITS = 5
COMMAND_CHARS = 80

EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path"}
NOTEBOOK_TOOLS = {"NotebookEdit": "notebook_path"}
_NOT_A_PROMPT = ("<command-", "<local-command-", "<system-reminder>", "[Request interrupted")
_COMMIT = re.compile(r"^\[([^\]\s]+)(?: \([^)]*\))? ([0-9a-f]{7,40})\] (.+)$", re.MULTILINE)
_TOOL_USE_ID = re.compile(rb'"tool_use_id"\s*:\s*"([^"\\]{1,200})"')
_TOOLS = tuple(f'"{name}"'.encode() for name in (*EDIT_TOOLS, *NOTEBOOK_TOOLS, "Bash"))
_IS_ERROR = re.compile(rb'"is_error"\s*:\s*true')


@dataclass
class Digest:
    tasks: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    commands: int = 0
    failed: list[str] = field(default_factory=list)
    failed_count: int = 0
    commits: list[str] = field(default_factory=list)
    partial: bool = False
    _topics: set[str] = field(default_factory=set)
    # Bash tool_use id -> (command, may it commit?), until its result is read.
    _bash: dict[str, tuple[str, bool]] = field(default_factory=dict)

    def note(self) -> str | None:
        """The episodic note, or None when the session had no prompt."""
        if not self.tasks:
            return None
        lines = [f"Task: {self.tasks[0]}"]
        lines += [f"Then: {task}" for task in self.tasks[1:]]
        if self.files:
            shown = ", ".join(self.files[:MAX_FILES])
            more = len(self.files) - MAX_FILES
            lines.append(f"Files edited: {shown}" + (f" (+{more} more)" if more > 0 else ""))
        if self.commands:
            text = f"Commands: {self.commands} run"
            if self.failed_count:
                text += f", {self.failed_count} failed ({'; '.join(self.failed)})"
            lines.append(text)
        if self.commits:
            lines.append("Commits: " + "; ".join(self.commits[:MAX_COMMITS]))
        if self.partial:
            lines.append("(transcript read in part)")
        return "\n".join(lines)


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _prompt_text(content: Any) -> str | None:
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        text = "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    else:
        return None
    text = text.strip()
    if not text or text.startswith(_NOT_A_PROMPT):
        return None
    return text


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _relative(path: str, root: str | None) -> str | None:
    """``path`` relative to the project ``root``; None when it lies outside the project."""
    if root and os.path.isabs(path):
        rel = os.path.relpath(os.path.normpath(path), os.path.normpath(root))
        if rel == ".." or rel.startswith(".." + os.sep):
            return None
        return rel
    return path


def _task_text(prompt: str) -> tuple[str, str]:
    """A prompt as the note quotes it, and the words its subject is judged on: the person's
    own words, and what they pasted named by kind, never copied."""
    split = split_shown(strip_injected(prompt))
    own = split.own
    summary = split.summary()
    if not summary:
        return own, own
    if not own:
        return f"({summary})", ""
    return f"{_clip(own, max(40, TASK_CHARS - len(summary) - 3))} ({summary})", own


class _Reader:
    def __init__(self, root: str | None) -> None:
        self.root = root
        self.digest = Digest()

    def prompt(self, text: str) -> None:
        task, words = _task_text(text)
        if not task:
            return  # nothing of the person's and nothing shown: the memory's own block
        topic = set(content_set(words)) - TRIVIAL_REPLIES
        d = self.digest
        if not d.tasks:
            d.tasks.append(_clip(task, TASK_CHARS))
        elif topic and not (topic & d._topics) and len(d.tasks) < MAX_TASKS:
            d.tasks.append(_clip(task, TASK_CHARS))  # a new subject
        d._topics |= topic

    def tool_use(self, block: dict[str, Any]) -> None:
        name, tool_input, d = block.get("name"), block.get("input"), self.digest
        if not isinstance(name, str) or not isinstance(tool_input, dict):
            return
        key = EDIT_TOOLS.get(name) or NOTEBOOK_TOOLS.get(name)
        if key is not None:
            path = tool_input.get(key)
            if isinstance(path, str) and path:
                rel = _relative(path, self.root)
                if rel is not None and rel not in d.files:
                    d.files.append(rel)
        elif name == "Bash":
            command = tool_input.get("command")
            if isinstance(command, str) and command.strip():
                d.commands += 1
                tool_id = block.get("id")
                if isinstance(tool_id, str):
                    commits = "git" in command and "commit" in command
                    d._bash[tool_id] = (_clip(command, COMMAND_CHARS), commits)

    def failed(self, command: str) -> None:
        self.digest.failed_count += 1
        if len(self.digest.failed) < MAX_FAILED:
            self.digest.failed.append(command)

    def tool_result(self, block: dict[str, Any]) -> None:
        d = self.digest
        pending = d._bash.pop(str(block.get("tool_use_id")), None)
        if pending is None:
            return
        if block.get("is_error") is True:
            self.failed(pending[0])
            return
        for _branch, sha, subject in _COMMIT.findall(_result_text(block.get("content"))):
            entry = f"{sha[:7]} {_clip(subject, 100)}"
            if entry not in d.commits:
                d.commits.append(entry)

    def record(self, data: Any) -> None:
        if not isinstance(data, dict) or data.get("isSidechain") is True:
            return
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        kind = data.get("type")
        if kind == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    self.tool_use(block)
        elif kind == "user":
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        self.tool_result(block)
            if data.get("isMeta") is not True:
                text = _prompt_text(content)
                if text is not None:
                    self.prompt(text)

    def wanted(self, line: bytes) -> bool:
        """Must this line be decoded? (Substring tests, so most lines never are.)"""
        if b'"tool_result"' in line:
            if line.count(b'"tool_use_id"') > 1:
                return True  # several results in one message (parallel tool calls)
            match = _TOOL_USE_ID.search(line)
            if match is None:
                return False
            tool_id = match.group(1).decode(errors="replace")
            pending = self.digest._bash.get(tool_id)
            if pending is None or pending[1]:
                return pending is not None  # a command that may commit: read its output
            # Any other command: only whether it failed matters, which the bytes tell.
            del self.digest._bash[tool_id]
            if _IS_ERROR.search(line):
                self.failed(pending[0])
            return False
        if b'"tool_use"' in line:
            return any(tool in line for tool in _TOOLS)
        return b'"user"' in line


def distil(
    lines: Iterable[bytes],
    project_root: str | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> Digest:
    """Read transcript lines (bytes, as from a file opened ``"rb"``) into a ``Digest``."""
    reader = _Reader(project_root)
    for n, line in enumerate(lines):
        if should_stop is not None and n and n % 256 == 0 and should_stop():
            reader.digest.partial = True
            break
        if len(line) > MAX_LINE or not reader.wanted(line):
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            continue
        reader.record(data)
    return reader.digest
