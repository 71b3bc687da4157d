"""Storage-stack case: seed 000 (Qu et al.), a database on 2 x 25GbE RoCE against 2 x 32G FC,
predicted.

The testbed ran GaussDB (sysbench OLTP, 384 threads; TPC-C) on three servers against one
OceanStor Dorado all-flash array, each server with a 2-port 25GbE RoCE NIC and a 2-port 32G FC
HBA, one port in each of two fabrics. Measured (sysbench): FC/RoCE = 84.6 % of the transactions
per second and 118 % of the mean latency: RoCE ahead.

The prediction (scenarios/san_seed000.yaml, nothing calibrated on seed 000): the testbed as
described (3 servers, dual fabrics, 4 paths per server, one array), 384 threads of an 8 KiB
70/30 random mix, each with one I/O outstanding, over NVMe-oF/RoCEv2 and over FCP, the host
stacks at their documented Linux 4.19 defaults: SCSI queue_depth and can_queue, NVMe-oF queue
count and size, dm-multipath for SCSI against NVMe's native multipath, one per-layer software
cost measured on seed 004's client. Criterion (issue 18): RoCE ahead, and the FC/RoCE ratios of
IOPS and of mean latency within 10 % of 0.846 and 1.18.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from lfsim.validate import Case, Row, read_measured

SCENARIO = "san_seed000"
MODES = {"roce": "nvmeof_roce", "fc": "fcp"}
THREADS = 384  # the seed's sysbench threads: 3 servers x numjobs 128 x iodepth 1
LPFC_LUN_QUEUE_DEPTH = 30  # drivers/scsi/lpfc/lpfc_attr.c, lun_queue_depth default
LIGHT_JOBS = 8  # threads per server in the lightly loaded comparison


def _totals(r) -> tuple[float, float]:
    m = r.metrics
    iops = m["read_iops"] + m["write_iops"]
    n = m["read_ios"] + m["write_ios"]
    lat = (m["read_lat_mean_us"] * m["read_ios"] + m["write_lat_mean_us"] * m["write_ios"]) / n
    return iops, lat


def _san(ctx):
    meas = read_measured("roce_vs_fc_database").set_index("metric")
    tps = float(meas.loc["tps", "fc_over_roce"])
    avg = float(meas.loc["avg_latency_ms", "fc_over_roce"])
    runs = {k: ctx.run(SCENARIO, {"mode": mode}) for k, mode in MODES.items()}
    lpfc = ctx.run(SCENARIO, {"mode": "fcp", "FcpStack.LunQueueDepth": LPFC_LUN_QUEUE_DEPTH})
    tot = {k: _totals(r) for k, r in runs.items()}
    # The same testbed lightly loaded (8 threads per server, links under 10 %): what is left
    # when no link is near its rate is the per-I/O difference of the stacks.
    light = {
        k: _totals(ctx.run(SCENARIO, {"mode": mode, "FioJob.numjobs": LIGHT_JOBS}))
        for k, mode in MODES.items()
    }
    rows = []
    for k, r in runs.items():
        m = r.metrics
        cfg = r.config["FioJob"]
        outstanding = len(r.labels("ios")) * int(cfg["iodepth"])
        rows.append(
            Row(
                f"{k}: threads (job clones x iodepth)",
                "",
                None,
                outstanding,
                kind="shape",
                passed=outstanding == THREADS,
                criterion=f"{THREADS} (the seed's sysbench threads)",
                evidence="consistency",
            )
        )
        rows.append(
            Row(
                f"{k}: frames dropped",
                "frames",
                None,
                m["drops"],
                kind="shape",
                passed=m["drops"] == 0,
                criterion="0 (lossless: PFC / BB_Credit)",
                evidence="consistency",
            )
        )
        iops, lat = tot[k]
        little = iops * lat * 1e-6 / THREADS
        rows.append(
            Row(
                f"{k}: IOPS x mean latency / threads ({iops:.0f} IOPS, {lat:.1f} us, "
                f"host queue wait {m['host_wait_us']:.3f} us, busiest link "
                f"{m['max_link_util'] * 100:.0f} %)",
                "",
                None,
                little,
                kind="shape",
                passed=abs(little - 1) < 0.02,
                criterion="1 +- 2 % (Little's law, closed loop)",
                evidence="consistency",
            )
        )
    # The stacks' host cost differs by exactly the one layer FCP runs more (dm-multipath).
    layers = runs["fc"].metrics["stack_delay_us"] - runs["roce"].metrics["stack_delay_us"]
    rows.append(
        Row(
            "FC - RoCE host stack time per I/O (FCP's stacked dm-multipath device: one more "
            "software layer)",
            "us",
            4.772,
            layers,
            0.001,
            kind="absolute",
            evidence="closed_form",
        )
    )
    iops_ratio = tot["fc"][0] / tot["roce"][0]
    lat_ratio = tot["fc"][1] / tot["roce"][1]
    lpfc_iops, lpfc_lat = _totals(lpfc)
    why = (
        f"the documented host mechanisms do not produce it. At qla2xxx's defaults no host "
        f"queue binds (128 threads per server over 4 paths of 64); with lpfc's "
        f"lun_queue_depth {LPFC_LUN_QUEUE_DEPTH} (120 slots for 128 threads) FC/RoCE would "
        f"be {lpfc_iops / tot['roce'][0]:.3f} IOPS and {lpfc_lat / tot['roce'][1]:.3f} "
        f"latency. FCP's extra dm-multipath layer costs {layers:.2f} us per I/O, about "
        f"{layers / tot['roce'][1] * 100:.1f} % of RoCE's {tot['roce'][1]:.0f} us. With 384 "
        "threads and no think time the array's four front-end ports run near line rate "
        f"(busiest link {runs['roce'].metrics['max_link_util'] * 100:.0f} % on RoCE), so the "
        "faster line wins: 32GFC carries 3400 MB/s against 25GbE's 3125 MB/s. Lightly loaded "
        f"({3 * LIGHT_JOBS} threads) RoCE is ahead, as measured, but by a quarter of the gap: "
        f"FC/RoCE {light['fc'][0] / light['roce'][0]:.3f} IOPS, "
        f"{light['fc'][1] / light['roce'][1]:.3f} latency. Missing "
        "mechanisms, named: the database itself (sysbench's 29 ms per transaction is CPU, "
        "locks and commit waits, into which storage latency enters through lock hold times; "
        "its I/O rate and concurrency are not published), the array's two front ends (NoF+ "
        "and FC target firmware, not documented), and host CPU contention (layers here cost "
        "fixed times). From the stacks' documented differences RoCE gains a few per cent at "
        "most, unloaded; loaded, the line rates decide, in FC's favour"
        "from the stacks' documented differences"
    )
    rows.append(
        Row(
            "FC/RoCE IOPS (measured: sysbench tps)",
            "ratio",
            tps,
            iops_ratio,
            0.10,
            evidence="predicted",
            point="roce_vs_fc_database:sysbench tps",
            baseline=1.0,
            known_deviation=why,
        )
    )
    rows.append(
        Row(
            "FC/RoCE mean latency (measured: sysbench avg latency)",
            "ratio",
            avg,
            lat_ratio,
            0.10,
            evidence="predicted",
            point="roce_vs_fc_database:sysbench avg_latency_ms",
            baseline=1.0,
            known_deviation="as the IOPS row: the same closed loop (Little's law ties the two)",
        )
    )
    _figure(
        ctx, tps, avg, iops_ratio, lat_ratio, lpfc_iops / tot["roce"][0], lpfc_lat / tot["roce"][1]
    )
    return rows


def _figure(ctx, tps, avg, iops_ratio, lat_ratio, lpfc_iops, lpfc_lat) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    x = [0, 1]
    ax.bar([i - 0.27 for i in x], [tps, avg], 0.27, color="k", label="measured (sysbench)")
    ax.bar(x, [iops_ratio, lat_ratio], 0.27, color="C0", label="lfsim, qla2xxx defaults")
    ax.bar([i + 0.27 for i in x], [lpfc_iops, lpfc_lat], 0.27, color="C1", label="lfsim, lpfc")
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_xticks(x, ["FC/RoCE throughput", "FC/RoCE mean latency"])
    ax.set_ylim(0.7, 1.3)
    ax.set_title("Seed 000: 3 servers, 384 threads, dual fabrics", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(ctx.plot_path("ratios"), dpi=110)
    plt.close(fig)


CASES = [
    Case(
        "seed000_san",
        source="roce_vs_fc_database.csv, sysbench (seed 000: FC/RoCE 84.6 % tps, 118 % latency)",
        note=(
            "nothing calibrated on seed 000 (scenarios/san_seed000.yaml gives every value's "
            "source). Inputs from elsewhere: 4772 ns per host software layer (calibrated on "
            "seed 004's 4k randread, scenarios/wds_qd1.yaml), 500 ns per adapter layer and an "
            "all-flash array (reads lognormal 150 +- 50 us, writes 50 +- 15 us from cache) as "
            "assumptions, 2 array ports per fabric (assumption). Host queues at Linux 4.19 "
            "defaults (qla2xxx ql2xmaxqdepth 64, can_queue 4086; nvme-rdma one I/O queue per "
            "CPU, queue_size 128), dm-multipath service-time for SCSI, native NVMe multipath"
        ),
        evaluate=_san,
    )
]
