"""`make bench`, part 3: loading long flow lists (issue 40, item 15). A Star of 64 hosts with N
flows, as a YAML list of one-line flows (5 MB at 100,000 flows, 50 MB at 1,000,000) and as CSV,
Parquet and HPCC flow.txt tables; each case loaded in a fresh Python process: the wall time of
``load_scenario`` (everything a run checks before it starts) and of ``core_config`` (the rows
handed to C++), and the process's peak memory.

Run alone: ``.venv/bin/python bench/loader.py [N ...]`` (default 100000 1000000).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

MEASURE = """
import json, resource, sys, time
t0 = time.perf_counter()
from lfsim.scenario import load_scenario
t1 = time.perf_counter()
sc = load_scenario(sys.argv[1])
t2 = time.perf_counter()
sc.core_config()
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "core_config_s": t3 - t2,
                  "peak_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
HEAD = "fabric: roce\nstop_time: 10ms\ntopology: {generator: Star, Hosts: 64}\n"


def write_cases(n: int, folder: Path) -> dict[str, Path]:
    rng = random.Random(1)
    rows = []
    for _ in range(n):
        a = rng.randrange(64)
        b = (a + 1 + rng.randrange(63)) % 64
        rows.append((f"h{a}", f"h{b}", rng.randrange(1, 10**6), rng.randrange(10**7)))
    out = {}
    yaml_rows = "".join(
        f"      - {{src: {s}, dst: {d}, size: {z}, start: {t}ns}}\n" for s, d, z, t in rows
    )
    out["yaml"] = folder / "yaml.yaml"
    out["yaml"].write_text(HEAD + "workload:\n  w:\n    pattern: Flows\n    flows:\n" + yaml_rows)
    df = pd.DataFrame(rows, columns=["src", "dst", "size", "start"])
    df["start"] = df["start"].astype(str) + "ns"
    df.to_csv(folder / "f.csv", index=False)
    df.to_parquet(folder / "f.parquet")
    (folder / "f.txt").write_text(
        f"{n}\n" + "".join(f"{s[1:]} {d[1:]} 3 100 {z} 0.{t:09d}\n" for s, d, z, t in rows)
    )
    for kind in ("csv", "parquet", "txt"):
        out[kind] = folder / f"{kind}.yaml"
        out[kind].write_text(HEAD + f"workload:\n  w: {{pattern: Flows, file: f.{kind}}}\n")
    return out


def main(sizes: tuple[int, ...] = (100_000, 1_000_000)) -> list[dict]:
    print(f"{'flows':>10} {'as':8} {'file MB':>8} {'load s':>7} {'core s':>7} {'peak MiB':>9}")
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            for kind, path in write_cases(n, Path(tmp)).items():
                data = path if kind == "yaml" else Path(tmp) / f"f.{kind}"
                p = subprocess.run(
                    [sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True
                )
                if p.returncode != 0:
                    raise RuntimeError(p.stderr)
                r = {"flows": n, "as": kind, "file_MB": data.stat().st_size / 1e6}
                r.update(json.loads(p.stdout))
                results.append(r)
                print(
                    f"{n:10,} {kind:8} {r['file_MB']:8.1f} {r['load_s']:7.2f} "
                    f"{r['core_config_s']:7.2f} {r['peak_MiB']:9.0f}"
                )
    return results


if __name__ == "__main__":
    main(tuple(int(a) for a in sys.argv[1:]) or (100_000, 1_000_000))
