"""`make bench`: packet-hops/s and events/s of the FC and RoCE (PFC, DCQCN) incast scenarios,
each beside a stock ns-3 baseline of a similar shape (UDP over PointToPoint through one IPv4
router, same number of senders, line rate and payload), alternated three times in the same
invocation (medians); the case
ns3-datacenter's HPCC code is timed on (scenarios/bench_dcqcn_incast8.yaml: data packets
delivered per wall second, events, peak memory) and its fabric-wide counterpart (a 128-host
fat-tree with 1,261 web-search flows, DCQCN, converted from the HPCC files in
bench/ns3-datacenter/ by `lfsim convert hpcc` at run time); the deadlock detector's cost; the
open fabric at scale (bench/scale.py); loading long flow lists (bench/loader.py); and a trivial
run's start-up (bench/startup.py). Every measured run is a process of its own with the
environment the lfsim command gives a simulation
(lfsim._env), the stock ns-3 runs too."""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from scale import child  # bench/scale.py: a measured case in a process of its own

import lfsim
from lfsim._env import simulation_env

ROOT = Path(__file__).resolve().parents[1]

# (name, scenario, overrides, baseline arguments). Sizes chosen so each side takes roughly
# 5-10 s of wall time on the reference machine.
CASES = [
    (
        "fc_incast",
        "fc_incast",
        {"stop_time": "10s"},
        ["--senders=8", "--rate=8Gbps", "--payload=2048", "--stop=0.7"],
    ),
    (
        "incast (roce, pfc)",
        "incast",
        {"mode": "pfc", "stop_time": "800ms"},
        ["--senders=16", "--rate=25Gbps", "--payload=4096", "--stop=0.2"],
    ),
    (
        # DCQCN's per-packet work (byte counter) and timers on top of the same fabric.
        "incast (roce, pfc_dcqcn)",
        "incast",
        {"mode": "pfc_dcqcn", "stop_time": "800ms"},
        ["--senders=16", "--rate=25Gbps", "--payload=4096", "--stop=0.2"],
    ),
]


MEASURE = """
import json, sys, lfsim
r = lfsim.run(sys.argv[1], {**json.loads(sys.argv[2]), "sample_interval": "0s", "record": []})
s = r.summary
print(json.dumps({"packet_hops": s["metrics"]["packet_hops"], "events": s["events"],
                  "wall_time_s": s["wall_time_s"], "events_wall_s": s["events_wall_s"],
                  "sim_time_s": s["sim_time_s"]}))
"""


def measure(scenario: str, overrides: dict) -> dict:
    """One run in a process of its own; wall_time_s is the run's (lfsim.run), process_s the
    whole process's (interpreter start and imports included)."""
    out, wall, peak = child(MEASURE, scenario, json.dumps(overrides))
    return {**json.loads(out), "process_s": wall, "peak_MiB": peak}


