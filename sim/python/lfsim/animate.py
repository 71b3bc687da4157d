"""``lfsim animate``: a run as an animation, for teaching.

Reads only what ``lfsim run`` wrote into its folder (summary.json, config.yaml, the ``ports``
and ``links`` tables, ``series/*.parquet``) and draws, frame by frame, the topology with

- each port's egress queue as a bar along its link, from the port toward its peer (``queue``
  recorder of roce; on fc the ``tx_queue`` recorder, or else the BB_Credit in use: the frames
  sent and not yet answered by an R_RDY, from ``credits``);
- an arrow from a port's peer back to the port while the port may not send: paused by PFC
  (``blocked``, or else the XOFF/XON frames of ``pause``) or, on Fibre Channel, out of
  BB_Credit (``credits`` at 0, or ``blocked``);
- after a deadlock is detected (``deadlock_detected_us``), the queues of its wait-for cycle
  (``deadlock_cycle``) in red;

and under it one line of the run over time (total goodput, or the queues, or the credits) with
a cursor at the frame's instant. Frames are evenly spaced over the series' time span (from the
first recorded instant to the end of the run): ``step`` apart (default the scenario's
``sample_interval``), at most ``max_frames``.

``--out`` chooses the format by its suffix: ``.html`` (matplotlib's JavaScript player, a time
slider, self-contained), ``.gif`` (Pillow), ``.mp4`` (only where ffmpeg is installed) or
``.png`` (the one frame at ``at``).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
import yaml
from matplotlib.animation import FFMpegWriter, FuncAnimation, PillowWriter
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch

from .errors import ScenarioError, quote
from .plotdata import link_peers, node_of, queue_port, topology_graph, topology_layout
from .plotting import UNITS, axis_label, time_scale
from .scenario import time_seconds

# What a fabric's animation reads, in the order it prefers them.
RECORDERS = {
    "roce": {"queue": "queue", "stop": ("blocked", "pause"), "line": ("goodput", "queue")},
    "fc": {"queue": "tx_queue", "stop": ("blocked", "credits"), "line": ("goodput", "credits")},
}
NEEDED = {"roce": "queue and pause (or blocked)", "fc": "credits (and tx_queue, or blocked)"}
FORMATS = (".html", ".gif", ".mp4", ".png")
DEFAULT_MAX_FRAMES = 150
QUEUE_COLOR = "tab:blue"
STOP_COLOR = "tab:orange"
CYCLE_COLOR = "tab:red"
PFC_QUANTUM_BITS = 512  # 802.1Qbb: a quantum is 512 bit times of the port's speed


# ---------------------------------------------------------------------------------------------
# Reading a run's folder.


@dataclass
class RunFolder:
    """What a run wrote, as far as the animation needs it."""

    path: Path
    summary: dict
    config: dict
    ports: list[str]  # port labels, by port number (the ``ports`` table)
    links: pd.DataFrame  # a, b (port numbers)
    series: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def fabric(self) -> str:
        return str(self.summary.get("fabric", ""))

    @property
    def metrics(self) -> dict:
        return self.summary.get("metrics", {})

    @property
    def end_s(self) -> float:
        return float(self.summary.get("sim_time_s", 0.0))


def _read(path: Path, what: str):
    if not path.is_file():
        raise ScenarioError(
            f"RESULT_DIR: {quote(str(path.parent))} has no {path.name}; accepted: a folder "
            f"written by 'lfsim run' ({what})"
        )
    return path


def load_run(path: str | Path) -> RunFolder:
    """Read a results folder; a ScenarioError (one line, exit 2) names what is missing."""
    folder = Path(path)
    if not folder.is_dir():
        raise ScenarioError(
            f"RESULT_DIR: {quote(str(folder))} is not a folder; accepted: a folder written by "
            "'lfsim run'"
        )
    summary = json.loads(_read(folder / "summary.json", "its metrics").read_text())
    config = yaml.safe_load(_read(folder / "config.yaml", "its scenario").read_text()) or {}
    fabric = summary.get("fabric")
    if fabric not in RECORDERS:
        raise ScenarioError(
            f"RESULT_DIR: the run's fabric is {quote(fabric)}; accepted: a run of fabric roce or "
            "fc (the fabrics with ports and links)"
        )
    ports_df = pd.read_parquet(_read(folder / "ports.parquet", "the ports table"))
    links = pd.read_parquet(_read(folder / "links.parquet", "the links table"))
    ports = [""] * (int(ports_df["id"].max()) + 1 if len(ports_df) else 0)
    for i, label in zip(ports_df["id"].to_numpy(), ports_df["label"].astype(str), strict=True):
        ports[int(i)] = label
    run = RunFolder(folder, summary, config, ports, links)
    want = RECORDERS[fabric]
    names = {want["queue"], *want["stop"], *want["line"]}
    for name in sorted(names):
        p = folder / "series" / f"{name}.parquet"
        if p.is_file():
            run.series[name] = pd.read_parquet(p)
    if not ({want["queue"], *want["stop"]} & set(run.series)):
        raise ScenarioError(
            f"RESULT_DIR: the run recorded none of {', '.join(sorted(names - {'goodput'}))}; "
            f"accepted: a {fabric} run with record: [{NEEDED[fabric]}] (e.g. "
            f"--set record={_example_record(fabric)})"
        )
    return run


def _example_record(fabric: str) -> str:
    return "queue,pause,goodput" if fabric == "roce" else "credits,tx_queue,goodput"


# ---------------------------------------------------------------------------------------------
# The state of every port at an instant: computed without drawing (tested on its own).


class Steps:
    """A recorded value per label that holds until its next change or sample."""

    def __init__(self, df: pd.DataFrame, column: str):
        self.by_label: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if not len(df):
            return
        t = df["time_s"].to_numpy(dtype=float)
        v = df[column].to_numpy(dtype=float)
        labels = df["label"].astype(str).to_numpy()
        order = np.lexsort((np.arange(len(t)), t, labels))  # by label, then time, stable
        labels, t, v = labels[order], t[order], v[order]
        cuts = np.flatnonzero(labels[1:] != labels[:-1]) + 1
        for idx in np.split(np.arange(len(t)), cuts):
            if len(idx):
                self.by_label[str(labels[idx[0]])] = (t[idx], v[idx])

    def at(self, t: float) -> dict[str, float]:
        """label -> its value at ``t`` (labels not yet recorded at ``t`` are absent)."""
        out = {}
        for label, (times, values) in self.by_label.items():
            k = int(np.searchsorted(times, t, side="right")) - 1
            if k >= 0:
                out[label] = float(values[k])
        return out

    def peak(self) -> float:
        return max((float(np.nanmax(v)) for _, v in self.by_label.values() if len(v)), default=0.0)


def ethernet_bps(text: object) -> float | None:
    """'25GbE' -> 25e9; None for anything else."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*GbE\s*", str(text))
    return float(m.group(1)) * 1e9 if m else None


