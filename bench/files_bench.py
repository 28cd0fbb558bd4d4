#!/usr/bin/env python3
"""Benchmarks for `uringkit readfiles` and `uringkit cp` against their peers,
measured side by side in one run, interleaved (A B C ... A B C ...), medians
with min-max.  Writes bench/results/files_readfiles.md and files_cp.md.

  bench/files_bench.py [--uringkit build/uringkit] [--dir /var/tmp/uringkit-files-bench]
                       [--rounds 7] [--big 1g] [--only readfiles|cp] [--cp-rows small,ext4-big,ext4-tree,xfs]

Peers: a plain synchronous open/read/close loop in C (bench/sync_readfiles.c,
compiled here with cc), Node.js fs.promises.readFile with 64 in flight
(UV_USE_IO_URING=1 and =0), coreutils cp and cp -r.  Needs root for the cold
runs (echo 3 > /proc/sys/vm/drop_caches); without it they are skipped and the
results say so.  The XFS rows copy inside an XFS image (reflink=1) the script
makes and loop-mounts under --dir (root and mkfs.xfs needed; otherwise skipped
and said so), and report the blocks each copy used.
"""
import argparse, os, platform, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sh(cmd, env=None, check=True):
    r = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        sys.exit(f"failed: {cmd}\n{r.stderr}")
    return r


def loadavg():
    return open('/proc/loadavg').read().split()[:3]


def stats(xs):
    return statistics.median(xs), min(xs), max(xs)


def fmt_rate(xs):
    m, lo, hi = stats(xs)
    return f"{m:,.0f} ({lo:,.0f}-{hi:,.0f})"


def fmt_time(xs):
    m, lo, hi = stats(xs)
    return f"{m:.3f} ({lo:.3f}-{hi:.3f})"


# The programs being compared.  Dropping the caches evicts them too, and a
# program read back from disk while it runs is charged for its own loading:
# 10-15 ms for uringkit's binary, against almost nothing for cp, whose
# libraries the warm-up `cat` has just read back.  A user's programs are in
# the cache, so each is read back before a measured run; only the data is cold.
PROGRAMS = []


def drop_caches():
    sh('sync')
    with open('/proc/sys/vm/drop_caches', 'w') as f:
        f.write('3\n')
    for prog in PROGRAMS:
        with open(shutil.which(prog), 'rb') as f:
            while f.read(1 << 20):
                pass
        sh([prog, '--version'])  # and the libraries it loads


def can_drop_caches():
    try:
        drop_caches()
        return True
    except OSError:
        return False


def make_tree(path, files=10000, size=4096):
    if os.path.isdir(path) and len(os.listdir(path)) == files:
        return
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    for i in range(files):
        with open(os.path.join(path, f"f{i:05d}"), 'wb') as f:
            f.write(os.urandom(size))
    sh('sync')


def warm(path):
    sh(f"cat {path}/* > /dev/null" if os.path.isdir(path) else f"cat {path} > /dev/null")


def strace_total(cmd):
    """Total system calls of `cmd` (all threads) by strace -c -f."""
    with tempfile.NamedTemporaryFile(suffix='.strace') as t:
        sh(['strace', '-c', '-f', '-o', t.name] + cmd)
        text = open(t.name).read()
    m = re.search(r'^\s*100\.00\s+\S+\s+\S+\s+(\d+)', text, re.M)
    return int(m.group(1)) if m else None, text


