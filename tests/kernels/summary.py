#!/usr/bin/env python3
"""Summarises one kernel's run for tests/kernels/run.sh from ctest's JUnit file.

usage: summary.py SERIES PACKAGE ACCEL OUT_DIR
Prints the counts, every failed test and every skipped test with the reason
GoogleTest gave, and a last line `result: ok`, `result: failed` or
`result: did not finish` (no JUnit file: the VM did not boot or timed out).
"""
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def read(path: Path) -> str:
    return path.read_text().strip() if path.exists() else "?"


def skip_reason(output: str) -> str:
    # GoogleTest: "file:line: Skipped\n<reason>\n\n[  SKIPPED ] Suite.Test"
    match = re.search(r": Skipped\n(.*?)\n*\[  SKIPPED \]", output, re.S)
    if match and match.group(1).strip():
        return " ".join(match.group(1).split())
    return "no reason printed"


def main() -> int:
    series, package, accel, out = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
    print(f"kernel {series}: {package}, booted {read(out / 'uname')}, qemu {accel}, "
          f"VM {read(out / 'vm_seconds')} s, ctest {read(out / 'seconds')} s")
    junit = out / "junit.xml"
    if not junit.exists():
        print("no results: the VM did not finish (see console.log)")
        print("result: did not finish")
        return 0
    passed, failed, skipped = [], [], []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name")
        output = case.findtext("system-out") or ""
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            skipped.append((name, skip_reason(output)))
        else:
            passed.append(name)
    total = len(passed) + len(failed) + len(skipped)
    print(f"passed {len(passed)}, failed {len(failed)}, skipped {len(skipped)} (of {total})")
    for name in failed:
        print(f"  FAILED  {name}")
    for name, reason in skipped:
        print(f"  skipped {name}: {reason}")
    print("result: " + ("failed" if failed or total == 0 else "ok"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
