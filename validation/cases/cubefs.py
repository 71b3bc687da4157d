"""Seed 002 (CubeFS, RDMA against TCP): 1-job O_DIRECT reads of 4k, 128k and 1M, sequential and
random, QD1, on 100GbE. The CubeFS client path as documented (FUSE requests of 128 KiB in
series, one CubeFS packet per request, page pinning, the datanode's page-cache copy and CRC, the
client's CRC, the FUSE copy, TCP's socket costs) with stated rates; the fixed time per request
calibrated on ONE point per transport (4k sequential read, RDMA for the common path, TCP for the
socket path); every other row a prediction. Values and sources in scenarios/cubefs_rdma_tcp.yaml.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import yaml

from lfsim import core as _core
from lfsim.depth import parse_layers
from lfsim.paths import scenarios_dir
from lfsim.scenario import time_seconds
from lfsim.validate import Case, Row, read_measured

SCENARIO = "cubefs_rdma_tcp"
DATA = "cubefs_rdma_vs_tcp_fio"
SIZES = [("4k", 4096), ("128k", 131072), ("1M", 1048576)]
PATTERNS = [("seq", "read"), ("rand", "randread")]  # CSV pattern -> fio rw
MODES = ("rdma", "tcp")
CALIBRATION = {"rdma": ("seq", "4k"), "tcp": ("seq", "4k")}
SOFTWARE_PASSES = 4  # client submit + completion (fuse_client = 2t), datanode TargetDelay twice
TCP_SIDES = 2  # tcp_client + tcp_server, x each
TOLERANCE = 0.25  # issue 18: absolute bandwidths within +-25 %
GAIN_TOLERANCE_PP = 10.0  # issue 18: gains within +-10 percentage points


def point(pattern: str, size: str, what: str) -> str:
    """The measured point's name: '<data file>:direct=1 read <pattern> <size> 1 thread <what>'."""
    return f"{DATA}:direct=1 read {pattern} {size} 1 thread {what}"


_PER_KIB_MISSING = (
    "The model is too fast within a request. Measured, a 128 KiB request takes 1.11 us per KiB "
    "more than a 4 KiB one over RDMA ((252.5 - 114.4) / 124) and 1.56 over TCP; the documented "
    "work gives 0.43 us/KiB on the common path (two page pins per page, page-cache copy, two "
    "CRC32 passes, FUSE copy) + 0.08 of 100GbE wire, and TCP's socket path 0.3 more. Missing: "
    "~0.6 us/KiB on the path both transports share (it is in the RDMA time), i.e. about six "
    "more passes over the data at the stated rates, or the same passes at a third of the stated "
    "copy/CRC rates. Not identified from the seed; candidates: Go's allocation and zeroing of "
    "the 128 KiB reply buffers and the page faults after its scavenger returns them, copies at "
    "DRAM rather than cache speed on a 2.0 GHz core, staging copies in CubeFS's RDMA transport "
    "(assumed zero-copy here). Not fitted: that would take a second point per transport."
)
_TCP_PER_KIB = (
    " TCP's own extra time per KiB over RDMA's, measured (331.8 - 252.5 - 24.4) / 124 = 0.44 "
    "us/KiB, is also above the model's 0.3 (receive path at Cai et al.'s best-case 42 Gb/s per "
    "core + one send copy): MTU 1500 without aRFS costs more per byte than that best case."
)
KNOWN = {
    ("rdma", "seq", "128k"): _PER_KIB_MISSING,
    ("rdma", "seq", "1M"): _PER_KIB_MISSING,
    ("tcp", "seq", "128k"): _PER_KIB_MISSING + _TCP_PER_KIB,
    ("tcp", "seq", "1M"): _PER_KIB_MISSING + _TCP_PER_KIB,
    ("rdma", "rand", "128k"): _PER_KIB_MISSING,
    ("rdma", "rand", "1M"): _PER_KIB_MISSING,
    ("tcp", "rand", "128k"): _PER_KIB_MISSING + _TCP_PER_KIB,
    ("tcp", "rand", "1M"): _PER_KIB_MISSING + _TCP_PER_KIB,
}
KNOWN_GAIN = {
    ("seq", "1M"): "The model gives the same gain at 1M as at 128k (a 1M read is eight 128 KiB "
    "requests in series on both transports); the measured gain grows from 31.4 to 46.7 % "
    "because the measured RDMA 1M read takes only 7.15 times its 128k read (TCP: 7.98). The "
    "missing mechanism is whatever lets CubeFS's RDMA path overlap consecutive FUSE requests "
    "(or run-to-run spread: the seed calls 10 % normal); the model serialises them.",
    ("rand", "128k"): "The model has no mechanism that tells random from sequential reads "
    "(page-cache hits both: same time, same gain); measured, the random 128k gain is 7.3 pp "
    "below the sequential one (RDMA 504 against 519 MB/s, TCP 406 against 395). The seed "
    "attributes the random-read comparisons to the network's fluctuation during the runs.",
}
KNOWN_SPLIT = {
    "rdma": "the measured RDMA 1M read takes 7.15 times its 128k read, not 8: either CubeFS's "
    "RDMA read path overlaps part of consecutive requests, which the model (each FUSE request "
    "after the previous one completes) does not, or run-to-run spread (the seed calls 10 % "
    "normal; TCP's ratio is 7.98).",
}


