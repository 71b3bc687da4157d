"""NVMe/TCP captures read by tshark (Wireshark's TCP, nvme-tcp and nvme dissectors, TCP port
4420), and counted against what the runs did.

storage_qd1 in mode nvmeof_tcp, a mix of 32 KiB reads and writes captured at both ends of both
cables, once as Linux runs it (no digests) and once with header and data digests, which tshark
checks. The PDUs are the model's own bytes; captures add only the IPv4 and TCP checksums, which
tshark checks too. Expected PDU counts come from the NVMe/TCP transport specification applied to
the runs' own tables (one ICReq / ICResp and one Fabrics Connect per queue; per read a CapsuleCmd,
C2HData and a CapsuleResp; per write of more than the in-capsule data size a CapsuleCmd, an R2T,
H2CData of at most MAXH2CDATA, a CapsuleResp), never from earlier output.
"""

from math import ceil

import pandas as pd
import pytest
from tshark_captures import TSHARK, fields, problems, records, storage_captures

pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")

BS = 32768
OVERRIDES = {
    "mode": "nvmeof_tcp",
    "FioJob.rw": "randrw",
    "FioJob.bs": BS,
    "FioJob.runtime": "5ms",
}
DIGESTS = {**OVERRIDES, "NvmeofTcpStack.HeaderDigest": True, "NvmeofTcpStack.DataDigest": True}
PREFS = [
    "-o",
    "ip.check_checksum:TRUE",
    "-o",
    "tcp.check_checksum:TRUE",
    "-o",
    "nvme-tcp.check_hdgst:TRUE",
    "-o",
    "nvme-tcp.check_ddgst:TRUE",
]
# PDU-type (NVMe/TCP 1.0a section 3.6.1).
ICREQ, ICRESP, CAPSULE_CMD, CAPSULE_RESP, H2C_DATA, C2H_DATA, R2T = 0, 1, 4, 5, 6, 7, 9
NVME_WRITE, NVME_READ, FABRICS = 0x01, 0x02, 0x7F
CHECKSUM_GOOD = 1  # tshark's *.checksum.status and nvme-tcp.*dgst.status "Good"
CHECKSUM_BAD = 0


def _fields(path, names, display=None) -> pd.DataFrame:
    df = fields(path, names, *(["-Y", display] if display else []), prefs=PREFS, every=True)
    for f in names:
        df[f] = [[int(x, 0) for x in v.split(";")] if v else [] for v in df[f]]
    return df


def _types(path) -> list[int]:
    """Every NVMe/TCP PDU tshark found, in order (a frame may hold several)."""
    return [t for v in _fields(path, ["nvme-tcp.type"], "nvme-tcp")["nvme-tcp.type"] for t in v]


def _expected(r) -> dict[int, int]:
    """What the transport specification says the run's PDUs are."""
    cfg = r.config["NvmeofTcpStack"]
    inline, maxh2c = int(cfg["InlineDataSize"]), int(cfg["MaxH2CData"])
    paths = len(r.table("paths"))
    queues = paths * (1 + _io_queues(r))  # an admin queue and the I/O queues per path
    ios = r.table("ios")
    reads = int(ios["read"].sum())
    big = ios[(ios["read"] == 0) & (ios["bytes"] > inline)]
    want = {ICREQ: queues, ICRESP: queues, CAPSULE_CMD: queues + len(ios)}
    want[CAPSULE_RESP] = want[CAPSULE_CMD]
    want[C2H_DATA] = reads  # nvmet-tcp: one C2HData per read
    if len(big):
        want[R2T] = len(big)  # nvmet-tcp solicits a write's data in one R2T ...
        want[H2C_DATA] = int(sum(ceil(b / maxh2c) for b in big["bytes"]))  # ... cut at MAXH2CDATA
    return {k: v for k, v in want.items() if v}


def _io_queues(r) -> int:
    """I/O queues per controller: NvmeofStack.NrIoQueues, or one per job of the host."""
    n = int(r.config["NvmeofStack"]["NrIoQueues"])
    return n or int(r.config["FioJob"]["numjobs"])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return storage_captures(tmp_path_factory, OVERRIDES)


@pytest.fixture(scope="module")
def digests(tmp_path_factory):
    return storage_captures(tmp_path_factory, DIGESTS, probe=False)


def test_the_run_is_what_the_test_needs(run):
    r = run["result"]
    ios = r.table("ios")
    assert r.metrics["ios_completed"] == r.metrics["ios_submitted"] == len(ios) > 0
    assert r.metrics["ios_in_flight"] == 0 and r.metrics["stale_completions"] == 0
    assert (ios["bytes"] == BS).all() and 0 < ios["read"].sum() < len(ios)
    assert BS > int(r.config["NvmeofTcpStack"]["InlineDataSize"])  # writes go by R2T
    # Captures change nothing in the simulation.
    pd.testing.assert_frame_equal(run["probe"].table("ios"), ios)
    assert run["probe"].metrics == r.metrics


