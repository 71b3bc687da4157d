"""lfsim against ns3-datacenter, the HPCC RDMA code on ns-3.39 (inet-tub/ns3-datacenter), on the
same input files.

The reference runs are in validation/data/ns3_datacenter/ (README.md there: the commit, the build,
every command line and how long each run took). The case converts the same topology.txt,
flow.txt and config.txt with ``lfsim convert hpcc TOPOLOGY FLOWS --config config.txt`` and the
program's command-line flags (--algorithm, --wien, --delayWien, --windowCheck), runs the
scenario and compares:

- fat_tree/: a k=4 fat-tree (16 hosts, 20 switches, every link 100 Gb/s and 1 us) with 1,710
  web-search flows at 30 % load from HPCC's traffic_gen.py, run with ns3-datacenter's
  powertcp-evaluation-burst: the FCT slowdown's p50 and p99 per flow-size bucket and over all
  flows. Slowdown = FCT / standalone_fct, at least 1, as HPCC's fct_analysis.py computes it, with
  the standalone_fct of the reference's fct.txt for both simulators (the same ideal per flow);
  a percentile is HPCC's get_pctl (the sorted values' element int(n p)).
- fairness8/: eight long flows into one 40 GbE port (9 hosts on one switch, 1 us links, 4096 B
  payload), run with powertcp-evaluation-fairness, 15-30 ms: the flows' total goodput, Jain's
  index of their goodputs, the slowest and the fastest flow. Flow by flow the shares are not
  comparable: which flow ends up fastest depends on the order of events, in either simulator.

Tolerances, fixed before lfsim's results on these files were looked at (the reference's own
spread, in README.md, was looked at):

- p50 of a size bucket, relative 25 %; over all flows 20 %. The issue that asked for this case
  found the two codes per size bucket "mostly within 10-25 %" on a 128-host fat-tree; the
  reference's own 90 % bootstrap band (flows resampled) is at most 15 % of a bucket's p50.
  Flow-level paths differ (each simulator hashes its own ECMP), so only the distribution is
  comparable.
- p99 of a size bucket, relative 40 %; over all flows 30 %. A bucket's p99 is its two to seven
  slowest flows; the reference's bootstrap band is 6-38 % of it in most buckets (wider in a few:
  DCQCN's < 10 KB, 99 %).
- Incast, total goodput of the eight flows, relative 3 %: the two codes frame a packet with
  different headers (ns3-datacenter 90 B with HPCC's INT, lfsim RoCEv2's real ones with
  preamble and gap, about 1 % apart) and the reference moves by 0.3 % between 15 ms windows.
- Incast, Jain's index, absolute 0.03: the reference's index over the 15 ms windows between 5
  and 30 ms spans 0.965-0.981 (HPCC), twice that spread rounded up.
- Incast, the slowest and the fastest flow's goodput, relative 20 %: the reference's slowest
  HPCC flow moves by 6 % and its fastest by 11 % between those windows.
- PowerTCP's reference differs from run to run with the same files (README.md: each flow's
  first ACK is compared with INT records that code leaves uninitialised): on the incast
  six runs gave Jain 0.835-0.975, the slowest flow -20 % to +36 % and the fastest -28 % to
  +10 % of the committed run, so its Jain is compared within 0.14 (that range) and its
  extremes within 40 %; on the fat-tree a second run moved its statistics by at most 7 %,
  inside the tolerances above, which stand. theta-PowerTCP gives the same output every run and
  takes the tolerances above; on the incast its outcome moves with a flow started 1 ns late
  (README.md, Diagnostics), and its total and slowest flow are named misses.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from lfsim.paths import validation_dir
from lfsim.validate import Case, Row

FOLDER = "ns3_datacenter"
EDGES = (10_000, 100_000, 1_000_000)  # flow size buckets in bytes
BUCKETS = ("< 10 KB", "10-100 KB", "100 KB-1 MB", ">= 1 MB")
TOL = {  # (p50, p99), relative: see the module docstring
    "bucket": (0.25, 0.40),
    "all": (0.20, 0.30),
}
TOL_TOTAL, TOL_JAIN, TOL_EXTREME = 0.03, 0.03, 0.20
# PowerTCP's reference is not the same from run to run: the range of its runs (docstring)
TOL_INCAST = {"powertcp": (TOL_TOTAL, 0.14, 0.40)}
WINDOW = ("30ms", "15ms")  # stop time and warm-up: goodput over 15-30 ms

# name, reference folder, ns3-datacenter's flags (as in README.md's command lines)
CCS = (
    ("DCQCN", "dcqcn", ["--algorithm", "1", "--wien", "false", "--delayWien", "false",
                        "--windowCheck", "0"]),
    ("HPCC", "hpcc", ["--algorithm", "3", "--wien", "false", "--delayWien", "false",
                      "--windowCheck", "1"]),
    ("PowerTCP", "powertcp", ["--algorithm", "3", "--wien", "true", "--delayWien", "false",
                              "--windowCheck", "1"]),
    ("theta-PowerTCP", "thetapowertcp", ["--algorithm", "3", "--wien", "true",
                                         "--delayWien", "true", "--windowCheck", "1"]),
)  # fmt: skip

_HPCC_SHARES = (
    "lfsim's HPCC keeps the eight flows' 15 ms means closer together than ns3-datacenter's. "
    "Both wander at the millisecond scale (1 ms means from 1.9 to 8.6 Gb/s in lfsim, 2.2 to "
    "11.0 in ns3-datacenter, fairness8/hpcc/throughput_ms.csv), but the reference's excursions "
    "last longer (flow 6 at 8.8-11.0 Gb/s over 26-30 ms, flow 3 at 7.5-9.6 over 14-17 ms), so "
    "its Jain's index over the 15 ms windows between 5 and 30 ms spans 0.965-0.981 where "
    "lfsim's spans 0.985-0.996. HPCC pulls shares together only by its additive step (50 Mb/s "
    "a 5.6 us round trip against shares of about 4.3 Gb/s; the multiplicative step keeps their "
    "ratios), so how long an excursion lasts depends on what feeds it; what makes "
    "ns3-datacenter's last longer was not traced"
)

# PowerTCP on the fat-tree: the rows the reference's first-ACK comparison moves (README.md,
# "Diagnostics"). Keyed by (reference folder, bucket, percentile).
_FIRST_ACK = (
    "ns3-datacenter compares each flow's first ACK's INT records with RdmaQueuePair::hp.hop[], "
    "which that class's constructor leaves uninitialised (heap contents, which is also why its "
    "PowerTCP runs differ from run to run and repeat exactly with ASLR off). On these files that "
    "first sample reads a normalized power of 162 (median of the 1,710 flows) and cuts 91 % of "
    "the flows to 20 Gb/s or less of their 100 at once (5 % with those records zeroed); a flow "
    "of 10 KB-1 MB then spends its life climbing back. The same program with those records "
    "zeroed (fat_tree/powertcp-zeroed-int/fct.txt, the same in three runs) gives 10-100 KB p99 "
    "2.33, 100 KB-1 MB p50 1.77 and p99 5.38 where its committed run gives 5.30, 2.84 and "
    "8.23. lfsim's first ACK only stores its records, as the paper's and the authors' Linux "
    "module's first sample does; reading memory that was never written is no behaviour to "
    "reproduce"
)
_FAT_TREE_NOTES = {
    ("powertcp", "10-100 KB", 0.99): _FIRST_ACK,
    ("powertcp", "100 KB-1 MB", 0.5): _FIRST_ACK,
    ("powertcp", "100 KB-1 MB", 0.99): _FIRST_ACK,
}

_THETA_LOCK = (
    "Eight flows share B tau = 28 KB, 3.5 KB each, less than one 4,186 B packet: every flow has "
    "one paced packet in flight, and where its packet falls among the others' decides its RTT "
    "samples and the state the flows lock into, to the nanosecond. In ns3-datacenter's run "
    "flow 2 holds 2.71 Gb/s (paced) with an RTT of 6,265-6,268 ns on all its 1,222 samples in "
    "15-30 ms, the others 5.0-5.2 Gb/s. Starting one flow 1 ns late, each of the eight in turn, "
    "that program gives totals of 29.64-39.15 Gb/s and slowest flows of 2.61-4.89 (README.md, "
    "Diagnostics); lfsim with one flow 1 ns late gives eight equal flows, 39.14 in all, and "
    "unshifted another locked state. Its first sample also reads two fields its queue pair "
    "leaves unset (prevRtt, prevCompletion: the same bytes every run); zeroed, the incast gives "
    "39.15 and 3.91. Not a difference of the two codes' algorithms: one sample of a state each "
    "code picks by the order of its events"
)
_INCAST_NOTES = {  # (reference folder, statistic): the named miss
    ("hpcc", "jain"): _HPCC_SHARES,
    ("hpcc", "fastest"): _HPCC_SHARES,
    ("thetapowertcp", "total"): _THETA_LOCK,
    ("thetapowertcp", "slowest"): _THETA_LOCK,
}


def _data() -> Path:
    return validation_dir() / "data" / FOLDER


def _convert(folder: str, program: str, flags: list[str], out: Path) -> Path:
    """``lfsim convert hpcc`` on the folder's three files, as a user runs it."""
    from lfsim import cli

    d = _data() / folder
    yaml = out / f"{folder}-{program}-{'_'.join(flags[1::2])}.yaml"
    argv = ["convert", "hpcc", str(d / "topology.txt"), str(d / "flow.txt")]
    argv += ["--config", str(d / "config.txt"), "--program", program, *flags, "-o", str(yaml)]
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    if code != 0:
        raise RuntimeError(f"lfsim {' '.join(argv)} exited {code}: {err.getvalue().strip()}")
    return yaml