# What the tables alone do not say; kept with every regenerated result.
CP_NOTES = [
    '- The virtual disk behind this machine changes speed from run to run by more than the tools differ: in one',
    '  series of interleaved cold copies of the same 1 GiB file coreutils took 0.55-1.8 s.  Read the cold rows as',
    '  medians of a noisy device, and rerun before drawing a conclusion from one of them.',
    '- Warm `cp -r` drops the caches and reads the source tree back in before each run.  Right after the previous',
    '  run\'s copy is deleted, ext4 avoids reusing those inodes for ~30 s, and while their inode-table blocks are',
    '  cached every create scans them (`recently_deleted()`: 30% of all samples in `perf`, with io-wq workers',
    '  spinning on the directory lock behind it): both tools then took 4-9 s instead of ~0.5 s.',
    '- Creating 10,000 empty files in one directory takes 0.25-0.33 s here with a plain C loop, and ext4 lets only',
    '  one create into a directory at a time.  That bounds warm `cp -r` of a flat tree at about 2x coreutils on',
    '  any number of CPUs, before a single byte is copied.',
    '- A cached tree\'s small files are copied on 4 threads with plain read/write (cachestat on 16 of them says',
    '  whether the tree is cached); on the ring every create and every ext4 buffered write is handed to an io-wq',
    '  worker, and that hand-off, not the copy, was the ring\'s time warm.  The `--copy-threads 0` row is the ring',
    '  in the same rounds.  A cold tree stays on the ring, which keeps the disk busy.',
    '- A cold source of 8 MiB or more (under half of it cached, by `cachestat(2)`) is read with O_DIRECT, 16 reads',
    '  of 1 MiB in flight; the row with `--source-reads cache` is the page-cache path timed in the same rounds.',
    '  Over ten rotated series (6-15 rounds each, five of them this script) the direct path\'s median was 0.57x to',
    '  1.38x the cache path\'s, 0.96x as a geometric mean: no wall-clock difference this disk lets us see.  What it',
    '  does change is CPU: user + system time of a cold copy was 0.52 s direct (coreutils 0.53 s) against 1.25 s',
    '  through the cache (medians of 5), since the bytes are copied once instead of twice, and the source no',
    '  longer pushes other files out of the page cache.',
    '- Slow runs of the warm 1 GiB copy (1.1-1.6 s against ~0.4 s) came in up to a quarter of the runs of every',
    '  build, this one and the one before it alike.  `perf` of a slow run shows the same work as a fast one (half',
    '  of it the write\'s `memcpy` into the page cache) stretched over three times as long, with a third of the',
    '  CPU idle: memory the virtual machine is slow to hand over, not a different code path.',
    '- Through the cache (a warm source) the defaults are 8 read -> write pairs of 256 KiB with',
    '  `POSIX_FADV_SEQUENTIAL` on the source: without the hint, reads in flight at neighbouring offsets defeated',
    '  readahead and cold copies took twice as long.',
    '- In series of cold copies every third run or so was slow whichever tool ran in it (one series: 0.62-0.70 s,',
    '  then 0.85-1.16 s in every third slot).  The tools alternate who goes first each round; an earlier fixed order',
    '  had made a flag on the reads (IOSQE_ASYNC) look twice as fast cold, which rotating the order disproved.',
    '- coreutils copies a large file with `copy_file_range` (an in-kernel splice: one copy, no user memory).  A',
    '  prototype of splice chains on io_uring (file -> pipe -> file, 2-16 in flight) did not beat it here either.',
]


