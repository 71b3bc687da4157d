"""fct.txt and pfc.txt in the HPCC simulator's format (issue 41 item 2): a run of the HPCC files
in data/hpcc (hosts 0, 2, 3 and 5, switches 1 and 4, three rates; four flows into h5 and one
back, PFC from a small switch buffer), its files read back with a parser written from that format
(third.cc's qp_finish and get_pfc: whitespace fields, %08x addresses, integers in ns) and
checked against the flow file, the topology and the run's own PFC counters."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli

import lfsim

DATA = Path(__file__).parent / "data" / "hpcc"
TOPOLOGY, FLOWS = DATA / "topology.txt", DATA / "flow.txt"
# PFC in a 200 kB switch buffer; 1024-byte packets (HPCC's PACKET_PAYLOAD_SIZE).
SETTINGS = ["--set", "RdmaNic.PathMtu=1024", "--set", "RoceSwitch.BufferSize=200000"]
SCENARIO = f"""\
fabric: roce
stop_time: 3s
topology: {{file: {TOPOLOGY}}}
workload: {{flows: {{pattern: Flows, file: {FLOWS}}}}}
"""


def parse_fct(path: Path) -> list[dict]:
    """fct.txt as HPCC's qp_finish writes it: 'sip dip sport dport size start_time fct
    standalone_fct', %08x addresses 11.X.Y.1 of node id X * 256 + Y (its ip_to_node_id)."""
    rows = []
    for line in path.read_text().splitlines():
        f = line.split()
        assert len(f) == 8, line
        assert all(re.fullmatch(r"[0-9a-f]{8}", x) for x in f[:2]), line
        sip, dip = int(f[0], 16), int(f[1], 16)
        assert sip >> 24 == 0x0B and sip & 0xFF == 1 and dip >> 24 == 0x0B and dip & 0xFF == 1
        sport, dport, size, start, fct, ideal = (int(x) for x in f[2:])
        rows.append(
            {
                "src": (sip >> 8) & 0xFFFF,
                "dst": (dip >> 8) & 0xFFFF,
                "sport": sport,
                "dport": dport,
                "size": size,
                "start": start,
                "fct": fct,
                "standalone": ideal,
            }
        )
    return rows


def parse_pfc(path: Path) -> list[tuple[int, int, int, int, int]]:
    """pfc.txt as get_pfc writes it: 'time node nodetype ifindex type', integers."""
    rows = []
    for line in path.read_text().splitlines():
        f = line.split()
        assert len(f) == 5 and all(re.fullmatch(r"[0-9]+", x) for x in f), line
        rows.append(tuple(int(x) for x in f))
    return rows


def flow_file() -> list[tuple[int, int, int, int, int]]:
    """(src, dst, dport, size, start in ns) of each line of data/hpcc/flow.txt."""
    lines = FLOWS.read_text().split("\n")[1:]
    out = []
    for line in lines[: int(FLOWS.read_text().split()[0])]:
        src, dst, _, dport, size, start = line.split()
        out.append((int(src), int(dst), int(dport), int(size), int(Decimal(start) * 10**9)))
    return out


@pytest.fixture(scope="module")
def files_run(tmp_path_factory):
    """The HPCC files run as they are (topology: {file}, workload file: flow.txt)."""
    d = tmp_path_factory.mktemp("hpcc_files")
    (d / "s.yaml").write_text(SCENARIO)
    p = run_cli("run", "s.yaml", "--out", "out", "--hpcc-output", "--quiet", *SETTINGS, cwd=d)
    assert p.returncode == 0, p.stderr
    return d / "out"