def _pctl(values: np.ndarray, p: float) -> float:
    """HPCC's fct_analysis.py get_pctl: the sorted values' element int(n p)."""
    s = np.sort(values)
    return float(s[int(len(s) * p)])


def _reference_fct(cc: str) -> pd.DataFrame:
    """The reference's fct.txt, in flow.txt's order: size, fct and standalone_fct in ns."""
    d = _data() / "fat_tree"
    lines = (d / "flow.txt").read_text(encoding="ascii").splitlines()
    n = int(lines[0].split()[0])
    flows = pd.DataFrame(
        [ln.split() for ln in lines[1 : n + 1]],
        columns=["src", "dst", "pg", "dport", "size", "start"],
    )
    key = [
        (int(s), int(t), int(z), round(float(a) * 1e9))
        for s, t, z, a in zip(flows.src, flows.dst, flows["size"], flows.start, strict=True)
    ]
    fct = pd.read_csv(
        d / cc / "fct.txt",
        sep=r"\s+",
        header=None,
        names=["sip", "dip", "sport", "dport", "size", "start_ns", "fct_ns", "standalone_ns"],
        dtype={"sip": str, "dip": str},
    )
    # An address 0x0b000001 + 256 id (ids below 256), as node_id_to_ip writes it.
    fct.index = [
        (int(a, 16) >> 8 & 0xFFFF, int(b, 16) >> 8 & 0xFFFF, int(z), int(t))
        for a, b, z, t in zip(fct.sip, fct.dip, fct["size"], fct.start_ns, strict=True)
    ]
    return fct.loc[key].reset_index(drop=True)


