"""PNG plots of a Result: one per recorded series, one per table.

Figures are built with matplotlib's object API on the Agg canvas, without pyplot, so that
plotting never changes the backend of an interactive session (e.g. a notebook).

Most series get the generic plot (each value column against time, one line per id). A few
recorders have a plot of their own, chosen by recorder name and columns (``SPECIAL``):
``queue`` (bytes: the ports with the highest peaks, in KB), ``pause`` (prio, quanta, dir: a
raster of the PAUSE frames each port sent), ``goodput`` (goodput_Gbps: per flow, plus their
total), ``rate`` (rate_Gbps: per queue pair) and ``blocked`` (blocked, bytes: a pause map, the
blocked spells of every queue, with the deadlock's cycle and instants from the metrics).

A run with a ``links`` table also gets ``topology.png`` (instead of a plot of the table): its
switches and hosts, and, after a deadlock, the wait-for cycle as arrows along the ring links.

Sweeps get heat maps (``plot_heatmaps``): one metric over two grid keys, one panel per value of
a third.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from .runner import Result

# Column-name suffix -> unit shown on the axis ("throughput_MBps" -> "throughput (MB/s)").
UNITS = {
    "s": "s",
    "ms": "ms",
    "us": "µs",
    "ns": "ns",
    "ps": "ps",
    "B": "B",
    "bytes": "B",
    "KB": "KB",
    "MB": "MB",
    "GB": "GB",
    "KBps": "KB/s",
    "MBps": "MB/s",
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


def _groups(df: pd.DataFrame) -> list[tuple[str, np.ndarray]]:
    """(legend label, row indices) per id, in id order; one unnamed group without an id."""
    if "id" not in df.columns:
        return [("", np.arange(len(df)))]
    ids = df["id"].to_numpy()
    order = np.argsort(ids, kind="stable")
    uniq, starts = np.unique(ids[order], return_index=True)
    labels = df["label"].to_numpy() if "label" in df.columns else uniq
    out = []
    for idx in np.split(order, starts[1:]):
        out.append((str(labels[idx[0]]), idx))
    return out


def _new_figure(rows: int):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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
    groups = _groups(df)
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


def _end_time(df: pd.DataFrame, end_s: float | None) -> float:
    t = df["time_s"].to_numpy()
    return max(end_s or 0.0, float(np.nanmax(t)) if len(t) else 0.0)


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


def queue_figure(df: pd.DataFrame, title: str, end_s: float | None = None):
    """Egress queue in KB over time for the ``TOP_QUEUES`` ports with the highest peak."""
    if not {"time_s", "id", "bytes"} <= set(df.columns):
        return None
    t_end = _end_time(df, end_s)
    unit, factor = time_scale(t_end)
    t_all = df["time_s"].to_numpy()
    v_all = df["bytes"].to_numpy() / 1e3
    groups = _groups(df)
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
            label=f"{label} (peak {peak:.4g} KB)",
        )
    if not shown:
        ax.text(0.5, 0.5, "no queue build-up at any port", ha="center", transform=ax.transAxes)
        ax.set_xlim(0, t_end * factor or 1.0)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("egress queue (KB)")
    ax.set_xlabel(f"simulated time ({UNITS[unit]})")
    ax.grid(alpha=0.3)
    _legend(ax, len(shown))
    if len(groups) > len(shown):
        title += f" (top {len(shown)} of {len(groups)} ports by peak)"
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def pause_figure(df: pd.DataFrame, title: str, end_s: float | None = None):
    """Raster of PFC PAUSE frames: one row per port that sent any, a tick per XOFF (quanta >
    0), a short grey tick per XON (quanta 0); each row names its counts."""
    if not {"time_s", "id", "prio", "quanta", "dir"} <= set(df.columns):
        return None
    t_end = _end_time(df, end_s)
    unit, factor = time_scale(t_end)
    direction = df["dir"].to_numpy()
    sent = df[direction == 0]
    received = int((direction == 1).sum())
    t = sent["time_s"].to_numpy() * factor
    xoff = sent["quanta"].to_numpy() > 0
    prio = sent["prio"].to_numpy()
    rows = [
        (int(xoff[idx].sum()), int((~xoff[idx]).sum()), label, idx)
        for label, idx in (_groups(sent) if len(sent) else [])
    ]
    rows.sort(key=lambda r: (-r[0], -r[1]))
    total_rows = len(rows)
    rows = rows[:MAX_PAUSE_ROWS]
    rows.reverse()  # the busiest port at the top

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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
    ax.set_yticks(range(len(rows)), names)
    ax.set_ylim(-0.7, max(len(rows), 1) - 0.3)
    ax.set_xlim(0, t_end * factor or 1.0)
    ax.set_xlabel(f"simulated time ({UNITS[unit]})")
    ax.grid(alpha=0.3, axis="x")
    if not rows:
        ax.text(0.5, 0.5, "no PAUSE frames sent", ha="center", transform=ax.transAxes)
    if len(prios) > 1:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=colors[p], label=f"priority {p}") for p in prios]
        ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    n_xoff = int(xoff.sum())
    title += f" — PAUSE sent: {n_xoff} XOFF, {len(sent) - n_xoff} XON; {received} received"
    if total_rows > len(rows):
        title += f" (top {len(rows)} of {total_rows} ports)"
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def flows_figure(df: pd.DataFrame, title: str, end_s: float | None = None, total: bool = False):
    """One sampled value per flow (goodput, rate) against time; ``total``: add their sum."""
    values = [c for c in df.columns if c not in ("time_s", "id", "label")]
    if len(values) != 1 or "time_s" not in df.columns:
        return None
    col = values[0]
    t_end = _end_time(df, end_s)
    unit, factor = time_scale(t_end)
    t_all = df["time_s"].to_numpy()
    v_all = df[col].to_numpy()
    groups = [(label, idx) for label, idx in _groups(df) if len(idx)]
    fig, axes = _new_figure(1)
    ax = axes[0]
    for label, idx in groups:
        t, v = _reduce(t_all[idx], v_all[idx], "mean")
        ax.plot(t * factor, v, linewidth=1.0, label=label or None)
    n_legend = len(groups) if len(groups) <= MAX_LEGEND else 0
    first = t_all[groups[0][1]] if groups else t_all
    same_instants = all(np.array_equal(t_all[idx], first) for _, idx in groups)
    if total and len(groups) > 1 and same_instants:
        # Every flow sampled at the same instants: their sum is the aggregate.
        sums = np.zeros(len(first))
        for _, idx in groups:
            sums += np.nan_to_num(v_all[idx])
        t, v = _reduce(first, sums, "mean")
        ax.plot(t * factor, v, color="black", linestyle="--", linewidth=1.2, label="total")
        n_legend += 1
    ax.set_xlim(0, t_end * factor or 1.0)
    ax.set_ylim(bottom=0)
    ax.set_ylabel(axis_label(col))
    ax.set_xlabel(f"simulated time ({UNITS[unit]})")
    ax.grid(alpha=0.3)
    _legend(ax, n_legend)
    if len(groups) > MAX_LEGEND:
        title += f" ({len(groups)} flows)"
    fig.suptitle(textwrap.fill(title, 90))
    return fig


def goodput_figure(df: pd.DataFrame, title: str, end_s: float | None = None):
    """Per-flow goodput and the total; None for other columns (FC's goodput_MBps: generic)."""
    if "goodput_Gbps" not in df.columns:
        return None
    return flows_figure(df, title, end_s, total=True)


def rate_figure(df: pd.DataFrame, title: str, end_s: float | None = None):
    """Sending rate of each queue pair."""
    if "rate_Gbps" not in df.columns:
        return None
    return flows_figure(df, title, end_s)


# Recorder name -> figure builder; a builder returning None (not the expected columns) leaves
# the series to the generic plot_series.
SPECIAL = {
    "queue": queue_figure,
    "pause": pause_figure,
    "goodput": goodput_figure,
    "rate": rate_figure,
}


def plot_special(
    name: str, df: pd.DataFrame, title: str, path: Path, end_s: float | None = None
) -> Path | None:
    """The recorder's own plot written to ``path``; None if it has none for these columns."""
    build = SPECIAL.get(name)
    fig = build(df, title, end_s) if build else None
    if fig is None:
        return None
    fig.savefig(path, dpi=110)
    return path


def plot_table(df: pd.DataFrame, title: str, path: Path) -> Path | None:
    cols = [c for c in df.columns if c != "label"]
    if len(cols) < 2:
        return None
    x = cols[0]
    ys = [c for c in cols[1:] if c != "id"]
    if not ys:
        return None
    fig, axes = _new_figure(len(ys))
    if x == "id":
        # Per-flow table: one bar per id, named by its label.
        names = df["label"].astype(str).to_numpy() if "label" in df.columns else df["id"]
        pos = np.arange(len(df))
        for ax, col in zip(axes, ys, strict=True):
            ax.bar(pos, df[col].to_numpy())
            ax.set_ylabel(axis_label(col))
            ax.grid(alpha=0.3, axis="y")
        axes[-1].set_xticks(pos, names, rotation=45 if len(df) > 6 else 0, ha="right")
        axes[-1].set_xlabel("flow")
    else:
        groups = _groups(df)
        xv = df[x].to_numpy()
        for ax, col in zip(axes, ys, strict=True):
            yv = df[col].to_numpy()
            for label, idx in groups:
                idx = idx[np.argsort(xv[idx], kind="stable")]
                ax.plot(xv[idx], yv[idx], marker="o", markersize=3, label=label or None)
            ax.set_ylabel(axis_label(col))
            ax.grid(alpha=0.3)
        finite = xv[np.isfinite(xv)] if xv.dtype.kind == "f" else xv
        # Sizes spanning decades (e.g. 512 B .. 1 MB) read better on a log axis.
        if len(finite) and finite.min() > 0 and finite.max() / finite.min() >= 100:
            axes[-1].set_xscale("log")
        axes[-1].set_xlabel(axis_label(x))
        if 1 < len(groups) <= MAX_LEGEND:
            axes[0].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(textwrap.fill(title, 90))
    fig.savefig(path, dpi=110)
    return path


def plot_result(result: Result, plots_dir: Path) -> list[Path]:
    """Write one PNG per series and per table into ``plots_dir``; returns the files."""
    from . import core as _core

    plots_dir.mkdir(parents=True, exist_ok=True)
    recorders = _core.fabrics().get(result.summary["fabric"], {}).get("recorders", {})
    scenario = result.summary["scenario"]
    written = []
    for name in result.series_names:
        desc = recorders.get(name, "")
        title = f"{scenario}: {name}" + (f" — {desc}" if desc else "")
        df = result.timeseries(name)
        path, end_s = plots_dir / f"{name}.png", result.summary["sim_time_s"]
        p = plot_special(name, df, title, path, end_s)
        if p is None:
            p = plot_series(df, title, path, end_s)
        if p:
            written.append(p)
    for name in result.table_names:
        p = plot_table(result.table(name), f"{scenario}: {name}", plots_dir / f"{name}.png")
        if p:
            written.append(p)
    return written


# ---------------------------------------------------------------------------------------------
# Heat maps of a sweep: one metric over two grid keys (x, y), one panel per value of a third.

HEATMAP_PANELS_PER_ROW = 4


def _tick(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def grid_values(df: pd.DataFrame, key: str) -> list:
    """A grid key's values in grid order: sweep rows come in grid order, so first appearance."""
    return list(dict.fromkeys(df[key].tolist()))


def heatmap_data(df: pd.DataFrame, metric: str, x: str, y: str) -> pd.DataFrame:
    """The metric as a table: one row per value of ``y``, one column per value of ``x``, both
    in grid order; NaN where a point lacks the metric. ``df`` must hold one row per (x, y)."""
    table = df.pivot(index=y, columns=x, values=metric)
    return table.reindex(index=grid_values(df, y), columns=grid_values(df, x)).astype(float)


def heatmap_figure(df: pd.DataFrame, metric: str, keys: list[str], title: str = "") -> Figure:
    """``metric`` over ``keys`` = [x, y] or [x, y, panel key], each cell labelled with its value.

    All panels share one colour scale, so that colours compare across panels."""
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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