def test_fct_has_a_line_per_flow_as_the_flow_file_says(files_run):
    rows = parse_fct(files_run / "fct.txt")
    # One line per flow: its source, destination, port, size and start (ns) as in flow.txt.
    assert sorted((r["src"], r["dst"], r["dport"], r["size"], r["start"]) for r in rows) == sorted(
        flow_file()
    )
    # In completion order, as qp_finish writes them.
    ends = [r["start"] + r["fct"] for r in rows]
    assert ends == sorted(ends)
    # Source ports: 10000 for a host pair's first flow, 10001 for its second (h0 -> h5 twice).
    by_start = {(r["src"], r["dst"], r["start"]): r["sport"] for r in rows}
    assert by_start[(0, 5, 2_000_000_000)] == 10000
    assert by_start[(0, 5, 2_000_002_000)] == 10001
    assert by_start[(2, 5, 2_000_000_000)] == 10000
    assert by_start[(3, 5, 2_000_001_000)] == 10000
    assert by_start[(5, 0, 2_000_003_000)] == 10000
    # lfsim's FCT: the flows table's (post to last ACK), in ns of a nanosecond clock.
    table = pd.read_csv(files_run / "flows.csv")
    theirs = sorted(x * 1000 for x in table["fct_us"])
    assert all(abs(a - b) <= 1 for a, b in zip(sorted(r["fct"] for r in rows), theirs, strict=True))


