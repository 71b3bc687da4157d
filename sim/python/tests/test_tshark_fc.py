"""The fc fabric's packet captures read by tshark (Wireshark's FC, FCP and BLS dissectors) as
Fibre Channel frames with their delimiters (LINKTYPE_FC_2_WITH_FRAME_DELIMS), and counted
against what the run did.

One run of storage_qd1 in mode fcp, as a mix of reads and writes of 16 KiB with bursts of
8 KiB, captured at both ends of both fibres: every I/O gives one FCP_CMND, one FCP_XFER_RDY per
write burst, 2048-byte FCP_DATA frames and one FCP_RSP. A second run with a device slower than
the I/O timeout aborts every exchange with ABTS, answered by BA_ACC. Expected values come from
the standards (FC-FS frame layout and delimiters, FCP-4 IU sizes, 8b/10b code tables) and the
run's own tables and metrics, never from earlier output. Wireshark checks each frame's CRC
itself (an expert error when it is wrong).
"""

import struct
from decimal import Decimal
from math import ceil

import pandas as pd
import pytest
from tshark_captures import TSHARK, fields, problems

import lfsim
from lfsim.scenario import time_seconds

pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")

MAX_PAYLOAD = 2048  # FCP_DATA frames: FcpInitiator and FcpTarget MaxPayload
BURST = 8192  # FcpTarget.MaxBurstLength: one FCP_XFER_RDY, and one read sequence, per 8 KiB
BS = 16384
OVERRIDES = {
    "mode": "fcp",
    "FioJob.rw": "randrw",
    "FioJob.bs": BS,
    "FioJob.runtime": "5ms",
    "FcpInitiator.MaxPayload": MAX_PAYLOAD,
    "FcpTarget.MaxPayload": MAX_PAYLOAD,
    "FcpTarget.MaxBurstLength": BURST,
}
# Wireshark 4.0 keys the sequences it reassembles by OX_ID << 16 ^ SEQ_ID with the responder
# bit OR'ed into bit 0, so a target's sequences 0 and 1 of one exchange (a read of two bursts)
# collide: decode frame by frame, and try reassembly only on the initiator's sequences.
PREFS = ["-o", "fc.reassemble:FALSE"]
# Wireshark puts frame k of a sequence at k x fc.max_frame_size (1024 unless told).
REASSEMBLE = ["-o", "fc.reassemble:TRUE", "-o", f"fc.max_frame_size:{MAX_PAYLOAD}"]

LINKTYPE_FC_2_WITH_FRAME_DELIMS = 225
# FC-FS: SOF 4, header 24, CRC 4, EOF 4 bytes; FCP-4 IUs: FCP_CMND 32 (16-byte CDB),
# FCP_XFER_RDY 12, FCP_RSP 24; BA_ACC 12.
SOF, HEADER, CRC, EOF = 4, 24, 4, 4
CMND, XFER_RDY, RSP, BA_ACC_SIZE = 32, 12, 24, 12
R_DATA, R_XFER_RDY, R_CMND, R_RSP, R_ABTS, R_BA_ACC = 0x01, 0x05, 0x06, 0x07, 0x81, 0x84
FTYPE_FCP, FTYPE_BLS = 0x3, 0x4  # Wireshark's fc.ftype values
# Ordered sets (FC-FS Table 5), as Wireshark's packet-fc.c reads them (big-endian words).
SOF_I3, SOF_N3 = 0xBCB55656, 0xBCB53636
EOF_T = {False: 0xBC957575, True: 0xBCB57575}  # EOFt-, EOFt+ (disparity before the EOF)
EOF_N = {False: 0xBC95D5D5, True: 0xBCB5D5D5}  # EOFn-, EOFn+
END_SEQUENCE = 0x080000  # F_CTL bit 19

# 8b/10b (IEEE 802.3 Tables 36-1a, 36-1b): the 5b/6b and 3b/4b codes sent at negative running
# disparity; at positive disparity the unbalanced ones, and 111000 and 1100, are complemented.
SIX = (
    "100111 011101 101101 110001 110101 101001 011001 111000 111001 100101 010101 110100 "
    "001101 101100 011100 010111 011011 100011 010011 110010 001011 101010 011010 111010 "
    "110011 100110 010110 110110 001110 101110 011110 101011"
).split()
FOUR = "1011 1001 0101 1100 1101 1010 0110 1110".split()
K28_5 = ("0011111010", "1100000101")  # at negative, positive disparity


def _sub_block(code: str, positive: bool) -> bool:
    """Encodes one sub-block (its negative-disparity code) and returns the disparity after it."""
    ones = code.count("1")
    if positive and (2 * ones != len(code) or code in ("111000", "1100")):
        code = code.translate(str.maketrans("01", "10"))
        ones = code.count("1")
    if 2 * ones != len(code):
        return 2 * ones > len(code)
    if code in ("000111", "0011"):
        return True
    if code in ("111000", "1100"):
        return False
    return positive


