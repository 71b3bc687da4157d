"""Writes fat_tree/topology.txt: a k=4 fat-tree in ns3-datacenter's topology format.

Run once by hand (``python3 validation/data/ns3_datacenter/fat_tree_topology.py``); the file it
writes is committed beside the reference results made from it (README.md in this folder).

Node ids: hosts 0-15 first (HPCC's traffic_gen.py numbers hosts 0..n-1), then the 8 edge
switches 16-23 (pod p: 16 + 2p, 17 + 2p), the 8 aggregation switches 24-31 (pod p: 24 + 2p,
25 + 2p) and the 4 core switches 32-35 (aggregation switch j of a pod reaches cores 32 + 2j and
33 + 2j). Every link 100 Gb/s, 1 us, no errors. Header: NODES SWITCHES TORS LINKS.
"""

from pathlib import Path

K = 4
HOSTS = K**3 // 4  # 16
EDGE0, AGG0, CORE0 = HOSTS, HOSTS + K * K // 2, HOSTS + K * K  # 16, 24, 32
CORES = (K // 2) ** 2
RATE, DELAY = "100Gbps", "1us"


def links() -> list[tuple[int, int]]:
    out = []
    for h in range(HOSTS):
        out.append((h, EDGE0 + h // (K // 2)))
    for p in range(K):
        for i in range(K // 2):
            for j in range(K // 2):
                out.append((EDGE0 + p * K // 2 + i, AGG0 + p * K // 2 + j))
    for p in range(K):
        for j in range(K // 2):
            for m in range(K // 2):
                out.append((AGG0 + p * K // 2 + j, CORE0 + j * K // 2 + m))
    return out


def main() -> None:
    switches = list(range(EDGE0, CORE0 + CORES))
    lk = links()
    text = [f"{HOSTS + len(switches)} {len(switches)} {K * K // 2} {len(lk)}"]
    text.append(" ".join(str(s) for s in switches))
    text += [f"{a} {b} {RATE} {DELAY} 0" for a, b in lk]
    out = Path(__file__).with_name("fat_tree") / "topology.txt"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(text) + "\n", encoding="ascii")


if __name__ == "__main__":
    main()
