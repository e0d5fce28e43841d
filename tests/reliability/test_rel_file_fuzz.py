"""File fuzz: hypothesis-generated memory files (CRLF and mixed line endings, a BOM, control
characters, huge and pathological lines, duplicate headings, broken episodic headers, invalid
numbers, broken metadata comments, bytes that are not UTF-8, a garbage ``.state.json``).

* core: loading never raises past the API and takes linear time; every file renders back
  byte-for-byte; a write keeps every line it does not own, in order, byte-for-byte;
* the line patterns that replaced the original regular expressions (which were quadratic on
  long runs of spaces or ``#``) agree with those expressions on every input;
* daemon: with such files in a registered project it stays up, reports exactly the core's
  parse problems in ``status``, serves entries equal to the files (undecodable bytes included)
  and a write through it keeps the unowned content.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maestrod_testkit import DaemonHandle, spawn_daemon, wait_ready
from reliability_kit import LONG, disk_entry_view, entry_view

from maestro_memory.common import paths as daemon_paths
from maestro_memory.common.limits import MEMORY_FILE_MAX_BYTES, SAVE_MAX_BYTES
from maestro_memory.core import MemoryStore, markdown
from maestro_memory.core.markdown import parse, split_lines
from maestro_memory.core.model import TooLarge

HEADINGS = [
    "# Semantic Memory",
    "## User Preferences",
    "## Architecture Decisions",
    "## Quality Rules",
    "## Project Context",
    "## Maintenance Log",
    "## Entries",
    "## Archived",
    "##Quality Rules",
    "## Quality Rules ##",
    "###",
    "####### x",
    "## quality rules",
    "  ## Quality Rules",
]
FIXED = [
    "",
    " ",
    "\t",
    "- [2026-01-02] [0.80] Always run the linter <!-- mm:id=s-0a1b2c3d o=0.80 u=0 -->",
    "- Never push on Fridays",
    "* Prefer small commits",
    "-[2026-01-01] No date space",
    "- [date] [0.50] Placeholder date",
    "- [2026-01-01] [1.5] Too confident",
    "- [2026-01-01] [abc] Not a number",
    "- [2026-01-01] [-0.1] Negative",
    "- [2026-01-01] [0.5.5] Two dots",
    "- [2026-01-01] [1e3] Exponent",
    "- [] empty",
    "- [2026-01-01] [0.90] dup <!-- mm:id=s-0a1b2c3d -->",
    "- x <!-- mm:id=zzz o=abc u=-1 r=x -->",
    "- x <!-- mm:id=s-12345678 tomb=oops -->",
    "- x <!-- not ours -->",
    "- x <!-- mm:",
    "- x -->",
    "<!-- mm:id=s-1 -->",
    "### [salience: 0.512] [confidence: 0.461] [2026-12-02] [s1] <!-- mm:id=e-0a1b2c3d o=0.9 -->",
    "### [salience: 1.0] [confidence: 0.70] [2026-12-02]",
    "### [salience: x] [confidence: 0.5] [2026-01-01] [s]",
    "### [salience: 0.5] [confidence: 1.5] [2026-01-01] [s]",
    "### [salience: 0.5]",
    "### [salience: 0.5] [confidence: 0.5] [d] [s] trailing",
    "\\# escaped body",
    "# not a section",
    "```",
    "  indented archive note",
    "- [2026-01-01] [0.40] Archived rule <!-- mm:id=s-9a8b7c6d o=0.95 cat=quality_rule "
    "tomb=0.90 -->",
    '2026-01-01: Removed "old" (why)',
    "\x00nul",
    "\x1b[31mred\x1b[0m",
    "\x0b\x0c\x1c\x1d",
    "\u2028line sep\u2029",
    "\x85next line",
    "lone\rcarriage",
    "\ufeffinner bom",
    "é ü ß 漢字 🙂",
]
PATHOLOGICAL = [  # each was slow (quadratic) with the original patterns at this size
    lambda n: "- x" + " " * n + "y",
    lambda n: "-" + " \t" * (n // 2) + "x",
    lambda n: "- x " + "<!-- mm:" * (n // 8),
    lambda n: "- x <!-- mm:" + " " * n + "x -->",
    lambda n: "### [salience: " + " " * n,
    lambda n: "### [salience: 1] [confidence: 1] [d]" + " " * n + "x",
    lambda n: "## " + " " * (n // 2) + "#" * (n // 2) + " x",
    lambda n: "- [" + "[" * n,
    lambda n: "- " + "y" * n,
]
CONTROL = st.characters(min_codepoint=0, max_codepoint=0x1F) | st.sampled_from(
    ["\x7f", "\x85", "\u2028", "\ufeff", "\ud800", "\udcff"]
)


def entry_line(draw: Any) -> str:
    date = draw(st.sampled_from(["2026-01-02", "1999-13-45", "date", "", "2026-1-1"]))
    conf = draw(st.sampled_from(["0.50", "1.00", "0.0", "1", "1.5", "abc", "", ".5", "0.999"]))
    text = draw(st.text(max_size=30))
    meta = draw(
        st.sampled_from(
            [
                "",
                " <!-- mm:id=s-0a1b2c3d o=0.80 u=0 -->",
                " <!-- mm:id=e-00000000 -->",
                " <!-- mm:o=x u=y -->",
            ]
        )
    )
    parts = ["-"] + ([f"[{date}]"] if date else []) + ([f"[{conf}]"] if conf else [])
    return " ".join(parts) + " " + text + meta


def episode_header(draw: Any) -> str:
    sal = draw(st.sampled_from(["1.0", "0.512", "2", "x", "", "-1", "0.1"]))
    conf = draw(st.sampled_from(["0.70", "1.00", "1.01", "y", "0"]))
    sid = draw(st.sampled_from(["", " [s1]", " [a b]", " [", " [s]]"]))
    return f"### [salience: {sal}] [confidence: {conf}] [2026-12-02]{sid}"


@st.composite
def memory_file(draw: Any, big: bool = True) -> bytes:
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 40))):
        choice = draw(st.integers(0, 9 if big else 8))
        if choice <= 1:
            lines.append(draw(st.sampled_from(HEADINGS)))
        elif choice <= 3:
            lines.append(draw(st.sampled_from(FIXED)))
        elif choice == 4:
            lines.append(entry_line(draw))
        elif choice == 5:
            lines.append(episode_header(draw))
        elif choice == 6:
            lines.append(draw(st.text(alphabet=CONTROL | st.characters(), max_size=40)))
        elif choice in (7, 8):
            lines.append(draw(st.text(max_size=80)))
        else:
            make = draw(st.sampled_from(PATHOLOGICAL))
            lines.append(make(draw(st.sampled_from([1000, 50_000, 200_000]))))
    newline = draw(st.sampled_from(["\n", "\r\n", "mixed"]))
    out = []
    for line in lines:
        nl = draw(st.sampled_from(["\n", "\r\n"])) if newline == "mixed" else newline
        out.append(line.replace("\n", " ") + nl)
    text = "".join(out)
    if out and draw(st.booleans()):
        text = text.rstrip("\r\n")  # no newline at the end
    if draw(st.integers(0, 4)) == 0:
        text = "\ufeff" + text
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 3)) == 0:  # bytes that are not UTF-8, somewhere
        junk = draw(st.binary(min_size=1, max_size=8).filter(_not_utf8))
        at = draw(st.integers(0, len(data)))
        data = data[:at] + junk + data[at:]
    return data


def _not_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


STATE = st.sampled_from(
    [
        None,
        b"",
        b"{}",
        b'{"v": 1, "sessions": {"s1": "2026-01-01"}}',
        b"[1, 2]",
        b'"x"',
        b'{"sessions": []}',
        b'{"sessions": {"a": {"b": [1]}}}',
        b"\xff\xfe",
        b"{" * 5000,
        b"[" * 100_000,
        b'{"sessions": ' + b"[" * 100 + b"]" * 100 + b"}",
        b"nan",
        b"1e99999",
    ]
)


def write_files(root: Path, files: dict[str, bytes | None]) -> Path:
    d = root / ".maestro" / "memory"
    d.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        if data is not None:
            (d / name).write_bytes(data)
    return d


def decoded(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def bare_lines(text: str) -> list[str]:
    return [markdown._strip_eol(x) for x in split_lines(text.removeprefix("\ufeff"))]


def is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def assert_kept(before: bytes, after: bytes, where: str) -> None:
    """Every line of ``before`` is in ``after``, in order, unchanged (only insertions)."""
    old, new = bare_lines(decoded(before)), bare_lines(decoded(after))
    assert is_subsequence(old, new), f"{where}: a line the tool does not own was changed"
    assert before.startswith(b"\xef\xbb\xbf") == after.startswith(b"\xef\xbb\xbf")


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="mm-fuzz-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- core ------------------------------------------------------------------------------------
@settings(
    max_examples=3000 if LONG else 300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(semantic=memory_file(), episodic=memory_file(), archive=memory_file(), state=STATE)
def test_core_survives_any_file(
    semantic: bytes, episodic: bytes, archive: bytes, state: bytes | None
) -> None:
    files = {
        "semantic.md": semantic,
        "episodic.md": episodic,
        "archive.md": archive,
        ".state.json": state,
    }
    with scratch() as root:
        d = write_files(root, files)
        store = MemoryStore(root, clock=lambda: "2026-12-02")
        started = time.monotonic()
        if any(len(b or b"") > MEMORY_FILE_MAX_BYTES for b in files.values()):
            with pytest.raises(TooLarge):  # refused whole, with the limit named (file cap)
                store.read()
            for name, data in files.items():
                assert (d / name).read_bytes() == data if data is not None else True
            return
        memory = store.read()  # never raises under the size limit
        problems = memory.problems()
        assert all(
            isinstance(v, list) and all(isinstance(m, str) for m in v) for v in problems.values()
        )
        for kind, name in (
            ("semantic", "semantic.md"),
            ("episodic", "episodic.md"),
            ("archive", "archive.md"),
        ):
            text = decoded(files[name] or b"")
            assert parse(kind, text).render() == text, f"{name} does not round-trip"  # type: ignore[arg-type]
        entries = [
            *memory.semantic_entries(),
            *memory.episodic_entries(),
            *memory.archived_entries(),
        ]
        assert all(e.to_dict()["id"] for e in entries)
        memory.build_context(task="fix the parser", query="zzz", max_tokens=2000)
        memory.view().summary()
        # A hang guard, not a speed test: quadratic work on these inputs takes hours.
        assert time.monotonic() - started < 120, "parsing is not linear"

        episodes_before = len(memory.episodic_entries())
        if len(semantic) > SAVE_MAX_BYTES * 0.99 or len(episodic) > SAVE_MAX_BYTES * 0.99:
            return  # a full file refuses new memories (tests/security/test_sec_file_cap.py)
        result = store.save_semantic("fuzzqa fuzzqb fuzzqc", "quality_rule", 0.9)
        assert result.action == "added"
        after = (d / "semantic.md").read_bytes()
        assert_kept(semantic, after, "semantic.md")
        assert (d / "episodic.md").read_bytes() == episodic
        assert (d / "archive.md").read_bytes() == archive
        assert "fuzzqa fuzzqb fuzzqc" in [e.text for e in store.semantic_entries()]
        store.save_episodic("fuzzqd fuzzqe", "fz", 0.9)
        if episodes_before < 19:  # else the cap prunes (and logs) an old episode
            assert_kept(episodic, (d / "episodic.md").read_bytes(), "episodic.md")
        assert store.read().problems().keys() <= {*problems.keys(), "semantic.md"}


# -- the linear line patterns == the original regular expressions ----------------------------
OLD_META = re.compile(r"\s*<!--\s*mm:(?P<meta>[^>]*?)\s*-->\s*$")
OLD_SEMANTIC = re.compile(
    r"^\s*[-*]\s*(?:\[(?P<date>\d{4}-\d{2}-\d{2}|date)\]\s*)?"
    r"(?:\[(?P<conf>[^\]\s]*)\]\s*)?(?P<text>.*?)\s*$"
)
OLD_EPISODIC = re.compile(
    r"^###\s*\[salience:\s*(?P<sal>[^\]]*)\]\s*\[confidence:\s*(?P<conf>[^\]]*)\]\s*"
    r"\[(?P<date>[^\]]*)\]\s*(?:\[(?P<sid>[^\]]*)\])?\s*$"
)
OLD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
PIECES = st.sampled_from(
    [
        "<!--",
        "-->",
        "mm:",
        "<!-- mm:",
        " ",
        "\t",
        "\u3000",
        "\x1c",
        "#",
        "##",
        "- ",
        "-",
        "*",
        "[",
        "]",
        ">",
        "a",
        "id=s-1",
        "[2026-01-01]",
        "[0.5]",
        "[date]",
        "### ",
        "[salience: 1]",
        "[confidence: 0.5]",
        "[s1]",
        "\r",
        "\x85",
        "x y",
    ]
)
LINES = st.lists(PIECES, max_size=12).map("".join)


@settings(max_examples=20_000 if LONG else 3000, deadline=None)
@given(line=LINES)
def test_line_patterns_agree_with_the_original_expressions(line: str) -> None:
    old = OLD_META.search(line)
    text, meta = markdown._split_meta(line)
    assert (text, meta) == (
        (line[: old.start()], markdown.parse_meta(old.group("meta"))) if old else (line, {})
    )
    old_h = OLD_HEADING.match(line)
    assert markdown._heading(line) == ((len(old_h.group(1)), old_h.group(2)) if old_h else None)
    for old_re, new_re, subject in (
        (OLD_SEMANTIC, markdown._SEMANTIC, text),
        (OLD_EPISODIC, markdown._EPISODIC, text.rstrip()),
    ):
        a, b = old_re.match(subject), new_re.match(subject.rstrip())
        assert (a is None) == (b is None), subject
        if a is not None and b is not None:
            assert a.groupdict() == b.groupdict(), subject


@pytest.mark.parametrize("make", PATHOLOGICAL)
def test_a_megabyte_line_parses_in_linear_time(make: Any) -> None:
    line = make(1_000_000)
    started = time.monotonic()
    for kind, section in (
        ("semantic", "## Quality Rules\n"),
        ("episodic", "## Entries\n"),
        ("archive", "## Archived\n"),
    ):
        doc = parse(kind, section + line + "\n")  # type: ignore[arg-type]
        assert doc.render() == section + line + "\n"
    # A hang guard, not a speed test: quadratic work on a megabyte line takes hours.
    assert time.monotonic() - started < 120


# -- the daemon ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fuzz_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonHandle]:
    home = Path(tempfile.mkdtemp(prefix="mm-ff-", dir="/tmp")) / "h"
    proc, stderr_path, env = spawn_daemon(home)
    handle = DaemonHandle(
        home=home,
        paths=daemon_paths.resolve({"MAESTRO_HOME": str(home)}),
        proc=proc,
        env=env,
        stderr_path=stderr_path,
    )
    try:
        wait_ready(handle)
        yield handle
    finally:
        code = handle.stop()
        shutil.rmtree(home.parent, ignore_errors=True)
        assert code == 0


@settings(
    max_examples=40 if LONG else 8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(semantic=memory_file(), episodic=memory_file(big=False), state=STATE)
def test_daemon_with_fuzzed_files(
    fuzz_daemon: DaemonHandle,
    tmp_path_factory: pytest.TempPathFactory,
    semantic: bytes,
    episodic: bytes,
    state: bytes | None,
) -> None:
    daemon = fuzz_daemon
    root = tmp_path_factory.mktemp("ffproj")
    d = write_files(root, {"semantic.md": semantic, "episodic.md": episodic, ".state.json": state})
    try:
        daemon.register(root)
        status = daemon.status()["projects"][str(root)]
        if max(len(semantic), len(episodic)) > MEMORY_FILE_MAX_BYTES:  # refused whole
            assert "at most" in str(status["read_error"]), status
            assert daemon.send("entries", root, {})["error"]["code"] == "too_large"
            assert (d / "semantic.md").read_bytes() == semantic
            return
        if max(len(semantic), len(episodic)) > SAVE_MAX_BYTES * 0.99:
            return  # full: refuses new memories (tests/security/test_sec_file_cap.py)
        expected = MemoryStore(root).read().problems()
        assert status["read_error"] is None
        assert status["problems"] == expected  # the same report, nothing swallowed
        assert entry_view(daemon.result("entries", root)["entries"]) == disk_entry_view(root)
        daemon.result("build_context", root, task="fix the parser", max_tokens=3000)
        saved = daemon.result(
            "save_semantic",
            root,
            fact="fuzzda fuzzdb fuzzdc",
            category="quality_rule",
            confidence=0.9,
        )
        assert saved["action"] == "added"
        assert_kept(semantic, (d / "semantic.md").read_bytes(), "semantic.md via the daemon")
        assert (d / "episodic.md").read_bytes() == episodic
        assert entry_view(daemon.result("entries", root)["entries"]) == disk_entry_view(root)
        assert daemon.result("ping")["pong"]
    finally:
        with contextlib.suppress(Exception):
            daemon.result("unregister", path=str(root))
        shutil.rmtree(root, ignore_errors=True)
    assert daemon.proc.poll() is None and os.path.isdir(daemon.paths.runtime_dir)
