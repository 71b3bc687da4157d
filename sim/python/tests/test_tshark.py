"""The roce fabric's packet captures read by tshark (Wireshark's dissectors) as real 802.1Qbb /
RoCEv2 traffic, and counted against the simulator's own counters.

One run of the incast scenario in mode pfc_ecn, without the victim flow and with two messages
per sender, so the run ends when every message has been delivered (nothing is left queued or in
flight but control frames) and PFC, ECN marks and CNPs all occur. The ports captured are chosen
from a first run without captures (the port facing host 0, every port that sent or received
PFC, an upstream port that marked, a sender); the second run, with captures, must give the same
counters. Expected values come from the standards (header sizes, 802.3 wire time, PFC frame
layout) and from the simulator's counters of the same run, never from earlier output.
"""

import struct
from decimal import Decimal

import pandas as pd
import pytest
import yaml
from tshark_captures import TSHARK, fields, problems
from tshark_captures import records as _records
from tshark_captures import rocev2_icrc as _rocev2_icrc

import lfsim
from lfsim.paths import scenarios_dir
from lfsim.scenario import time_seconds

pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")

MESSAGES = 2  # per sender
OVERRIDES = {
    "mode": "pfc_ecn",
    "workload.incast.Messages": MESSAGES,
    "Report.Warmup": "0us",
    "stop_time": "10ms",  # a bound: the run ends when both messages of every flow completed
}


def incast_without_victim() -> dict:
    """scenarios/incast.yaml without its victim workload (its hosts h17, h18 stay idle)."""
    raw = yaml.safe_load((scenarios_dir() / "incast.yaml").read_text())
    del raw["workload"]["victim"]
    raw["name"] = "incast_without_victim"
    return raw


# Frame sizes without FCS (captures omit it), from the standards: Ethernet 14, IPv4 20, UDP 8,
# InfiniBand BTH 12, RETH 16, AETH 4, CNP reserved 16, ICRC 4; a PFC frame is a minimum frame.
ETH, IPV4, UDP, BTH, RETH, AETH, CNP_RESERVED, ICRC = 14, 20, 8, 12, 16, 4, 16, 4
PFC_FRAME = 60
FCS, PREAMBLE, IFG = 4, 8, 12
PFC_DST = "01:80:c2:00:00:01"
# IBTA opcodes (RC): RDMA WRITE First/Middle/Last/Only, Acknowledge; RoCEv2 CNP.
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY, ACK, CNP = 6, 7, 8, 10, 17, 129
WRITES = (WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY)
PI_WARN = 0x00600000  # expert-info severity "warning" (epan/proto.h)

FIELDS = [
    "frame.time_epoch",
    "frame.len",
    "eth.src",
    "eth.dst",
    "eth.type",
    "macc.opcode",
    "macc.cbfc.enbv",
    *[f"macc.cbfc.pause_time.c{c}" for c in range(8)],
    "ip.src",
    "ip.dst",
    "ip.id",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ip.checksum",
    "ip.checksum.status",
    "udp.dstport",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome",
    "infiniband.invariant.crc",
    "_ws.expert.severity",
    "_ws.malformed",
]
STRING_FIELDS = {"frame.time_epoch", "eth.src", "eth.dst", "ip.src", "ip.dst"}
STRING_FIELDS |= {"_ws.expert.severity", "_ws.malformed"}
INT_FIELDS = [f for f in FIELDS if f not in STRING_FIELDS]

PREFS = ["-o", "ip.check_checksum:TRUE"]


def _problems(path):
    """Frames tshark calls malformed or flags with an expert warning or error."""
    return problems(path, prefs=PREFS)


def _decode(path) -> pd.DataFrame:
    df = fields(path, FIELDS, prefs=PREFS, every=True)
    for f in INT_FIELDS:
        df[f] = [int(v, 0) if v else -1 for v in df[f]]  # -1: the field is absent
    # Nanosecond timestamps, exactly (a float would lose the last digits).
    df["t_ns"] = [int(Decimal(v) * 10**9) for v in df["frame.time_epoch"]]
    return df


