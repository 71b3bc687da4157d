"""NVMe-oF over RoCEv2 captures read by tshark (Wireshark's InfiniBand, nvme-rdma and nvme
dissectors) as NVMe over Fabrics, and counted against what the run did.

One run of storage_qd1 in mode nvmeof_rdma, a mix of 16 KiB reads and writes with a keep-alive
timeout short enough for Keep Alive commands on the admin queue, captured at both ends of both
cables. Every I/O is a command capsule (64-byte SQE) by SEND, its data by RDMA WRITE (reads) or
RDMA READ (writes) to the buffer and R_Key its keyed SGL descriptor names, and a response
capsule (16-byte CQE) by SEND; each queue pair is announced by the RDMA-CM exchange whose
private data gives its QID. A second run (scenarios/faults.yaml, mode nvmeof_failover) resets a
controller and reconnects it: new queue pairs with a Fabrics Connect each. Expected values come
from the specifications (NVMe Base 1.4, NVMe-oF 1.1, IBTA Vol. 1 chapter 12 and Annex A11) and
the runs' own tables and metrics, never from earlier output.
"""

from decimal import Decimal
from math import ceil

import pandas as pd
import pytest
from tshark_captures import TSHARK, fields, problems, records, rocev2_icrc, storage_captures

import lfsim
from lfsim.scenario import time_seconds

pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")

BS = 16384
KATO_MS = 1.5  # NvmeofStack.KeepAliveTimeout: a Keep Alive every KATO/2
OVERRIDES = {
    "mode": "nvmeof_rdma",
    "FioJob.rw": "randrw",
    "FioJob.bs": BS,
    "FioJob.runtime": "5ms",
    "NvmeofStack.KeepAliveTimeout": f"{KATO_MS}ms",
}
MTU = 4096  # RdmaNic.PathMtu (checked below)
BLOCK = 512  # the captures' logical block
# IBTA opcodes (RC) and the UD SEND Only that carries MADs.
SEND_ONLY, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY = 0x04, 0x06, 0x07, 0x08, 0x0A
READ_REQUEST, READ_FIRST, READ_MIDDLE, READ_LAST, READ_ONLY = 0x0C, 0x0D, 0x0E, 0x0F, 0x10
UD_SEND_ONLY = 0x64
CM_REQ, CM_REP, CM_RTU = 0x0010, 0x0013, 0x0014
# NVMe opcodes: NVM Write and Read, admin Keep Alive, Fabrics (Connect).
NVME_WRITE, NVME_READ, KEEP_ALIVE, FABRICS = 0x01, 0x02, 0x18, 0x7F
NVMEOF_SERVICE_ID = 0x0000000001061144  # RDMA IP CM, port space TCP, port 4420

FIELDS = [
    "frame.number",
    "frame.time_epoch",
    "ip.src",
    "ip.dst",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.mad.attributeid",
    "infiniband.cm.req.serviceid",
    "infiniband.cm.req.localqpn",
    "infiniband.cm.rep.localqpn",
    "infiniband.cm.req.ip_cm.sip4",
    "infiniband.cm.req.ip_cm.dip4",
    "infiniband.cm.req.ip_cm.private",
    "nvme-rdma.cm.rsp.crqsize",
    "nvme-rdma.cmd.qid",
    "nvme.cmd.opc",
    "nvme.cmd.cid",
    "nvme.cmd.nsid",
    "nvme.cmd.slba",
    "nvme.cmd.nlb",
    "nvme.cmd.sgl1.addr",
    "nvme.cmd.sgl1.len",
    "nvme.cmd.sgl1.key",
    "nvme.fabrics.cmd.opc",
    "nvme.fabrics.cmd.cid",
    "nvme.fabrics.cmd.connect.qid",
    "nvme.cqe.cid",
    "nvme.cqe.sqid",
    "nvme.cqe.status",
    "nvme.cmd_pkt",
    "nvme.fabrics.cmd_pkt",
    "nvme-rdma.unknown_data",
]
STRING_FIELDS = {"frame.time_epoch", "ip.src", "ip.dst", "nvme-rdma.unknown_data"}
STRING_FIELDS |= {f"infiniband.cm.req.ip_cm.{f}" for f in ("sip4", "dip4", "private")}


PREFS = ["-o", "ip.check_checksum:TRUE"]


def _problems(path):
    return problems(path, prefs=PREFS)


