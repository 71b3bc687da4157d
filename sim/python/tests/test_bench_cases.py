"""The comparison cases of docs/bench.md, as a user runs them (issue 39 item 4): the fat-tree
converted from the HPCC files in bench/ns3-datacenter/ and the shift permutation that htsim
runs (bench/htsim/). docs/bench.md's `lfsim` commands are run as written, each run stopped
early (the full runs are `make bench`'s and take tens of seconds); `make bench` converts the
same files with the same flags.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "bench"
HPCC = BENCH / "ns3-datacenter"
DOC = ROOT / "docs" / "bench.md"

sys.path.insert(0, str(BENCH))  # run_bench.py and its sibling scale.py, as `make bench` runs them
import run_bench  # noqa: E402

_FENCE = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)


def documented(word: str) -> list[str]:
    """docs/bench.md's `lfsim` commands (sh blocks, continuation lines joined) naming `word`."""
    out = []
    for body in _FENCE.findall(DOC.read_text()):
        for line in body.replace("\\\n", " ").splitlines():
            command = " ".join(line.split("#")[0].split())
            if command.startswith("lfsim ") and word in command:
                out.append(command)
    return out


def lfsim(command: str, cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    """A documented `lfsim ...` command through this interpreter (the same CLI entry point)."""
    args = shlex.split(command)[1:]
    proc = subprocess.run(
        [sys.executable, "-m", "lfsim", *args, *extra], cwd=cwd, capture_output=True, text=True
    )
    assert proc.returncode == 0, f"`{command}` exited {proc.returncode}:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def root_like(tmp: Path) -> Path:
    """A folder where the documents' relative paths resolve as at the repository's root."""
    for name in ("bench", "scenarios"):
        (tmp / name).symlink_to(ROOT / name)
    return tmp


def hpcc_flows(path: Path) -> list[list[str]]:
    lines = path.read_text().split("\n")
    rows = [line.split() for line in lines[1:] if line.strip()]
    assert int(lines[0].split()[0]) == len(rows), "the flow file's count line is its row count"
    return rows


def test_fattree_topology_file_is_what_the_documented_command_writes(tmp_path):
    """bench/ns3-datacenter/README.md's command, run from the top (output into tmp_path)."""
    script = ROOT / "validation" / "data" / "ns3_datacenter" / "fat_tree_topology.py"
    out = tmp_path / "topology-fattree128.txt"
    subprocess.run([sys.executable, str(script), "8", str(out)], check=True, cwd=ROOT)
    assert out.read_bytes() == (HPCC / "topology-fattree128.txt").read_bytes()


def test_fattree_topology_file_is_what_its_script_writes():
    """topology-fattree128.txt is fat_tree_topology.py's k=8 fat-tree (the validation case's
    script, given k): header NODES SWITCHES TORS LINKS, the switch ids, then a 100 Gb/s 1 us
    line per link, each host on one edge."""
    sys.path.insert(0, str(ROOT / "validation" / "data" / "ns3_datacenter"))
    import fat_tree_topology as ft

    lines = (HPCC / "topology-fattree128.txt").read_text().splitlines()
    assert lines[0].split() == ["208", "80", "32", "384"]  # 128 hosts + 80 switches; k^3/4 * 3
    assert lines[1].split() == [str(i) for i in range(128, 208)]
    links = [tuple(int(x) for x in line.split()[:2]) for line in lines[2:]]
    assert links == ft.links(8)
    assert all(line.split()[2:] == ["100Gbps", "1us", "0"] for line in lines[2:])
    edge_of = {a: b for a, b in links if a < 128}
    assert sorted(edge_of) == list(range(128)) and edge_of[5] == 129 and edge_of[127] == 159
    # each core switch reaches one aggregation switch of each of the 8 pods
    cores = {c: sorted(a for a, b in links if b == c) for c in range(192, 208)}
    assert all(
        len(aggs) == 8 and len({(a - 160) // 4 for a in aggs}) == 8 for aggs in cores.values()
    )


def test_fattree_config_differs_from_the_incast_only_in_its_file_names_and_stop():
    """config-fattree128.txt is config-incast8.txt (the matched incast's parameters: DCQCN, a
    1024 B payload, ECN at Kmin 400 KB ...) with its own files and stop time, so the two rows
    of `make bench` differ by the fabric and traffic only."""
    a = (HPCC / "config-incast8.txt").read_text().splitlines()
    b = (HPCC / "config-fattree128.txt").read_text().splitlines()
    assert len(a) == len(b)
    differ = {x.split()[0] for x, y in zip(a, b, strict=True) if x != y}
    assert differ == {"TOPOLOGY_FILE", "FLOW_FILE", "SIMULATOR_STOP_TIME"}
    assert "TOPOLOGY_FILE examples/PowerTCP/topology-fattree128.txt" in b
    assert "FLOW_FILE examples/PowerTCP/flow-fattree128.txt" in b


def test_fattree_converted_and_run_as_docs_bench_says(tmp_path):
    """docs/bench.md's two commands (convert, run) on the fat-tree, the run stopped 40 us after
    the first flow starts: the scenario holds the files' 128 hosts, 80 switches, 384 links and
    1,261 flows with DCQCN and a 1024 B MTU, and its run moves data packets."""
    convert, run = documented("fattree128")[:2]
    assert convert.startswith("lfsim convert hpcc ") and run.startswith("lfsim run ")
    # make bench times what this command writes: the same files and flags
    names = [*run_bench.FATTREE_FILES, run_bench.FATTREE_CONFIG]
    assert all(f"bench/ns3-datacenter/{n}" in convert for n in names)
    assert " ".join(run_bench.FATTREE_FLAGS) in convert
    cwd = root_like(tmp_path)
    lfsim(convert, cwd)
    (out,) = re.findall(r"-o (\S+)", convert)
    sc = yaml.safe_load((cwd / out).read_text())
    flows = hpcc_flows(HPCC / "flow-fattree128.txt")
    assert len(flows) == 1261
    assert len(sc["topology"]["hosts"]) == 128 and len(sc["topology"]["switches"]) == 80
    assert len(sc["topology"]["links"]) == 384
    assert [(f["src"], f["dst"], f["size"]) for f in sc["workload"]["flows"]["flows"]] == [
        (f"h{r[0]}", f"h{r[1]}", int(r[4])) for r in flows
    ]
    assert sc["RdmaNic"]["CongestionControl"] == "Dcqcn" and sc["RdmaNic"]["PathMtu"] == 1024
    first = min(float(r[5]) for r in flows)  # traffic_gen.py starts flows at 2 s
    stop = f"{round(first * 1e6) + 40}us"
    lfsim(run, cwd, "--set", f"stop_time={stop}")
    (folder,) = re.findall(r"--out (\S+)", run)
    s = yaml.safe_load((cwd / folder / "summary.json").read_text())
    m = s["metrics"]
    assert s["sim_time_s"] == pytest.approx(first + 40e-6, abs=1e-6)
    started = sum(float(r[5]) < first + 40e-6 for r in flows)
    assert m["flows_started"] == started > 0 and m["packet_hops"] > 1000
    assert m["drops"] == 0


def test_make_bench_converts_as_the_documented_command(tmp_path):
    """run_bench.convert_fattree writes what the documented command writes (but for the file
    names it quotes), so the timed row is the documented case."""
    (convert,) = [c for c in documented("fattree128") if c.startswith("lfsim convert")][:1]
    cwd = root_like(tmp_path)
    lfsim(convert, cwd)
    (out,) = re.findall(r"-o (\S+)", convert)
    run_bench.convert_fattree(tmp_path / "bench-made.yaml")

    def body(path: Path) -> dict:
        d = yaml.safe_load(path.read_text())
        for key in ("description", "hpcc_output"):
            d.pop(key)
        return d

    assert body(tmp_path / "bench-made.yaml") == body(cwd / out)


def test_ns3_datacenter_command_runs_the_same_files_and_flags():
    """The documented ns3-datacenter command reads config-fattree128.txt with the flags that
    the conversion takes (--algorithm 1 --windowCheck 0: DCQCN, no window)."""
    text = DOC.read_text().replace("\\\n", " ")
    cmds = re.findall(r"[^\n]*--conf=examples/PowerTCP/config-fattree128\.txt[^\n]*", text)
    assert cmds and all("powertcp-evaluation-burst" in c for c in cmds)
    flags = dict(zip(run_bench.FATTREE_FLAGS[::2], run_bench.FATTREE_FLAGS[1::2], strict=True))
    for cmd in cmds:
        for flag, value in flags.items():
            assert f"{flag}={value}" in cmd, cmd


def htsim_matrix(path: Path) -> list[tuple[int, int, int]]:
    """(src, dst, size) of each connection line of an htsim connection matrix."""
    rows = []
    for line in path.read_text().splitlines():
        m = re.match(r"(\d+)->(\d+) .*\bsize (\d+)", line)
        if m:
            rows.append(tuple(int(x) for x in m.groups()))
    return rows


def test_htsim_matrix_is_the_stride_of_its_generator():
    """shift128.cm: htsim's ConnectionMatrix::setStride for 128 hosts (src -> (src + N/2) % N),
    10 MB each, all starting at 0, with the header htsim_roce's -nodes must match."""
    text = (BENCH / "htsim" / "shift128.cm").read_text()
    assert text.startswith("Nodes 128\nConnections 128\n")
    assert htsim_matrix(BENCH / "htsim" / "shift128.cm") == [
        (i, (i + 64) % 128, 10_000_000) for i in range(128)
    ]
    assert all(" start 0 " in line for line in text.splitlines()[2:])


def test_shift_permutation_runs_as_docs_bench_says_and_matches_htsims_matrix(tmp_path):
    """docs/bench.md's lfsim command for the htsim case, stopped at 30 us: its flows are the
    connection matrix's (same pairs and sizes, host ids as htsim numbers them), every host
    sends, and the run crosses the core (each pair is in other pods)."""
    (run,) = documented("shift128")
    cwd = root_like(tmp_path)
    lfsim(run, cwd, "--set", "stop_time=30us")
    (folder,) = re.findall(r"--out (\S+)", run)
    flows = pd.read_parquet(cwd / folder / "flows.parquet")
    got = sorted(
        (int(s[1:]), int(d[1:]), int(b))
        for s, d, b in zip(flows["src_label"], flows["dst_label"], flows["size_bytes"], strict=True)
    )
    assert got == sorted(htsim_matrix(BENCH / "htsim" / "shift128.cm"))
    sc = yaml.safe_load((BENCH / "htsim" / "shift128.yaml").read_text())
    assert sc["topology"] == {
        "generator": "FatTree",
        "K": 8,
        "HostSpeed": "100GbE",
        "UplinkSpeed": "100GbE",
    }
    s = yaml.safe_load((cwd / folder / "summary.json").read_text())
    # 30 us at 100 Gb/s from 128 hosts: about 375 KB each, ~90 frames a host over 5 links
    assert s["metrics"]["packet_hops"] > 128 * 40 * 5


def test_startup_bench_runs_as_documented():
    """docs/bench.md's start-up command, as written: a row per case and bytecode setting, each a
    whole process that ran the scenario (a simulated time and a peak memory), and the import
    report of both processes."""
    (command,) = [
        " ".join(line.split())
        for body in _FENCE.findall(DOC.read_text())
        for line in body.splitlines()
        if "bench/startup.py" in line
    ]
    argv = shlex.split(command)
    assert argv[:2] == [".venv/bin/python", "bench/startup.py"]
    proc = subprocess.run(
        [sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if " 1 us " in line and "imports" not in line]
    assert len(rows) == 4  # two cases x (cached, none)
    for row in rows:
        wall, sim = float(row.split()[-5]), float(row.split()[-2])
        assert 0 < sim < wall
    assert "process 1 the command, 2 the simulation" in proc.stdout
    assert "  2 lfsim.runner" in proc.stdout and "pandas" not in proc.stdout
