"""Bad input to the open fabric's topology and workload parts, through ``lfsim run``.

Each case writes a scenario (and the files it names) into an empty directory and runs it: the
command must fail with exit code 2 and one line naming the file or key, the line and the field
where there is one, and what is accepted; no traceback and nothing written (no output
directory, no temporary one left behind).
"""

import json
import textwrap

import pandas as pd
import pytest
import yaml

BASE = "fabric: roce\nstop_time: 1ms\n"
STAR = "topology: {generator: Star, Hosts: 3}\n"
INCAST = "workload:\n  w: {pattern: Incast, Destinations: h0}\n"


def graph(*links, nodes="h0 h1 sw0"):
    """A listed graph: hosts hN and switches swN, and the links (one 'a b' string each)."""
    items = ", ".join(
        f"{{name: {n}, kind: {'switch' if n.startswith('sw') else 'host'}}}" for n in nodes.split()
    )
    rows = "".join(f"    - {{a: {a}, b: {b}}}\n" for a, b in (link.split() for link in links))
    return f"topology:\n  nodes: [{items}]\n  links:\n{rows}"


# HPCC topology.txt: 3 nodes of which node 2 is the switch, 2 links; then hosts h0, h1, sw2.
HPCC_TOPOLOGY = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n"
HPCC_FLOWS = "flows: {pattern: Flows, file: flow.txt}"