@dataclass
class Frame:
    """What one frame shows: ``queue`` (port -> fraction of the run's largest queue, 0..1),
    ``stopped`` (ports that may not send: paused, or out of credit), ``red`` (ports of the
    deadlock's cycle, from its detection on), ``credits`` (FC: port -> available BB_Credit)."""

    t: float
    queue: dict[str, float]
    stopped: set[str]
    red: set[str]
    credits: dict[str, float]


class Animation:
    """The frames of a run (``times``) and what each shows (``frame(k)``); ``figure()`` draws."""

    def __init__(
        self, run: RunFolder, step_s: float | None = None, max_frames: int = DEFAULT_MAX_FRAMES
    ):
        self.run = run
        self.peers = link_peers(run.links, run.ports)
        self.port_set = set(self.peers)
        want = RECORDERS[run.fabric]
        s = run.series
        self.queue_name = want["queue"] if want["queue"] in s else None
        self.stop_name = next((n for n in want["stop"] if n in s), None)
        self.line_name = next((n for n in want["line"] if n in s), None)
        self.credits = Steps(s["credits"], "credits") if "credits" in s else None
        self.credit_max = {
            label: float(np.nanmax(v)) for label, (_, v) in (self.credits.by_label.items())
        } if self.credits else {}  # fmt: skip
        if self.queue_name:
            self.queue = Steps(s[self.queue_name], _value_column(s[self.queue_name]))
            self.queue_unit = "frames" if run.fabric == "fc" else "bytes"
        elif self.credits:
            self.queue = None  # the credit in use (credit_max - credits) stands for the queue
            self.queue_unit = "credits in use"
        else:
            self.queue, self.queue_unit = None, ""
        self.queue_peak = self._queue_peak()
        # The deadlock's cycle, as ports, and when it was detected.
        m = run.metrics
        cycle = [str(q) for q in (m.get("deadlock_cycle") or [])] if m.get("deadlock") else []
        self.cycle_ports = {p for p in (queue_port(q, self.port_set) for q in cycle) if p}
        detected = m.get("deadlock_detected_us")
        self.detected_s = float(detected) * 1e-6 if self.cycle_ports and detected else None
        self._pause = self._pause_spells() if self.stop_name == "pause" else None
        self._blocked = Steps(s["blocked"], "blocked") if self.stop_name == "blocked" else None
        self.times = frame_times(self.span(), step_s or self._default_step(), max_frames)

    # -- time ---------------------------------------------------------------------------------

    def span(self) -> tuple[float, float]:
        """From the first recorded instant of the animated series to the end of the run (a
        recorded value holds until the run ends)."""
        names = {self.queue_name, self.stop_name, self.line_name, "credits"} & set(self.run.series)
        firsts = [
            float(self.run.series[n]["time_s"].min()) for n in names if len(self.run.series[n])
        ]
        t0 = min(firsts, default=0.0)
        lasts = [
            float(self.run.series[n]["time_s"].max()) for n in names if len(self.run.series[n])
        ]
        t1 = max([self.run.end_s, *lasts])
        return t0, max(t1, t0)

    def _default_step(self) -> float:
        interval = time_seconds(str(self.run.config.get("sample_interval", "0s"))) or 0.0
        t0, t1 = self.span()
        return interval if interval > 0 else (t1 - t0) / max(DEFAULT_MAX_FRAMES - 1, 1)

    # -- state --------------------------------------------------------------------------------

    def _queue_peak(self) -> float:
        if self.queue is not None:
            return self.queue.peak()
        return max(self.credit_max.values(), default=0.0)

    def _queues(self, t: float) -> dict[str, float]:
        if self.queue is not None:
            values = {
                p: v
                for label, v in self.queue.at(t).items()
                if (p := self._port(label)) is not None
            }
        elif self.credits is not None:
            values = {
                label: self.credit_max[label] - v
                for label, v in self.credits.at(t).items()
                if label in self.port_set
            }
        else:
            return {}
        peak = self.queue_peak or 1.0
        return {p: min(max(v / peak, 0.0), 1.0) for p, v in values.items()}

    def _port(self, label: str) -> str | None:
        return queue_port(label, self.port_set)

    def _pause_spells(self) -> dict[str, list[tuple[float, float]]]:
        """Port -> its spells paused by its peer: from each XOFF its peer sent until the next
        XON of that class, or until the XOFF's quanta ran out at the link's speed (the slower
        of the topology's HostSpeed and UplinkSpeed; without them, until the XON)."""
        df = self.run.series["pause"]
        sent = df[df["dir"].to_numpy() == 0]
        topo = self.run.config.get("topology") or {}
        speeds = [b for b in (ethernet_bps(topo.get(k)) for k in ("HostSpeed", "UplinkSpeed")) if b]
        bps = min(speeds) if speeds else None
        spells: dict[str, list[tuple[float, float]]] = {}
        t = sent["time_s"].to_numpy(dtype=float)
        quanta = sent["quanta"].to_numpy(dtype=float)
        prio = sent["prio"].to_numpy(dtype=float)
        labels = sent["label"].astype(str).to_numpy()
        for label in dict.fromkeys(labels):
            peer = self.peers.get(label)
            if peer is None:
                continue
            for p in np.unique(prio[labels == label]):
                idx = np.flatnonzero((labels == label) & (prio == p))
                idx = idx[np.argsort(t[idx], kind="stable")]
                start = None
                until = None
                for i in idx:
                    if start is not None and until is not None and t[i] > until:
                        spells.setdefault(peer, []).append((start, until))  # timed out
                        start = None
                    if quanta[i] > 0:
                        start = t[i] if start is None else start
                        until = t[i] + quanta[i] * PFC_QUANTUM_BITS / bps if bps else None
                    elif start is not None:
                        spells.setdefault(peer, []).append((start, t[i]))
                        start = None
                if start is not None:
                    spells.setdefault(peer, []).append((start, until if until else np.inf))
        return spells

    def _stopped(self, t: float) -> set[str]:
        if self._pause is not None:
            return {p for p, spells in self._pause.items() if any(a <= t < b for a, b in spells)}
        if self._blocked is not None:
            return {
                p
                for label, v in self._blocked.at(t).items()
                if v > 0.5 and (p := self._port(label))
            }
        if self.stop_name == "credits" and self.credits is not None:
            return {
                label
                for label, v in self.credits.at(t).items()
                if v <= 0 and label in self.port_set
            }
        return set()

    def frame(self, k: int) -> Frame:
        t = float(self.times[k])
        red = self.cycle_ports if self.detected_s is not None and t >= self.detected_s else set()
        credits = self.credits.at(t) if self.credits is not None else {}
        return Frame(t, self._queues(t), self._stopped(t), set(red), credits)

    # -- drawing ------------------------------------------------------------------------------

    def figure(self, dpi: int = 80):
        """(figure, update(k) -> artists): the topology above, the run's line below."""
        return _Drawing(self, dpi).build()

    def save(self, out: Path, fps: int = 10, at_s: float | None = None, dpi: int = 80) -> Path:
        """Write the animation (or, for .png, the frame nearest ``at_s``, default the last)."""
        fig, update = self.figure(dpi)
        if out.suffix == ".png":
            k = len(self.times) - 1 if at_s is None else nearest(self.times, at_s)
            update(k)
            fig.savefig(out, dpi=dpi)
            return out
        anim = self.matplotlib_animation(fig, update, fps)
        if out.suffix == ".html":
            out.write_text(jshtml(anim, fps), encoding="utf-8")
        elif out.suffix == ".gif":
            anim.save(out, writer=PillowWriter(fps=fps), dpi=dpi)
        else:
            anim.save(out, writer=FFMpegWriter(fps=fps), dpi=dpi)
        return out

    def matplotlib_animation(self, fig, update, fps: int = 10):
        return FuncAnimation(
            fig, update, frames=len(self.times), interval=1000 / fps, blit=False, repeat=False
        )

    def to_jshtml(self, fps: int = 10, dpi: int = 72) -> str:
        """The animation as HTML with a time slider (for a notebook: ``IPython.display.HTML``)."""
        fig, update = self.figure(dpi)
        return jshtml(self.matplotlib_animation(fig, update, fps), fps)