def _fat_tree(ctx) -> list[Row]:
    rows: list[Row] = []
    figure = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, cc, flags in CCS:
            ref = _reference_fct(cc)
            r = ctx.run(_convert("fat_tree", "burst", flags, Path(tmp)))
            flows = r.table("flows").sort_values("id").reset_index(drop=True)
            done = flows["fct_us"].notna() & (flows["fct_us"] > 0)
            ideal = ref["standalone_ns"].to_numpy(dtype=float)
            ref_sd = np.maximum(1.0, ref["fct_ns"].to_numpy(dtype=float) / ideal)
            sim_fct = np.where(done, flows["fct_us"].to_numpy(dtype=float) * 1e3, np.inf)
            sim_sd = np.maximum(1.0, sim_fct / ideal)
            bucket = np.digitize(ref["size"].to_numpy(), EDGES)
            point = f"{FOLDER}/fat_tree/{cc}/fct.txt"
            rows.append(
                Row(
                    f"fat-tree {name}: flows completed (of {len(ref)})",
                    "flows",
                    None,
                    int(done.sum()),
                    kind="shape",
                    passed=bool(done.all()),
                    criterion=f"all {len(ref)}",
                    evidence="consistency",
                )
            )
            parts = [(b, bucket == i, "bucket") for i, b in enumerate(BUCKETS)]
            parts.append(("all flows", np.ones(len(ref), bool), "all"))
            fig = []
            for label, sel, tol in parts:
                for p, t in zip((0.5, 0.99), TOL[tol], strict=True):
                    want, got = _pctl(ref_sd[sel], p), _pctl(sim_sd[sel], p)
                    fig.append((label, p, want, got))
                    rows.append(
                        Row(
                            f"fat-tree {name}: FCT slowdown p{round(p * 100)}, {label} "
                            f"({int(sel.sum())} flows)",
                            "",
                            want,
                            got,
                            t,
                            evidence="reference",
                            point=point,
                            known_deviation=_FAT_TREE_NOTES.get((cc, label, p), ""),
                        )
                    )
            figure.append((name, fig))
    _plot_fat_tree(ctx, figure)
    return rows


def _plot_fat_tree(ctx, figure) -> None:
    from matplotlib.figure import Figure

    rows = (len(figure) + 1) // 2  # two panels a row
    fig = Figure(figsize=(10, 3.8 * rows))
    axes = np.atleast_1d(fig.subplots(rows, 2, sharey=True, squeeze=False)).ravel()
    for ax, (name, points) in zip(axes, figure, strict=False):
        labels = list(dict.fromkeys(p[0] for p in points))
        x = np.arange(len(labels))
        for p, marker in ((0.5, "o"), (0.99, "s")):
            want = [w for lab in labels for (l2, q, w, _) in points if l2 == lab and q == p]
            got = [g for lab in labels for (l2, q, _, g) in points if l2 == lab and q == p]
            tag = f"p{round(p * 100)}"
            ax.plot(x - 0.08, want, marker, color="C0", label=f"ns3-datacenter {tag}")
            ax.plot(x + 0.08, got, marker, color="C1", mfc="none", label=f"lfsim {tag}")
        ax.set_xticks(x, labels, rotation=20, fontsize=8)
        ax.set_yscale("log")
        ax.set_title(f"k=4 fat-tree, web search 30 %, {name}", fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes[len(figure) :]:
        ax.set_visible(False)
    for ax in axes[::2]:
        ax.set_ylabel("FCT slowdown")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("fat_tree"), dpi=110)


