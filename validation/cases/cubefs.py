"""Seed 002 (CubeFS, RDMA against TCP): 1-job O_DIRECT sequential reads of 4k, 128k and 1M,
QD1, on 100GbE. The same client and server path for both transports, calibrated on the RDMA
4k point only; the transport differences (TCP's copies and socket path, RDMA's zero copy) from
physics, not fitted. Values and sources in scenarios/cubefs_rdma_tcp.yaml."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import yaml

from lfsim.depth import parse_layers
from lfsim.paths import scenarios_dir
from lfsim.scenario import time_seconds
from lfsim.validate import Case, Row, read_measured

SCENARIO = "cubefs_rdma_tcp"
SIZES = [("4k", 4096), ("128k", 131072), ("1M", 1048576)]
CALIBRATION = ("rdma", "4k")
SOFTWARE_PASSES = 4  # client submit + completion, server before the device + before the answer
TOLERANCE = 0.10  # seed 002: "we consider errors within 10 % normal"

_MISSING_PER_KIB = (
    "Within one request the measured RDMA time grows by 1.11 us per KiB from 4k to 128k (114.4 "
    "-> 252.5 us per read); the model's documented per-KiB costs are 0.2 us (two copies at ~10 "
    "GB/s) + 0.08 us (100GbE), so both transports are simulated far faster at 128k and, since a "
    "1M read is eight 128 KiB requests (MaxRequestSize), at 1M. The missing ~0.8 us/KiB is on "
    "the path both transports share (it is in the RDMA time) and no copy rate explains it: "
    "CubeFS's own per-packet work (a CRC of every packet, Go buffers) or the datanode's storage "
    "if the extent was not cached are candidates. Not fitted: that would take a second "
    "calibration point."
)
KNOWN = {
    ("rdma", "128k"): _MISSING_PER_KIB,
    ("rdma", "1M"): _MISSING_PER_KIB,
    ("tcp", "128k"): _MISSING_PER_KIB
    + " TCP's own extra per-KiB time over RDMA's, measured (331.8 - 252.5 - 24.4) / 124 = 0.44 "
    "us/KiB, is also above the model's 0.3 us/KiB (receive path at 42 Gb/s per core + one send "
    "copy).",
    ("tcp", "4k"): "TCP 4k is simulated 10.7 % fast: measured TCP - RDMA at 4k is 24.4 us per "
    "read, the model's socket-path assumption (2.5 us per side per message: 10 us, plus 1.2 us "
    "of copies) gives 11.0 us. Wake-ups of a sleeping receiver cost more over TCP than the "
    "model assumes (the interrupt and wake-up are counted as common to both transports).",
    "rdma split": "the measured RDMA 1M read takes 7.15 times its 128k read, not 8: either "
    "CubeFS's RDMA read path overlaps part of consecutive requests, which the model (each "
    "request after the previous one completes) does not, or run-to-run spread (the seed calls "
    "10 % normal and the TCP ratio is 7.98).",
}
KNOWN[("tcp", "1M")] = KNOWN[("tcp", "128k")]


def _measured() -> dict:
    m = read_measured("cubefs_rdma_vs_tcp_fio")
    sel = m[
        (m["direct"] == 1) & (m["rw"] == "read") & (m["pattern"] == "seq") & (m["threads"] == 1)
    ]
    out = {}
    for name, _ in SIZES:
        row = sel[sel["bs"] == name]
        if len(row) != 1:
            raise ValueError(f"cubefs_rdma_vs_tcp_fio.csv: expected one direct seq read {name} row")
        out[("rdma", name)] = float(row["rdma_MBps"].iloc[0])
        out[("tcp", name)] = float(row["tcp_MBps"].iloc[0])
    return out


def _per_kib_us(layers: str) -> float:
    """Sum of the layers' per-KiB times (us) of a `name:time+time/KiB,...` list."""
    return sum(us for _, us in parse_layers(layers, 1024)) - sum(
        us for _, us in parse_layers(layers, 0)
    )