def _decode(path) -> pd.DataFrame:
    df = fields(path, FIELDS, prefs=PREFS)
    for f in FIELDS:
        if f not in STRING_FIELDS:
            # -1: the field is absent; tshark writes the Fabrics opcode in hex without "0x".
            base = 16 if f == "nvme.fabrics.cmd.opc" else 0
            df[f] = [int(v, base) if v else -1 for v in df[f]]
    df["t_ns"] = [int(Decimal(v) * 10**9) for v in df["frame.time_epoch"]]
    # The NVMe-oF private data of a ConnectRequest (NVMe-oF 1.1 Figure 54, after the IP CM
    # header; little-endian): RECFMT, QID, HRQSIZE, HSQSIZE. Wireshark 4.0 dissects only the
    # ConnectReply's, but takes the QID of every queue from these bytes.
    private = [bytes.fromhex(v) for v in df["infiniband.cm.req.ip_cm.private"]]
    for k, name in enumerate(("recfmt", "qid", "hrqsize", "hsqsize")):
        df[f"req.{name}"] = [
            int.from_bytes(b[2 * k : 2 * k + 2], "little") if b else -1 for b in private
        ]
    return df.set_index("frame.number", drop=False)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run = storage_captures(tmp_path_factory, OVERRIDES)
    run["frames"] = {label: _decode(p) for label, p in run["path"].items()}
    return run


def _commands(df):
    return df[df["nvme.cmd.opc"].isin([NVME_READ, NVME_WRITE])]


