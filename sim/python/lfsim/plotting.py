"""PNG plots of a Result: one per recorded series, one per table.

Figures are built with matplotlib's object API on the Agg canvas, without pyplot, so that
plotting never changes the backend of an interactive session (e.g. a notebook). What they show
(series per id, blocked spells, the wait-for cycle, the fabric's graph and layout, workloads,
heat-map tables) is computed in ``plotdata``, without matplotlib; this module only draws.
Importing it loads matplotlib: ``runner`` and ``sweep`` import it when figures are asked for.

Most series get the generic plot (each value column against time, one line per id). A few
recorders have a plot of their own, chosen by recorder name and columns (``SPECIAL``):
``queue`` (bytes: the ports with the highest peaks, in KiB), ``pause`` (prio, quanta, dir: a
raster of the PAUSE frames each port sent), ``goodput`` (goodput_Gbps: per flow, plus their
total), ``rate`` (rate_Gbps: per queue pair) and ``blocked`` (blocked, bytes: a pause map, the
blocked spells of every queue, with the deadlock's cycle and instants from the metrics).

Tables: the shared report's get figures of their own (``plot_result``). ``flows`` (per flow:
FCT, slowdown, goodput) -> ``flows.png``, the CDF over the flows of each, one line per
workload; ``slowdown_by_size`` -> ``slowdown_by_size.png``, the FCT slowdown (p50, p99, log
scale) per flow-size bucket, when the run has flows; ``links`` -> ``topology.png`` (its
switches and hosts, and, after a deadlock, the wait-for cycle as arrows along the ring links)
and ``link_util.png`` (a histogram of the utilisation of every link direction). Other tables
keyed by ``id`` get one bar per row up to ``MAX_BARS`` rows, a CDF per column beyond; tables
keyed by a value (e.g. ``pingpong``'s ``size_bytes``) a line per column against it.

Column units follow their suffix (``axis_label``), as ``lfsim.metrics`` defines them: ``_KiB``
1024 bytes, ``_MiBps`` 2^20 bytes per second, ``_Gbps`` 10^9 bits per second.

Sweeps get heat maps (``plot_heatmaps``): one metric over two grid keys, one panel per value of
a third.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch
from matplotlib.ticker import FuncFormatter

from . import core as _core
from .display import fmt_number
from .plotdata import (
    RunResult,
    blocked_spells,
    cycle_hops,
    cycle_queue_bytes,
    deadlock_cycle,
    end_time,
    grid_values,
    heatmap_data,
    id_groups,
    is_host_port,
    labels_of,
    metric_seconds,
    natural_key,
    topology_graph,
    topology_layout,
    workload_of,
)

if TYPE_CHECKING:
    import pandas as pd

# Column-name suffix -> unit shown on the axis ("throughput_MiBps" -> "throughput (MiB/s)").
UNITS = {
    "s": "s",
    "ms": "ms",
    "us": "µs",
    "ns": "ns",
    "ps": "ps",
    "B": "B",
    "bytes": "B",
    "KiB": "KiB",
    "MiB": "MiB",
    "KB": "kB",
    "MB": "MB",
    "GB": "GB",
    "KBps": "KB/s",
    "MBps": "MB/s",
    "MiBps": "MiB/s",
    "GBps": "GB/s",
    "bps": "bit/s",
    "Kbps": "kbit/s",
    "Mbps": "Mbit/s",
    "Gbps": "Gbit/s",
    "pct": "%",
    "m": "m",
    "km": "km",
    "Hz": "Hz",
    "IOPS": "IO/s",
    "iops": "IO/s",
}
_TIME_SCALES = (("s", 1.0), ("ms", 1e3), ("us", 1e6), ("ns", 1e9))
MAX_LEGEND = 20


def axis_label(column: str) -> str:
    if column in COLUMN_LABELS:
        return COLUMN_LABELS[column]
    base, _, suffix = column.rpartition("_")
    if base and suffix in UNITS:
        return f"{base.replace('_', ' ')} ({UNITS[suffix]})"
    return column.replace("_", " ")


def time_scale(t_max: float) -> tuple[str, float]:
    """The largest unit in which the run's duration is at least 1 (2 ms -> ms)."""
    for unit, factor in _TIME_SCALES:
        if t_max * factor >= 1.0:
            return unit, factor
    return _TIME_SCALES[-1]


