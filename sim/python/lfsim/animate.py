"""``lfsim animate``: a run as an animation, for teaching.

Reads only what ``lfsim run`` wrote into its folder (summary.json, config.yaml, the ``ports``
and ``links`` tables, ``series/*.parquet``) and draws, frame by frame, the topology with

- each port's egress queue as a bar along its link, from the port toward its peer (``queue``
  recorder of roce; on fc the ``tx_queue`` recorder, or else the BB_Credit in use: the frames
  sent and not yet answered by an R_RDY, from ``credits``);
- an arrow along the link, from the port toward its peer, while the port may not send that
  way: paused by PFC (``blocked``, or else the XOFF/XON frames of ``pause``) or, on Fibre
  Channel, out of BB_Credit (``credits`` at 0, or ``blocked``). A port waits on its peer: the
  arrows run as the wait-for cycle's on ``topology.png``;
- after a deadlock is detected (``deadlock_detected_us``), the queues of its wait-for cycle
  (``deadlock_cycle``) in red, bar and arrow;

and under it one line of the run over time (total goodput, or the queues, or the credits, or
the number of blocked queues) with a cursor at the frame's instant. Frames are evenly spaced
over the series' time span (from the first recorded instant to the end of the run): ``step``
apart (default the scenario's ``sample_interval``), at most ``max_frames`` (a larger step
then, which ``Animation.notes`` says).

``--out`` chooses the format by its suffix: ``.html`` (a player with a time slider,
self-contained: the picture without its moving parts once, as SVG, and the frames as numbers
that a short script draws over it), ``.gif`` (Pillow), ``.mp4`` (only where ffmpeg is
installed) or ``.png`` (the instant ``at``). GIF and MP4 frames are drawn incrementally: the
still picture once, then per frame only the bars, arrows, labels, cursor and title.
"""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import re
import shutil
import subprocess
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
import yaml
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch
from PIL import Image

from .errors import ScenarioError, quote
from .plotdata import (
    deadlock_cycle,
    link_peers,
    metric_seconds,
    node_of,
    queue_port,
    topology_graph,
    topology_layout,
)
from .plotting import UNITS, axis_label, time_scale
from .scenario import time_seconds

# What a fabric's animation reads, in the order it prefers them.
RECORDERS = {
    "roce": {
        "queue": "queue",
        "stop": ("blocked", "pause"),
        "line": ("goodput", "queue", "blocked"),
    },
    "fc": {
        "queue": "tx_queue",
        "stop": ("blocked", "credits"),
        "line": ("goodput", "credits", "tx_queue", "blocked"),
    },
}
NEEDED = {"roce": "queue and pause (or blocked)", "fc": "credits (and tx_queue, or blocked)"}
FORMATS = (".html", ".gif", ".mp4", ".png")
DEFAULT_MAX_FRAMES = 150
QUEUE_COLOR = "tab:blue"
STOP_COLOR = "tab:orange"
CYCLE_COLOR = "tab:red"
PFC_QUANTUM_BITS = 512  # 802.1Qbb: a quantum is 512 bit times of the port's speed
BAR_WIDTH = 5.0  # points
ARROW_WIDTH = 2.0  # points
ARROW_HEAD = 12.0  # points: the arrow's mutation scale


class AnimationNote(UserWarning):
    """Something the animation did other than asked (a larger step, an instant moved into the
    run): ``lfsim animate`` prints it as one line and goes on."""


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

    def total(self, times: np.ndarray) -> np.ndarray:
        """The sum over the labels of their values at each of ``times``."""
        out = np.zeros(len(times))
        for t, v in self.by_label.values():
            k = np.searchsorted(t, times, side="right") - 1
            out += np.where(k >= 0, v[np.maximum(k, 0)], 0.0)
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


def time_text(seconds: float) -> str:
    """5e-06 -> '5 µs', 0.0001336 -> '133.6 µs' (4 significant digits, the run's units)."""
    unit, factor = time_scale(abs(seconds))
    return f"{seconds * factor:.4g} {UNITS[unit]}"


