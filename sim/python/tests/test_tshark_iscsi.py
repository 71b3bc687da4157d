"""iSCSI captures read by tshark (Wireshark's TCP and iSCSI dissectors, TCP port 3260), and
counted against what the runs did.

One run of storage_qd1 in mode iscsi (ns-3's TCP over lfsim's Ethernet), a mix of 16 KiB reads
and writes captured at both ends of both cables; one where every command times out and is
aborted (ABORT TASK); one of the iscsi_burst fabric (its own point-to-point links, PPP
framing). The PDUs are the model's own bytes; captures add only the IPv4 and TCP checksums,
which tshark checks here. Expected PDU counts come from RFC 7143 (sections 11 and 13: immediate
data, R2Ts of at most MaxBurstLength, data segments of at most MaxRecvDataSegmentLength, the
status in the last Data-In) applied to the runs' own tables and negotiated keys, never from
earlier output.
"""

import struct
from math import ceil

import pandas as pd
import pytest
from tshark_captures import TSHARK, fields, problems, records, storage_captures

import lfsim

pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")

BS = 16384
OVERRIDES = {
    "mode": "iscsi",
    "FioJob.rw": "randrw",
    "FioJob.bs": BS,
    "FioJob.runtime": "5ms",
}
PREFS = ["-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"]
# RFC 7143 section 11.2.1.2 opcodes.
NOP_OUT, SCSI_COMMAND, TMF_REQUEST, LOGIN_REQUEST, DATA_OUT = 0x00, 0x01, 0x02, 0x03, 0x05
NOP_IN, SCSI_RESPONSE, TMF_RESPONSE, LOGIN_RESPONSE, DATA_IN, R2T = (
    0x20,
    0x21,
    0x22,
    0x23,
    0x25,
    0x31,
)
ABORT_TASK, FUNCTION_COMPLETE = 1, 0
READ16, WRITE16 = 0x88, 0x8A
LINKTYPE_ETHERNET, LINKTYPE_PPP = 1, 9
CHECKSUM_GOOD = 1  # tshark's *.checksum.status "Good"


def _problems(path):
    """Frames tshark calls malformed or flags with an expert warning or error (bad checksums
    among them)."""
    return problems(path, prefs=PREFS)


def _fields(path, names, display=None) -> pd.DataFrame:
    """One row per frame (matching `display`), each field as the list of its occurrences."""
    df = fields(path, names, *(["-Y", display] if display else []), prefs=PREFS, every=True)
    for f in names:
        df[f] = [[int(x, 0) for x in v.split(";")] if v else [] for v in df[f]]
    return df


def _pdus(path) -> pd.DataFrame:
    """Every iSCSI PDU tshark found, in order: its opcode and DataSegmentLength (a frame may
    hold several PDUs, and a PDU spanning segments is shown in the frame that completes it).
    tshark does not show the DataSegmentLength of a Task Management Function Response: in a
    frame holding one, every PDU's is -1."""
    df = _fields(path, ["frame.number", "iscsi.opcode", "iscsi.datasegmentlength"], "iscsi")
    rows = []
    for n, ops, dsls in zip(
        df["frame.number"], df["iscsi.opcode"], df["iscsi.datasegmentlength"], strict=True
    ):
        if len(dsls) != len(ops):
            dsls = [-1] * len(ops)
        rows += [(n[0], op, dsl) for op, dsl in zip(ops, dsls, strict=True)]
    return pd.DataFrame(rows, columns=["frame", "opcode", "dsl"])


def _flag(v: list[int]) -> list[bool]:
    return [bool(x) for x in v]


class Session:
    """The keys both ends negotiated (RFC 7143 section 13; the offers of both are the
    IscsiSession section of the resolved scenario)."""

    def __init__(self, cfg: dict):
        self.mrdsl = int(cfg["MaxRecvDataSegmentLength"])
        self.first_burst = int(cfg["FirstBurstLength"])
        self.max_burst = int(cfg["MaxBurstLength"])
        self.immediate = cfg["ImmediateData"] == "true"
        self.initial_r2t = cfg["InitialR2T"] == "true"

    def write(self, edtl: int) -> dict[int, int]:
        """PDUs of a write: the command (with immediate data), unsolicited Data-Out, then R2Ts
        for the rest, each of at most MaxBurstLength and answered by Data-Out of at most
        MaxRecvDataSegmentLength, then the response."""
        imm = min(edtl, self.first_burst, self.mrdsl) if self.immediate else 0
        unsolicited_end = imm if self.initial_r2t else min(self.first_burst, edtl)
        data_out = ceil((unsolicited_end - imm) / self.mrdsl)
        bursts = [
            min(self.max_burst, edtl - off) for off in range(unsolicited_end, edtl, self.max_burst)
        ]
        data_out += sum(ceil(b / self.mrdsl) for b in bursts)
        return {SCSI_COMMAND: 1, R2T: len(bursts), DATA_OUT: data_out, SCSI_RESPONSE: 1}

    def read(self, edtl: int) -> dict[int, int]:
        """A read: the command, then Data-In in sequences of at most MaxBurstLength, each cut
        into PDUs of at most MaxRecvDataSegmentLength; the last one carries the status."""
        seqs = [min(self.max_burst, edtl - off) for off in range(0, edtl, self.max_burst)]
        return {SCSI_COMMAND: 1, DATA_IN: sum(ceil(s / self.mrdsl) for s in seqs)}


