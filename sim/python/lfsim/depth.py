"""Latency versus protocol depth: seed 000's model T = k * D + C, fitted to simulated stacks.

Each mode of the scenario (``scenarios/latency_vs_depth.yaml``) is one storage stack (the Stack
of its Fio workload). For every stack and operation (4 KiB QD1 random reads and writes by
default) one run gives the mean completion latency T; the depth D is the number of layers in
the stack's layer list (the run's ``stack_depth`` metric, counted by the fabric, never typed
in). k and C are the least-squares line through the (D, T) points of each operation.

The breakdown splits each T into the initiator's layers (their configured delays), the
target's software (2 x TargetDelay), the target device (measured, queue + service) and the
rest: transport and wire — frame/packet serialization, propagation, switch forwarding and the
protocol's own exchanges (XFER_RDY, RDMA READ of write data, R2T, TCP).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import core as _core
from .errors import ScenarioError, quote
from .fio import fio_workload
from .scenario import load_scenario, time_seconds

OPS = ("randread", "randwrite")


@dataclass
class DepthResult:
    """``points``: one row per (stack, op): mode, stack, op, depth, latency_us, p50_us,
    layers_us, target_software_us, device_us, transport_us. ``breakdown``: long form (mode,
    op, component, us) whose components add up to latency_us. ``fits``: per op, k_us, C_us,
    r2 and the number of points."""

    points: pd.DataFrame
    breakdown: pd.DataFrame
    fits: dict[str, dict[str, float]]

    def write(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.points.to_csv(out / "depth.csv", index=False)
        self.breakdown.to_csv(out / "breakdown.csv", index=False)
        (out / "fit.json").write_text(json.dumps(self.fits, indent=2) + "\n")

    def table(self) -> str:
        lines = [
            f"{'stack':<12} {'op':<9} {'D':>2} {'T us':>8} {'layers':>7} {'target':>7} "
            f"{'device':>7} {'transp.':>7}"
        ]
        for r in self.points.itertuples():
            lines.append(
                f"{r.stack:<12} {r.op:<9} {r.depth:>2} {r.latency_us:>8.2f} {r.layers_us:>7.2f} "
                f"{r.target_software_us:>7.2f} {r.device_us:>7.2f} {r.transport_us:>7.2f}"
            )
        for op, f in self.fits.items():
            lines.append(
                f"fit {op}: T = {f['k_us']:.3f} us x D + {f['C_us']:.3f} us, R^2 = {f['r2']:.4f}"
            )
        return "\n".join(lines)


def parse_layers(text: str, nbytes: int = 0) -> list[tuple[str, float]]:
    """'application:1us,tcp:2us+0.25us/KiB' -> [(name, microseconds for an I/O of nbytes)]
    (the fabric validated the text)."""
    out = []
    for item in text.split(","):
        name, _, value = item.partition(":")
        fixed, _, per_kib = value.partition("+")
        us = (time_seconds(fixed.strip()) or 0.0) * 1e6
        if per_kib:
            us += (time_seconds(per_kib.strip().removesuffix("/KiB")) or 0.0) * 1e6 * nbytes / 1024
        out.append((name.strip(), us))
    return out


def fit_line(depth: Sequence[float], latency: Sequence[float]) -> dict[str, float]:
    """Least squares T = k D + C; R^2 = 1 - SS_res / SS_tot."""
    d, t = np.asarray(depth, float), np.asarray(latency, float)
    if len(set(d)) < 2:
        raise ScenarioError(
            "latency_vs_depth: the stacks have one depth only; accepted: stacks of at least "
            "two different depths"
        )
    k, c = np.polyfit(d, t, 1)
    res = t - (k * d + c)
    tot = ((t - t.mean()) ** 2).sum()
    r2 = 1.0 - (res**2).sum() / tot if tot > 0 else 1.0
    return {"k_us": float(k), "C_us": float(c), "r2": float(r2), "points": len(d)}


def latency_vs_depth(
    scenario: str | Path | Mapping = "latency_vs_depth",
    overrides: Mapping[str, Any] | None = None,
    modes: Sequence[str] | None = None,
    ops: Sequence[str] = OPS,
    seed: int | None = None,
    mode_overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> DepthResult:
    """Run every stack (mode) for every op and fit T = k D + C per op. ``overrides`` apply to
    every mode; ``mode_overrides`` maps a mode to overrides of that mode only (a stack's own
    class, e.g. ``{"iscsi": {"IscsiStack.Layers": ...}}``, exists only where it is used)."""
    from .runner import run

    base = load_scenario(scenario, overrides, seed)
    all_modes = list((base.source.raw if base.source else {}).get("modes") or [])
    found = fio_workload(base.config)
    if found is None or not all_modes:
        raise ScenarioError(
            f"scenario: got {quote(base.name)} (fabric {base.fabric}, "
            f"{len(all_modes)} modes{'' if found else ', no Fio workload'}); accepted: a "
            "scenario with a Fio workload and one mode per stack, e.g. latency_vs_depth"
        )
    chosen = list(modes) if modes else all_modes
    unknown = [m for m in chosen if m not in all_modes]
    unknown += [m for m in (mode_overrides or {}) if m not in all_modes]
    if unknown or not chosen:
        raise ScenarioError(
            f"modes: got {', '.join(unknown) or '(none)'}; accepted: {', '.join(all_modes)}"
        )
    points, parts = [], []
    for mode in chosen:
        for op in ops:
            o = dict(overrides or {})
            o.update((mode_overrides or {}).get(mode, {}))
            o.update({"mode": mode, "FioJob.rw": op})
            r = run(scenario, o, seed)
            side = "read" if "read" in op else "write"
            m = r.metrics
            fio = r.config["workload"][found[0]]
            stack = fio["Stack"]
            # Each stack's layers are its class's Layers attribute (the registry names the class).
            cls = _core.short_name(_core.choices("ns3::StorageWorkload", "Stack")[stack]["type_id"])
            layers = parse_layers(r.config[cls]["Layers"], int(r.config["FioJob"]["bs"]))
            if int(m["stack_depth"]) != len(layers):
                raise AssertionError("stack_depth disagrees with the layer list")
            target_sw = 2 * (time_seconds(fio["TargetDelay"]) or 0) * 1e6
            t = m[f"{side}_lat_mean_us"]
            layers_us = sum(us for _, us in layers)
            device = m[f"{side}_device_us"]
            transport = t - layers_us - target_sw - device
            points.append(
                {
                    "mode": mode,
                    "stack": stack,
                    "op": op,
                    "depth": int(m["stack_depth"]),
                    "latency_us": t,
                    "p50_us": m[f"{side}_lat_p50_us"],
                    "layers_us": layers_us,
                    "target_software_us": target_sw,
                    "device_us": device,
                    "transport_us": transport,
                }
            )
            comps = [(f"host {name}", us) for name, us in layers]
            comps += [
                ("target software", target_sw),
                ("device", device),
                ("transport and wire", transport),
            ]
            parts += [{"mode": mode, "op": op, "component": c, "us": us} for c, us in comps]
    df = pd.DataFrame(points)
    # A line needs two depths; with one stack only the points are reported.
    fits = {
        op: fit_line(g["depth"], g["latency_us"])
        for op, g in df.groupby("op", sort=False)
        if g["depth"].nunique() >= 2
    }
    return DepthResult(df, pd.DataFrame(parts), fits)


def plot_depth(result: DepthResult, out: Path) -> list[Path]:
    """depth.png (T against D, fitted lines) and breakdown.png (stacked components)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    df = result.points
    fig, ax = plt.subplots(figsize=(6, 4))
    markers = {"randread": "o", "randwrite": "s"}
    for op, g in df.groupby("op", sort=False):
        f = result.fits.get(op)
        label = op
        if f:
            label += f": {f['k_us']:.2f} us x D + {f['C_us']:.2f} us (R$^2$ {f['r2']:.3f})"
        dots = ax.scatter(g["depth"], g["latency_us"], marker=markers.get(op, "o"), label=label)
        if f:
            xs = np.array([g["depth"].min() - 0.3, g["depth"].max() + 0.3])
            ax.plot(xs, f["k_us"] * xs + f["C_us"], "--", color=dots.get_facecolor()[0])
        for r in g.itertuples():
            ax.annotate(
                r.stack, (r.depth, r.latency_us), textcoords="offset points", xytext=(5, -3)
            )
    ax.set_xlabel("protocol stack depth D (layers)")
    ax.set_ylabel("mean QD1 latency T (us)")
    ax.set_title("Latency versus protocol depth, T = k D + C")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths = [out / "depth.png"]
    fig.savefig(paths[0], dpi=120)
    plt.close(fig)

    parts = result.breakdown
    bars = list(dict.fromkeys(zip(parts["mode"], parts["op"], strict=True)))
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(bars) + 1.5))
    comps = list(dict.fromkeys(parts["component"]))
    cmap = plt.get_cmap("tab20")
    for y, (mode, op) in enumerate(bars):
        left = 0.0
        sel = parts[(parts["mode"] == mode) & (parts["op"] == op)]
        for r in sel.itertuples():
            i = comps.index(r.component)
            ax.barh(y, r.us, left=left, color=cmap(i % 20))
            left += r.us
    ax.set_yticks(range(len(bars)), [f"{m} {o}" for m, o in bars])
    ax.set_xlabel("us")
    ax.set_title("Where the time goes (QD1 mean)")
    from matplotlib.patches import Patch

    legend = [Patch(color=cmap(i % 20), label=c) for i, c in enumerate(comps)]
    ax.legend(handles=legend, fontsize=7, loc="center left", bbox_to_anchor=(1, 0.5))
    fig.tight_layout()
    paths.append(out / "breakdown.png")
    fig.savefig(paths[1], dpi=120)
    plt.close(fig)
    return paths
