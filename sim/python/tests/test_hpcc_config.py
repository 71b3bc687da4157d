"""`lfsim convert hpcc --config`: the HPCC simulator's and ns3-datacenter's config.txt read as
their programs read it, each key's lfsim value checked against what the reference code computes
(third.cc, powertcp-evaluation-*.cc, switch-mmu.cc, rdma-hw.cc), written out here by their
formulas; bad input refused in one line with nothing written; the example configs of both
repositories (data/hpcc/SOURCES.txt) converted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import lfsim
from lfsim.cli import main
from lfsim.convert import hpcc_scenario
from lfsim.hpcc_config import Flags, cc_name, data_rate_bps

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "bench" / "ns3-datacenter"
DATA = Path(__file__).resolve().parent / "data" / "hpcc"
TOPO8 = BENCH / "topology-incast8.txt"
FLOW8 = BENCH / "flow-incast8.txt"
CONFIG8 = BENCH / "config-incast8.txt"
GBPS = 10**9


def headroom(rate_bps: int, delay_ns: int) -> int:
    # third.cc and powertcp-evaluation-*.cc, per switch port:
    #   uint32_t headroom = rate * delay / 8 / 1000000000 * 3;
    return rate_bps * delay_ns // 8 // 1000000000 * 3


def edit(path: Path, tmp: Path, **keys: str) -> Path:
    """A copy of a config with some keys' values replaced (a key not in it: appended)."""
    text = path.read_text()
    for k, v in keys.items():
        text, n = re.subn(rf"(?m)^{k} .*$", f"{k} {v}", text)
        if not n:
            text += f"\n{k} {v}\n"
    out = tmp / path.name
    out.write_text(text)
    return out


def line_of(path: Path, key: str) -> int:
    return next(n for n, t in enumerate(path.read_text().splitlines(), 1) if t.startswith(key))


def convert(tmp, topology=TOPO8, flows=FLOW8, config=CONFIG8, program=None, flags=None):
    return hpcc_scenario(topology, flows, config, program, flags, tmp / "s.yaml", [])


def test_incast8_maps_as_ns3_datacenters_burst_program_computes(tmp_path):
    s = convert(tmp_path)
    sw = s["RoceSwitch"]
    h = headroom(100 * GBPS, 1000)  # 100 Gb/s, 1 us
    assert h == 37500
    # powertcp-evaluation-burst.cc: SetIngressPool(BUFFER_SIZE MiB), the headroom of every
    # (port, queue) on top in SetBufferPool; lfsim's BufferSize holds its one lossless class's
    # headroom per port around the same shared pool.
    assert sw["Headroom"] == h
    assert sw["BufferSize"] == 4 * 1024 * 1024 + 9 * h == 4531804
    assert sw["ReservedBytes"] == 0  # SetReserved is never called
    assert sw["Alpha"] == 1 / 8  # SetAlphaIngress(1.0 / 8)
    assert sw["XonOffset"] == 2496  # SwitchMmu's xon_offset
    # KMIN_MAP 1 100000000000 400 ...: ConfigEcn multiplies by 1000; ShouldSendCN at dequeue.
    assert (sw["Kmin"], sw["Kmax"], sw["Pmax"]) == (400 * 1000, 1600 * 1000, 0.2)
    assert sw["EcnMarkingPoint"] == "Dequeue" and sw["EcnEnabled"] is True
    assert sw["ForwardingLatency"] == "0ns" and sw["PfcEnabled"] is True
    nic = s["RdmaNic"]
    assert nic == {
        "PathMtu": 1024,  # PACKET_PAYLOAD_SIZE
        "AckInterval": 1,  # L2_ACK_INTERVAL 1 (bytes): every packet
        "CongestionControl": "Dcqcn",  # CC_MODE 1
        "CnpInterval": "0s",  # every marked packet's ACK carries the CNP flag
        "CnpDscp": 26,  # in the data's class, 3
    }
    d = s["Dcqcn"]
    assert d["rpg_time_reset"] == "900us"  # RP_TIMER 900 (us)
    assert d["dce_tcp_g"] == 1024 - 0.00390625 * 1024 == 1020  # EWMA_GAIN
    assert d["dce_tcp_rtt"] == "1us"  # ALPHA_RESUME_INTERVAL 1
    assert d["rate_reduce_monitor_period"] == "4us"  # RATE_DECREASE_INTERVAL 4
    assert d["rpg_threshold"] == 1  # FAST_RECOVERY_TIMES
    assert (d["rpg_ai_rate"], d["rpg_hai_rate"], d["rpg_min_rate"]) == (
        "50Mbps",
        "100Mbps",
        "100Mbps",
    )
    assert d["clamp_tgt_rate"] is False and d["clamp_tgt_rate_after_time_inc"] is True
    assert d["AlphaUpdate"] == "PerWindow" and d["rpg_byte_reset"] == 0
    assert s["stop_time"] == "2s"  # SIMULATOR_STOP_TIME 2
    assert s["hpcc_output"]["fct"] == "mix/fct.txt" and s["hpcc_output"]["pfc"] == "mix/pfc.txt"
    assert s["Report"] == {"Warmup": "0s"}  # the window opens with the first flow, at 0
    assert "faults" not in s  # ERROR_RATE_PER_LINK 0, LINK_DOWN 0 0 0