def baseline(args: list[str]) -> dict:
    out = subprocess.run(
        [str(ROOT / "build" / "ns3-baseline"), *args],
        check=True, capture_output=True, text=True, env=simulation_env(),
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


# The HPCC simulator's code (ns3-datacenter) was timed on this case: 25.8 s wall, 39.4 M events,
# 266 MiB, on a day when this machine ran lfsim's build of c64997f on it in 20.4 s (issue 20).
MATCHED = "bench_dcqcn_incast8"
ANCHOR = {"wall_s": 25.8, "events": 39.4e6, "peak_MiB": 266, "lfsim_c64997f_wall_s": 20.4}


def data_packets_case(scenario: str, title: str, ref_label: str, ref: dict) -> dict:
    """Data packets delivered per wall second (every flow must complete), whole process, beside
    the reference's row (ns3-datacenter, measured by hand: `ref`)."""
    out, wall, peak = child(DATA_PACKETS_CODE, scenario)
    d = json.loads(out)
    rate = d["data_packets"] / wall
    print(
        f"\n{title:34} {'data pkts':>10} {'events':>11} "
        f"{'process s':>9} {'pkts/s':>10} {'peak MiB':>8}"
    )
    print(
        f"{'lfsim':34} {d['data_packets']:10,} {d['events']:11,} {wall:9.2f} {rate:10,.0f} "
        f"{peak:8.0f}"
    )
    events = f"{ref['events']:11,.0f}" if "events" in ref else f"{'-':>11}"  # not printed there
    print(
        f"{ref_label:34} {d['data_packets']:10,} {events} {ref['wall_s']:9.2f} "
        f"{d['data_packets'] / ref['wall_s']:10,.0f} {ref['peak_MiB']:8.0f}"
    )
    return {**d, "process_s": wall, "peak_MiB": peak, "data_packets_per_s": rate,
            "anchor": ref}  # fmt: skip


def matched_case() -> dict:
    """The matched incast (8 x ceil(500 MB / 1024 B) data packets)."""
    return data_packets_case(
        MATCHED, "matched case (8 x 500 MB, DCQCN)", "ns3-datacenter (issue 20, 2026-11)", ANCHOR
    )


DATA_PACKETS_CODE = """
import json, math, sys, lfsim
r = lfsim.run(sys.argv[1])
flows = r.table("flows")
mtu = int(r.config["RdmaNic"]["PathMtu"])
assert r.metrics["flows_completed"] == len(flows), "every flow must complete"
packets = sum(math.ceil(b / mtu) * m for b, m in zip(flows["size_bytes"], flows["messages"]))
print(json.dumps({"data_packets": int(packets), "flows": len(flows),
                  "events": r.summary["events"], "events_wall_s": r.summary["events_wall_s"]}))
"""


# The fabric-wide case: a k=8 fat-tree (128 hosts, 80 switches, every link 100 Gb/s and 1 us),
# 1,261 web-search flows from the HPCC simulator's traffic_gen.py, DCQCN, a 1024 B payload
# (bench/ns3-datacenter/README.md says how the files were made). They are converted here with
# the lfsim command a user runs, so what is timed is what that conversion writes.
HPCC_DIR = ROOT / "bench" / "ns3-datacenter"
FATTREE_FILES = ("topology-fattree128.txt", "flow-fattree128.txt")
FATTREE_CONFIG = "config-fattree128.txt"
# ns3-datacenter's flags for DCQCN (they override the config's CC_MODE, HAS_WIN and VAR_WIN);
# the conversion takes the same ones.
FATTREE_FLAGS = ("--algorithm", "1", "--windowCheck", "0")
# ns3-datacenter's optimized build (6ddb4a4) on the same files and flags, whole process, by
# hand on 2026-12-07: the median of 3 runs alternated with lfsim's on the shared 2-core machine
# (docs/bench.md, "The fabric-wide case"; lfsim's median there 10.76 s, 173 MiB).
FATTREE_REF = {"wall_s": 81.5, "user_s": 53.4, "peak_MiB": 389}


def convert_fattree(out: Path) -> float:
    """`lfsim convert hpcc` of the fat-tree's files into `out`; the command's wall seconds."""
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "lfsim", "convert", "hpcc",
         *(str(HPCC_DIR / f) for f in FATTREE_FILES),
         "--config", str(HPCC_DIR / FATTREE_CONFIG), *FATTREE_FLAGS, "-o", str(out)],
        check=True, capture_output=True, text=True, env=simulation_env(),
    )  # fmt: skip
    return time.perf_counter() - t0


def fattree_case(outdir: Path) -> dict:
    scenario = outdir / "fattree128.yaml"
    convert_s = convert_fattree(scenario)
    title = "fat-tree (128 hosts, web search)"
    d = data_packets_case(str(scenario), title, "ns3-datacenter (2026-12-07)", FATTREE_REF)
    print(f"{'  lfsim convert hpcc, whole process':34} {convert_s:32.2f}")
    return {**d, "convert_s": convert_s}


# The deadlock detector's cost: the same run with DeadlockDetector.Enabled true and false,
# alternated, median wall time of each. pfc_dcqcn never pauses (the detector must not run at
# all); pfc pauses all the time (the detector polls while anything is paused, but the pauses
# form a tree, so it never scans the queues' contents: "scans" counts checks that did).
DETECTOR_CASES = [
    ("incast pfc_dcqcn (no pause)", "incast", {"mode": "pfc_dcqcn", "stop_time": "200ms"}),
    ("incast pfc (pausing)", "incast", {"mode": "pfc", "stop_time": "200ms"}),
]
DETECTOR_REPEATS = 4


