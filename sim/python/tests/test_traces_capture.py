"""Packet captures: the reader against the real RoCE NIC capture (values read with tshark by
hand), captures written by scapy (an independent writer) and by lfsim, ICRC checking, message
extraction, and replay: a crafted capture's messages come back from the simulation with the
same sizes and start times."""

import struct

import numpy as np
import pytest
import yaml

import lfsim
from lfsim.errors import ScenarioError
from lfsim.paths import validation_dir
from lfsim.traces import capture as cap
from lfsim.traces import replay as rp

PCAP = validation_dir() / "data" / "traces" / "pcap"
HUAWEI = PCAP / "huawei-hiroce-rocev2-send-imm-proxy.pcap"


def test_huawei_capture_field_by_field():
    f = cap.read_capture(HUAWEI)
    assert len(f) == 123  # capinfos: 123 packets
    r = cap.roce(f)
    assert len(r) == 105  # every UDP frame to 4791 (tshark decodes 37 of them as TFTP)
    # Frame 17 (tshark -T fields): 192.168.70.6 -> .4, 1082 B, ECN 2, UDP 72 -> 4791, BTH
    # opcode 0 (SEND First), dest QP 0x45, PSN 0.
    x = f.iloc[16]
    assert (x.ip_src, x.ip_dst, x.frame_len, x.ecn, x.sport, x.dport) == (
        "192.168.70.6", "192.168.70.4", 1082, 2, 72, 4791,
    )  # fmt: skip
    assert (x.opcode, x.dest_qp, x.psn, x.payload) == (0, 0x45, 0, 1024)
    # Frame 18: SEND Last with Immediate, PSN 1, 1086 B: 1024 payload + 4 immediate.
    y = f.iloc[17]
    assert (y.opcode, y.psn, y.frame_len, y.payload) == (3, 1, 1086, 1024)
    assert not np.isnan(y.imm)
    # Frame 16: an ACK (opcode 17) to QP 0x45 at 16.291892 s after frame 1 (0.000000).
    a = f.iloc[15]
    assert a.opcode == 17 and a.dest_qp == 0x45 and int(a.syndrome) >> 5 == 0  # AETH: an ACK
    assert a.time_s - f.iloc[0].time_s == pytest.approx(16.291892, abs=1e-6)
    assert (f["opcode"] == 0x81).sum() == 0 and f["pfc_enable"].isna().all()
    # A real NIC's ICRCs are right.
    assert cap.icrc_errors(f) == 0 and r["icrc_ok"].all()


def test_huawei_messages():
    m = cap.messages(cap.read_capture(HUAWEI))
    # .6 -> .4 on QP 0x45: 33 two-packet SENDs (First + Last with Immediate, PSN 0..65) and
    # a SEND Only with Immediate (PSN 66); .4 -> .6 on QP 72: one SEND Only with Immediate.
    q45 = m[m["qp"] == 0x45]
    assert len(q45) == 34 and len(m[m["qp"] == 72]) == 1
    assert (q45["verb"] == "send").all() and list(q45["first_psn"][:3]) == [0, 2, 4]
    assert (q45["bytes"][:32] == 2048).all()  # frames 1082 + 1086: 1024 + 1024 payload
    assert q45["complete_s"].notna().all()  # every one is acknowledged in the capture
    assert (q45["complete_s"] > q45["last_s"]).all()


def _roce(src, dst, op, qp, psn, payload=b"", ext=b"", tos=(26 << 2) | 2, t=0.0, vlan=None):
    from scapy.contrib.roce import BTH
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.packet import Raw

    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    if vlan is not None:
        eth = eth / Dot1Q(vlan=vlan, prio=3)
    pad = (-len(payload)) % 4
    p = (
        eth / IP(src=src, dst=dst, tos=tos) / UDP(sport=49152, dport=4791)
        / BTH(opcode=op, dqpn=qp, psn=psn, ackreq=1, padcount=pad)
        / Raw(ext + payload + b"\0" * pad)
    )  # fmt: skip
    p.time = t
    return p


