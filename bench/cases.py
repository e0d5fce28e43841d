"""The benchmark cases P1-P8, P6b and P11, and the harness they share (a private daemon,
generated projects)."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zmq

from maestro_memory.client import Client
from maestro_memory.common import layout
from maestro_memory.core import MemoryStore
from maestro_memory.core.model import CATEGORY_HEADINGS

Result = dict[str, Any]
CATEGORIES = tuple(CATEGORY_HEADINGS.values())  # the headings, in file order
TOPICS = (
    "auth",
    "billing",
    "search",
    "uploads",
    "reports",
    "queue",
    "cache",
    "gateway",
    "profile",
    "alerts",
    "metrics",
    "sessions",
    "exports",
    "imports",
    "webhooks",
)
TASK = "add retry handling to the billing webhooks"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def stats_ms(samples_ns: list[int]) -> tuple[float, float]:
    ms = [s / 1e6 for s in samples_ns]
    return statistics.median(ms), percentile(ms, 99)


def semantic_text(n: int, seed: int = 0) -> str:
    """A semantic.md with ``n`` distinct entries across the four categories, no log section."""
    per = [[] for _ in CATEGORIES]  # type: list[list[str]]
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        conf = (0.95, 0.85, 0.6, 0.5, 0.3)[i % 5]
        per[i % 4].append(
            f"- [2026-11-{1 + i % 28:02d}] [{conf:.2f}] The {topic} module rule r{seed}x{i} "
            f"keeps component c{i} within limit l{i} <!-- mm:id=s-{seed:02x}{i:06x} "
            f"o={conf:.2f} u=0 -->"
        )
    out = ["# Semantic Memory", ""]
    for heading, lines in zip(CATEGORIES, per, strict=True):
        out += [f"## {heading}", *lines, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def episodic_text(n: int) -> str:
    out = ["# Episodic Memory", "", "## Entries", ""]
    for i in range(n):
        sal = round(1.0 * 0.8 ** (i % 6), 3)
        out += [
            f"### [salience: {sal}] [confidence: 0.80] [2026-11-20] [bench-{i}] "
            f"<!-- mm:id=e-{i:08x} o=0.8 -->",
            f"Checkpoint {i}: worked on the {TOPICS[i % len(TOPICS)]} flow.",
            "",
        ]
    return "\n".join(out)


class Bench:
    """A temporary MAESTRO_HOME with a running daemon, and generated projects."""

    def __init__(self, quick: bool) -> None:
        self.quick = quick
        self.tmp = Path(tempfile.mkdtemp(prefix="mmb-"))
        self.home = self.tmp / "h"
        self.env = {**os.environ, "MAESTRO_HOME": str(self.home)}
        self.proc: subprocess.Popen[bytes] | None = None
        self._counter = 0

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> Bench:
        os.environ["MAESTRO_HOME"] = str(self.home)
        self.start_daemon()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_daemon()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start_daemon(self) -> None:
        log = open(self.tmp / "maestrod.out", "ab")  # noqa: SIM115 - lives as long as the daemon
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "maestro_memory.daemon"], env=self.env, stdout=log, stderr=log
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with Client(timeout=0.5, require_daemon=True) as c:
                    c.hello()
                    return
            except Exception:
                if self.proc.poll() is not None:
                    log = self.tmp / "maestrod.out"
                    raise RuntimeError(f"maestrod exited; see {log}") from None
                time.sleep(0.05)
        raise RuntimeError("maestrod did not answer hello within 30 s")

    def stop_daemon(self) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def client(self, project: Path | None = None) -> Client:
        return Client(project, timeout=30, require_daemon=True)

    def project(self, n_semantic: int, n_episodic: int = 20, *, register: bool = True) -> Path:
        self._counter += 1
        root = self.tmp / f"p{self._counter}"
        mem = layout.memory_dir(root)
        mem.mkdir(parents=True)
        (mem / layout.MEMORY_FILES["semantic"]).write_text(semantic_text(n_semantic, self._counter))
        (mem / layout.MEMORY_FILES["episodic"]).write_text(episodic_text(n_episodic))
        if register:
            with self.client() as c:
                c.register(root)
        return root

    def reps(self, quick: int, full: int) -> int:
        return quick if self.quick else full


def time_calls(fn: Callable[[], object], n: int, warmup: int = 5) -> list[int]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        out.append(time.perf_counter_ns() - t0)
    return out


# -- P1 / P2 ------------------------------------------------------------------------------------
def _echo_server(endpoint: str, ready: Any) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.linger = 0
    sock.bind(endpoint)
    ready.set()
    while True:
        frames = sock.recv_multipart()
        if frames[-1] == b"stop":
            break
        sock.send_multipart(frames)
    sock.close()
    ctx.term()


def p1_p2(bench: Bench) -> list[Result]:
    root = bench.project(1000 if not bench.quick else 200, 20)
    n = bench.reps(50, 2000)
    with bench.client(root) as c:
        daemon = time_calls(lambda: c.build_context(task=TASK), n)
    endpoint = f"ipc://{bench.tmp}/echo.sock"
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    server = ctx.Process(target=_echo_server, args=(endpoint, ready))
    server.start()
    ready.wait(30)
    zctx = zmq.Context()
    sock = zctx.socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(endpoint)
    frame = json.dumps(
        {
            "v": 1,
            "id": "x" * 12,
            "op": "build_context",
            "project": str(root),
            "args": {"task": TASK},
            "pid": os.getpid(),
        }
    ).encode()

    def echo() -> None:
        sock.send(frame)
        sock.recv()

    echoes = time_calls(echo, n)
    sock.send(b"stop")
    server.join(10)
    sock.close()
    zctx.term()
    store = MemoryStore(root)
    naive = time_calls(lambda: store.build_context(task=TASK), bench.reps(20, 300))
    d_med, d_p99 = stats_ms(daemon)
    e_med, e_p99 = stats_ms(echoes)
    n_med, n_p99 = stats_ms(naive)
    size = "200" if bench.quick else "1,000"
    return [
        {
            "id": "P1",
            "case": f"build_context over the socket ({size} sem + 20 epi), ms",
            "median": d_med,
            "p99": d_p99,
            "baseline": "bare pyzmq echo",
            "baseline_median": e_med,
            "baseline_p99": e_p99,
            "ratio": d_med / e_med,
            "target": "<= 2.0x",
            "met": d_med / e_med <= 2.0,
        },
        {
            "id": "P2",
            "case": "same call vs naive read+parse+build per call, ms",
            "median": d_med,
            "p99": d_p99,
            "baseline": "naive in-process",
            "baseline_median": n_med,
            "baseline_p99": n_p99,
            "ratio": n_med / d_med,
            "target": ">= 10x faster",
            "met": n_med / d_med >= 10,
        },
    ]


def case_p1(bench: Bench) -> Result:
    bench._p2 = p1_p2(bench)  # type: ignore[attr-defined]
    return bench._p2[0]  # type: ignore[attr-defined, no-any-return]


def case_p2(bench: Bench) -> Result:
    cached = getattr(bench, "_p2", None)
    return (cached or p1_p2(bench))[1]  # type: ignore[no-any-return]


# -- P3 -----------------------------------------------------------------------------------------
def _writer(root: str, worker: int, count: int, ready: Any, start: Any, out: Any) -> None:
    acked = []
    with Client(root, timeout=60, require_daemon=True) as c:
        c.hello()  # connected and answered: the clock may start
        ready.put(worker)
        start.wait()
        for i in range(count):
            fact = f"w{worker}q{i} w{worker}k{i} w{worker}z{i}"  # no shared token: each is new
            c.save_semantic(fact, "project_context", 0.9)
            acked.append(fact)
    out.put(acked)


def case_p3(bench: Bench) -> Result:
    writers = 16
    per = bench.reps(5, 50)
    base_n = bench.reps(100, 200)
    root = bench.project(base_n, 0)
    ctx = mp.get_context("spawn")
    ready = ctx.Queue()
    start = ctx.Event()
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(str(root), w, per, ready, start, out))
        for w in range(writers)
    ]
    for p in procs:
        p.start()
    for _ in procs:  # every writer started and connected: the clock measures writes only
        ready.get(timeout=120)
    t0 = time.perf_counter()
    start.set()
    acked = [f for _ in procs for f in out.get(timeout=600)]
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.join(30)
    total = writers * per
    present = {e.text for e in MemoryStore(root).semantic_entries()}
    missing = [f for f in acked if f not in present]
    # Baseline: the same writes, one at a time, each its own lock + atomic write + fsync.
    base_root = bench.project(base_n, 0, register=False)
    store = MemoryStore(base_root)
    t1 = time.perf_counter()
    for w in range(writers):
        for i in range(per):
            store.save_semantic(f"w{w}q{i} w{w}k{i} w{w}z{i}", "project_context", 0.9)
    base_elapsed = time.perf_counter() - t1
    thr, base_thr = total / elapsed, total / base_elapsed
    return {
        "id": "P3",
        "case": f"{writers} writer processes x {per} save_semantic, writes/s",
        "median": thr,
        "p99": None,
        "baseline": "same writes one at a time (direct)",
        "baseline_median": base_thr,
        "ratio": thr / base_thr,
        "target": ">= 5x",
        "met": thr / base_thr >= 5 and not missing and len(acked) == total,
        "note": f"{len(acked)} acked, {len(missing)} missing afterwards",
    }


# -- P4 -----------------------------------------------------------------------------------------
def case_p4(bench: Bench) -> Result:
    sizes = (100, 1000) if bench.quick else (100, 1000, 10000)
    n = bench.reps(30, 1000)
    medians: dict[int, float] = {}
    p99s: dict[int, float] = {}
    for size in sizes:
        root = bench.project(size, 20)
        with bench.client(root) as c:
            medians[size], p99s[size] = stats_ms(
                time_calls(lambda c=c: c.build_context(task=TASK), n)
            )
    top = sizes[-1]
    ratio = medians[top] / medians[100]
    return {
        "id": "P4",
        "case": f"build_context p50 at {top:,} vs 100 entries, ms",
        "median": medians[top],
        "p99": p99s[top],
        "baseline": "itself at 100",
        "baseline_median": medians[100],
        "ratio": ratio,
        "target": "<= 2x",
        "met": ratio <= 2.0,
        "series": {str(k): v for k, v in medians.items()},
        "note": "p50 by size: " + ", ".join(f"{k:,}: {v:.3g} ms" for k, v in medians.items()),
    }


# -- P5 -----------------------------------------------------------------------------------------
def case_p5(bench: Bench) -> Result:
    root = bench.project(200, 20)
    semantic = layout.memory_dir(root) / layout.MEMORY_FILES["semantic"]
    samples = []
    with bench.client(root) as c:
        for i in range(bench.reps(3, 20)):
            marker = f"zq{i}marker"
            t0 = time.perf_counter()
            with open(semantic, "a") as fh:  # a person's editor appending a line
                fh.write(f"- [2026-12-02] [0.95] Remember {marker} in reviews\n")
            deadline = t0 + 10
            while marker not in c.build_context(query=marker)["context"]:
                if time.perf_counter() > deadline:
                    break
                time.sleep(0.002)  # polling interval of the measurement
            samples.append(time.perf_counter() - t0)
    ms = [s * 1000 for s in samples]
    p95 = percentile(ms, 95)
    return {
        "id": "P5",
        "case": "external append until build_context shows it, ms",
        "median": statistics.median(ms),
        "p99": percentile(ms, 99),
        "baseline": "—",
        "baseline_median": None,
        "ratio": None,
        "target": "p95 <= 300 ms",
        "met": p95 <= 300,
        "note": f"p95 {p95:.0f} ms over {len(ms)} edits",
    }


# -- P6 -----------------------------------------------------------------------------------------
def case_p6(bench: Bench) -> Result:
    import psutil

    # A fresh daemon that owns exactly 10 ordinary projects, not the large ones of P1-P5.
    bench.stop_daemon()
    bench.home = bench.tmp / "h-idle"
    bench.env["MAESTRO_HOME"] = os.environ["MAESTRO_HOME"] = str(bench.home)
    bench.start_daemon()
    for _ in range(10):
        bench.project(50, 5)
    assert bench.proc is not None
    proc = psutil.Process(bench.proc.pid)
    idle = 5.0 if bench.quick else 60.0
    time.sleep(1.0)  # let registration work settle before the idle window
    cpu0 = proc.cpu_times()
    t0 = time.perf_counter()
    time.sleep(idle)  # the measurement window itself: the daemon must be idle
    cpu1 = proc.cpu_times()
    wall = time.perf_counter() - t0
    cpu_pct = 100 * ((cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)) / wall
    rss_mb = proc.memory_info().rss / 1e6
    return {
        "id": "P6",
        "case": f"idle {idle:.0f} s, 10 projects: CPU %",
        "median": cpu_pct,
        "p99": None,
        "baseline": "—",
        "baseline_median": None,
        "ratio": None,
        "target": "CPU <= 0.1 %, RSS <= 50 MB",
        "met": cpu_pct <= 0.1 and rss_mb <= 50,
        "rss_mb": rss_mb,
        "note": f"RSS {rss_mb:.1f} MB, CPU {cpu_pct:.3f} %",
    }


def case_p6b(bench: Bench) -> Result:
    """Many projects: one daemon, 1,000 registered projects (50 with --quick)."""
    import psutil

    count = bench.reps(50, 1000)
    bench.stop_daemon()
    bench.home = bench.tmp / "h-many"
    bench.env["MAESTRO_HOME"] = os.environ["MAESTRO_HOME"] = str(bench.home)
    bench.start_daemon()
    roots = [bench.project(8, 3, register=False) for _ in range(count)]
    t0 = time.perf_counter()
    with bench.client() as c:
        for root in roots:
            c.register(root)
    register_s = time.perf_counter() - t0
    assert bench.proc is not None
    proc = psutil.Process(bench.proc.pid)
    with bench.client() as c:
        status_ms = [s / 1e6 for s in time_calls(c.status, bench.reps(3, 20), warmup=1)]
        projects = c.status()["projects"]
    modes = [projects.get(str(root), {}).get("watcher") for root in roots]
    on_inotify = sum(m == "inotify" for m in modes)
    idle = 3.0 if bench.quick else 60.0
    time.sleep(1.0)  # let registration work settle before the idle window
    cpu0 = proc.cpu_times()
    t1 = time.perf_counter()
    time.sleep(idle)  # the measurement window itself: the daemon must be idle
    cpu1 = proc.cpu_times()
    wall = time.perf_counter() - t1
    cpu_pct = 100 * ((cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)) / wall
    rss_mb = proc.memory_info().rss / 1e6
    threads = proc.num_threads()
    met = threads <= 32 and cpu_pct <= 0.2 and rss_mb <= 100 and on_inotify == count
    return {
        "id": "P6b",
        "case": f"idle {idle:.0f} s, {count:,} projects: CPU %",
        "median": cpu_pct,
        "p99": None,
        "baseline": "—",
        "baseline_median": None,
        "ratio": None,
        "target": "<= 32 threads, CPU <= 0.2 %, RSS <= 100 MB, all inotify",
        "met": met,
        "threads": threads,
        "rss_mb": rss_mb,
        "status_ms": statistics.median(status_ms),
        "register_s": register_s,
        "on_inotify": on_inotify,
        "note": (
            f"{threads} threads, RSS {rss_mb:.1f} MB, CPU {cpu_pct:.3f} %, "
            f"{on_inotify}/{count} on inotify, status p50 {statistics.median(status_ms):.1f} ms, "
            f"registering all took {register_s:.1f} s"
        ),
    }


# -- P7 -----------------------------------------------------------------------------------------
def _wall(cmd: list[str], env: dict[str, str], n: int, stdin: bytes = b"") -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(
            cmd,
            env=env,
            input=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        out.append((time.perf_counter() - t0) * 1000)
    return out


def case_p7(bench: Bench) -> Result:
    root = bench.project(200, 20)
    n = bench.reps(3, 20)
    ctl = [sys.executable, "-m", "maestro_memory.client.cli", "-C", str(root), "context", "--json"]
    ctl_ms = _wall(ctl, bench.env, n)
    zmq_ms = _wall([sys.executable, "-c", "import zmq"], bench.env, n)
    med, base = statistics.median(ctl_ms), statistics.median(zmq_ms)
    return {
        "id": "P7",
        "case": "maestroctl context --json, whole process, ms",
        "median": med,
        "p99": percentile(ctl_ms, 99),
        "baseline": 'python -c "import zmq"',
        "baseline_median": base,
        "ratio": med / base,
        "target": "<= 3x",
        "met": med / base <= 3,
    }


# -- P8 -----------------------------------------------------------------------------------------
def case_p8(bench: Bench) -> Result:
    """The SessionStart hook as Claude Code runs it: a whole process, the daemon up."""
    root = bench.project(200, 20)
    n = bench.reps(3, 20)
    event = {
        "session_id": "bench-session",
        "cwd": str(root),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    hook = [sys.executable, "-m", "maestro_memory.client.cli", "hook", "claude", "session-start"]
    hook_ms, answered = [], 0
    for _ in range(n + 1):  # the first run warms the page cache and is not counted
        t0 = time.perf_counter()
        done = subprocess.run(
            hook, env=bench.env, input=json.dumps(event).encode(), capture_output=True, check=True
        )
        hook_ms.append((time.perf_counter() - t0) * 1000)
        answered += b"additionalContext" in done.stdout
    hook_ms = hook_ms[1:]
    zmq_ms = _wall([sys.executable, "-c", "import zmq"], bench.env, n)
    med, base = statistics.median(hook_ms), statistics.median(zmq_ms)
    return {
        "id": "P8",
        "case": "hook claude session-start (daemon up), whole process, ms",
        "median": med,
        "p99": percentile(hook_ms, 99),
        "baseline": 'python -c "import zmq"',
        "baseline_median": base,
        "ratio": med / base,
        "target": "<= 1.5x",
        "met": med / base <= 1.5 and answered == n + 1,
        # A hook that runs out of its 0.95 s budget fails open with no output: say so.
        "note": f"{answered} of {n + 1} runs returned the context",
    }


# -- P11 ----------------------------------------------------------------------------------------
def _direct_start(root: Path, env: dict[str, str], n: int) -> tuple[list[float], int]:
    """The session-start hook with no daemon for ``root`` (direct mode): wall ms per run, and
    how many runs served the memory (a hook past its deadline fails open with none)."""
    hook = [sys.executable, "-m", "maestro_memory.client.cli", "hook", "claude", "session-start"]
    times, served = [], 0
    for i in range(n + 1):  # the first run warms the page cache and is not counted
        event = {"session_id": f"bench-p11-{i}", "cwd": str(root), "source": "startup"}
        t0 = time.perf_counter()
        done = subprocess.run(
            hook, env=env, input=json.dumps(event).encode(), capture_output=True, check=True
        )
        if i:
            times.append((time.perf_counter() - t0) * 1000)
            served += (
                "Quality Rules" in done.stdout.decode() or "module rule" in done.stdout.decode()
            )
    return times, served


def case_p11(bench: Bench) -> Result:
    """A memory file as full as saves make it (``SAVE_MAX_BYTES``): the session-start hook with
    the daemon up (the path a registered project takes) and in direct mode (the slowest path),
    against an ordinary 200-entry project in the same run; and a 5 MB file, which is refused
    (timed: the refusal reads no more than the limit)."""
    from maestro_memory.common.limits import SAVE_MAX_BYTES

    direct_home = bench.tmp / "p11-home"  # no daemon there
    direct_home.mkdir(mode=0o700)
    direct_env = {**bench.env, "MAESTRO_HOME": str(direct_home)}
    n = bench.reps(3, 10)
    low, high = 200, 200
    while len(semantic_text(high).encode()) <= SAVE_MAX_BYTES:
        low, high = high, high * 2
    while high - low > 1:  # the most entries that fit the limit
        mid = (low + high) // 2
        fits = len(semantic_text(mid).encode()) <= SAVE_MAX_BYTES
        low, high = (mid, high) if fits else (low, mid)
    full = bench.project(0, 20)
    semantic = layout.memory_dir(full) / layout.MEMORY_FILES["semantic"]
    semantic.write_text(semantic_text(low))
    with bench.client() as c:  # the daemon reads the new file before the runs
        c.register(full)
    small = bench.project(200, 20)
    base_ms, _ = _direct_start(small, bench.env, n)
    full_ms, served = _direct_start(full, bench.env, n)
    direct_ms, direct_served = _direct_start(full, direct_env, n)
    huge = bench.project(0, 20, register=False)
    (layout.memory_dir(huge) / layout.MEMORY_FILES["semantic"]).write_text(semantic_text(45_000))
    huge_ms, _ = _direct_start(huge, direct_env, n)
    med, base = statistics.median(full_ms), statistics.median(base_ms)
    return {
        "id": "P11",
        "case": f"hook session-start, daemon up, semantic.md full ({low:,} entries), ms",
        "median": med,
        "p99": percentile(full_ms, 99),
        "baseline": "the same hook on 200 entries",
        "baseline_median": base,
        "ratio": med / base,
        "target": "<= 1.5x, every run served",
        "met": med / base <= 1.5 and served == n,
        "note": f"{served} of {n} served; in direct mode {statistics.median(direct_ms):.0f} ms "
        f"median, {direct_served} of {n} served within the hook's deadline; a 5 MB file is "
        f"refused in {statistics.median(huge_ms):.0f} ms (median)",
    }


CASES: list[tuple[str, Callable[[Bench], Result]]] = [
    ("P1", case_p1),
    ("P2", case_p2),
    ("P3", case_p3),
    ("P4", case_p4),
    ("P5", case_p5),
    ("P6", case_p6),
    ("P7", case_p7),
    ("P8", case_p8),
    ("P6B", case_p6b),
    ("P11", case_p11),
]