def two_racks(tmp: Path, header: str = "6 2 5", host_rate: str = "100Gbps") -> Path:
    """h0, h1 on sw4; h2, h3 on sw5; the switches joined by a 2 us link."""
    t = tmp / "topology.txt"
    t.write_text(
        f"{header}\n4 5\n"
        f"0 4 {host_rate} 1us 0\n1 4 {host_rate} 1us 0\n2 5 {host_rate} 1us 0\n"
        f"3 5 {host_rate} 1us 0\n4 5 100Gbps 2us 0\n"
    )
    return t


def flows2(tmp: Path) -> Path:
    f = tmp / "flow.txt"
    f.write_text("2\n0 2 3 100 100000 2\n1 3 3 100 100000 2.000001\n")
    return f


def test_the_hpcc_simulators_own_config_maps_as_third_cc_computes(tmp_path):
    # HPCC's simulation/mix/config.txt (CC_MODE 3, BUFFER_SIZE 32) with a payload lfsim has.
    cfg = edit(DATA / "hpcc-config.txt", tmp_path, PACKET_PAYLOAD_SIZE="1024")
    s = convert(tmp_path, two_racks(tmp_path), flows2(tmp_path), cfg)
    # CalculateRoute and main's pair loop: RTT = 2 x delay + one payload's serialisation per
    # hop (integer ns); the longest pair crosses both switches: 1 + 2 + 1 us, three hops.
    tx = 1024 * 1000000000 * 8 // (100 * GBPS)
    assert tx == 81
    max_rtt = 2 * (1000 + 2000 + 1000) + 3 * tx
    assert s["Hpcc"] == {
        "BaseRtt": f"{max_rtt}ns",  # GLOBAL_T 1: maxRtt
        "TargetUtilization": 0.95,  # U_TARGET
        "MaxStage": 0,  # MI_THRESH 0
        "RateAI": "50Mbps",  # RATE_AI
        "MinRate": "100Mbps",  # MIN_RATE
        "IntHops": 5,  # IntHeader::maxHop
    }
    assert s["RdmaNic"]["CongestionControl"] == "Hpcc"
    sw = s["RoceSwitch"]
    hosts, uplink = headroom(100 * GBPS, 1000), headroom(100 * GBPS, 2000)
    assert sw["Headroom"] == max(hosts, uplink) == 75000
    # switch-mmu.cc: ConfigBufferSize(32 MiB); the dynamic threshold shares what the headroom
    # of the three ports (ConfigHdrm) and their 4 KiB reserve (ConfigNPort) leave.
    shared = 32 * 1024 * 1024 - (2 * hosts + uplink) - 3 * 4096
    assert sw["BufferSize"] == shared + 3 * 8 * 4096 + 3 * 75000
    assert sw["ReservedBytes"] == 4096 and sw["XonOffset"] == 3072  # reserve, resume_offset
    assert sw["Alpha"] == 1 / 8  # pfc_a_shift 3: no port faster than the NIC
    assert s["stop_time"] == "4s"  # SIMULATOR_STOP_TIME 4.00
    lfsim.load_scenario(
        {**s, "hpcc_output": {**s["hpcc_output"], "flow_file": str(flows2(tmp_path))}}
    )


