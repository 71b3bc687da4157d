"""RoCEv2 cases: the 25GbE link-bound NVMe-oF results of seed 004, test 3 (WDS + QAT, QAT off)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from lfsim.validate import Case, Row, read_measured

KIB = 1024
MIB = 1024 * 1024
LINE_BYTES_PER_S = 25e9 / 8  # 25GbE MAC data rate (64b/66b coding is below it)
MTU = 4096  # RoCE path MTU: payload bytes per packet

# Bytes on the wire per RoCEv2 packet besides its payload, from the standards rather than the
# model: Ethernet header 14 (802.3), IPv4 20 (RFC 791), UDP 8 (RFC 768), BTH 12 and ICRC 4
# (IBTA vol. 1 / RoCEv2 annex A17), FCS 4, preamble+SFD 8 and the minimum inter-frame gap 12.
PACKET_OVERHEAD = 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12  # 82 -> a full packet is 4178 B of line
RETH = 16  # on the first (or only) packet of an RDMA WRITE
AETH = 4  # on the first and last (or only) packet of an RDMA READ response
FULL_PACKET_CEILING = LINE_BYTES_PER_S * MTU / (MTU + PACKET_OVERHEAD) / MIB  # 2921.8 MiB/s

# One QP on one 25GbE link; a few messages in flight keep the link busy through each message's
# round trip, and the first millisecond (connection start, first messages) is left out. 10 ms
# of counted time puts the packet granularity of the goodput (4 KiB / 10 ms) at 0.013 %.
BASE = {
    "fabric": "roce",
    "description": "seed 004 test 3: one client, 25GbE, NVMe-oF over RoCEv2 as its RDMA traffic",
    "seed": 1,
    "stop_time": "11ms",
    # Client and storage nodes on one switch: the client h0, the storage nodes h1, h2, ...
    "topology": {"generator": "Star", "HostSpeed": "25GbE"},
    "Report": {"Warmup": "1ms"},
    "RdmaNic": {"PathMtu": MTU},
}

BS = {"128k": 128 * KIB, "512k": 512 * KIB, "1024k": 1024 * KIB}


def wire_ceiling_mibps(message: int, extension_bytes: int) -> float:
    """Goodput of a link kept busy by messages of `message` bytes, MiB/s: payload over line bytes,
    with the per-message extension headers (RETH / AETH) counted once per message."""
    packets = -(-message // MTU)
    line = message + packets * PACKET_OVERHEAD + extension_bytes
    return LINE_BYTES_PER_S * message / line / MIB


def _scenario(operation: str, pattern: str, storage_nodes: int, message: int) -> dict:
    """The client h0 and `storage_nodes` storage nodes: an Incast (every storage node to h0)
    or an Outcast (h0 to every storage node) of back-to-back messages, 4 in flight per flow."""
    sc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in BASE.items()}
    sc["topology"]["Hosts"] = storage_nodes + 1
    nodes = f"h1-h{storage_nodes}" if storage_nodes > 1 else "h1"
    ends = {"Hosts": nodes, "Destinations": "h0"}
    if pattern == "Outcast":
        ends = {"Hosts": "h0", "Destinations": nodes}
    sc["workload"] = {
        "io": {
            "pattern": pattern,
            **ends,
            "Operation": operation,
            "MessageSize": message,
            "Messages": 0,
            "QueueDepth": 4,
        }
    }
    return sc


def _measured(rw: str, bs: str) -> float:
    m = read_measured("wds_link_limits")
    sel = m[(m["test"] == "rate_limited_25g") & (m["rw"] == rw) & (m["bs"] == bs)]
    if len(sel) != 1:
        raise ValueError(f"wds_link_limits.csv: expected one row for {rw} {bs}, got {len(sel)}")
    return float(sel["bw_MiBps"].iloc[0])


def _gbps_to_mibps(gbps: float) -> float:
    return gbps * 1e9 / 8 / MIB


def _figure(ctx, title: str, sizes, measured, simulated, ceiling, ceiling_label: str) -> None:
    kib = [BS[b] / KIB for b in sizes]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(kib, simulated, "o-", label="lfsim")
    ax.plot(kib, measured, "ks", label="measured (fio, seed 004 test 3)")
    ax.plot(kib, ceiling, ":", color="grey", label=ceiling_label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(kib, [f"{int(k)}k" for k in kib])
    lo = min(min(measured), min(simulated))
    ax.set_ylim(lo * 0.99, max(ceiling) * 1.005)
    ax.set_xlabel("block size")
    ax.set_ylabel("goodput (MiB/s)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("goodput"), dpi=110)
    plt.close(fig)


def _read(ctx):
    rows, sims, meas, ceil = [], [], [], []
    for bs, size in BS.items():
        r = ctx.run(_scenario("Read", "Incast", 1, size))
        sim = _gbps_to_mibps(r.metrics["total_goodput_Gbps"])
        ceiling = wire_ceiling_mibps(size, 2 * AETH)
        sims.append(sim)
        ceil.append(ceiling)
        meas.append(_measured("randread", bs))
        rows.append(
            Row(
                f"randread {bs}, one QP, RDMA READ goodput",
                "MiB/s",
                meas[-1],
                sim,
                0.01,
                evidence="predicted",
                point=f"wds_link_limits:rate_limited_25g randread {bs}",
            )
        )
        if bs == "128k":  # the sequential row: the same traffic on the wire
            seq = _measured("read", bs)
            rows.append(
                Row(
                    f"read {bs} (sequential), same simulation",
                    "MiB/s",
                    seq,
                    sim,
                    0.01,
                    evidence="predicted",
                    point=f"wds_link_limits:rate_limited_25g read {bs}",
                )
            )
    worst = max(abs(s / c - 1) for s, c in zip(sims, ceil, strict=True))
    rows.append(
        Row(
            "largest |simulated / wire arithmetic - 1| over the three sizes",
            "",
            None,
            worst,
            kind="shape",
            passed=worst < 0.001,
            criterion="< 0.1 %",
            evidence="closed_form",
        )
    )
    spread = (max(sims) - min(sims)) / (sum(sims) / len(sims))
    rows.append(
        Row(
            "goodput flat in block size (max-min)/mean, as measured (2913 at all three)",
            "",
            None,
            spread,
            kind="shape",
            passed=spread < 0.002,
            criterion="< 0.2 %",
            evidence="consistency",
        )
    )
    _figure(
        ctx,
        "Seed 004 test 3: 25GbE, RDMA READ, one QP",
        list(BS),
        meas,
        sims,
        ceil,
        "wire arithmetic: 25e9/8 x 4096/4178",
    )
    return rows


def _write(ctx):
    rows, sims, meas, ceil = [], [], [], []
    shares = []
    for bs, size in BS.items():
        r = ctx.run(_scenario("Write", "Outcast", 2, size))
        per_replica = _gbps_to_mibps(r.metrics["total_goodput_Gbps"]) / 2
        flows = r.table("flows")["goodput_Gbps"]
        shares.append(float((flows.max() - flows.min()) / flows.mean()))
        ceiling = wire_ceiling_mibps(size, RETH) / 2
        sims.append(per_replica)
        ceil.append(ceiling)
        meas.append(_measured("randwrite", bs))
        rows.append(
            Row(
                f"randwrite {bs}, client write goodput (2 replicas on one link)",
                "MiB/s",
                meas[-1],
                per_replica,
                0.01,
                evidence="predicted",
                point=f"wds_link_limits:rate_limited_25g randwrite {bs}",
            )
        )
        if bs == "128k":
            seq = _measured("write", bs)
            rows.append(
                Row(
                    f"write {bs} (sequential), same simulation",
                    "MiB/s",
                    seq,
                    per_replica,
                    0.01,
                    evidence="predicted",
                    point=f"wds_link_limits:rate_limited_25g write {bs}",
                )
            )
    worst = max(abs(s / c - 1) for s, c in zip(sims, ceil, strict=True))
    rows.append(
        Row(
            "largest |simulated / (wire arithmetic / 2) - 1| over the three sizes",
            "",
            None,
            worst,
            kind="shape",
            passed=worst < 0.001,
            criterion="< 0.1 %",
            evidence="closed_form",
        )
    )
    unequal = max(shares)
    rows.append(
        Row(
            "the two replicas share the client link equally (max-min)/mean",
            "",
            None,
            unequal,
            kind="shape",
            passed=unequal < 0.005,
            criterion="< 0.5 %",
            evidence="consistency",
        )
    )
    _figure(
        ctx,
        "Seed 004 test 3: 25GbE, RDMA WRITE to 2 replicas (per replica)",
        list(BS),
        meas,
        sims,
        ceil,
        "wire arithmetic: 25e9/8 x 4096/4178 / 2",
    )
    return rows


_SOURCE = (
    "wds_link_limits.csv rows rate_limited_25g (seed 004 section 3.4, test 3: QAT card with WDS, "
    "100GbE limited to 25GbE; table 3.4.3, column QAT compression off; fio 3.7 BW in MiB/s)"
)

_ARITHMETIC = (
    "Nothing calibrated: the link rate (25GbE), the path MTU (4096) and the header sizes give "
    "the result. Per 4096-B packet the wire carries Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + "
    "ICRC 4 + FCS 4 + preamble/SFD 8 + inter-frame gap 12 = 82 B besides the payload (plus "
    "RETH 16 B on the first packet of an RDMA WRITE, AETH 4 B on the first and last packet of "
    "an RDMA READ response), so a busy link delivers 25e9/8 x 4096/4178 = 3.0637e9 B/s = "
    f"{FULL_PACKET_CEILING:.1f} MiB/s of payload (the RETH/AETH bytes cost 0.001-0.012 % more). "
)

_MISSING = (
    "What the model does not have: the storage software (WDS, fio, the drives), NVMe-oF itself "
    "(command and response capsules, the target pulling write data with RDMA READ and pushing "
    "read data with RDMA WRITE instead of the client's READ/WRITE used here; that is issue 5), "
    "and the way the testbed limited the 100GbE links to 25GbE (assumed here to be an exact "
    "25 Gb/s MAC rate)."
)

CASES = [
    Case(
        "roce_wds_25g_read_seed004",
        source=_SOURCE + ": randread 128k/512k/1024k and read 128k, 2913 MiB/s",
        note=_ARITHMETIC
        + "The measured reads (one client reading from the storage nodes over its one 25GbE "
        "link; simulated as one QP, host 0 reading 128k/512k/1M messages from host 1 through "
        "one switch, 4 in flight) are 2913 MiB/s at every block size, 0.3 % under this ceiling; "
        "the model reaches the ceiling, so it is 0.3 % high. The residual is the same at 128k "
        "and 1M, so it is not a per-I/O cost (a per-I/O cost of x bytes would be 8 times larger "
        "at 128k than at 1M): it matches about 12.5 more line bytes per 4 KiB packet or a link "
        "limited to 24.93 Gb/s (25 x 2913/2921.7), and these data cannot tell which. " + _MISSING,
        evaluate=_read,
    ),
    Case(
        "roce_wds_25g_write2rep_seed004",
        source=_SOURCE + ": randwrite 128k/512k/1024k 1456 MiB/s and write 128k 1457 MiB/s",
        note=_ARITHMETIC
        + "Writes go to 2 replicas and the measured write bandwidth is half the read bandwidth, "
        "so the client sends both copies over its one link (client-side replication, as the "
        "halving implies): simulated as host 0 writing to hosts 1 and 2 at once (2 QPs, 4 "
        "messages in flight each); the client-write goodput is the bytes the two replicas "
        "received / 2, whose ceiling is half the above, 1460.7-1460.8 MiB/s. Measured 1456-1457 is "
        "0.25-0.33 % under it, the same residual as the reads; the model reaches the ceiling. "
        + _MISSING,
        evaluate=_write,
    ),
]