def _measured() -> dict:
    m = read_measured(DATA)
    sel = m[(m["direct"] == 1) & (m["rw"] == "read") & (m["threads"] == 1)]
    out = {}
    for pattern, _ in PATTERNS:
        for name, _ in SIZES:
            row = sel[(sel["pattern"] == pattern) & (sel["bs"] == name)]
            if len(row) != 1:
                raise ValueError(f"{DATA}.csv: expected one direct {pattern} read {name} row")
            out[("rdma", pattern, name)] = float(row["rdma_MBps"].iloc[0])
            out[("tcp", pattern, name)] = float(row["tcp_MBps"].iloc[0])
            out[("gain", pattern, name)] = float(row["compare_pct"].iloc[0])
    return out


def _layer(layers: str, name: str, nbytes: int) -> float:
    """Time (us) of one named layer of a `name:time+time/KiB,...` list for nbytes."""
    return dict(parse_layers(layers, nbytes))[name]


CLIENT_PER_KIB = ("pin_pages", "client_crc", "fuse_copy", "tcp_client")  # the client's own work


def _stack_class(raw: dict, mode: str) -> str:
    """The class of the stack the mode's Fio workload chooses (NvmeofRdmaStack, IscsiStack)."""
    stack = raw["modes"][mode]["workload"]["fio"]["Stack"]
    return _core.short_name(_core.choices("ns3::StorageWorkload", "Stack")[stack]["type_id"])


def _on_cores(layers: str, cls: str) -> dict:
    """The client's per-KiB work of a Layers list (CLIENT_PER_KIB) moved onto the client's
    cores (HostCpu, the stack's ReadCpuPerKiB); its fixed times stay layers, and the stack's
    and ioengine's own CPU costs are zero: the calibrated fixed time already holds them."""
    items = [item.strip() for item in layers.split(",")]
    fixed, per_1k = parse_layers(layers, 0), parse_layers(layers, 1024)
    kept, per_kib = [], 0.0
    for item, (name, f), (_, g) in zip(items, fixed, per_1k, strict=True):
        if name in CLIENT_PER_KIB and g > f:
            per_kib += g - f
            kept.append(f"{name}:{round(f * 1000)}ns")
        else:
            kept.append(item)
    return {
        "HostCpu.Enabled": True,
        "HostCpu.LibaioCpu": "0s",
        f"{cls}.SubmitCpu": "0s",
        f"{cls}.CompletionCpu": "0s",
        f"{cls}.ReadCpuPerKiB": f"{round(per_kib * 1000)}ns",
        f"{cls}.Layers": ",".join(kept),
    }