def _expected(ios: pd.DataFrame, session: Session, sessions: int) -> dict[int, int]:
    want = {LOGIN_REQUEST: sessions, LOGIN_RESPONSE: sessions}
    for read, size in zip(ios["read"], ios["bytes"], strict=True):
        for op, n in (session.read if read else session.write)(int(size)).items():
            want[op] = want.get(op, 0) + n
    return want


def _linktype(path) -> int:
    return struct.unpack_from("<I", path.read_bytes(), 20)[0]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run = storage_captures(tmp_path_factory, OVERRIDES)
    run["pdus"] = {label: _pdus(p) for label, p in run["path"].items()}
    return run


def test_the_run_is_what_the_test_needs(run):
    r = run["result"]
    ios = r.table("ios")
    assert r.metrics["ios_completed"] == r.metrics["ios_submitted"] == len(ios) > 0
    assert r.metrics["ios_in_flight"] == 0 and r.metrics["ios_aborted"] == 0
    assert (ios["bytes"] == BS).all() and 0 < ios["read"].sum() < len(ios)
    # Captures change nothing in the simulation.
    pd.testing.assert_frame_equal(run["probe"].table("ios"), ios)
    assert run["probe"].metrics == r.metrics


def test_tshark_decodes_every_frame_without_errors_and_checks_every_checksum(run):
    for label, path in run["path"].items():
        assert _linktype(path) == LINKTYPE_ETHERNET
        assert _problems(path) == [], label
        df = _fields(path, ["ip.checksum.status", "tcp.checksum.status", "tcp.dstport"])
        assert len(df) == len(records(path)) > 0
        assert all(v == [CHECKSUM_GOOD] for v in df["ip.checksum.status"]), label
        assert all(v == [CHECKSUM_GOOD] for v in df["tcp.checksum.status"]), label


def test_the_check_finds_a_changed_payload_byte(run, tmp_path):
    """The check above is not blind: one byte of a Data-In changed is a bad TCP checksum."""
    path = run["path"]["h0"]
    frames = records(path)
    k = max(range(len(frames)), key=lambda i: len(frames[i]))  # a full data segment
    data = bytearray(path.read_bytes())
    off = 24 + sum(16 + len(f) for f in frames[:k])
    data[off + 16 + len(frames[k]) - 1] ^= 0x01
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(data)
    assert _problems(bad) == [str(k + 1)]


def test_pdu_counts_follow_from_the_ios_and_the_negotiated_keys(run):
    r = run["result"]
    session = Session(r.config["IscsiSession"])
    want = _expected(r.table("ios"), session, sessions=len(r.table("paths")))
    for label, pdus in run["pdus"].items():
        assert pdus["opcode"].value_counts().to_dict() == want, label
        # Data segments: never above MaxRecvDataSegmentLength, and every byte moved once.
        data = pdus[pdus["opcode"].isin([DATA_IN, DATA_OUT, SCSI_COMMAND])]
        assert (data["dsl"] <= session.mrdsl).all()
        ios = r.table("ios")
        assert pdus[pdus["opcode"] == DATA_IN]["dsl"].sum() == ios[ios["read"] == 1]["bytes"].sum()
        written = pdus[pdus["opcode"].isin([DATA_OUT, SCSI_COMMAND])]["dsl"].sum()
        assert written == ios[ios["read"] == 0]["bytes"].sum()


def test_commands_are_the_ios_in_order_and_reads_end_with_their_status(run):
    ios = run["result"].table("ios").sort_values("submit_ns")
    for label, path in run["path"].items():
        cmd = _fields(
            path,
            [
                "iscsi.scsicommand.R",
                "iscsi.scsicommand.W",
                "iscsi.scsicommand.expecteddatatransferlength",
                "scsi_sbc.opcode",
            ],
            f"iscsi.opcode == {SCSI_COMMAND}",
        )
        assert all(len(v) == 1 for v in cmd["iscsi.scsicommand.R"])  # one command a frame
        reads = [v[0] for v in cmd["iscsi.scsicommand.R"]]
        assert reads == [bool(x) for x in ios["read"]], label
        assert [not w[0] for w in cmd["iscsi.scsicommand.W"]] == reads
        assert all(v == [BS] for v in cmd["iscsi.scsicommand.expecteddatatransferlength"])
        assert [v[0] for v in cmd["scsi_sbc.opcode"]] == [READ16 if x else WRITE16 for x in reads]
        # The status of a read rides in its last Data-In (S bit, GOOD): one per read.
        status = _fields(path, ["iscsi.scsiresponse.status"], "iscsi.scsidata.S == 1")
        assert len(status) == sum(reads)
        assert all(v == [0] for v in status["iscsi.scsiresponse.status"])


