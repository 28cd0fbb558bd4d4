#!/usr/bin/env python3
"""Checks that `uringkit bench --replay` adds no cost of its own, and that a
long trace replays in bounded memory.

    bench/replay_check.py [--uringkit build/uringkit] [--rounds 11] [--ios 20000]
                          [--big-ios 10000000] [--dir DIR] [--out bench/results/replay_check.md]

1. fio records a plain pread loop (ioengine=psync, 4 KiB random reads of a
   256 MiB file, write_iolog).  Each round replays that trace
   (as-recorded, and batched at depth 32, engines pread and uring) and runs
   `uringkit bench` on the same file (pread and uring at depth 1 and 32, the
   same number of I/Os), the two in alternating order.  Each pairing's
   per-round ratio replay IOPS / bench IOPS is judged as bench's verdict
   judges engines: the median with its min-max interval, at 95% family-wise
   over the pairings (Bonferroni); an interval that holds 1 is "the same".
2. A generated fio iolog of --big-ios reads is replayed once (pread and uring
   batched at depth 32) and once at a hundredth of the length; the peak RSS
   of both says whether memory grows with the trace.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return r


def replay_iops(exe, trace, jsonpath):
    run([exe, "bench", "--replay", trace, "--engines", "pread,uring", "--mode", "as-recorded,batched",
         "--iodepth", "32", "--rounds", "1", "--json", jsonpath])
    with open(jsonpath) as f:
        doc = json.load(f)
    out = {}
    for r in doc["runs"]:
        depth = 1 if r["engine"] == "pread" or r["mode"] == "as-recorded" else r["depth"]
        out[(r["engine"], r["mode"], depth)] = r["ios"] / r["elapsed_s"]
    return out


def bench_iops(exe, path, ios, jsonpath):
    run([exe, "bench", "--filename", path, "--engines", "pread,uring", "--iodepth", "1,32",
         "--ios", str(ios), "--ramp", "0", "--rounds", "1", "--json", jsonpath])
    with open(jsonpath) as f:
        doc = json.load(f)
    return {(row["engine"], row["iodepth"]): row["ios_per_s"] for row in doc["rows"] if row["status"] == "ok"}


def judge(ratios, comparisons, family=0.95):
    """bench's rule: min-max of n paired ratios covers the median with
    1 - 2^(1-n); that must reach 1 - (1 - family) / comparisons."""
    ratios = sorted(ratios)
    n = len(ratios)
    need = 1 - (1 - family) / comparisons
    med = ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
    if 1 - 2 ** (1 - n) < need:
        return med, ratios[0], ratios[-1], "too few rounds"
    if ratios[0] <= 1 <= ratios[-1]:
        return med, ratios[0], ratios[-1], "the same"
    return med, ratios[0], ratios[-1], "faster" if ratios[0] > 1 else "slower"


def peak_rss(cmd):
    r = subprocess.run(["/usr/bin/time", "-f", "%M %e"] + cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    kib, secs = r.stderr.strip().splitlines()[-1].split()
    return int(kib), float(secs)


def write_iolog(path, data, n, size):
    rng = random.Random(1)
    blocks = size // 4096
    with open(path, "w") as f:
        f.write(f"fio version 2 iolog\n{data} add\n{data} open\n")
        chunk = []
        for i in range(n):
            chunk.append(f"{data} read {rng.randrange(blocks) * 4096} 4096\n")
            if len(chunk) == 100000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
        f.write(f"{data} close\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uringkit", default="build/uringkit")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--ios", type=int, default=20000)
    ap.add_argument("--big-ios", type=int, default=10_000_000)
    ap.add_argument("--dir")
    ap.add_argument("--out", default="bench/results/replay_check.md")
    a = ap.parse_args()
    exe = os.path.abspath(a.uringkit)
    work = a.dir or tempfile.mkdtemp(prefix="uringkit-replay-check-")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "data.bin")
    size = 256 << 20
    with open(data, "wb") as f:
        block = os.urandom(1 << 20)
        for _ in range(size >> 20):
            f.write(block)
    trace = os.path.join(work, "psync.iolog")
    run(["fio", "--name=record", f"--filename={data}", "--rw=randread", "--bs=4k", "--ioengine=psync",
         f"--size={size}", f"--number_ios={a.ios}", f"--write_iolog={trace}", "--output=/dev/null"])

    pairs = [(("pread", "as-recorded", 1), ("pread", 1)), (("uring", "as-recorded", 1), ("uring", 1)),
             (("pread", "batched", 1), ("pread", 1)), (("uring", "batched", 32), ("uring", 32))]
    ratios = {p[0]: [] for p in pairs}
    t0 = time.time()
    for r in range(a.rounds):
        rj, bj = os.path.join(work, "r.json"), os.path.join(work, "b.json")
        if r % 2 == 0:
            rep = replay_iops(exe, trace, rj)
            ben = bench_iops(exe, data, a.ios, bj)
        else:
            ben = bench_iops(exe, data, a.ios, bj)
            rep = replay_iops(exe, trace, rj)
        for key, bkey in pairs:
            ratios[key].append(rep[key] / ben[bkey])
    lines = ["# bench --replay against bench on the same reads", "",
             f"fio (psync) recorded {a.ios} random 4 KiB reads of a 256 MiB file (warm cache); "
             f"{a.rounds} rounds, replay and bench in alternating order ({time.time() - t0:.0f} s).", "",
             "| replay | bench | replay IOPS / bench IOPS, median (min-max) | verdict |", "|---|---|---|---|"]
    for key, bkey in pairs:
        med, lo, hi, v = judge(ratios[key], len(pairs))
        lines.append(f"| {key[0]} {key[1]} (depth {key[2]}) | {bkey[0]} depth {bkey[1]} | "
                     f"{med:.3f} ({lo:.3f}-{hi:.3f}) | {v} |")

    if a.big_ios:
        big, small = os.path.join(work, "big.iolog"), os.path.join(work, "small.iolog")
        write_iolog(big, data, a.big_ios, size)
        write_iolog(small, data, a.big_ios // 100, size)
        common = ["bench", "--engines", "pread,uring", "--mode", "batched", "--iodepth", "32", "--rounds", "1"]
        lines += ["", "## Memory", "",
                  "| trace | lines | bytes | peak RSS | wall |", "|---|---|---|---|---|"]
        for name, path, n in (("small", small, a.big_ios // 100), ("big", big, a.big_ios)):
            kib, secs = peak_rss([exe] + common + ["--replay", path, "--json", os.path.join(work, "m.json")])
            lines.append(f"| {name} | {n} reads | {os.path.getsize(path) >> 20} MiB | {kib / 1024:.1f} MiB | {secs:.1f} s |")
    text = "\n".join(lines) + "\n"
    with open(a.out, "w") as f:
        f.write(text)
    print(text)
    if not a.dir:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
