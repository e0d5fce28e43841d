"""Protocol fuzz: 10,000 malformed frames from several concurrent DEALER clients.

Frames: random bytes, truncated and invalid JSON, deep nesting, a wrong type in every envelope
field and in every argument of the memory ops, huge strings just under and over the 1 MiB
limit (over it: ``too_large``) and past the 16 MiB receive ceiling, unknown ops and versions,
project paths that escape through ``..`` or a symlink or contain NUL, lone surrogates, and
multi-part messages. Each one gets a coded error reply (a code of ``protocol.ERROR_CODES``,
never ``internal``: malformed input is not a daemon bug), with its id echoed when it had a
readable one, or, past the receive ceiling, is dropped with the connection. Meanwhile a
well-formed client saves facts and reads them back: every answer it gets is correct. At the
end the daemon is alive, and status counts exactly the failures sent.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
from maestrod_testkit import DaemonHandle
from reliability_kit import LONG, disk_state
from zmq.utils.monitor import recv_monitor_message

from maestro_memory.common.limits import RECEIVE_MAX_BYTES
from maestro_memory.common.protocol import ERROR_CODES, MAX_MESSAGE_BYTES

FRAMES = 50_000 if LONG else 10_000
FUZZERS = 4
REPLY_TIMEOUT_MS = 15_000
KNOWN_OPS = (
    "hello",
    "ping",
    "status",
    "register",
    "unregister",
    "projects",
    "initialize",
    "build_context",
    "save_semantic",
    "save_episodic",
    "detect_signals",
    "reinforce",
    "maintenance",
    "entries",
    "search",
    "log",
    "shutdown",
)
WRONG_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.5,
    2**70,
    "",
    "x",
    [],
    [1],
    {},
    {"a": 1},
    "\u0000",
]


@dataclass
class Case:
    frames: list[bytes]
    expect_id: str | None = None  # the id the reply must echo (None: not checked)
    codes: tuple[str, ...] = ERROR_CODES  # acceptable codes
    dropped: bool = False  # past the receive ceiling: no reply, the connection is dropped


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()  # ASCII: odd characters travel as valid \u escapes


@dataclass
class Fuzz:
    """Generates malformed requests against a registered project."""

    rng: random.Random
    project: str
    escapes: list[str]
    counter: int = 0
    kinds: list[Callable[[], Case]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.kinds = [
            self.random_bytes,
            self.truncated,
            self.invalid_json,
            self.deep,
            self.wrong_envelope,
            self.wrong_arg,
            self.unknown_op_or_version,
            self.bad_project,
            self.surrogates,
            self.multipart,
        ]

    def rid(self) -> str:
        self.counter += 1
        return f"f{self.counter}"

    def base(self, op: str = "entries", **args: Any) -> dict[str, Any]:
        return {"v": 1, "id": self.rid(), "op": op, "project": self.project, "args": args}

    def next(self) -> Case:
        return self.rng.choice(self.kinds)()

    # -- the kinds of garbage ----------------------------------------------------------------
    def random_bytes(self) -> Case:
        n = self.rng.choice([0, 1, 2, 7, 64, 300, 5000])
        return Case([bytes(self.rng.randrange(256) for _ in range(n))], codes=("bad_request",))

    def truncated(self) -> Case:
        body = dumps(
            self.base("save_semantic", fact="Use pnpm for installs", category="project_context")
        )
        cut = self.rng.randrange(1, len(body))
        return Case([body[:cut]], codes=("bad_request",))

    def invalid_json(self) -> Case:
        rid = self.rid()
        options = [
            b'{"v": 1, "id": "%s", "op": "ping", "args": {"x": NaN}}' % rid.encode(),
            b'{"v": 1, "id": "%s", "op": "ping", "args": {"x": Infinity}}' % rid.encode(),
            b'{"v": 1, "id": "%s", "op": "ping",}' % rid.encode(),
            b"{'v': 1, 'id': 'a', 'op': 'ping'}",
            b'{"v": 1, "id": "a", "op": "ping"} {"v": 1}',
            b'{"v": 1, "id": "a\\x", "op": "ping"}',
            b'{"v": 1, /* c */ "id": "a", "op": "ping"}',
            b'{"v": 1, "id": "a\xed\xa0\x80", "op": "ping"}',  # an encoded surrogate: not UTF-8
            b'\xef\xbb\xbf{"v": 1, "id": "a", "op": "ping"}',  # a BOM is not JSON
            b"null",
            b"true",
            b"42",
            b'"ping"',
            b"[]",
            b"[{}]",
        ]
        return Case([self.rng.choice(options)], codes=("bad_request",))

    def deep(self) -> Case:
        depth = self.rng.choice([50, 900, 5000, 100_000])
        nested = "[" * depth + "]" * depth
        if self.rng.random() < 0.5:
            return Case([("[" * depth).encode()], codes=("bad_request",))
        rid = self.rid()
        body = '{"v": 1, "id": "' + rid + '", "op": "ping", "args": {"x": ' + nested + "}}"
        return Case([body.encode()], codes=("bad_request",))

    def wrong_envelope(self) -> Case:
        body = self.base()
        name = self.rng.choice(["v", "id", "op", "project", "args", "pid"])
        bad = {
            "v": [x for x in WRONG_VALUES if not (type(x) is int and x == 1)] + [2, 0, 10**30],
            "id": [x for x in WRONG_VALUES if not (isinstance(x, str) and x)] + ["x" * 201],
            "op": [x for x in WRONG_VALUES if not isinstance(x, str) or x == ""],
            "project": [x for x in WRONG_VALUES if not (isinstance(x, str) and x)],
            "args": [x for x in WRONG_VALUES if not isinstance(x, dict | type(None))],
            "pid": [x for x in WRONG_VALUES if x is not None and type(x) is not int],
        }[name]
        body[name] = self.rng.choice(bad)
        good_id = isinstance(body["id"], str) and 0 < len(body["id"]) <= 200
        return Case([dumps(body)], expect_id=body["id"] if good_id else None)

    def wrong_arg(self) -> Case:
        op, valid = self.rng.choice(
            [
                (
                    "save_semantic",
                    {"fact": "Use pnpm", "category": "project_context", "confidence": 0.5},
                ),
                (
                    "save_episodic",
                    {"context": "Worked on it", "session_id": "s", "confidence": 0.5},
                ),
                (
                    "build_context",
                    {"task": "t", "query": "q", "max_tokens": 100, "session_id": "s"},
                ),
                ("initialize", {"session_id": "s"}),
                ("detect_signals", {"user_message": "hi", "assistant_response": "ok"}),
                ("reinforce", {"entry_id": "s-00000000", "confirmed": False}),
                ("maintenance", {"dry_run": True, "decisions": {}}),
                ("entries", {"sector": "semantic"}),
                ("log", {"limit": 5}),
                ("register", {"path": "/"}),
                ("hello", {"versions": [1]}),
            ]
        )
        args = dict(valid)
        key = self.rng.choice([*args, "unknown_argument"])
        wrong = {
            "fact": [x for x in WRONG_VALUES if not (isinstance(x, str) and x)]
            + [" ", "a\x00b", "a\ud800b", "\udcff", "x <!-- mm:id=s-1 -->"],
            "context": [x for x in WRONG_VALUES if not (isinstance(x, str) and x)]
            + ["\ud83d unpaired"],
            "category": [x for x in WRONG_VALUES if x is not None] + ["rules", "Quality Rules"],
            "confidence": ["0.5", True, [], {}, -0.1, 1.01, 1e309, -1e309],
            "session_id": [
                x for x in WRONG_VALUES if not (isinstance(x, str) and x) and x is not None
            ]
            + ["[s]", "a\nb", "x" * 201],
            "task": [x for x in WRONG_VALUES if not isinstance(x, str) and x is not None],
            "query": [x for x in WRONG_VALUES if not isinstance(x, str) and x is not None],
            "max_tokens": ["100", 1.5, True, [], {}],
            "user_message": [x for x in WRONG_VALUES if not isinstance(x, str)],
            "assistant_response": [
                x for x in WRONG_VALUES if not isinstance(x, str) and x is not None
            ],
            "entry_id": [x for x in WRONG_VALUES if not isinstance(x, str) or not x]
            + ["s-ffffffff", "no-such-entry"],
            "confirmed": ["yes", 1, 0, [], {}],
            "dry_run": ["yes", 1, [], {}],
            "decisions": ["all", 1, [], {"s-ffffffff": 3}, {"s-ffffffff": "remove"}],
            "sector": ["semantics", 1, [], {}, ""],
            "limit": [0, 1001, -5, "5", 2.5, True],
            "path": [x for x in WRONG_VALUES if not (isinstance(x, str) and x)]
            + ["/no/such/dir/anywhere"],
            "versions": ["1", 1, [1, "2"], {}, [True, None]],
            "unknown_argument": [1, "x", None],
        }[key]
        args[key] = self.rng.choice(wrong)
        # dry_run=false with decisions {} would be a real maintenance: keep it a dry run.
        body = self.base(op, **args)
        if op in ("register", "hello"):
            body.pop("project")
        return Case([dumps(body)], expect_id=body["id"])

    def unknown_op_or_version(self) -> Case:
        body = self.base()
        if self.rng.random() < 0.5:
            body["op"] = self.rng.choice(
                [
                    "frobnicate",
                    "PING",
                    "save-semantic",
                    "ping ",
                    "x" * self.rng.choice([1, 100, 10_000]),
                ]
            )
            return Case([dumps(body)], expect_id=body["id"], codes=("unknown_op",))
        body["v"] = self.rng.choice([0, 2, 3, -1, 10**30])
        return Case([dumps(body)], expect_id=body["id"], codes=("unsupported_version",))

    def bad_project(self) -> Case:
        body = self.base(self.rng.choice(["entries", "build_context", "log"]))
        path = self.rng.choice(self.escapes)
        body["project"] = path
        codes = ("bad_request",) if "\x00" in path else ("not_registered",)
        return Case([dumps(body)], expect_id=body["id"], codes=codes)

    def surrogates(self) -> Case:
        lone = self.rng.choice(["\ud800", "\udfff", "\udcff", "a\ud83db"])
        body = self.base()
        where = self.rng.choice(["id", "op", "project", "sector"])
        if where == "sector":
            body["args"] = {"sector": lone}
        elif where == "id":
            body["id"], body["op"] = lone, "frobnicate"  # the odd id must come back as is
        else:
            body[where] = body[where] + lone
        return Case([dumps(body)], expect_id=body["id"])

    def multipart(self) -> Case:
        inner = self.rng.choice(
            [self.random_bytes, self.truncated, self.wrong_envelope, self.unknown_op_or_version]
        )()
        extra = [
            bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(0, 9)))
            for _ in range(self.rng.randrange(1, 3))
        ]
        return Case([*extra, *inner.frames], expect_id=inner.expect_id, codes=inner.codes)

    def huge(self) -> Case:
        """Near the size limit (read and answered), over it (answered ``too_large``), or past
        the receive ceiling (dropped with the connection: libzmq never hands it over)."""
        roll = self.rng.random()
        if roll < 0.1:
            return Case([b"x" * (RECEIVE_MAX_BYTES + 1)], dropped=True)
        over = roll < 0.55
        body = self.base()
        where = self.rng.choice(["id", "op", "project", "fact"])
        size = (
            MAX_MESSAGE_BYTES + self.rng.choice([1, 4096, 1 << 20])
            if over
            else MAX_MESSAGE_BYTES - 4096
        )
        codes: tuple[str, ...]
        if where == "fact":
            body["op"] = "save_semantic"
            body["args"] = {"fact": "", "category": "no_such_category"}
            codes = ("too_large",)  # the fact cap (4,000 characters) is checked first
        elif where == "project":
            body["project"] = "/"
            codes = ("not_registered",)
        elif where == "op":
            body["op"] = ""
            codes = ("unknown_op",)
        else:
            body["id"] = ""
            codes = ("bad_request",)
        filler = "h" * (size - len(dumps(body)))
        if where == "fact":
            body["args"]["fact"] = filler
        else:
            body[where] += filler
        frame = dumps(body)
        assert len(frame) == size and (size > MAX_MESSAGE_BYTES) == over
        if over:
            codes = ("too_large",)
        return Case([frame], codes=codes, expect_id=body["id"] if where != "id" else None)


@dataclass
class Tally:
    replies: int = 0
    dropped: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    gone: threading.Event = field(default_factory=threading.Event)  # stop: no more replies

    def add(self, code: str) -> None:
        with self.lock:
            self.replies += 1
            self.codes[code] = self.codes.get(code, 0) + 1

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)


def check_reply(case: Case, frames: list[bytes], tally: Tally) -> None:
    if len(frames) != len(case.frames):
        tally.problem(f"reply has {len(frames)} frames, request {len(case.frames)}")
    if frames[:-1] != case.frames[:-1]:
        tally.problem("the envelope frames of a multi-part message were not echoed")
    try:
        reply = json.loads(frames[-1].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        tally.problem(f"reply is not UTF-8 JSON: {exc}: {frames[-1][:200]!r}")
        return
    if reply.get("ok") is not False or not isinstance(reply.get("error"), dict):
        tally.problem(f"malformed request was not refused: {str(reply)[:300]}")
        return
    code = reply["error"].get("code")
    if code not in case.codes or code == "internal":
        tally.problem(
            f"code {code!r} not in {case.codes}: {str(reply)[:300]} for {case.frames[-1][:200]!r}"
        )
    if not reply["error"].get("message"):
        tally.problem("error without a message")
    if case.expect_id is not None and reply.get("id") != case.expect_id:
        tally.problem(f"id {str(reply.get('id'))[:50]!r} echoed for {case.expect_id[:50]!r}")
    tally.add(str(code))


def oversized(endpoint: str, case: Case, tally: Tally, ctx: zmq.Context[Any]) -> None:
    """Send one frame past the receive ceiling on its own socket: the connection is cut
    (seen on a socket monitor) and never reply."""
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    monitor = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED)
    try:
        sock.connect(endpoint)
        sock.send_multipart(case.frames)
        deadline = time.monotonic() + REPLY_TIMEOUT_MS / 1000
        while time.monotonic() < deadline:
            if sock.poll(0):
                tally.problem("a reply came to a message over the size limit")
                return
            if monitor.poll(100):
                event = recv_monitor_message(monitor)
                if event["event"] == zmq.EVENT_DISCONNECTED:
                    with tally.lock:
                        tally.dropped += 1
                    return
        tally.problem("an oversized message neither dropped the connection nor got a reply")
    finally:
        sock.disable_monitor()
        monitor.close()
        sock.close()


def fuzzer(endpoint: str, fuzz: Fuzz, count: int, tally: Tally, huge_every: int) -> None:
    try:
        _fuzz(endpoint, fuzz, count, tally, huge_every)
    except Exception:
        tally.problem(f"fuzzer crashed: {traceback.format_exc()}")


def _fuzz(endpoint: str, fuzz: Fuzz, count: int, tally: Tally, huge_every: int) -> None:
    ctx: zmq.Context[Any] = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(endpoint)
    try:
        for n in range(count):
            case = fuzz.huge() if n % huge_every == huge_every - 1 else fuzz.next()
            if case.dropped:
                oversized(endpoint, case, tally, ctx)
                continue
            sock.send_multipart(case.frames)
            if not sock.poll(REPLY_TIMEOUT_MS):
                tally.problem(f"no reply within {REPLY_TIMEOUT_MS} ms to {case.frames[-1][:200]!r}")
                tally.gone.set()
                return
            if tally.gone.is_set():
                return
            check_reply(case, sock.recv_multipart(), tally)
    finally:
        sock.close()


@dataclass
class GoodClient:
    daemon: DaemonHandle
    project: Path
    saved: dict[str, str] = field(default_factory=dict)  # fact -> id
    checks: int = 0
    problems: list[str] = field(default_factory=list)

    def run(self, done: threading.Event) -> None:
        i = 0
        while not done.is_set() or i < 20:
            fact = f"gooda{i} goodb{i} goodc{i}"
            reply = self.daemon.send(
                "save_semantic",
                self.project,
                {"fact": fact, "category": "quality_rule", "confidence": 0.9},
                timeout=30,
            )
            if not reply["ok"] or reply["result"]["action"] != "added":
                self.problems.append(f"save {fact}: {reply}")
                return
            self.saved[fact] = reply["result"]["entry"]["id"]
            entries = self.daemon.send("entries", self.project, {"sector": "semantic"}, timeout=30)
            ids = {e["id"] for e in entries["result"]["entries"]} if entries["ok"] else set()
            if not set(self.saved.values()) <= ids:
                self.problems.append(f"entries lost acked saves after {fact}")
                return
            context = self.daemon.send(
                "build_context", self.project, {"query": f"goodb{i}"}, timeout=30
            )
            if not context["ok"] or fact not in context["result"]["context"]:
                self.problems.append(f"build_context does not show {fact}: {context}")
                return
            self.checks += 1
            i += 1


def escape_paths(tmp_path: Path, project: Path) -> Iterator[str]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "sub").mkdir()
    (project / "link-out").symlink_to(outside)
    (tmp_path / "link-to-outside").symlink_to(outside)
    (tmp_path / f"{project.name}2").mkdir()
    (tmp_path / f"{project.name}-evil").mkdir()
    yield from [
        f"{project}/../{project.name}2",
        f"{project}/../{project.name}-evil",
        f"{project}/sub/../../outside",
        f"{project}/../../../../../../..",
        f"{project}/link-out",
        f"{project}/link-out/..",
        str(tmp_path / "link-to-outside"),
        f"{project}/sub",
        f"{project}2",
        f"{project}-evil",
        f"{project}/.maestro",
        f"{project}/.maestro/memory",
        "relative/path",
        "../" * 20,
        "~root",
        f"{project}\x00",
        f"{project}/\x00/..",
        "\x00",
    ]


def test_ten_thousand_malformed_frames(daemon: DaemonHandle, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    daemon.register(project)
    escapes = list(escape_paths(tmp_path, project))
    before = daemon.status()["requests"]
    tally = Tally()
    per = FRAMES // FUZZERS
    threads = [
        threading.Thread(
            target=fuzzer,
            args=(
                daemon.endpoint,
                Fuzz(random.Random(1000 + k), str(project), escapes),
                per,
                tally,
                250,
            ),
            name=f"fuzz{k}",
        )
        for k in range(FUZZERS)
    ]
    good = GoodClient(daemon, project)
    done = threading.Event()
    good_thread = threading.Thread(target=good.run, args=(done,), name="good")
    started = time.monotonic()
    good_thread.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    done.set()
    good_thread.join(120)
    elapsed = time.monotonic() - started

    assert not tally.problems, f"{len(tally.problems)} problem(s): {tally.problems[:5]}"
    assert tally.replies + tally.dropped == FRAMES, (tally.replies, tally.dropped)
    assert tally.dropped > 0 and "internal" not in tally.codes
    assert set(tally.codes) >= {
        "bad_request",
        "unknown_op",
        "unsupported_version",
        "not_registered",
        "too_large",
    }, tally.codes
    assert not good.problems, good.problems[:3]
    assert good.checks >= 20, good.checks

    # Alive, and status counts every refusal (the good client's requests all succeeded).
    assert daemon.result("ping")["pong"]
    after = daemon.status()["requests"]
    # not_registered answers count as fallbacks (a client then uses the files), not failures.
    refused = after["failed"] + after["fallbacks"] - before["failed"] - before["fallbacks"]
    assert refused == tally.replies
    assert after["fallbacks"] - before["fallbacks"] == tally.codes["not_registered"]
    context = daemon.result("build_context", project, max_tokens=100_000)["context"]
    assert all(fact in context for fact in good.saved)
    assert elapsed < 120, f"fuzzing took {elapsed:.0f} s"
    # Garbage never becomes part of the daemon's state: status names only real ops.
    assert set(after["ops"]) <= {*KNOWN_OPS, "(undecodable)", "(unknown op)"}, [
        op[:40] for op in sorted(after["ops"])
    ][:10]
    assert os.path.isdir(project)


def test_an_error_reply_changes_nothing_even_in_a_group_commit(
    daemon: DaemonHandle, tmp_path: Path
) -> None:
    """Good and bad writes pipelined on one socket land in the same group commits: each bad one
    is refused without touching the files, each good one is applied. (A refused request whose
    half-done change was committed with its batch would break the retry rule of the protocol:
    an error reply proves nothing happened.)"""
    project = tmp_path / "proj"
    project.mkdir()
    daemon.register(project)
    daemon.result("initialize", project, session_id="s0")
    good: dict[str, str] = {}
    bad: dict[str, str] = {}
    bodies = []
    for i in range(60):
        rid = f"g{i}"
        kind = i % 4
        if kind == 0:
            args = {"fact": f"goodx{i} goody{i}", "category": "quality_rule", "confidence": 0.9}
            op, good[rid] = "save_semantic", f"goodx{i} goody{i}"
        elif kind == 1:
            args = {"fact": f"badx{i} \ud800 bady{i}", "category": "quality_rule"}
            op, bad[rid] = "save_semantic", f"badx{i}"
        elif kind == 2:
            args = {"context": f"bade{i} \udfff", "session_id": "s1"}
            op, bad[rid] = "save_episodic", f"bade{i}"
        else:
            # Two rules in one message; the second cannot be stored (an HTML comment marker).
            args = {
                "user_message": f"Always sigtest{i} sigbeta{i} siggamma{i}. "
                f"Never use <!-- sigbad{i} --> in templates."
            }
            op = "detect_signals"
        bodies.append((rid, {"v": 1, "id": rid, "op": op, "project": str(project), "args": args}))
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(daemon.endpoint)
    replies: dict[str, dict[str, Any]] = {}
    try:
        for _, body in bodies:
            sock.send(json.dumps(body).encode())
        while len(replies) < len(bodies):
            assert sock.poll(30_000), f"only {len(replies)} replies"
            reply = json.loads(sock.recv())
            replies[reply["id"]] = reply
    finally:
        sock.close()
    for rid in good:
        assert replies[rid]["ok"], replies[rid]
    for rid in bad:
        assert not replies[rid]["ok"] and replies[rid]["error"]["code"] == "bad_request", replies[
            rid
        ]
    texts = {e.text for e in disk_state(project).memory.semantic_entries()}
    episodes = " ".join(e.text for e in disk_state(project).memory.episodic_entries())
    assert set(good.values()) <= texts
    assert not any(b in t for b in bad.values() for t in texts) and "bade" not in episodes
    for rid, body in bodies:
        if body["op"] != "detect_signals":
            continue
        i = rid[1:]
        reply = replies[rid]
        stored = [t for t in texts if f"sigtest{i}" in t.split()]
        if reply["ok"]:
            # What the reply says was saved is exactly what is on disk.
            said = [s["fact"] for s in reply["result"]["signals"] if s["entry_id"]]
            assert sorted(stored) == sorted(said), (reply, stored)
        else:
            assert stored == [], f"{rid} was refused but changed the memory: {stored}"
        assert not any(f"sigbad{i}" in t for t in texts)
