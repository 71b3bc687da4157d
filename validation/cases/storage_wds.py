"""Storage cases of seed 004 (WDS 2.0, NVMe-oF over RoCEv2): QD1 latencies and the PCIe-bound
single-volume peak."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import yaml

from lfsim.paths import scenarios_dir
from lfsim.scenario import time_seconds
from lfsim.validate import Case, Row, read_measured

SCENARIO = "wds_qd1"  # scenarios/wds_qd1.yaml: the calibrated values and their sources
MIB = 1024 * 1024

# ---- QD1 ---------------------------------------------------------------------------------------

POINTS = [  # (mode of wds_qd1.yaml, bs, rw)
    ("randread_4k", "4k", "randread"),
    ("randwrite_4k", "4k", "randwrite"),
    ("randread_8k", "8k", "randread"),
    ("randwrite_8k", "8k", "randwrite"),
]
CALIBRATION = "randread_4k"
SOFTWARE_PASSES_PER_READ = 4  # client submit + completion, target command + completion


def _qd1_measured(bs: str, rw: str) -> float:
    m = read_measured("wds_nvmeof_roce_fio")
    sel = m[(m["system"] == "WDS") & (m["scope"] == "qd1") & (m["bs"] == bs) & (m["rw"] == rw)]
    if len(sel) != 1:
        raise ValueError(f"wds_nvmeof_roce_fio.csv: expected one qd1 row for {rw} {bs}")
    return float(sel["lat_us"].iloc[0])


def _lat(r, rw: str) -> float:
    return r.metrics[("read" if rw == "randread" else "write") + "_lat_mean_us"]


def _qd1(ctx):
    rows, sims, meas = [], [], []
    for mode, bs, rw in POINTS:
        r = ctx.run(SCENARIO, {"mode": mode})
        sim, m = _lat(r, rw), _qd1_measured(bs, rw)
        sims.append(sim)
        meas.append(m)
        calibrated = mode == CALIBRATION
        rows.append(
            Row(
                f"{bs} {rw} QD1 mean latency",
                "us",
                m,
                sim,
                0.01 if calibrated else 0.10,
                evidence="calibrated" if calibrated else "predicted",
                point=f"wds_nvmeof_roce_fio:WDS qd1 {bs} {rw}",
            )
        )
        if mode == CALIBRATION:
            # The scenario's software time t (TargetDelay) must solve lat(t) = measured: the
            # four passes are pure delays in series, so d lat / d t = 4.
            with open(scenarios_dir() / f"{SCENARIO}.yaml", encoding="utf-8") as f:
                t = time_seconds(yaml.safe_load(f)["workload"]["fio"]["TargetDelay"]) * 1e6
            solved = t + (m - sim) / SOFTWARE_PASSES_PER_READ
            rows.append(
                Row(
                    "TargetDelay in wds_qd1.yaml solves the 4k randread calibration (us)",
                    "us",
                    None,
                    solved,
                    kind="shape",
                    passed=abs(solved - t) < 0.005,
                    criterion=f"|{solved:.4f} - {t:.4f}| < 0.005",
                    evidence="consistency",
                )
            )
    labels = [f"{bs}\n{rw}" for _, bs, rw in POINTS]
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.bar(x - 0.2, meas, 0.4, color="k", label="measured (fio 3.7, seed 004 test 1)")
    ax.bar(x + 0.2, sims, 0.4, label="lfsim (calibrated on 4k randread only)")
    for xi, s, mm in zip(x, sims, meas, strict=True):
        ax.text(xi + 0.2, s + 1, f"{(s / mm - 1) * 100:+.1f}%", ha="center", fontsize=8)
    ax.set_xticks(x, labels)
    ax.set_ylabel("QD1 mean latency (us)")
    ax.set_ylim(0, max(sims + meas) * 1.2)
    ax.set_title("Seed 004: WDS NVMe-oF/RoCEv2, QD1, 3-replica writes, 100GbE", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(ctx.plot_path("latency"), dpi=110)
    plt.close(fig)
    return rows


# The client's software as the kernel's published costs instead of the calibrated 2t: HostCpu
# on, NvmeofRdmaStack's sourced SubmitCpu and CompletionCpu and libaio's (validation/cases/
# host_cpu.py), its Layers the RNIC's own time only (an ASSUMPTION, 500 ns as in
# scenarios/san_seed000.yaml). The targets keep TargetDelay and ReplicaDelay (targets have no
# CPU model): t still comes from the 4k randread, which is therefore not a prediction here.
SOURCED = {"HostCpu.Enabled": True, "NvmeofRdmaStack.Layers": "rnic:500ns"}


def _qd1_sourced(ctx):
    rows = []
    for mode, bs, rw in POINTS:
        old = _lat(ctx.run(SCENARIO, {"mode": mode}), rw)
        r = ctx.run(SCENARIO, {"mode": mode, **SOURCED})
        sim, m = _lat(r, rw), _qd1_measured(bs, rw)
        cpu = r.metrics["cpu_us_per_io"]
        why = (
            f"with the per-layer figure ({old:.1f} us) it was within 10 %. WDS's client is not "
            f"the kernel's NVMe/RDMA initiator whose published cost is {cpu:.2f} us per I/O "
            "(libaio and Intel's NVMe stack figure): the calibrated client time 2t = 28.6 us "
            "is ~25 us of software no source describes (WDS 2.0's volume and replication "
            "client), so the sourced costs leave it out"
        )
        common = dict(unit="us", measured=m, simulated=sim, tolerance=0.10)
        if mode == CALIBRATION:
            rows.append(
                Row(
                    f"{bs} {rw} QD1 mean latency, the kernel's sourced CPU costs",
                    **common,
                    evidence="reported",
                    explanation="TargetDelay's t was solved on this point; " + why,
                )
            )
            continue
        rows.append(
            Row(
                f"{bs} {rw} QD1 mean latency, the kernel's sourced CPU costs",
                **common,
                evidence="predicted",
                point=f"wds_nvmeof_roce_fio:WDS qd1 {bs} {rw}",
                known_deviation=why,
            )
        )
    return rows


# ---- link-bound peak ---------------------------------------------------------------------------

# PCIe base spec constants as public sources document them (written here, not taken from the
# model): gen3 = 8 GT/s per lane, 128b/130b coding; per TLP a 4-DW memory-write header (16 B,
# 64-bit address) + 8 B of framing, sequence number and LCRC; Max_Payload_Size 256.
GEN3_X8_BYTES_PER_S = 8e9 * 8 * 128 / 130 / 8  # 7.8769e9 B/s after coding
TLP_OVERHEAD = 16 + 8
MPS = 256
BS = 4096
COMPLETION = 16  # NVMe completion queue entry, by SEND


def _tlp_bytes(payload: int) -> int:
    return payload + -(-payload // MPS) * TLP_OVERHEAD


# Per 4k read the client's NIC writes the data (RDMA WRITE) and the completion (SEND) to host
# memory: 4096 + 16 payload bytes in 16 + 1 TLPs.
PCIE_BOUND_IOPS = GEN3_X8_BYTES_PER_S / (_tlp_bytes(BS) + _tlp_bytes(COMPLETION))  # 1.7427 M
# 100GbE, per I/O on the client's downlink (RoCEv2 header constants as in roce.py: 82 B per
# packet with preamble, FCS and gap): the data packet (+ RETH 16), the completion SEND and the
# ACK of the client's command capsule (AETH 4, no payload).
PACKET_OVERHEAD = 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12
ETH_PER_IO = (BS + PACKET_OVERHEAD + 16) + (COMPLETION + PACKET_OVERHEAD) + (4 + PACKET_OVERHEAD)
ETH_BOUND_IOPS = 100e9 / 8 / ETH_PER_IO  # 2.855 M

RAMP, RUNTIME = 2e-3, 6e-3


def _peak_run(ctx, gen: int, lanes: int):
    # One client, its NIC in a gen3 x8 (or gen4 x16) slot; 32 jobs x iodepth 32 as measured.
    # The drives' ceiling is lifted (no MaxIops, unlimited parallelism) and the target stands
    # for the three storage nodes, so only the client's host interface is limited
    # (NvmeofRdmaStack.TargetHostInterface false). The device time gets a spread (LogNormal,
    # sd 6 us; the mean stays the spec's 6 us): with constant delays the 1024 I/Os move in
    # lockstep batches and the counted rate depends on where the window cuts a batch.
    return ctx.run(
        SCENARIO,
        {
            "mode": "randread_4k",
            "topology.Hosts": 2,  # the client and the target, no replica hosts
            "NvmeofRdmaStack.ReplicaHosts": "",
            "NvmeofRdmaStack.TargetHostInterface": False,
            "FioJob.numjobs": 32,
            "FioJob.iodepth": 32,
            "FioJob.ramp_time": f"{RAMP * 1e3:g}ms",
            "FioJob.runtime": f"{RUNTIME * 1e3:g}ms",
            "BlockTarget.ReadDistribution": "LogNormal",
            "BlockTarget.ReadServiceStddev": "6us",
            "RdmaNic.PcieGeneration": gen,
            "RdmaNic.PcieLanes": lanes,
        },
    )


def _client_pauses(r) -> float:
    """PFC frames the client's port h0 sent: its NIC's host interface pausing the fabric."""
    ports = r.table("ports").set_index("label")
    return float(ports.loc["h0", "pause_tx"])


def _steady_iops(r) -> float:
    """Completions per second between ramp_time and runtime (not the drain after it)."""
    done = r.table("ios")["complete_ns"].to_numpy() * 1e-9
    return float(((done >= RAMP) & (done < RUNTIME)).sum() / (RUNTIME - RAMP))


def _peak_measured() -> tuple[float, float]:
    m = read_measured("wds_link_limits")
    sel = m[m["test"] == "peak_single_volume"]
    if len(sel) != 1:
        raise ValueError("wds_link_limits.csv: expected one peak_single_volume row")
    return float(sel["iops"].iloc[0]), float(sel["bw_MiBps"].iloc[0])


def _peak(ctx):
    iops_meas, mibps_meas = _peak_measured()
    r3 = _peak_run(ctx, 3, 8)
    r4 = _peak_run(ctx, 4, 16)
    sim3, sim4 = _steady_iops(r3), _steady_iops(r4)
    rows = [
        Row(
            f"4k randread, 1 volume, 100GbE NIC in PCIe 3.0 x8 (measured {iops_meas / 1e6:.3f} M "
            f"x 4096 B = {iops_meas * BS / 1e9:.2f} GB/s > {GEN3_X8_BYTES_PER_S / 1e9:.3f} GB/s, "
            "the raw gen3 x8 link after 128b/130b: beyond the stated link; expected PCIe-bound, "
            "at most 10 % below the measurement)",
            "IOPS",
            iops_meas,
            sim3,
            0.10,
            evidence="predicted",
            point="wds_link_limits:peak_single_volume",
        ),
        Row(
            "same run: simulated / PCIe gen3 x8 closed form (TLP overhead) - 1",
            "",
            None,
            sim3 / PCIE_BOUND_IOPS - 1,
            kind="shape",
            passed=abs(sim3 / PCIE_BOUND_IOPS - 1) < 0.01,
            criterion=f"|.| < 1 % of {PCIE_BOUND_IOPS / 1e6:.4f} M",
            evidence="closed_form",
        ),
        Row(
            "same run: PFC from the client NIC, no drop (PAUSE frames, NIC drops)",
            "",
            None,
            _client_pauses(r3),
            kind="shape",
            passed=_client_pauses(r3) > 0 and r3.metrics["drops_nic_buffer"] == 0,
            criterion="PAUSE > 0 and 0 drops",
            evidence="consistency",
        ),
        Row(
            "NIC in PCIe 4.0 x16: simulated / 100GbE closed form - 1 (Ethernet-bound)",
            "",
            None,
            sim4 / ETH_BOUND_IOPS - 1,
            kind="shape",
            passed=abs(sim4 / ETH_BOUND_IOPS - 1) < 0.03 and _client_pauses(r4) == 0,
            criterion=f"|.| < 3 % of {ETH_BOUND_IOPS / 1e6:.4f} M, no PAUSE from the client",
            evidence="closed_form",
        ),
    ]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    names = ["measured\n(PCIe3 x8)", "lfsim\nPCIe3 x8", "lfsim\nPCIe4 x16"]
    vals = [iops_meas / 1e6, sim3 / 1e6, sim4 / 1e6]
    ax.bar(names, vals, color=["k", "C0", "C1"])
    ax.axhline(PCIE_BOUND_IOPS / 1e6, ls=":", color="C0", label="gen3 x8, TLP overhead")
    ax.axhline(GEN3_X8_BYTES_PER_S / BS / 1e6, ls="--", color="grey", label="gen3 x8 raw / 4096")
    ax.axhline(ETH_BOUND_IOPS / 1e6, ls=":", color="C1", label="100GbE closed form")
    ax.set_ylabel("4k randread (M IOPS)")
    ax.set_title("Seed 004 test 2: one volume, one client NIC", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_ylim(0, ETH_BOUND_IOPS / 1e6 * 1.25)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("iops"), dpi=110)
    plt.close(fig)
    return rows


CASES = [
    Case(
        "storage_wds_qd1_seed004",
        source="wds_nvmeof_roce_fio.csv rows WDS qd1 4k/8k randread/randwrite (seed 004 test 1, "
        "table (1) single-volume latency; fio 3.7 lat in us)",
        note="Calibrated on the 4k randread latency (65 us) ONLY: the software time per pass "
        "through a node's storage stack, t = 14.316 us, assuming every pass costs the same "
        "(client: 2 passes = NvmeofRdmaStack.Layers 2t; target: TargetDelay t before the device "
        "and t before the completion; replica nodes run the same software: ReplicaDelay t). Device "
        "times are the Optane P5800X spec (read < 6 us, writes assumed the same; 8k adds 4 KiB "
        "at the drive's 7.2/6.2 GB/s), the network is simulated (100GbE, one switch); values and "
        "sources in scenarios/wds_qd1.yaml. Writes then cost the RDMA READ of the data, the "
        "forward to 2 replicas and 2t of replica software more than reads. Not modelled: CPU "
        "contention, fio's own time between I/Os (why fio's QD1 IOPS are below 1/lat), media "
        "differences between 4k and 8k beyond the transfer.",
        evaluate=_qd1,
    ),
    Case(
        "storage_wds_qd1_seed004_host_cpu",
        source="as storage_wds_qd1_seed004",
        note="The per-layer figure replaced by the stacks' sourced CPU costs (HostCpu): the "
        "client's software is the kernel NVMe/RDMA initiator's published cost instead of the "
        "2t solved on the 4k randread; the targets keep t.",
        evaluate=_qd1_sourced,
    ),
    Case(
        "storage_wds_pcie_peak_seed004",
        source="wds_link_limits.csv row peak_single_volume (seed 004 test 2, section 3.3.1: "
        "1 volume 4k randread, iodepth 32 x 32 jobs, 1.936 M IOPS, 7563 MiB/s)",
        note="Nothing fitted to this point: software times from wds_qd1.yaml, the NIC's host "
        "interface from the PCIe base spec (gen3 x8: 8 GT/s x 8 x 128/130; 24 B per 256-B "
        "memory-write TLP). The drives' ceiling is lifted so that the client NIC bounds the "
        "run; the same run with a PCIe 4.0 x16 NIC is Ethernet-bound. Measured throughput "
        "exceeds what PCIe 3.0 x8 can carry at all: 1.936 M x 4096 B = 7.93 GB/s against 8 GT/s "
        "x 8 x 128/130 = 7.877 GB/s raw, so the criterion (issue 18) is that the simulation is "
        "PCIe-bound (the closed-form row) and within 10 % below the measured value. Either the "
        "NIC's host link was wider or faster than stated (the clients were Ice Lake Xeons with "
        "PCIe 4.0) or the reported figure is not what the link carried.",
        evaluate=_peak,
    ),
]
