"""What the HTTP benchmarks share: nginx as the peer, configured by the
benchmark (one worker, access log off, keep-alive without a request limit,
its temporary paths inside the run's directory), `uringkit serve` started
the same way, and a free loopback port.  Every process started is appended
to `procs`, for the caller to stop."""
import os, re, shutil, socket, subprocess, sys, time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_nginx(tmp, procs, server_block, http_extra="", cpu=1):
    """nginx pinned to `cpu` with `server_block` (its `listen` is added);
    returns (port, worker pid)."""
    port = free_port()
    d = os.path.join(tmp, "nginx")
    os.makedirs(d)
    conf = f"""worker_processes 1;
daemon off;
master_process on;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; multi_accept on; }}
http {{
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
{http_extra}
  server {{
    listen 127.0.0.1:{port} backlog=4096;
{server_block}
  }}
}}
"""
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(conf)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    p = subprocess.Popen(["taskset", "-c", str(cpu), nginx, "-c", os.path.join(d, "nginx.conf"), "-p", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs.append(p)
    for _ in range(200):  # the worker is the master's child
        try:
            kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
        except OSError:
            kids = []
        if kids:
            return port, int(kids[0])
        time.sleep(0.05)
    sys.exit(f"nginx started no worker (see {d}/error.log)")


def start_serve(binary, engine, procs, extra=(), cpu=1):
    """`uringkit serve` on a free port, pinned to `cpu`; returns (port, pid)."""
    p = subprocess.Popen(["taskset", "-c", str(cpu), binary, "serve", "--engine", engine, "--port", "0",
                          "--idle-timeout", "0", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(p)
    m = re.search(r":(\d+) \(engine", p.stdout.readline())
    if not m:
        sys.exit(f"serve --engine {engine} did not start: {p.stderr.read()}")
    return int(m.group(1)), p.pid


def cpu_seconds(pid):
    """utime + stime of process `pid`, all its threads (io-wq workers too), in seconds."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_all(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()