# matplotlib's player draws its buttons with Font Awesome from a CDN; these characters need no
# network, so that the file plays anywhere (offline, in a notebook on a code host's viewer).
BUTTONS = {  # as HTML character references: the page declares no encoding
    "fa fa-minus": "&minus;",
    "fa fa-fast-backward": "|&#x25c0;&#x25c0;",
    "fa fa-step-backward": "&#x25c0;|",
    "fa fa-play fa-flip-horizontal": "&#x25c0;",
    "fa fa-pause": "||",
    "fa fa-play": "&#x25b6;",
    "fa fa-step-forward": "|&#x25b6;",
    "fa fa-fast-forward": "&#x25b6;&#x25b6;|",
    "fa fa-plus": "+",
}


def jshtml(anim, fps: int) -> str:
    # The frames are embedded as PNG; the default limit (20 MB) would drop a long animation.
    with mpl.rc_context({"animation.embed_limit": 200.0}):
        html = anim.to_jshtml(fps=fps, default_mode="once")
    html = re.sub(r'<link rel="stylesheet"\s+href="[^"]*font-awesome[^"]*">', "", html)
    for icon, text in BUTTONS.items():
        html = html.replace(f'<i class="{icon}"></i>', text)
    return html


def _value_column(df: pd.DataFrame) -> str:
    cols = [c for c in df.columns if c not in ("time_s", "id", "label")]
    return cols[0]