def _evaluate(ctx, cores: bool = False):
    meas = _measured()
    with open(scenarios_dir() / f"{SCENARIO}.yaml", encoding="utf-8") as f:
        raw = yaml.safe_load(f)
    cfg = raw["workload"]["fio"]
    # Each transport's layers are its stack's (in its mode).
    cls = {m: _stack_class(raw, m) for m in MODES}
    layers = {m: raw["modes"][m][cls[m]]["Layers"] for m in MODES}
    rdma_layers, tcp_layers = layers["rdma"], layers["tcp"]
    over = {m: _on_cores(layers[m], cls[m]) if cores else {} for m in MODES}
    lat, sim = {}, {}
    for mode in MODES:
        for pattern, rw in PATTERNS:
            for name, bs in SIZES:
                r = ctx.run(
                    SCENARIO, {"mode": mode, "FioJob.bs": bs, "FioJob.rw": rw, **over[mode]}
                )
                lat[(mode, pattern, name)] = r.metrics["read_lat_mean_us"]
                # QD1 with no time between I/Os: fio's bandwidth is bs / mean latency (MB/s).
                sim[(mode, pattern, name)] = bs / r.metrics["read_lat_mean_us"]
    rows = []
    for mode in MODES:
        for pattern, _ in PATTERNS:
            for name, _ in SIZES:
                key = (mode, pattern, name)
                if (pattern, name) == CALIBRATION[mode]:
                    rows.append(
                        Row(
                            f"{mode} {pattern} {name} read (calibration point)",
                            "MB/s",
                            meas[key],
                            sim[key],
                            0.01,
                            evidence="calibrated",
                            point=point(pattern, name, mode),
                        )
                    )
                    continue
                rows.append(
                    Row(
                        f"{mode} {pattern} {name} read",
                        "MB/s",
                        meas[key],
                        sim[key],
                        TOLERANCE,
                        known_deviation=KNOWN.get(key, ""),
                        evidence="predicted",
                        point=point(pattern, name, mode),
                    )
                )
    gain_s = {}
    for pattern, _ in PATTERNS:
        for name, _ in SIZES:
            gs = (sim[("rdma", pattern, name)] / sim[("tcp", pattern, name)] - 1) * 100
            gain_s[(pattern, name)] = gs
            # With both 4k points calibrated the 4k gain follows from them: not a prediction.
            calibrated = (pattern, name) == CALIBRATION["rdma"] == CALIBRATION["tcp"]
            rows.append(
                Row(
                    f"RDMA gain over TCP, {pattern} {name} read (%)"
                    + (" (follows from both calibration points)" if calibrated else ""),
                    "pp",
                    meas[("gain", pattern, name)],
                    gs,
                    GAIN_TOLERANCE_PP,
                    kind="absolute",
                    evidence="consistency" if calibrated else "predicted",
                    point=point(pattern, name, "compare_pct"),
                    baseline=None if calibrated else 0.0,
                    known_deviation=KNOWN_GAIN.get((pattern, name), ""),
                )
            )
    # The calibrated fixed times must solve their points: at QD1 every delay is in series, so
    # d lat / d t = 4 (RDMA 4k) and d lat / d x = 2 (TCP 4k).
    t = time_seconds(cfg["TargetDelay"]) * 1e6
    fuse_client = _layer(rdma_layers, "fuse_client", 0)
    ps, ns = CALIBRATION["rdma"]
    bs = dict(SIZES)[ns]
    solved_t = t + (bs / meas[("rdma", ps, ns)] - lat[("rdma", ps, ns)]) / SOFTWARE_PASSES
    rows.append(
        Row(
            "t (TargetDelay, fuse_client = 2t) solves the rdma 4k calibration (us)",
            "us",
            None,
            solved_t,
            kind="shape",
            passed=abs(solved_t - t) < 0.002 and abs(fuse_client - 2 * t) < 0.002,
            criterion=f"|{solved_t:.4f} - {t:.4f}| < 0.002, fuse_client {fuse_client:.3f} = 2t",
            evidence="consistency",
        )
    )
    x = _layer(tcp_layers, "tcp_client", 0)
    x_srv = _layer(tcp_layers, "tcp_server", 0)
    ps, ns = CALIBRATION["tcp"]
    bs = dict(SIZES)[ns]
    solved_x = x + (bs / meas[("tcp", ps, ns)] - lat[("tcp", ps, ns)]) / TCP_SIDES
    rows.append(
        Row(
            "x (tcp_client = tcp_server fixed time) solves the tcp 4k calibration (us)",
            "us",
            None,
            solved_x,
            kind="shape",
            passed=abs(solved_x - x) < 0.002 and abs(x_srv - x) < 0.002,
            criterion=f"|{solved_x:.4f} - {x:.4f}| < 0.002, tcp_server {x_srv:.3f} = x",
            evidence="consistency",
        )
    )
    # MaxRequestSize: a 1M read is eight 128 KiB FUSE requests in series; the measured ratio of
    # the times says whether the client works that way.
    for mode in MODES:
        ratio_m = meas[(mode, "seq", "128k")] / meas[(mode, "seq", "1M")] * 8  # from MB/s
        rows.append(
            Row(
                f"{mode}: time of a 1M seq read / time of a 128k seq read (eight 128 KiB FUSE "
                f"requests one after the other, MaxRequestSize {cfg['MaxRequestSize']})",
                "",
                ratio_m,
                lat[(mode, "seq", "1M")] / lat[(mode, "seq", "128k")],
                0.10,
                known_deviation=KNOWN_SPLIT.get(mode, ""),
                evidence="predicted",
                point=f"{DATA}:direct=1 read seq 1M and 128k 1 thread {mode}",
            )
        )

    names = [n for n, _ in SIZES]
    x_ = np.arange(len(names))
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, (pattern, _) in zip(axes[:2], PATTERNS, strict=True):
        ax.bar(
            x_ - 0.2,
            [meas[("gain", pattern, n)] for n in names],
            0.4,
            color="k",
            label="measured (seed 002)",
        )
        ax.bar(x_ + 0.2, [gain_s[(pattern, n)] for n in names], 0.4, label="lfsim")
        ax.set_xticks(x_, names)
        ax.set_ylabel("RDMA gain over TCP (%)")
        ax.set_title(f"gain, 1 job, O_DIRECT {pattern} read, QD1", fontsize=9)
        ax.legend(fontsize=8)
    a2 = axes[2]
    for mode, c in (("rdma", "C0"), ("tcp", "C1")):
        a2.plot(
            names, [meas[(mode, "seq", n)] for n in names], "o-", color=c, label=f"{mode} measured"
        )
        a2.plot(
            names, [sim[(mode, "seq", n)] for n in names], "s--", color=c, label=f"{mode} lfsim"
        )
    a2.set_yscale("log")
    a2.set_ylabel("bandwidth (MB/s)")
    a2.set_title("seq read bandwidth (calibrated on 4k only)", fontsize=9)
    a2.legend(fontsize=7)
    fig.suptitle("Seed 002: CubeFS RDMA vs TCP, ConnectX-5 100GbE", fontsize=10)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("gain"), dpi=110)
    plt.close(fig)
    return rows