def bench_readfiles(a, uk, work, out):
    tree = os.path.join(work, 'tree')
    make_tree(tree)
    cc = os.path.join(work, 'sync_readfiles')
    sh(['cc', '-O2', '-o', cc, os.path.join(HERE, 'sync_readfiles.c'), '-lxxhash'])
    node = shutil.which('node')
    mjs = os.path.join(HERE, 'files_node_readfile.mjs')
    warm(tree)

    def uk_rate(*extra):
        r = sh([uk, 'readfiles', '--summary', *extra, tree])
        return float(re.search(r'([\d.]+) files/s', r.stderr).group(1))

    def c_rate(*extra):
        return float(sh([cc, *extra, tree]).stdout.split()[3])

    def node_rate(io_uring):
        env = dict(os.environ, UV_USE_IO_URING=io_uring)
        return float(sh([node, mjs, tree, '64'], env=env).stdout.split()[3])

    runs = [
        ('uringkit readfiles --hash none (ring per CPU)', f'{uk} readfiles --hash none --summary TREE', lambda: uk_rate('--hash', 'none')),
        ('C sync open/read/close loop', f'sync_readfiles TREE', lambda: c_rate()),
        ('uringkit readfiles --threads 1 --hash none (one ring)', f'{uk} readfiles --threads 1 --hash none --summary TREE',
         lambda: uk_rate('--threads', '1', '--hash', 'none')),
        ('uringkit readfiles (ring, XXH64)', f'{uk} readfiles --summary TREE', lambda: uk_rate()),
        ('C sync loop + XXH64', f'sync_readfiles --hash TREE', lambda: c_rate('--hash')),
        ('uringkit readfiles --async --hash none (chains on io-wq workers)', f'{uk} readfiles --async --hash none --summary TREE',
         lambda: uk_rate('--async', '--hash', 'none')),
        ('uringkit readfiles --engine threadpool --hash none', f'{uk} readfiles --engine threadpool --hash none --summary TREE',
         lambda: uk_rate('--engine', 'threadpool', '--hash', 'none')),
        ('uringkit readfiles --engine sync --hash none', f'{uk} readfiles --engine sync --hash none --summary TREE',
         lambda: uk_rate('--engine', 'sync', '--hash', 'none')),
    ]
    if node:
        runs += [
            ('Node.js readFile x64, UV_USE_IO_URING=1', f'UV_USE_IO_URING=1 node bench/files_node_readfile.mjs TREE 64', lambda: node_rate('1')),
            ('Node.js readFile x64, UV_USE_IO_URING=0', f'UV_USE_IO_URING=0 node bench/files_node_readfile.mjs TREE 64', lambda: node_rate('0')),
        ]
    load_before = loadavg()
    results = {name: [] for name, _, _ in runs}
    for _ in range(a.rounds):
        for name, _, fn in runs:
            results[name].append(fn())
    load_after = loadavg()
    sc_total, sc_text = strace_total([uk, 'readfiles', '--hash', 'none', tree])
    internal = re.search(r'(\d+) system calls, ([\d.]+) per file',
                         sh([uk, 'readfiles', '--hash', 'none', '--summary', tree]).stderr)
    sc_c, _ = strace_total([cc, tree])

    med = {name: statistics.median(v) for name, v in results.items()}
    names = [name for name, _, _ in runs]
    ring = med[names[0]]
    lines = [
        '# readfiles: 10,000 files of 4 KiB, warm page cache',
        '',
        f'Command: `bench/files_bench.py --only readfiles --rounds {a.rounds}` ({time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}).',
        f'Machine: {platform.node() and "2-core VM"}, kernel {platform.release()}, {os.cpu_count()} CPUs, '
        f'ext4; load average before {" ".join(load_before)}, after {" ".join(load_after)} '
        '(figures are medians of interleaved rounds).',
        '',
        'Each program times only its reading loop (the file list is gathered first, untimed), so process start-up '
        'and Node.js start-up are excluded for everyone.  files/s, median (min-max) of '
        f'{a.rounds} interleaved rounds:',
        '',
        '| run | files/s | vs ring (hash none) |',
        '|---|---|---|',
    ]
    for name, cmd, _ in runs:
        m = statistics.median(results[name])
        lines.append(f'| {name} | {fmt_rate(results[name])} | {ring / m:.2f}x |')
    c = med['C sync open/read/close loop']
    lines += ['', f'**readfiles (ring per CPU) / C sync loop: {ring / c:.2f}x** (target >= 1.5x); '
              f'with XXH64 on both sides: {med["uringkit readfiles (ring, XXH64)"] / med["C sync loop + XXH64"]:.2f}x; '
              f'one ring on one thread: {med[names[2]] / c:.2f}x.']
    if node:
        n1 = med['Node.js readFile x64, UV_USE_IO_URING=1']
        n0 = med['Node.js readFile x64, UV_USE_IO_URING=0']
        lines += [f'**readfiles (ring) / Node.js readFile: {ring / n1:.2f}x (UV_USE_IO_URING=1), {ring / n0:.2f}x (=0)** (target >= 4x).']
    lines += ['', '## System calls',
              '',
              f'- readfiles' + (f' counts {internal.group(1)} system calls for the job itself ({internal.group(2)} per file: io_uring_enter, '
              'register calls, the directory walk).' if internal else ''),
              f'- `strace -c -f uringkit readfiles --hash none TREE`: {sc_total} system calls in total for the whole process '
              f'(start-up, ring setup, output included): {sc_total / 10000:.3f} per file.',
              f'- `strace -c -f sync_readfiles TREE`: {sc_c} ({sc_c / 10000:.2f} per file).',
              '', '```', sc_text.strip(), '```', '',
              'Commands (TREE = 10,000 files of 4 KiB made by the script):', '']
    lines += [f'- {name}: `{cmd}`' for name, cmd, _ in runs]
    with open(os.path.join(out, 'files_readfiles.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


def timed(cmd, before=None):
    if before:
        before()
    t0 = time.perf_counter()
    sh(cmd)
    return time.perf_counter() - t0


def path_taken(cmd, before=None):
    """`uringkit cp` run once with --summary, after the rounds' `before` (a cold row's
    path can differ from a warm one's): how its files went ("reflink", "copy_file_range x1, ring x50")."""
    if before:
        before()
    r = sh(cmd[:2] + ['--summary'] + cmd[2:])
    m = re.search(r'(\d+) reflink, (\d+) copy_file_range, (\d+) ring, (\d+) read/write', r.stderr)
    if not m:
        return '?'
    parts = [(n, int(k)) for n, k in zip(['reflink', 'copy_file_range', 'ring', 'read/write'], m.groups()) if int(k)]
    return ', '.join(n if len(parts) == 1 else f'{n} x{k}' for n, k in parts)


class XfsImage:
    """An XFS file system with reflink in an image file under `work`, loop-mounted; None when it cannot be."""

    def __init__(self, work, size_gib=4):
        self.mnt = os.path.join(work, 'xfs')
        self.image = os.path.join(work, 'xfs.img')
        self.why = None
        if os.geteuid() != 0:
            self.why = 'not root: cannot mount an XFS image'
        elif not shutil.which('mkfs.xfs'):
            self.why = 'mkfs.xfs not installed (xfsprogs)'
        if self.why:
            return
        os.makedirs(self.mnt, exist_ok=True)
        if os.path.ismount(self.mnt):
            return
        if not os.path.exists(self.image):
            with open(self.image, 'wb') as f:
                f.truncate(size_gib << 30)
            sh(['mkfs.xfs', '-q', '-f', '-m', 'reflink=1', self.image])
        r = sh(['mount', '-o', 'loop', '-t', 'xfs', self.image, self.mnt], check=False)
        if r.returncode != 0:
            self.why = 'mount -o loop -t xfs failed: ' + r.stderr.strip()

    def used(self):
        os.sync()
        st = os.statvfs(self.mnt)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def close(self):
        if not self.why and os.path.ismount(self.mnt):
            sh(['umount', self.mnt], check=False)


def bench_cp(a, uk, work, out):
    PROGRAMS[:] = [uk, 'cp']
    rows_wanted = set(a.cp_rows.split(','))
    big = os.path.join(work, 'big')
    size = parse_size(a.big)
    if 'ext4-big' in rows_wanted and (not os.path.exists(big) or os.path.getsize(big) != size):
        sh(f'head -c {size} /dev/urandom > {big} && sync')
    tree = os.path.join(work, 'tree')
    if 'ext4-tree' in rows_wanted:
        make_tree(tree)
    dst = os.path.join(work, 'dst')
    tiny = os.path.join(work, 'tiny')
    with open(tiny, 'wb') as f:
        f.write(b'abc')
    xfs = XfsImage(work) if 'xfs' in rows_wanted else None
    notes = []

    def clean():
        sh(['rm', '-rf', dst])
        if xfs and not xfs.why:
            sh(['rm', '-rf', os.path.join(xfs.mnt, 'dst')])
        sh('sync')

    cold_ok = can_drop_caches()
    rows = []
    load_before = loadavg()

    def pair(label, ours, theirs, before, rounds, variant=None):
        # `variant`: (label, command), a second uringkit setting timed in the
        # same rounds, so both face the same moods of the disk.
        # coreutils runs twice a round: the two are an A/A pair, the noise
        # any difference between the tools has to stand out from.
        runs = [('uringkit', ours), ('coreutils', theirs), ('coreutils again', theirs)] + \
            ([('variant', variant[1])] if variant else [])
        res = {who: [] for who, _ in runs}
        for i in range(rounds):
            # Rotate who goes first: on this disk some slots in a series
            # are slow whoever runs in them, and a fixed order would pin
            # that on one tool.
            for who, cmd in runs[i % len(runs):] + runs[:i % len(runs)]:
                clean()
                res[who].append(timed(cmd, before))
        clean()
        path = path_taken(ours, before)
        clean()
        c = statistics.median(res['coreutils'])
        rows.append((label, ' '.join(ours), ' '.join(theirs), res, c / statistics.median(res['uringkit']), path))
        if variant:
            vpath = path_taken(variant[1], before)
            clean()
            rows.append((variant[0], ' '.join(variant[1]), ' '.join(theirs),
                         {'uringkit': res['variant'], 'coreutils': res['coreutils'],
                          'coreutils again': res['coreutils again']}, c / statistics.median(res['variant']),
                         vpath))

    if 'small' in rows_wanted:
        # A lone 3-byte file: the whole process, start-up included, so what a
        # copy sets up before it knows the size shows (coreutils: ~4 ms).
        pair('cp of one 3-byte file', [uk, 'cp', tiny, dst], ['cp', tiny, dst], None, a.rounds * 3,
             ('cp of one 3-byte file, `--engine ring`', [uk, 'cp', '--engine', 'ring', tiny, dst]))
    if 'ext4-big' in rows_wanted:
        pair(f'cp of one {a.big} file, warm', [uk, 'cp', big, dst], ['cp', big, dst], lambda: warm(big), a.rounds,
             (f'cp of one {a.big} file, warm, `--engine ring`', [uk, 'cp', '--engine', 'ring', big, dst]))
        if cold_ok:
            # The ring path in the same rounds: O_DIRECT reads of the cold source.
            pair(f'cp of one {a.big} file, cold (caches dropped before each run)', [uk, 'cp', big, dst],
                 ['cp', big, dst], drop_caches, a.rounds,
                 (f'cp of one {a.big} file, cold, `--engine ring`', [uk, 'cp', '--engine', 'ring', big, dst]))
    if 'ext4-tree' in rows_wanted:
        # Warm tree: drop the caches, then read the source back in.  Without the
        # drop, ext4 keeps the inode-table blocks of the 10,000 files the previous
        # run's copy just deleted, and for ~30 s after a delete every new inode
        # makes it scan them (recently_deleted() in find_inode_bit()): both tools
        # then take 4-9 s, almost all of it in that scan.
        # The variant: the ring's chains for the small files instead of the
        # read/write threads a cached tree gets (copy_pool.cpp).
        pair('cp -r of 10,000 files of 4 KiB, warm', [uk, 'cp', '-r', tree, dst], ['cp', '-r', tree, dst],
             (lambda: (drop_caches(), warm(tree))) if cold_ok else (lambda: warm(tree)), a.rounds,
             ('cp -r of 10,000 files of 4 KiB, warm, `--copy-threads 0` (the ring)',
              [uk, 'cp', '-r', '--copy-threads', '0', tree, dst]))
        if cold_ok:
            pair('cp -r of 10,000 files of 4 KiB, cold', [uk, 'cp', '-r', tree, dst], ['cp', '-r', tree, dst],
                 drop_caches, a.rounds)
    if xfs and xfs.why:
        notes.append(f'- XFS rows skipped: {xfs.why}.')
    elif xfs:
        xbig, xtree, xdst = (os.path.join(xfs.mnt, n) for n in ('big', 'tree', 'dst'))
        if not os.path.exists(xbig) or os.path.getsize(xbig) != size:
            sh(f'head -c {size} /dev/urandom > {xbig} && sync')
        make_tree(xtree)
        for who, cmd in (('uringkit', [uk, 'cp', xbig, xdst]), ('coreutils', ['cp', xbig, xdst])):
            clean()
            before = xfs.used()
            sh(cmd)
            notes.append(f'- XFS, {a.big} file: {who} used {(xfs.used() - before) / 1048576:.1f} MiB of new blocks.')
        for who, cmd in (('uringkit', [uk, 'cp', '-r', xtree, xdst]), ('coreutils', ['cp', '-r', xtree, xdst])):
            clean()
            before = xfs.used()
            sh(cmd)
            notes.append(f'- XFS, tree of 10,000 x 4 KiB: {who} used {(xfs.used() - before) / 1048576:.1f} MiB '
                         '(inodes and directories; the data is shared).')
        clean()
        pair(f'XFS (reflink=1), cp of one {a.big} file, warm', [uk, 'cp', xbig, xdst], ['cp', xbig, xdst],
             lambda: warm(xbig), a.rounds,
             (f'XFS, cp of one {a.big} file, `--reflink=never`', [uk, 'cp', '--reflink=never', xbig, xdst]))
        pair('XFS (reflink=1), cp -r of 10,000 files of 4 KiB, warm', [uk, 'cp', '-r', xtree, xdst],
             ['cp', '-r', xtree, xdst], (lambda: (drop_caches(), warm(xtree))) if cold_ok else (lambda: warm(xtree)),
             a.rounds)
    load_after = loadavg()
    clean()
    sc_uk = sc_ring = sc_cu = internal = None
    if 'ext4-tree' in rows_wanted:
        warm(tree)
        sc_uk, _ = strace_total([uk, 'cp', '-r', tree, dst])
        clean()
        sc_ring, _ = strace_total([uk, 'cp', '-r', '--copy-threads', '0', tree, dst])
        clean()
        sc_cu, _ = strace_total(['cp', '-r', tree, dst])
        clean()
        internal = re.search(r'(\d+) system calls', sh([uk, 'cp', '-r', '--summary', tree, dst]).stderr)
        clean()
    if xfs:
        xfs.close()

    lines = ['# cp: one large file and a 10,000-file tree, against coreutils cp ' + sh(['cp', '--version']).stdout.split('\n')[0].split()[-1],
             '',
             f'Command: `bench/files_bench.py --only cp --rounds {a.rounds} --big {a.big} --cp-rows {a.cp_rows}` '
             f'({time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}).',
             f'Kernel {platform.release()}, {os.cpu_count()} CPUs, ext4 on a virtual disk; load average before {" ".join(load_before)}, '
             f'after {" ".join(load_after)} (interleaved rounds, medians).',
             'Wall time of the whole command, seconds, median (min-max); the destination is removed and `sync` run '
             'between runs (untimed).  Neither tool fsyncs.' + ('' if cold_ok else
             ' Cold runs skipped: /proc/sys/vm/drop_caches is not writable here.'),
             'The last column pairs the two runs of each round, which ran back to back and so met the same mood of the '
             'disk: its median is steadier than the ratio of the medians when the disk\'s speed drifts.',
             'The path column is what `uringkit cp --summary` reported for the same command.',
             'coreutils also ran a second time in each round (the A/A column: first run\'s time / second\'s); the verdict '
             'is "faster" or "slower" only when every round\'s speed-up lies on one side of 1, else "the same".',
             '', '| job | uringkit path | uringkit | coreutils | speed-up (coreutils time / uringkit time) | '
             'per-round speed-up, median (min-max) | A/A, coreutils twice | verdict |',
             '|---|---|---|---|---|---|---|---|']
    for label, ours, theirs, res, ratio, path in rows:
        paired = [c / u for u, c in zip(res['uringkit'], res['coreutils'])]
        aa = [c / c2 for c, c2 in zip(res['coreutils'], res['coreutils again'])]
        verdict = 'faster' if min(paired) > 1 else 'slower' if max(paired) < 1 else 'the same'
        lines.append(f'| {label} | {path} | {fmt_time(res["uringkit"])} | {fmt_time(res["coreutils"])} | {ratio:.2f}x | '
                     f'{statistics.median(paired):.2f}x ({min(paired):.2f}-{max(paired):.2f}) | '
                     f'{statistics.median(aa):.2f}x ({min(aa):.2f}-{max(aa):.2f}) | {verdict} |')
    lines += ['', 'Targets: large file >= 1.0x warm and cold on ext4, within 1.2x on XFS with no new blocks; '
              'tree >= 1.2x on ext4, >= 1.0x on XFS.', '']
    if notes:
        lines += ['## Blocks used on XFS', '', *notes, '']
    if sc_uk:
        lines += ['## System calls for cp -r of the 10,000-file tree', '',
                  f'- `strace -c -f uringkit cp -r TREE DST`: {sc_uk} in total ({sc_uk / 10000:.3f} per file); '
                  f'the copy itself counts {internal.group(1) if internal else "?"} (the tree cached: its small '
                  'files on read/write threads).',
                  f'- `strace -c -f uringkit cp -r --copy-threads 0 TREE DST` (the ring\'s chains): {sc_ring} '
                  f'({sc_ring / 10000:.3f} per file).',
                  f'- `strace -c -f cp -r TREE DST`: {sc_cu} ({sc_cu / 10000:.2f} per file).', '']
    lines += ['Commands:', '']
    for label, ours, theirs, _, _, _ in rows:
        lines.append(f'- {label}: `{ours}` vs `{theirs}`')
    lines += ['', '## Notes', '', *CP_NOTES]
    with open(os.path.join(out, 'files_cp.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


def parse_size(s):
    m = re.fullmatch(r'(\d+)([kmg]?)', s.lower())
    return int(m.group(1)) * {'': 1, 'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}[m.group(2)]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--uringkit', default=os.path.join(ROOT, 'build', 'uringkit'))
    p.add_argument('--dir', default='/var/tmp/uringkit-files-bench')
    p.add_argument('--rounds', type=int, default=7)
    p.add_argument('--big', default='1g')
    p.add_argument('--only', choices=['readfiles', 'cp'])
    p.add_argument('--cp-rows', default='small,ext4-big,ext4-tree,xfs',
                   help='which cp rows: small (a 3-byte file), ext4-big, ext4-tree, xfs (an XFS image, as root)')
    p.add_argument('--out', default=os.path.join(HERE, 'results'))
    a = p.parse_args()
    uk = os.path.abspath(a.uringkit)
    if not os.access(uk, os.X_OK):
        sys.exit(f'{uk}: not built (make build, or pass --uringkit PATH)')
    os.makedirs(a.dir, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    if a.only in (None, 'readfiles'):
        bench_readfiles(a, uk, a.dir, a.out)
    if a.only in (None, 'cp'):
        bench_cp(a, uk, a.dir, a.out)


if __name__ == '__main__':
    main()