# name -> (files {name: text}, the scenario file's text, what the one error line contains)
CASES = {
    "unknown node in a link": (
        {},
        BASE + graph("h0 sw0", "h1 sw9") + INCAST,
        "s.yaml line 7, topology.links[1].b: got 'sw9'; accepted: the name of a node in nodes "
        "(h0, h1, sw0)",
    ),
    "unknown node in a link of a topology file": (
        {
            "graph.yaml": "nodes:\n  - {name: h0, kind: host}\n  - {name: h1, kind: host}\n"
            "  - {name: sw0, kind: switch}\nlinks:\n  - {a: h0, b: sw0}\n  - {a: h1, b: sw1}\n"
        },
        BASE + "topology: {file: graph.yaml}\n" + INCAST,
        "graph.yaml line 7, topology.links[1].b: got 'sw1'; accepted: the name of a node in nodes",
    ),
    "disconnected graph": (
        {},
        BASE + graph("h0 sw0", "h1 sw1", nodes="h0 h1 sw0 sw1") + INCAST,
        "topology: host 'h1' has no route to host 'h0'; accepted: a graph where every host "
        "reaches every other through switches",
    ),
    "disconnected HPCC topology": (
        {"topology.txt": "4 2 2\n2 3\n0 2 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n"},
        BASE + "topology: {file: topology.txt}\n" + INCAST,
        "topology: host 'h1' has no route to host 'h0'",
    ),
    "host without a link": (
        {},
        BASE + graph("h0 sw0", "h1 sw0", nodes="h0 h1 h2 sw0") + INCAST,
        "topology: node 'h2' has no link; accepted: every node on a link",
    ),
    "host reached only through another host": (
        {},
        BASE + graph("h0 sw0", "h1 sw0", "h2 h1", nodes="h0 h1 h2 sw0") + INCAST,
        "topology: host 'h1' is cabled to host 'h2'; accepted: hosts cabled to switches",
    ),
    "flow to a host that does not exist, of many": (
        {},
        BASE
        + "topology: {generator: Star, Hosts: 20}\n"
        + "workload:\n  w:\n    pattern: Flows\n    flows:\n      - {src: h1, dst: h20}\n",
        "accepted: the name of a host (h0, h1, h2, h3, h4, h5, h6, h7, ... (20 hosts))",
    ),
    "flow to a host that does not exist": (
        {},
        BASE
        + STAR
        + "workload:\n  w:\n    pattern: Flows\n    flows:\n      - {src: h1, dst: h0}\n"
        "      - {src: h2, dst: h9}\n",
        "s.yaml line 9, workload.w.flows[1].dst: got 'h9'; accepted: the name of a host "
        "(h0, h1, h2)",
    ),
    "size CDF that does not rise to 1": (
        {"sizes.cdf": "1000 0.2\n10000 0.5\n100000 0.9\n"},
        BASE + STAR + "workload:\n  web: {pattern: OpenLoop, SizeCdf: sizes.cdf, Load: 0.3}\n",
        "workload.web.SizeCdf: {dir}/sizes.cdf line 3, field 2 (cdf): got '0.9' on the last line, "
        "the cdf does not rise to 1; accepted: lines of 'bytes cdf'",
    ),
    "size CDF that falls": (
        {"sizes.cdf": "1000 0.5\n10000 0.2\n100000 1\n"},
        BASE + STAR + "workload:\n  web: {pattern: OpenLoop, SizeCdf: sizes.cdf, Load: 0.3}\n",
        "workload.web.SizeCdf: {dir}/sizes.cdf line 2, field 2 (cdf): got '0.2'",
    ),
    "load above 1": (
        {},
        BASE + STAR + "workload:\n  web: {pattern: OpenLoop, Load: 1.5}\n",
        "workload.web.Load: got '1.5'; accepted: a number in 1e-06..1",
    ),
    "HPCC topology line with a field missing": (
        {"topology.txt": "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns\n"},
        BASE + "topology: {file: topology.txt}\n" + INCAST,
        "topology.txt line 4: got '1 2 100Gbps 1000ns'; accepted: 'SRC DST RATE DELAY ERROR_RATE'",
    ),
    "HPCC topology line to a node that does not exist": (
        {"topology.txt": "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 7 100Gbps 1000ns 0\n"},
        BASE + "topology: {file: topology.txt}\n" + INCAST,
        "topology.txt line 4, field dst: got '7'; accepted: an integer in 0..2",
    ),
    "HPCC topology line with a rate lfsim does not model": (
        {"topology.txt": "3 1 2\n2\n0 2 3Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n"},
        BASE + "topology: {file: topology.txt}\n" + INCAST,
        "topology.txt line 3, field rate: got '3Gbps'; accepted: one of 10Gbps, 25Gbps",
    ),
    "HPCC flow line with a bad size": (
        {"topology.txt": HPCC_TOPOLOGY, "flow.txt": "2\n0 1 3 100 2000 2.0\n1 0 3 100 2k 2.0\n"},
        BASE + "topology: {file: topology.txt}\nworkload:\n  " + HPCC_FLOWS + "\n",
        "flow.txt line 3, field size: got '2k'; accepted: an integer in 1..2147483648",
    ),
    "HPCC flow line with a field missing": (
        {"topology.txt": HPCC_TOPOLOGY, "flow.txt": "1\n0 1 3 100 2000\n"},
        BASE + "topology: {file: topology.txt}\nworkload:\n  " + HPCC_FLOWS + "\n",
        "flow.txt line 2: got '0 1 3 100 2000'; accepted: 'SRC DST PRIORITY DPORT SIZE START_TIME'",
    ),
    "unknown generator": (
        {},
        BASE + "topology: {generator: Torus}\n" + INCAST,
        "topology.generator: got 'Torus'; accepted: one of FatTree, Graph, LeafSpine, "
        "PointToPoint, Ring, Star",
    ),
    "unknown pattern": (
        {},
        BASE + STAR + "workload:\n  w: {pattern: Shuffle}\n",
        "workload.w.pattern: got 'Shuffle'; accepted: one of AllToAll, Flows, Incast, OpenLoop",
    ),
    "unknown attribute of a generator": (
        {},
        BASE + "topology: {generator: Star, Leaves: 4}\n" + INCAST,
        "topology.Leaves does not exist for generator Star; accepted: Routing, Planes, "
        "HostSpeed, UplinkSpeed, LinkFailure, StaleRoutes, Hosts",
    ),
    "unknown attribute of a pattern": (
        {},
        BASE + STAR + "workload:\n  w: {pattern: Incast, Destinations: h0, Shift: 2}\n",
        "workload.w.Shift does not exist for pattern Incast; accepted: Hosts, Destinations, Load",
    ),
    "pattern of another fabric": (
        {},
        BASE + STAR + "workload:\n  w: {pattern: FcStream, Destinations: h0}\n",
        "workload.w.pattern: got 'FcStream' with fabric roce; accepted: fabric fc for this pattern",
    ),
}


def _everything(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def _fails_cleanly(cli, cwd, args, expected):
    before = _everything(cwd)
    p = cli("run", *args, "--out", "out")
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert lines[0].startswith("lfsim: error: ")
    assert expected in lines[0], lines[0]
    assert _everything(cwd) == before  # no out/, no .out.*.tmp


@pytest.mark.parametrize("case", list(CASES))
def test_bad_topology_or_workload_is_one_line_exit_2_and_nothing_written(cli, tmp_path, case):
    files, scenario, expected = CASES[case]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "s.yaml").write_text(scenario)
    _fails_cleanly(cli, tmp_path, ["s.yaml"], expected.replace("{dir}", str(tmp_path)))


