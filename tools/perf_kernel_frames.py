#!/usr/bin/env python3
"""perf_kernel_frames.py - whose time in the Linux kernel: for a `perf record -g` run, each
sample spent in the kernel (page faults, system calls) is charged to its first user-space frame,
the code whose fault or call it was.

    perf record -e cpu-clock -F 199 -g -o perf.data -- mpirun ... wrf.exe
    perf script -i perf.data --comms wrf.exe -F comm,ip,sym,dso | tools/perf_kernel_frames.py

Prints the share of all samples in the kernel and in page faults, and both by first user frame
(docs/performance.md, "The page faults were the batched advection's tendency store")."""
import collections
import re
import sys

FRAME = re.compile(r"\s+[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$")


def tally(lines):
    """(samples, {user frame: kernel samples}, {user frame: page-fault samples})."""
    total, kern, fault = 0, collections.Counter(), collections.Counter()
    frames = []

    def flush():
        nonlocal total
        if not frames:
            return
        total += 1
        if "kernel.kallsyms" not in frames[0][1]:
            return
        user = next(((s, d) for s, d in frames if "kernel.kallsyms" not in d), ("(no user frame)", ""))
        key = "%s  [%s]" % (re.sub(r"\(.*", "", user[0])[:90], user[1].split("/")[-1][:30])
        kern[key] += 1
        if any("page_fault" in s for s, d in frames if "kernel.kallsyms" in d):
            fault[key] += 1

    for line in lines:
        if not line.strip():
            flush()
            frames = []
        elif line[0] in " \t":
            m = FRAME.match(line)
            if m:
                frames.append((m.group(1).strip(), m.group(2)))
    flush()
    return total, kern, fault


def main():
    total, kern, fault = tally(sys.stdin)
    pct = lambda n: 100.0 * n / max(total, 1)
    print("samples %d, in the kernel %d (%.1f%%), of which page faults %d (%.1f%%)" % (
        total, sum(kern.values()), pct(sum(kern.values())), sum(fault.values()), pct(sum(fault.values()))))
    print("page faults by first user frame (% of all samples):")
    for k, n in fault.most_common(15):
        print("  %6.2f  %s" % (pct(n), k))
    print("kernel samples by first user frame:")
    for k, n in kern.most_common(15):
        print("  %6.2f  %s" % (pct(n), k))


if __name__ == "__main__":
    main()
