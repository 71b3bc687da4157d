"""What people read on the terminal: ``lfsim run``'s summary.

Only the printing: summary.json keeps every metric as the core reported it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
    """A short human summary: the run, then the scalar metrics that apply as an aligned table,
    then one line per vector metric (``labels``: what each entry of a vector is)."""
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
    scalars = {
        k: v for k, v in metrics.items() if not isinstance(v, list) and applies(k, metrics, fabric)
    }
    if scalars:
        width = max(len(k) for k in scalars)
        lines += [f"  {k:<{width}}  {_scalar(v)}" for k, v in scalars.items()]
    for k, v in metrics.items():
        if isinstance(v, list) and v:  # an empty one (no deadlock cycle) says nothing
            lines.append("  " + format_vector(k, v, (labels or {}).get(k)))
    return "\n".join(lines)


def _scalar(value: Any) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.6g}"
    return fmt_number(value)