@pytest.mark.parametrize("which", ["run", "digests"])
def test_tshark_decodes_every_frame_without_errors_and_checks_every_checksum(which, request):
    for label, path in request.getfixturevalue(which)["path"].items():
        assert problems(path, prefs=PREFS) == [], label
        df = _fields(path, ["ip.checksum.status", "tcp.checksum.status"])
        assert len(df) == len(records(path)) > 0
        assert all(v == [CHECKSUM_GOOD] for v in df["ip.checksum.status"]), label
        assert all(v == [CHECKSUM_GOOD] for v in df["tcp.checksum.status"]), label
        assert "nvme-tcp.unknown_data" not in "".join(
            fields(path, ["nvme-tcp.unknown_data"], prefs=PREFS)["nvme-tcp.unknown_data"]
        )


def test_pdu_counts_are_the_ios_and_the_simulators_own(run):
    r = run["result"]
    want = _expected(r)
    for label, path in run["path"].items():
        counts = pd.Series(_types(path)).value_counts().to_dict()
        assert counts == want, label
    # The stack's own count of what its host queues sent and received is the same.
    pdus = r.table("nvme_tcp_pdus").set_index("label")
    host_sent = {ICREQ: "ICReq", CAPSULE_CMD: "CapsuleCmd", H2C_DATA: "H2CData"}
    host_received = {ICRESP: "ICResp", CAPSULE_RESP: "CapsuleResp", C2H_DATA: "C2HData", R2T: "R2T"}
    for t, name in host_sent.items():
        assert pdus.loc[name, "host_sent"] == want.get(t, 0), name
    for t, name in host_received.items():
        assert pdus.loc[name, "host_received"] == want.get(t, 0), name


def test_each_queue_connects_with_icreq_and_a_fabrics_connect(run):
    r = run["result"]
    path = run["path"]["h0"]
    ic = _fields(
        path,
        ["nvme-tcp.icreq.pfv", "nvme-tcp.icreq.hpda", "nvme-tcp.icreq.digest"],
        "nvme-tcp.type == 0",
    )
    assert all(v == [0] for v in ic["nvme-tcp.icreq.pfv"])  # PFV 0
    assert all(v == [0] for v in ic["nvme-tcp.icreq.hpda"])  # Linux asks no alignment
    assert all(v == [0] for v in ic["nvme-tcp.icreq.digest"])  # digests off
    resp = _fields(path, ["nvme-tcp.icresp.maxdata", "nvme-tcp.icresp.cpda"], "nvme-tcp.type == 1")
    maxh2c = int(r.config["NvmeofTcpStack"]["MaxH2CData"])
    assert all(v == [maxh2c] for v in resp["nvme-tcp.icresp.maxdata"])
    assert all(v == [0] for v in resp["nvme-tcp.icresp.cpda"])
    connect = _fields(
        path,
        [
            "nvme.fabrics.cmd.connect.qid",
            "nvme.fabrics.cmd.connect.kato",
            "nvme.fabrics.cmd.connect.sqsize",
        ],
        "nvme.fabrics.cmd.fctype == 0x01",
    )
    qids = sorted(v[0] for v in connect["nvme.fabrics.cmd.connect.qid"])
    assert qids == [0] + list(range(1, _io_queues(r) + 1))  # the admin queue, then the I/O queues
    # The admin queue's Connect carries KATO (NvmeofStack.KeepAliveTimeout 5 s); I/O queues' 0.
    qid_kato = [
        (q[0], k[0])
        for q, k in zip(
            connect["nvme.fabrics.cmd.connect.qid"],
            connect["nvme.fabrics.cmd.connect.kato"],
            strict=True,
        )
    ]
    assert sorted(k for q, k in qid_kato if q == 0) == [5000]
    assert {k for q, k in qid_kato if q != 0} == {0}
    sqsize = int(r.config["NvmeofStack"]["QueueSize"]) - 1
    assert sqsize in [v[0] for v in connect["nvme.fabrics.cmd.connect.sqsize"]]


