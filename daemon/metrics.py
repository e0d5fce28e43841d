"""Request counters and per-op latency percentiles (main thread only: no locking)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..common.protocol import NOT_REGISTERED

WINDOW = 2048  # latest samples per op kept for the percentiles


def percentile(sorted_samples: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list (0.0 for none)."""
    if not sorted_samples:
        return 0.0
    rank = max(1, min(len(sorted_samples), round(fraction * len(sorted_samples) + 0.5)))
    return sorted_samples[rank - 1]


# Error replies that are not failures: a client asking about a project this daemon does not own
# (it then uses the files directly, as designed).
FALLBACK_CODES = frozenset({NOT_REGISTERED})


@dataclass
class OpStats:
    count: int = 0
    failed: int = 0  # real failures: every error code but the fallbacks
    fallbacks: int = 0
    samples: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))


class Metrics:
    def __init__(self) -> None:
        self.served = 0
        self.failed = 0
        self.fallbacks = 0
        self.errors: dict[str, int] = {}
        self.ops: dict[str, OpStats] = {}

    def record(self, op: str, seconds: float, ok: bool, code: str | None = None) -> None:
        self.served += 1
        stats = self.ops.setdefault(op, OpStats())
        stats.count += 1
        stats.samples.append(seconds)
        if ok:
            return
        code = code or "internal"
        self.errors[code] = self.errors.get(code, 0) + 1
        if code in FALLBACK_CODES:
            self.fallbacks += 1
            stats.fallbacks += 1
        else:
            self.failed += 1
            stats.failed += 1

    def snapshot(self) -> dict[str, Any]:
        per_op = {}
        for op, stats in sorted(self.ops.items()):
            ordered = sorted(stats.samples)
            per_op[op] = {
                "count": stats.count,
                "failed": stats.failed,
                "fallbacks": stats.fallbacks,
                "p50_ms": round(percentile(ordered, 0.50) * 1000, 3),
                "p99_ms": round(percentile(ordered, 0.99) * 1000, 3),
            }
        return {
            "served": self.served,
            "failed": self.failed,
            "fallbacks": self.fallbacks,
            "errors": dict(sorted(self.errors.items())),
            "ops": per_op,
        }
