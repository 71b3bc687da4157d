"""Writes a k-ary fat-tree in ns3-datacenter's topology format: by default k=4 into
fat_tree/topology.txt (the validation case), with ``K OUT`` another (``make bench``'s k=8:
bench/ns3-datacenter/topology-fattree128.txt).

Run once by hand (``python3 validation/data/ns3_datacenter/fat_tree_topology.py [K OUT]``); the
file it writes is committed beside the files made from it (README.md in this folder and in
bench/ns3-datacenter).

Node ids: the k^3/4 hosts first (HPCC's traffic_gen.py numbers hosts 0..n-1), then the k^2/2
edge switches (pod p: k/2 of them from EDGE0 + p k/2, edge switch e of the pod holding hosts
(p k/2 + e) k/2 .. + k/2 - 1), the k^2/2 aggregation switches (pod p: from AGG0 + p k/2) and
the k^2/4 core switches (aggregation switch j of a pod reaches cores CORE0 + j k/2 .. + k/2 - 1).
For k=4: hosts 0-15, edges 16-23, aggregations 24-31, cores 32-35; for k=8: hosts 0-127, edges
128-159, aggregations 160-191, cores 192-207. Every link 100 Gb/s, 1 us, no errors. Header:
NODES SWITCHES TORS LINKS.
"""

import sys
from pathlib import Path

RATE, DELAY = "100Gbps", "1us"


def links(k: int = 4) -> list[tuple[int, int]]:
    half, hosts = k // 2, k**3 // 4
    edge0, agg0, core0 = hosts, hosts + k * half, hosts + k * k
    out = [(h, edge0 + h // half) for h in range(hosts)]
    for p in range(k):
        for i in range(half):
            for j in range(half):
                out.append((edge0 + p * half + i, agg0 + p * half + j))
    for p in range(k):
        for j in range(half):
            for m in range(half):
                out.append((agg0 + p * half + j, core0 + j * half + m))
    return out


def main() -> None:
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    out = (
        Path(sys.argv[2])
        if len(sys.argv) > 2
        else Path(__file__).with_name("fat_tree") / "topology.txt"
    )
    hosts = k**3 // 4
    switches = list(range(hosts, hosts + k * k + (k // 2) ** 2))
    lk = links(k)
    text = [f"{hosts + len(switches)} {len(switches)} {k * k // 2} {len(lk)}"]
    text.append(" ".join(str(s) for s in switches))
    text += [f"{a} {b} {RATE} {DELAY} 0" for a, b in lk]
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(text) + "\n", encoding="ascii")


if __name__ == "__main__":
    main()