def _rate(name: str) -> float:
    assert name.endswith("GbE"), name
    return float(name[:-3]) * 1e9


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    probe = lfsim.run(incast_without_victim(), OVERRIDES)
    ports = probe.table("ports").set_index("label")
    pfc = ports[ports[["pause_tx", "xon_tx", "pause_rx", "xon_rx"]].sum(axis=1) > 0].index
    facing_h0 = probe.metrics["bottleneck_port"]
    upstream = ports.drop(index=facing_h0)["ecn_marked"].idxmax()
    sender = ports[ports["cnp_rx"] > 0].index[0]
    labels = list(dict.fromkeys(["h0", facing_h0, *pfc, upstream, sender]))

    r = lfsim.run(
        incast_without_victim(), OVERRIDES, out=tmp_path_factory.mktemp("tshark") / "o", pcap=labels
    )
    files = {p.stem: p for p in r.pcap_files}
    assert sorted(files) == sorted(label.replace("/", "_") for label in labels)
    path = {label: files[label.replace("/", "_")] for label in labels}
    return {
        "probe": probe,
        "result": r,
        "ports": r.table("ports").set_index("label"),
        "labels": labels,
        "pfc": list(pfc),
        "facing_h0": facing_h0,
        "sender": sender,
        "path": path,
        "frames": {label: _decode(p) for label, p in path.items()},
    }


def _h0_ip(frames):
    writes = frames["h0"][frames["h0"]["infiniband.bth.opcode"].isin(WRITES)]
    ips = set(writes["ip.dst"])
    assert len(ips) == 1, ips  # incast: every data frame at h0 goes to h0
    return ips.pop()


def test_the_run_is_what_the_test_needs(run):
    r, ports = run["result"], run["ports"]
    # Captures change nothing in the simulation.
    pd.testing.assert_frame_equal(run["probe"].table("ports"), r.table("ports"))
    # Ended by completion, not by stop_time: every data frame reached host 0.
    assert list(r.config["workload"]) == ["incast"]
    senders = len(r.table("flows"))
    assert senders == 16  # h1-h16 write to h0
    assert r.summary["sim_time_s"] < time_seconds(r.config["stop_time"])
    assert r.metrics["messages_completed"] == MESSAGES * senders
    assert r.metrics["drops"] == 0 and r.metrics["retransmitted_packets"] == 0
    # The captured ports show all three mechanisms.
    assert run["pfc"], "no port sent PFC; the test needs a run with PFC frames"
    assert ports.loc[run["facing_h0"], "ecn_marked"] > 0
    assert ports.loc["h0", "cnp_tx"] > 0 and ports.loc[run["sender"], "cnp_rx"] > 0


def test_captures_decode_without_errors_or_bad_checksums(run):
    for label, df in run["frames"].items():
        assert _problems(run["path"][label]) == [], label
        assert (df["_ws.malformed"] == "").all(), label
        severities = [int(s) for v in df["_ws.expert.severity"] if v for s in v.split(";")]
        assert all(s < PI_WARN for s in severities), label
        ip = df[df["eth.type"] == 0x0800]
        # 1 = "Good": the checksum was verified, not just left unverified.
        assert (ip["ip.checksum.status"] == 1).all(), label
        assert set(df["eth.type"]) <= {0x0800, 0x8808}, label


def test_the_check_finds_a_bad_ipv4_checksum(run, tmp_path):
    """The check above is not blind: one flipped TTL byte is reported."""
    data = bytearray(run["path"]["h0"].read_bytes())
    off = 24  # pcap global header, then 16-byte record headers
    while struct.unpack_from("!H", data, off + 16 + 12)[0] != 0x0800:
        off += 16 + struct.unpack_from("<I", data, off + 8)[0]
    data[off + 16 + ETH + 8] ^= 0xFF
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(data)
    assert len(_problems(bad)) == 1


