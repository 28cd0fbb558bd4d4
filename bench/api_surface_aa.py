#!/usr/bin/env python3
"""Summarises bench/api_surface_aa.sh's OUT_DIR: bench's rows (ios/s, CPU
us per I/O) and load's requests/s against serve (SERVE_ENGINE, default
uring, as the script ran it), for each binary and round, the A/A ratios
(same binary twice) and after/before."""
import json
import os
import sys
from pathlib import Path

out = Path(sys.argv[1])


def bench(label, rnd):
    d = json.loads((out / f"bench-{label}-{rnd}.json").read_text())
    rows = [r for r in d["rows"] if r.get("status") == "ok"]
    return {f"bench {r['engine']} depth 32 ios/s": r["ios_per_s"] for r in rows} | {
        f"bench {r['engine']} depth 32 CPU us/io": r["cpu_us_per_io"] for r in rows}


def load(label, rnd):
    d = json.loads((out / f"load-{label}-{rnd}.json").read_text())
    engine = os.environ.get("SERVE_ENGINE", "uring")
    return {f"serve {engine}, load 64 conns: requests/s": d["requests_per_s"]}


runs = {(l, r): bench(l, r) | load(l, r) for l in ("before", "after") for r in (1, 2)}
keys = list(runs[("before", 1)])
print("figure | before 1 | before 2 | after 1 | after 2 | A/A before | A/A after | after/before")
print("---|---|---|---|---|---|---|---")
for k in keys:
    b1, b2, a1, a2 = (runs[x][k] for x in (("before", 1), ("before", 2), ("after", 1), ("after", 2)))
    def fmt(v):
        return f"{v:,.0f}" if v > 100 else f"{v:.3f}"
    print(f"{k} | {fmt(b1)} | {fmt(b2)} | {fmt(a1)} | {fmt(a2)} | {b1 / b2:.2f} | {a1 / a2:.2f} | "
          f"{(a1 + a2) / (b1 + b2):.2f}")