OVERRIDES = [
    (["--set", "workload.incast.Load=1.5"], "mode pfc: workload.incast.Load: got '1.5'"),
    (
        ["--set", "topology.Nope=1"],
        "mode pfc: topology.Nope does not exist for generator LeafSpine; accepted: Routing",
    ),
    (
        ["--set", "workload.incast.Nope=1"],
        "mode pfc: workload.incast.Nope does not exist for pattern Incast",
    ),
    (["--set", "workload.nope.Load=0.5"], "workload.nope.Load: workload 'nope' does not exist"),
    (
        ["--set", "workload.incast.pattern=Fcp"],
        "workload.incast.pattern: got 'Fcp' with fabric roce; accepted: fabric fc",
    ),
    (
        ["--set", "workload.incast.Hosts=h1-h99"],
        "workload.incast.Hosts: got 'h1-h99'; accepted: comma-separated host names",
    ),
]


@pytest.mark.parametrize(("args", "expected"), OVERRIDES, ids=lambda x: " ".join(x)[:50])
def test_bad_override_of_a_part_is_one_line_exit_2(cli, tmp_path, args, expected):
    _fails_cleanly(cli, tmp_path, ["incast", *args], expected)


# What a fabric or pattern cannot honour is refused, never silently ignored.
UNUSED = [
    (
        ["incast", "--set", "mode=fc", "--set", "workload.incast.Priority=3"],
        "workload.incast.Priority: got 3; accepted: -1 with fabric fc",
    ),
    (
        ["fc_distance", "--set", "workload.stream.Priority=2"],
        "workload.stream.Priority: got '2'; accepted: -1 with pattern FcStream",
    ),
    (
        ["fc_pingpong", "--set", "workload.pingpong.StartSpread=1us"],
        "workload.pingpong.StartSpread: got '1us'; accepted: 0s with pattern FcPingPong",
    ),
    (
        ["incast", "--set", "workload.incast.Plane=1"],
        "workload.incast.Plane: got 1 for a flow from h1 to h0; accepted: -1 or a plane both "
        "hosts are on",
    ),
]


@pytest.mark.parametrize(("args", "expected"), UNUSED, ids=lambda x: " ".join(x)[:50])
def test_a_setting_that_cannot_be_honoured_is_refused(cli, tmp_path, args, expected):
    _fails_cleanly(cli, tmp_path, args, expected)


def test_a_size_cdf_file_is_read_from_the_scenario_directory(cli, tmp_path):
    """As topology and flow files: the run starts elsewhere, the CDF sits beside the scenario.
    Every flow size is drawn from it: between its first and last point."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "sizes.cdf").write_text("2000 0\n3000 0.5\n4000 1\n")
    (sub / "s.yaml").write_text(
        textwrap.dedent(
            """\
            fabric: roce
            stop_time: 1ms
            topology: {generator: Star, Hosts: 4}
            workload:
              web: {pattern: OpenLoop, SizeCdf: sizes.cdf, Load: 0.2}
            """
        )
    )
    p = cli("run", "sub/s.yaml", "--out", "out", "--quiet")
    assert p.returncode == 0, p.stderr
    cfg = yaml.safe_load((tmp_path / "out" / "config.yaml").read_text())
    assert cfg["workload"]["web"]["SizeCdf"] == str(sub / "sizes.cdf")  # reruns from anywhere
    sizes = pd.read_parquet(tmp_path / "out" / "flows.parquet")["size_bytes"]
    assert len(sizes) > 10
    assert sizes.between(2000, 4000).all()


def test_an_hpcc_topology_and_flow_file_run_on_roce(cli, tmp_path):
    """Two hosts on one switch, 1000 ns per link: a 2000-byte flow takes at least the two
    links' propagation."""
    (tmp_path / "topology.txt").write_text(HPCC_TOPOLOGY)
    (tmp_path / "flow.txt").write_text("1\n0 1 3 100 2000 0.000001\n")
    (tmp_path / "s.yaml").write_text(
        BASE + "topology: {file: topology.txt}\nworkload:\n  " + HPCC_FLOWS + "\n"
    )
    p = cli("run", "s.yaml", "--out", "out", "--quiet")
    assert p.returncode == 0, p.stderr
    m = json.loads((tmp_path / "out" / "summary.json").read_text())["metrics"]
    assert m["flows_completed"] == 1 and m["fct_p50_us"] >= 2.0