def _data(byte: int, positive: bool) -> bool:
    positive = _sub_block(SIX[byte & 0x1F], positive)
    return _sub_block(FOUR[byte >> 5], positive)


def _k28_5(positive: bool) -> bool:
    return K28_5[positive].count("1") > 5


def _eof_disparity_positive(frame: bytes) -> bool:
    """The running disparity before the EOF: an ordered set starts at negative disparity, then
    the SOF's K28.5 and data characters, then the header, data field and CRC."""
    positive = _k28_5(False)
    for b in frame[1:-EOF]:
        positive = _data(b, positive)
    return positive


def _pcap(path):
    """(link type, frames) of a little-endian nanosecond pcap file."""
    data = path.read_bytes()
    magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data)
    assert magic == 0xA1B23C4D
    frames, off = [], 24
    while off < len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        frames.append(data[off + 16 : off + 16 + incl])
        off += 16 + incl
    return linktype, frames


def _problems(path, prefs=PREFS):
    """Frames tshark calls malformed or flags with an expert warning or error."""
    return problems(path, prefs=prefs)


FIELDS = [
    "frame.time_epoch",
    "frame.len",
    "fc.sof",
    "fc.eof",
    "fc.crc.status",
    "fc.r_ctl",
    "fc.ftype",
    "fc.type",
    "fc.s_id",
    "fc.d_id",
    "fc.f_ctl",
    "fc.seq_cnt",
    "fc.ox_id",
    "fc.rx_id",
    "fc.reassembled",
    "fc.bls_oxid",
    "fc.bls_rxid",
    "fc.bls_hseqcnt",
    "fcp.dl",
    "fcp.rddata",
    "fcp.burstlen",
    "fcp.status",
    "data.len",
    "_ws.col.Protocol",
]
STRING_FIELDS = {"frame.time_epoch", "fc.s_id", "fc.d_id", "_ws.col.Protocol"}


def _decode(path, prefs=PREFS) -> pd.DataFrame:
    df = fields(path, FIELDS, prefs=prefs)
    for f in FIELDS:
        if f not in STRING_FIELDS:
            df[f] = [int(v, 0) if v else -1 for v in df[f]]  # -1: the field is absent
    df["t_ns"] = [int(Decimal(v) * 10**9) for v in df["frame.time_epoch"]]
    return df


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    r = lfsim.run("storage_qd1", OVERRIDES, out=tmp_path_factory.mktemp("fc") / "o", pcap="all")
    labels = r.labels("ports")
    assert labels == ["h0", "h1", "sw0/p0", "sw0/p1"]
    path = {p.stem.replace("_", "/"): p for p in r.pcap_files}
    assert sorted(path) == sorted(labels)
    return {
        "result": r,
        "path": path,
        "frames": {label: _decode(p) for label, p in path.items()},
        "raw": {label: _pcap(p) for label, p in path.items()},
    }


def test_the_run_is_what_the_test_needs(run):
    r = run["result"]
    ios = r.table("ios")
    assert r.metrics["ios_completed"] == r.metrics["ios_submitted"] == len(ios) > 0
    assert r.metrics["ios_in_flight"] == 0 and r.metrics["frames_lost"] == 0
    assert (ios["bytes"] == BS).all()
    assert 0 < ios["read"].sum() < len(ios)  # reads and writes


def test_files_are_fc2_with_delimiters_and_hold_both_directions(run):
    r = run["result"]
    tx = r.table("ports").set_index("label")["frames_tx"]
    labels = r.labels("ports")
    peer = {}
    for a, b in r.table("links")[["a", "b"]].itertuples(index=False):
        peer[labels[int(a)]], peer[labels[int(b)]] = labels[int(b)], labels[int(a)]
    for label, (linktype, frames) in run["raw"].items():
        assert linktype == LINKTYPE_FC_2_WITH_FRAME_DELIMS
        # What the port sent and what its peer sent it (nothing is lost), R_RDYs excluded.
        assert len(frames) == tx[label] + tx[peer[label]] == len(run["frames"][label]), label


def test_tshark_decodes_every_frame_without_errors_and_checks_every_crc(run):
    for label, df in run["frames"].items():
        assert _problems(run["path"][label]) == [], label
        assert (df["fc.crc.status"] == 1).all(), label  # 1 = "Good": checked, not skipped
        assert (df["fc.ftype"] == FTYPE_FCP).all() and (df["fc.type"] == 0x08).all(), label


