#!/usr/bin/env python3
"""Every --json document the command writes is valid against docs/schema/.

Runs each subcommand that writes JSON with the shortest settings it allows
(probe; bench on an 8 MiB temporary file; bench net on loopback; bench
--replay of a small generated trace; load against a `serve --port 0`
started here) and validates what it wrote with python3-jsonschema.  The
schema is closed (no property it does not name), so a renamed field fails
here as well as a missing one.  Exit 77 (skipped) where python3-jsonschema
is not installed.

Usage: json_schema_test.py URINGKIT_BINARY SCHEMA_FILE
"""
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (Debian: python3-jsonschema): the --json documents "
          "are not validated")
    sys.exit(77)

uringkit, schema_path = sys.argv[1], sys.argv[2]
with open(schema_path) as f:
    root = json.load(f)
jsonschema.Draft202012Validator.check_schema(root)
failures = []


def validator(name):
    return jsonschema.Draft202012Validator(
        {"$schema": root["$schema"], "$defs": root["$defs"], "$ref": f"#/$defs/{name}"})


def check(name, doc):
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:10]:
        failures.append(f"{name}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message[:300]}")
    # The file as a whole accepts every document (its oneOf picks by "tool").
    if not errors and not jsonschema.Draft202012Validator(root).is_valid(doc):
        failures.append(f"{name}: valid against $defs/{name} but not against the whole file")
    # The header every document starts with, in its order.
    if list(doc)[:4] != ["schema", "tool", "version", "host"]:
        failures.append(f"{name}: starts {list(doc)[:4]}, not schema, tool, version, host")
    print(f"{name}: {'valid' if not errors else f'{len(errors)} errors'}")


def run(args, **kw):
    r = subprocess.run([uringkit] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)}: status {r.returncode}\n{r.stderr}{r.stdout}")
    return r


with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, TMPDIR=tmp)
    out = os.path.join(tmp, "out.json")

    doc = json.loads(run(["probe", "--json", "--dir", tmp]).stdout)
    check("probe", doc)

    run(["bench", "--size", "8m", "--runtime", "50ms", "--rounds", "3", "--iodepth", "1",
         "--engines", "pread,uring", "--json", out], env=env)
    with open(out) as f:
        check("bench", json.load(f))

    net = run(["bench", "net", "--engines", "epoll,uring", "--workloads", "echo:1:64",
               "--rounds", "2", "--duration", "50ms", "--json", "-"])
    check("bench_net", json.loads(net.stdout))

    # A one-thread trace of 16 preads of 256 bytes, 1 ms apart, in strace's format.
    data = os.path.join(tmp, "data.bin")
    with open(data, "wb") as f:
        f.write(os.urandom(4096))
    trace = os.path.join(tmp, "reads.strace")
    with open(trace, "w") as f:
        f.write(f'1700000000.000000 openat(AT_FDCWD, "{data}", O_RDONLY) = 3 <0.000010>\n')
        for i in range(16):
            f.write(f'{1700000000.001 + i * 0.001:.6f} pread64(3, ""..., 256, {i * 256}) = 256 '
                    f'<0.000005>\n')
    run(["bench", "--replay", trace, "--engines", "pread,uring", "--rounds", "2", "--json", out])
    with open(out) as f:
        check("replay", json.load(f))

    serve = subprocess.Popen([uringkit, "serve", "--port", "0"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        line = serve.stdout.readline()
        port = re.search(r"listening on \S+:(\d+)", line)
        if not port:
            sys.exit(f"serve did not say where it listens: {line!r} {serve.stderr.read()}")
        load = json.loads(run(["load", "--duration", "200ms", "--json", "-",
                               f"http://127.0.0.1:{port.group(1)}/"]).stdout)
        check("load", load)
    finally:
        serve.terminate()
        serve.wait(timeout=30)

    # Closed: a field under a name the schema does not know is an error.
    load["latency_us"] = load["lat_ns"]
    if validator("load").is_valid(load):
        failures.append("load: a document with the old latency_us passed")

for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
