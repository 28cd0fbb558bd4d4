#!/usr/bin/env python3
"""Runs the performance comparisons of `uringkit bench` against fio and pread
side by side, interleaved (uringkit, fio io_uring, fio psync, then again), on
the same 1 GiB file, and writes a Markdown table with medians and min-max.

    bench/compare_fio.py [--uringkit build/uringkit] [--rounds 3] [--runtime 2]
                         [--size 1g] [--dir DIR] [--out bench/results/bench_fio_comparison.md]

Figures compared (from the issue): warm 4 KiB random reads at depth 32 batch
32 (uring vs pread, liburing and fio's best io_uring job), at depth 1 (auto vs
pread), O_DIRECT at depth 32 (uring vs pread at depth 1 and fio), cold
buffered reads at depth 32 (uring vs pread).  CPU per I/O is user+system CPU
time divided by I/Os for both tools (fio: usr_cpu+sys_cpu of the job).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_uringkit(exe, args, jsonpath):
    # One round per call: this script interleaves the rounds with fio itself.
    cmd = [exe, "bench"] + args + ["--rounds", "1", "--json", jsonpath]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"uringkit failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    with open(jsonpath) as f:
        doc = json.load(f)
    out = {}
    for row in doc["rows"]:
        if row["status"] == "ok":
            out[(row["engine"], row["iodepth"])] = (row["ios_per_s"], row["cpu_us_per_io"], row["syscalls_per_io"])
        else:
            out[(row["engine"], row["iodepth"])] = None
    return out, cmd, doc


def run_fio(args, jsonpath):
    cmd = ["fio", "--output-format=json", f"--output={jsonpath}"] + args
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"fio failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    with open(jsonpath) as f:
        job = json.load(f)["jobs"][0]
    iops = job["read"]["iops"]
    # fio's usr_cpu/sys_cpu are percent of one CPU over the job's run time.
    cpu_us = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * 1e6 / iops if iops else float("nan")
    return (iops, cpu_us, None), cmd


def fio_common(path, size, runtime):
    return [f"--filename={path}", f"--size={size}", "--rw=randread", "--bs=4k", "--time_based",
            f"--runtime={runtime}", "--ramp_time=0.25", "--randrepeat=1", "--norandommap", "--name=job"]


def median_range(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return statistics.median(v), min(v), max(v)


def fmt_iops(x):
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--uringkit", default=os.path.join(here, "..", "build", "uringkit"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=float, default=2.0)
    ap.add_argument("--size", default="1g")
    ap.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    ap.add_argument("--out", default=os.path.join(here, "results", "bench_fio_comparison.md"))
    a = ap.parse_args()

    fd, path = tempfile.mkstemp(prefix="uringkit-cmp-", dir=a.dir)
    os.close(fd)
    tmpjson = path + ".json"
    samples = {}  # (config, who) -> per round: (iops, cpu, sys), or None where that run failed
    commands = {}
    load_before = loadavg()
    t0 = time.time()
    try:
        # The file: real data on disk (not unwritten extents), synced.
        mib = int(a.size.rstrip("gG")) * 1024 if a.size[-1] in "gG" else int(a.size.rstrip("mM"))
        subprocess.run(["dd", "if=/dev/urandom", f"of={path}", "bs=1M", f"count={mib}", "conv=fsync", "status=none"],
                       check=True)
        size = f"{mib}m"
        rt = f"{a.runtime:g}"
        # fio's best io_uring job as the issue names it, plus its plain form; the better one counts.
        fio_uring_batch = ["--ioengine=io_uring", "--iodepth=32", "--iodepth_batch_submit=32",
                           "--iodepth_batch_complete_min=32"]
        fio_uring_plain = ["--ioengine=io_uring", "--iodepth=32"]
        def put(cfg, who, v):
            samples.setdefault((cfg, who), [None] * rnd_now[0])
            samples[(cfg, who)].append(v)

        def warm_uringkit():
            # 1. warm page cache, depth 1 and 32
            base = ["--filename", path, "--size", size, "--rw", "randread", "--bs", "4k", "--runtime", rt,
                    "--ramp", "0.25", "--cache", "warm"]
            r, cmd, _ = run_uringkit(a.uringkit, base + ["--engines", "pread,uring,liburing,auto",
                                                         "--iodepth", "1,32", "--batch", "32"], tmpjson)
            commands["warm uringkit"] = cmd
            for (eng, d), v in r.items():
                put(f"warm d{d}", eng, v)

        def warm_fio():
            for name, extra in (("fio io_uring batch", fio_uring_batch), ("fio io_uring", fio_uring_plain),
                                ("fio psync", ["--ioengine=psync"])):
                v, cmd = run_fio(fio_common(path, size, rt) + extra + ["--invalidate=0"], tmpjson)
                commands[f"warm {name}"] = cmd
                put("warm d32" if "io_uring" in name else "warm d1", name, v)

        def direct_uringkit():
            # 2. O_DIRECT
            r, cmd, _ = run_uringkit(a.uringkit, ["--filename", path, "--size", size, "--rw", "randread", "--bs",
                                                  "4k", "--runtime", rt, "--ramp", "0.25", "--direct", "--engines",
                                                  "pread,uring,uring-reg", "--iodepth", "1,32"], tmpjson)
            commands["direct uringkit"] = cmd
            for (eng, d), v in r.items():
                put(f"direct d{d}", eng, v)

        def direct_fio():
            for name, extra in (("fio io_uring batch", fio_uring_batch), ("fio io_uring", fio_uring_plain),
                                ("fio io_uring fixedbufs", fio_uring_plain + ["--fixedbufs", "--registerfiles"]),
                                ("fio psync", ["--ioengine=psync"])):
                v, cmd = run_fio(fio_common(path, size, rt) + extra + ["--direct=1"], tmpjson)
                commands[f"direct {name}"] = cmd
                put("direct d32" if "io_uring" in name else "direct d1", name, v)

        def cold_uringkit():
            # 3. cold page cache, depth 32 (pread: one at a time whatever the depth)
            r, cmd, _ = run_uringkit(a.uringkit, ["--filename", path, "--size", size, "--rw", "randread", "--bs",
                                                  "4k", "--runtime", rt, "--ramp", "0", "--cache", "cold",
                                                  "--engines", "pread,uring", "--iodepth", "32"], tmpjson)
            commands["cold uringkit"] = cmd
            for (eng, d), v in r.items():
                put(f"cold d{d}", eng, v)

        rnd_now = [0]
        for rnd in range(a.rounds):
            rnd_now[0] = rnd
            print(f"round {rnd + 1}/{a.rounds}, load {loadavg()}", file=sys.stderr)
            # Each round runs every tool once; odd rounds run the steps in reverse so that neither
            # uringkit nor fio always goes first (a drifting machine would favour one of them).
            steps = [lambda: warm_uringkit(), lambda: warm_fio(), lambda: direct_uringkit(), lambda: direct_fio(),
                     lambda: cold_uringkit()]
            for step in (steps if rnd % 2 == 0 else list(reversed(steps))):
                step()
            for key in samples:
                while len(samples[key]) < rnd + 1:
                    samples[key].append(None)
    finally:
        for p in (path, tmpjson):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
    load_after = loadavg()

    def med(cfg, who, i=0):
        vals = samples.get((cfg, who))
        if not vals or any(v is None for v in vals):
            return None
        return median_range([v[i] for v in vals])

    lines = []
    lines.append("# uringkit bench against fio and pread\n")
    lines.append(f"Generated by `bench/compare_fio.py --rounds {a.rounds} --runtime {a.runtime:g} --size {a.size}` "
                 f"on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {a.rounds} rounds, each running every "
                 f"tool once in turn (interleaved); medians with min-max.  Load average (1, 5, 15 min) before: "
                 f"{load_before}, after: {load_after}.  Wall time {time.time() - t0:.0f} s.\n")
    uname = os.uname()
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    lines.append(f"Host: Linux {uname.release}, {cpu}, {os.cpu_count()} cores; fio "
                 f"{subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()}; "
                 f"file: {size} of random data in {a.dir}.\n")
    lines.append("| workload | engine | IOPS (median) | min-max | CPU µs/IO | syscalls/IO |")
    lines.append("|---|---|---:|---:|---:|---:|")
    order = [("warm d1", ["pread", "auto", "uring", "liburing", "fio psync"]),
             ("warm d32", ["pread", "uring", "liburing", "auto", "fio io_uring batch", "fio io_uring"]),
             ("direct d1", ["pread", "uring", "uring-reg", "fio psync"]),
             ("direct d32", ["pread", "uring", "uring-reg", "fio io_uring batch", "fio io_uring",
                             "fio io_uring fixedbufs"]),
             ("cold d32", ["pread", "uring"])]
    titles = {"warm d1": "4k randread, warm cache, depth 1", "warm d32": "4k randread, warm cache, depth 32 batch 32",
              "direct d1": "4k randread, O_DIRECT, depth 1", "direct d32": "4k randread, O_DIRECT, depth 32",
              "cold d32": "4k randread, cold cache, depth 32"}
    for cfg, whos in order:
        for who in whos:
            iops, cpu_, sc = med(cfg, who, 0), med(cfg, who, 1), med(cfg, who, 2) if not who.startswith("fio") else None
            if iops is None:
                lines.append(f"| {titles[cfg]} | {who} | unavailable | | | |")
                continue
            lines.append(f"| {titles[cfg]} | {who} | {fmt_iops(iops[0])} | {fmt_iops(iops[1])}-{fmt_iops(iops[2])} "
                         f"| {cpu_[0]:.2f} | {'' if sc is None else f'{sc[0]:.3f}'} |")
    lines.append("")

    def ratio(cfg_a, a_, cfg_b, b_, i=0):
        """The paired per-round ratios a/b (both from the same round, which cancels the machine's
        drift between rounds): (median, min, max), or None when either side is missing."""
        xs, ys = samples.get((cfg_a, a_)), samples.get((cfg_b, b_))
        if not xs or not ys:
            return None
        pairs = [x[i] / y[i] for x, y in zip(xs, ys) if x is not None and y is not None and y[i]]
        return median_range(pairs) if pairs else None

    def best_fio(cfg):
        cands = [w for w in ("fio io_uring batch", "fio io_uring", "fio io_uring fixedbufs") if med(cfg, w)]
        return max(cands, key=lambda w: med(cfg, w)[0]) if cands else None

    # A target is met only when every round's paired ratio meets it, missed only when none does;
    # otherwise the rounds straddle it and the run cannot tell (with n rounds the min-max of the
    # paired ratios covers their median with probability 1 - 2^(1-n), the bench's own rule).
    checks = []
    def check(text, value, target, higher=True):
        if value is None:
            checks.append(f"| {text} | n/a | | {'≥' if higher else '≤'} {target} | not measured |")
            return
        m, lo, hi = value
        if higher:
            verdict = "met" if lo >= target else "NOT met" if hi < target else "within noise of the target"
        else:
            verdict = "met" if hi <= target else "NOT met" if lo > target else "within noise of the target"
        checks.append(f"| {text} | {m:.2f} | {lo:.2f}-{hi:.2f} | {'≥' if higher else '≤'} {target} | {verdict} |")

    check("warm d32: uring / pread IOPS", ratio("warm d32", "uring", "warm d32", "pread"), 2.2)
    check("warm d32: uring / liburing IOPS", ratio("warm d32", "uring", "warm d32", "liburing"), 1.0)
    bf = best_fio("warm d32")
    if bf:
        check(f"warm d32: uring / {bf} IOPS", ratio("warm d32", "uring", "warm d32", bf), 1.15)
        check(f"warm d32: uring / {bf} CPU per I/O", ratio("warm d32", "uring", "warm d32", bf, 1), 1.0, False)
    check("warm d1: auto / pread IOPS", ratio("warm d1", "auto", "warm d1", "pread"), 0.97)
    check("direct: uring d32 / pread d1 IOPS", ratio("direct d32", "uring", "direct d1", "pread"), 10)
    bf = best_fio("direct d32")
    if bf:
        check(f"direct d32: uring / {bf} IOPS", ratio("direct d32", "uring", "direct d32", bf), 0.95)
        check(f"direct d32: uring / {bf} CPU per I/O", ratio("direct d32", "uring", "direct d32", bf, 1), 1.0, False)
    check("cold d32: uring / pread IOPS", ratio("cold d32", "uring", "cold d32", "pread"), 5)
    check("warm d32: uring syscalls per I/O", med("warm d32", "uring", 2), 0.04, False)
    coverage = 1 - 2 ** (1 - a.rounds)
    lines.append(f"Targets: each ratio is paired per round (both sides from the same round); median and min-max "
                 f"over the rounds.  A target is met when every round meets it and NOT met when none does: the "
                 f"min-max of {a.rounds} paired ratios holds their median with probability {coverage:.2%}, so the "
                 f"{len(checks)} targets together are judged at {max(0.0, 1 - len(checks) * (1 - coverage)):.1%} "
                 f"or better (Bonferroni).  Otherwise the rounds straddle the target: this machine's noise "
                 f"cannot tell.\n")
    lines.append("| target | measured (median) | min-max | wanted | |")
    lines.append("|---|---:|---:|---:|---|")
    lines += checks
    lines.append("")
    lines.append("Commands (one round; the file name is the temporary file):\n")
    lines.append("```")
    for k, cmd in commands.items():
        lines.append(" ".join(cmd))
    lines.append("```")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