@pytest.fixture(scope="module")
def aborted(tmp_path_factory):
    """The device takes 3 ms, the I/O timeout is 1 ms: every command times out while the
    target holds it, and the initiator aborts it (ABORT TASK), which the target answers."""
    overrides = {
        "mode": "iscsi",
        "BlockTarget.ReadServiceTime": "3ms",
        "workload.fio.IoTimeout": "1ms",
        "FioJob.runtime": "10ms",
    }
    r = lfsim.run("storage_qd1", overrides, out=tmp_path_factory.mktemp("abort") / "o", pcap="h0")
    return r, r.pcap_files[0]


def test_abort_task_and_its_response_decode(aborted):
    r, path = aborted
    m = r.metrics
    assert m["ios_aborted"] > 0 and m["ios_completed"] == 0
    assert _problems(path) == []
    pdus = _pdus(path)
    counts = pdus["opcode"].value_counts().to_dict()
    # Each try is a command of its own, aborted by a TMF request and answered.
    assert counts[SCSI_COMMAND] == m["ios_submitted"] + m["ios_retried"]
    assert counts[TMF_REQUEST] == counts[TMF_RESPONSE] == m["ios_aborted"]
    assert set(counts) == {LOGIN_REQUEST, LOGIN_RESPONSE, SCSI_COMMAND, TMF_REQUEST, TMF_RESPONSE}
    cmd = _fields(path, ["iscsi.initiatortasktag"], f"iscsi.opcode == {SCSI_COMMAND}")
    req = _fields(
        path,
        ["iscsi.taskmanfun.function", "iscsi.taskmanfun.referencedtasktag"],
        f"iscsi.opcode == {TMF_REQUEST}",
    )
    rsp = _fields(path, ["iscsi.taskmanfun.response"], f"iscsi.opcode == {TMF_RESPONSE}")
    assert all(v == [ABORT_TASK] for v in req["iscsi.taskmanfun.function"])
    # Each abort names the command before it.
    assert [v[0] for v in req["iscsi.taskmanfun.referencedtasktag"]] == [
        v[0] for v in cmd["iscsi.initiatortasktag"]
    ]
    assert all(v == [FUNCTION_COMPLETE] for v in rsp["iscsi.taskmanfun.response"])


@pytest.fixture(scope="module")
def burst(tmp_path_factory):
    overrides = {"IscsiBurstScenario.Sizes": "65536,524288", "IscsiBurstScenario.IoCount": 3}
    r = lfsim.run("iscsi_burst", overrides, out=tmp_path_factory.mktemp("burst") / "o", pcap="all")
    return r, {p.stem: p for p in r.pcap_files}


def test_iscsi_burst_captures_each_link_with_its_writes(burst):
    """Each size has its own initiator, target and link; the link's capture holds its login,
    IoCount writes (the R2Ts the target sent, as its table counts them) and, on the first
    pair's link, the NOP-Out ping and its NOP-In."""
    r, files = burst
    sizes = [65536, 524288]
    assert sorted(files) == sorted(
        f"{end}{k}" for k in range(len(sizes)) for end in ("initiator", "target")
    )
    session = Session(r.config["IscsiSession"])
    writes = r.table("writes")
    for k, size in enumerate(sizes):
        mine = writes[writes["size_bytes"] == size]
        assert len(mine) == 3
        want = {LOGIN_REQUEST: 1, LOGIN_RESPONSE: 1}
        for op, n in session.write(size).items():
            want[op] = n * len(mine)
        assert want[R2T] == mine["r2ts"].sum()  # the RFC's count is the target's
        if k == 0:
            want[NOP_OUT] = want[NOP_IN] = 1
        for end in ("initiator", "target"):
            path = files[f"{end}{k}"]
            assert _linktype(path) == LINKTYPE_PPP
            assert _problems(path) == [], path.stem
            assert _pdus(path)["opcode"].value_counts().to_dict() == want, path.stem


def test_cli_captures_the_iscsi_stack(cli, tmp_path):
    p = cli(
        "run",
        "storage_qd1",
        "--set",
        "mode=iscsi",
        "--set",
        "FioJob.runtime=1ms",
        "--set",
        "FioJob.ramp_time=0s",
        "--pcap",
        "h1",
        "--out",
        "o",
    )
    assert p.returncode == 0, p.stderr
    assert "packet captures: 1 files in o/pcap" in p.stdout
    f = tmp_path / "o" / "pcap" / "h1.pcap"
    assert _problems(f) == []
    assert {LOGIN_REQUEST, SCSI_COMMAND, DATA_IN} <= set(_pdus(f)["opcode"])