def _reference_goodput(cc: str) -> np.ndarray:
    t = pd.read_csv(_data() / "fairness8" / cc / "throughput.csv", comment="#")
    return t.sort_values("src")["payload_Gbps"].to_numpy(dtype=float)


def _jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def _incast(ctx) -> list[Row]:
    rows: list[Row] = []
    bars = []
    stop, warmup = WINDOW
    with tempfile.TemporaryDirectory() as tmp:
        for name, cc, flags in CCS:
            want = _reference_goodput(cc)
            yaml = _convert("fairness8", "fairness", flags, Path(tmp))
            r = ctx.run(yaml, {"stop_time": stop, "Report.Warmup": warmup})
            got = np.asarray(r.metrics["per_flow_goodput_Gbps"], dtype=float)
            point = f"{FOLDER}/fairness8/{cc}/throughput.csv"
            head = f"incast 8 to 1, 40 GbE, {name}, 15-30 ms:"
            note = {
                k: _INCAST_NOTES.get((cc, k), "") for k in ("total", "jain", "slowest", "fastest")
            }
            tol_total, tol_jain, tol_extreme = TOL_INCAST.get(
                cc, (TOL_TOTAL, TOL_JAIN, TOL_EXTREME)
            )
            rows += [
                Row(
                    f"{head} total goodput of the 8 flows",
                    "Gb/s",
                    float(want.sum()),
                    float(got.sum()),
                    tol_total,
                    evidence="reference",
                    point=point,
                    known_deviation=note["total"],
                ),
                Row(
                    f"{head} Jain's index of the flows' goodput",
                    "",
                    _jain(want),
                    _jain(got),
                    tol_jain,
                    kind="absolute",
                    evidence="reference",
                    point=point,
                    known_deviation=note["jain"],
                ),
                Row(
                    f"{head} the slowest flow's goodput",
                    "Gb/s",
                    float(want.min()),
                    float(got.min()),
                    tol_extreme,
                    evidence="reference",
                    point=point,
                    known_deviation=note["slowest"],
                ),
                Row(
                    f"{head} the fastest flow's goodput",
                    "Gb/s",
                    float(want.max()),
                    float(got.max()),
                    tol_extreme,
                    evidence="reference",
                    point=point,
                    known_deviation=note["fastest"],
                ),
            ]
            bars.append((name, np.sort(want), np.sort(got)))
    _plot_incast(ctx, bars)
    return rows


def _plot_incast(ctx, bars) -> None:
    from matplotlib.figure import Figure

    rows = (len(bars) + 1) // 2  # two panels a row
    fig = Figure(figsize=(9, 3.4 * rows))
    axes = np.atleast_1d(fig.subplots(rows, 2, sharey=True, squeeze=False)).ravel()
    for ax, (name, want, got) in zip(axes, bars, strict=False):
        x = np.arange(len(want))
        ax.bar(x - 0.2, want, 0.4, label="ns3-datacenter")
        ax.bar(x + 0.2, got, 0.4, label="lfsim")
        ax.set_xticks(x, [str(i + 1) for i in x])
        ax.set_xlabel("flows, slowest to fastest")
        ax.set_title(f"8 long flows into 40 GbE, {name}, 15-30 ms", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[len(bars) :]:
        ax.set_visible(False)
    for ax in axes[::2]:
        ax.set_ylabel("goodput (Gb/s)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(ctx.plot_path("incast"), dpi=110)


CASES = [
    Case(
        "ns3_datacenter_fat_tree",
        source="ns3_datacenter/fat_tree/{dcqcn,hpcc,powertcp,thetapowertcp}/fct.txt: "
        "ns3-datacenter 6ddb4a4, "
        "powertcp-evaluation-burst on fat_tree/{topology,flow,config}.txt",
        note="nothing calibrated: the scenario is what lfsim convert hpcc makes of the files",
        evaluate=_fat_tree,
    ),
    Case(
        "ns3_datacenter_incast",
        source="ns3_datacenter/fairness8/{dcqcn,hpcc,powertcp,thetapowertcp}/throughput.csv: "
        "ns3-datacenter 6ddb4a4, "
        "powertcp-evaluation-fairness on fairness8/{topology,flow,config}.txt",
        note="nothing calibrated: the scenario is what lfsim convert hpcc makes of the files",
        evaluate=_incast,
    ),
]
