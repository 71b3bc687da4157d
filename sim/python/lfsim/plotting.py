"""PNG plots of a Result: one per recorded series, one per table.

Figures are built with matplotlib's object API on the Agg canvas, without pyplot, so that
plotting never changes the backend of an interactive session (e.g. a notebook).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

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
        p = plot_series(df, title, plots_dir / f"{name}.png", result.summary["sim_time_s"])
        if p:
            written.append(p)
    for name in result.table_names:
        p = plot_table(result.table(name), f"{scenario}: {name}", plots_dir / f"{name}.png")
        if p:
            written.append(p)
    return written
