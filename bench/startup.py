"""Start-up of a trivial run (issue 39: at most 0.3 s): `lfsim run SCENARIO --set stop_time=1us
--out DIR --quiet` as a user types it, whole process (the command starts itself again in the
simulation's environment, lfsim._env: both processes counted), median of N runs, on a small
built-in scenario (fc_pingpong) and on the 128-host fat-tree (fat_tree_websearch); and where the
time goes, from Python's own import-time report (PYTHONPROFILEIMPORTTIME) of one more run.

Bytecode: a user's installation has its modules compiled (pip writes the .pyc files, or the
first run does). Where PYTHONDONTWRITEBYTECODE is set, as on the machines this project is
developed on, every run compiles lfsim's modules from source; both are measured ("cached":
bytecode in a temporary PYTHONPYCACHEPREFIX, written by a warm-up run; "none": compiled at
each run, the environment as it is).

Run alone: ``.venv/bin/python bench/startup.py [RUNS [JSON]]`` (default 9 runs; JSON: a file
for the figures, as bench/run_bench.py runs it). Peak memory is the children's ru_maxrss, which
is at least what this process had resident when it started them: keep it a small process of its
own (it imports only the standard library).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
# What the console script `lfsim` (sim/python/pyproject.toml) runs.
ENTRY = "import sys; from lfsim.cli import main; sys.exit(main())"
CASES = [
    ("fc_pingpong, 1 us", "fc_pingpong"),
    ("fat_tree_websearch (128 hosts), 1 us", "fat_tree_websearch"),
]
HEADER = "import time: self [us] | cumulative | imported package"


def _env(bytecode: str, cache: Path) -> dict:
    # Without GLIBC_TUNABLES, so that the command re-executes as it does from a shell.
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    if bytecode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def _run(scenario: str, out: Path, env: dict) -> tuple[float, float, float, str]:
    """Wall and cpu seconds, peak RSS (MiB) and stderr of one whole `lfsim run`."""
    args = [PY, "-c", ENTRY, "run", scenario, "--set", "stop_time=1us", "--out", str(out)]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([*args, "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # the same pid after the re-exec: both
        wall = time.perf_counter() - t0
        err.seek(0)
        text = err.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"lfsim run {scenario} failed: {text[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text


def _imports(stderr: str) -> list[dict]:
    """Per process, its top-level imports (cumulative ms, children included) of 2 ms or more,
    the rest summed."""
    rows: list[dict] = []
    process = 0
    for line in stderr.splitlines():
        if line.startswith(HEADER):
            process += 1
            continue
        if not line.startswith("import time:"):
            continue
        _, cumulative, name = (p.strip() for p in line[len("import time:") :].split("|"))
        if line.rsplit("|", 1)[1].startswith("  "):
            continue  # imported by another module: inside its parent's cumulative time
        rows.append({"process": process, "module": name, "ms": int(cumulative) / 1000})
    out = []
    for p in sorted({r["process"] for r in rows}):
        mine = [r for r in rows if r["process"] == p]
        big = [r for r in mine if r["ms"] >= 2.0]
        rest = sum(r["ms"] for r in mine if r["ms"] < 2.0)
        out += big + [{"process": p, "module": "(others)", "ms": rest}]
        out.append({"process": p, "module": "(total)", "ms": sum(r["ms"] for r in mine)})
    return out


def rows(runs: int = 9) -> list[dict]:
    """One row per case and bytecode kind (``kind: "process"``: medians of `runs` runs, and
    the simulation's own wall time, summary.json's wall_time_s), then the import-time
    breakdown of each case with cached bytecode (``kind: "imports"``: per process, 1 the
    command, 2 the simulation)."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "pycache"
        for label, scenario in CASES:
            for bytecode in ("cached", "none"):
                env = _env(bytecode, cache)
                _run(scenario, Path(tmp) / "warm", env)  # writes the bytecode when cached
                figures = []
                for i in range(runs):
                    target = Path(tmp) / f"{scenario}-{bytecode}-{i}"
                    wall, cpu, peak, _ = _run(scenario, target, env)
                    sim = json.loads((target / "summary.json").read_text())["wall_time_s"]
                    figures.append((wall, cpu, peak, sim))
                med = [statistics.median(f[k] for f in figures) for k in range(4)]
                out.append(
                    {
                        "kind": "process",
                        "case": label,
                        "bytecode": bytecode,
                        "runs": runs,
                        "wall_s": med[0],
                        "wall_s_min": min(f[0] for f in figures),
                        "wall_s_max": max(f[0] for f in figures),
                        "cpu_s": med[1],
                        "peak_MiB": med[2],
                        "simulation_wall_s": med[3],
                    }
                )
            env = {**_env("cached", cache), "PYTHONPROFILEIMPORTTIME": "1"}
            _, _, _, text = _run(scenario, Path(tmp) / f"{scenario}-imports", env)
            out += [{"kind": "imports", "case": label, **r} for r in _imports(text)]
    return out


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    result = rows(runs)
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(result, indent=2))
    print(f"{'trivial run (whole process)':40} {'bytecode':>8} {'wall s':>7} {'(min-max)':>13} "
          f"{'cpu s':>6} {'sim s':>6} {'peak MiB':>8}")  # fmt: skip
    for r in (r for r in result if r["kind"] == "process"):
        print(
            f"{r['case']:40} {r['bytecode']:>8} {r['wall_s']:7.3f} "
            f"{r['wall_s_min']:6.3f}-{r['wall_s_max']:.3f} {r['cpu_s']:6.3f} "
            f"{r['simulation_wall_s']:6.3f} {r['peak_MiB']:8.0f}"
        )
    for label, _ in CASES:
        print(f"\nimports, {label} (ms, cumulative; process 1 the command, 2 the simulation)")
        for r in (r for r in result if r["kind"] == "imports" and r["case"] == label):
            print(f"  {r['process']} {r['module']:36} {r['ms']:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