def test_third_halves_alpha_per_doubling_and_lfsim_has_one(tmp_path, capsys):
    # A port at 4x the NIC's rate gets pfc_a_shift 1 (alpha 1/2), the host ports 3 (1/8).
    t = two_racks(tmp_path, host_rate="25Gbps")
    cfg = edit(DATA / "hpcc-config.txt", tmp_path, PACKET_PAYLOAD_SIZE="1024")
    out = tmp_path / "x.yaml"
    code = main(
        ["convert", "hpcc", str(t), str(flows2(tmp_path)), "--config", str(cfg), "-o", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert (
        f"{t} line 7: third.cc gives this 100 Gb/s switch port PFC alpha 1/2 and others 1/8" in err
    )
    assert not out.exists()


def test_dctcp_and_timely_keys(tmp_path):
    cfg = edit(
        DATA / "hpcc-config.txt",
        tmp_path,
        PACKET_PAYLOAD_SIZE="1024",
        CC_MODE="8",
        EWMA_GAIN="0.0625",
        DCTCP_RATE_AI="1000Mb/s",
    )
    s = convert(tmp_path, two_racks(tmp_path), flows2(tmp_path), cfg)
    max_rtt = 2 * 4000 + 3 * 81
    assert s["Dctcp"] == {
        "g": 0.0625,  # EWMA_GAIN: HandleAckDctcp's m_g
        "RateAI": "1Gbps",  # DCTCP_RATE_AI
        "MinRate": "100Mbps",
        "InitialAlpha": 1,  # dctcp.m_alpha = 1
        "BaseRtt": f"{max_rtt}ns",  # HAS_WIN 1, VAR_WIN 1: the window scales with the rate
    }
    assert s["RdmaNic"]["CongestionControl"] == "Dctcp"
    cfg = edit(cfg, tmp_path, CC_MODE="7", HAS_WIN="0", RATE_AI="20Mb/s", RATE_HAI="100Mb/s")
    s = convert(tmp_path, two_racks(tmp_path), flows2(tmp_path), cfg)
    t = s["Timely"]
    # UpdateRateTimely: + RATE_AI for 5 increases in a row, then + RATE_HAI.
    assert (t["Delta"], t["HaiN"], t["HaiThreshold"]) == ("20Mbps", 5, 5)
    assert (t["TLow"], t["THigh"], t["MinRtt"], t["Beta"]) == ("50us", "500us", "20us", 0.8)


def test_cc_modes_and_powertcp_as_ns3_datacenter_selects_them(tmp_path):
    assert [cc_name(m) for m in (1, 3, 7, 8, 10, 2)] == [
        "Dcqcn",
        "Hpcc",
        "Timely",
        "Dctcp",
        None,
        None,
    ]
    # rdma-hw.cc HandleAckHp: PowerTCP inside CC mode 3 with --wien, its delay form with
    # --delayWien too; other modes ignore both, --delayWien alone does nothing.
    assert cc_name(3, wien=True) == "PowerTcp"
    assert cc_name(3, wien=True, delay_wien=True) == "ThetaPowerTcp"
    assert cc_name(3, delay_wien=True) == "Hpcc"
    assert cc_name(1, wien=True, delay_wien=True) == "Dcqcn"
    # Through the command line's flags (script-burst.sh: --algorithm=3 --wien=true ...).
    cfg = edit(DATA / "ns3dc-config-burst.txt", tmp_path, PACKET_PAYLOAD_SIZE="1024")
    for flags, name in (
        (Flags(wien=True), "PowerTcp"),
        (Flags(wien=True, delay_wien=True), "ThetaPowerTcp"),
        (Flags(algorithm=1, window_check=0), "Dcqcn"),
    ):
        s = convert(tmp_path, config=cfg, flags=flags)
        assert s["RdmaNic"]["CongestionControl"] == name


@pytest.mark.parametrize(
    ("text", "bps"),
    [("50Mb/s", 50 * 10**6), ("1.5Gbps", 15 * 10**8), ("100MBps", 800 * 10**6), ("1000", 1000),
     ("5Kib/s", 5120), ("2GiB/s", 2 * 8 * 2**30), ("50mbps", None), ("Mbps", None)],
)  # fmt: skip
def test_rates_read_as_ns3_data_rate_does(text, bps):
    assert data_rate_bps(text) == bps


@pytest.mark.parametrize("name", ["burst", "workload", "fairness"])
def test_ns3_datacenter_example_configs(tmp_path, capsys, name):
    """Their payload, 1000 B, is no RoCE path MTU: refused naming it; with 1024 each converts
    and loads, the buffer as that program sizes it."""
    cfg = DATA / f"ns3dc-config-{name}.txt"
    out = tmp_path / "x.yaml"
    argv = ["convert", "hpcc", str(TOPO8), str(FLOW8), "--config", str(cfg), "-o", str(out)]
    assert main([*argv, "--program", name]) == 2
    err = capsys.readouterr().err
    assert f"{cfg} line 4, key PACKET_PAYLOAD_SIZE: got '1000'; accepted: 256, 512, 1024" in err
    assert not out.exists()
    fixed = edit(cfg, tmp_path, PACKET_PAYLOAD_SIZE="1024")
    argv[5] = str(fixed)
    assert main([*argv, "--program", name]) == 0
    s = yaml.safe_load(out.read_text())
    lfsim.load_scenario(out)
    h = headroom(100 * GBPS, 1000)
    if name == "burst":  # SetIngressPool(4 MiB); the headroom pool on top
        shared = 4 * 1024 * 1024
    else:  # SetIngressPool(4 MiB - totalHeadroom), the headroom of 8 queues a port
        shared = 4 * 1024 * 1024 - 9 * 8 * h
    assert s["RoceSwitch"]["BufferSize"] == shared + 9 * h
    assert s["RdmaNic"]["CongestionControl"] == "Hpcc"  # CC_MODE 3, no --wien
    assert s["stop_time"] == ("2s" if name == "fairness" else "200ms")
    warn = capsys.readouterr().err
    assert "ENABLE_TRACE: lfsim writes no packet trace (mix/mix.tr)" in warn


def test_ns3_datacenter_three_tiers_need_switches_alike(tmp_path, capsys):
    # Its topology.txt: ToRs of 32 hosts (25 Gb/s) and 2 uplinks, aggregation switches of 2
    # down- and 2 uplinks (100 Gb/s; 1 and 5 us), cores of 4 (5 us).
    cfg = edit(DATA / "ns3dc-config-workload.txt", tmp_path, PACKET_PAYLOAD_SIZE="1024")
    flows = tmp_path / "f.txt"
    flows.write_text("1\n0 20 3 100 10000 0.1\n")
    out = tmp_path / "x.yaml"
    argv = ["convert", "hpcc", str(DATA / "ns3dc-topology.txt"), str(flows), "-o", str(out)]
    # burst (the default for its header): the 4 MiB pool everywhere, lfsim's BufferSize adds
    # each port's headroom, the largest (100 Gb/s x 5 us) for all: 34 ports against 4.
    assert main([*argv, "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not out.exists()
    h = headroom(100 * GBPS, 5000)
    n = line_of(cfg, "BUFFER_SIZE")
    assert (
        f"{cfg} line {n}, key BUFFER_SIZE: got '4'; accepted: switches alike, as lfsim sets "
        "one RoceSwitch.BufferSize for all: sw" in err
    )
    assert f"would need {4 * 2**20 + 4 * h} and {4 * 2**20 + 34 * h} bytes" in err
    # workload: the pool is 4 MiB less the headroom of 8 queues a port, more than a core has.
    assert main([*argv, "--config", str(cfg), "--program", "workload"]) == 2
    err = capsys.readouterr().err
    assert (
        f"{cfg} line {n}, key BUFFER_SIZE: got '4'; accepted: more MiB than switch sw136's "
        f"headroom and reserve ({8 * 4 * h} bytes) take" in err
    )


def test_ecn_thresholds_per_port_speed(tmp_path, capsys):
    # Two racks of 25 Gb/s hosts joined at 100 Gb/s: KMAX_MAP gives 400 and 1600 KB, lfsim's
    # switch one Kmax.
    cfg = edit(DATA / "ns3dc-config-workload.txt", tmp_path, PACKET_PAYLOAD_SIZE="1024")
    t = two_racks(tmp_path, header="6 2 2 5", host_rate="25Gbps")
    out = tmp_path / "x.yaml"
    argv = ["convert", "hpcc", str(t), str(flows2(tmp_path)), "--config", str(cfg), "-o", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not out.exists()
    assert (
        f"{cfg} line {line_of(cfg, 'KMAX_MAP')}, key KMAX_MAP: got '3 25000000000 400 "
        "50000000000 800 100000000000 1600'; accepted: the same value for every switch port "
        "rate: the topology's 25000000000 and 100000000000 b/s ports differ" in err
    )
    # One value for every rate the topology uses: exact.
    same = edit(cfg, tmp_path, KMAX_MAP="2 25000000000 800 100000000000 800")
    same = edit(same, tmp_path, KMIN_MAP="2 25000000000 200 100000000000 200")
    argv[5] = str(same)
    assert main(argv) == 0
    sw = yaml.safe_load(out.read_text())["RoceSwitch"]
    assert (sw["Kmin"], sw["Kmax"]) == (200 * 1000, 800 * 1000)


BAD = [
    # (key replaced in config-incast8.txt, value, expected text after "<file> line N, key ")
    ("CC_MODE", "10", "CC_MODE: got '10'; accepted: 1 (DCQCN), 3 (HPCC), 7 (TIMELY) or 8 "
     "(DCTCP); 10 is HPCC-PINT"),
    ("CC_MODE", "one", "CC_MODE: got 'one'; accepted: an integer"),
    ("KMAX_MAP", "1 30000000000 1600", "KMAX_MAP: got '30000000000'; accepted: a rate in bit/s"),
    ("KMAX_MAP", "1 25000000000 1600", "KMAX_MAP: got '1 25000000000 1600'; accepted: an entry "
     "for 100000000000"),
    ("PMAX_MAP", "1 100000000000 1.5", "PMAX_MAP: got '1.5'; accepted: a probability 0..1"),
    ("PACKET_PAYLOAD_SIZE", "1000", "PACKET_PAYLOAD_SIZE: got '1000'; accepted: 256, 512, 1024, "
     "2048 or 4096"),
    ("L2_ACK_INTERVAL", "0", "L2_ACK_INTERVAL: got '0'; accepted: 1..1024"),
    ("L2_ACK_INTERVAL", "4000", "L2_ACK_INTERVAL: got '4000'; accepted: 1..1024"),
    ("L2_BACK_TO_ZERO", "1", "L2_BACK_TO_ZERO: got '1'; accepted: 0 (go back N"),
    ("EWMA_GAIN", "0.3", "EWMA_GAIN: got '0.3'; accepted: k/1024"),
    ("RATE_AI", "50Mbs", "RATE_AI: got '50Mbs'; accepted: a rate as ns-3's DataRate reads it"),
    ("RP_TIMER", "0", "RP_TIMER: got '0'; accepted: microseconds > 0"),
    ("RATE_DECREASE_INTERVAL", "0", "RATE_DECREASE_INTERVAL: got '0'; accepted: microseconds > 0"),
    ("HAS_WIN", "1", "HAS_WIN: got '1'; accepted: 0 with CC mode 1"),
    ("ACK_HIGH_PRIO", "1", "ACK_HIGH_PRIO: got '1'; accepted: 0"),
    ("RATE_BOUND", "0", "RATE_BOUND: got '0'; accepted: 1"),
    ("PAUSE_TIME", "0.5", "PAUSE_TIME: got '0.5'; accepted: a number >= 1"),
    ("SIMULATOR_STOP_TIME", "0", "SIMULATOR_STOP_TIME: got '0'; accepted: seconds > 0"),
    ("SIMULATOR_STOP_TIME", "-1", "SIMULATOR_STOP_TIME: got '-1'; accepted: seconds > 0"),
    ("FCT_OUTPUT_FILE", "/tmp/fct.txt", "FCT_OUTPUT_FILE: got '/tmp/fct.txt'; accepted: a relative "
     "file name ending in .txt"),
    ("ERROR_RATE_PER_LINK", "2", "ERROR_RATE_PER_LINK: got '2'; accepted: a probability 0..1"),
    ("BUFFER_SIZE", "x", "BUFFER_SIZE: got 'x'; accepted: an integer"),
]  # fmt: skip


@pytest.mark.parametrize(("key", "value", "message"), BAD, ids=[f"{k}={v}" for k, v, _ in BAD])
def test_bad_config_is_one_line_naming_file_line_and_key(tmp_path, key, value, message):
    import subprocess
    import sys

    cfg = edit(CONFIG8, tmp_path, **{key: value})
    line = line_of(cfg, key)
    out = tmp_path / "x.yaml"
    p = subprocess.run(
        [sys.executable, "-m", "lfsim", "convert", "hpcc", str(TOPO8), str(FLOW8),
         "--config", str(cfg), "-o", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert f"{cfg} line {line}, key {message}" in p.stderr
    assert not out.exists()


def test_a_value_read_across_lines_as_the_programs_do(tmp_path, capsys):
    # `conf >> rate >> k` reads the next words wherever they are: a map short of a pair takes
    # the next key as its value; at the end of the file nothing is left.
    cfg = edit(CONFIG8, tmp_path, KMAX_MAP="2 100000000000")
    out = tmp_path / "x.yaml"
    argv = ["convert", "hpcc", str(TOPO8), str(FLOW8), "--config", str(cfg), "-o", str(out)]
    assert main(argv) == 2
    line = line_of(cfg, "KMIN_MAP")
    assert f"{cfg} line {line}, key KMAX_MAP: got 'KMIN_MAP'; accepted: an integer" in (
        capsys.readouterr().err
    )
    cfg.write_text(CONFIG8.read_text() + "\nRP_TIMER\n\n")
    assert main(argv) == 2
    line = len(CONFIG8.read_text().splitlines()) + 2
    assert f"{cfg} line {line}, key RP_TIMER: no value at the end of the file" in (
        capsys.readouterr().err
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--algorithm", "10"], "--algorithm: got '10'; accepted: 1 (DCQCN)"),
        (["--algorithm", "x"], "--algorithm: got 'x'; accepted: a CC mode"),
        (["--wien", "maybe"], "--wien: got 'maybe'; accepted: true, false, 1 or 0"),
        (["--windowCheck", "1"], "--windowCheck: got '1'; accepted: 0 with CC mode 1"),
        (["--program", "third"], "--program: got 'third', which does not read"),
        (["--program", "bursts"], "--program: got 'bursts'; accepted: third, burst"),
    ],
)
def test_bad_command_line_flags(tmp_path, capsys, argv, message):
    out = tmp_path / "x.yaml"
    base = ["convert", "hpcc", str(TOPO8), str(FLOW8), "--config", str(CONFIG8), "-o", str(out)]
    assert main(base + argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not out.exists()


def test_flags_need_a_config_and_an_ns3_datacenter_program(tmp_path, capsys):
    out = tmp_path / "x.yaml"
    assert main(["convert", "hpcc", str(TOPO8), str(FLOW8), "--wien", "-o", str(out)]) == 2
    assert "--algorithm, --wien, --delayWien: given without --config" in capsys.readouterr().err
    t = two_racks(tmp_path)
    cfg = edit(DATA / "hpcc-config.txt", tmp_path, PACKET_PAYLOAD_SIZE="1024")
    argv = ["convert", "hpcc", str(t), str(flows2(tmp_path)), "--config", str(cfg), "-o", str(out)]
    assert main([*argv, "--wien"]) == 2
    assert "given with --program third" in capsys.readouterr().err
    assert not out.exists()


def test_link_down_refused_by_third_ignored_by_ns3_datacenter(tmp_path, capsys):
    cfg = edit(DATA / "hpcc-config.txt", tmp_path, PACKET_PAYLOAD_SIZE="1024", LINK_DOWN="10 4 5")
    out = tmp_path / "x.yaml"
    argv = ["convert", "hpcc", str(two_racks(tmp_path)), str(flows2(tmp_path)), "-o", str(out)]
    assert main([*argv, "--config", str(cfg)]) == 2
    assert "key LINK_DOWN: got '10 4 5'; accepted: 0 0 0 (third.cc reroutes" in (
        capsys.readouterr().err
    )
    # powertcp-evaluation-burst.cc reads LINK_DOWN and never schedules TakeDownLink.
    cfg = edit(CONFIG8, tmp_path, LINK_DOWN="10 0 9", FOO_BAR="3")
    argv = ["convert", "hpcc", str(TOPO8), str(FLOW8), "--config", str(cfg), "-o", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "key LINK_DOWN: ns3-datacenter's powertcp-evaluation-burst reads it but never" in err
    assert "FOO_BAR is not a key ns3-datacenter's powertcp-evaluation-burst reads; ignored" in err
    assert all(line.startswith("lfsim: warning: ") for line in err.splitlines())
    assert "faults" not in yaml.safe_load(out.read_text())


def test_error_rate_per_link_drops_on_every_link(tmp_path):
    # third.cc: a RateErrorModel (ERROR_UNIT_PACKET) with ERROR_RATE_PER_LINK on every device.
    cfg = edit(CONFIG8, tmp_path, ERROR_RATE_PER_LINK="0.001")
    s = convert(tmp_path, config=cfg)
    assert s["faults"] == [
        {"at": "0s", "what": "drop", "where": f"h{k}-sw9", "probability": 0.001} for k in range(9)
    ]
    lfsim.load_scenario({**s, "hpcc_output": {**s["hpcc_output"], "flow_file": str(FLOW8)}})


def test_global_t_0_takes_each_pairs_rtt_where_hpcc_offers_it(tmp_path, capsys):
    # GLOBAL_T 0: every pair its own base RTT (pairRtt). lfsim's Hpcc.BaseRtt 0 means that
    # where the model accepts 0; otherwise one time for all pairs is all it has.
    from lfsim.core import check_value

    cfg = edit(CONFIG8, tmp_path, CC_MODE="3", HAS_WIN="1", VAR_WIN="1", GLOBAL_T="0")
    if check_value("ns3::Hpcc", "BaseRtt", "0s") is None:
        assert convert(tmp_path, config=cfg)["Hpcc"]["BaseRtt"] == "0s"
    else:
        out = tmp_path / "x.yaml"
        argv = ["convert", "hpcc", str(TOPO8), str(FLOW8), "--config", str(cfg), "-o", str(out)]
        assert main(argv) == 2
        assert f"{cfg} line {line_of(cfg, 'GLOBAL_T')}, key GLOBAL_T: got '0'; accepted: 1" in (
            capsys.readouterr().err
        )
    cfg = edit(cfg, tmp_path, GLOBAL_T="1")
    # Both hosts on one switch: 2 x (1 + 1) us and a 1024 B payload at 100 Gb/s on 2 hops.
    assert convert(tmp_path, config=cfg)["Hpcc"]["BaseRtt"] == f"{2 * 2000 + 2 * 81}ns"


def reference_max_rtt(topology: Path, payload: int) -> int:
    """CalculateRoute and main's pair loop, written out: a search from every host over the
    switches, neighbours in node id order, each node keeping the delay and serialisation of
    the path that reached it first."""
    lines = [ln.split() for ln in topology.read_text().splitlines() if ln.split()]
    switches = {int(x) for x in lines[1]}
    nbr: dict[int, dict[int, tuple[int, int]]] = {}
    for a, b, rate, delay, _ in lines[2:]:
        ns = int(float(delay[:-2]) * {"us": 1000, "ns": 1}[delay[-2:]])
        bps = int(float(rate.removesuffix("Gbps")) * (10**9 if rate.endswith("Gbps") else 1))
        nbr.setdefault(int(a), {})[int(b)] = (ns, bps)
        nbr.setdefault(int(b), {})[int(a)] = (ns, bps)
    hosts = [n for n in nbr if n not in switches]
    best = 0
    for dst in hosts:
        delay, tx, q, i = {dst: 0}, {dst: 0}, [dst], 0
        while i < len(q):
            now = q[i]
            i += 1
            for nxt in sorted(nbr[now]):
                if nxt not in delay:
                    delay[nxt] = delay[now] + nbr[now][nxt][0]
                    tx[nxt] = tx[now] + payload * 1000000000 * 8 // nbr[now][nxt][1]
                    if nxt in switches:
                        q.append(nxt)
        for src in hosts:
            if src != dst:  # a host not reached: the code's map gives 0
                best = max(best, delay.get(src, 0) * 2 + tx.get(src, 0))
    return best


@pytest.mark.parametrize(
    "text",
    [
        None,  # ns3-datacenter's three tiers: 25 and 100 Gb/s, 1 and 5 us
        # Two paths of three hops between h0 and h1, through sw3 (found first) and sw4, of
        # other delays and rates; a host joined to a host (reaching nothing beyond it).
        "6 4 6\n2 3 4 5\n0 2 100Gbps 1us 0\n1 5 100Gbps 1us 0\n2 3 100Gbps 1us 0\n"
        "2 4 100Gbps 5us 0\n3 5 100Gbps 1us 0\n4 5 100Gbps 1us 0\n",
        "6 4 6\n2 3 4 5\n0 2 100Gbps 1us 0\n1 5 100Gbps 1us 0\n2 3 100Gbps 5us 0\n"
        "2 4 100Gbps 1us 0\n3 5 100Gbps 1us 0\n4 5 25Gbps 1us 0\n",
        "4 1 3\n3\n0 3 100Gbps 1us 0\n1 3 100Gbps 2us 0\n1 2 25Gbps 300ns 0\n",
        # h0 on two switches: reached first through sw2 (1 us), not sw3 (5 us).
        "5 3 5\n2 3 4\n0 2 100Gbps 1us 0\n0 3 100Gbps 5us 0\n1 4 100Gbps 1us 0\n"
        "2 4 100Gbps 1us 0\n3 4 100Gbps 1us 0\n",
    ],
)
def test_max_rtt_as_calculate_route(tmp_path, text):
    from lfsim import hpcc
    from lfsim.hpcc_config import max_rtt, network

    if text is None:
        t = DATA / "ns3dc-topology.txt"
    else:
        t = tmp_path / "t.txt"
        t.write_text(text)
    for payload in (1024, 4096):
        net = network(hpcc.read_topology(t), t)
        assert max_rtt(net, payload) == reference_max_rtt(t, payload)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("FAST_REACT", "0", "FAST_REACT: got '0'; accepted: 1 (an update at every ACK"),
        ("MULTI_RATE", "1", "MULTI_RATE: got '1'; accepted: 0 (one rate for all hops"),
        ("SAMPLE_FEEDBACK", "1", "SAMPLE_FEEDBACK: got '1'; accepted: 0"),
        ("VAR_WIN", "0", "VAR_WIN: got '0'; accepted: 1 with CC mode 3"),
        ("HAS_WIN", "0", "HAS_WIN: got '0'; accepted: 1 with CC mode 3"),
        ("INT_MULTI", "0", "INT_MULTI: got '0'; accepted: an integer >= 1"),
        ("U_TARGET", "1.2", "U_TARGET: got '1.2'; accepted: 0.01..1"),
    ],
)
def test_hpcc_keys_lfsim_cannot_follow(tmp_path, capsys, key, value, message):
    cfg = edit(CONFIG8, tmp_path, CC_MODE="3", HAS_WIN="1", VAR_WIN="1")
    cfg = edit(cfg, tmp_path, **{key: value})
    out = tmp_path / "x.yaml"
    argv = ["convert", "hpcc", str(TOPO8), str(FLOW8), "--config", str(cfg), "-o", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{cfg} line {line_of(cfg, key)}, key {message}" in err
    assert not out.exists()


def test_qcn_off_clamp_on_and_keys_without_effect(tmp_path, capsys):
    cfg = edit(
        CONFIG8,
        tmp_path,
        ENABLE_QCN="0",
        CLAMP_TARGET_RATE="1",
        USE_DYNAMIC_PFC_THRESHOLD="0",
        ENABLE_TRACE="1",
        QLEN_MON_START="1000000",
        L2_CHUNK_SIZE="0",
        INT_MULTI="4",
        PINT_PROB="0.5",
    )
    out = tmp_path / "x.yaml"
    argv = ["convert", "hpcc", str(TOPO8), str(FLOW8), "--config", str(cfg), "-o", str(out)]
    assert main(argv) == 0
    s = yaml.safe_load(out.read_text())
    # ENABLE_QCN 0: SwitchNode's EcnEnabled false, no thresholds to set.
    assert s["RoceSwitch"]["EcnEnabled"] is False and "Kmin" not in s["RoceSwitch"]
    assert s["Dcqcn"]["clamp_tgt_rate"] is True  # CheckRateDecreaseMlx: target = rate always
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(w.startswith("lfsim: warning: ") for w in err)
    text = "\n".join(err)
    assert "key USE_DYNAMIC_PFC_THRESHOLD: the HPCC code never reads its value" in text
    assert "key ENABLE_TRACE: lfsim writes no packet trace (mix/mix.tr)" in text
    assert "key QLEN_MON_FILE: lfsim writes no queue-length histogram (mix/qlen.txt)" in text


def test_powertcp_parameters_as_ns3_datacenter_sets_them(tmp_path):
    """rdma-hw.cc UpdateRatePower: MIN_RATE the floor, 150 Mb/s added, the new rate weighed 0.9
    (PowerTCP) or 0.7 (theta-PowerTCP), at every ACK from the rate of the last per-RTT update
    (hp.m_curRate) in both terms; PowerTCP divides by U_TARGET, theta-PowerTCP does not;
    qp->m_baseRtt the largest pair RTT with GLOBAL_T 1, each pair's own with GLOBAL_T 0."""
    cfg = edit(
        DATA / "ns3dc-config-burst.txt",
        tmp_path,
        PACKET_PAYLOAD_SIZE="1024",
        MIN_RATE="200Mb/s",
        U_TARGET="0.9",
    )
    # incast8's star, 100 Gb/s and 1 us links: 2 x (1 + 1) us and 1024 B at 100 Gb/s twice.
    max_rtt = f"{2 * 2000 + 2 * 81}ns"
    for flags, name, gamma in (
        (Flags(wien=True), "PowerTcp", 0.9),
        (Flags(wien=True, delay_wien=True), "ThetaPowerTcp", 0.7),
    ):
        s = convert(tmp_path, config=cfg, flags=flags)
        assert s["RdmaNic"]["CongestionControl"] == name
        want = {
            "BaseRtt": max_rtt,
            "MinRate": "200Mbps",
            "AdditiveIncrease": "150Mbps",
            "Gamma": gamma,
            "WindowUpdate": "FromLastRtt",
        }
        if name == "PowerTcp":
            want["TargetUtilization"] = 0.9
        assert s[name] == want
        lfsim.load_scenario({**s, "hpcc_output": {**s["hpcc_output"], "flow_file": str(FLOW8)}})
        (tmp_path / "each").mkdir(exist_ok=True)
        each = edit(cfg, tmp_path / "each", GLOBAL_T="0")
        assert convert(tmp_path, config=each, flags=flags)[name]["BaseRtt"] == "0s"


def test_a_switch_without_links_needs_no_buffer(tmp_path):
    # incast8's star with a switch id 10 listed and joined to nothing: its MMU holds nothing,
    # so it does not ask for another BufferSize.
    t = tmp_path / "t.txt"
    lines = TOPO8.read_text().splitlines()
    t.write_text("\n".join(["11 2 1 9", "9 10", *lines[2:]]) + "\n")
    s = convert(tmp_path, topology=t)
    assert s["RoceSwitch"]["BufferSize"] == 4 * 2**20 + 9 * headroom(100 * GBPS, 1000)
