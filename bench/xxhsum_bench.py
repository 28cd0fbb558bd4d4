#!/usr/bin/env python3
"""`uringkit xxhsum` and `uringkit readfiles` against xxhsum 0.8.1, whole
process, in one run: each round runs every command once, the order rotated
by one each round; medians with min-max, and an A/A pair (xxhsum -H1 twice,
uringkit xxhsum -H1 twice) that sizes the noise.  Writes bench/results/xxhsum.md.

  bench/xxhsum_bench.py [--uringkit build/uringkit] [--dir /tmp/uringkit-xxhsum-bench]
                        [--rounds 11] [--files 10000] [--big 1g] [--only tree,big,check]

Cases, all from the page cache (each is read once before the rounds):
  tree   10,000 files of 4 KiB; every command gets the same names as its
         arguments (relative, about 150 KB of them: far below ARG_MAX)
  big    one 1 GiB file on --dir (ext4 /tmp here), deleted afterwards
  check  -c of the 10,000-line list xxhsum -H1 wrote for the tree
"""
import argparse, os, platform, resource, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def loadavg():
    return " ".join(open('/proc/loadavg').read().split()[:3])


def cpu_model():
    for line in open('/proc/cpuinfo'):
        if line.startswith('model name'):
            return line.split(':', 1)[1].strip()
    return platform.machine()


def parse_size(s):
    mult = {'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}
    return int(s[:-1]) * mult[s[-1].lower()] if s[-1].lower() in mult else int(s)


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, cwd):
    """(wall seconds, CPU seconds: user + system of the process and its threads)."""
    c0 = cpu_of_children()
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd[:4])} ...\n{r.stderr.decode()[:500]}")
    return took, cpu_of_children() - c0


def measure(rows, rounds, cwd):
    """rows: [(label, argv)]; every round runs each once, rotated; seconds per label."""
    for _, cmd in rows:  # warm: the data, the programs, their libraries
        timed(cmd, cwd)
    times = {label: [] for label, _ in rows}
    for r in range(rounds):
        order = rows[r % len(rows):] + rows[:r % len(rows)]
        for label, cmd in order:
            times[label].append(timed(cmd, cwd))
    return times  # label -> [(wall, cpu)]


def cell(xs):
    m = statistics.median(xs)
    return f"{m * 1000:.1f} ({min(xs) * 1000:.1f}-{max(xs) * 1000:.1f})"


