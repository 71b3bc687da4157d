"""NIC and switch counters: the readers against the real SONiC, SDK and mlnx_qos outputs
(values read from the files by hand), a crafted mlx5 ethtool -S text (no real one was
available; counter names from the mlx5 driver's documentation), deltas of two snapshots, the
mapping of mlnx_qos onto scenario attributes, and the comparison with a run's ports."""

import pandas as pd
import pytest

import lfsim
from lfsim.errors import ScenarioError
from lfsim.paths import validation_dir
from lfsim.traces import counters as ct

DATA = validation_dir() / "data" / "traces" / "counters"


def test_sonic_show_pfc_counters_rx_block():
    c = ct.read_counters(DATA / "sonic-z9332-th3-show-pfc-counters-rx-storm-p3p4.txt")
    assert c.kind == "sonic_pfc"
    # 9 ports (Ethernet0 .. Ethernet16, even) x 8 priorities, Rx only
    assert len(c.values) == 72
    assert c.values["Ethernet6/rx_prio3_pause"] == 93845
    assert c.values["Ethernet6/rx_prio4_pause"] == 93844
    assert sum(c.values.values()) == 93845 + 93844
    assert c.values["Ethernet16/rx_prio7_pause"] == 0
    assert any("no Tx PFC table" in w for w in c.warnings)
    p = c.ports.set_index(["port", "priority"])
    assert p.loc[("Ethernet6", 3), "rx_pause"] == 93845


def test_sdk_dump_with_priority_section():
    c = ct.read_counters(DATA / "sonic-mellanox-sdk-pfc-rx-1234-frames.txt")
    assert c.kind == "sdk"
    assert c.values["a_frames_received_ok"] == 1234
    assert c.values["a_octets_received_ok"] == 78976
    assert c.values["dot3in_pause_frames"] == 1234
    # "Prio 3 / rx_pause = 1234 / rx_pause_duration = 85558" read as priority 3's
    assert c.values["rx_prio3_pause"] == 1234 and c.values["rx_prio3_pause_duration"] == 85558
    row = c.ports.iloc[0]
    assert (row["port"], row["priority"], row["rx_pause"]) == ("nic", 3, 1234)


def test_mlnx_qos_as_printed():
    q = ct.read_mlnx_qos(DATA / "mlnx_qos-att-netarbiter-dscp-pfc3.txt")
    assert q.trust == "dscp" and q.dcbx == "OS controlled" and q.cable_len_m == 7
    assert q.pfc == [0, 0, 0, 1, 0, 0, 0, 0]
    assert q.dscp2prio[26] == 3 and q.dscp2prio[0] == 0 and q.dscp2prio[63] == 7
    assert len(q.dscp2prio) == 64
    assert q.tc_of_priority == {0: 1, 1: 0, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7}
    a = ct.qos_attributes(q)
    assert a == {
        "RdmaNic.LosslessPriorities": 8,
        "RoceSwitch.LosslessPriorities": 8,
        "RoceSwitch.TrustPcp": False,
        "RoceSwitch.DscpMap": "",  # every DSCP maps to its class selector: nothing to override
    }
    # the mapped attributes are accepted by a scenario as they are
    sc = lfsim.load_scenario("incast", {k: v for k, v in a.items() if v != ""})
    assert sc.config["RoceSwitch"]["LosslessPriorities"] in (8, "8")
    assert any("Cable len 7 m" in u for u in ct.unmapped(q))


def test_mlnx_qos_buffers_and_a_custom_dscp_map(tmp_path):
    text = (DATA / "mlnx_qos-att-netarbiter-dscp-pfc3.txt").read_text()
    text = text.replace("prio:3 dscp:31,30,29,28,27,26,25,24,", "prio:3 dscp:31,30,29,28,27,25,24,")
    text = text.replace("prio:4 dscp:39,", "prio:4 dscp:26,39,")
    text += (
        "Receive buffer size (bytes): 130944,262016,0,0,0,0,0,0,\n"
        "PFC configuration:\n        priority    0   1   2   3   4   5   6   7\n"
        "        enabled     0   0   0   1   0   0   0   0   \n"
        "        buffer      0   0   0   1   0   0   0   0   \n"
    )
    p = tmp_path / "q.txt"
    p.write_text(text)
    q = ct.read_mlnx_qos(p)
    assert q.rx_buffers[:2] == [130944, 262016] and q.buffer_of_priority[3] == 1
    a = ct.qos_attributes(q)
    assert a["RoceSwitch.DscpMap"] == "26:4" and a["RdmaNic.RxBufferSize"] == 262016


