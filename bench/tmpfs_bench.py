#!/usr/bin/env python3
"""The tools on tmpfs, where io_uring hands every read to an io-wq worker
(no FMODE_NOWAIT), and `readfiles -` against `readfiles DIR`.  Each table
runs its rows side by side in one run, the order rotated every round, with
an A/A row (the same command twice) to size the noise; medians with min-max,
and ratios taken within each round.  Writes bench/results/tmpfs_handoff.md.

  bench/tmpfs_bench.py [--uringkit build/uringkit] [--rounds 7] [--only bench|cp|readfiles]

Tables: `bench` auto vs pread (4 KiB randread, 256 MiB in /dev/shm, depth 1
and 32, uring shown for what auto avoids); cp of a 256 MiB file within
/dev/shm against coreutils cp, copy_file_range (uringkit cp --engine kernel)
against read/write calls (dd bs=256k) and the ring; cp -r of 3,000 x 4 KiB
files against coreutils cp -r; readfiles over a list of 10,000 cached 4 KiB
files (`readfiles -`) against `readfiles DIR` over the same files and a C
open/read/close loop over the same list (bench/sync_readfiles.c --hash -)
and the sync engine (plain calls, one file at a time), whole processes, in
/dev/shm and in /tmp.
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from files_bench import HERE, ROOT, fmt_time, loadavg, sh, stats  # noqa: E402


def rounds_of(rows, n):
    """Runs every row once per round, the order rotated by one each round;
    returns {label: [(wall, cpu) seconds...]}, round by round, for paired ratios."""
    times = {label: [] for label, _, _ in rows}
    for r in range(n):
        order = rows[r % len(rows):] + rows[:r % len(rows)]
        for label, _, run in order:
            times[label].append(run())
    return times


def ratio_cell(times, a, b, k):
    """a's time over b's (k: 0 wall, 1 CPU), round by round: median (min-max)."""
    rs = [x[k] / y[k] for x, y in zip(times[a], times[b])]
    m, lo, hi = stats(rs)
    return f"{m:.2f} ({lo:.2f}-{hi:.2f})"


def timed(cmd, before=None, stdin=None):
    """(wall seconds, CPU seconds) of one whole process.  The CPU is user +
    system of the child and its threads, io-wq workers included (they are
    threads of the process): on a shared, loaded machine it moves less than
    the wall time, which waits for CPUs others hold."""
    if before:
        before()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, shell=isinstance(cmd, str), stdin=stdin, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    t = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"failed: {cmd}\n{r.stderr}")
    return t, (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)


def table(out, title, command, rows, times, ratios):
    out.append(f"\n## {title}\n\n`{command}`\n")
    out.append("| row | command | wall s, median (min-max) | CPU s, median (min-max) |\n"
               "|---|---|---|---|")
    for label, cmd, _ in rows:
        wall = [x[0] for x in times[label]]
        cpu = [x[1] for x in times[label]]
        out.append(f"| {label} | `{cmd}` | {fmt_time(wall)} | {fmt_time(cpu)} |")
    out.append("\n| a / b, per round | wall, median (min-max) | CPU, median (min-max) |\n"
               "|---|---|---|")
    for a, b in ratios:
        out.append(f"| {a} / {b} | {ratio_cell(times, a, b, 0)} | {ratio_cell(times, a, b, 1)} |")


def bench_engines(a, uk, out):
    doc_path = os.path.join(tempfile.mkdtemp(prefix='uringkit-tmpfs-'), 'bench.json')
    cmd = [uk, 'bench', '--size', '256m', '--bs', '4k', '--rw', 'randread', '--iodepth', '1,32',
           '--engines', 'auto,pread,pread,uring', '--rounds', str(a.rounds), '--runtime', '0.3',
           '--json', doc_path]
    env = dict(os.environ, TMPDIR='/dev/shm')
    sh(cmd, env=env)
    doc = json.load(open(doc_path))
    shutil.rmtree(os.path.dirname(doc_path))
    out.append("\n## bench: auto against pread, 4 KiB random reads of 256 MiB in /dev/shm\n")
    out.append(f"`TMPDIR=/dev/shm {' '.join(cmd[:-2]).replace(uk, 'uringkit')}`\n")
    out.append("| depth | engine | ran | IOPS, median (min-max) | CPU µs per I/O, median (min-max) |\n"
               "|---|---|---|---|---|")
    iops, cpu = {}, {}
    for rnd in doc['runs']:
        for run in rnd['runs']:
            key = (run['iodepth'], run['engine'])
            iops.setdefault(key, []).append(run['ios_per_s'])
            cpu.setdefault(key, []).append(run['cpu_us_per_io'])
    for row in doc['rows']:
        key = (row['iodepth'], row['engine'])
        m, lo, hi = stats(iops[key])
        c, clo, chi = stats(cpu[key])
        out.append(f"| {row['iodepth']} | {row['engine']} | {row.get('ran') or row['engine']} | "
                   f"{m:,.0f} ({lo:,.0f}-{hi:,.0f}) | {c:.2f} ({clo:.2f}-{chi:.2f}) |")
    out.append("\n| depth | a / b, per round | IOPS, median (min-max) | CPU per I/O, median (min-max) |\n"
               "|---|---|---|---|")
    for depth in (1, 32):
        for x, y in (('auto', 'pread'), ('pread#2', 'pread'), ('uring', 'pread')):
            cells = []
            for d in (iops, cpu):
                m, lo, hi = stats([p / q for p, q in zip(d[(depth, x)], d[(depth, y)])])
                cells.append(f"{m:.2f} ({lo:.2f}-{hi:.2f})")
            out.append(f"| {depth} | {x} / {y} | {cells[0]} | {cells[1]} |")
    notes = [n for n in doc.get('notes', []) if 'busy' in n]
    if notes:
        out.append("\nbench said: " + " ".join(notes))


def bench_cp(a, uk, work, out):
    big = os.path.join(work, 'big')
    sh(f"head -c 256M /dev/urandom > {big}")
    dst = os.path.join(work, 'dst')

    def rm_dst():
        if os.path.isdir(dst):
            shutil.rmtree(dst)
        elif os.path.exists(dst):
            os.unlink(dst)

    def row(label, cmd):
        return (label, cmd.replace(uk, 'uringkit').replace(work, 'W'),
                lambda: timed(cmd, rm_dst))  # removing the copy is not timed

    rows = [
        row('uringkit cp', f"{uk} cp {big} {dst}"),
        row('coreutils cp', f"cp {big} {dst}"),
        row('coreutils cp (A/A)', f"cp {big} {dst}"),
        row('uringkit cp --engine kernel (copy_file_range)', f"{uk} cp --engine kernel {big} {dst}"),
        row('dd bs=256k (read/write calls)', f"dd if={big} of={dst} bs=256k status=none"),
        row('uringkit cp --engine ring', f"{uk} cp --engine ring {big} {dst}"),
    ]
    times = rounds_of(rows, a.rounds)
    summary = sh([uk, 'cp', '--summary', big, dst]).stderr.strip().splitlines()
    rm_dst()
    table(out, "cp of a 256 MiB file within /dev/shm",
          f"bench/tmpfs_bench.py --only cp --rounds {a.rounds}", rows, times,
          [('uringkit cp', 'coreutils cp'), ('coreutils cp (A/A)', 'coreutils cp'),
           ('uringkit cp --engine kernel (copy_file_range)', 'dd bs=256k (read/write calls)'),
           ('uringkit cp --engine ring', 'uringkit cp --engine kernel (copy_file_range)')])
    out.append("\nuringkit cp --summary said:\n\n```\n" + "\n".join(summary) + "\n```")
    os.unlink(big)

    tree = os.path.join(work, 'tree')
    os.makedirs(tree)
    for i in range(3000):
        with open(os.path.join(tree, f"f{i:04d}"), 'wb') as f:
            f.write(os.urandom(4096))
    rows = [
        row('uringkit cp -r', f"{uk} cp -r {tree} {dst}"),
        row('coreutils cp -r', f"cp -r {tree} {dst}"),
        row('coreutils cp -r (A/A)', f"cp -r {tree} {dst}"),
    ]
    times = rounds_of(rows, a.rounds)
    summary = sh([uk, 'cp', '-r', '--summary', tree, dst]).stderr.strip().splitlines()
    rm_dst()
    table(out, "cp -r of 3,000 x 4 KiB files within /dev/shm",
          f"bench/tmpfs_bench.py --only cp --rounds {a.rounds}", rows, times,
          [('uringkit cp -r', 'coreutils cp -r'), ('coreutils cp -r (A/A)', 'coreutils cp -r')])
    out.append("\nuringkit cp -r --summary said:\n\n```\n" + "\n".join(summary) + "\n```")
    shutil.rmtree(tree)


def bench_readfiles(a, uk, work, out, where):
    tree = os.path.join(work, 'tree')
    for d in range(100):
        os.makedirs(os.path.join(tree, f"d{d:02d}"))
        for i in range(100):
            with open(os.path.join(tree, f"d{d:02d}", f"f{i:02d}"), 'wb') as f:
                f.write(os.urandom(4096))
    listing = os.path.join(work, 'list')
    sh(f"find {tree} -type f | sort > {listing}")  # the walk's order
    cc = os.path.join(work, 'sync_readfiles')
    sh(['cc', '-O2', '-o', cc, os.path.join(HERE, 'sync_readfiles.c'), '-lxxhash'])

    def row(label, cmd, use_list):
        def run():
            if not use_list:
                return timed(cmd)
            with open(listing) as f:
                return timed(cmd, stdin=f)
        shown = cmd.replace(uk, 'uringkit').replace(cc, 'sync_readfiles').replace(work, 'W')
        return (label, shown + (' < W/list' if use_list else ''), run)

    rows = [
        row('readfiles -', f"{uk} readfiles -", True),
        row('readfiles DIR', f"{uk} readfiles {tree}", False),
        row('readfiles DIR (A/A)', f"{uk} readfiles {tree}", False),
        row('C loop over the list', f"{cc} --hash -", True),
        row('readfiles --engine sync DIR', f"{uk} readfiles --engine sync {tree}", False),
    ]
    for _, _, run in rows:
        run()  # warm: the files and the programs in the cache
    times = rounds_of(rows, a.rounds)
    with open(listing) as f:
        summary = subprocess.run([uk, 'readfiles', '--summary', '-'], stdin=f,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True).stderr.strip()
    table(out, f"readfiles over 10,000 cached 4 KiB files in {where} (100 directories), whole processes",
          f"bench/tmpfs_bench.py --only readfiles --rounds {a.rounds}", rows, times,
          [('readfiles -', 'readfiles DIR'), ('readfiles DIR (A/A)', 'readfiles DIR'),
           ('readfiles -', 'C loop over the list'),
           ('readfiles DIR', 'readfiles --engine sync DIR')])
    out.append(f"\n`readfiles --summary -` said: `{summary}`")
    shutil.rmtree(tree)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--uringkit', default=os.path.join(ROOT, 'build', 'uringkit'))
    p.add_argument('--rounds', type=int, default=7)
    p.add_argument('--only', choices=['bench', 'cp', 'readfiles'])
    p.add_argument('--out', default=os.path.join(HERE, 'results', 'tmpfs_handoff.md'))
    a = p.parse_args()
    uk = os.path.abspath(a.uringkit)
    if not os.access(uk, os.X_OK):
        sys.exit(f'{uk}: not built (make build, or pass --uringkit PATH)')
    out = [f"# The tools on tmpfs: io_uring's io-wq hand-off, and `readfiles -`\n",
           f"`bench/tmpfs_bench.py --rounds {a.rounds}" + (f" --only {a.only}`" if a.only else "`"),
           f"\n{time.strftime('%Y-%m-%d')}, Linux {os.uname().release}, {os.cpu_count()} CPUs, "
           f"load average at the start {' '.join(loadavg())}.  Medians of {a.rounds} rounds with "
           f"min-max; every table's rows ran interleaved, order rotated each round; an A/A row "
           f"(the same command twice) shows the noise: a ratio inside its band is \"the same\"."]
    if a.only in (None, 'bench'):
        bench_engines(a, uk, out)
    for where in ('/dev/shm', '/tmp'):
        work = tempfile.mkdtemp(prefix='uringkit-tmpfs-bench-', dir=where)
        try:
            if a.only in (None, 'cp') and where == '/dev/shm':
                bench_cp(a, uk, work, out)
            if a.only in (None, 'readfiles'):
                bench_readfiles(a, uk, work, out, where)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(out) + "\n"
    with open(a.out, 'w') as f:
        f.write(text)
    print(text)


if __name__ == '__main__':
    main()