def _write_message(src, dst, qp, psn, size, t, mtu=1024):
    """An RDMA WRITE of `size` bytes as packets, 1 us apart, from time t."""
    n = max(1, -(-size // mtu))
    out = []
    for k in range(n):
        chunk = bytes([k % 256]) * min(mtu, size - k * mtu)
        op = 0x0A if n == 1 else 0x06 if k == 0 else 0x08 if k == n - 1 else 0x07
        ext = struct.pack("!QII", 0x10000, 0x77, size) if op in (0x06, 0x0A) else b""
        out.append(_roce(src, dst, op, qp, psn + k, chunk, ext, t=t + k * 1e-6))
    return out


def _ack(src, dst, qp, psn, t):
    return _roce(src, dst, 0x11, qp, psn, ext=struct.pack("!I", 0), t=t)


def test_scapy_written_capture_is_read_back(tmp_path):
    from scapy.contrib.mac_control import MACControl, MACControlClassBasedFlowControl
    from scapy.layers.l2 import Ether
    from scapy.utils import wrpcap

    pkts = _write_message("10.1.0.1", "10.1.0.2", 0x21, 100, 2500, 1.0)
    pkts.append(_ack("10.1.0.2", "10.1.0.1", 0x11, 102, 1.00001))
    cnp = _roce("10.1.0.2", "10.1.0.1", 0x81, 0x11, 0, ext=b"\0" * 16, tos=(48 << 2) | 1, t=1.1)
    pkts.append(cnp)
    ce = _roce("10.1.0.1", "10.1.0.2", 0x0A, 0x21, 103, b"z" * 8, struct.pack("!QII", 1, 2, 8),
               tos=(26 << 2) | 3, t=1.2, vlan=7)  # fmt: skip
    pkts.append(ce)
    pfc = (Ether(src="02:00:00:00:00:02", dst="01:80:c2:00:00:01") / MACControl()
           / MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=0xFFFF,
                                             c4_enabled=1, c4_pause_time=0))  # fmt: skip
    pfc.time = 1.3
    pkts.append(pfc)
    wrpcap(str(tmp_path / "x.pcap"), pkts)
    f = cap.read_capture(tmp_path / "x.pcap")
    assert list(f["opcode"][:3]) == [0x06, 0x07, 0x08]
    first = f.iloc[0]
    assert (first.va, first.rkey, first.dma_len, first.payload, first.dscp, first.ecn) == (
        0x10000, 0x77, 2500, 1024, 26, 2,
    )  # fmt: skip
    assert f.iloc[2].payload == 2500 - 2048
    assert f.iloc[4].opcode == 0x81 and f.iloc[4].dscp == 48
    assert (f.iloc[5].vlan, f.iloc[5].pcp, f.iloc[5].ecn) == (7, 3, 3)
    assert f.iloc[6].pfc_enable == 0b11000 and f.iloc[6].pfc_quanta3 == 0xFFFF
    assert cap.icrc_errors(f) == 0
    s = cap.summary(f, 100e9)
    assert (s["cnps"], s["data_packets"], s["ecn_ce"], s["pfc_frames"]) == (1, 4, 1, 1)
    assert s["pfc_xoff_prio3"] == 1 and s["pfc_xoff_prio4"] == 0  # a zero timer is an XON
    assert s["pfc_pause_us_prio3"] == pytest.approx(0xFFFF * 512 / 100e9 * 1e6)
    assert s["ecn_marked_fraction"] == pytest.approx(1 / 4)
    m = cap.messages(f)
    assert list(m["bytes"]) == [2500, 8] and m["complete_s"].iloc[0] == pytest.approx(1.00001)
    assert m["start_s"].iloc[0] == pytest.approx(1.0)


def test_pcapng_is_read_too(tmp_path):
    from scapy.utils import PcapNgWriter

    pkts = _write_message("10.1.0.1", "10.1.0.2", 5, 0, 100, 2.0)
    with PcapNgWriter(str(tmp_path / "x.pcapng")) as w:
        for p in pkts:
            w.write(p)
    f = cap.read_capture(tmp_path / "x.pcapng")
    assert len(f) == 1 and f.iloc[0].payload == 100 and f.iloc[0].time_s == pytest.approx(2.0)


def test_a_wrong_icrc_is_reported(tmp_path):
    from scapy.utils import wrpcap

    good = _write_message("10.1.0.1", "10.1.0.2", 5, 0, 3000, 1.0)
    raw = bytearray(bytes(good[1]))
    raw[100] ^= 0xFF  # one payload bit pattern changed after the ICRC was computed
    from scapy.layers.l2 import Ether

    bad = Ether(bytes(raw))
    bad.time = good[1].time
    wrpcap(str(tmp_path / "bad.pcap"), [good[0], bad, good[2]])
    f = cap.read_capture(tmp_path / "bad.pcap")
    assert cap.icrc_errors(f) == 1 and list(f["icrc_ok"]) == [True, False, True]


def test_bad_capture_input(tmp_path):
    (tmp_path / "t.pcap").write_text("not a capture")
    for path, needle in ((tmp_path / "none.pcap", "no such file"),
                         (tmp_path / "t.pcap", "is not a pcap or pcapng file")):  # fmt: skip
        with pytest.raises(ScenarioError, match=needle) as e:
            cap.read_capture(path, "CAPTURE")
        assert str(e.value).startswith("CAPTURE: ")


# ---------------------------------------------------------------------------------------------
# lfsim's own captures, and replay.


def test_lfsims_roce_capture_is_read_with_valid_icrcs(tmp_path):
    over = {"stop_time": "2ms", "Report.Warmup": "0s"}
    r = lfsim.run("incast", over, out=tmp_path / "o", pcap="h0")
    f = cap.read_capture(tmp_path / "o" / "pcap" / "h0.pcap")
    rr = cap.roce(f)
    assert len(rr) > 100 and cap.icrc_errors(f) == 0
    # h0 receives the incast's WRITEs (MessageSize 262144 at PathMtu 4096: 64 packets each)
    data = rr[(rr["opcode"].isin([6, 7, 8])) & (rr["ip_dst"] == "10.0.0.1")]
    assert (data["payload"] == 4096).all()
    m = cap.messages(f)
    done = m[m["complete_s"].notna()]
    assert len(done) >= 1 and (done["bytes"] == 262144).all() and (done["verb"] == "write").all()
    assert r.metrics["drops"] == 0


def _crafted(tmp_path):
    """Three hosts' messages with known sizes and start times (microsecond pcap stamps), spaced
    so that no two share a link at once."""
    from scapy.utils import wrpcap

    pkts = []
    plan = [  # (src, dst, qp, size, start s)
        ("192.168.1.10", "192.168.1.20", 0x31, 5000, 100.000000),
        ("192.168.1.20", "192.168.1.30", 0x32, 1024, 100.000250),
        ("192.168.1.10", "192.168.1.20", 0x31, 70000, 100.000600),
        ("192.168.1.30", "192.168.1.10", 0x33, 300, 100.002000),
    ]
    psn = {}
    for src, dst, qp, size, t in plan:
        first = psn.get(qp, 0)
        msg = _write_message(src, dst, qp, first, size, t)
        pkts += msg
        psn[qp] = first + len(msg)
        pkts.append(_ack(dst, src, qp, psn[qp] - 1, msg[-1].time + 2e-6))
    pkts.sort(key=lambda p: float(p.time))
    path = tmp_path / "crafted.pcap"
    wrpcap(str(path), pkts)
    return path, plan


def test_replay_reproduces_sizes_and_start_times_exactly(tmp_path):
    path, plan = _crafted(tmp_path)
    sc, msgs, info = rp.replay_scenario(path, speed="100GbE")
    assert info["hosts"] == {"192.168.1.10": "h0", "192.168.1.20": "h1", "192.168.1.30": "h2"}
    assert sc["topology"] == {"generator": "Star", "Hosts": 3, "HostSpeed": "100GbE"}
    flows = sc["workload"]["replay_write"]["flows"]
    t0 = plan[0][4]
    want = [(s, round((t - t0) * 1e9)) for _, _, _, s, t in plan]
    assert [(f["size"], int(f["start"][:-2])) for f in flows] == want
    rp.write_replay(sc, info, path, tmp_path / "s.yaml")
    assert yaml.safe_load((tmp_path / "s.yaml").read_text())["workload"] == sc["workload"]
    r = lfsim.run(str(tmp_path / "s.yaml"), out=tmp_path / "o", pcap="h0,h1,h2")
    t = r.table("flows").sort_values("start_us")
    assert list(t["size_bytes"]) == [s for s, _ in want]
    assert list(np.rint(t["start_us"] * 1000).astype(int)) == [ns for _, ns in want]
    assert t["fct_us"].notna().all()
    # In the simulation's own captures each message starts on its sender's port when the
    # capture said, with its size.
    got = []
    for h in ("h0", "h1", "h2"):
        m = cap.messages(cap.read_capture(tmp_path / "o" / "pcap" / f"{h}.pcap"))
        ip = f"10.0.0.{int(h[1:]) + 1}"
        got += [(int(b), s) for b, s, src in zip(m["bytes"], m["start_s"], m["src"],
                                                   strict=True) if src == ip]  # fmt: skip
    got.sort(key=lambda x: x[1])
    assert [b for b, _ in got] == [s for s, _ in want]
    assert [round(s * 1e9) for _, s in got] == [ns for _, ns in want]


def test_compare_capture_against_its_replay(tmp_path):
    path, plan = _crafted(tmp_path)
    sc, _, info = rp.replay_scenario(path)
    rp.write_replay(sc, info, path, tmp_path / "s.yaml")
    lfsim.run(str(tmp_path / "s.yaml"), out=tmp_path / "o")
    c = rp.compare_capture(path, tmp_path / "o", speed_bps=100e9)
    rows = {(r.item, r.metric): r for r in c.rows}
    flows = lfsim.run(str(tmp_path / "s.yaml")).table("flows").sort_values("start_us")
    # per message: HW is the capture's first packet to ACK (crafted: n packets 1 us apart,
    # then 2 us), SIM the run's FCT
    for k, (_, _, _, size, _) in enumerate(plan):
        n = max(1, -(-size // 1024))
        r = rows[(f"msg {k} write {size} B", "completion")]
        assert r.hw == pytest.approx((n - 1) + 2, abs=1e-3)
        assert r.sim == pytest.approx(flows["fct_us"].iloc[k])
    assert rows[("capture / host ports", "PFC pause frames")].hw == 0
    assert rows[("capture", "ICRC errors")].hw == 0
    assert c.warnings == []


def test_replay_onto_a_given_topology_with_a_map(tmp_path):
    path, _ = _crafted(tmp_path)
    topo = tmp_path / "t.yaml"
    topo.write_text(yaml.safe_dump({"topology": {"generator": "Star", "Hosts": 5,
                                                 "HostSpeed": "25GbE"}}))  # fmt: skip
    m = {"192.168.1.10": "h4", "192.168.1.20": "h2", "192.168.1.30": "h0"}
    sc, _, info = rp.replay_scenario(path, topology=str(topo), mapping=m)
    assert info["hosts"] == m and sc["topology"]["Hosts"] == 5
    assert sc["workload"]["replay_write"]["flows"][0]["src"] == "h4"
    with pytest.raises(ScenarioError, match="--map: got 'x'"):
        rp.parse_map(["x"])
    with pytest.raises(ScenarioError, match="--map: given without --topology"):
        rp.replay_scenario(path, mapping=m)


def test_iscsi_session_commands_from_lfsims_capture(tmp_path):
    over = {"mode": "iscsi", "stop_time": "3ms", "FioJob.runtime": "0s", "FioJob.ramp_time": "0s"}
    r = lfsim.run("storage_qd1", over, out=tmp_path / "o", pcap="h0")
    frames = cap.read_capture(tmp_path / "o" / "pcap" / "h0.pcap")
    cmds = cap.iscsi_commands(frames, tmp_path / "o" / "pcap" / "h0.pcap")
    done = cmds[cmds["complete_s"].notna()]
    assert len(done) > 5 and (done["bytes"] == 4096).all() and (done["verb"] == "read").all()
    assert (done["initiator"] == "10.0.0.1").all() and (done["target"] == "10.0.0.2").all()
    # QD1: one command at a time, each a few tens of us
    assert len(done) == pytest.approx(r.metrics["read_ios"], abs=2)
    assert (done["fct_us"] > 0).all()


def test_replay_on_fc_carries_every_message_as_a_write(tmp_path):
    path, plan = _crafted(tmp_path)
    sc, _, info = rp.replay_scenario(path, speed="32GFC", fabric="fc")
    assert list(sc["workload"]) == ["replay_write"] and "FCP write" in info["note"]
    rp.write_replay(sc, info, path, tmp_path / "s.yaml")
    r = lfsim.run(str(tmp_path / "s.yaml"))
    t = r.table("flows").sort_values("start_us")
    assert list(t["size_bytes"]) == [size for *_, size, _ in plan]
    assert t["fct_us"].notna().all()
