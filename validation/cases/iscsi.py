"""iSCSI case: seed 003 (Guo et al., 2006), iSCSI write response time against size on GbE.

The testbed: Microsoft initiator 1.03 (Windows 2000 SP4) and the UNH target 0.18 (Linux 2.4)
through one gigabit switch, default login keys (MaxBurstLength 262144, MaxOutstandingR2T 1),
Iometer at queue depth 1 on NTFS files, 80 % random, the target writing to an IBM DDYS-T18350N
SCSI disk. Response time includes opening the file. Measured: 4.75 / 4.88 / 7.20 ms for 1k / 4k
/ 64k writes, and 182.29 ms at 512k — "more than 11 times" the 256k value (no 256k number is
given). The paper blames MaxBurstLength: 512 KB needs two bursts.

What the model says (scenarios/iscsi_burst.yaml, ns-3 TCP over a 1 Gb/s link): the second
burst costs one idle round trip (R2T back, Data-Out out), 0.1 ms, and it disappears with
MaxBurstLength 524288 or MaxOutstandingR2T 2 — the paper's mechanism and its remedy. The
measured jump is ~170 ms larger than the disk and the wire explain; the model does not
reproduce that, and the row says so (known deviation).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from lfsim.validate import Case, Row, read_measured

KIB = 1024
SIZES = {"1k": 1 * KIB, "4k": 4 * KIB, "64k": 64 * KIB, "256k": 256 * KIB, "512k": 512 * KIB}
MODES = ("defaults", "max_burst_512k", "max_outstanding_r2t_2")
# Windows 2000 and Linux 2.4 host TCP as far as ns-3 can say it: Nagle on (no TCP_NODELAY),
# delayed ACKs of one per two segments with a 200 ms timer (Windows TcpDelAckTicks 2, Linux's
# TCP_DELACK_MAX), a 1460-byte MSS (Windows 2000 sends no timestamps).
HOSTS_2004 = {
    "TcpSocket.TcpNoDelay": False,
    "TcpSocket.DelAckTimeout": "200ms",
    "TcpSocket.DelAckCount": 2,
    "TcpSocket.SegmentSize": 1460,
}


def _lat_ms(result) -> dict[str, float]:
    m = result.metrics
    by_size = dict(zip(m["size_bytes"], m["write_lat_mean_us"], strict=True))
    return {k: by_size[v] / 1e3 for k, v in SIZES.items()}


def calibrate_disk(meas_1k: float, meas_64k: float, net_1k: float, net_64k: float):
    """Disk (positioning P in s, media rate R in B/s) from two measured writes (ms) and the
    simulated network-only times (ms): t(m) = net(m) + P + m / R at 1k and 64k."""
    r = (SIZES["64k"] - SIZES["1k"]) / ((meas_64k - net_64k) - (meas_1k - net_1k)) * 1e3
    p = (meas_1k - net_1k) / 1e3 - SIZES["1k"] / r
    return p, r


def _disk(p: float, r: float) -> dict:
    return {
        "IscsiBurstScenario.DiskPositioning": f"{round(p * 1e9)}ns",
        "IscsiBurstScenario.DiskRate": f"{round(r * 8)}bps",
    }


def _burst(ctx):
    meas = read_measured("iscsi_vs_cifs_response_time")
    w = meas[meas["op"] == "write"].set_index("size")["iscsi_ms"].astype(float)
    net = {mode: ctx.run("iscsi_burst", {"mode": mode}) for mode in MODES}
    lat = {mode: _lat_ms(r) for mode, r in net.items()}
    rtt_ms = net["defaults"].metrics["nop_rtt_us"] / 1e3
    d = lat["defaults"]
    # 256 KiB more on the wire: 32 Data-Out (8192 data + 48 BHS) in 1448-byte TCP segments,
    # each with PPP 2 + IPv4 20 + TCP 20 + timestamps 12 bytes, at 1 Gb/s.
    wire_256k_ms = (256 * KIB + 32 * 48) * (1448 + 54) / 1448 * 8 / 1e9 * 1e3
    rows = []

    # The protocol: two R2Ts at 512k with the defaults, and one idle round trip between them.
    dm = net["defaults"].metrics
    r2ts = dict(zip(dm["size_bytes"], dm["r2ts"], strict=True))
    rows.append(
        Row(
            "R2Ts per write, defaults: 512k / 256k",
            "",
            None,
            r2ts[SIZES["512k"]] * 10 + r2ts[SIZES["256k"]],
            kind="shape",
            passed=r2ts[SIZES["512k"]] == 2 and r2ts[SIZES["256k"]] == 1,
            criterion="2 and 1 (shown as 21)",
            evidence="consistency",
        )
    )
    extra = (d["512k"] - d["256k"] - wire_256k_ms) / rtt_ms
    rows.append(
        Row(
            "512k - 256k beyond the wire time of 256 KiB, defaults, in NOP round trips",
            "RTT",
            None,
            extra,
            kind="shape",
            passed=0.9 <= extra <= 1.1,
            criterion="0.9..1.1 (one idle round trip)",
            evidence="closed_form",
        )
    )
    for mode, label in (
        ("max_burst_512k", "MaxBurstLength 524288"),
        ("max_outstanding_r2t_2", "MaxOutstandingR2T 2"),
    ):
        saved = (d["512k"] - lat[mode]["512k"]) / rtt_ms
        rows.append(
            Row(
                f"512k: defaults - {label}, in NOP round trips",
                "RTT",
                None,
                saved,
                kind="shape",
                passed=0.9 <= saved <= 1.1,
                criterion="0.9..1.1 (the idle round trip disappears)",
                evidence="closed_form",
            )
        )

    # A 2004 disk behind the target, calibrated on the 1k and 64k writes.
    p, r = calibrate_disk(float(w["1k"]), float(w["64k"]), d["1k"], d["64k"])
    disk = {mode: _lat_ms(ctx.run("iscsi_burst", {"mode": mode, **_disk(p, r)})) for mode in MODES}
    dd = disk["defaults"]
    # 1k and 64k fit by construction (the calibration); 4k is predicted.
    for size in ("1k", "64k"):
        point = f"iscsi_vs_cifs_response_time:write {size}"
        ctx.calibrated("IscsiBurstScenario.DiskPositioning, DiskRate", point)
        rows.append(
            Row(
                f"write {size}, defaults + disk",
                "ms",
                float(w[size]),
                dd[size],
                0.01,
                evidence="calibrated",
                point=point,
            )
        )
    rows.append(
        Row(
            "write 4k, defaults + disk",
            "ms",
            float(w["4k"]),
            dd["4k"],
            0.05,
            evidence="predicted",
            point="iscsi_vs_cifs_response_time:write 4k",
        )
    )
    bound_256k = float(w["512k"]) / 11
    rows.append(
        Row(
            "write 256k, defaults + disk (the text's bound: 512k is > 11x the 256k time)",
            "ms",
            None,
            dd["256k"],
            kind="shape",
            passed=dd["256k"] <= bound_256k,
            criterion=f"<= 182.29 / 11 = {bound_256k:.2f} ms",
            evidence="consistency",
        )
    )
    rows.append(
        Row(
            f"write 512k, defaults + disk (512k / 256k = {dd['512k'] / dd['256k']:.2f}; the text: "
            "> 11)",
            "ms",
            float(w["512k"]),
            dd["512k"],
            0.25,
            evidence="predicted",
            point="iscsi_vs_cifs_response_time:write 512k",
            known_deviation=(
                f"the model's second burst costs one idle round trip ({rtt_ms * 1e3:.0f} us), so "
                f"512k takes {dd['512k']:.1f} ms (disk {r / 1e6:.1f} MB/s: most of it) against "
                "182.29 measured. The ~160 ms excess is the size of one host timer (the 200 ms "
                "delayed-ACK timer of Windows 2000 and Linux 2.4), not of any burst mechanism; "
                "but ns-3's Nagle + 200 ms delayed ACK does not single out 512k: it stalls the "
                "64k write too (measured 7.20 ms), see notebooks/storage_stacks.ipynb. The "
                "criterion is the mechanism (the rows above); the absolute stays a named miss"
            ),
        )
    )

    # The 2004 hosts' TCP as ns-3 has it: an experiment in the figure and the notebook, not a
    # row (issue 18: no fit).
    hosts = _lat_ms(ctx.run("iscsi_burst", {"mode": "defaults", **_disk(p, r), **HOSTS_2004}))
    _figure(ctx, w, dd, disk, hosts)
    return rows


def _figure(ctx, w, dd, disk, hosts) -> None:
    x = [SIZES[s] / KIB for s in SIZES]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.plot([SIZES[s] / KIB for s in w.index], w.values, "ks", label="measured (seed 003, Table 2)")
    ax.plot(x, list(dd.values()), "o-", label="lfsim, defaults + disk")
    ax.plot(x, list(disk["max_burst_512k"].values()), "^--", label="lfsim, MaxBurstLength 524288")
    ax.plot(x, list(hosts.values()), "x:", label="lfsim, + Nagle / 200 ms delayed ACK")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(x, list(SIZES))
    ax.set_xlabel("write size")
    ax.set_ylabel("response time (ms)")
    ax.set_title("Seed 003: iSCSI write response time, GbE, QD1", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("response_time"), dpi=110)
    plt.close(fig)


CASES = [
    Case(
        "seed003_iscsi_burst",
        source="iscsi_vs_cifs_response_time.csv, write rows (seed 003 Table 2)",
        note=(
            "calibrated: the target disk (positioning P and media rate R, t = P + bytes / R per "
            "write) on the measured 1k and 64k writes minus the simulated network time (about "
            "4.6 ms and 36 MB/s, plausible for a 10k rpm Ultra160 drive with file-system "
            "overhead); the link's 50 us one way (101.6 us NOP round trip) is assumed, not "
            "measured. Predicted: the two R2Ts at 512k, the idle round trip between them and its "
            "disappearance with MaxBurstLength 524288 or MaxOutstandingR2T 2, the 256k time. Not "
            "reproduced: the size of the measured 512k jump (182 ms)"
        ),
        evaluate=_burst,
    )
]