def test_every_rocev2_frame_carries_its_icrc(run):
    """Computed here with zlib over the masked bytes, on every RoCEv2 frame captured; tshark
    reads the same 4 bytes as the invariant CRC (it shows it, without checking it: Wireshark
    4.0's InfiniBand dissector has no ICRC check)."""
    marked = 0
    for label, path in run["path"].items():
        frames = _records(path)
        df = run["frames"][label]
        assert len(frames) == len(df), label
        rocev2 = 0
        ops = df["infiniband.bth.opcode"]
        for frame, shown, op in zip(frames, df["infiniband.invariant.crc"], ops, strict=True):
            icrc = _rocev2_icrc(frame)
            if icrc is None:
                assert shown == -1, label
                continue
            rocev2 += 1
            assert icrc[0] == icrc[1], label
            # Wireshark 4.0 stops at the CNP's unknown opcode, before its ICRC.
            assert shown == (-1 if op == CNP else int.from_bytes(icrc[0], "big")), label
            marked += frame[ETH + 1] & 3 == 3
        assert rocev2 == (df["udp.dstport"] == 4791).sum() > 0, label
    assert marked > 0  # some frames carry CE, which the masked TOS keeps out of the ICRC


def test_the_icrc_is_the_same_before_and_after_a_switch_marks_ce(run):
    """What the masks are for: a switch rewrote the ECN field of frames for host 0 (and the IPv4
    checksum with it), yet each frame reaches host 0 with the ICRC its sender gave it."""
    frames = run["frames"]
    ip = _h0_ip(frames)
    key = ["ip.src", "ip.id"]
    got = frames["h0"][frames["h0"]["ip.dst"] == ip].set_index(key)
    snd = frames[run["sender"]]
    sent = snd[snd["ip.dst"] == ip].set_index(key)
    both = got.merge(sent, left_index=True, right_index=True, suffixes=("_rx", "_tx"))
    assert len(both) == len(sent) > 0
    ce = both["ip.dsfield.ecn_rx"] != both["ip.dsfield.ecn_tx"]
    assert ce.sum() > 0
    assert (both["infiniband.invariant.crc_rx"] == both["infiniband.invariant.crc_tx"]).all()
    assert (both["ip.checksum_rx"] != both["ip.checksum_tx"])[ce].all()


def test_the_icrc_check_finds_a_changed_payload_byte(run):
    """The check above is not blind: a payload bit flipped on the way breaks the ICRC, a TTL
    changed on the way (masked) does not."""
    frame = next(f for f in _records(run["path"]["h0"]) if _rocev2_icrc(f))
    ttl = bytearray(frame)
    ttl[ETH + 8] -= 1
    got, want = _rocev2_icrc(bytes(ttl))
    assert got == want
    payload = bytearray(frame)
    payload[-ICRC - 1] ^= 0x01
    got, want = _rocev2_icrc(bytes(payload))
    assert got != want


def test_every_captured_frame_is_counted_by_the_port(run):
    for label, df in run["frames"].items():
        p = run["ports"].loc[label]
        assert len(df) == p["frames_tx"] + p["frames_rx"], label


def test_pfc_frames_match_the_pause_counters(run):
    cfg = run["result"].config["RoceSwitch"]
    quanta = int(cfg["PauseQuanta"])
    lossless = int(cfg["LosslessPriorities"])
    for label, df in run["frames"].items():
        p = run["ports"].loc[label]
        pfc = df[df["eth.type"] == 0x8808]
        assert len(pfc) == p[["pause_tx", "xon_tx", "pause_rx", "xon_rx"]].sum(), label
        if pfc.empty:
            continue
        assert (pfc["macc.opcode"] == 0x0101).all() and (pfc["eth.dst"] == PFC_DST).all()
        assert (pfc["frame.len"] == PFC_FRAME).all()
        assert (pfc["macc.cbfc.enbv"] == lossless).all()
        for c in range(8):
            timer = pfc[f"macc.cbfc.pause_time.c{c}"]
            if lossless >> c & 1:
                assert set(timer) <= {quanta, 0}
            else:
                assert (timer == 0).all()
        timers = sum(pfc[f"macc.cbfc.pause_time.c{c}"] for c in range(8))
        xoff, xon = int((timers > 0).sum()), int((timers == 0).sum())
        assert (xoff, xon) == (p["pause_tx"] + p["pause_rx"], p["xon_tx"] + p["xon_rx"]), label
        # One source MAC per direction: this port's frames and its peer's.
        by_src = sorted(
            (int((t > 0).sum()), int((t == 0).sum())) for _, t in timers.groupby(pfc["eth.src"])
        )
        want = sorted(
            d for d in ((p["pause_tx"], p["xon_tx"]), (p["pause_rx"], p["xon_rx"])) if any(d)
        )
        assert by_src == want, label