def test_the_crc_check_finds_a_changed_byte(run, tmp_path):
    """The check above is not blind: one payload byte changed in the last frame is reported."""
    data = bytearray(run["path"]["h0"].read_bytes())
    data[-EOF - CRC - 1] ^= 0x01
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(data)
    assert _problems(bad) == [str(len(run["frames"]["h0"]))]


def test_fcp_frames_match_the_ios(run):
    """At h0 (and at every port: both fibres carry all of it): one FCP_CMND per I/O, one
    FCP_XFER_RDY per write burst, FCP_DATA frames of MaxPayload, one FCP_RSP per I/O."""
    ios = run["result"].table("ios")
    writes = ios[ios["read"] == 0]
    want = {
        R_CMND: len(ios),
        R_XFER_RDY: sum(ceil(b / BURST) for b in writes["bytes"]),
        R_DATA: sum(ceil(b / MAX_PAYLOAD) for b in ios["bytes"]),
        R_RSP: len(ios),
    }
    size = {R_CMND: CMND, R_XFER_RDY: XFER_RDY, R_DATA: MAX_PAYLOAD, R_RSP: RSP}
    for label, df in run["frames"].items():
        counts = df["fc.r_ctl"].value_counts().to_dict()
        assert counts == want, label
        for r_ctl, n in size.items():
            assert (df[df["fc.r_ctl"] == r_ctl]["frame.len"] == SOF + HEADER + n + CRC + EOF).all()
        # FCP's own fields: decoded as FCP IUs, not just labelled by the FC header.
        cmnd = df[df["fc.r_ctl"] == R_CMND]
        assert (cmnd["fcp.dl"] == BS).all()
        assert cmnd["fcp.rddata"].sum() == ios["read"].sum()
        assert (df[df["fc.r_ctl"] == R_XFER_RDY]["fcp.burstlen"] == BURST).all()
        assert (df[df["fc.r_ctl"] == R_RSP]["fcp.status"] == 0).all()  # GOOD


def test_write_bursts_reassemble_into_whole_sequences(run):
    """Wireshark joins each write burst's frames (SEQ_CNT 0..3 at their relative offsets, the
    last with End_Sequence) into one 8 KiB sequence; the bursts of one exchange are told apart
    by their SEQ_IDs."""
    ios = run["result"].table("ios")
    df = _decode(run["path"]["h0"], prefs=REASSEMBLE)
    initiator = df[df["fc.r_ctl"] == R_CMND]["fc.s_id"].iloc[0]
    mine = df[df["fc.s_id"] == initiator]
    whole = mine[mine["fc.reassembled"] == 1]
    assert len(whole) == sum(ceil(b / BURST) for b in ios[ios["read"] == 0]["bytes"]) > 0
    assert (whole["data.len"] == BURST).all()
    # Whatever Wireshark fails to reassemble is the target's (see REASSEMBLE).
    bad = {int(n) - 1 for n in _problems(run["path"]["h0"], prefs=REASSEMBLE)}
    assert initiator not in set(df.iloc[sorted(bad)]["fc.s_id"])


def test_initiator_sends_commands_and_write_data_target_the_rest(run):
    h0 = run["frames"]["h0"]
    ios = run["result"].table("ios")
    sent = h0[h0["fc.s_id"] == h0[h0["fc.r_ctl"] == R_CMND]["fc.s_id"].iloc[0]]
    assert set(sent["fc.r_ctl"]) == {R_CMND, R_DATA}
    assert (sent["fc.r_ctl"] == R_DATA).sum() == (ios["read"] == 0).sum() * BS // MAX_PAYLOAD


def test_delimiters_follow_the_sequences_and_the_running_disparity(run):
    """SOFi3 starts a sequence (the first frame of an exchange's direction, or the first after
    an End_Sequence frame), SOFn3 goes on; EOFt ends a sequence, EOFn the others, each in the
    form the 8b/10b running disparity calls for; after the EOF the disparity is negative."""
    for label, df in run["frames"].items():
        frames = run["raw"][label][1]
        ended = {}
        for (_, row), frame in zip(df.iterrows(), frames, strict=True):
            key = (row["fc.s_id"], row["fc.ox_id"])
            assert row["fc.sof"] == (SOF_I3 if ended.get(key, True) else SOF_N3), label
            last = bool(row["fc.f_ctl"] & END_SEQUENCE)
            ended[key] = last
            positive = _eof_disparity_positive(frame)
            assert row["fc.eof"] == (EOF_T if last else EOF_N)[positive], label
            # The EOF brings the disparity back to negative (a check of the tables above).
            after = _k28_5(positive)
            for b in frame[-3:]:
                after = _data(b, after)
            assert not after
        assert {row for row in df["fc.eof"]} >= {EOF_T[False], EOF_T[True]}, label