def _evaluate(ctx):
    meas = _measured()
    with open(scenarios_dir() / f"{SCENARIO}.yaml", encoding="utf-8") as f:
        cfg = yaml.safe_load(f)["workload"]["fio"]
    lat, sim = {}, {}
    for mode in ("rdma", "tcp"):
        for name, bs in SIZES:
            r = ctx.run(SCENARIO, {"mode": mode, "FioJob.bs": bs})
            lat[(mode, name)] = r.metrics["read_lat_mean_us"]
            # QD1 with no time between I/Os: fio's bandwidth is bs / mean latency (MB/s).
            sim[(mode, name)] = bs / r.metrics["read_lat_mean_us"]
    rows = []
    for mode in ("rdma", "tcp"):
        for name, _ in SIZES:
            key = (mode, name)
            if key == CALIBRATION:
                rows.append(
                    Row(
                        f"{mode} {name} read (calibration point)", "MB/s", meas[key], sim[key], 0.01
                    )
                )
                continue
            rows.append(
                Row(
                    f"{mode} {name} read (prediction)",
                    "MB/s",
                    meas[key],
                    sim[key],
                    TOLERANCE,
                    known_deviation=KNOWN.get(key, ""),
                )
            )
    # The scenario's t (TargetDelay) must solve lat(t) = measured at the calibration point:
    # the four passes are pure delays in series, d lat / d t = 4.
    t = time_seconds(cfg["TargetDelay"]) * 1e6
    target = SIZES[0][1] / meas[CALIBRATION]  # us per read
    solved = t + (target - lat[CALIBRATION]) / SOFTWARE_PASSES
    rows.append(
        Row(
            "TargetDelay solves the rdma 4k calibration (us)",
            "us",
            None,
            solved,
            kind="shape",
            passed=abs(solved - t) < 0.002,
            criterion=f"|{solved:.4f} - {t:.4f}| < 0.002",
        )
    )
    # MaxRequestSize: a 1M read is eight 128 KiB requests in series, so its time is about 8x
    # the 128k read's in the model; the measured ratio says whether the client works that way.
    for mode in ("rdma", "tcp"):
        ratio_m = meas[(mode, "128k")] / meas[(mode, "1M")] * 8  # time ratio from MB/s
        rows.append(
            Row(
                f"{mode}: time of a 1M read / time of a 128k read (1M = eight 128 KiB requests "
                f"one after the other, MaxRequestSize {cfg['MaxRequestSize']})",
                "",
                ratio_m,
                lat[(mode, "1M")] / lat[(mode, "128k")],
                TOLERANCE,
                known_deviation=KNOWN.get(f"{mode} split", ""),
            )
        )
    gm = {n: (meas[("rdma", n)] / meas[("tcp", n)] - 1) * 100 for n, _ in SIZES}
    gs = {n: (sim[("rdma", n)] / sim[("tcp", n)] - 1) * 100 for n, _ in SIZES}
    for name, _ in SIZES:
        rows.append(
            Row(
                f"RDMA gain over TCP at {name} (%)",
                "%",
                gm[name],
                gs[name],
                kind="shape",
                passed=gs[name] > 0,
                criterion="> 0",
            )
        )
    for name in ("128k", "1M"):
        rows.append(
            Row(
                f"gain at {name} - gain at 4k (percentage points)",
                "pp",
                gm[name] - gm["4k"],
                gs[name] - gs["4k"],
                kind="shape",
                passed=gs[name] > gs["4k"],
                criterion="> 0",
            )
        )

    names = [n for n, _ in SIZES]
    x = np.arange(len(names))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    a1.bar(x - 0.2, [gm[n] for n in names], 0.4, color="k", label="measured (seed 002)")
    a1.bar(x + 0.2, [gs[n] for n in names], 0.4, label="lfsim")
    a1.set_xticks(x, names)
    a1.set_ylabel("RDMA gain over TCP (%)")
    a1.set_title("gain, 1 job, O_DIRECT seq read, QD1", fontsize=9)
    a1.legend(fontsize=8)
    for mode, c in (("rdma", "C0"), ("tcp", "C1")):
        a2.plot(names, [meas[(mode, n)] for n in names], "o-", color=c, label=f"{mode} measured")
        a2.plot(names, [sim[(mode, n)] for n in names], "s--", color=c, label=f"{mode} lfsim")
    a2.set_yscale("log")
    a2.set_ylabel("bandwidth (MB/s)")
    a2.set_title("bandwidth (calibrated on rdma 4k only)", fontsize=9)
    a2.legend(fontsize=7)
    fig.suptitle("Seed 002: CubeFS RDMA vs TCP, ConnectX-5 100GbE", fontsize=10)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("gain"), dpi=110)
    plt.close(fig)
    return rows


CASES = [
    Case(
        "cubefs_rdma_tcp_seed002",
        source="cubefs_rdma_vs_tcp_fio.csv rows direct=1 read seq 4k/128k/1M threads=1 (seed "
        "002, direct-read table; fio libaio iodepth 1, MB/s)",
        note="Calibrated on the RDMA 4k point (35.8 MB/s) ONLY: the common fixed time 4t, t = "
        "27.969 us per software pass (client 2t, server TargetDelay t twice). Documented, not "
        "fitted: two common copies (page cache, FUSE) at 0.1 us/KiB each; TCP adds 2.5 us per "
        "side per message (system calls, TCP/IP stack) and 0.2 us/KiB on the client's receive "
        "path (42 Gb/s per core, Cai et al. SIGCOMM 2021) + 0.1 us/KiB send copy on the server; "
        "RDMA is zero-copy. A read larger than 128 KiB is carried as 128 KiB requests one "
        "after the other (FUSE's max_read; the Fio workload's MaxRequestSize). Transports: "
        "nvmeof_rdma (SEND request, RDMA WRITE data, SEND answer) "
        "and iscsi used only as a TCP request/response transport, ns-3 TCP, MSS 1448, on a "
        "100GbE leaf.",
        evaluate=_evaluate,
    )
]
