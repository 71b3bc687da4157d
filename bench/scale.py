"""`make bench`, part 2: the open fabric at scale. Each case runs in a fresh Python process so
that its peak resident memory is its own (getrusage of the children).

- building fabrics of 1,024 to 10,240 hosts (a two-tier leaf-spine, nothing sent) and k-ary
  fat-trees of k = 16, 32 and 64 (1,024 to 65,536 hosts): wall time and peak memory of the whole
  process (Python start-up, the import of numpy and the extension included);
- clos_1024: 1,024 hosts, web-search flows at 30 % load for 10 ms, PFC;
- a long run's time series: the incast scenario with the queue of every switch port recorded
  at every change, 50 and 800 ms, written to an output directory (rows spill to disk as they
  grow, so peak memory stays about the same while the series grows sixteenfold);
- this machine's load latency over 1 to 256 MiB (bench/memory-latency.cc), which says how much
  cache the next case really gets;
- the cost of a packet-hop as the fabric grows, 16 to 4,096 hosts: a leaf-spine of 8 hosts a
  leaf and 2 spines (1:1 at 25/100GbE), web-search flows from every host at 30 % load, DCQCN,
  for a simulated time that gives each size about the same number of packet-hops; the event
  loop's wall time over the packet-hops.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lfsim._env import simulation_env

PY = sys.executable

BUILD = """
import lfsim, sys
n, leaves = int(sys.argv[1]), int(sys.argv[2])
sc = {"fabric": "roce", "stop_time": "1ns",
      "topology": {"generator": "LeafSpine", "Leaves": leaves, "Spines": 16,
                   "HostsPerLeaf": n // leaves, "HostSpeed": "25GbE", "UplinkSpeed": "100GbE"}}
r = lfsim.run(sc)
print(r.summary["wall_time_s"])
"""

FAT_TREE = """
import lfsim, sys
sc = {"fabric": "roce", "stop_time": "1ns",
      "topology": {"generator": "FatTree", "K": int(sys.argv[1]), "HostSpeed": "25GbE"}}
r = lfsim.run(sc)
print(r.summary["wall_time_s"])
"""

CLOS = """
import json, lfsim
r = lfsim.run("clos_1024")
m = r.metrics
print(json.dumps({k: m[k] for k in ("packet_hops", "flows", "flows_completed", "flows_in_flight",
                                    "fct_slowdown_p50", "fct_slowdown_p99", "drops")}
                 | {"events": r.summary["events"], "wall_time_s": r.summary["wall_time_s"]}))
"""

SERIES = """
import json, sys, lfsim, pyarrow.parquet as pq
out = sys.argv[2]
r = lfsim.run("incast", {"mode": "pfc", "stop_time": sys.argv[1], "sample_interval": "0s",
                         "record": "queue"}, out=out)
rows = pq.ParquetFile(out + "/series/queue.parquet").metadata.num_rows
print(json.dumps({"rows": rows, "wall_time_s": r.summary["wall_time_s"]}))
"""


# A child's ru_maxrss is at least what its parent had resident when it started it (Linux keeps
# the larger of the old and the new image's peak at exec), and `make bench`'s process grows with
# the runs it has measured (its start-up rows read 704 MiB for a 97 MiB run): so the child
# reports the peak of its own image, VmHWM, as it exits.
PEAK = (
    "import atexit as _a, os as _o\n"
    "_a.register(lambda: open(_o.environ['LFSIM_BENCH_PEAK'], 'w').write(next("
    "l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:'))))\n"
)


def child(code: str, *args: str) -> tuple[str, float, float]:
    """stdout, wall seconds and peak RSS (MiB, VmHWM: its own image's) of a fresh interpreter
    running `code`."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as stdout, tempfile.NamedTemporaryFile("r") as peak:
        env = {**simulation_env(), "LFSIM_BENCH_PEAK": peak.name}
        proc = subprocess.Popen([PY, "-c", PEAK + code, *args], stdout=stdout, env=env)
        _, status, _ = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, code)
        stdout.seek(0)
        text = stdout.read()
        kib = int(peak.read())
    return text.strip().splitlines()[-1], wall, kib / 1024


COST = """
import json, sys, lfsim
n, stop = int(sys.argv[1]), sys.argv[2]
sc = {"fabric": "roce", "stop_time": stop, "seed": 1, "sample_interval": "0s", "record": [],
      "topology": {"generator": "LeafSpine", "Leaves": n // 8, "Spines": 2, "HostsPerLeaf": 8,
                   "HostSpeed": "25GbE", "UplinkSpeed": "100GbE"},
      "workload": {"web": {"pattern": "OpenLoop", "SizeCdf": "websearch", "Load": 0.3}},
      "RoceChannel": {"Length": 10}, "RoceSwitch": {"BufferSize": 67108864, "EcnEnabled": True},
      "RdmaNic": {"PathMtu": 4096, "CongestionControl": "Dcqcn"}}
r = lfsim.run(sc)
s = r.summary
print(json.dumps({"hops": s["metrics"]["packet_hops"], "events": s["events"],
                  "events_wall_s": s["events_wall_s"], "flows": s["metrics"]["flows"]}))
"""
# Hosts and simulated time: about 1.4 M packet-hops each (the 4,096-host fabric takes a little
# longer to fill, so it runs 1.5 ms).
COST_CASES = ((16, "80ms"), (64, "20ms"), (256, "5ms"), (1024, "1250us"), (4096, "1500us"))


def cost_per_hop() -> list[dict]:
    print(f"\n{'cost per packet-hop':24} {'hosts':>6} {'sim':>7} {'hops':>11} {'loop s':>7} "
          f"{'us/hop':>7} {'peak MiB':>9}")  # fmt: skip
    out = []
    for n, stop in COST_CASES:
        text, wall, peak = child(COST, str(n), stop)
        d = json.loads(text)
        us = d["events_wall_s"] / d["hops"] * 1e6
        print(f"{'web search 30 %, DCQCN':24} {n:6,} {stop:>7} {d['hops']:11,.0f} "
              f"{d['events_wall_s']:7.2f} {us:7.3f} {peak:9.0f}")  # fmt: skip
        out.append({"hosts": n, "stop_time": stop, **d, "us_per_hop": us, "peak_MiB": peak,
                    "process_s": wall})  # fmt: skip
    return out


def memory_latency() -> list[dict]:
    """This machine's dependent-load latency over 1 to 256 MiB (bench/memory-latency.cc): how
    much cache the cost-per-hop runs really get."""
    exe = Path(__file__).resolve().parent.parent / "build" / "memory-latency"
    text = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    rows = [{"MiB": int(f[0]), "ns": float(f[1])} for f in (ln.split() for ln in text.splitlines())]
    print("\nload latency (dependent loads over a random chain):")
    print("  " + "  ".join(f"{r['MiB']:>4} MiB {r['ns']:6.1f} ns" for r in rows[:5]))
    print("  " + "  ".join(f"{r['MiB']:>4} MiB {r['ns']:6.1f} ns" for r in rows[5:]))
    return rows


def main() -> dict:
    res: dict = {"build": [], "series": []}
    res["memory_latency"] = memory_latency()
    res["cost_per_hop"] = cost_per_hop()
    head = f"{'hosts':>7} {'run s':>7} {'process s':>10} {'peak MiB':>9}"
    print(f"\n{'building (no traffic)':28} {head}")
    for n, leaves in ((1024, 32), (4096, 128), (10240, 320)):
        out, wall, peak = child(BUILD, str(n), str(leaves))
        print(f"{'leaf-spine, 16 spines':28} {n:7,} {float(out):7.2f} {wall:10.2f} {peak:9.0f}")
        res["build"].append({"hosts": n, "run_s": float(out), "process_s": wall, "peak_MiB": peak})
    res["build_fat_tree"] = []
    for k in (16, 32, 64):
        out, wall, peak = child(FAT_TREE, str(k))
        name = f"fat-tree, k = {k}"
        print(f"{name:28} {k**3 // 4:7,} {float(out):7.2f} {wall:10.2f} {peak:9.0f}")
        res["build_fat_tree"].append(
            {"k": k, "hosts": k**3 // 4, "run_s": float(out), "process_s": wall, "peak_MiB": peak}
        )
    with tempfile.TemporaryDirectory() as tmp:
        for stop in ("50ms", "800ms"):
            out, wall, peak = child(SERIES, stop, f"{tmp}/{stop}")
            d = json.loads(out)
            print(
                f"{'incast, queue on change':28} {stop:>7} rows {d['rows']:>10,} "
                f"process {wall:6.1f} s peak {peak:6.0f} MiB"
            )
            res["series"].append({"stop_time": stop, **d, "process_s": wall, "peak_MiB": peak})
    out, wall, peak = child(CLOS)
    d = json.loads(out)
    print(
        f"{'clos_1024 (10 ms, 30 %, pfc)':28} process {wall:6.1f} s, peak {peak:6.0f} MiB, "
        f"{d['packet_hops'] / d['wall_time_s']:,.0f} packet-hops/s, {d['flows']:.0f} flows "
        f"({d['flows_completed']:.0f} completed), slowdown p50 {d['fct_slowdown_p50']:.2f} "
        f"p99 {d['fct_slowdown_p99']:.1f}, drops {d['drops']:.0f}"
    )
    res["clos_1024"] = {**d, "process_s": wall, "peak_MiB": peak}
    return res


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