def test_frames_reach_the_far_end_one_fibre_delay_after_their_sof_leaves(run):
    """Both ends stamp a frame at its SOF: sent when it leaves, received when it arrives."""
    r = run["result"]
    ch = r.config["FcChannel"]
    delay_ns = float(ch["Length"]) * time_seconds(ch["PropagationDelayPerMeter"]) * 1e9
    for a, b in (("h0", "sw0/p0"), ("h1", "sw0/p1")):
        fa, fb = run["frames"][a], run["frames"][b]
        for s_id in set(fa["fc.s_id"]):
            # The frames one end sent, in order, and the same frames at the other end.
            xa, xb = fa[fa["fc.s_id"] == s_id], fb[fb["fc.s_id"] == s_id]
            assert len(xa) == len(xb) > 0
            for f in ("fc.r_ctl", "fc.ox_id", "fc.seq_cnt", "frame.len"):
                assert (xa[f].to_numpy() == xb[f].to_numpy()).all(), (a, b, f)
            lag = abs(xb["t_ns"].to_numpy() - xa["t_ns"].to_numpy())
            assert (abs(lag - delay_ns) <= 1).all(), (a, b, s_id)


@pytest.fixture(scope="module")
def aborted(tmp_path_factory):
    """The device takes 3 ms, the I/O timeout is 1 ms: every exchange is aborted (ABTS) while
    the target still holds it, so the target answers BA_ACC; the I/O is retried until it
    fails."""
    overrides = {
        "mode": "fcp",
        "BlockTarget.ReadServiceTime": "3ms",
        "workload.fio.IoTimeout": "1ms",
        "FioJob.runtime": "10ms",
    }
    r = lfsim.run("storage_qd1", overrides, out=tmp_path_factory.mktemp("abts") / "o", pcap="h0")
    return r, _decode(r.pcap_files[0]), r.pcap_files[0]


def test_abts_and_ba_acc_decode_as_basic_link_services(aborted):
    r, df, path = aborted
    m = r.metrics
    assert m["ios_aborted"] > 0 and m["ios_completed"] == 0
    assert _problems(path) == []
    assert (df["fc.crc.status"] == 1).all()
    cmnd = df[df["fc.r_ctl"] == R_CMND]
    abts = df[df["fc.r_ctl"] == R_ABTS]
    acc = df[df["fc.r_ctl"] == R_BA_ACC]
    # Each try is an exchange of its own: a command, its ABTS and the BA_ACC.
    assert len(cmnd) == m["ios_submitted"] + m["ios_retried"]
    assert len(abts) == len(acc) == m["ios_aborted"]
    assert set(df["fc.r_ctl"]) == {R_CMND, R_ABTS, R_BA_ACC}
    for bls, size in ((abts, 0), (acc, BA_ACC_SIZE)):
        assert (bls["fc.ftype"] == FTYPE_BLS).all() and (bls["fc.type"] == 0).all()
        assert (bls["_ws.col.Protocol"] == "BLS").all()
        assert (bls["frame.len"] == SOF + HEADER + size + CRC + EOF).all()
    assert list(abts["fc.ox_id"]) == list(cmnd["fc.ox_id"]) == list(acc["fc.ox_id"])
    # BA_ACC names the aborted exchange (OX_ID, and the RX_ID the target gave it) and the whole
    # SEQ_CNT range.
    assert (acc["fc.bls_oxid"] == acc["fc.ox_id"]).all()
    assert (acc["fc.bls_rxid"] == acc["fc.rx_id"]).all()
    assert (acc["fc.bls_hseqcnt"] == 0xFFFF).all()
    # Each answer follows its ABTS.
    assert (acc["t_ns"].to_numpy() > abts["t_ns"].to_numpy()).all()


def test_cli_captures_every_fc_port(cli, tmp_path):
    p = cli(
        "run",
        "storage_qd1",
        "--set",
        "mode=fcp",
        "--set",
        "stop_time=2ms",
        "--set",
        "FioJob.runtime=1ms",
        "--set",
        "FioJob.ramp_time=0s",
        "--pcap",
        "all",
        "--out",
        "o",
    )
    assert p.returncode == 0, p.stderr
    assert "packet captures: 4 files in o/pcap" in p.stdout
    files = sorted((tmp_path / "o" / "pcap").glob("*.pcap"))
    assert [f.name for f in files] == ["h0.pcap", "h1.pcap", "sw0_p0.pcap", "sw0_p1.pcap"]
    for f in files:
        assert _pcap(f)[0] == LINKTYPE_FC_2_WITH_FRAME_DELIMS
        assert _problems(f) == []
        assert len(_decode(f)) > 0
