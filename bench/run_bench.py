"""`make bench`: packet-hops/s and events/s of fc_incast beside a stock ns-3 baseline of the
same shape (UDP over PointToPoint through one IPv4 router), run in the same invocation."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from datetime import date
from pathlib import Path

import lfsim

ROOT = Path(__file__).resolve().parents[1]
# Sizes chosen so each side takes roughly 10 s of wall time on the reference machine.
LFSIM_STOP = "10s"
BASELINE_STOP = "0.7"


def main() -> int:
    r = lfsim.run("fc_incast", {"stop_time": LFSIM_STOP, "sample_interval": "0s", "record": []})
    s = r.summary
    ours = {
        "packet_hops": s["metrics"]["packet_hops"],
        "events": s["events"],
        "wall_time_s": s["wall_time_s"],
        "sim_time_s": s["sim_time_s"],
    }
    out = subprocess.run(
        [
            str(ROOT / "build" / "ns3-baseline"),
            "--senders=8",
            "--rate=8Gbps",
            "--payload=2048",
            f"--stop={BASELINE_STOP}",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    base = json.loads(out.stdout.strip().splitlines()[-1])
    rows = []
    for name, d in (("lfsim fc_incast", ours), ("ns-3 UDP/P2P/IPv4", base)):
        d["hops_per_s"] = d["packet_hops"] / d["wall_time_s"]
        d["events_per_s"] = d["events"] / d["wall_time_s"]
        rows.append((name, d))
    print(f"{'':22} {'packet-hops/s':>14} {'events/s':>12} {'hops':>10} {'wall s':>7}")
    for name, d in rows:
        print(
            f"{name:22} {d['hops_per_s']:14,.0f} {d['events_per_s']:12,.0f} "
            f"{d['packet_hops']:10,.0f} {d['wall_time_s']:7.2f}"
        )
    ratio_h = ours["hops_per_s"] / base["hops_per_s"]
    ratio_e = ours["events_per_s"] / base["events_per_s"]
    print(f"ratio lfsim/ns-3: packet-hops/s {ratio_h:.2f}x, events/s {ratio_e:.2f}x")
    res = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "lfsim": ours,
        "ns3_baseline": base,
        "ratio_hops_per_s": ratio_h,
        "ratio_events_per_s": ratio_e,
    }
    outdir = ROOT / "bench" / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "bench.json").write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