def _new_figure(rows: int):
    fig = Figure(figsize=(8.0, 1.2 + 2.4 * rows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return fig, axes


def plot_series(
    df: pd.DataFrame, title: str, path: Path, end_s: float | None = None
) -> Path | None:
    """Each value column against time, one line per id; ``end_s``: the run's end time."""
    values = [c for c in df.columns if c not in ("time_s", "id", "label")]
    if not values or "time_s" not in df.columns:
        return None
    t = df["time_s"].to_numpy()
    t_end = max(end_s or 0.0, float(np.nanmax(t)) if len(t) else 0.0)
    unit, factor = time_scale(t_end)
    t = t * factor
    groups = id_groups(df)
    fig, axes = _new_figure(len(values))
    for ax, col in zip(axes, values, strict=True):
        v = df[col].to_numpy()
        for label, idx in groups:
            if not len(idx):
                continue
            # steps-post: a recorded value holds until the next sample or change, so the last
            # one is drawn up to the end of the run (a value set once would be invisible).
            ts = np.append(t[idx], t_end * factor)
            vs = np.append(v[idx], v[idx[-1]])
            ax.plot(ts, vs, drawstyle="steps-post", linewidth=1.0, label=label or None)
        ax.set_ylabel(axis_label(col))
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(f"simulated time ({UNITS[unit]})")
    if 1 < len(groups) <= MAX_LEGEND or (len(groups) == 1 and groups[0][0]):
        # Outside the axes: with many ports a legend inside would hide the data.
        axes[0].legend(
            fontsize="small",
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            ncols=2 if len(groups) > 10 else 1,
        )
    elif len(groups) > MAX_LEGEND:
        title += f" ({len(groups)} ids)"
    fig.suptitle(textwrap.fill(title, 90))
    fig.savefig(path, dpi=110)
    return path


# ---------------------------------------------------------------------------------------------
# Plots of particular recorders (RoCE incast: queues, PFC pauses, per-flow goodput and rates).
# Each ``*_figure(df, title, end_s)`` returns a Figure, or None when the columns are not the
# expected ones (then the generic plot is used).

TOP_QUEUES = 8  # queue plot: this many ports, those with the highest peaks
MAX_PAUSE_ROWS = 40  # pause raster: at most this many ports, those that sent most XOFFs
_MAX_POINTS = 20000  # per line; longer ones are reduced per time bin


def _reduce(t: np.ndarray, v: np.ndarray, how: str, bins: int = 4000):
    """A long series -> one point per time bin: its maximum (``"max"``: queue peaks stay
    visible) or its mean (``"mean"``: rates). Short series are returned unchanged."""
    if len(t) <= _MAX_POINTS:
        return t, v
    edges = np.linspace(t[0], t[-1], bins + 1)
    which = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1)
    count = np.bincount(which, minlength=bins)
    keep = count > 0
    if how == "max":
        out = np.full(bins, -np.inf)
        np.maximum.at(out, which, v)
    else:
        out = np.bincount(which, weights=v, minlength=bins) / np.maximum(count, 1)
    return edges[:-1][keep], out[keep]


def _legend(ax, n: int) -> None:
    if n:
        ax.legend(
            fontsize="small",
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            ncols=2 if n > 10 else 1,
        )


KIB = 1024  # the queue plot's unit, as in the *_KiB metrics


def queue_figure(df: pd.DataFrame, title: str, end_s: float | None = None):
    """Egress queue in KiB over time for the ``TOP_QUEUES`` ports with the highest peak."""
    if not {"time_s", "id", "bytes"} <= set(df.columns):
        return None
    t_end = end_time(df, end_s)
    unit, factor = time_scale(t_end)
    t_all = df["time_s"].to_numpy()
    v_all = df["bytes"].to_numpy() / KIB
    groups = id_groups(df)
    peaks = [(float(np.nanmax(v_all[idx])), label, idx) for label, idx in groups if len(idx)]
    peaks.sort(key=lambda p: -p[0])
    shown = [p for p in peaks if p[0] > 0][:TOP_QUEUES]
    fig, axes = _new_figure(1)
    ax = axes[0]
    for peak, label, idx in shown:
        t, v = _reduce(t_all[idx], v_all[idx], "max")
        # A queue length holds until its next change or sample: steps to the end of the run.
        ax.plot(
            np.append(t, t_end) * factor,
            np.append(v, v[-1]),
            drawstyle="steps-post",
            linewidth=1.0,
            label=f"{label} (peak {peak:.4g} KiB)",
        )
    if not shown:
        ax.text(0.5, 0.5, "no queue build-up at any port", ha="center", transform=ax.transAxes)
        ax.set_xlim(0, t_end * factor or 1.0)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("egress queue (KiB)")
    ax.set_xlabel(f"simulated time ({UNITS[unit]})")
    ax.grid(alpha=0.3)
    _legend(ax, len(shown))
    if len(groups) > len(shown):
        title += f" (top {len(shown)} of {len(groups)} ports by peak)"
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def _timeline_axes(ax, names: list[str], x_end: float, unit: str, empty: str) -> None:
    """One labelled row per name over simulated time (pause timeline, pause map)."""
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(-0.7, max(len(names), 1) - 0.3)
    ax.set_xlim(0, x_end or 1.0)
    ax.set_xlabel(f"simulated time ({UNITS[unit]})")
    ax.grid(alpha=0.3, axis="x")
    if not names:
        ax.text(0.5, 0.5, empty, ha="center", transform=ax.transAxes)


def pause_figure(df: pd.DataFrame, title: str, end_s: float | None = None):
    """Raster of PFC PAUSE frames: one row per port that sent any, a tick per XOFF (quanta >
    0), a short grey tick per XON (quanta 0); each row names its counts."""
    if not {"time_s", "id", "prio", "quanta", "dir"} <= set(df.columns):
        return None
    t_end = end_time(df, end_s)
    unit, factor = time_scale(t_end)
    direction = df["dir"].to_numpy()
    sent = df[direction == 0]
    received = int((direction == 1).sum())
    t = sent["time_s"].to_numpy() * factor
    xoff = sent["quanta"].to_numpy() > 0
    prio = sent["prio"].to_numpy()
    rows = [
        (int(xoff[idx].sum()), int((~xoff[idx]).sum()), label, idx)
        for label, idx in (id_groups(sent) if len(sent) else [])
    ]
    rows.sort(key=lambda r: (-r[0], -r[1]))
    total_rows = len(rows)
    rows = rows[:MAX_PAUSE_ROWS]
    rows.reverse()  # the busiest port at the top

    fig = Figure(figsize=(8.0, 1.8 + 0.28 * max(len(rows), 3)), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    prios = sorted({int(p) for p in prio[xoff]})
    colors = {p: f"C{i % 10}" for i, p in enumerate(prios)}
    for y, (_, _, _, idx) in enumerate(rows):
        on = idx[xoff[idx]]
        off = idx[~xoff[idx]]
        for p in prios:
            sel = on[prio[on] == p]
            if len(sel):
                ax.vlines(t[sel], y - 0.4, y + 0.4, colors=colors[p], linewidth=0.8)
        if len(off):
            ax.vlines(t[off], y - 0.15, y + 0.15, colors="0.6", linewidth=0.6)
    names = [f"{label}  ({n_on} XOFF, {n_off} XON)" for n_on, n_off, label, _ in rows]
    _timeline_axes(ax, names, t_end * factor, unit, "no PAUSE frames sent")
    if len(prios) > 1:
        handles = [Line2D([], [], color=colors[p], label=f"priority {p}") for p in prios]
        ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    n_xoff = int(xoff.sum())
    title += f" — PAUSE sent: {n_xoff} XOFF, {len(sent) - n_xoff} XON; {received} received"
    if total_rows > len(rows):
        title += f" (top {len(rows)} of {total_rows} ports)"
    fig.suptitle(textwrap.fill(title, 90))
    return fig


GREY_FLOWS = 6  # a workload of more flows than this: its flows thin and grey under its total
SMOOTH_MIN_SAMPLES = 100  # a line of at least this many samples is drawn as a moving average
SMOOTH_SHARE = 1 / 60  # ... over this share of the run


def _moving_average(v: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last ``window`` samples (fewer at the start): the same mean over the run."""
    if window <= 1:
        return v
    c = np.cumsum(np.r_[0.0, np.nan_to_num(v)])
    n = np.arange(1, len(v) + 1)
    lo = np.maximum(n - window, 0)
    return (c[n] - c[lo]) / (n - lo)


def flows_figure(
    df: pd.DataFrame,
    title: str,
    end_s: float | None = None,
    total: bool = False,
    workload_of: Mapping[str, str] | None = None,
    smooth: bool = False,
):
    """One sampled value per flow (goodput, rate) against time; ``total``: add their sum, one
    per workload when ``workload_of`` (flow label -> workload) names several, as the metrics
    (``total_goodput_Gbps``, ``victim_goodput_Gbps``) are per workload.

    A workload of many flows (``GREY_FLOWS``) has its flows drawn thin and grey under its total,
    one legend entry for them all; a long sampled series (a value per sample interval jumps
    with each packet; ``smooth``, for a quantity per sample interval such as goodput, not a state
    such as a rate) is drawn as a moving average over 1/60 of the run, which the axis says."""
    values = [c for c in df.columns if c not in ("time_s", "id", "label")]
    if len(values) != 1 or "time_s" not in df.columns:
        return None
    col = values[0]
    t_end = end_time(df, end_s)
    unit, factor = time_scale(t_end)
    t_all = df["time_s"].to_numpy()
    v_all = df[col].to_numpy()
    groups = [(label, idx) for label, idx in id_groups(df) if len(idx)]
    fig, axes = _new_figure(1)
    ax = axes[0]
    parts = {"": groups}
    if workload_of and len({workload_of.get(label, "") for label, _ in groups}) > 1:
        parts = {}
        for label, idx in groups:
            parts.setdefault(workload_of.get(label, ""), []).append((label, idx))
    first = t_all[groups[0][1]] if groups else t_all
    window = 1
    if smooth and len(first) >= SMOOTH_MIN_SAMPLES:
        step = float(np.median(np.diff(first)))
        window = max(1, int(round(t_end * SMOOTH_SHARE / step))) if step > 0 else 1

    def line(idx_t, v):
        t, v = _reduce(idx_t, _moving_average(v, window), "mean")
        return t * factor, v

    n_legend = 0
    for name, members in parts.items():
        grey = len(members) > GREY_FLOWS
        for j, (label, idx) in enumerate(members):
            if grey:
                who = f"{name}: each of its {len(members)} flows" if name else (
                    f"each of {len(members)} flows"
                )  # fmt: skip
                ax.plot(*line(t_all[idx], v_all[idx]), color="0.7", linewidth=0.5,
                        label=who if j == 0 else None)  # fmt: skip
            else:
                # With several workloads a flow says whose it is (victim: h17>h18).
                named = f"{name}: {label}" if name and name != label else label
                ax.plot(*line(t_all[idx], v_all[idx]), linewidth=1.0, label=named or None)
        n_legend += 1 if grey else len(members)
    same_instants = all(np.array_equal(t_all[idx], first) for _, idx in groups)
    if total and (len(groups) > 1 or len(parts) > 1) and same_instants:
        # Every flow sampled at the same instants: their sum is the aggregate.
        for k, (name, members) in enumerate(parts.items()):
            if len(parts) > 1 and len(members) == 1:
                continue  # a one-flow workload: its total is its flow's own line
            sums = np.zeros(len(first))
            for _, idx in members:
                sums += np.nan_to_num(v_all[idx])
            style = ("-", "--", "-.", ":")[k % 4]
            label = f"{name} total" if name else "total"
            ax.plot(*line(first, sums), color="black", linestyle=style, linewidth=1.4, label=label)
            n_legend += 1
    ax.set_xlim(0, t_end * factor or 1.0)
    ax.set_ylim(bottom=0)
    ylabel = axis_label(col)
    if window > 1:
        span = window * float(np.median(np.diff(first))) * factor
        ylabel += f"\nmean over {span:.3g} {UNITS[unit]}"
    ax.set_ylabel(ylabel)
    ax.set_xlabel(f"simulated time ({UNITS[unit]})")
    ax.grid(alpha=0.3)
    _legend(ax, n_legend)
    if len(groups) > GREY_FLOWS:
        title += f" ({len(groups)} flows)"
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def goodput_figure(
    df: pd.DataFrame,
    title: str,
    end_s: float | None = None,
    workload_of: Mapping[str, str] | None = None,
):
    """Per-flow goodput and the total per workload; None for other columns (FC's
    goodput_MiBps: generic)."""
    if "goodput_Gbps" not in df.columns:
        return None
    return flows_figure(df, title, end_s, total=True, workload_of=workload_of, smooth=True)


def rate_figure(df: pd.DataFrame, title: str, end_s: float | None = None):
    """Sending rate of each queue pair."""
    if "rate_Gbps" not in df.columns:
        return None
    return flows_figure(df, title, end_s)


# ---------------------------------------------------------------------------------------------
# Deadlocks: the pause map of the ``blocked`` recorder and the topology with the wait-for cycle.
#
# What they show (the spells, the cycle, the graph and its layout) comes from ``plotdata``.

MAX_BLOCKED_ROWS = 40  # pause map: at most this many queues (the cycle's first, then longest)
CYCLE_COLOR = "tab:red"
CYCLE_OTHER_COLOR = "#f2a7a7"  # a cycle member's spells outside the deadlock
BLOCKED_COLOR = "tab:blue"
# Routes on the topology: any colour but the cycle's red.
ROUTE_COLORS = ("tab:green", "tab:purple", "tab:orange", "tab:brown", "tab:cyan", "tab:olive")
MAX_NAMED_NODES = 32  # topology: with more hosts (or switches) only every few is named


def blocked_figure(
    df: pd.DataFrame, title: str, end_s: float | None = None, metrics: Mapping | None = None
):
    """Pause map: one row per queue that was ever blocked, its blocked spells as bars; the
    members of the deadlock's cycle (``metrics["deadlock_cycle"]``) on top, the spell in which
    the cycle formed in red (their other spells light red), vertical lines when the cycle
    formed, was detected and (if it did) dissolved."""
    if not {"time_s", "id", "blocked"} <= set(df.columns):
        return None
    t_end = end_time(df, end_s)
    unit, factor = time_scale(t_end)
    spells = blocked_spells(df, t_end)
    cycle = deadlock_cycle(metrics)
    in_cycle = set(cycle)
    busy = spells.assign(d=spells["end_s"] - spells["start_s"]).groupby("queue", sort=False)
    blocked_time = busy["d"].sum() if len(spells) else {}
    others = sorted(
        (q for q in blocked_time.keys() if q not in in_cycle),
        key=lambda q: (-blocked_time[q], natural_key(q)),
    )
    rows = [q for q in cycle if q in blocked_time] + others
    total_rows = len(rows)
    rows = rows[:MAX_BLOCKED_ROWS]

    fig = Figure(figsize=(9.0, 2.0 + 0.28 * max(len(rows), 3)), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    by_queue = {q: part for q, part in spells.groupby("queue", sort=False)} if len(spells) else {}
    formed = metric_seconds(metrics, "deadlock_time_us") if in_cycle else None
    other_cycle_spells = False
    names = []
    for y, q in enumerate(reversed(rows)):  # the first row at the top
        part = by_queue[q]
        start = part["start_s"].to_numpy()
        end = part["end_s"].to_numpy()
        if q not in in_cycle:
            colored = [(BLOCKED_COLOR, np.ones(len(part), dtype=bool))]
        elif formed is None:
            colored = [(CYCLE_COLOR, np.ones(len(part), dtype=bool))]
        else:
            # The spell in which the cycle formed, and the member's other spells (before, or
            # after the cycle dissolved) in a lighter red.
            # (The series stamps a spell where the detector first saw it; the cycle formed at
            # the latest start of its members' current spells, so it lies within the spell.)
            cycle_spell = (start <= formed + 1e-12) & (end >= formed)
            colored = [(CYCLE_COLOR, cycle_spell), (CYCLE_OTHER_COLOR, ~cycle_spell)]
            other_cycle_spells = other_cycle_spells or bool((~cycle_spell).any())
        for color, sel in colored:
            if sel.any():
                bars = zip(start[sel] * factor, (end[sel] - start[sel]) * factor, strict=True)
                ax.broken_barh(list(bars), (y - 0.38, 0.76), facecolors=color, linewidth=0)
        share = blocked_time[q] / t_end if t_end > 0 else 0.0
        spells_text = "1 spell" if len(part) == 1 else f"{len(part)} spells"
        names.append(f"{q}  ({spells_text}, {share:.0%} of the run)")
    _timeline_axes(ax, names, t_end * factor, unit, "no queue was ever blocked")

    handles = []
    if in_cycle:
        handles.append(Patch(color=CYCLE_COLOR, label="queue of the wait-for cycle"))
    if other_cycle_spells:
        handles.append(Patch(color=CYCLE_OTHER_COLOR, label="its other blocked spells"))
    if others:
        other = "other blocked queue" if in_cycle else "blocked queue"
        handles.append(Patch(color=BLOCKED_COLOR, label=other))
    for key, text, style in (
        ("deadlock_time_us", "cycle formed", "--"),
        ("deadlock_detected_us", "detected", ":"),
        ("deadlock_cleared_us", "cleared", "-."),
    ):
        at = metric_seconds(metrics, key) if in_cycle else None
        if at is not None:
            handles.append(
                ax.axvline(
                    at * factor,
                    color="black" if key != "deadlock_cleared_us" else "tab:green",
                    linestyle=style,
                    linewidth=1.2,
                    label=f"{text} at {at * factor:.6g} {UNITS[unit]}",
                )
            )
    if handles:
        ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    if in_cycle:
        title += f" — deadlock: cycle of {len(cycle)} queues"
    elif metrics is not None and "deadlock" in metrics:
        title += " — no deadlock"
    title += f"; {total_rows} queues ever blocked"
    if total_rows > len(rows):
        title += f" (the {len(rows)} blocked longest shown)"
    fig.suptitle(textwrap.fill(title, 100))
    return fig


def _format_bytes(n: float) -> str:
    """Bytes in the binary units of the metrics (KiB, MiB)."""
    for unit, scale in (("MiB", 1024.0**2), ("KiB", 1024.0)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def topology_figure(
    links: pd.DataFrame,
    port_labels: Sequence[str],
    title: str = "topology",
    metrics: Mapping | None = None,
    queue_bytes: Mapping[str, float] | None = None,
    routes: Mapping[str, Sequence[str]] | None = None,
):
    """The fabric's switches (squares) and hosts (circles). After a deadlock
    (``metrics["deadlock"]``), the wait-for cycle as bold red arrows from each member's switch
    to the switch at the other end of its port's cable, each named by its queue and its bytes
    (``queue_bytes``: queue label -> bytes, e.g. from ``blocked_spells``); the frozen total
    (``deadlock_frozen_bytes``) in the middle. ``routes``: name -> node path, drawn as thin
    coloured arrows."""
    g = topology_graph(links, port_labels)
    pos = topology_layout(g)
    fig = Figure(figsize=(7.5, 7.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.set_aspect("equal")
    ax.set_axis_off()
    for u, v in g.edges():
        host_link = "host" in (g.nodes[u]["kind"], g.nodes[v]["kind"])
        (x0, y0), (x1, y1) = pos[u], pos[v]
        ax.plot([x0, x1], [y0, y1], color="0.6", linewidth=1.0 if host_link else 2.5, zorder=1)
    for kind, marker, size, color in (("switch", "s", 900, "#cfe0f3"), ("host", "o", 420, "0.92")):
        nodes = [n for n, k in g.nodes(data="kind") if k == kind]
        crowded = len(nodes) > MAX_NAMED_NODES
        if nodes:
            xy = np.array([pos[n] for n in nodes])
            size = min(size, 12000 / len(nodes))  # many hosts: smaller markers
            ax.scatter(
                xy[:, 0], xy[:, 1], s=size, marker=marker, c=color, edgecolors="0.3", zorder=3
            )
        for n in nodes[:: max(1, len(nodes) // 8) if crowded else 1]:
            # Too many to name each: every few, below the marker.
            ax.text(
                pos[n][0],
                pos[n][1] - (0.12 if crowded else 0.0),
                n,
                ha="center",
                va="center",
                fontsize="x-small" if crowded else "small",
                zorder=4,
            )

    def arrow(u, v, color, width, rad, label=None):
        ax.add_patch(
            FancyArrowPatch(
                pos[u],
                pos[v],
                connectionstyle=f"arc3,rad={rad}",
                arrowstyle="-|>",
                mutation_scale=12 + 4 * width,
                linewidth=width,
                color=color,
                shrinkA=17,
                shrinkB=17,
                zorder=2,
                label=label,
            )
        )

    handles = []
    for i, (name, path) in enumerate((routes or {}).items()):
        color = ROUTE_COLORS[i % len(ROUTE_COLORS)]
        steps = [(u, v) for u, v in zip(path[:-1], path[1:], strict=True) if u in pos and v in pos]
        for k, (u, v) in enumerate(steps):
            arrow(u, v, color, 1.2, -0.12 - 0.06 * (i % 4), label=name if k == 0 else None)
        if steps:
            handles.append(ax.patches[-len(steps)])
    cycle = deadlock_cycle(metrics)
    hops = cycle_hops(cycle, links, port_labels) if cycle else []
    centre = np.mean([pos[u] for _, u, _ in hops], axis=0) if hops else np.zeros(2)
    for j, (q, u, v) in enumerate(hops):
        arrow(u, v, CYCLE_COLOR, 3.5, 0.2, label="wait-for cycle" if j == 0 else None)
        if j == 0:
            handles.append(ax.patches[-1])
        # The queue's name beside its link, on the side away from the cycle's middle.
        mid = (np.asarray(pos[u]) + np.asarray(pos[v])) / 2
        away = mid - centre
        if np.hypot(*away) < 1e-9:
            away = np.array([pos[u][1] - pos[v][1], pos[v][0] - pos[u][0]])
        at = mid + 0.2 * away / max(np.hypot(*away), 1e-9)
        text = q if q not in (queue_bytes or {}) else f"{q}\n{_format_bytes(queue_bytes[q])}"
        ax.text(
            *at,
            text,
            ha="center",
            va="center",
            fontsize="x-small",
            color=CYCLE_COLOR,
            zorder=5,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1},
        )
    if hops:
        frozen = (metrics or {}).get("deadlock_frozen_bytes")
        lines = [f"cycle of {len(cycle)} queues"]
        if isinstance(frozen, int | float) and np.isfinite(frozen):
            lines.append(f"{_format_bytes(frozen)} frozen")
        ax.text(*centre, "\n".join(lines), ha="center", va="center", color=CYCLE_COLOR)
    if handles:
        ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    xy = np.array(list(pos.values())) if pos else np.zeros((1, 2))
    pad = 0.35
    ax.set_xlim(xy[:, 0].min() - pad, xy[:, 0].max() + pad)
    ax.set_ylim(xy[:, 1].min() - pad, xy[:, 1].max() + pad)
    n_sw = sum(1 for _, k in g.nodes(data="kind") if k == "switch")
    title += f" — {n_sw} switches, {g.number_of_nodes() - n_sw} hosts, {len(links)} cables"
    if metrics is not None and "deadlock" in metrics:
        title += "; deadlock" if hops else "; no deadlock"
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def plot_topology(result: RunResult, path: Path) -> Path | None:
    """``topology_figure`` of a result with a ``links`` table, written to ``path``; the cycle
    is drawn when the run deadlocked. None without a links table or its port labels."""
    ports = labels_of(result, "links")
    if "links" not in result.table_names or not ports:
        return None
    title = f"{result.summary['scenario']}" + (f" ({result.mode})" if result.mode else "")
    fig = topology_figure(
        result.table("links"), ports, title, result.metrics, cycle_queue_bytes(result)
    )
    fig.savefig(path, dpi=110)
    return path


# Recorder name -> figure builder; a builder returning None (not the expected columns) leaves
# the series to the generic plot_series.
SPECIAL = {
    "queue": queue_figure,
    "pause": pause_figure,
    "goodput": goodput_figure,
    "rate": rate_figure,
    "blocked": blocked_figure,
}
# Builders that also take the run's metrics (the deadlock's cycle and instants).
WITH_METRICS = {"blocked"}


def plot_special(
    name: str,
    df: pd.DataFrame,
    title: str,
    path: Path,
    end_s: float | None = None,
    metrics: Mapping | None = None,
) -> Path | None:
    """The recorder's own plot written to ``path``; None if it has none for these columns."""
    build = SPECIAL.get(name)
    if build is None:
        return None
    fig = build(df, title, end_s, metrics) if name in WITH_METRICS else build(df, title, end_s)
    if fig is None:
        return None
    fig.savefig(path, dpi=110)
    return path


# ---------------------------------------------------------------------------------------------
# Tables. The shared report's (flows, slowdown_by_size, links) have figures of their own; other
# tables keyed by id get bars (few rows) or a CDF per column (many rows).

MAX_BARS = 20  # an id table with more rows than this gets CDFs instead of bars
# Columns of id tables that name or place a row rather than measure it: not plotted.
ROW_KEYS = (
    "id", "label", "workload", "workload_label", "src", "src_label", "dst", "dst_label",
    "a", "a_label", "b", "b_label", "type_label",
)  # fmt: skip
FLOW_CDF_COLUMNS = ("fct_us", "slowdown", "goodput_Gbps")


def _table_figure(rows: int, height: float = 2.4):
    """A figure of ``rows`` panels one above the other, each with its own x axis."""
    fig = Figure(figsize=(8.0, 1.2 + height * rows), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(rows, 1, squeeze=False)[:, 0]


def _spans_decades(values: np.ndarray) -> bool:
    """Positive values whose largest is at least 100 times the smallest: a log axis."""
    v = values[np.isfinite(values)]
    return bool(len(v)) and v.min() > 0 and v.max() / v.min() >= 100


def _cdf(ax, values: np.ndarray, label: str | None = None, **style) -> int:
    """The empirical CDF of the finite values as steps (fraction of rows at or below x);
    returns how many were drawn."""
    v = np.sort(values[np.isfinite(values)])
    if len(v):
        y = np.arange(1, len(v) + 1) / len(v)
        ax.step(np.r_[v[0], v], np.r_[0.0, y], where="post", label=label, **style)
    return len(v)


def flow_cdf_figure(df: pd.DataFrame, title: str, workloads: Sequence[str] | None = None):
    """The ``flows`` table as CDFs over the flows, one line per workload: FCT (mean over the
    flow's messages), slowdown (FCT / ideal FCT) and goodput. None without those columns."""
    cols = [c for c in FLOW_CDF_COLUMNS if c in df.columns]
    if "fct_us" not in cols or not len(df):
        return None
    fig, axes = _table_figure(len(cols), 2.2)
    if "workload" in df.columns and workloads:
        which = df["workload"].to_numpy().astype(int)
        groups = [(str(w), which == i) for i, w in enumerate(workloads) if (which == i).any()]
    else:
        groups = [("", np.ones(len(df), dtype=bool))]
    for ax, col in zip(axes, cols, strict=True):
        v_all = df[col].to_numpy(dtype=float)
        drawn = 0
        for name, sel in groups:
            n = _cdf(ax, v_all[sel], label=f"{name} ({int(sel.sum())} flows)" if name else None)
            drawn += n
        if _spans_decades(v_all):
            ax.set_xscale("log")
        if col == "slowdown":
            ax.axvline(1.0, color="0.5", linestyle=":", linewidth=1.0)
        ax.set_xlabel(FLOW_AXIS.get(col, axis_label(col)))
        ax.set_ylabel("fraction of flows")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        if not drawn:
            ax.text(0.5, 0.5, "no flow completed a message", ha="center", transform=ax.transAxes)
    if any(line.get_label() and not line.get_label().startswith("_") for line in axes[0].lines):
        axes[0].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    done = int(np.isfinite(df["fct_us"].to_numpy(dtype=float)).sum())
    title += f" — CDF over {len(df)} flows ({done} with a completed message)"
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def ios_figure(df: pd.DataFrame, title: str):
    """A storage run's ``ios`` table (one row per completed I/O): the latency CDF per direction
    (as fio's clat percentiles read), its histogram, and each I/O's latency against when it
    completed (a timeout, a retry or a failover stands out). None without those columns."""
    need = {"read", "submit_ns", "complete_ns"}
    if not need <= set(df.columns) or not len(df):
        return None
    lat_us = (df["complete_ns"].to_numpy(dtype=float) - df["submit_ns"].to_numpy(dtype=float)) / 1e3
    done_ms = df["complete_ns"].to_numpy(dtype=float) / 1e6
    read = df["read"].to_numpy(dtype=float) > 0
    fig, axes = _table_figure(3, 2.4)
    cdf, hist, scatter = axes
    log = _spans_decades(lat_us)
    finite = lat_us[np.isfinite(lat_us)]
    lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
    if hi - lo < 0.02 * max(abs(hi), 1e-9):
        # Every I/O took (nearly) the same time (QD1 on an idle fabric): a band of +-5 % around
        # it, not a axis of nanoseconds with an offset.
        lo, hi = 0.95 * lo, 1.05 * hi
    if log:
        bins = np.geomspace(lo, hi, 41)
    else:
        bins = np.linspace(lo, hi if hi > lo else lo + 1.0, 41)
    for name, sel, color in (("read", read, "C0"), ("write", ~read, "C1")):
        if not sel.any():
            continue
        v = lat_us[sel]
        p50, p99 = np.percentile(v, 50), np.percentile(v, 99)
        label = f"{name}: {int(sel.sum())} I/Os, p50 {p50:.4g} µs, p99 {p99:.4g} µs"
        _cdf(cdf, v, label=label, color=color)
        for q in (p50, p99):
            cdf.axvline(q, color=color, linestyle=":", linewidth=0.8)
        hist.hist(v, bins=bins, histtype="step", color=color, linewidth=1.2, label=name)
        scatter.scatter(done_ms[sel], v, s=4, color=color, label=name)
    if log:
        cdf.set_xscale("log")
        hist.set_xscale("log")
        scatter.set_yscale("log")
    cdf.set_xlabel("latency, submission to completion (µs)")
    cdf.set_ylabel("fraction of I/Os")
    cdf.set_ylim(0, 1.02)
    cdf.legend(fontsize="small", loc="lower right")
    hist.set_xlabel("latency, submission to completion (µs)")
    hist.set_ylabel("I/Os per bin")
    hist.legend(fontsize="small", loc="upper right")
    scatter.set_xlabel("completed at (simulated time, ms)")
    scatter.set_ylabel("latency (µs)")
    scatter.legend(fontsize="small", loc="upper right", markerscale=3)
    if not log:
        cdf.set_xlim(lo, hi)
        hist.set_xlim(lo, hi)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.ticklabel_format(axis="both", style="plain", useOffset=False)
    fig.suptitle(textwrap.fill(f"{title} — {len(df)} I/Os completed", 90))
    return fig


FLOW_AXIS = {
    "fct_us": "flow completion time, mean over the flow's messages (µs)",
    "slowdown": "FCT slowdown of the flow (its mean FCT / ideal FCT on the empty fabric)",
    "goodput_Gbps": "goodput of the flow (Gbit/s)",
}


def size_text(n: float) -> str:
    """A bucket bound in bytes, as given (decimal): 10000 -> '10 kB', 1e6 -> '1 MB'."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n:g} B"


def bucket_names(lo: np.ndarray, hi: np.ndarray) -> list[str]:
    """'< 10 kB', '10 kB - 100 kB', ..., '>= 10 MB' for the buckets [lo, hi)."""
    names = []
    for a, b in zip(lo, hi, strict=True):
        if a <= 0:
            names.append(f"< {size_text(b)}")
        elif not np.isfinite(b):
            names.append(f">= {size_text(a)}")
        else:
            names.append(f"{size_text(a)} - {size_text(b)}")
    return names


def slowdown_figure(df: pd.DataFrame, title: str):
    """FCT slowdown per flow-size bucket (``slowdown_by_size``): p50 and p99 on a log scale,
    each bucket named by its sizes and its number of messages. None for other columns."""
    if not {"size_lo_bytes", "size_hi_bytes", "messages", "p50", "p99"} <= set(df.columns):
        return None
    lo, hi = df["size_lo_bytes"].to_numpy(dtype=float), df["size_hi_bytes"].to_numpy(dtype=float)
    count = df["messages"].to_numpy(dtype=float)
    p50, p99 = df["p50"].to_numpy(dtype=float), df["p99"].to_numpy(dtype=float)
    fig, axes = _table_figure(1, 3.4)
    ax = axes[0]
    x = np.arange(len(df))
    ok = (count > 0) & np.isfinite(p50) & np.isfinite(p99)
    ax.plot(x[ok], p99[ok], "s--", color="tab:red", label="p99")
    ax.plot(x[ok], p50[ok], "o-", color="tab:blue", label="p50")
    ax.axhline(1.0, color="0.5", linestyle=":", linewidth=1.0, label="1: the ideal FCT")
    ax.set_yscale("log")

    plain = FuncFormatter(lambda v, _: f"{v:g}")  # 2, 3, 4 rather than 2 x 10^0
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    names = [f"{n}\n{int(c)} msgs" for n, c in zip(bucket_names(lo, hi), count, strict=True)]
    ax.set_xticks(x, names, fontsize="small")
    ax.set_xlim(-0.5, len(df) - 0.5)
    ax.set_xlabel("message size (bucket of Report.SizeBuckets) and messages completed in it")
    ax.set_ylabel("FCT slowdown (FCT / ideal FCT)")
    ax.grid(alpha=0.3, which="both", axis="y")
    if ok.any():
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.text(0.5, 0.5, "no message completed after Warmup", ha="center", transform=ax.transAxes)
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def link_util_figure(links: pd.DataFrame, port_labels: Sequence[str], title: str):
    """Histogram of the utilisation of every link direction (``links``: util_ab, util_ba),
    host links and switch-to-switch links stacked. None for other columns."""
    if not {"a", "b", "util_ab", "util_ba"} <= set(links.columns):
        return None
    a = links["a"].to_numpy().astype(int)
    b = links["b"].to_numpy().astype(int)
    host = np.array(
        [
            is_host_port(port_labels[i]) or is_host_port(port_labels[j])
            for i, j in zip(a, b, strict=True)
        ],
        dtype=bool,
    )
    util = np.column_stack([links["util_ab"].to_numpy(float), links["util_ba"].to_numpy(float)])
    fig, axes = _table_figure(1, 3.0)
    ax = axes[0]
    bins = np.linspace(0.0, 1.0, 21)
    parts = [
        (np.clip(util[host].ravel(), 0, 1), "host links", "tab:gray"),
        (np.clip(util[~host].ravel(), 0, 1), "switch-to-switch links", "tab:blue"),
    ]
    parts = [p for p in parts if len(p[0])]
    if parts:
        ax.hist(
            [p[0] for p in parts],
            bins=bins,
            stacked=True,
            label=[f"{p[1]} ({len(p[0])} directions)" for p in parts],
            color=[p[2] for p in parts],
        )
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_xlim(0, 1)
    ax.set_xlabel("utilisation of one direction of a link over the run (fraction of line rate)")
    ax.set_ylabel("link directions")
    ax.grid(alpha=0.3, axis="y")
    if len(links):
        title += (
            f" — {len(links)} links, busiest direction {np.nanmax(util):.0%}, "
            f"mean {np.nanmean(util):.0%}"
        )
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def table_figure(df: pd.DataFrame, title: str, rows: str = "rows"):
    """A table without a figure of its own: keyed by id, one bar per row (up to ``MAX_BARS``
    rows) or the CDF of each column over the rows (``rows``: what a row is, e.g. "ports");
    keyed by a value (its first column), each other column against it. Columns with one value
    in every row are named in the title instead of drawn. None when there is nothing to draw."""
    cols = [c for c in df.columns if c != "label"]
    if len(cols) < 2 or not len(df) or (cols[0] == "id" and len(df) == 1):
        return None  # one row keyed by id has nothing to compare: its values are in the CSV
    x = cols[0]
    ys = [c for c in cols[1:] if c not in ROW_KEYS]
    if x != "id":
        # The same quantity in another unit (pingpong: size_KiB beside size_bytes) adds nothing.
        base = x.rpartition("_")[0] or x
        ys = [c for c in ys if (c.rpartition("_")[0] or c) != base]
    elif len(df) > 1:
        flat = [c for c in ys if df[c].nunique(dropna=False) == 1]
        if flat and len(flat) < len(ys):
            ys = [c for c in ys if c not in flat]
            same = ", ".join(f"{c} {df[c].iloc[0]:g}" for c in flat)
            title += f" (the same in every row: {same})"
    if not ys:
        return None
    if x == "id" and len(df) > MAX_BARS and "label" in df.columns:
        # Many named rows (the ports of a fabric): per column, the rows that carry something,
        # the largest first, by name; rows at zero are left out and counted.
        names = df["label"].astype(str).to_numpy()
        tops = []
        for col in ys:
            v = df[col].to_numpy(dtype=float)
            nz = np.flatnonzero(np.nan_to_num(v) != 0)
            tops.append(nz[np.argsort(-v[nz], kind="stable")][:MAX_BARS])

        heights = [0.9 + 0.22 * max(len(t), 1) for t in tops]
        fig = Figure(figsize=(8.0, 1.0 + sum(heights)), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(len(ys), 1, squeeze=False, height_ratios=heights)[:, 0]
        for ax, col, top in zip(axes, ys, tops, strict=True):
            v = df[col].to_numpy(dtype=float)
            pos = np.arange(len(top))
            bars = ax.barh(pos, v[top])
            _bar_values(ax, bars, v[top])
            ax.set_yticks(pos, names[top], fontsize="small")
            ax.invert_yaxis()
            ax.set_xlabel(axis_label(col))
            nz = int((np.nan_to_num(v) != 0).sum())
            shown = f"the {len(top)} largest of " if nz > len(top) else ""
            ax.set_title(f"{shown}{nz} of {len(df)} {rows} non-zero", fontsize="small", loc="left")
            ax.grid(alpha=0.3, axis="x")
    elif x == "id" and len(df) > MAX_BARS:
        fig, axes = _table_figure(len(ys), 2.0)
        for ax, col in zip(axes, ys, strict=True):
            v = df[col].to_numpy(dtype=float)
            _cdf(ax, v)
            if _spans_decades(v):
                ax.set_xscale("log")
            ax.set_xlabel(axis_label(col))
            ax.set_ylabel(f"fraction of {rows}")
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
        title = f"{title} — CDF over {len(df)} {rows}"
    elif x == "id":
        # One bar per id, named by its label.
        fig, axes = _new_figure(len(ys))
        names = df["label"].astype(str).to_numpy() if "label" in df.columns else df["id"]
        pos = np.arange(len(df))
        for ax, col in zip(axes, ys, strict=True):
            v = df[col].to_numpy(dtype=float)
            _bar_values(ax, ax.bar(pos, v), v)
            ax.set_ylabel(axis_label(col))
            ax.grid(alpha=0.3, axis="y")
        axes[-1].set_xticks(pos, names, rotation=45 if len(df) > 6 else 0, ha="right")
        axes[-1].set_xlabel(SINGULAR.get(rows, rows))
    else:
        fig, axes = _new_figure(len(ys))
        groups = id_groups(df)
        xv = df[x].to_numpy()
        for ax, col in zip(axes, ys, strict=True):
            yv = df[col].to_numpy()
            for label, idx in groups:
                idx = idx[np.argsort(xv[idx], kind="stable")]
                ax.plot(xv[idx], yv[idx], marker="o", markersize=3, label=label or None)
            ax.set_ylabel(axis_label(col))
            ax.grid(alpha=0.3)
        # Sizes spanning decades (e.g. 512 B .. 1 MB) read better on a log axis.
        if xv.dtype.kind == "f" and _spans_decades(xv):
            axes[-1].set_xscale("log")
        axes[-1].set_xlabel(axis_label(x))
        if 1 < len(groups) <= MAX_LEGEND:
            axes[0].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def _bar_values(ax, bars, values: np.ndarray) -> None:
    """Each bar's value at its end, so that a bar too short to see still reads."""
    ax.bar_label(bars, labels=[fmt_number(v) for v in values], padding=2, fontsize="x-small")
    if bars.orientation == "horizontal":
        ax.margins(x=0.08)
    else:
        ax.margins(y=0.08)


def plot_table(df: pd.DataFrame, title: str, path: Path, rows: str = "rows") -> Path | None:
    """``table_figure`` written to ``path``; None when the table has nothing to draw."""
    return _save(table_figure(df, title, rows), path)


def _save(fig, path: Path) -> Path | None:
    if fig is None:
        return None
    fig.savefig(path, dpi=110)
    return path


def plot_result(result: RunResult, plots_dir: Path) -> list[Path]:
    """Write one PNG per series and per table into ``plots_dir``; returns the files.

    A ``links`` table gives ``topology.png`` and ``link_util.png`` instead of a plot of the
    table; ``slowdown_by_size.png`` is drawn only when the run has flows."""
    plots_dir.mkdir(parents=True, exist_ok=True)
    recorders = _core.fabrics().get(result.summary["fabric"], {}).get("recorders", {})
    scenario = result.summary["scenario"]
    written = []
    for name in result.series_names:
        desc = recorders.get(name, "")
        title = f"{scenario}: {name}" + (f" — {desc}" if desc else "")
        df = result.timeseries(name)
        path, end_s = plots_dir / f"{name}.png", result.summary["sim_time_s"]
        if name == "goodput":
            p = _save(goodput_figure(df, title, end_s, workload_of(result)), path)
        else:
            p = plot_special(name, df, title, path, end_s, result.metrics)
        if p is None:
            p = plot_series(df, title, path, end_s)
        if p:
            written.append(p)
    has_flows = "flows" in result.table_names and len(result.table("flows")) > 0
    for name in result.table_names:
        about = TABLE_TITLES.get(name)
        title = f"{scenario}: {name}" + (f" — {about}" if about else "")
        path = plots_dir / f"{name}.png"
        df = result.table(name)
        p = None
        if name == "links":
            ports = labels_of(result, "links")
            if ports:
                title = f"{scenario}: link utilisation"
                for q in (
                    plot_topology(result, plots_dir / "topology.png"),
                    _save(link_util_figure(df, ports, title), plots_dir / "link_util.png"),
                ):
                    if q:
                        written.append(q)
                continue
        elif name == "flows":
            p = _save(flow_cdf_figure(df, title, labels_of(result, "workloads")), path)
        elif name == "ios":
            p = _save(ios_figure(df, f"{scenario}: I/O latency"), path)
        elif name == "slowdown_by_size":
            if not has_flows:
                continue
            fig = slowdown_figure(df, f"{scenario}: FCT slowdown by message size")
            p = _save(fig, path)
        if p is None:
            p = plot_table(df, title, path, TABLE_ROWS.get(name, "rows"))
        if p:
            written.append(p)
    return written


# What a table shows, after its name in the figure's title.
TABLE_TITLES = {
    "pingpong": "one message at a time: latency (half the round trip) and throughput per size",
    "writes": "one write at a time per size: latency, idle gap between its bursts, R2Ts",
    "ports": "counters per port",
    "switches": "shared buffer per switch",
    "paths": "I/Os per path (initiator>target)",
    "host_queues": "host queues: depth and peak occupancy",
    "targets": "requests per target",
    "link_faults": "what each faulted link lost, by reason",
    "cpu": "initiator cores (HostCpu): busy time and utilisation over the measurement window",
}
# Columns whose name alone does not say what they count.
COLUMN_LABELS = {"r2ts": "R2Ts per write (count)", "requests": "requests (I/Os)"}


# What a row of a table is, for axis labels.
TABLE_ROWS = {
    "cpu": "cores",
    "ports": "ports",
    "switches": "switches",
    "flows": "flows",
    "paths": "paths",
    "targets": "targets",
    "host_queues": "host queues",
    "link_faults": "links",
}
SINGULAR = {
    "rows": "row",
    "ports": "port",
    "switches": "switch",
    "flows": "flow",
    "paths": "path (initiator>target)",
    "targets": "target",
    "host queues": "host queue",
    "links": "link",
}


# ---------------------------------------------------------------------------------------------
# Heat maps of a sweep: one metric over two grid keys (x, y), one panel per value of a third.

HEATMAP_PANELS_PER_ROW = 4


def _tick(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def heatmap_figure(df: pd.DataFrame, metric: str, keys: list[str], title: str = "") -> Figure:
    """``metric`` over ``keys`` = [x, y] or [x, y, panel key], each cell labelled with its value.

    All panels share one colour scale, so that colours compare across panels."""
    x, y, *rest = keys
    if rest:
        parts = [(v, df[df[rest[0]] == v]) for v in grid_values(df, rest[0])]
    else:
        parts = [(None, df)]
    tables = [(v, heatmap_data(part, metric, x, y)) for v, part in parts]
    every = np.concatenate([t.to_numpy().ravel() for _, t in tables])
    finite = every[np.isfinite(every)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
    n_x, n_y = tables[0][1].shape[1], tables[0][1].shape[0]
    cols = min(len(tables), HEATMAP_PANELS_PER_ROW)
    rows = -(-len(tables) // cols)
    fig = Figure(
        figsize=(1.6 + cols * (1.4 + 0.9 * n_x), 1.2 + rows * (1.0 + 0.5 * n_y)),
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    cmap = colormaps["viridis"].with_extremes(bad="0.85")  # grey: no value
    image = None
    for ax, (value, table) in zip(axes, tables, strict=False):
        data = np.ma.masked_invalid(table.to_numpy())
        image = ax.imshow(data, origin="lower", aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
        ax.set_xticks(range(n_x), [_tick(v) for v in table.columns])
        ax.set_yticks(range(n_y), [_tick(v) for v in table.index])
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        if rest:
            ax.set_title(f"{rest[0]} = {_tick(value)}", fontsize="medium")
        span = vmax - vmin
        for (i, j), v in np.ndenumerate(table.to_numpy()):
            if np.isfinite(v):
                # Dark text on the light (high) end of viridis, light text on the dark end.
                dark = span > 0 and (v - vmin) / span > 0.6
                ax.text(
                    j,
                    i,
                    f"{v:.4g}",
                    ha="center",
                    va="center",
                    fontsize="small",
                    color="black" if dark else "white",
                )
    for ax in axes[len(tables) :]:
        ax.remove()
    fig.colorbar(image, ax=list(axes[: len(tables)]), label=axis_label(metric))
    fig.suptitle(textwrap.fill(title or metric, 90))
    return fig


def plot_heatmaps(
    df: pd.DataFrame,
    keys: list[str],
    metrics: list[str],
    out_dir: Path,
    name: str = "sweep",
    constants: dict | None = None,
) -> list[Path]:
    """Write ``heatmap_<metric>.png`` per metric into ``out_dir``; returns the files.

    ``constants``: grid keys with a single value, named in the title."""
    fixed = ", ".join(f"{k} = {_tick(v)}" for k, v in (constants or {}).items())
    written = []
    for metric in metrics:
        title = f"{name}: {metric}" + (f" ({fixed})" if fixed else "")
        path = Path(out_dir) / f"heatmap_{metric}.png"
        heatmap_figure(df, metric, keys, title).savefig(path, dpi=110)
        written.append(path)
    return written