def _keep_alives(r):
    """The Keep Alive commands the run sent: one every KATO/2 from the start, each one the
    only one out (answered within microseconds), while the run lasted."""
    half = KATO_MS / 2 * 1e-3
    end = r.summary["sim_time_s"]
    assert abs(end / half - round(end / half)) > 0.01  # no Keep Alive at the very end
    return int(end // half)


def test_the_run_is_what_the_test_needs(run):
    r = run["result"]
    ios = r.table("ios")
    assert r.metrics["ios_completed"] == r.metrics["ios_submitted"] == len(ios) > 0
    assert r.metrics["ios_in_flight"] == 0 and r.metrics["controller_resets"] == 0
    assert (ios["bytes"] == BS).all() and 0 < ios["read"].sum() < len(ios)
    assert int(r.config["RdmaNic"]["PathMtu"]) == MTU
    assert int(r.config["NvmeofRdmaStack"]["InlineDataSize"]) < BS  # writes by RDMA READ
    # Captures change nothing in the simulation.
    pd.testing.assert_frame_equal(run["probe"].table("ios"), ios)
    assert run["probe"].metrics == r.metrics
    assert _keep_alives(r) >= 2


def test_tshark_decodes_every_frame_without_errors(run):
    for label, path in run["path"].items():
        assert _problems(path) == [], label
        # Every RoCEv2 frame, the capture-only MADs too, carries its ICRC.
        frames = records(path)
        assert len(frames) == len(run["frames"][label])
        for frame in frames:
            icrc = rocev2_icrc(frame)
            assert icrc is not None and icrc[0] == icrc[1], label


def test_the_check_finds_a_capsule_the_model_left_empty(run, tmp_path):
    """The decoding below is not blind: a command capsule whose SQE is zeros again (as the
    model sends it) is no read or write command, and its completion matches nothing."""
    path = run["path"]["h0"]
    df = run["frames"]["h0"]
    first = _commands(df).index[0]
    data = bytearray(path.read_bytes())
    off = 24
    for _ in range(first - 1):
        off += 16 + int.from_bytes(data[off + 8 : off + 12], "little")
    ip = off + 16 + 14
    sqe = ip + 20 + 8 + 12
    data[sqe : sqe + 64] = bytes(64)
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(data)
    got = _decode(bad)
    assert len(_commands(got)) == len(_commands(df)) - 1
    assert (got["nvme.cqe.cid"] >= 0).sum() == (df["nvme.cqe.cid"] >= 0).sum() - 1


def test_each_queue_pair_is_announced_by_its_rdma_cm_exchange(run):
    """ConnectRequest (service ID of NVMe-oF's port, the queue's QID and sizes in the private
    data), ConnectReply (the target's QPN), ReadyToUse, before the queue pair's first frame;
    one I/O queue (QID 1) and the admin queue (QID 0) of the Keep Alives."""
    r = run["result"]
    entries = int(r.config["NvmeofStack"]["QueueSize"])
    for label, df in run["frames"].items():
        mads = df[df["infiniband.bth.opcode"] == UD_SEND_ONLY]
        assert (mads["infiniband.bth.destqp"] == 1).all(), label
        assert list(mads["infiniband.mad.attributeid"]) == [CM_REQ, CM_REP, CM_RTU] * 2, label
        req = mads[mads["infiniband.mad.attributeid"] == CM_REQ]
        rep = mads[mads["infiniband.mad.attributeid"] == CM_REP]
        assert (req["infiniband.cm.req.serviceid"] == NVMEOF_SERVICE_ID).all()
        assert (req["infiniband.cm.req.ip_cm.sip4"] == req["ip.src"]).all()
        assert (req["infiniband.cm.req.ip_cm.dip4"] == req["ip.dst"]).all()
        assert list(req["req.recfmt"]) == [0, 0]
        assert list(req["req.qid"]) == [1, 0], label
        assert list(req["req.hrqsize"]) == [entries, 32]
        assert list(req["req.hsqsize"]) == [entries - 1, 31]
        assert list(rep["nvme-rdma.cm.rsp.crqsize"]) == [entries, 32]
        rc = df[df["infiniband.bth.opcode"] != UD_SEND_ONLY]
        for q, (host_qpn, target_qpn) in enumerate(
            zip(req["infiniband.cm.req.localqpn"], rep["infiniband.cm.rep.localqpn"], strict=True)
        ):
            mine = rc[rc["infiniband.bth.destqp"].isin([host_qpn, target_qpn])]
            assert len(mine) > 0 and mine.index.min() > req.index[q], label
            assert (mine["nvme-rdma.cmd.qid"].isin([-1, 1 - q])).all(), label
        # tshark knew every capsule's queue from the exchange.
        capsules = rc[(rc["nvme.cmd.opc"] >= 0) | (rc["nvme.cqe.cid"] >= 0)]
        assert (capsules["nvme-rdma.cmd.qid"] >= 0).all(), label


def test_command_capsules_are_the_ios_in_order(run):
    """One Read or Write per I/O, in the order the host submitted them (queue depth 1), for
    BS bytes: NLB of 512-byte blocks, a keyed SGL descriptor of BS bytes whose key
    is the host queue pair's R_Key; command identifiers distinct; namespace 1."""
    ios = run["result"].table("ios").sort_values("submit_ns")
    want = [NVME_READ if read else NVME_WRITE for read in ios["read"]]
    for label, df in run["frames"].items():
        cmd = _commands(df)
        assert list(cmd["nvme.cmd.opc"]) == want, label
        # The SQE carries NLB 0's based; Wireshark shows the absolute count.
        assert (cmd["nvme.cmd.nlb"] == BS // BLOCK).all()
        assert (cmd["nvme.cmd.sgl1.len"] == BS).all() and (cmd["nvme.cmd.nsid"] == 1).all()
        assert cmd["nvme.cmd.cid"].is_unique and cmd["nvme.cmd.sgl1.addr"].is_unique
        # The I/O queue's completions go to the host queue pair, whose QPN is the R_Key.
        to_host = df[(df["nvme.cqe.cid"] >= 0) & (df["nvme.cqe.sqid"] == 1)]
        assert set(cmd["nvme.cmd.sgl1.key"]) == set(to_host["infiniband.bth.destqp"])
        assert cmd["nvme.cmd.sgl1.key"].nunique() == 1
        # Consecutive blocks, as the model draws no offsets.
        assert list(cmd["nvme.cmd.slba"]) == [k * BS // BLOCK for k in range(len(cmd))]


def test_every_command_is_completed_once_with_success(run):
    ios = run["result"].table("ios")
    for label, df in run["frames"].items():
        cmd = _commands(df)
        cqe = df[(df["nvme.cqe.cid"] >= 0) & (df["nvme.cqe.sqid"] == 1)]
        assert len(cqe) == len(ios), label
        assert (cqe["nvme.cqe.status"] == 0).all()
        # tshark paired each CQE with its command (in one pass, as here; a command's link to
        # its CQE would need a second).
        assert list(cqe["nvme.cmd_pkt"]) == list(cmd.index)
        assert list(cqe["nvme.cqe.cid"]) == list(cmd["nvme.cmd.cid"])


def test_data_moves_by_rdma_to_the_buffer_each_command_named(run):
    """A read's data is the target's RDMA WRITE (First, Middles, Last: BS / MTU packets) into
    the command's buffer with its R_Key and length; a write's is the target's RDMA READ
    Request for the same, answered by BS / MTU Read Responses. tshark links every data packet
    to its command."""
    ios = run["result"].table("ios")
    reads, writes = int(ios["read"].sum()), int((ios["read"] == 0).sum())
    n = ceil(BS / MTU)
    for label, df in run["frames"].items():
        ops = df["infiniband.bth.opcode"]
        assert (ops == WRITE_FIRST).sum() == reads and (ops == WRITE_ONLY).sum() == 0
        assert (ops == WRITE_MIDDLE).sum() == reads * (n - 2) and (ops == WRITE_LAST).sum() == reads
        assert (ops == READ_REQUEST).sum() == writes
        assert (ops == READ_FIRST).sum() == (ops == READ_LAST).sum() == writes
        assert (ops == READ_MIDDLE).sum() == writes * (n - 2)
        cmd = _commands(df)
        for op, nvme in ((WRITE_FIRST, NVME_READ), (READ_REQUEST, NVME_WRITE)):
            first = df[ops == op]
            named = cmd.loc[first["nvme.fabrics.cmd_pkt"]]  # tshark's "Fabric Cmd in" link
            assert (named["nvme.cmd.opc"] == nvme).all(), label
            assert list(first["infiniband.reth.va"]) == list(named["nvme.cmd.sgl1.addr"])
            assert list(first["infiniband.reth.r_key"]) == list(named["nvme.cmd.sgl1.key"])
            assert (first["infiniband.reth.dmalen"] == BS).all()
        data = df[
            ops.isin([WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, READ_FIRST, READ_MIDDLE, READ_LAST])
        ]
        assert data["nvme.fabrics.cmd_pkt"].isin(cmd.index).all(), label
        assert (df["nvme-rdma.unknown_data"] == "").all(), label


def test_keep_alives_go_on_the_admin_queue(run):
    r = run["result"]
    for label, df in run["frames"].items():
        ka = df[df["nvme.cmd.opc"] == KEEP_ALIVE]
        assert len(ka) == _keep_alives(r), label
        assert (ka["nvme-rdma.cmd.qid"] == 0).all()
        cqe = df[(df["nvme.cqe.cid"] >= 0) & (df["nvme.cqe.sqid"] == 0)]
        assert list(cqe["nvme.cmd_pkt"]) == list(ka.index)
        assert (cqe["nvme.cqe.status"] == 0).all()


@pytest.fixture(scope="module")
def reconnect(tmp_path_factory):
    """h1's link to fabric A is down from 2 to 8 ms: its controller is reset, and reconnect
    tries make new queue pairs, each opened with a Fabrics Connect, until one gets through."""
    r = lfsim.run(
        "faults",
        {"mode": "nvmeof_failover"},
        out=tmp_path_factory.mktemp("reconnect") / "o",
        pcap="h1/A",
    )
    return r, _decode(r.pcap_files[0]), r.pcap_files[0]


def test_a_reconnect_shows_new_queue_pairs_and_their_fabrics_connect(reconnect):
    r, df, path = reconnect
    m = r.metrics
    assert m["controller_resets"] == 1 and m["controllers_reconnected"] == 1
    assert m["reconnect_tries"] >= 2
    assert _problems(path) == []
    req = df[df["infiniband.mad.attributeid"] == CM_REQ]
    queues = (req["t_ns"] == req["t_ns"].iloc[0]).sum()  # opened at the start
    assert len(req) == queues * (1 + m["reconnect_tries"])
    # One Connect per new queue pair (RC resends it until its retries run out: distinct
    # PSNs), for the queue its exchange named; the last try's are answered.
    connect = df[df["nvme.fabrics.cmd.opc"] == FABRICS].drop_duplicates(
        ["infiniband.bth.destqp", "infiniband.bth.psn"]
    )
    assert len(connect) == queues * m["reconnect_tries"]
    assert set(connect["nvme.fabrics.cmd.connect.qid"]) == set(req["req.qid"])
    assert set(connect["nvme-rdma.cmd.qid"]) == set(connect["nvme.fabrics.cmd.connect.qid"])
    answered = df[df["nvme.fabrics.cmd_pkt"].isin(connect.index)]  # "Fabric Cmd in"
    assert len(answered) == queues * m["controllers_reconnected"]
    assert (answered["t_ns"] > time_seconds("8ms") * 1e9).all()  # after A is back