def test_pfc_frames_cross_the_link_in_one_frame_time(run):
    """The same PFC frames at both ends of a link: received 802.3 wire time + cable delay after
    they were sent (captures are taken at the start of transmission and at full reception)."""
    r = run["result"]
    rate = _rate(r.config["topology"]["UplinkSpeed"])
    assert rate == _rate(r.config["topology"]["HostSpeed"])
    ch = r.config["RoceChannel"]
    cable_s = float(ch["Length"]) * time_seconds(ch["PropagationDelayPerMeter"])
    delay_ns = ((PREAMBLE + PFC_FRAME + FCS) * 8 / rate + cable_s) * 1e9
    pfc = {lb: run["frames"][lb][run["frames"][lb]["eth.type"] == 0x8808] for lb in run["pfc"]}
    pairs = 0
    for i, a in enumerate(run["pfc"]):
        for b in run["pfc"][i + 1 :]:
            for mac in set(pfc[a]["eth.src"]) & set(pfc[b]["eth.src"]):
                ta = pfc[a][pfc[a]["eth.src"] == mac]
                tb = pfc[b][pfc[b]["eth.src"] == mac]
                assert len(ta) == len(tb)
                sent, got = (ta, tb) if ta["t_ns"].iloc[0] < tb["t_ns"].iloc[0] else (tb, ta)
                lag = got["t_ns"].to_numpy() - sent["t_ns"].to_numpy()
                assert abs(lag - delay_ns).max() <= 1, (a, b, lag)  # ns timestamps truncate
                assert (sent["frame.len"].to_numpy() == got["frame.len"].to_numpy()).all()
                pairs += 1
    assert pairs > 0, "no link with both ends captured"


def test_ce_marks_reach_host_0_and_it_answers_with_cnps(run):
    r, ports, frames = run["result"], run["ports"], run["frames"]
    h0 = frames["h0"]
    ip = _h0_ip(frames)
    rx, tx = h0[h0["ip.dst"] == ip], h0[h0["ip.src"] == ip]
    assert len(rx) == ports.loc["h0", "frames_rx"] and len(tx) == ports.loc["h0", "frames_tx"]
    # Data leaves the senders ECT(0); a switch marks it CE at most once (a CE frame is no
    # longer ECN-capable), and every frame was delivered, so host 0 sees every mark of the
    # fabric (all data goes to host 0).
    assert set(rx["ip.dsfield.ecn"]) <= {2, 3}
    assert (rx["ip.dsfield.ecn"] == 3).sum() == ports["ecn_marked"].sum()
    snd = frames[run["sender"]]
    assert set(snd[snd["ip.dst"] == ip]["ip.dsfield.ecn"]) == {2}
    # ACKs and CNPs are not ECN-capable.
    assert (tx["ip.dsfield.ecn"] == 0).all()

    nic = r.config["RdmaNic"]
    cnps = h0[h0["infiniband.bth.opcode"] == CNP]
    assert len(cnps) == ports.loc["h0", "cnp_tx"] + ports.loc["h0", "cnp_rx"]
    assert (cnps["ip.src"] == ip).all() and ports.loc["h0", "cnp_rx"] == 0
    assert (cnps["ip.dsfield.dscp"] == int(nic["CnpDscp"])).all()
    assert (cnps["frame.len"] == ETH + IPV4 + UDP + BTH + CNP_RESERVED + ICRC).all()
    # At most one CNP per QP per CnpInterval (the notification point's limit). The NIC makes
    # them CnpInterval apart (a CNP owed at an interval's end goes exactly then); on the line a
    # CNP may wait for the frame host 0 is sending (an ACK or another CNP: strict priority
    # takes the next frame, not the one in progress), so a gap may be short by that frame.
    gap_ns = time_seconds(nic["CnpInterval"]) * 1e9
    wait_ns = (
        (tx["frame.len"].max() + 4 + 8 + 12) * 8 / _rate(r.config["topology"]["HostSpeed"]) * 1e9
    )
    for _, per_qp in cnps.groupby(["ip.dst", "infiniband.bth.destqp"]):
        assert (per_qp["t_ns"].diff().dropna() >= gap_ns - wait_ns - 1).all()
    # The sender received what host 0 sent it.
    got = snd[snd["infiniband.bth.opcode"] == CNP]
    assert len(got) == ports.loc[run["sender"], "cnp_rx"]
    assert (got["ip.src"] == ip).all()