class Animation:
    """The frames of a run (``times``) and what each shows (``frame(k)``, or ``frame_at(t)``
    at any instant); ``figure()`` draws. ``notes``: what it did other than asked."""

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
        cycle = deadlock_cycle(run.metrics)
        self.cycle_ports = {p for p in (queue_port(q, self.port_set) for q in cycle) if p}
        detected = metric_seconds(run.metrics, "deadlock_detected_us")
        self.detected_s = detected if self.cycle_ports and detected else None
        self._pause = self._pause_spells() if self.stop_name == "pause" else None
        self._blocked = Steps(s["blocked"], "blocked") if "blocked" in s else None
        self.notes: list[str] = []
        self.times = frame_times(self.span(), step_s or self._default_step(), max_frames)
        if step_s and len(self.times) > 1 and self.times[1] - self.times[0] > step_s * 1.000001:
            t0, t1 = self.span()
            wanted = int(np.floor((t1 - t0) / step_s * (1 + 1e-12))) + 1
            self.notes.append(
                f"--step {time_text(step_s)} over the {time_text(t1 - t0)} recorded would be "
                f"{wanted:,} frames, more than --max-frames {max_frames}: the frames are "
                f"{time_text(self.times[1] - self.times[0])} apart (raise --max-frames to "
                f"{wanted} for {time_text(step_s)})"
            )

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

    def clamp(self, at_s: float) -> float:
        """``at_s`` moved into the span, with a note when it had to move."""
        t0, t1 = self.span()
        if at_s > t1:
            self.notes.append(
                f"--at {time_text(at_s)} is after the end of the run ({time_text(t1)}): the "
                f"frame shows the end, {time_text(t1)}"
            )
            return t1
        if at_s < t0:
            self.notes.append(
                f"--at {time_text(at_s)} is before the first recorded instant "
                f"({time_text(t0)}): the frame shows {time_text(t0)}"
            )
            return t0
        return at_s

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
        if self.stop_name == "blocked":
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

    def frame_at(self, t: float) -> Frame:
        red = self.cycle_ports if self.detected_s is not None and t >= self.detected_s else set()
        credits = self.credits.at(t) if self.credits is not None else {}
        return Frame(t, self._queues(t), self._stopped(t), set(red), credits)

    def frame(self, k: int) -> Frame:
        return self.frame_at(float(self.times[k]))

    def frames(self) -> list[Frame]:
        return [self.frame(k) for k in range(len(self.times))]

    # -- drawing ------------------------------------------------------------------------------

    def figure(self, dpi: int = 80):
        """(figure, update(k)): the topology above, the run's line below; ``update`` shows
        frame ``k`` (or, given a Frame, that frame)."""
        drawing = _Drawing(self, dpi)
        return drawing.build(), drawing.update

    def save(self, out: Path, fps: int = 10, at_s: float | None = None, dpi: int = 80) -> Path:
        """Write the animation (or, for .png, the frame at ``at_s``, default the end)."""
        if out.suffix == ".png":
            drawing = _Drawing(self, dpi)
            fig = drawing.build()
            t = self.times[-1] if at_s is None else self.clamp(at_s)
            drawing.update(self.frame_at(float(t)))
            for artist in drawing.moving():
                artist.set_animated(False)  # a saved figure leaves animated artists out
            fig.savefig(out, dpi=dpi)
        elif out.suffix == ".html":
            out.write_text(_page(self.to_html(fps)), encoding="ascii")
        elif out.suffix == ".gif":
            self._save_gif(out, fps, dpi)
        else:
            self._save_mp4(out, fps, dpi)
        return out

    def rgba_frames(self, dpi: int = 80, frames: Sequence[int] | None = None):
        """(width, height, iterator of each frame's RGBA bytes; ``frames``: those frames, by
        default all): the still picture is drawn once, then per frame only the artists that
        move."""
        drawing = _Drawing(self, dpi)
        fig = drawing.build()
        canvas = drawing.freeze()
        background = canvas.copy_from_bbox(fig.bbox)
        width, height = canvas.get_width_height()

        def draw():
            for k in range(len(self.times)) if frames is None else frames:
                drawing.update(k)
                canvas.restore_region(background)
                for artist in drawing.moving():
                    fig.draw_artist(artist)
                yield bytes(canvas.buffer_rgba())

        return width, height, draw()

    def _save_gif(self, out: Path, fps: int, dpi: int) -> None:
        # One palette for every frame, from a few frames across the run (the figure has few
        # colours): quantizing each frame on its own took 3/4 of the time.
        n = len(self.times)
        width, height, some = self.rgba_frames(dpi, sorted({0, n // 3, 2 * n // 3, n - 1}))

        def rgb(buf: bytes) -> Image.Image:
            return Image.frombuffer("RGBA", (width, height), buf, "raw", "RGBA", 0, 1).convert(
                "RGB"
            )

        sample = [rgb(buf) for buf in some]
        sheet = Image.new("RGB", (width, height * len(sample)))
        for i, im in enumerate(sample):
            sheet.paste(im, (0, height * i))
        palette = sheet.quantize(256, method=Image.Quantize.FASTOCTREE)
        _, _, every = self.rgba_frames(dpi)
        images = [rgb(buf).quantize(palette=palette, dither=Image.Dither.NONE) for buf in every]
        images[0].save(
            out, format="GIF", save_all=True, append_images=images[1:],
            duration=int(1000 / fps), loop=0,
        )  # fmt: skip

    def _save_mp4(self, out: Path, fps: int, dpi: int) -> None:
        width, height, frames = self.rgba_frames(dpi)
        ffmpeg = shutil.which("ffmpeg") or "ffmpeg"
        cmd = [
            ffmpeg, "-y", "-loglevel", "error",
            "-f", "rawvideo", "-pix_fmt", "rgba", "-s", f"{width}x{height}", "-r", str(fps),
            "-i", "-",
            "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",  # H.264 in yuv420p wants even sizes
            "-pix_fmt", "yuv420p", "-f", "mp4", str(out),
        ]  # fmt: skip
        with subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            try:
                for buf in frames:
                    proc.stdin.write(buf)
            except BrokenPipeError:
                pass  # ffmpeg stopped: its message follows
            _, err = proc.communicate()
        if proc.returncode:
            message = err.decode(errors="replace").strip().splitlines()
            raise ScenarioError(
                f"--out: ffmpeg could not write {quote(str(out))}: "
                f"{message[-1] if message else f'exit {proc.returncode}'}"
            )

    def to_html(self, fps: int = 10) -> str:
        """The animation as an HTML fragment with a player (a time slider, play and step
        buttons), for a page or a notebook (``IPython.display.HTML``)."""
        return _Player(self, fps).html()


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


# ---------------------------------------------------------------------------------------------
# Drawing with matplotlib: the still picture and the artists that move.


class _Drawing:
    """The artists of the animation, built once and updated per frame. The moving ones (bars,
    arrows, credit labels, cursor, title) are *animated*: a plain draw of the figure leaves
    them out, so that the still picture can be kept and the moving ones drawn over it."""

    def __init__(self, anim: Animation, dpi: int):
        self.a = anim
        self.dpi = dpi

    def build(self) -> Figure:
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
        self.top, self.bottom = top, bottom
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
        # Per port (one direction of a cable): a queue bar and a stop arrow. The bar grows from
        # the port toward its peer; the arrow points the same way, from the port's node toward
        # the node it may not send to: a port waits on its peer, as the wait-for cycle's arrows
        # of topology.png run (each member's switch -> the switch its port sends to).
        self.bars: dict[str, tuple] = {}
        self.arrows: dict[str, FancyArrowPatch] = {}
        self.arrow_ends: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.texts: dict[str, object] = {}
        self.text_at: dict[str, np.ndarray] = {}
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
                [], [], color=QUEUE_COLOR, linewidth=BAR_WIDTH, solid_capstyle="butt", zorder=2,
                animated=True,
            )  # fmt: skip
            self.bars[port] = (line, start, reach)
            tail = pos[u] + d * 0.55 + normal * 2.4 * off
            head = pos[u] + d * 0.85 + normal * 2.4 * off
            arrow = FancyArrowPatch(
                tail, head, arrowstyle="-|>", mutation_scale=ARROW_HEAD, linewidth=ARROW_WIDTH,
                color=STOP_COLOR, zorder=5, visible=False, animated=True,
            )  # fmt: skip
            top.add_patch(arrow)
            self.arrows[port] = arrow
            self.arrow_ends[port] = (tail, head)
            moves = (
                a.credits is not None
                and port in a.credits.by_label
                and (
                    np.ptp(a.credits.by_label[port][1]) > 0  # a port that sends: its credit moves
                )
            )
            if moves and len(a.peers) <= 48:
                at = pos[u] + d * 0.3 - normal * 2.5 * off
                self.text_at[port] = at
                self.texts[port] = top.text(
                    *at, "", ha="center", va="center", fontsize="x-small", zorder=6,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7, "pad": 1},
                    animated=True,
                )  # fmt: skip
        pad = 0.12 * span
        top.set_xlim(xy[:, 0].min() - pad, xy[:, 0].max() + pad)
        top.set_ylim(xy[:, 1].min() - pad, xy[:, 1].max() + pad)
        self.legend_handles = self._legend_handles()
        top.legend(
            handles=self.legend_handles,
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
        self.cursor = bottom.axvline(t0 * factor, color="black", linewidth=1.0, animated=True)
        mode = f" ({run.summary['mode']})" if run.summary.get("mode") else ""
        self.title = fig.suptitle("", animated=True)
        self.name = f"{run.summary.get('scenario', run.path.name)}{mode}"
        self.fig = fig
        return fig

    def _legend_handles(self) -> list:
        a, run = self.a, self.a.run
        handles = []
        if a.queue is not None or a.credits is not None:
            what = {
                "bytes": f"egress queue (full bar: {a.queue_peak / 1024:.4g} KiB, the largest)",
                "frames": f"frames waiting to be sent (full bar {a.queue_peak:.4g})",
                "credits in use": f"BB_Credit in use (full bar {a.queue_peak:.4g} credits)",
            }[a.queue_unit]
            handles.append(Line2D([], [], color=QUEUE_COLOR, linewidth=BAR_WIDTH, label=what))
        else:
            handles.append(
                Patch(
                    color="white",
                    label=f"queues not recorded (record: {RECORDERS[run.fabric]['queue']})",
                )
            )
        stop_text = {
            "pause": "PFC PAUSE from the peer: the port may not send this way",
            "blocked": "the port may not send this way (paused or out of credit)",
            "credits": "out of BB_Credit: may not send this way until an R_RDY",
        }
        if a.stop_name:
            handles.append(
                Line2D(
                    [], [], color=STOP_COLOR, marker=">", linewidth=ARROW_WIDTH,
                    label=stop_text[a.stop_name],
                )
            )  # fmt: skip
        if a.cycle_ports:
            handles.append(
                Patch(color=CYCLE_COLOR, label="deadlock: the wait-for cycle, queue and arrow")
            )
        return handles

    def _timeline(self, ax, factor: float) -> None:
        a = self.a
        name = a.line_name
        df = a.run.series.get(name) if name else None
        if df is None or not len(df):
            ax.text(0.5, 0.5, "nothing recorded over time", ha="center", transform=ax.transAxes)
            return
        col = _value_column(df)
        t0, t1 = a.span()
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
        elif name in ("queue", "tx_queue", "blocked"):
            steps = a._blocked if name == "blocked" else a.queue
            grid = np.linspace(t0, t1, 400)
            total = steps.total(grid)
            if name == "queue":
                total, ylabel = total / 1024, "queued, all ports (KiB)"
            elif name == "tx_queue":
                ylabel = "frames waiting, all ports"
            else:
                ylabel = "queues blocked"
            ax.step(grid * factor, total, where="post", color=QUEUE_COLOR, linewidth=1.0)
            ax.set_ylabel(ylabel)
        else:  # credits: the deadlock's cycle, the ports that ever ran out, or the first few
            steps = a.credits
            low = [p for p, (_, v) in steps.by_label.items() if np.nanmin(v) <= 0] or list(
                steps.by_label
            )
            low = [p for p in low if p in a.cycle_ports] + [
                p for p in low if p not in a.cycle_ports
            ]
            for label in low[:4]:
                t, v = steps.by_label[label]
                ax.step(
                    np.append(t, t1) * factor,
                    np.append(v, v[-1]),
                    where="post",
                    linewidth=1.0,
                    label=label,
                )
            ax.set_ylabel("BB_Credit available")
            ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.set_ylim(bottom=0)

    def title_text(self, f: Frame) -> str:
        status = ""
        if f.red:
            status = f" — deadlock detected: cycle of {len(self.a.cycle_ports)} queues"
        elif f.stopped:
            status = f" — {len(f.stopped)} port{'s' if len(f.stopped) > 1 else ''} stopped"
        return f"{self.name}: t = {f.t * self.factor:.4g} {self.unit}{status}"

    def credit_text(self, f: Frame, port: str) -> str:
        c = f.credits.get(port)
        return "" if c is None else f"credit {c:.0f}/{self.a.credit_max[port]:.0f}"

    def update(self, k: int | Frame):
        f = self.a.frame(k) if isinstance(k, int | np.integer) else k
        for port, (line, start, reach) in self.bars.items():
            frac = f.queue.get(port, 0.0)
            end = start + reach * frac
            line.set_data([start[0], end[0]], [start[1], end[1]])
            # The queue's colour, as in the legend; red once it is a queue of the cycle.
            line.set_color(CYCLE_COLOR if port in f.red else QUEUE_COLOR)
        for port, arrow in self.arrows.items():
            arrow.set_visible(port in f.stopped or port in f.red)
            arrow.set_color(CYCLE_COLOR if port in f.red else STOP_COLOR)
        for port, text in self.texts.items():
            text.set_text(self.credit_text(f, port))
        self.cursor.set_xdata([f.t * self.factor, f.t * self.factor])
        self.title.set_text(self.title_text(f))
        return self.moving()

    def moving(self) -> list:
        """The artists a frame changes, in drawing order."""
        bars = [line for line, _, _ in self.bars.values()]
        return [*bars, *self.arrows.values(), *self.texts.values(), self.cursor, self.title]

    def freeze(self):
        """Lay the figure out once, with the first frame's title (constrained layout would
        otherwise run again on every draw), and keep that layout; returns the canvas."""
        self.update(0)
        self.fig.canvas.draw()
        self.fig.set_layout_engine("none")
        return self.fig.canvas


# ---------------------------------------------------------------------------------------------
# The HTML player: the still picture once (SVG), the frames as numbers, a script that draws the
# moving parts on a canvas over it.

_ids = itertools.count()

_PLAYER_JS = """
(function () {
  var root = document.getElementById("%(id)s");
  var D = JSON.parse(root.querySelector("script[type='application/json']").textContent);
  var img = root.querySelector("img"), cv = root.querySelector("canvas");
  var slider = root.querySelector("input"), info = root.querySelector(".lfsim-frame");
  var b = root.querySelectorAll("button"), play = b[2];
  var n = D.t.length, k = 0, timer = null;
  function arrow(g, a, color) {
    var dx = a[2] - a[0], dy = a[3] - a[1], len = Math.hypot(dx, dy) || 1;
    var ux = dx / len, uy = dy / len, hl = D.head[0], hw = D.head[1];
    var tx = a[2] - ux * hl, ty = a[3] - uy * hl;
    g.strokeStyle = color; g.fillStyle = color; g.lineWidth = D.arrow_width;
    g.beginPath(); g.moveTo(a[0], a[1]); g.lineTo(tx, ty); g.stroke();
    g.beginPath(); g.moveTo(a[2], a[3]);
    g.lineTo(tx + uy * hw, ty - ux * hw); g.lineTo(tx - uy * hw, ty + ux * hw);
    g.closePath(); g.fill();
  }
  function draw() {
    var g = cv.getContext("2d"), s = cv.width / D.W, q = D.q[k], st = D.s[k], i;
    g.setTransform(s, 0, 0, s, 0, 0);
    g.clearRect(0, 0, D.W, D.H);
    g.lineCap = "butt";
    g.lineWidth = D.bar_width;
    for (i = 0; i < D.bars.length; i++) {
      var r = D.bars[i], f = q[i] / 1000;
      if (f <= 0) continue;
      g.strokeStyle = st[i] === "2" ? D.color.cycle : D.color.queue;
      g.beginPath(); g.moveTo(r[0], r[1]);
      g.lineTo(r[0] + (r[2] - r[0]) * f, r[1] + (r[3] - r[1]) * f); g.stroke();
    }
    for (i = 0; i < D.arrows.length; i++) {
      if (st[i] !== "0") arrow(g, D.arrows[i], st[i] === "2" ? D.color.cycle : D.color.stop);
    }
    g.font = D.text_size + "px sans-serif"; g.textAlign = "center"; g.textBaseline = "middle";
    for (i = 0; i < D.texts.length; i++) {
      var c = D.c[k][i];
      if (c === null) continue;
      var p = D.texts[i], text = "credit " + c + "/" + D.text_max[i];
      var w = g.measureText(text).width + 2;
      g.fillStyle = "rgba(255,255,255,0.7)";
      g.fillRect(p[0] - w / 2, p[1] - D.text_size / 2 - 1, w, D.text_size + 2);
      g.fillStyle = "#000"; g.fillText(text, p[0], p[1]);
    }
    g.strokeStyle = "#000"; g.lineWidth = 1;
    g.beginPath(); g.moveTo(D.cx[k], D.cursor[0]); g.lineTo(D.cx[k], D.cursor[1]); g.stroke();
    g.font = D.title_size + "px sans-serif"; g.fillStyle = "#000";
    g.fillText(D.title[k], D.title_at[0], D.title_at[1]);
    slider.value = k;
    info.textContent = "frame " + (k + 1) + " of " + n;
  }
  function fit() {
    var r = window.devicePixelRatio || 1;
    cv.width = Math.max(1, Math.round(img.clientWidth * r));
    cv.height = Math.max(1, Math.round(img.clientHeight * r));
    draw();
  }
  function show(j) { k = Math.max(0, Math.min(n - 1, j)); draw(); }
  function stop() {
    if (timer) { clearInterval(timer); timer = null; }
    play.innerHTML = "&#x25b6;";
  }
  function start() {
    if (k >= n - 1) k = 0;
    play.innerHTML = "||";
    timer = setInterval(function () { if (k >= n - 1) stop(); else show(k + 1); }, 1000 / D.fps);
  }
  b[0].onclick = function () { stop(); show(0); };
  b[1].onclick = function () { stop(); show(k - 1); };
  play.onclick = function () { if (timer) stop(); else start(); };
  b[3].onclick = function () { stop(); show(k + 1); };
  b[4].onclick = function () { stop(); show(n - 1); };
  slider.oninput = function () { stop(); show(+slider.value); };
  if (img.complete) fit(); else img.onload = fit;
  if (window.ResizeObserver) new ResizeObserver(fit).observe(img);  // e.g. a notebook's panel
  else window.addEventListener("resize", fit);
})();
"""


class _Player:
    """The HTML player of an animation: ``data()`` (what it draws, in the SVG's pixels) and
    ``html()``."""

    def __init__(self, anim: Animation, fps: int):
        self.a = anim
        self.fps = fps

    def data(self) -> tuple[dict, str]:
        """(the frames and the moving parts' places, the still picture as SVG text)."""
        a = self.a
        drawing = _Drawing(a, dpi=72)  # at 72 dpi a point is one SVG pixel
        fig = drawing.build()
        drawing.freeze()
        height = fig.bbox.height

        def px(ax, points) -> list[float]:
            out = ax.transData.transform(np.asarray(points, dtype=float).reshape(-1, 2))
            out[:, 1] = height - out[:, 1]  # SVG's y runs down
            return [round(float(v), 2) for v in out.ravel()]

        ports = list(drawing.bars)
        texts = list(drawing.texts)
        bars = [px(drawing.top, [s, s + r]) for _, s, r in drawing.bars.values()]
        arrows = [px(drawing.top, drawing.arrow_ends[p]) for p in ports]
        frames = a.frames()
        t0 = float(a.times[0])
        x0 = px(drawing.bottom, [(t0 * drawing.factor, 0.0)])[0]
        x1 = px(drawing.bottom, [((t0 + 1.0) * drawing.factor, 0.0)])[0]  # px per second
        box = drawing.bottom.get_window_extent()
        title = drawing.title.get_window_extent(fig.canvas.get_renderer())
        data = {
            "W": round(float(fig.bbox.width), 2),
            "H": round(float(height), 2),
            "fps": self.fps,
            "t": [float(f"{f.t:.9g}") for f in frames],
            "title": [drawing.title_text(f) for f in frames],
            "title_at": [
                round(float(title.x0 + title.x1) / 2, 2),
                round(height - title.y0 - title.height / 2, 2),
            ],
            "title_size": drawing.title.get_fontsize(),
            "color": {
                "queue": to_hex(QUEUE_COLOR),
                "stop": to_hex(STOP_COLOR),
                "cycle": to_hex(CYCLE_COLOR),
            },
            "bar_width": BAR_WIDTH,
            "arrow_width": ARROW_WIDTH,
            "head": [0.4 * ARROW_HEAD, 0.2 * ARROW_HEAD],  # matplotlib's -|> head
            "ports": ports,
            "bars": bars,
            "arrows": arrows,
            # Per frame: each bar's length in thousandths of the full bar, each port's state
            # (0 sends, 1 stopped, 2 a queue of the detected cycle).
            "q": [[round(1000 * f.queue.get(p, 0.0)) for p in ports] for f in frames],
            "s": [
                "".join("2" if p in f.red else "1" if p in f.stopped else "0" for p in ports)
                for f in frames
            ],  # fmt: skip
            "texts": [px(drawing.top, [drawing.text_at[p]]) for p in texts],
            "text_max": [round(a.credit_max[p]) for p in texts],
            "text_size": drawing.texts[texts[0]].get_fontsize() if texts else 0,
            "c": [
                [None if (c := f.credits.get(p)) is None else round(c) for p in texts]
                for f in frames
            ],  # fmt: skip
            "cx": [round(x0 + (f.t - t0) * (x1 - x0), 2) for f in frames],
            "cursor": [round(height - box.y1, 2), round(height - box.y0, 2)],
        }
        for artist in drawing.moving():
            artist.set_visible(False)
        svg = io.StringIO()
        with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "lfsim"}):
            fig.savefig(svg, format="svg", metadata={"Date": None})
        return data, svg.getvalue()

    def html(self) -> str:
        data, svg = self.data()
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=True).replace("</", "<\\/")
        digest = hashlib.sha1(text.encode()).hexdigest()[:10]
        uid = f"lfsim-anim-{digest}-{next(_ids)}"
        image = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        w = data["W"]
        n = len(data["t"])
        return (
            f'<div id="{uid}" class="lfsim-animation" style="max-width:{w}px">\n'
            '<div style="position:relative">'
            f'<img alt="the animation\'s still picture" style="display:block;width:100%" '
            f'src="data:image/svg+xml;base64,{image}">'
            '<canvas style="position:absolute;left:0;top:0;width:100%;height:100%">'
            "</canvas></div>\n"
            '<div style="display:flex;gap:4px;align-items:center;font:13px sans-serif">'
            '<button title="first">|&#x25c0;&#x25c0;</button>'
            '<button title="back">&#x25c0;|</button>'
            '<button title="play / pause">&#x25b6;</button>'
            '<button title="forward">|&#x25b6;</button>'
            '<button title="last">&#x25b6;&#x25b6;|</button>'
            f'<input type="range" min="0" max="{n - 1}" value="0" style="flex:1">'
            '<span class="lfsim-frame"></span></div>\n'
            f'<script type="application/json">{text}</script>\n'
            f"<script>{_PLAYER_JS % {'id': uid}}</script>\n"
            "</div>\n"
        )