ETHTOOL = """NIC statistics:
     rx_packets: 1000
     rx_prio3_pause: {rx}
     rx_prio3_pause_duration: {dur}
     tx_prio3_pause: {tx}
     tx_prio3_pause_duration: 0
     rx_prio0_pause: 0
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:{cnp}
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled:2
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:0
"""


def test_ethtool_and_hw_counters_and_deltas(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(ETHTOOL.format(rx=10, dur=100, tx=1, cnp=5))
    b.write_text(ETHTOOL.format(rx=35, dur=460, tx=4, cnp=9))
    before, after = ct.read_counters(a), ct.read_counters(b)
    assert after.kind == "mlx5" and after.values["rx_prio3_pause"] == 35
    assert after.values["np_cnp_sent"] == 9 and after.values["rx_packets"] == 1000
    d = after - before
    assert d.values["rx_prio3_pause"] == 25 and d.values["rx_prio3_pause_duration"] == 360
    assert d.values["np_cnp_sent"] == 4 and d.values["rx_packets"] == 0
    row = d.ports.set_index("priority").loc[3]
    assert (row["rx_pause"], row["tx_pause"]) == (25, 3)
    assert (before - after).warnings  # counters going down are named


def test_bad_counter_files(tmp_path):
    (tmp_path / "x.txt").write_text("hello world\n")
    with pytest.raises(ScenarioError, match="HW: 'x.txt' has no counters|has no counters"):
        ct.read_counters(tmp_path / "x.txt")
    with pytest.raises(ScenarioError, match="HW: no such file"):
        ct.read_counters(tmp_path / "none.txt")
    with pytest.raises(ScenarioError, match="has no mlnx_qos report"):
        ct.read_mlnx_qos(tmp_path / "x.txt")
    with pytest.raises(ScenarioError, match="--before: a sdk snapshot"):
        ct.read_counters(DATA / "sonic-z9332-th3-show-pfc-counters-rx-storm-p3p4.txt") - (
            ct.read_counters(DATA / "sonic-mellanox-sdk-pfc-rx-1234-frames.txt")
        )


def test_compare_with_a_runs_ports(tmp_path):
    out = tmp_path / "o"
    small = {"stop_time": "1ms", "Report.Warmup": "100us", "RoceSwitch.BufferSize": 1048576}
    lfsim.run("incast", small, out=out)  # a small buffer: PFC within the first ms
    ports = pd.read_parquet(out / "ports.parquet")
    sw = ports.loc[ports["pause_rx"].idxmax()]  # a port the incast paused
    assert sw["pause_rx"] > 0
    text = (DATA / "sonic-z9332-th3-show-pfc-counters-rx-storm-p3p4.txt").read_text()
    (tmp_path / "hw.txt").write_text(text)
    c = ct.compare_counters(ct.read_counters(tmp_path / "hw.txt"), out,
                            {"Ethernet6": sw["label"]})  # fmt: skip
    row = next(r for r in c.rows if r.metric == "PFC pause frames received")
    assert row.hw == 93845 + 93844 and row.sim == sw["pause_rx"]
    with pytest.raises(ScenarioError, match="--port: got 'sw9/p1'"):
        ct.compare_counters(ct.read_counters(tmp_path / "hw.txt"), out, {"Ethernet6": "sw9/p1"})
    with pytest.raises(ScenarioError, match="--port: got 'Ethernet99'"):
        ct.compare_counters(ct.read_counters(tmp_path / "hw.txt"), out, {"Ethernet99": "h0"})
