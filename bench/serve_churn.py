#!/usr/bin/env python3
"""100,000 connections through `uringkit serve`, per engine: descriptors and
memory before and after must not grow.

    bench/serve_churn.py [BUILD_DIR] [CONNECTIONS]     (default: build 100000)

Each connection sends one request (a third `GET /`, a third `GET /stats`,
a third garbage that gets 400) with Connection: close, reads the response to
EOF and closes; the server closes first, so TIME_WAIT stays on its side.
Counts /proc/PID/fd and VmRSS after a 2,000-connection warm-up (pools and
buffers at their size) and again at the end.  Writes bench/results/serve_churn.md.
"""
import os, re, socket, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else "build"
total = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
binary = os.path.join(root, build, "uringkit")
requests = [b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            b"garbage\x01\r\n\r\n"]


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def churn(port, n):
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(10)
        s.sendall(requests[i % 3])
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        if not data.startswith(b"HTTP/1.1 "):
            raise SystemExit(f"connection {i}: bad response {data[:40]!r}")


rows = []
for engine in ("uring", "uring-coro", "epoll"):
    p = subprocess.Popen([binary, "serve", "--engine", engine, "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.search(r":(\d+) \(engine", line)
    if not m:
        p.kill()
        raise SystemExit(f"{engine}: no 'listening' line: {line!r} {p.stderr.read()}")
    port = int(m.group(1))
    churn(port, 2000)
    time.sleep(0.3)
    f0, r0 = fds(p.pid), rss_kib(p.pid)
    t0 = time.time()
    churn(port, total)
    secs = time.time() - t0
    time.sleep(0.3)
    f1, r1 = fds(p.pid), rss_kib(p.pid)
    p.terminate()
    p.wait(timeout=10)
    rows.append((engine, total, f0, f1, r0, r1, secs, p.returncode))
    print(f"{engine}: fds {f0} -> {f1}, RSS {r0} -> {r1} KiB, {total} connections in {secs:.1f} s, exit {p.returncode}",
          file=sys.stderr)

with open(os.path.join(root, "bench", "results", "serve_churn.md"), "w") as out:
    out.write("# uringkit serve: descriptors and memory across many connections\n\n")
    out.write(f"Command: `bench/serve_churn.py {build} {total}`; load average at the end: "
              f"`{open('/proc/loadavg').read().strip()}`.\n\n")
    out.write("| engine | connections | fds after warm-up | fds after | RSS after warm-up (KiB) | RSS after (KiB) | seconds | exit |\n")
    out.write("|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        out.write(f"| {r[0]} | {r[1]:,} | {r[2]} | {r[3]} | {r[4]:,} | {r[5]:,} | {r[6]:.1f} | {r[7]} |\n")
bad = [r for r in rows if r[3] > r[2] or r[7] != 0]
sys.exit(1 if bad else 0)
