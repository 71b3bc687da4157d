"""Building a fabric takes memory in proportion to its ports, and little of it a port (issue 39
item 3): from FatTree k = 16 (1,024 hosts, 6,144 ports) to k = 32 (8,192 hosts, 49,152 ports)
the whole process's peak grows by less than 3 KiB a port, as the lfsim command runs it (malloc
on huge pages). It grew by 3.8 KiB a port before: routes kept per home switch for every switch,
the deadlock detector's lists of a switch's queues copied for every port feeding it, a receive
callback per switch port, IP queues on every port, fault state on every cable, a fault handler
per host. 2.5 KiB a port when measured; FatTree k = 64 (65,536 hosts) then peaks under 1 GiB
(docs/bench.md).

And a run gives its memory back to the system when it ends, before its results are made into
Python objects, so that those (and the output files written from them) do not come on top of
the run's peak."""

from __future__ import annotations

import json
import subprocess
import sys

from lfsim._env import simulation_env

# The high-water mark of the process's own image. Not ru_maxrss: a child's is at least what
# its parent (this pytest process, hundreds of MiB) had resident when it started it.
HWM = """
def hwm():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
"""


def peak_kib(k: int) -> int:
    """Peak resident memory (KiB) of a fresh process that builds FatTree `k`, sending nothing."""
    scenario = {
        "fabric": "roce",
        "stop_time": "1ns",
        "topology": {"generator": "FatTree", "K": k, "HostSpeed": "25GbE"},
    }
    code = HWM + f"import lfsim\nlfsim.run({json.dumps(scenario)})\nprint(hwm())"
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=simulation_env()
    )
    assert p.returncode == 0, p.stderr
    return int(p.stdout.split()[-1])


def test_a_fat_tree_build_grows_by_less_than_3_kib_a_port():
    ports = {k: 3 * k**3 // 2 for k in (16, 32)}  # k^3/4 cables on each of three tiers, 2 ends
    small, large = peak_kib(16), peak_kib(32)
    per_port = (large - small) * 1024 / (ports[32] - ports[16])
    assert per_port < 3 * 1024, per_port


RETURNED = (
    HWM
    + """
import lfsim
def rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
def fat_tree(k):
    return {"fabric": "roce", "stop_time": "1ns",
            "topology": {"generator": "FatTree", "K": k, "HostSpeed": "25GbE"}}
lfsim.run(fat_tree(4))  # the extension and its first-run costs
before = rss()
result = lfsim.run(fat_tree(32))
print(before, rss(), hwm())
"""
)


def test_a_run_gives_its_memory_back_before_its_results_are_made():
    """After a FatTree k = 32 run, with its result still held, the process keeps less than a
    third of what the run added at its peak (24 of 122 MiB when measured; all of it, 190 MiB,
    when the freed heap stayed with the process)."""
    p = subprocess.run(
        [sys.executable, "-c", RETURNED], capture_output=True, text=True, env=simulation_env()
    )
    assert p.returncode == 0, p.stderr
    before, after, peak = map(int, p.stdout.split())
    assert after - before < (peak - before) / 3, (before, after, peak)
