#!/usr/bin/env python3
"""Runs a command and says how much CPU the rest of the machine used meanwhile.

    bench/run_measured.py REPORT COMMAND...

The load average cannot tell whether a benchmark shared its machine: it
counts the benchmark's own threads (a thread pool, an SQPOLL thread, tasks
waiting on O_DIRECT reads) as load.  This measures what matters instead: the
CPU time the whole machine spent (/proc/stat: user, nice, system, irq,
softirq, and steal, the time a hypervisor gave to other guests) minus the
CPU time of the command and its children (getrusage).  REPORT gets one line:
"WALL_S JOB_CPU_S OTHER_CPU_S OTHER_SHARE", OTHER_SHARE being the other work's
average share of the machine's CPUs.  Exits with the command's status.
"""
import os
import resource
import subprocess
import sys
import time


def machine_busy_s():
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: run_measured.py REPORT COMMAND...")
    report, cmd = sys.argv[1], sys.argv[2:]
    busy0, job0, t0 = machine_busy_s(), children_cpu_s(), time.monotonic()
    status = subprocess.call(cmd)
    wall = time.monotonic() - t0
    job = children_cpu_s() - job0
    other = max(0.0, machine_busy_s() - busy0 - job)
    share = other / (wall * os.cpu_count()) if wall > 0 else 0.0
    with open(report, "w") as f:
        f.write(f"{wall:.1f} {job:.1f} {other:.1f} {share:.3f}\n")
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
