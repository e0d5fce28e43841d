"""Benchmarks of Maestro Memory: ``python -m bench [--quick] [--json FILE] [--only IDS]``.

Every case is measured against a baseline taken in the same run, and reported as a ratio:
absolute times on a shared machine drift from run to run, ratios much less. The harness
starts its own ``maestrod`` in a temporary ``MAESTRO_HOME`` and removes it afterwards.
Timings are never pass/fail in tests; ``tests/test_bench_smoke.py`` only runs ``--quick`` to
check that the harness works. The numbers are in the table and in ``--json FILE``; there is
no plot (it needed matplotlib, a dependency the harness does not carry).
"""

from __future__ import annotations

import argparse
import json
import sys

from .cases import CASES, Bench
from .mcp_cases import MCP_CASES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes and few repetitions (a smoke test, not a measurement)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--only", metavar="IDS", help="comma-separated case ids, e.g. P1,P4")
    args = parser.parse_args(argv)
    wanted = set(args.only.upper().split(",")) if args.only else None
    with Bench(quick=args.quick) as bench:
        results = []
        for case_id, fn in [*CASES, *MCP_CASES]:
            if wanted and case_id not in wanted:
                continue
            print(f"running {case_id} …", file=sys.stderr, flush=True)
            results.append(fn(bench))
    print(render_table(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"quick": args.quick, "results": results}, fh, indent=2)
    return 0


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return "" if value is None else str(value)


def render_table(results: list[dict[str, object]]) -> str:
    head = ("id", "case", "median", "p99", "baseline median", "ratio", "target", "met")
    rows = [head]
    for r in results:
        rows.append(
            (
                str(r["id"]),
                str(r["case"]),
                _fmt(r.get("median")),
                _fmt(r.get("p99")),
                _fmt(r.get("baseline_median")),
                _fmt(r.get("ratio")),
                str(r.get("target", "")),
                {True: "yes", False: "NO", None: "—"}[r.get("met")],  # type: ignore[index]
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"{r['id']}: {r['note']}" for r in results if r.get("note")]
    return "\n".join(lines + (["", *notes] if notes else []))


if __name__ == "__main__":
    raise SystemExit(main())