def test_rocev2_headers(run):
    r, frames = run["result"], run["frames"]
    size = int(r.config["workload"]["incast"]["MessageSize"])
    mtu = int(r.config["RdmaNic"]["PathMtu"])
    assert size % mtu == 0 and size // mtu > 2  # First, Middle..., Last
    lengths = {
        WRITE_FIRST: ETH + IPV4 + UDP + BTH + RETH + mtu + ICRC,
        WRITE_MIDDLE: ETH + IPV4 + UDP + BTH + mtu + ICRC,
        WRITE_LAST: ETH + IPV4 + UDP + BTH + mtu + ICRC,
        ACK: ETH + IPV4 + UDP + BTH + AETH + ICRC,
        CNP: ETH + IPV4 + UDP + BTH + CNP_RESERVED + ICRC,
    }
    for label, df in frames.items():
        ip = df[df["eth.type"] == 0x0800]
        assert (ip["udp.dstport"] == 4791).all(), label
        op = ip["infiniband.bth.opcode"]
        assert set(op) <= set(lengths), (label, set(op))  # every one decoded as BTH
        for code, length in lengths.items():
            assert (ip[op == code]["frame.len"] == length).all(), (label, code)
        assert (ip[op.isin([WRITE_FIRST, WRITE_ONLY])]["infiniband.reth.dmalen"] == size).all()
        assert (ip[op.isin([WRITE_MIDDLE, WRITE_LAST, ACK])]["infiniband.reth.dmalen"] == -1).all()
        acks = ip[op == ACK]["infiniband.aeth.syndrome"]
        assert (acks >= 0).all(), label  # every ACK carries an AETH
        assert (acks // 32 == 0).all(), label  # ACK (000x xxxx), not NAK (011x xxxx)
        assert (ip[op.isin(WRITES)]["infiniband.aeth.syndrome"] == -1).all()

    # Lossless: host 0 gets each sender's packets once and in PSN order, one message after
    # another (First, Middle..., Last).
    h0 = frames["h0"]
    data = h0[h0["infiniband.bth.opcode"].isin(WRITES)]
    per_msg = [WRITE_FIRST] + [WRITE_MIDDLE] * (size // mtu - 2) + [WRITE_LAST]
    for src, d in data.groupby("ip.src"):
        assert list(d["infiniband.bth.psn"]) == list(range(len(d))), src
        assert list(d["infiniband.bth.opcode"]) == per_msg * MESSAGES, src


def test_frames_reach_host_0_one_wire_time_after_its_switch_port_sends_them(run):
    r, frames = run["result"], run["frames"]
    rate = _rate(r.config["topology"]["HostSpeed"])
    ch = r.config["RoceChannel"]
    cable_ns = float(ch["Length"]) * time_seconds(ch["PropagationDelayPerMeter"]) * 1e9
    ip = _h0_ip(frames)
    sw, h0 = frames[run["facing_h0"]], frames["h0"]
    sent = sw[sw["ip.dst"] == ip].set_index(["ip.src", "ip.id"])
    got = h0[h0["ip.dst"] == ip].set_index(["ip.src", "ip.id"])
    assert sent.index.is_unique and len(sent) == len(got)
    got = got.loc[sent.index]
    wire_ns = (PREAMBLE + sent["frame.len"] + FCS) * 8 / rate * 1e9
    lag = got["t_ns"] - sent["t_ns"]
    assert (abs(lag - wire_ns - cable_ns) <= 1).all()
    assert (got["ip.dsfield.ecn"] == sent["ip.dsfield.ecn"]).all()
    # Back to back but never overlapping: a frame starts at least one frame + IFG after the
    # previous one started (so the port never exceeds the line rate).
    out = sw[sw["ip.dst"] == ip]
    busy_ns = (PREAMBLE + out["frame.len"] + FCS + IFG) * 8 / rate * 1e9
    gaps = out["t_ns"].diff().iloc[1:].to_numpy() - busy_ns.iloc[:-1].to_numpy()
    assert gaps.min() >= -1
    assert (abs(gaps) <= 1).mean() > 0.5  # the bottleneck is busy most of the time


READ_REQUEST, READ_FIRST, READ_MIDDLE, READ_LAST = 12, 13, 14, 15


def test_rdma_read_responses_fill_the_link_at_the_wire_arithmetic(tmp_path):
    """What validation/cases/roce.py compares the WDS reads with, seen packet by packet: host 0
    reads 128 KiB messages from host 1 over one 25GbE cable; host 1's responses go back to back,
    each 4096-B packet taking 4178 B of line (AETH on the first and last of a message)."""
    size, mtu = 131072, 4096
    scenario = {
        "fabric": "roce",
        "seed": 1,
        "stop_time": "1ms",  # a bound: the run ends when the messages have completed
        "topology": {"generator": "PointToPoint", "HostSpeed": "25GbE"},
        "workload": {
            "read": {
                "pattern": "Incast",
                "Hosts": "h1",
                "Destinations": "h0",
                "Operation": "Read",
                "MessageSize": size,
                "Messages": 3,
                "QueueDepth": 2,
            }
        },
        "RdmaNic": {"PathMtu": mtu},
    }
    r = lfsim.run(scenario, out=tmp_path / "o", pcap="h0,h1")
    assert r.metrics["messages_completed"] == 3
    rate = _rate(r.config["topology"]["HostSpeed"])
    frames = {p.stem: _decode(p) for p in r.pcap_files}
    ports = r.table("ports").set_index("label")
    for label, df in frames.items():
        assert _problems(r.out / "pcap" / f"{label}.pcap") == [], label
        assert len(df) == ports.loc[label, "frames_tx"] + ports.loc[label, "frames_rx"]

    h1 = frames["h1"]
    requester = set(h1[h1["infiniband.bth.opcode"] == READ_REQUEST]["ip.src"])
    assert len(requester) == 1
    req = h1[h1["infiniband.bth.opcode"] == READ_REQUEST]
    assert len(req) == 3 and (req["infiniband.reth.dmalen"] == size).all()
    assert (req["frame.len"] == ETH + IPV4 + UDP + BTH + RETH + ICRC).all()

    resp = h1[h1["ip.dst"].isin(requester)]
    op = resp["infiniband.bth.opcode"]
    n = size // mtu
    assert list(op) == ([READ_FIRST] + [READ_MIDDLE] * (n - 2) + [READ_LAST]) * 3
    assert list(resp["infiniband.bth.psn"]) == list(range(3 * n))
    with_aeth = op.isin([READ_FIRST, READ_LAST])
    assert (resp[with_aeth]["infiniband.aeth.syndrome"] >= 0).all()
    assert (resp[~with_aeth]["infiniband.aeth.syndrome"] == -1).all()
    assert (resp["frame.len"] == ETH + IPV4 + UDP + BTH + mtu + ICRC + AETH * with_aeth).all()

    # Back to back: each response starts one line time (frame, FCS, preamble, IFG) after the
    # previous one, so the cable carries payload at 25e9/8 x 4096/4178 B/s.
    line = PREAMBLE + resp["frame.len"] + FCS + IFG
    gaps = resp["t_ns"].diff().iloc[1:].to_numpy() - (line * 8 / rate * 1e9).iloc[:-1].to_numpy()
    assert abs(gaps).max() <= 1