def detector_cost() -> list[dict]:
    print(
        f"\n{'deadlock detector':28} {'checks':>8} {'scans':>6} {'wall on s':>10} "
        f"{'wall off s':>11} {'cost':>7}"
    )
    out = []
    for name, scenario, overrides in DETECTOR_CASES:
        lfsim.run(scenario, {**overrides, "stop_time": "5ms"})  # warm-up, not timed
        walls: dict[bool, list[float]] = {True: [], False: []}
        checks = scans = 0.0
        for i in range(DETECTOR_REPEATS):
            for on in (True, False) if i % 2 == 0 else (False, True):  # no order bias
                r = lfsim.run(
                    scenario,
                    {
                        **overrides,
                        "sample_interval": "0s",
                        "record": [],
                        "DeadlockDetector.Enabled": "true" if on else "false",
                    },
                )
                walls[on].append(r.summary["wall_time_s"])
                if on:
                    checks = r.summary["metrics"]["deadlock_checks"]
                    scans = r.summary["metrics"]["deadlock_edge_scans"]
        on_s = statistics.median(walls[True])
        off_s = statistics.median(walls[False])
        cost = on_s / off_s - 1
        print(f"{name:28} {checks:8,.0f} {scans:6,.0f} {on_s:10.2f} {off_s:11.2f} {cost:+7.1%}")
        out.append(
            {
                "case": name,
                "checks": checks,
                "edge_scans": scans,
                "wall_on_s": walls[True],
                "wall_off_s": walls[False],
            }
        )
    return out


# Each lfsim run and its stock-ns-3 baseline alternate this many times; the row is the median
# of each side and the ratio the median of the pairs' ratios (one run of each was seen to swing
# the ratio by a third on this VM, mostly on the stock side).
PAIRS = 3


def startup(out: Path) -> list[dict]:
    """bench/startup.py's rows, in a process of its own: a child's ru_maxrss is at least what its
    parent had resident when it started it, and this process has grown with the runs so far."""
    subprocess.run([sys.executable, str(ROOT / "bench" / "startup.py"), "9", str(out)], check=True)
    return json.loads(out.read_text())


def main() -> int:
    results = []
    print(
        f"{'':28} {'packet-hops/s':>14} {'events/s':>12} {'hops':>11} {'wall s':>7}   "
        f"(median of {PAIRS} alternated pairs)"
    )
    for name, scenario, overrides, base_args in CASES:
        runs = []
        for _ in range(PAIRS):
            ours, base = measure(scenario, overrides), baseline(base_args)
            for d in (ours, base):
                d["hops_per_s"] = d["packet_hops"] / d["wall_time_s"]
                d["events_per_s"] = d["events"] / d["wall_time_s"]
            runs.append((ours, base))
        med = statistics.median
        rows = []
        for label, side in ((f"lfsim {name}", 0), ("  ns-3 UDP/P2P/IPv4", 1)):
            ds = [r[side] for r in runs]
            row = {k: med(d[k] for d in ds) for k in ("hops_per_s", "events_per_s", "wall_time_s")}
            row["packet_hops"] = ds[0]["packet_hops"]
            rows.append(row)
            print(
                f"{label:28} {row['hops_per_s']:14,.0f} {row['events_per_s']:12,.0f} "
                f"{row['packet_hops']:11,.0f} {row['wall_time_s']:7.2f}"
            )
        ratios = [o["hops_per_s"] / b["hops_per_s"] for o, b in runs]
        ratio_h = med(ratios)
        ratio_e = med(o["events_per_s"] / b["events_per_s"] for o, b in runs)
        print(
            f"  ratio lfsim/ns-3: packet-hops/s {ratio_h:.2f}x "
            f"({min(ratios):.2f}-{max(ratios):.2f}), events/s {ratio_e:.2f}x"
        )
        results.append(
            {
                "case": name,
                "baseline_args": base_args,
                "lfsim": [r[0] for r in runs],
                "ns3_baseline": [r[1] for r in runs],
                "ratio_hops_per_s": ratio_h,
                "ratio_hops_per_s_each": ratios,
                "ratio_events_per_s": ratio_e,
            }
        )
    outdir = ROOT / "bench" / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    matched = matched_case()
    fattree = fattree_case(outdir)
    detector = detector_cost()
    from loader import main as loader_main  # bench/loader.py: long flow lists loaded
    from scale import main as scale_main  # bench/scale.py: the open fabric at scale

    res = {
        "date": date.today().isoformat(),
        "matched_case": matched,
        "fattree_case": fattree,
        "deadlock_detector": detector,
        "scale": scale_main(),
        "loader": loader_main(),
        "startup": startup(outdir / "startup.json"),
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "cases": results,
    }
    (outdir / "bench.json").write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
