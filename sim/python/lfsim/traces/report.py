"""The one report format of ``lfsim compare``: rows of (item, metric, unit, HW, SIM, error),
printed as a table, written as JSON and drawn as a plot; ``--tolerance`` turns a row beyond it
into a non-zero exit code so that a lab can gate its CI on the comparison."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ScenarioError, quote


@dataclass
class Row:
    item: str  # what is compared: a perftest size, a fio job and direction, a port, a QP
    metric: str
    unit: str
    hw: float | None
    sim: float | None
    note: str = ""

    @property
    def err_pct(self) -> float | None:
        """(SIM - HW) / HW x 100; None when a side is missing or HW is 0."""
        if self.hw is None or self.sim is None or self.hw == 0:
            return None
        if not (math.isfinite(self.hw) and math.isfinite(self.sim)):
            return None
        return (self.sim - self.hw) / abs(self.hw) * 100.0

    def as_dict(self) -> dict:
        return {
            "item": self.item,
            "metric": self.metric,
            "unit": self.unit,
            "hw": self.hw,
            "sim": self.sim,
            "err_pct": self.err_pct,
            "note": self.note,
        }


@dataclass
class Comparison:
    """What one ``lfsim compare KIND`` produced: its rows, the files compared, warnings."""

    kind: str
    hw: str
    sim: str
    rows: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add(self, item, metric, unit, hw, sim, note="") -> None:
        self.rows.append(Row(str(item), metric, unit, _num(hw), _num(sim), note))

    def beyond(self, tolerance_pct: float) -> list[Row]:
        """Rows whose |error| exceeds the tolerance (rows without an error never do)."""
        return [r for r in self.rows if r.err_pct is not None and abs(r.err_pct) > tolerance_pct]

    def frame(self):
        import pandas as pd

        return pd.DataFrame([r.as_dict() for r in self.rows])

    def as_json(self, tolerance_pct: float | None = None) -> dict:
        doc = {
            "kind": self.kind,
            "hw": self.hw,
            "sim": self.sim,
            "rows": [r.as_dict() for r in self.rows],
            "warnings": list(self.warnings),
        }
        if tolerance_pct is not None:
            doc["tolerance_pct"] = tolerance_pct
            doc["beyond_tolerance"] = len(self.beyond(tolerance_pct))
        return doc

    def table(self) -> str:
        return format_rows(self.rows)

    def plot(self, path: str | os.PathLike) -> Path:
        """One panel per metric: HW and SIM side by side per item (a line over numeric items,
        such as perftest sizes, else bars)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        metrics = list(dict.fromkeys(r.metric for r in self.rows))
        fig, axes = plt.subplots(len(metrics), 1, figsize=(8, 2.6 * len(metrics)), squeeze=False)
        for ax, metric in zip(axes[:, 0], metrics, strict=True):
            rows = [r for r in self.rows if r.metric == metric]
            labels = [r.item for r in rows]
            hw = [math.nan if r.hw is None else r.hw for r in rows]
            sim = [math.nan if r.sim is None else r.sim for r in rows]
            numeric = all(_is_number(x) for x in labels) and len(labels) > 2
            if numeric:
                xs = [float(x) for x in labels]
                ax.plot(xs, hw, "o-", label="HW")
                ax.plot(xs, sim, "s--", label="SIM")
                ax.set_xscale("log", base=2)
            else:
                xs = range(len(labels))
                ax.bar([x - 0.2 for x in xs], hw, width=0.4, label="HW")
                ax.bar([x + 0.2 for x in xs], sim, width=0.4, label="SIM")
                ax.set_xticks(list(xs), labels, rotation=30, ha="right", fontsize=7)
            ax.set_ylabel(f"{metric}\n[{rows[0].unit}]" if rows[0].unit else metric, fontsize=8)
            ax.legend(fontsize=7)
        axes[0, 0].set_title(f"lfsim compare {self.kind}: {Path(self.hw).name}", fontsize=9)
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path

    def write(self, out: str | os.PathLike, tolerance_pct: float | None = None) -> Path:
        """``comparison.json``, ``comparison.txt`` and ``comparison.png`` into ``out``, all or
        nothing (the folder is written beside it and renamed into place)."""
        from ..output import atomic_dir

        out = Path(out)
        with atomic_dir(out, "--out") as tmp:
            (tmp / "comparison.json").write_text(json.dumps(self.as_json(tolerance_pct), indent=2))
            (tmp / "comparison.txt").write_text(self.table() + "\n")
            if any(r.hw is not None or r.sim is not None for r in self.rows):
                self.plot(tmp / "comparison.png")
        return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _num(v) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def format_rows(rows: Iterable[Row]) -> str:
    """An aligned text table: item, metric, unit, HW, SIM, err %."""
    return text_table(
        ("item", "metric", "unit"),
        [((r.item, r.metric, r.unit), r.hw, r.sim, r.err_pct) for r in rows],
    )


def text_table(labels: tuple, rows: Iterable[tuple]) -> str:
    """Label columns (left-aligned), then HW, SIM and err % (right-aligned); each row is
    (labels, hw, sim, err_pct), a missing value shown as n/a."""

    def num(v):
        return "n/a" if v is None else f"{v:.6g}"

    table = [(*labels, "HW", "SIM", "err %")]
    for names, hw, sim, err in rows:
        table.append((*names, num(hw), num(sim), "n/a" if err is None else f"{err:+.2f}"))
    n = len(labels)
    widths = [max(len(row[i]) for row in table) for i in range(n + 3)]
    lines = []
    for row in table:
        left = [row[i].ljust(widths[i]) for i in range(n)]
        right = [row[i].rjust(widths[i]) for i in range(n, n + 3)]
        lines.append("  ".join(left + right).rstrip())
    return "\n".join(lines)


def read_text(path, key: str, form: str) -> str:
    """A text file's content, or a ScenarioError naming ``key`` and the accepted ``form``."""
    p = Path(path)
    try:
        return p.read_text(errors="replace")
    except FileNotFoundError:
        raise ScenarioError(f"{key}: no such file {quote(str(p))}; accepted: {form}") from None
    except OSError as exc:
        raise ScenarioError(
            f"{key}: cannot read {quote(str(p))} ({exc.__class__.__name__}); accepted: {form}"
        ) from None


def check_tolerance(value, key: str = "--tolerance") -> float | None:
    if value is None:
        return None
    try:
        t = float(value)
    except (TypeError, ValueError):
        t = -1.0
    if not math.isfinite(t) or t < 0:
        raise ScenarioError(f"{key}: got {quote(value)}; accepted: a percentage >= 0, e.g. 10")
    return t