def frame_times(span: tuple[float, float], step_s: float, max_frames: int) -> np.ndarray:
    """Instants t0, t0 + step, ... up to t1 (t1 itself when it falls on a step); the step grows
    so that there are at most ``max_frames``."""
    t0, t1 = span
    if t1 <= t0 or step_s <= 0:
        return np.array([t0])
    if (t1 - t0) / step_s + 1 > max_frames:
        step_s = (t1 - t0) / (max_frames - 1) if max_frames > 1 else t1 - t0
    n = int(np.floor((t1 - t0) / step_s * (1 + 1e-12))) + 1
    return t0 + step_s * np.arange(n)


def nearest(times: np.ndarray, t: float) -> int:
    return int(np.argmin(np.abs(np.asarray(times) - t)))


class _Drawing:
    """The artists of the animation, built once and updated per frame."""

    def __init__(self, anim: Animation, dpi: int):
        self.a = anim
        self.dpi = dpi

    def build(self):
        a, run = self.a, self.a.run
        g = topology_graph(run.links, run.ports)
        pos = {n: np.asarray(p, dtype=float) for n, p in topology_layout(g).items()}
        xy = np.array(list(pos.values())) if pos else np.zeros((1, 2))
        span = float(max(np.ptp(xy[:, 0]), np.ptp(xy[:, 1]), 1.0))
        # The topology's panel as tall as its layout needs (a single cable: a flat strip).
        flat = float(np.ptp(xy[:, 1])) / max(float(np.ptp(xy[:, 0])), 1e-9)
        top_h = float(np.clip(6.0 * flat, 1.6, 5.0)) + 1.0  # + the legend below it
        fig = Figure(figsize=(8.0, top_h + 2.4), dpi=self.dpi, layout="constrained")
        FigureCanvasAgg(fig)
        top, bottom = fig.subplots(2, 1, height_ratios=[top_h, 1.9])
        top.set_aspect("equal")
        top.set_axis_off()
        off = 0.025 * span  # a direction's bar and arrow sit to the right of the link
        for u, v in g.edges():
            top.plot(*zip(pos[u], pos[v], strict=True), color="0.75", linewidth=1.0, zorder=1)
        for kind, marker, size, color in (
            ("switch", "s", 500, "#cfe0f3"),
            ("host", "o", 240, "0.92"),
        ):
            nodes = [n for n, k in g.nodes(data="kind") if k == kind]
            if nodes:
                pts = np.array([pos[n] for n in nodes])
                size = min(size, 9000 / len(nodes))
                top.scatter(
                    pts[:, 0], pts[:, 1], s=size, marker=marker, c=color, edgecolors="0.3", zorder=3
                )
                for n in nodes if len(nodes) <= 32 else nodes[:: len(nodes) // 8]:
                    top.text(*pos[n], n, ha="center", va="center", fontsize="x-small", zorder=4)
        # Per port (one direction of a cable): a queue bar and a stop arrow.
        self.bars: dict[str, tuple] = {}
        self.arrows: dict[str, FancyArrowPatch] = {}
        self.texts: dict[str, object] = {}
        for port, peer in a.peers.items():
            u, v = node_of(port), node_of(peer)
            if u not in pos or v not in pos or u == v:
                continue
            d = pos[v] - pos[u]
            length = float(np.hypot(*d)) or 1.0
            unit = d / length
            normal = np.array([unit[1], -unit[0]])  # right of the direction u -> v
            start = pos[u] + unit * min(0.12 * length, 0.08 * span) + normal * off
            reach = d * 0.4
            (line,) = top.plot(
                [], [], color=QUEUE_COLOR, linewidth=5, solid_capstyle="butt", zorder=2
            )
            self.bars[port] = (line, start, reach)
            tail = pos[u] + d * 0.85 + normal * 2.4 * off
            head = pos[u] + d * 0.55 + normal * 2.4 * off
            arrow = FancyArrowPatch(
                tail, head, arrowstyle="-|>", mutation_scale=12, linewidth=2.0,
                color=STOP_COLOR, zorder=5, visible=False,
            )  # fmt: skip
            top.add_patch(arrow)
            self.arrows[port] = arrow
            moves = (
                a.credits is not None
                and port in a.credits.by_label
                and (
                    np.ptp(a.credits.by_label[port][1]) > 0  # a port that sends: its credit moves
                )
            )
            if moves and len(a.peers) <= 48:
                at = pos[u] + d * 0.3 - normal * 2.5 * off
                self.texts[port] = top.text(
                    *at, "", ha="center", va="center", fontsize="x-small", zorder=6,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7, "pad": 1},
                )  # fmt: skip
        pad = 0.12 * span
        top.set_xlim(xy[:, 0].min() - pad, xy[:, 0].max() + pad)
        top.set_ylim(xy[:, 1].min() - pad, xy[:, 1].max() + pad)
        handles = []
        if a.queue is not None or a.credits is not None:
            what = {
                "bytes": f"egress queue (full bar: {a.queue_peak / 1024:.4g} KiB, the largest)",
                "frames": f"frames waiting to be sent (full bar {a.queue_peak:.4g})",
                "credits in use": f"BB_Credit in use (full bar {a.queue_peak:.4g} credits)",
            }[a.queue_unit]
            handles.append(Line2D([], [], color=QUEUE_COLOR, linewidth=5, label=what))
        else:
            handles.append(
                Patch(
                    color="white",
                    label=f"queues not recorded (record: {RECORDERS[run.fabric]['queue']})",
                )
            )
        stop_text = {
            "pause": "PFC PAUSE: the peer stops the port",
            "blocked": "port may not send (paused or out of credit)",
            "credits": "out of BB_Credit: waits for an R_RDY",
        }
        if a.stop_name:
            handles.append(
                Line2D(
                    [], [], color=STOP_COLOR, marker=">", linewidth=2, label=stop_text[a.stop_name]
                )
            )
        if a.cycle_ports:
            handles.append(Patch(color=CYCLE_COLOR, label="deadlock: the wait-for cycle"))
        top.legend(
            handles=handles,
            fontsize="small",
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            ncols=1,
            frameon=False,
        )
        # The run over time, with a cursor.
        t0, t1 = a.span()
        unit, factor = time_scale(t1)
        self.factor, self.unit = factor, UNITS[unit]
        self._timeline(bottom, factor)
        bottom.set_xlim(t0 * factor, t1 * factor if t1 > t0 else t0 * factor + 1)
        bottom.set_xlabel(f"simulated time ({UNITS[unit]})")
        bottom.grid(alpha=0.3)
        if a.detected_s is not None:
            bottom.axvline(
                a.detected_s * factor,
                color=CYCLE_COLOR,
                linestyle=":",
                linewidth=1.2,
                label="deadlock detected",
            )
            bottom.legend(fontsize="x-small", loc="upper right")
        self.cursor = bottom.axvline(t0 * factor, color="black", linewidth=1.0)
        mode = f" ({run.summary['mode']})" if run.summary.get("mode") else ""
        self.title = fig.suptitle("")
        self.name = f"{run.summary.get('scenario', run.path.name)}{mode}"
        self.fig = fig
        return fig, self.update

    def _timeline(self, ax, factor: float) -> None:
        a = self.a
        name = a.line_name
        df = a.run.series.get(name) if name else None
        if df is None or not len(df):
            ax.text(0.5, 0.5, "nothing recorded over time", ha="center", transform=ax.transAxes)
            return
        col = _value_column(df)
        if name == "goodput":
            total = df.groupby("time_s", sort=True)[col].sum()
            ax.plot(
                total.index.to_numpy() * factor,
                total.to_numpy(),
                color="black",
                linewidth=1.0,
                label="total",
            )
            ax.set_ylabel("total " + axis_label(col))
        elif name == "queue":
            steps = a.queue
            grid = np.linspace(*a.span(), 400)
            total = [sum(steps.at(t).values()) / 1024 for t in grid]
            ax.step(grid * factor, total, where="post", color=QUEUE_COLOR, linewidth=1.0)
            ax.set_ylabel("queued, all ports (KiB)")
        else:  # credits: the ports that ever ran out, or the first few
            steps = a.credits
            low = [p for p, (_, v) in steps.by_label.items() if np.nanmin(v) <= 0] or list(
                steps.by_label
            )
            t_end = a.span()[1]
            for label in low[:4]:
                t, v = steps.by_label[label]
                ax.step(
                    np.append(t, t_end) * factor,
                    np.append(v, v[-1]),
                    where="post",
                    linewidth=1.0,
                    label=label,
                )
            ax.set_ylabel("BB_Credit available")
            ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.set_ylim(bottom=0)

    def update(self, k: int):
        f = self.a.frame(k)
        for port, (line, start, reach) in self.bars.items():
            frac = f.queue.get(port, 0.0)
            end = start + reach * frac
            line.set_data([start[0], end[0]], [start[1], end[1]])
            line.set_color(
                CYCLE_COLOR if port in f.red else STOP_COLOR if port in f.stopped else QUEUE_COLOR
            )
        for port, arrow in self.arrows.items():
            arrow.set_visible(port in f.stopped or port in f.red)
            arrow.set_color(CYCLE_COLOR if port in f.red else STOP_COLOR)
        for port, text in self.texts.items():
            c = f.credits.get(port)
            text.set_text("" if c is None else f"credit {c:.0f}/{self.a.credit_max[port]:.0f}")
        self.cursor.set_xdata([f.t * self.factor, f.t * self.factor])
        status = ""
        if f.red:
            status = f" — deadlock detected: cycle of {len(self.a.cycle_ports)} queues"
        elif f.stopped:
            status = f" — {len(f.stopped)} port{'s' if len(f.stopped) > 1 else ''} stopped"
        self.title.set_text(f"{self.name}: t = {f.t * self.factor:.4g} {self.unit}{status}")
        return []