def test_commands_are_the_ios_in_order_and_each_completes_with_success(run):
    ios = run["result"].table("ios").sort_values("submit_ns")
    for label, path in run["path"].items():
        cmd = _fields(path, ["nvme.cmd.opc", "nvme.cmd.cid", "nvme.cmd.nlb"], "nvme.cmd.opc <= 2")
        ops = [o for v in cmd["nvme.cmd.opc"] for o in v]
        assert ops == [NVME_READ if x else NVME_WRITE for x in ios["read"]], label
        # NLB counts 512-byte blocks (Wireshark shows the count, not the 0's based field).
        assert {n for v in cmd["nvme.cmd.nlb"] for n in v} == {BS // 512}
        cqe = _fields(path, ["nvme.cqe.status", "nvme.cqe.cid"], "nvme.cqe.cid")
        sts = [s for v in cqe["nvme.cqe.status"] for s in v]
        assert sts and set(sts) == {0}, label  # success, phase 0
        cids = [c for v in cmd["nvme.cmd.cid"] for c in v]
        done = [c for v in cqe["nvme.cqe.cid"] for c in v]
        assert sorted(set(cids)) == sorted(set(cids) & set(done))


def test_data_pdus_move_each_io_exactly_once(run):
    r = run["result"]
    ios = r.table("ios")
    path = run["path"]["h1"]
    data = _fields(
        path,
        ["nvme-tcp.type", "nvme-tcp.data.offset", "nvme-tcp.data.length"],
        "nvme-tcp.type == 6 || nvme-tcp.type == 7",
    )
    moved = {H2C_DATA: 0, C2H_DATA: 0}
    for types, offs, lens in zip(
        data["nvme-tcp.type"],
        data["nvme-tcp.data.offset"],
        data["nvme-tcp.data.length"],
        strict=True,
    ):
        # A frame may end a data PDU and hold the CapsuleResp after it: its data fields are
        # the data PDUs'.
        data_types = [t for t in types if t in moved]
        for t, o, n in zip(data_types, offs, lens, strict=True):
            assert o == 0 and n == BS  # one data PDU per I/O: MAXH2CDATA, one C2HData per read
            moved[t] += n
    assert moved[C2H_DATA] == ios[ios["read"] == 1]["bytes"].sum()
    assert moved[H2C_DATA] == ios[ios["read"] == 0]["bytes"].sum()
    r2t = _fields(path, ["nvme-tcp.r2t.offset", "nvme-tcp.r2t.length"], "nvme-tcp.type == 9")
    assert all(v == [0] for v in r2t["nvme-tcp.r2t.offset"])
    assert all(v == [BS] for v in r2t["nvme-tcp.r2t.length"])


def test_with_digests_every_pdu_carries_them_and_tshark_finds_them_good(digests):
    r = digests["result"]
    assert r.metrics["nvme_tcp_digest_errors"] == 0 and r.metrics["ios_in_flight"] == 0
    for label, path in digests["path"].items():
        df = _fields(
            path,
            [
                "nvme-tcp.type",
                "nvme-tcp.flags.pdu.hdgst",
                "nvme-tcp.hdgst.status",
                "nvme-tcp.ddgst.status",
            ],
            "nvme-tcp",
        )
        types = [t for v in df["nvme-tcp.type"] for t in v]
        hd = [h for v in df["nvme-tcp.flags.pdu.hdgst"] for h in v]
        # Every PDU but ICReq / ICResp has a header digest.
        assert [bool(h) for h in hd] == [t not in (ICREQ, ICRESP) for t in types], label
        status = [s for v in df["nvme-tcp.hdgst.status"] for s in v]
        assert status and set(status) == {CHECKSUM_GOOD}, label
        dstatus = [s for v in df["nvme-tcp.ddgst.status"] for s in v]
        assert dstatus and set(dstatus) == {CHECKSUM_GOOD}, label


def _fix_tcp_checksum(frame: bytearray) -> None:
    """Recompute an Ethernet (+ 802.1Q) / IPv4 / TCP frame's TCP checksum (RFC 793), so that
    a changed payload byte is left for the NVMe/TCP data digest alone to find."""
    ip = 14 + (4 if frame[12:14] == b"\x81\x00" else 0)
    ihl = (frame[ip] & 0x0F) * 4
    total = int.from_bytes(frame[ip + 2 : ip + 4], "big")
    tcp = ip + ihl
    segment = bytearray(frame[tcp : ip + total])
    segment[16:18] = b"\0\0"
    pseudo = frame[ip + 12 : ip + 20] + bytes([0, 6]) + len(segment).to_bytes(2, "big")
    data = pseudo + segment + (b"\0" if len(segment) % 2 else b"")
    acc = sum(int.from_bytes(data[k : k + 2], "big") for k in range(0, len(data), 2))
    while acc >> 16:
        acc = (acc & 0xFFFF) + (acc >> 16)
    frame[tcp + 16 : tcp + 18] = (~acc & 0xFFFF).to_bytes(2, "big")


def test_the_digest_check_finds_a_changed_data_byte(digests, tmp_path):
    """The check above is not blind: one byte of a data PDU's data changed, its TCP checksum
    made right again, is found by the data digest alone: one PDU's is bad, every other good."""
    path = digests["path"]["h0"]
    frames = records(path)
    k = max(range(len(frames)), key=lambda i: len(frames[i]))  # a full data segment
    frame = bytearray(frames[k])
    frame[len(frame) - 10] ^= 0x01
    _fix_tcp_checksum(frame)
    data = bytearray(path.read_bytes())
    off = 24 + sum(16 + len(f) for f in frames[:k]) + 16
    data[off : off + len(frame)] = frame
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(data)
    tcp = _fields(bad, ["tcp.checksum.status"], "tcp")["tcp.checksum.status"]
    assert all(v == [CHECKSUM_GOOD] for v in tcp)  # the change is the digest's to find
    found = _fields(bad, ["nvme-tcp.ddgst.status"], "nvme-tcp")["nvme-tcp.ddgst.status"]
    status = [s for v in found for s in v]
    assert status.count(CHECKSUM_BAD) == 1 and status.count(CHECKSUM_GOOD) == len(status) - 1
