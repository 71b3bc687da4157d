"""Writes topology-fattree128.txt: a k=8 fat-tree in ns3-datacenter's topology format.

Run once by hand (``python3 bench/ns3-datacenter/fat_tree_topology.py``); the file it writes is
committed beside the flow and config files of the same case (README.md in this folder).

Node ids: hosts 0-127 first (HPCC's traffic_gen.py numbers hosts 0..n-1), then the 32 edge
switches 128-159 (pod p: 128 + 4p .. 131 + 4p, edge switch e of the pod holding hosts
16p + 4e .. 16p + 4e + 3), the 32 aggregation switches 160-191 (pod p: 160 + 4p .. 163 + 4p)
and the 16 core switches 192-207 (aggregation switch j of a pod reaches cores 192 + 4j ..
195 + 4j). Every link 100 Gb/s, 1 us, no errors. Header: NODES SWITCHES TORS LINKS.
"""

from pathlib import Path

K = 8
HALF = K // 2
HOSTS = K**3 // 4  # 128
EDGE0, AGG0, CORE0 = HOSTS, HOSTS + K * HALF, HOSTS + K * K  # 128, 160, 192
CORES = HALF**2  # 16
RATE, DELAY = "100Gbps", "1us"


def links() -> list[tuple[int, int]]:
    out = [(h, EDGE0 + h // HALF) for h in range(HOSTS)]
    for p in range(K):
        for i in range(HALF):
            for j in range(HALF):
                out.append((EDGE0 + p * HALF + i, AGG0 + p * HALF + j))
    for p in range(K):
        for j in range(HALF):
            for m in range(HALF):
                out.append((AGG0 + p * HALF + j, CORE0 + j * HALF + m))
    return out


def main() -> None:
    switches = list(range(EDGE0, CORE0 + CORES))
    lk = links()
    text = [f"{HOSTS + len(switches)} {len(switches)} {K * HALF} {len(lk)}"]
    text.append(" ".join(str(s) for s in switches))
    text += [f"{a} {b} {RATE} {DELAY} 0" for a, b in lk]
    Path(__file__).with_name("topology-fattree128.txt").write_text(
        "\n".join(text) + "\n", encoding="ascii"
    )


if __name__ == "__main__":
    main()