def _page(fragment: str) -> str:
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>lfsim animate</title>'
        "</head>\n<body>\n" + fragment + "</body></html>\n"
    )


# ---------------------------------------------------------------------------------------------
# Entry points.


def to_html(
    result_dir: str | Path,
    step: str | None = None,
    max_frames: int = DEFAULT_MAX_FRAMES,
    fps: int = 10,
) -> str:
    """A results folder as HTML with a player, for a notebook:
    ``IPython.display.HTML(to_html(result.out, step="20us"))``. The frames are numbers (a few
    bytes per port and frame) drawn by the page over one still picture."""
    step_s = time_seconds(step) if step is not None else None
    if step is not None and not step_s:
        raise ScenarioError(f"step: got {quote(step)}; accepted: a time with a unit, e.g. 10us")
    anim = Animation(load_run(result_dir), step_s, max_frames)
    for note in anim.notes:
        warnings.warn(note, AnimationNote, stacklevel=2)
    return anim.to_html(fps)


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
    """Render a results folder to ``out`` (default RESULT_DIR/animation.html); returns it.
    What it does other than asked (a step enlarged to keep ``max_frames``, an instant moved
    into the run, ``at_s`` without a .png) is warned as an ``AnimationNote``."""
    run = load_run(result_dir)
    target = Path(out) if out is not None else run.path / "animation.html"
    check_out(target)
    anim = Animation(run, step_s, max_frames)
    if at_s is not None and target.suffix != ".png":
        anim.notes.append(f"--at applies to a .png (one frame); {target.suffix} shows every frame")
    tmp = target.with_name(f".{target.name}.tmp{target.suffix}")
    try:
        anim.save(tmp, fps=fps, at_s=at_s)
        tmp.replace(target)  # nothing half-written
    finally:
        tmp.unlink(missing_ok=True)
    for note in anim.notes:
        warnings.warn(note, AnimationNote, stacklevel=2)
    return target
