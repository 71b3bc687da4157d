"""What people read on the terminal: ``lfsim run``'s summary and ``lfsim sweep``'s table.

Only the printing: summary.json and sweep.csv keep every metric as the core reported it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

# A statistic over an empty set is reported as 0 by the core (C++ Percentile of nothing, a mean
# guarded by "count ? ... : 0"); it is not a measurement. (suffix of the metric, suffix of the
# count it is taken over): with the same prefix (a workload's name and "_", or none), the
# metric does not apply when it and its count are both 0.
_OVER_COUNT = (
    ("fct_mean_us", "messages_completed"),
    ("fct_p50_us", "messages_completed"),
    ("fct_p99_us", "messages_completed"),
    ("_lat_mean_us", "_ios"),
    ("_lat_p50_us", "_ios"),
    ("_lat_p99_us", "_ios"),
    ("_device_us", "_ios"),
    ("mean_latency_us", "iops"),
    ("p50_latency_us", "iops"),
    ("p99_latency_us", "iops"),
    ("oldest_in_flight_us", "ios_in_flight"),
    ("slowest_completed_us", "ios_completed"),
    ("controller_reset_first_us", "controller_resets"),
    ("qp_error_first_us", "qps_in_error"),
)

# Metrics a fabric reports for uniformity but cannot have: FC has no PAUSE frame (its
# transmitters wait for BB_Credit instead; see credit_stall_us).
_NOT_ON_FABRIC = {"fc": {"pause_frames_sent", "xon_frames_sent"}}


def applies(name: str, metrics: Mapping[str, Any], fabric: str | None = None) -> bool:
    """False for a metric that has no value in this run: NaN (null in summary.json), a
    statistic over nothing (see _OVER_COUNT) or one the fabric does not have."""
    value = metrics.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if fabric is not None and name in _NOT_ON_FABRIC.get(fabric, ()):
        return False
    if isinstance(value, bool) or value != 0:
        return True
    for suffix, count in _OVER_COUNT:
        if name.endswith(suffix):
            prefix = name[: -len(suffix)]
            if metrics.get(prefix + count) == 0:
                return False
    return True


def fmt_number(value: Any) -> str:
    """3 significant digits, but never fewer than the integer part; whole numbers (counts)
    without a fraction; booleans yes/no; NaN and None a dash."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    v = float(value)
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a < 1e-3:
        return f"{v:.2e}"
    decimals = 2 - math.floor(math.log10(a))
    text = f"{v:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_size(size: float) -> str:
    """A byte count as people write sizes: 4 KiB, 1 MiB, 1500 B."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{int(size // scale)} {unit}"
    return f"{fmt_number(size)} B"


# ---------------------------------------------------------------------------------------------
# lfsim run


def format_vector(name: str, values: Sequence, labels: Sequence[str] | None, top: int = 5) -> str:
    """One line for a vector metric: every entry with its label when there are few, else the
    largest non-zero ones (where the time or the traffic went) and how many more."""
    if all(isinstance(x, str) for x in values):
        return f"{name}: {', '.join(values)}"  # labels themselves, e.g. deadlock_cycle
    names = list(labels) if labels is not None and len(labels) == len(values) else None

    def entry(i: int) -> str:
        return f"{names[i] if names else f'#{i}'} {fmt_number(values[i])}"

    n = len(values)
    nonzero = sorted((i for i in range(n) if values[i] != 0), key=lambda i: -values[i])
    if not nonzero:
        return f"{name}: 0" + (f" for all {n}" if n > 1 else "")
    if n <= 8:
        if names is None:
            return f"{name}: {', '.join(fmt_number(v) for v in values)}"
        return f"{name}: {', '.join(entry(i) for i in range(n))}"
    parts = [entry(i) for i in nonzero[:top]]
    rest = nonzero[top:]
    if rest:
        parts.append(f"{len(rest)} more down to {fmt_number(values[rest[-1]])}")
    zeros = n - len(nonzero)
    return f"{name} ({n}): {', '.join(parts)}" + (f"; {zeros} zero" if zeros else "")


def format_summary(
    summary: Mapping[str, Any], labels: Mapping[str, Sequence[str] | None] | None = None
) -> str:
    """A short human summary: the run, then the metrics that apply by group (``lfsim.metrics``:
    flows apart from messages, the bottleneck port apart from the switches...), each group's
    header saying what sets it apart; scalars aligned, then one line per vector metric
    (``labels``: what each entry of a vector is). A further workload's metrics (prefixed with
    its name, from ``summary["workloads"]``) are a group of their own."""
    from .metrics import GROUPS, METRICS, describe
    from .scenario import split_time, unit_seconds

    # Simulated time in the unit of stop_time (the unit the user thinks in).
    unit = (split_time(summary.get("stop_time", "")) or (0.0, "s"))[1]
    sim = summary["sim_time_s"] / unit_seconds(unit)
    mode = f", mode {summary['mode']}" if summary.get("mode") else ""
    lines = [
        f"{summary['scenario']} (fabric {summary['fabric']}{mode}, seed {summary['seed']}): "
        f"simulated {sim:.6g} {unit} in {summary['wall_time_s']:.3g} s wall time, "
        f"{summary['events']:,} events"
    ]
    metrics = summary["metrics"]
    fabric = summary.get("fabric")
    workloads = list(summary.get("workloads") or [])
    groups: dict[str, list[str]] = {}
    for name, value in metrics.items():
        if isinstance(value, list):
            if not value:  # an empty one (no deadlock cycle) says nothing
                continue
        elif not applies(name, metrics, fabric):
            continue
        what, workload = describe(name, workloads, fabric)
        key = f"Workload {workload}" if workload else what.group if what else "Other"
        groups.setdefault(key, []).append(name)
    # Within a group, in the order lfsim.metrics lists them (counts before what is taken over
    # them), a further workload's by the metric its name ends with.
    known = list(METRICS)

    def rank(name: str) -> int:
        ends = [i for i, m in enumerate(known) if name == m or name.endswith("_" + m)]
        return ends[0] if ends else len(known)

    for names in groups.values():
        names.sort(key=rank)
    order = [*GROUPS, *(f"Workload {w}" for w in workloads), "Other"]
    scalars = [n for names in groups.values() for n in names if not isinstance(metrics[n], list)]
    width = max((len(n) for n in scalars), default=0)
    for key in sorted(groups, key=order.index):
        note = GROUPS.get(key) or (
            "its own flows and messages" if key.startswith("Workload ") else "not described"
        )
        lines.append(f"  {key}: {note}")
        names = groups[key]
        lines += [f"    {n:<{width}}  {_scalar(metrics[n])}" for n in names if n in scalars]
        lines += [
            "    " + format_vector(n, metrics[n], (labels or {}).get(n))
            for n in names
            if n not in scalars
        ]
    return "\n".join(lines)


def _scalar(value: Any) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.6g}"
    return fmt_number(value)


# ---------------------------------------------------------------------------------------------
# lfsim sweep

# The columns of the sweep table, in this order, each shown if at least one point has it:
# (pattern of the metric name, header with its unit). A pattern's group "w" is a workload's
# name (metrics of the second and later workloads are prefixed with it).
COLUMNS: tuple[tuple[str, str], ...] = (
    # flows (incast, dcqcn, ...)
    (r"total_goodput_Gbps", "goodput Gb/s"),
    (r"(?P<w>.+)_goodput_Gbps", "{w} Gb/s"),
    (r"fct_p99_us", "p99 FCT us"),
    (r"(?P<w>.+)_fct_p99_us", "{w} p99 FCT us"),
    # FCP initiators
    (r"total_MiBps", "MiB/s"),
    (r"iops", "IOPS"),
    (r"p99_latency_us", "p99 latency us"),
    (r"target_port_min_credits", "min credits"),
    # storage (fio)
    (r"read_iops", "read IOPS"),
    (r"read_lat_p99_us", "read p99 us"),
    (r"write_iops", "write IOPS"),
    (r"write_lat_p99_us", "write p99 us"),
    (r"ios_failed", "failed I/Os"),
    # links and ping-pong
    (r"throughput_MiBps", "MiB/s"),
    (r"sustained_MiBps", "sustained MiB/s"),
    (r"latency_slope_us_per_KiB", "us per KiB"),
    (r"knee_KiB", "knee KiB"),
    # what the fabric did to get there
    (r"pause_frames_sent", "PAUSE sent"),
    (r"ecn_marked", "ECN marked"),
    (r"drops", "drops"),
    (r"retransmitted_packets", "retransmits"),
    (r"peak_queue_KiB", "peak queue KiB"),
    (r"deadlock", "deadlock"),
)
# With none of the above (another fabric's metrics): this many of its scalars, in order.
FALLBACK_COLUMNS = 8


def table_columns(columns: Sequence[str]) -> list[tuple[str, str]]:
    """(metric, header) of the metrics in ``columns`` that the table shows, in COLUMNS order."""
    chosen: list[tuple[str, str]] = []
    taken: set[str] = set()
    for pattern, header in COLUMNS:
        for name in columns:
            m = re.fullmatch(pattern, name)
            if m is None or name in taken:  # total_goodput_Gbps is no workload "total"
                continue
            taken.add(name)
            chosen.append((name, header.format(**m.groupdict())))
    return chosen


def format_sweep_table(
    rows: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
    fabrics: Sequence[str | None] | None = None,
    bool_metrics: Collection[str] = (),
) -> str:
    """The sweep as people read it: one row per point, its grid values, then the metrics that
    matter (COLUMNS) with units in the header; ``-`` where a point's fabric has no such metric.

    ``rows``: the points' values (the sweep DataFrame's records); ``fabrics``: each point's
    fabric; ``bool_metrics``: names of boolean metrics (in a DataFrame they are 0.0/1.0)."""
    fabrics = list(fabrics) if fabrics is not None else [None] * len(rows)
    names = list(dict.fromkeys(k for r in rows for k in r if k not in keys))
    metrics = [n for n in names if n not in ("wall_time_s", "events")]
    chosen = table_columns(metrics)
    if not chosen:
        numeric = [n for n in metrics if any(_is_number(r.get(n)) for r in rows)]
        chosen = [(n, n) for n in numeric[:FALLBACK_COLUMNS]]

    def cell(row: Mapping[str, Any], fabric: str | None, name: str) -> str:
        if not applies(name, row, fabric):
            return "-"
        value = row[name]
        if name in bool_metrics and value in (0, 1):
            return "yes" if value else "no"
        return fmt_number(value)

    header = [*keys, *(h for _, h in chosen)]
    body = [
        [fmt_number(r.get(k)) for k in keys] + [cell(r, f, n) for n, _ in chosen]
        for r, f in zip(rows, fabrics, strict=True)
    ]
    # A column only if at least one point has it.
    keep = [i for i in range(len(header)) if i < len(keys) or any(line[i] != "-" for line in body)]
    header = [header[i] for i in keep]
    body = [[line[i] for i in keep] for line in body]
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=True)]
    # Numbers right-aligned, text (a grid of modes) left-aligned.
    right = [i >= len(keys) or all(_looks_numeric(b[i]) for b in body) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ).rstrip()

    return "\n".join([line(header), *(line(b) for b in body)])


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
