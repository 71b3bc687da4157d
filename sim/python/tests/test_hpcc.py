"""HPCC simulator input files: reading topology.txt and flow.txt, `lfsim convert hpcc`, and the
converted example running with every flow complete, no faster than its ideal, without loss."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

import lfsim
from lfsim import hpcc
from lfsim.cli import main
from lfsim.convert import exact_time

EXAMPLE = Path(__file__).resolve().parents[3] / "scenarios" / "hpcc"


def test_reads_the_example_topology():
    g = hpcc.read_topology(EXAMPLE / "topology.txt")
    hosts = [n["name"] for n in g["nodes"] if n["kind"] == "host"]
    switches = [n["name"] for n in g["nodes"] if n["kind"] == "switch"]
    assert hosts == [f"h{k}" for k in range(16)]
    assert switches == [f"sw{k}" for k in range(16, 22)]
    assert len(g["links"]) == 24
    assert g["links"][0] == {"a": "h0", "b": "sw16", "speed": "100GbE", "delay": "1000ns"}
    assert g["links"][-1]["speed"] == "400GbE"


def test_reads_ns3_datacenters_topology_header_and_bare_rates():
    """Issue 41: ns3-datacenter's topology files start 'NODES SWITCHES TORS LINKS' and give rates
    as bit/s without a unit (ns-3's DataRate reads '100000000000.0' so); the project's own
    bench/ns3-datacenter/topology-incast8.txt was refused."""
    bench = EXAMPLE.parents[1] / "bench" / "ns3-datacenter"
    g = hpcc.read_topology(bench / "topology-incast8.txt")
    assert [n["name"] for n in g["nodes"] if n["kind"] == "switch"] == ["sw9"]
    assert len(g["links"]) == 9 and {x["speed"] for x in g["links"]} == {"100GbE"}
    assert g["links"][0] == {"a": "h0", "b": "sw9", "speed": "100GbE", "delay": "1us"}


@pytest.mark.parametrize(
    ("text", "seconds", "expected"),
    [("2", 2, "2s"), ("2.000001", None, "2000001us"), ("0.0000000005", None, "500ps")],
)
def test_start_times_are_exact(tmp_path, text, seconds, expected):
    f = tmp_path / "flow.txt"
    f.write_text(f"1\n0 1 3 100 1000 {text}\n")
    (flow,) = hpcc.read_flows(f)
    ps = int(flow["start"][:-2])
    assert exact_time(ps) == expected
    if seconds is not None:
        assert ps == seconds * 10**12


def test_flow_file_stops_at_its_count(tmp_path):
    # The simulator reads the first line's count of flows; its own example ends with notes.
    f = tmp_path / "flow.txt"
    f.write_text("2\n0 1 3 100 1000 2\n1 0 3 100 2000 2.5\nFirst line: # of flows\n")
    flows = hpcc.read_flows(f)
    assert [(x["src"], x["dst"], x["size"]) for x in flows] == [
        ("h0", "h1", 1000),
        ("h1", "h0", 2000),
    ]


@pytest.mark.parametrize(
    ("topology", "message"),
    [
        ("3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbs 1000ns 0\n", "line 4, field rate"),
        ("3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0.01\n", "line 4, field error_rate"),
        ("3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 7 100Gbps 1000ns 0\n", "line 4, field dst"),
        ("3 1 2\n2\n0 2 100Gbps 1000 0\n1 2 100Gbps 1000ns 0\n", "line 3, field delay"),
        ("3 1 3\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", "2 link lines; accepted: 3"),
        ("3 2 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", "line 2: 1 switch ids"),
        # ns3-datacenter's header: TORS is at most SWITCHES; five numbers are neither form.
        ("3 1 2 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n", "line 1, field tors"),
        (
            "3 1 1 2 9\n2\n0 2 100Gbps 1000ns 0\n",
            "'NODES SWITCHES TORS LINKS' \\(ns3-datacenter\\)",
        ),
        ("3 1 2\n2\n0 2 100 1000ns 0\n1 2 100Gbps 1000ns 0\n", "line 3, field rate"),
    ],
)
def test_malformed_topology_names_file_line_and_field(tmp_path, topology, message):
    t = tmp_path / "topology.txt"
    t.write_text(topology)
    with pytest.raises(lfsim.ScenarioError, match=message) as exc:
        hpcc.read_topology(t)
    assert str(t) in str(exc.value) and "\n" not in str(exc.value)


def test_convert_writes_a_scenario_that_runs(tmp_path, capsys):
    out = tmp_path / "hpcc.yaml"
    code = main(
        [
            "convert",
            "hpcc",
            str(EXAMPLE / "topology.txt"),
            str(EXAMPLE / "flow.txt"),
            "-o",
            str(out),
        ]
    )
    assert code == 0
    assert "16 hosts, 6 switches, 24 links, 14 flows" in capsys.readouterr().out
    scenario = yaml.safe_load(out.read_text())
    assert scenario["fabric"] == "roce"
    assert len(scenario["workload"]["flows"]["flows"]) == 14
    r = lfsim.run(out)
    m = r.metrics
    # Every flow completes (the run ends then), none is lost, none beats its ideal FCT.
    assert m["flows_completed"] == m["flows_started"] == 14
    assert m["flows_in_flight"] == 0
    assert m["drops"] == 0 and m["retransmitted_packets"] == 0
    flows = r.table("flows")
    assert (flows["fct_us"] >= flows["ideal_fct_us"]).all()
    assert math.isclose(flows["size_bytes"].sum(), 8 * 1_000_000 + 2 * (4096 + 65536 + 1_000_000))
    # The incast's eight 1 MB flows share h0's 100 Gb/s link: the last one to finish took at
    # least the time to carry all 8 MB at that rate.
    incast = flows[flows["dst"] == 0]
    assert incast["fct_us"].max() >= 8 * 1_000_000 * 8 / 100e9 * 1e6


def test_convert_refuses_a_flow_from_a_switch(tmp_path, capsys):
    f = tmp_path / "flow.txt"
    f.write_text("1\n16 0 3 100 1000 2\n")
    out = tmp_path / "x.yaml"
    code = main(["convert", "hpcc", str(EXAMPLE / "topology.txt"), str(f), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "line 2, field src: got '16', a switch" in err
    assert not out.exists()


def test_converted_incast8_runs_as_the_benchmark_scenario(tmp_path, capsys):
    """Issue 41's done-when: bench/ns3-datacenter's three files converted with --config give
    scenarios/bench_dcqcn_incast8.yaml's run, every metric equal (the Star names its switch
    sw0 where the files number it 9)."""
    bench = EXAMPLE.parents[1] / "bench" / "ns3-datacenter"
    out = tmp_path / "incast8.yaml"
    code = main(
        [
            "convert",
            "hpcc",
            str(bench / "topology-incast8.txt"),
            str(bench / "flow-incast8.txt"),
            "--config",
            str(bench / "config-incast8.txt"),
            "-o",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    converted = lfsim.run(out).metrics
    hand = lfsim.run(EXAMPLE.parent / "bench_dcqcn_incast8.yaml").metrics
    assert converted["flows_completed"] == 8
    renamed = {
        k: v.replace("sw9/", "sw0/") if isinstance(v, str) else v for k, v in converted.items()
    }
    assert renamed == hand


def test_goodput_window_opens_with_the_first_flow(tmp_path):
    """HPCC's flows start after 2 s of set-up: the report's window opens with the first flow,
    so one flow alone on a 100 Gb/s path shows a goodput near the line rate (payload 10,000,000
    B), not its bytes over the idle two seconds (0.04 Gb/s before)."""
    t = tmp_path / "topology.txt"
    t.write_text("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n")
    f = tmp_path / "flow.txt"
    f.write_text("1\n0 1 3 100 10000000 2\n")
    out = tmp_path / "one.yaml"
    assert main(["convert", "hpcc", str(t), str(f), "-o", str(out)]) == 0
    assert yaml.safe_load(out.read_text())["Report"] == {"Warmup": "2s"}
    r = lfsim.run(out)
    (gbps,) = r.metrics["per_flow_goodput_Gbps"]
    # Payload over line time: 4,096 B a packet under at most 82 B of RoCEv2, Ethernet, preamble
    # and gap; the first packet's path delay and the last ACK are a few microseconds of ~850.
    assert 95 < gbps < 100
    fct_s = float(r.table("flows")["fct_us"].iloc[0]) * 1e-6
    assert math.isclose(gbps, 10_000_000 * 8 / fct_s / 1e9, rel_tol=1e-3)
