"""Seed 000 (Qu et al.) re-predicted with hosts that have CPUs: GaussDB's sysbench and TPC-C as
transactions (scenarios/gaussdb_seed000.yaml, pattern Transactions, HostCpu on).

The database is a closed loop of 384 connections; each transaction's round trips cost the client
and the server's CPU per statement, its pages miss the buffer pool with some probability, its
commit waits for the WAL's flush (group commit), a page writer writes dirty pages back. The
stacks' CPU costs per I/O are their published figures (validation/cases/host_cpu.py); seed
004's per-layer figure is not used. Nothing is calibrated on seed 000: the values no source
gives (CPU per statement, the client's time per round trip, the miss ratio, the pages written
back per change, the servers' core count) are swept one at a time over their documented ranges
(the scenario file names each), and the report gives the predicted interval. The predicted rows
are the central point's.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from lfsim.validate import Case, Row, read_measured

SCENARIO = "gaussdb_seed000"
THREADS = 384
TOLERANCE = 0.10  # as the I/O-level prediction of seed 000 (issue 18)
# One at a time around the scenario's central point, each over the range its comment names.
SWEEP = {
    "StatementCpu 30 us": {"workload.db.StatementCpu": "30us"},
    "StatementCpu 70 us": {"workload.db.StatementCpu": "70us"},
    "ClientDelay 30 us": {"workload.db.ClientDelay": "30us"},
    "ClientDelay 200 us": {"workload.db.ClientDelay": "200us"},
    "MissRatio 0.5": {"workload.db.MissRatio": 0.5},
    "PagesPerChange 0": {"workload.db.PagesPerChange": 0},
    "PagesPerChange 1": {"workload.db.PagesPerChange": 1},
    "Cores 128": {"HostCpu.Cores": 128},
}


def _pair(ctx, bench: str, over: dict) -> dict:
    return {f: ctx.run(SCENARIO, {"mode": f"{bench}_{f}", **over}).metrics for f in ("roce", "fc")}


def _ratios(p: dict) -> dict:
    roce, fc = p["roce"], p["fc"]
    return {
        "tps": fc["tps"] / roce["tps"],
        "lat": fc["txn_lat_mean_us"] / roce["txn_lat_mean_us"],
        # tpmC is new orders per minute: the ratio of new_order_tps.
        "tpmc": fc["new_order_tps"] / roce["new_order_tps"] if "new_order_tps" in fc else None,
    }


def _evaluate(ctx):
    meas = read_measured("roce_vs_fc_database").set_index(["benchmark", "metric"])
    want = {
        "tps": float(meas.loc[("sysbench", "tps"), "fc_over_roce"]),
        "lat": float(meas.loc[("sysbench", "avg_latency_ms"), "fc_over_roce"]),
        "tpmc": float(meas.loc[("tpcc", "tpmC"), "fc_over_roce"]),
    }
    roce_tps = float(meas.loc[("sysbench", "tps"), "roce"])
    roce_lat = float(meas.loc[("sysbench", "avg_latency_ms"), "roce"])
    central = {b: _pair(ctx, b, {}) for b in ("sysbench", "tpcc")}
    rows = []
    for f, m in central["sysbench"].items():
        little = m["tps"] * m["txn_lat_mean_us"] / 1e6 / THREADS
        rows += [
            Row(
                f"sysbench {f}: TPS x mean latency / threads ({m['tps']:.0f} TPS, "
                f"{m['txn_lat_mean_us'] / 1e3:.2f} ms, CPU {m['cpu_util'] * 100:.0f} %, "
                f"{m['commits_per_flush']:.1f} commits per WAL flush)",
                "",
                None,
                little,
                kind="shape",
                passed=abs(little - 1) < 0.02,
                criterion="1 +- 2 % (Little's law, 384 connections, no think time)",
                evidence="consistency",
            ),
            Row(
                f"sysbench {f}: frames dropped, transactions failed",
                "",
                None,
                m["drops"] + m["txn_errors"],
                kind="shape",
                passed=m["drops"] == 0 and m["txn_errors"] == 0,
                criterion="0 (lossless fabric)",
                evidence="consistency",
            ),
        ]
    roce = central["sysbench"]["roce"]
    rows.append(
        Row(
            "sysbench RoCE TPS (absolute)",
            "TPS",
            roce_tps,
            roce["tps"],
            0.10,
            evidence="reported",
            explanation=(
                f"The model's transaction takes {roce['txn_lat_mean_us'] / 1e3:.2f} ms, the "
                f"measured one {roce_lat:.2f} ms: 20 round trips of client, network and "
                "statement CPU, a WAL flush at commit, each at its source's size, leave about "
                "nine tenths of the measured time unaccounted for (lock and latch waits, "
                "synchronous replication to standbys, the database's own I/O queueing: not in "
                "the seed, not modelled). Shown for context: the seed's rows are FC/RoCE ratios."
            ),
        )
    )
    sweep = {
        name: {b: _ratios(_pair(ctx, b, o)) for b in ("sysbench", "tpcc")}
        for name, o in SWEEP.items()
    }
    sweep = {"central": {b: _ratios(p) for b, p in central.items()}, **sweep}
    lo = {k: min(s["sysbench" if k != "tpmc" else "tpcc"][k] for s in sweep.values()) for k in want}
    hi = {k: max(s["sysbench" if k != "tpmc" else "tpcc"][k] for s in sweep.values()) for k in want}
    fc = central["sysbench"]["fc"]
    # Closed forms from the run: what the measured direction would need.
    io_cpu_roce, io_cpu_fc = roce["cpu_us_per_io"], fc["cpu_us_per_io"]
    gap_ms = roce_lat * (want["lat"] - 1)
    io_gap_us = fc["write_lat_mean_us"] - roce["write_lat_mean_us"]
    # (A + n r) / (A + n f) = w  ->  A / n = (w f - r) / (1 - w)
    need_us = (want["tps"] * io_cpu_fc - io_cpu_roce) / (1 - want["tps"])
    why = (
        "no value in the documented ranges gives it: over the sweep (each unknown alone over "
        "its range, scenarios/gaussdb_seed000.yaml) FC/RoCE stays within "
        f"TPS [{lo['tps']:.3f}, {hi['tps']:.3f}], latency [{lo['lat']:.3f}, {hi['lat']:.3f}], "
        f"tpmC [{lo['tpmc']:.3f}, {hi['tpmc']:.3f}]. Two bounds say why. CPU-bound, FC/RoCE = "
        "(statement CPU + n x RoCE's CPU per I/O) / (statement CPU + n x FC's): with "
        f"{io_cpu_roce:.2f} and {io_cpu_fc:.2f} us per I/O (the stacks' sourced costs) it "
        f"cannot go below {io_cpu_roce / io_cpu_fc:.3f} even with no statement CPU at all, and "
        f"{want['tps']} needs the statements' CPU to be {need_us:.2f} us per I/O. Latency-bound, "
        f"the measured {gap_ms:.2f} ms more per FC transaction would take "
        f"{gap_ms * 1e3 / max(abs(io_gap_us), 1e-9):.0f} synchronous I/Os per transaction at "
        f"the model's FC-RoCE write difference ({io_gap_us:+.1f} us, host CPU waits included), "
        "where a sysbench transaction touches 45 pages and commits once. What would: a "
        "difference the seed does not describe (the array's NoF+ and FC front ends, the HBA "
        "and NIC firmware, the database's waits that storage latency lengthens)"
    )
    rows += [
        Row(
            "FC/RoCE sysbench TPS",
            "ratio",
            want["tps"],
            sweep["central"]["sysbench"]["tps"],
            TOLERANCE,
            evidence="predicted",
            point="roce_vs_fc_database:sysbench tps",
            baseline=1.0,
            known_deviation=why,
        ),
        Row(
            "FC/RoCE sysbench mean latency",
            "ratio",
            want["lat"],
            sweep["central"]["sysbench"]["lat"],
            TOLERANCE,
            evidence="predicted",
            point="roce_vs_fc_database:sysbench avg_latency_ms",
            baseline=1.0,
            known_deviation="as the TPS row (Little's law ties the two in the closed loop)",
        ),
        Row(
            "FC/RoCE TPC-C tpmC (the same inputs, BenchmarkSQL's mix)",
            "ratio",
            want["tpmc"],
            sweep["central"]["tpcc"]["tpmc"],
            TOLERANCE,
            evidence="predicted",
            point="roce_vs_fc_database:tpcc tpmC",
            baseline=1.0,
            known_deviation="as the TPS row: " + why.split(". Two bounds")[0],
        ),
    ]
    _figure(ctx, sweep, want)
    return rows


def _figure(ctx, sweep: dict, want: dict) -> None:
    names = list(sweep)
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    x = range(len(names))
    ax.plot(x, [sweep[n]["sysbench"]["tps"] for n in names], "o", label="sysbench TPS")
    ax.plot(x, [sweep[n]["sysbench"]["lat"] for n in names], "s", label="sysbench latency")
    ax.plot(x, [sweep[n]["tpcc"]["tpmc"] for n in names], "^", label="TPC-C tpmC")
    for k, style in (("tps", "C0"), ("lat", "C1"), ("tpmc", "C2")):
        ax.axhline(want[k], color=style, linestyle="--", linewidth=0.8)
    ax.axhline(1.0, color="0.5", linewidth=0.8)
    ax.set_xticks(list(x), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("FC / RoCE")
    ax.set_title("Seed 000 with hosts that have CPUs: predicted (points) and measured (dashed)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("sweep"), dpi=110)
    plt.close(fig)


CASES = [
    Case(
        "seed000_transactions",
        source="roce_vs_fc_database.csv (seed 000: sysbench TPS and mean latency, TPC-C tpmC)",
        note="Predicted with the Transactions pattern on hosts with CPUs; nothing calibrated on "
        "seed 000. The stacks' CPU costs are published figures; the database's unknowns are "
        "swept over their documented ranges (the figure) and the rows are the central point.",
        evaluate=_evaluate,
    ),
]