def _standalone_by_hand(src: int, dst: int, size: int) -> int:
    """qp_finish's standalone_fct for this topology, worked out by hand: base RTT = 2 x the
    path's propagation delay + one 1024-byte payload serialised per hop (each hop's ns
    truncated), plus size and 48 B of headers per 1024-byte packet over the slowest link."""
    paths = {
        # h0 or h2 - sw1 (100 Gb/s, 1000 ns), sw1 - sw4 (40 Gb/s, 2000 ns), sw4 - h5 (25
        # Gb/s, 500 ns): 1024 B take 81.92, 204.8 and 327.68 ns.
        (0, 5): 2 * (1000 + 2000 + 500) + 81 + 204 + 327,
        (2, 5): 2 * (1000 + 2000 + 500) + 81 + 204 + 327,
        (5, 0): 2 * (500 + 2000 + 1000) + 327 + 204 + 81,
        # h3 - sw4 (100 Gb/s, 1000 ns), sw4 - h5 (25 Gb/s, 500 ns).
        (3, 5): 2 * (1000 + 500) + 81 + 327,
    }
    packets = -(-size // 1024)
    bits = (size + 48 * packets) * 8
    return paths[(src, dst)] + bits // 25  # ns at the 25 Gb/s bottleneck: 25 bits per ns


def test_standalone_fct_is_the_hpcc_formula_and_below_the_fct(files_run):
    rows = parse_fct(files_run / "fct.txt")
    for r in rows:
        assert r["standalone"] == _standalone_by_hand(r["src"], r["dst"], r["size"]), r
        assert r["fct"] >= r["standalone"], r
    # e.g. 200 kB from h0: 7612 ns of base RTT, 209,408 B at 25 Gb/s.
    assert _standalone_by_hand(0, 5, 200000) == 7612 + 67010


def test_fct_analysis_reads_it(files_run):
    """HPCC's analysis/fct_analysis.py reads fct.txt with awk: normal traffic is dport 100,
    flows finished before T (start + fct, ns), slowdown fct / standalone_fct clamped at 1, and
    the size; its column reading replicated here and run with awk."""
    awk = shutil.which("awk")
    if awk is None:
        pytest.skip("no awk")
    program = (
        "{if ($4==100 && $6+$7<3000000000) {slow=$7/$8;print slow<1?1:slow, $5}}"  # its type 0
    )
    out = subprocess.run(
        [awk, program, str(files_run / "fct.txt")], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    pairs = [(float(x.split()[0]), int(x.split()[1])) for x in out if x]
    rows = [r for r in parse_fct(files_run / "fct.txt") if r["dport"] == 100]
    assert len(pairs) == len(rows) == 4  # the dport-200 flow is not normal traffic
    expected = sorted((max(1.0, r["fct"] / r["standalone"]), r["size"]) for r in rows)
    assert [size for _, size in sorted(pairs)] == [size for _, size in expected]
    assert [slow for slow, _ in sorted(pairs)] == pytest.approx([s for s, _ in expected], 1e-5)


def _port_of(label: str) -> tuple[int, int]:
    """An HPCC-named lfsim port -> (node id, ifindex): third.cc adds a node's net devices in
    topology.txt's order after the loopback (0); lfsim numbers ports in the same order."""
    m = re.fullmatch(r"h(\d+)", label)
    if m:
        return int(m.group(1)), 1
    m = re.fullmatch(r"sw(\d+)/p(\d+)", label)
    return int(m.group(1)), int(m.group(2)) + 1


def test_pfc_pauses_and_resumes_alternate_per_port(files_run):
    rows = parse_pfc(files_run / "pfc.txt")
    summary = json.loads((files_run / "summary.json").read_text())
    end_ns = summary["sim_time_s"] * 1e9
    assert rows, "the small buffer pauses"
    times = [r[0] for r in rows]
    assert times == sorted(times)
    assert 2_000_000_000 <= times[0] and times[-1] <= end_ns
    links = [line.split()[:2] for line in TOPOLOGY.read_text().splitlines()[2:]]
    degree = {n: sum(str(n) in link for link in links) for n in range(6)}
    state: dict[tuple[int, int], int] = {}
    for _, node, kind, ifindex, typ in rows:
        assert kind == (1 if node in (1, 4) else 0)
        assert 1 <= ifindex <= degree[node]
        assert typ == 1 - state.get((node, ifindex), 0), f"node {node} ifindex {ifindex}"
        state[(node, ifindex)] = typ
    # Every XOFF and XON a port received is one line there (no pause outlived its timer here).
    ports = pd.read_csv(files_run / "ports.csv")
    for label, pauses, xons in zip(ports["label"], ports["pause_rx"], ports["xon_rx"], strict=True):
        port = _port_of(label)
        assert sum(1 for r in rows if (r[1], r[3]) == port and r[4] == 1) == pauses, label
        assert sum(1 for r in rows if (r[1], r[3]) == port and r[4] == 0) == xons, label
    assert any(r[1] == 1 and r[3] == 3 for r in rows)  # sw1's link to sw4, its third


def test_pause_series_is_not_written_unless_recorded(files_run):
    summary = json.loads((files_run / "summary.json").read_text())
    assert "pause" not in summary["series"]
    assert not (files_run / "series" / "pause.parquet").exists()


def test_converted_scenario_with_the_flow_file_writes_the_same(files_run, tmp_path):
    """lfsim convert hpcc inlines the flows; hpcc_output.flow_file gives back their DPORTs."""
    p = run_cli("convert", "hpcc", str(TOPOLOGY), str(FLOWS), "-o", "c.yaml", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    given = f"hpcc_output={{fct: mix/fct.txt, pfc: mix/pfc.txt, flow_file: {FLOWS}}}"
    p = run_cli("run", "c.yaml", "--out", "out", "--quiet", "--set", given, *SETTINGS, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out/mix/fct.txt").read_text() == (files_run / "fct.txt").read_text()
    assert (tmp_path / "out/mix/pfc.txt").read_text() == (files_run / "pfc.txt").read_text()
    assert any(r["dport"] == 200 for r in parse_fct(tmp_path / "out/mix/fct.txt"))


STAR = """\
fabric: roce
stop_time: 5ms
record: [pause]
topology: {generator: Star, Hosts: 4, HostSpeed: 25GbE}
workload:
  w:
    pattern: Flows
    flows:
      - {src: h1, dst: h0, size: 300000, messages: 1}
      - {src: h2, dst: h0, size: 300000, messages: 1}
      - {src: h3, dst: h0, size: 300000, start: 10us, messages: 1}
      - {src: h1, dst: h2, size: 4096, messages: 2}
RoceSwitch: {BufferSize: 200000}
faults: [{at: 5us, what: link_down, where: h1-sw0, until: 100us}]
"""


def test_generator_fabric_and_a_pause_that_runs_out(tmp_path):
    """A Star (hosts h0-h3, switch sw0): hosts are nodes 0-3, the switch 4. h1's link is down
    while its pause's XON is on the way: the pause runs out (65535 quanta of 512 bit times at
    25 Gb/s, 1,342,156.8 ns) and pfc.txt resumes it then. A flow of two messages has a line
    per message, both from its QP's port."""
    (tmp_path / "s.yaml").write_text(STAR)
    p = run_cli("run", "s.yaml", "--out", "out", "--hpcc-output", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines() == [line for line in p.stderr.splitlines() if "lfsim:" in line]
    assert "several messages" not in p.stderr
    rows = parse_fct(tmp_path / "out/fct.txt")
    assert sorted((r["src"], r["dst"], r["size"]) for r in rows) == [
        (1, 0, 300000),
        (1, 2, 4096),
        (1, 2, 4096),
        (2, 0, 300000),
        (3, 0, 300000),
    ]
    # Two 25GbE cables of 2 m (10 ns each): 2 x 20 ns + 2 x 1310 ns of a 4096-byte payload
    # (RdmaNic.PathMtu), plus the size and 48 B a packet at 25 Gb/s.
    for r in rows:
        packets = -(-r["size"] // 4096)
        assert r["standalone"] == 2 * 20 + 2 * 1310 + (r["size"] + packets * 48) * 8 // 25
        # HPCC's formula counts a one-packet message's serialization three times (the base
        # RTT's two hops and the size): its bound is then the payload through both hops.
        bound = r["standalone"] if packets > 1 else 2 * 20 + 2 * 4096 * 8 // 25
        assert r["fct"] >= bound
    pair = [r for r in rows if r["dst"] == 2]
    assert pair[0]["sport"] == pair[1]["sport"] == 10000
    assert pair[0]["start"] <= pair[1]["start"]
    assert pair[0]["start"] + pair[0]["fct"] <= pair[1]["start"] + pair[1]["fct"]
    pfc = parse_pfc(tmp_path / "out/pfc.txt")
    h1 = [r for r in pfc if r[1] == 1]
    assert [r[4] for r in h1[:2]] == [1, 0] and all(r[2] == 0 and r[3] == 1 for r in h1)
    assert 1_342_156 <= h1[1][0] - h1[0][0] <= 1_342_158
    state: dict[tuple[int, int], int] = {}
    for _, node, kind, ifindex, typ in pfc:
        assert kind == int(node == 4) and 1 <= ifindex <= (4 if node == 4 else 1)
        assert typ == 1 - state.get((node, ifindex), 0)
        state[(node, ifindex)] = typ
    # Recorded: the pause series is written as usual.
    assert (tmp_path / "out/series/pause.parquet").is_file()


STORM = """\
fabric: roce
stop_time: 3ms
topology: {generator: Star, Hosts: 3, HostSpeed: 25GbE}
workload:
  w:
    pattern: Flows
    flows:
      - {src: h1, dst: h0, size: 1000000, messages: 1}
      - {src: h2, dst: h0, size: 1000000, messages: 1}
faults: [{at: 100us, what: pfc_storm, where: h0, until: 2ms}]
"""


def test_a_refreshed_pause_is_one_pause(tmp_path):
    """h0's NIC pauses the switch from 100 us to 2 ms, refreshing its XOFF at half its timer
    (671 us at 25 Gb/s): the switch (node 3, after hosts 0-2) receives three XOFFs and one
    XON on its port 0 (ifindex 1), which pfc.txt shows as one pause and one resume, as the HPCC
    code's switches pause once per spell."""
    (tmp_path / "s.yaml").write_text(STORM)
    p = run_cli("run", "s.yaml", "--out", "out", "--hpcc-output", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    ports = pd.read_csv(tmp_path / "out/ports.csv").set_index("label")
    assert ports.loc["sw0/p0", "pause_rx"] == 3 and ports.loc["sw0/p0", "xon_rx"] == 1
    pfc = parse_pfc(tmp_path / "out/pfc.txt")
    assert [r[1:] for r in pfc] == [(3, 1, 1, 1), (3, 1, 1, 0)]
    assert 100_000 <= pfc[0][0] < 101_000 and 2_000_000 <= pfc[1][0] < 2_001_000


BAD = {
    "outside the folder": (["--set", "hpcc_output={fct: ../fct.txt}"], "hpcc_output: got"),
    "lfsim's own file": (["--set", "hpcc_output={fct: summary.json}"], "hpcc_output: got"),
    "one name twice": (["--set", "hpcc_output={fct: a.txt, pfc: a.txt}"], "hpcc_output: got"),
    "unknown key": (["--set", "hpcc_output={fcts: a.txt}"], "hpcc_output: got"),
    "not a mapping": (["--set", "hpcc_output=3"], "hpcc_output: got '3'"),
    "no flow file": (
        ["--set", "hpcc_output={pfc: p.txt, flow_file: missing.txt}"],
        "hpcc_output.flow_file: got",
    ),
    "another flow file": (
        ["--set", f"hpcc_output={{fct: f.txt, flow_file: {DATA / 'other-flow.txt'}}}"],
        "line 3 is a flow h2>h5 of 100000 B, the scenario's flow 1 h2>h5 of 200000 B",
    ),
    "a device": (["--set", "hpcc_output={fct: f.txt, flow_file: /dev/zero}"], "not a file"),
    "two planes": (["--hpcc-output", "--set", "topology.Planes=2"], "topology.Planes 2"),
    "no flows table": (
        ["--hpcc-output", "--set", "Report.FlowTable=false"],
        "hpcc_output: fct needs the flows table",
    ),
}


@pytest.mark.parametrize("args,expected", BAD.values(), ids=BAD.keys())
def test_bad_hpcc_output_exits_2_and_writes_nothing(refused, tmp_path, args, expected):
    (tmp_path / "s.yaml").write_text(SCENARIO)
    refused("run", "s.yaml", *args, expected=expected)


def test_bad_hpcc_output_in_the_file_and_on_fc(refused, tmp_path):
    (tmp_path / "s.yaml").write_text(SCENARIO + "hpcc_output: [fct.txt]\n")
    refused("run", "s.yaml", expected="hpcc_output: got '['fct.txt']'; accepted: true (fct.txt")
    refused("run", "fc_distance", "--hpcc-output", expected="hpcc_output: got it with fabric fc")


def test_message_table_has_every_message(tmp_path):
    # Report.MessageTable: a row per message completed over the whole run (warm-up included),
    # numbered per flow in completion order; a flow's first message is posted at its start and
    # each completes no earlier than the one before (one QP, in order).
    r = lfsim.run(
        "incast",
        {"Report.MessageTable": True, "stop_time": "2ms", "Report.Warmup": "1ms"},
        out=tmp_path / "out",
    )
    m = r.table("messages")
    flows = r.table("flows")
    assert len(m) > len(flows) > 0
    for f, rows in m.groupby("flow"):
        assert rows["message"].tolist() == list(range(len(rows)))
        done = (rows["start_ns"] + rows["fct_ns"]).to_numpy()
        assert (done[1:] >= done[:-1]).all()
        start_us = flows.loc[flows["id"] == f, "start_us"].iloc[0]
        assert rows["start_ns"].iloc[0] == pytest.approx(start_us * 1e3, rel=1e-12)
    assert (m["fct_ns"] > 0).all() and (m["start_ns"] + m["fct_ns"] <= 2e6).all()
    # Those completed in the window are the messages the metrics count (two workloads).
    late = m[m["start_ns"] + m["fct_ns"] >= 1e6]
    completed = r.metrics["messages_completed"] + r.metrics["victim_messages_completed"]
    assert len(late) == completed