def _on_host_cpus(ctx):
    """The same rows with the client's per-KiB work as CPU on its cores (HostCpu)."""
    rows = _evaluate(ctx, cores=True)
    for r in rows:
        if r.evidence == "predicted" and r.known_deviation and r.unit == "MB/s":
            r.known_deviation += _SAME_ON_CORES
    return rows


_SAME_ON_CORES = (
    " On the client's cores (HostCpu) the same work takes the same time: one job at QD1 runs "
    "every request's CPU in series, nothing waits for a core, so CPU contention is not the "
    "missing ~0.6 us/KiB."
)


CASES = [
    Case(
        "cubefs_rdma_tcp_seed002",
        source="cubefs_rdma_vs_tcp_fio.csv rows direct=1 read seq and rand 4k/128k/1M threads=1 "
        "(seed 002, direct-read table; fio libaio iodepth 1, MB/s)",
        note="Calibrated on ONE point per transport, the 4k sequential read: RDMA 4k (35.8 MB/s) "
        "gives the common fixed time per FUSE request 4t (t = 27.738 us per software pass: "
        "client 2t, datanode TargetDelay t twice), TCP 4k (29.5 MB/s) the socket path's fixed "
        "time x = 11.719 us per side. Documented, not fitted, per KiB: two page pins per page "
        "(0.05), the datanode's page-cache copy (0.1) and CRC32 (0.09), the client's CRC32 "
        "check (0.09), the FUSE copy (0.1); TCP adds the receive path (0.2, 42 Gb/s per core, "
        "Cai et al. SIGCOMM 2021) and the send copy (0.1); RDMA is zero-copy. A read larger "
        "than 128 KiB is carried as 128 KiB FUSE requests one after the other (bazil.org/fuse "
        "does not raise the kernel's 32 pages; the Fio workload's MaxRequestSize), each one "
        "CubeFS packet (ReadBlockSize 128 KiB). Transports: nvmeof_rdma (SEND request, RDMA "
        "WRITE data, SEND answer) and iscsi used only as a TCP request/response transport, "
        "ns-3 TCP, MSS 1448, on a 100GbE leaf.",
        evaluate=_evaluate,
    ),
    Case(
        "cubefs_rdma_tcp_seed002_host_cpu",
        source="as cubefs_rdma_tcp_seed002",
        note="The same points with hosts that have CPUs: the client's per-KiB work (page pins, "
        "its CRC32 check, the FUSE copy; TCP's receive path) is CPU on the client's cores "
        "(the stack's ReadCpuPerKiB) instead of layer delays; the fixed times stay as "
        "calibrated (they hold the stacks' and the ioengine's own CPU, set to 0). The "
        "datanode's per-KiB work stays in its layers (targets have no CPU model).",
        evaluate=_on_host_cpus,
    ),
]