def to_html(
    result_dir: str | Path,
    step: str | None = None,
    max_frames: int = DEFAULT_MAX_FRAMES,
    fps: int = 10,
    dpi: int = 60,
) -> str:
    """A results folder as HTML with a time slider, for a notebook:
    ``IPython.display.HTML(to_html(result.out, step="20us"))``. The frames are embedded as
    PNG (about 35 kB each at 60 dpi): a notebook keeps a few dozen."""
    step_s = time_seconds(step) if step is not None else None
    if step is not None and not step_s:
        raise ScenarioError(f"step: got {quote(step)}; accepted: a time with a unit, e.g. 10us")
    return Animation(load_run(result_dir), step_s, max_frames).to_jshtml(fps, dpi)


def check_out(out: Path) -> None:
    if out.suffix not in FORMATS:
        raise ScenarioError(
            f"--out: got {quote(str(out))}; accepted: a file ending in {', '.join(FORMATS)}"
        )
    if out.suffix == ".mp4" and shutil.which("ffmpeg") is None:
        raise ScenarioError(
            "--out: .mp4 needs ffmpeg, which is not installed here; accepted: .html, .gif or "
            ".png (or install ffmpeg)"
        )
    if not out.parent.is_dir():
        raise ScenarioError(f"--out: the folder {quote(str(out.parent))} does not exist")


def animate(
    result_dir: str | Path,
    out: str | Path | None = None,
    step_s: float | None = None,
    max_frames: int = DEFAULT_MAX_FRAMES,
    fps: int = 10,
    at_s: float | None = None,
) -> Path:
    """Render a results folder to ``out`` (default RESULT_DIR/animation.html); returns it."""
    run = load_run(result_dir)
    target = Path(out) if out is not None else run.path / "animation.html"
    check_out(target)
    anim = Animation(run, step_s, max_frames)
    tmp = target.with_name(f".{target.name}.tmp{target.suffix}")
    try:
        anim.save(tmp, fps=fps, at_s=at_s)
        tmp.replace(target)  # nothing half-written
    finally:
        tmp.unlink(missing_ok=True)
    return target
