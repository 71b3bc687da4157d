"""Reduces the stdout of ns3-datacenter's powertcp-evaluation-fairness to per-flow throughputs.

Run by hand on a run folder (README.md in this folder says which):
``python3 reduce_fairness.py RUN_DIR OUT_DIR``. RUN_DIR holds the run's flow.txt and stdout.txt;
OUT_DIR gets throughput_ms.csv and throughput.csv.

Every 0.5 x maxRtt that program prints ``Src i Total 0 throughput X time T`` for i = 0 ..
flows-1: X = the bytes host i's NIC sent since the last print (data packets with their
headers) x 8 / the interval. The bytes are X x interval / 8 again (X has 6 significant digits:
the rounding is far below one byte here); a data packet's wire size is the greatest common
divisor of the non-zero counts (4186 B with HPCC's INT header, 4144 B without, for a 4096 B
payload), so payload = packets x PACKET_PAYLOAD_SIZE.
"""

import math
import re
import sys
from pathlib import Path

WINDOW_MS = (15, 30)  # the steady state the comparison uses: prints with 15 ms < T <= 30 ms


def main(run_dir: Path, out_dir: Path) -> None:
    stdout = (run_dir / "stdout.txt").read_text(encoding="utf-8", errors="replace")
    config = (run_dir / "config.txt").read_text(encoding="utf-8")
    payload = int(re.search(r"^PACKET_PAYLOAD_SIZE\s+(\d+)", config, re.M).group(1))
    max_rtt_ns = int(re.search(r"maxRtt=(\d+)", stdout).group(1))
    interval_s = 0.5 * max_rtt_ns * 1e-9
    flow_lines = (run_dir / "flow.txt").read_text(encoding="ascii").split("\n")
    n = int(flow_lines[0].split()[0])
    dst = {int(f.split()[0]): int(f.split()[1]) for f in flow_lines[1 : n + 1]}

    per_ms: dict[tuple[int, int], int] = {}
    last_ms = 0
    for m in re.finditer(r"^Src (\d+) Total 0 throughput (\S+) time (\S+)$", stdout, re.M):
        src, bps, t = int(m.group(1)), float(m.group(2)), float(m.group(3))
        ms = math.ceil(round(t * 1e3, 6))  # a print at T covers (T - interval, T]
        per_ms[(ms, src)] = per_ms.get((ms, src), 0) + round(bps * interval_s / 8)
        last_ms = max(last_ms, ms)
    packet = 0
    for b in per_ms.values():
        packet = math.gcd(packet, b)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = ["ms_end,src,dst,wire_bytes,packets"]
    for ms in range(1, last_ms + 1):
        for src in sorted(dst):
            b = per_ms.get((ms, src), 0)
            rows.append(f"{ms},{src},{dst[src]},{b},{b // packet}")
    (out_dir / "throughput_ms.csv").write_text("\n".join(rows) + "\n", encoding="ascii")

    lo, hi = WINDOW_MS
    secs = (hi - lo) / 1e3
    rows = [
        f"# ns3-datacenter powertcp-evaluation-fairness, bytes sent by each source's NIC in "
        f"{lo} ms < T <= {hi} ms (prints every {interval_s * 1e9:.0f} ns), divided by {secs} s; "
        f"data packet {packet} B on the wire, {payload} B payload",
        "src,dst,wire_Gbps,payload_Gbps",
    ]
    for src in sorted(dst):
        b = sum(per_ms.get((ms, src), 0) for ms in range(lo + 1, hi + 1))
        wire = b * 8 / secs / 1e9
        rows.append(f"{src},{dst[src]},{wire:.4f},{b // packet * payload * 8 / secs / 1e9:.4f}")
    (out_dir / "throughput.csv").write_text("\n".join(rows) + "\n", encoding="ascii")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