def table(title, times, ratios, out):
    out.append(f"### {title}\n")
    out.append("| command | wall ms, median (min-max) | CPU ms (user+sys), median (min-max) |")
    out.append("|---|---:|---:|")
    for label, xs in times.items():
        out.append(f"| `{label}` | {cell([w for w, _ in xs])} | {cell([c for _, c in xs])} |")
    out.append("")
    out.append("| ratio (medians) | wall | CPU | target (wall) |")
    out.append("|---|---:|---:|---|")
    for name, a, b, target in ratios:
        wa, wb = (statistics.median([w for w, _ in times[k]]) for k in (a, b))
        ca, cb = (statistics.median([c for _, c in times[k]]) for k in (a, b))
        out.append(f"| {name} | {wb / wa:.2f}x | {cb / ca:.2f}x | {target} |")
    out.append("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--uringkit', default=os.path.join(ROOT, 'build', 'uringkit'))
    ap.add_argument('--xxhsum', default='/usr/bin/xxhsum')
    ap.add_argument('--dir', default='/tmp/uringkit-xxhsum-bench')
    ap.add_argument('--rounds', type=int, default=11)
    ap.add_argument('--files', type=int, default=10000)
    ap.add_argument('--big', default='1g')
    ap.add_argument('--only', default='tree,big,check')
    ap.add_argument('--out', default=os.path.join(HERE, 'results', 'xxhsum.md'))
    a = ap.parse_args()
    uk, xx = os.path.abspath(a.uringkit), a.xxhsum
    only = set(a.only.split(','))
    os.makedirs(a.dir, exist_ok=True)
    load_before = loadavg()

    names = []
    for i in range(a.files):
        d = f"t/d{i // 100:03d}"
        os.makedirs(os.path.join(a.dir, d), exist_ok=True)
        name = f"{d}/f{i % 100:02d}"
        names.append(name)
        path = os.path.join(a.dir, name)
        if not os.path.exists(path) or os.path.getsize(path) != 4096:
            with open(path, 'wb') as f:
                f.write(os.urandom(4096))

    out = []
    if 'tree' in only:
        rows = []
        for h in ('-H1', '-H2', '-H3'):
            rows += [(f"xxhsum {h} NAMES", [xx, h] + names),
                     (f"uringkit xxhsum {h} NAMES", [uk, 'xxhsum', h] + names),
                     (f"uringkit readfiles {h} NAMES", [uk, 'readfiles', h] + names)]
        rows += [("xxhsum -H1 NAMES (A/A)", [xx, '-H1'] + names),
                 ("uringkit xxhsum -H1 NAMES (A/A)", [uk, 'xxhsum', '-H1'] + names)]
        t = measure(rows, a.rounds, a.dir)
        ratios = [("A/A: xxhsum -H1 / its repeat", "xxhsum -H1 NAMES", "xxhsum -H1 NAMES (A/A)",
                   "1.00 = no noise"),
                  ("A/A: uringkit xxhsum -H1 / its repeat", "uringkit xxhsum -H1 NAMES",
                   "uringkit xxhsum -H1 NAMES (A/A)", "1.00 = no noise")]
        for h in ('-H1', '-H2', '-H3'):
            ratios.append((f"xxhsum {h} / uringkit xxhsum {h}", f"uringkit xxhsum {h} NAMES",
                           f"xxhsum {h} NAMES", ">= 2x"))
            ratios.append((f"xxhsum {h} / uringkit readfiles {h}",
                           f"uringkit readfiles {h} NAMES", f"xxhsum {h} NAMES", ">= 2x"))
        for h in ('-H2', '-H3'):
            ratios.append((f"uringkit readfiles -H1 / readfiles {h}",
                           f"uringkit readfiles {h} NAMES", "uringkit readfiles -H1 NAMES",
                           ">= 1x (as fast as -H1)"))
        table(f"{a.files:,} files of 4 KiB, cached", t, ratios, out)

    if 'big' in only:
        big = os.path.join(a.dir, 'big')
        size = parse_size(a.big)
        with open(big, 'wb') as f:
            chunk = os.urandom(1 << 20)
            for _ in range(size >> 20):
                f.write(chunk)
        try:
            rows = []
            for h in ('-H1', '-H2', '-H3'):
                rows += [(f"xxhsum {h} big", [xx, h, 'big']),
                         (f"uringkit xxhsum {h} big", [uk, 'xxhsum', h, 'big']),
                         (f"uringkit readfiles {h} big", [uk, 'readfiles', h, 'big'])]
            rows.append(("xxhsum -H1 big (A/A)", [xx, '-H1', 'big']))
            t = measure(rows, a.rounds, a.dir)
            ratios = [("A/A: xxhsum -H1 / its repeat", "xxhsum -H1 big", "xxhsum -H1 big (A/A)",
                       "1.00 = no noise")]
            for h in ('-H1', '-H2', '-H3'):
                ratios.append((f"xxhsum {h} / uringkit xxhsum {h}", f"uringkit xxhsum {h} big",
                               f"xxhsum {h} big", "(whole-process target is on the tree)"))
            for h in ('-H2', '-H3'):
                ratios.append((f"uringkit readfiles -H1 / readfiles {h}",
                               f"uringkit readfiles {h} big", "uringkit readfiles -H1 big",
                               ">= 1x (as fast as -H1)"))
            table(f"one {a.big} file, cached", t, ratios, out)
        finally:
            os.unlink(big)

    if 'check' in only:
        with open(os.path.join(a.dir, 'sums'), 'wb') as f:
            subprocess.run([xx, '-H1'] + names, cwd=a.dir, stdout=f, check=True)
        rows = [("xxhsum -c sums", [xx, '-c', 'sums']),
                ("uringkit xxhsum -c sums", [uk, 'xxhsum', '-c', 'sums']),
                ("uringkit readfiles -c sums", [uk, 'readfiles', '-c', 'sums']),
                ("xxhsum -c sums (A/A)", [xx, '-c', 'sums'])]
        t = measure(rows, a.rounds, a.dir)
        ratios = [("A/A: xxhsum -c / its repeat", "xxhsum -c sums", "xxhsum -c sums (A/A)",
                   "1.00 = no noise"),
                  ("xxhsum -c / uringkit xxhsum -c", "uringkit xxhsum -c sums", "xxhsum -c sums",
                   ">= 2x"),
                  ("xxhsum -c / uringkit readfiles -c", "uringkit readfiles -c sums",
                   "xxhsum -c sums", ">= 2x")]
        table(f"-c of a {a.files:,}-line list (XXH64, the tree's files)", t, ratios, out)

    head = [
        "# uringkit xxhsum and readfiles against xxhsum 0.8.1, whole process\n",
        "Made by:\n", "```",
        "bench/xxhsum_bench.py " + " ".join(sys.argv[1:]), "```\n",
        f"Machine: {cpu_model()}, {os.cpu_count()} CPUs, Linux {platform.release()}; "
        f"{subprocess.run([xx, '--version'], capture_output=True, text=True).stderr.splitlines()[0].strip()}; "
        f"load average {load_before} before, {loadavg()} after.  Every file in the page cache; "
        f"output to /dev/null; {a.rounds} rounds, each command once per round, the order "
        "rotated by one each round.  A ratio is the peer's median over uringkit's: above 1, "
        "uringkit took less time.  A ratio within the A/A pair's distance from 1 is the same.\n",
    ]
    text = "\n".join(head + out)
    with open(a.out, 'w') as f:
        f.write(text + "\n")
    print(text)


if __name__ == '__main__':
    main()
