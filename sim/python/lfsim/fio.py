"""fio-compatible JSON from simulated I/Os, and the comparison of two fio JSON files.

``fio_json(jobs, ios, runtime_s)`` returns the document fio 3.x writes with
``--output-format=json`` (``plus=True``: ``json+``, with the clat histogram bins), laid out as
fio 3.33 writes it (``stat.c``: ``show_thread_status_json``, ``add_ddir_status_json``), so that
simulated and measured results can be read and diffed with the same tools.

What is computed as fio does, from the per-I/O table:

- ``io_bytes``, ``total_ios``, ``runtime`` (ms), and fio's integer arithmetic for ``bw_bytes``
  (``1000 * io_bytes // runtime``), ``bw`` (KiB/s, ``bw_bytes // 1024``), ``iops``, ``bw_agg``
  (the job's mean bandwidth sample, truncated to an integer as fio does, in percent of the
  group's aggregate; all jobs form group 0 as in one fio invocation without ``stonewall``).
- ``slat_ns``/``clat_ns``/``lat_ns``: min, max, mean, sample standard deviation, N. slat =
  issue - submit, clat = complete - issue, lat = complete - submit. Without an ``issue_ns``
  column the I/Os have no submission phase, as with fio's synchronous engines (psync): slat
  has N = 0 and clat = lat.
- Percentiles of clat (fio's default list 1 ... 99.99) are not exact order statistics: they are
  read from fio's log-linear histogram (``FIO_IO_U_PLAT_BITS`` = 6, 64 buckets per group, 29
  groups, 1856 buckets) exactly as ``calc_clat_percentiles`` does: the first bucket whose
  cumulative count reaches ``p / 100 * N`` (in x87 long double, as fio), reported as the
  bucket's value ``plat_idx_to_val``. A simulated and a measured percentile therefore differ
  only by the latencies, never by the method. ``json+`` adds the nonzero buckets as ``bins``.
- ``bw_min``/``bw_max``/``bw_mean``/``bw_dev``/``bw_samples`` and ``iops_*``: fio samples the
  rate every ``bwavgtime``/``iopsavgtime`` ms (default 500) after the ramp; a window with no
  completion gives no sample; fio's last window, ending with the run, is never taken (a 1 s run
  has 1 sample, a 2 s run 3, as the real samples in tests/data/fio show). Here window k covers
  completions in (ramp + k w, ramp + (k + 1) w] for every (k + 1) w < runtime.
- ``iodepth_level``: the number of the job's I/Os in flight when each I/O is submitted
  (itself included), in fio's buckets 1, 2, 4, ..., >=64; ``iodepth_submit``: every I/O is
  submitted alone; ``iodepth_complete``: I/Os of a job completing in the same nanosecond count
  as one reap. ``latency_ns``/``latency_us``/``latency_ms``: clat in fio's buckets. Percent
  values below fio's display floor (0.1 for depths, 0.01 for latencies) are raised to it.
- ``disk_util``: one device ``disk_name``: read/write I/Os, ticks (sum of lat, ms), in_queue
  (their sum) and util (time with at least one I/O in flight, in percent of the run).
- Not simulated, written as fio writes an idle value: ``usr_cpu``/``sys_cpu`` 0.0, ``ctx``,
  ``majf``, ``minf``, ``short_ios``, ``drop_ios``, ``error``, ``eta`` 0, ``trim`` and ``sync``
  all zero, ``latency_target`` 0.

Only I/Os that complete after the job's ``ramp_time`` and no later than ``ramp_time +
runtime_s`` count, as fio accounts only I/Os completed after the ramp.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._version import __version__
from .errors import ScenarioError, quote
from .scenario import given_fio_options  # noqa: F401 (kept importable from here)
from .values import fio_bytes, fio_seconds, time_seconds

FIO_LAYOUT_VERSION = "3.33"
FIO_VERSION_STRING = f"lfsim {__version__} (fio {FIO_LAYOUT_VERSION} json layout)"

# fio stat.h: the latency histogram.
PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_GROUP_NR = 29
PLAT_NR = PLAT_GROUP_NR * PLAT_VAL
# fio's default percentile list (options.c, def_percentile_list).
DEFAULT_PERCENTILES = (
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0,
    90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
)  # fmt: skip
DEFAULT_AVG_MS = 500  # fio's bwavgtime and iopsavgtime

RW_MODES = ("read", "write", "randread", "randwrite", "randrw", "readwrite", "rw", "trim")
DDIRS = ("read", "write")
IO_COLUMNS = ("job", "op", "bytes", "submit_ns", "complete_ns")

# Buckets of io_u.c: upper bounds (exclusive) of io_u_mark_lat_nsec/usec/msec and their names.
_LAT_EDGES = np.array([2, 4, 10, 20, 50, 100, 250, 500, 750, 1000])
_LAT_NAMES = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]
_LAT_MS_EDGES = np.array([2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000])
_LAT_MS_NAMES = [*_LAT_NAMES, "2000", ">=2000"]
_DEPTH_NAMES = ["1", "2", "4", "8", "16", "32", ">=64"]
_MAP_NAMES = ["0", "4", "8", "16", "32", "64", ">=64"]


# ---------------------------------------------------------------------------------------------
# fio's latency histogram (stat.c: plat_val_to_idx, plat_idx_to_val, calc_clat_percentiles).


def plat_val_to_idx(values: Any) -> np.ndarray:
    """Bucket index of each latency (ns), as fio's ``plat_val_to_idx``."""
    v = np.asarray(values, dtype=np.int64)
    if v.size and v.min() < 0:
        raise ValueError("latencies must be >= 0 ns")
    # msb = index of the highest set bit (0 for 0); frexp is exact below 2**53 ns (104 days).
    _, exp = np.frexp(v.astype(np.float64))
    msb = np.where(v > 0, exp.astype(np.int64) - 1, 0)
    error_bits = np.maximum(msb - PLAT_BITS, 0)
    base = (error_bits + 1) << PLAT_BITS
    offset = (PLAT_VAL - 1) & (v >> error_bits)
    idx = np.minimum(base + offset, PLAT_NR - 1)
    return np.where(msb <= PLAT_BITS, v, idx)


def plat_idx_to_val(idx: Any) -> np.ndarray:
    """The latency (ns) fio reports for a bucket: the middle of its range, as
    ``plat_idx_to_val`` (``base + (k + 0.5) * 2**error_bits``, an integer for every group >= 2)."""
    i = np.asarray(idx, dtype=np.int64)
    if i.size and (i.min() < 0 or i.max() >= PLAT_NR):
        raise ValueError(f"bucket index out of range 0..{PLAT_NR - 1}")
    error_bits = np.maximum((i >> PLAT_BITS) - 1, 0)
    k = i % PLAT_VAL
    val = (np.int64(1) << (error_bits + PLAT_BITS)) + k * (np.int64(1) << error_bits)
    val = val + ((np.int64(1) << error_bits) >> 1)
    return np.where(i < (PLAT_VAL << 1), i, val)


def plat_histogram(latencies_ns: Any) -> np.ndarray:
    """Counts per bucket (length ``PLAT_NR``) of the latencies, as fio's ``io_u_plat``."""
    return np.bincount(plat_val_to_idx(latencies_ns), minlength=PLAT_NR).astype(np.int64)


def plat_percentiles(hist: Any, percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> list[int]:
    """fio's ``calc_clat_percentiles``: for each percentile p (ascending), the value of the first
    bucket whose cumulative count reaches ``p / 100 * N``, compared in long double as fio."""
    counts = np.asarray(hist, dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return []
    cum = np.cumsum(counts).astype(np.longdouble)
    out = []
    for p in sorted(percentiles):
        threshold = np.longdouble(p) / np.longdouble(100.0) * np.longdouble(n)
        i = int(np.searchsorted(cum, threshold, side="left"))
        out.append(int(plat_idx_to_val(min(i, len(cum) - 1))))
    return out


def percentile_key(p: float) -> str:
    """The key fio writes for a percentile (C's ``%f``): 99.9 -> ``"99.900000"``."""
    return f"{p:f}"


# ---------------------------------------------------------------------------------------------
# Input checking.


def _positive_int(value: Any, key: str, default: int) -> int:
    if value is None:
        return default
    try:
        number = int(str(value).strip()) if not isinstance(value, bool) else 0
    except ValueError:
        number = 0
    if number < 1:
        raise ScenarioError(f"{key}: got {quote(value)}; accepted: an integer >= 1")
    return number


def _spec_dict(spec: Any, i: int) -> dict:
    if isinstance(spec, Mapping):
        return dict(spec)
    if dataclasses.is_dataclass(spec) and not isinstance(spec, type):
        return dataclasses.asdict(spec)
    if hasattr(spec, "model_dump"):
        return dict(spec.model_dump(exclude_none=True))
    raise ScenarioError(
        f"jobs[{i}]: got {quote(spec)}; accepted: a mapping of fio options (name, rw, bs, ...)"
    )


def _option_text(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    return str(value)


def _check_jobs(jobs: Sequence[Any]) -> list[dict]:
    if isinstance(jobs, (str, bytes, Mapping)) or not isinstance(jobs, Sequence):
        raise ScenarioError(
            f"jobs: got {quote(jobs)}; accepted: a list of job specs (mappings of fio options)"
        )
    if not jobs:
        raise ScenarioError("jobs: got an empty list; accepted: one job spec or more")
    out = []
    for i, spec in enumerate(jobs):
        d = _spec_dict(spec, i)
        name = d.get("jobname", d.get("name"))
        if not isinstance(name, str) or not name:
            raise ScenarioError(
                f"jobs[{i}].name: got {quote(name)}; accepted: a non-empty job name"
            )
        rw = d.get("rw", "read")
        if rw not in RW_MODES:
            raise ScenarioError(
                f"jobs[{i}].rw: got {quote(rw)}; accepted: one of {', '.join(RW_MODES)}"
            )
        out.append(
            {
                "jobname": name,
                "options": {
                    k: _option_text(v) for k, v in d.items() if k != "jobname" and v is not None
                },
                "ramp_s": fio_seconds(d.get("ramp_time", 0), f"jobs[{i}].ramp_time"),
                "iodepth": _positive_int(d.get("iodepth"), f"jobs[{i}].iodepth", 1),
                "bw_avg_ms": _positive_int(
                    d.get("bwavgtime"), f"jobs[{i}].bwavgtime", DEFAULT_AVG_MS
                ),
                "iops_avg_ms": _positive_int(
                    d.get("iopsavgtime"), f"jobs[{i}].iopsavgtime", DEFAULT_AVG_MS
                ),
            }
        )
    return out


def _check_ios(ios: Any, n_jobs: int) -> dict[str, np.ndarray]:
    """The per-I/O table as arrays (times and sizes as int64 ns and bytes), or a ScenarioError."""
    if not isinstance(ios, pd.DataFrame):
        raise ScenarioError(
            f"ios: got {type(ios).__name__}; accepted: a pandas DataFrame with columns "
            f"{', '.join(IO_COLUMNS)} (and optionally issue_ns)"
        )
    missing = [c for c in IO_COLUMNS if c not in ios.columns]
    if missing:
        raise ScenarioError(
            f"ios: no column {', '.join(missing)}; accepted: a DataFrame with columns "
            f"{', '.join(IO_COLUMNS)} (and optionally issue_ns)"
        )
    bad_op = ~ios["op"].isin(DDIRS)
    if bad_op.any():
        raise ScenarioError(
            f"ios.op: got {quote(ios['op'][bad_op].iloc[0])}; accepted: 'read' or 'write'"
        )
    job = pd.to_numeric(ios["job"], errors="coerce")
    bad_job = job.isna() | (job < 0) | (job >= n_jobs) | (job != job.round())
    if bad_job.any():
        raise ScenarioError(
            f"ios.job: got {quote(ios['job'][bad_job].iloc[0])}; accepted: the index of a job "
            f"spec, 0..{n_jobs - 1}"
        )
    out = {"job": job.to_numpy(dtype=np.int64), "op": ios["op"].to_numpy()}
    cols = ["bytes", "submit_ns", "complete_ns"] + (["issue_ns"] if "issue_ns" in ios else [])
    for c in cols:
        values = pd.to_numeric(ios[c], errors="coerce")
        bad = values.isna() | (values < 0) | ~np.isfinite(values.to_numpy(dtype=np.float64))
        if bad.any():
            raise ScenarioError(
                f"ios.{c}: got {quote(ios[c][bad].iloc[0])}; accepted: a number >= 0"
            )
        out[c] = np.rint(values.to_numpy(dtype=np.float64)).astype(np.int64)
    out.setdefault("issue_ns", out["submit_ns"])
    if (out["complete_ns"] < out["issue_ns"]).any() or (out["issue_ns"] < out["submit_ns"]).any():
        raise ScenarioError(
            "ios: an I/O completes before it is issued or is issued before it is submitted; "
            "accepted: submit_ns <= issue_ns <= complete_ns"
        )
    return out


# ---------------------------------------------------------------------------------------------
# Statistics of one job.


def _lat_object(values: np.ndarray, percentiles: bool, plus: bool) -> dict:
    """fio's add_ddir_lat_json."""
    n = len(values)
    obj: dict[str, Any] = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": n}
    if n:
        obj["min"] = int(values.min())
        obj["max"] = int(values.max())
        obj["mean"] = float(values.mean())
        obj["stddev"] = float(values.std(ddof=1)) if n > 1 else 0.0
    if percentiles and n:
        hist = plat_histogram(values)
        obj["percentile"] = {
            percentile_key(p): v
            for p, v in zip(sorted(DEFAULT_PERCENTILES), plat_percentiles(hist), strict=True)
        }
        if plus:
            nz = np.flatnonzero(hist)
            obj["bins"] = {
                str(int(v)): int(c) for v, c in zip(plat_idx_to_val(nz), hist[nz], strict=True)
            }
    return obj


def _sample_stats(samples: list[int], prefix: str, dev_name: str) -> dict:
    """fio's calc_lat over bw or iops samples: min/max integers, mean, sample deviation."""
    n = len(samples)
    arr = np.asarray(samples, dtype=np.float64)
    return {
        f"{prefix}_min": int(min(samples)) if n else 0,
        f"{prefix}_max": int(max(samples)) if n else 0,
        f"{prefix}_mean": float(arr.mean()) if n else 0.0,
        f"{prefix}_{dev_name}": float(arr.std(ddof=1)) if n > 1 else 0.0,
        f"{prefix}_samples": n,
    }


def _window_rates(
    complete_rel_ns: np.ndarray, amounts: np.ndarray, window_ms: int, runtime_ms: int
) -> list[int]:
    """Per window of ``window_ms`` after the ramp, fio's rate ``delta * 1000 // spent``; windows
    without a completion give no sample, and only windows ending before the runtime are taken."""
    n_windows = (runtime_ms - 1) // window_ms if runtime_ms > 0 else 0
    if n_windows <= 0 or len(complete_rel_ns) == 0:
        return []
    w_ns = window_ms * 1_000_000
    # window k holds completions in (k w, (k + 1) w]
    k = np.ceil(complete_rel_ns / w_ns).astype(np.int64) - 1
    keep = (k >= 0) & (k < n_windows)
    delta = np.bincount(k[keep], weights=amounts[keep], minlength=n_windows)
    return [int(d) * 1000 // window_ms for d in np.rint(delta).astype(np.int64) if d > 0]


def ddir_rates(io_bytes: int, total_ios: int, runtime_ms: int) -> dict:
    """fio's integer arithmetic for bw_bytes (B/s), bw (KiB/s) and iops over ``runtime_ms``."""
    if runtime_ms <= 0:
        return {"bw_bytes": 0, "bw": 0, "iops": 0.0}
    bw_bytes = 1000 * io_bytes // runtime_ms
    return {"bw_bytes": bw_bytes, "bw": bw_bytes // 1024, "iops": 1000.0 * total_ios / runtime_ms}


def bw_agg_percent(bw_mean_kib: float, group_agg_bytes_per_s: int) -> float:
    """fio's convert_agg_kbytes_percent: the mean bandwidth sample, truncated to an integer,
    in percent of the group's aggregate bandwidth, at most 100."""
    if group_agg_bytes_per_s > 1024:
        return min(int(bw_mean_kib) * 100.0 / (group_agg_bytes_per_s / 1024.0), 100.0)
    return 100.0


def _dist(counts: np.ndarray, total: int, floor: float) -> list[float]:
    """fio's stat_calc_dist / stat_calc_lat: percent of total, nonzero values at least floor."""
    if total <= 0:
        return [0.0] * len(counts)
    pct = counts.astype(np.float64) * 100.0 / total
    return [max(float(p), floor) if c else 0.0 for p, c in zip(pct, counts, strict=True)]


def _depth_bucket(depth: np.ndarray) -> np.ndarray:
    """io_u_mark_depth: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64."""
    return np.minimum(np.floor(np.log2(np.maximum(depth, 1))).astype(np.int64), 6)


def _map_bucket(nr: np.ndarray) -> np.ndarray:
    """__io_u_mark_map: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64."""
    edges = np.array([0, 4, 8, 16, 32, 64])
    return np.searchsorted(edges, nr, side="left")


def _lat_buckets(clat_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """io_u_mark_latency: ns below 1 us, us below 1 ms, ms above, in fio's buckets."""
    ns = clat_ns[clat_ns < 1000]
    us = clat_ns[(clat_ns >= 1000) & (clat_ns < 1_000_000)] // 1000
    ms = clat_ns[clat_ns >= 1_000_000] // 1_000_000
    n = np.bincount(np.searchsorted(_LAT_EDGES, ns, side="right"), minlength=10)[:10]
    u = np.bincount(np.searchsorted(_LAT_EDGES, us, side="right"), minlength=10)[:10]
    m = np.bincount(np.searchsorted(_LAT_MS_EDGES, ms, side="right"), minlength=12)[:12]
    return n, u, m


def _busy_ns(start: np.ndarray, end: np.ndarray) -> int:
    """Length of the union of the intervals [start, end]."""
    if len(start) == 0:
        return 0
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    # a new busy period starts where an interval starts after everything before it ended
    new = np.concatenate(([True], s[1:] > reach[:-1]))
    starts = s[new]
    ends = reach[np.concatenate((np.flatnonzero(new)[1:] - 1, [len(s) - 1]))]
    return int((ends - starts).sum())


def _zero_ddir() -> dict:
    zero_lat = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    return {
        "io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
        "total_ios": 0, "short_ios": 0, "drop_ios": 0,
        "slat_ns": dict(zero_lat), "clat_ns": dict(zero_lat), "lat_ns": dict(zero_lat),
        "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
        "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0,
    }  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The document.


def fio_json(
    jobs: Sequence[Any],
    ios: pd.DataFrame,
    runtime_s: float,
    *,
    plus: bool = False,
    global_options: Mapping[str, Any] | None = None,
    timestamp: float | None = None,
    disk_name: str = "lfsim",
    errors: Sequence[int] | None = None,
) -> dict:
    """The fio 3.x JSON document (``--output-format=json``, or ``json+`` with ``plus``) of a
    simulated run.

    ``jobs``: one spec per fio job entry, a mapping of fio options (``name``, ``rw``, ``bs``,
    ``iodepth``, ``numjobs``, ``rwmixread``, ``runtime``, ``ramp_time``, ``size``, ...; echoed as
    strings under "job options" as fio echoes the options it was given). With numjobs > 1, each
    clone is its own spec (fio reports each clone as a job of the same name); ``jobname``, if
    given, is the reported name instead of ``name``.
    ``ios``: one row per I/O: ``job`` (index into ``jobs``), ``op`` ("read" or "write"),
    ``bytes``, ``submit_ns``, ``complete_ns`` and optionally ``issue_ns``, in ns since the start
    of the job (the origin of ``ramp_time``).
    ``runtime_s``: the measured time after the ramp (fio's ``runtime``), in seconds.
    ``global_options``: echoed as "global options" (omitted when empty, as fio does).
    ``timestamp``: seconds since the epoch for "timestamp"/"time" (default: now).
    ``errors``: per job, the I/Os that failed with EIO (their command timed out more often than
    the stack retries); a job with any reports ``error`` 5 and, as fio does when it continues
    after errors, ``total_err`` and ``first_error``.
    """
    specs = _check_jobs(jobs)
    cols = _check_ios(ios, len(specs))
    if (
        isinstance(runtime_s, bool)
        or not isinstance(runtime_s, (int, float, np.integer, np.floating))
        or not math.isfinite(runtime_s)
        or runtime_s <= 0
    ):
        raise ScenarioError(f"runtime_s: got {quote(runtime_s)}; accepted: a number of seconds > 0")
    runtime_ms = int(round(runtime_s * 1000))
    runtime_ns = int(round(runtime_s * 1e9))
    has_issue = "issue_ns" in ios.columns
    now = time.time() if timestamp is None else float(timestamp)
    job_col, op_all, bytes_all = cols["job"], cols["op"], cols["bytes"]
    submit_all, issue_all, complete_all = cols["submit_ns"], cols["issue_ns"], cols["complete_ns"]

    per_job = []
    busy_start, busy_end = [], []
    disk = {"read_ios": 0, "write_ios": 0, "read_ticks": 0, "write_ticks": 0}
    for j, spec in enumerate(specs):
        ramp_ns = int(round(spec["ramp_s"] * 1e9))
        mine = job_col == j
        submit, issue, complete = submit_all[mine], issue_all[mine], complete_all[mine]
        counted = (complete > ramp_ns) & (complete <= ramp_ns + runtime_ns)
        # depth at each submission: this job's I/Os submitted and not yet completed, itself too
        depth = np.searchsorted(np.sort(submit), submit, side="right") - np.searchsorted(
            np.sort(complete), submit, side="right"
        )
        entry = {"spec": spec, "ddirs": {}, "ramp_ns": ramp_ns}
        for ddir in DDIRS:
            sel = counted & (op_all[mine] == ddir)
            entry["ddirs"][ddir] = {
                "bytes": bytes_all[mine][sel],
                "slat": (issue - submit)[sel] if has_issue else np.empty(0, np.int64),
                "clat": (complete - issue)[sel],
                "lat": (complete - submit)[sel],
                "complete_rel": (complete[sel] - ramp_ns).astype(np.float64),
            }
        entry["depth"] = depth[counted]
        entry["complete"] = complete[counted]
        per_job.append(entry)
        busy_start.append(submit[counted])
        busy_end.append(complete[counted])
        for ddir in DDIRS:
            d = entry["ddirs"][ddir]
            disk[f"{ddir}_ios"] += len(d["lat"])
            disk[f"{ddir}_ticks"] += int(d["lat"].sum())

    # Group 0 holds every job: the aggregate bandwidth that bw_agg refers to.
    agg = {}
    for ddir in DDIRS:
        total = sum(int(e["ddirs"][ddir]["bytes"].sum()) for e in per_job)
        ran = any(len(e["ddirs"][ddir]["bytes"]) for e in per_job)
        # A run under half a millisecond has runtime 0 ms: no rate, as ddir_rates says.
        agg[ddir] = total * 1000 // runtime_ms if ran and runtime_ms > 0 else 0

    out_jobs = [_job_object(e, runtime_ms, agg, plus, now) for e in per_job]
    for job, failed in zip(out_jobs, errors or [0] * len(out_jobs), strict=True):
        if failed:
            job["error"] = EIO
            job["total_err"] = int(failed)
            job["first_error"] = EIO

    doc: dict[str, Any] = {
        "fio version": FIO_VERSION_STRING,
        "timestamp": int(now),
        "timestamp_ms": int(now * 1000),
        "time": time.ctime(now),
    }
    if global_options:
        doc["global options"] = {
            str(k): _option_text(v) for k, v in global_options.items() if v is not None
        }
    doc["jobs"] = out_jobs
    start = np.concatenate(busy_start) if busy_start else np.empty(0, np.int64)
    end = np.concatenate(busy_end) if busy_end else np.empty(0, np.int64)
    window_ns = max(e["ramp_ns"] for e in per_job) + runtime_ns - min(e["ramp_ns"] for e in per_job)
    util = min(100.0 * _busy_ns(start, end) / window_ns, 100.0) if window_ns > 0 else 0.0
    read_ticks, write_ticks = disk["read_ticks"] // 1_000_000, disk["write_ticks"] // 1_000_000
    doc["disk_util"] = [
        {
            "name": disk_name,
            "read_ios": disk["read_ios"],
            "write_ios": disk["write_ios"],
            "read_merges": 0,
            "write_merges": 0,
            "read_ticks": read_ticks,
            "write_ticks": write_ticks,
            "in_queue": read_ticks + write_ticks,
            "util": util,
        }
    ]
    return doc


def _job_object(entry: dict, runtime_ms: int, agg: dict, plus: bool, now: float) -> dict:
    spec = entry["spec"]
    job: dict[str, Any] = {
        "jobname": spec["jobname"],
        "groupid": 0,
        "error": 0,
        "eta": 0,
        "elapsed": int(math.ceil(spec["ramp_s"] + runtime_ms / 1000.0)),
        "job options": dict(spec["options"]),
    }
    for ddir in DDIRS:
        d = entry["ddirs"][ddir]
        obj = _zero_ddir()
        n = len(d["lat"])
        if n:
            io_bytes = int(d["bytes"].sum())
            obj.update(
                io_bytes=io_bytes,
                io_kbytes=io_bytes >> 10,
                runtime=runtime_ms,
                total_ios=n,
                **ddir_rates(io_bytes, n, runtime_ms),
            )
            bw = _window_rates(
                d["complete_rel"], d["bytes"].astype(np.float64), spec["bw_avg_ms"], runtime_ms
            )
            bw = [b // 1024 for b in bw]  # KiB/s: (delta * 1000 / spent) / 1024
            iops = _window_rates(d["complete_rel"], np.ones(n), spec["iops_avg_ms"], runtime_ms)
            obj.update(_sample_stats(bw, "bw", "dev"))
            obj["bw_agg"] = bw_agg_percent(obj["bw_mean"], agg[ddir]) if bw else 0.0
            obj.update(_sample_stats(iops, "iops", "stddev"))
        obj["slat_ns"] = _lat_object(d["slat"], False, plus)
        obj["clat_ns"] = _lat_object(d["clat"], True, plus)
        obj["lat_ns"] = _lat_object(d["lat"], False, plus)
        # fio's key order: io..drop_ios, slat/clat/lat, bw_*, iops_*
        job[ddir] = {k: obj[k] for k in _zero_ddir()}
    job["trim"] = _zero_ddir()
    job["sync"] = {
        "total_ios": 0,
        "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
    }
    job.update(job_runtime=runtime_ms, usr_cpu=0.0, sys_cpu=0.0, ctx=0, majf=0, minf=0)

    total = sum(len(entry["ddirs"][dd]["lat"]) for dd in DDIRS)
    depth_counts = np.bincount(_depth_bucket(entry["depth"]), minlength=7)[:7]
    job["iodepth_level"] = dict(zip(_DEPTH_NAMES, _dist(depth_counts, total, 0.1), strict=True))
    submit_counts = np.bincount(_map_bucket(np.ones(total, np.int64)), minlength=7)[:7]
    job["iodepth_submit"] = dict(zip(_MAP_NAMES, _dist(submit_counts, total, 0.1), strict=True))
    _, reap_sizes = np.unique(entry["complete"], return_counts=True)
    reap_counts = np.bincount(_map_bucket(reap_sizes), minlength=7)[:7]
    job["iodepth_complete"] = dict(
        zip(_MAP_NAMES, _dist(reap_counts, len(reap_sizes), 0.1), strict=True)
    )
    clat = np.concatenate([entry["ddirs"][dd]["clat"] for dd in DDIRS])
    n_b, u_b, m_b = _lat_buckets(clat)
    job["latency_ns"] = dict(zip(_LAT_NAMES, _dist(n_b, total, 0.01), strict=True))
    job["latency_us"] = dict(zip(_LAT_NAMES, _dist(u_b, total, 0.01), strict=True))
    job["latency_ms"] = dict(zip(_LAT_MS_NAMES, _dist(m_b, total, 0.01), strict=True))
    job.update(
        latency_depth=spec["iodepth"],
        latency_target=0,
        latency_percentile=100.0,
        latency_window=0,
    )
    return job


def write_fio_json(doc: Mapping, path: str | os.PathLike) -> Path:
    """Write the document as fio does (indented JSON), atomically: a failed write leaves
    nothing behind."""
    path = Path(path)
    text = json.dumps(doc, indent=2) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# ---------------------------------------------------------------------------------------------
# Reading fio JSON and comparing two documents.

FIO_JSON_FORM = "a fio JSON file (fio --output-format=json or json+, or lfsim's fio JSON)"


def load_fio_json(path: str | os.PathLike, key: str) -> dict:
    """Read a fio JSON document; text fio printed before the JSON (notes, warnings) is skipped.
    Anything else is a ScenarioError naming ``key``."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ScenarioError(
            f"{key}: no such file {quote(str(p))}; accepted: {FIO_JSON_FORM}"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(
            f"{key}: cannot read {quote(str(p))} ({exc.__class__.__name__}); "
            f"accepted: {FIO_JSON_FORM}"
        ) from None
    doc = None
    try:
        doc = json.loads(text)
    except ValueError:
        # fio writes notes such as "note: both iodepth >= 1 and synchronous I/O engine ..." on
        # stdout before the JSON; the document starts at the first line that is "{".
        m = re.search(r"^\{\s*$", text, re.MULTILINE)
        if m:
            try:
                doc = json.loads(text[m.start() :])
            except ValueError:
                doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise ScenarioError(
            f"{key}: {quote(str(p))} is not fio JSON (no 'jobs' list); accepted: {FIO_JSON_FORM}"
        )
    if not doc["jobs"]:
        raise ScenarioError(f"{key}: {quote(str(p))} has no jobs; accepted: {FIO_JSON_FORM}")
    for i, job in enumerate(doc["jobs"]):
        if not isinstance(job, dict) or not isinstance(job.get("jobname"), str):
            raise ScenarioError(
                f"{key}: {quote(str(p))} jobs[{i}] has no jobname; accepted: {FIO_JSON_FORM}"
            )
        for ddir in DDIRS:
            if not isinstance(job.get(ddir), dict):
                raise ScenarioError(
                    f"{key}: {quote(str(p))} jobs[{i}] has no '{ddir}' object; "
                    f"accepted: {FIO_JSON_FORM}"
                )
    return doc


# (metric, unit shown, extractor from a fio "read"/"write" object)
def _percentile(ddir: dict, p: float) -> float | None:
    pct = (ddir.get("clat_ns") or {}).get("percentile") or {}
    value = pct.get(percentile_key(p))
    return None if value is None else value / 1000.0


def _bw_mib(ddir: dict) -> float | None:
    if "bw_bytes" in ddir:
        return ddir["bw_bytes"] / 2**20
    return ddir["bw"] / 1024 if "bw" in ddir else None


def _clat_mean_us(ddir: dict) -> float | None:
    clat = ddir.get("clat_ns")
    return None if not clat or not clat.get("N") else clat["mean"] / 1000.0


METRICS = (
    ("iops", lambda d: d.get("iops")),
    ("bw_MiBps", _bw_mib),
    ("clat_mean_us", _clat_mean_us),
    ("clat_p50_us", lambda d: _percentile(d, 50.0)),
    ("clat_p99_us", lambda d: _percentile(d, 99.0)),
    ("clat_p99.9_us", lambda d: _percentile(d, 99.9)),
)


# The options that make two fio jobs the same workload, with fio 3.33's defaults.
KEY_OPTIONS = {"rw": "read", "bs": "4096", "iodepth": "1", "numjobs": "1", "rwmixread": "50",
               "ioengine": "psync"}  # fmt: skip
MATCHES = ("name", "options", "order")


def _size_text(value: str) -> str:
    """fio's sizes with a unit as bytes ("4k" -> "4096", fio's own rules: values.fio_bytes),
    other values as they are."""
    n = fio_bytes(str(value))
    return str(n) if n is not None else str(value)


def job_options(doc: dict, job: dict) -> dict:
    """The key options of a job: its own, else the global options, else fio's defaults."""
    glob = doc.get("global options") or {}
    own = job.get("job options") or {}
    out = {}
    for k, default in KEY_OPTIONS.items():
        v = own.get(k, glob.get(k, default))
        out[k] = _size_text(v) if k == "bs" else str(v)
    if out["rw"] not in ("randrw", "readwrite", "rw"):
        out.pop("rwmixread")
    return out


def _names(job: dict) -> set:
    """What a job answers to: its jobname and, for lfsim's jobs (reported as host/section
    clone), the name option it was given (the scenario's name)."""
    names = {job["jobname"]}
    opt = (job.get("job options") or {}).get("name")
    if opt:
        names.add(str(opt))
    return names


def _pair_jobs(
    sim: dict, hw: dict, match: str, warnings: list | None = None
) -> list[tuple[str, dict, dict]]:
    """SIM and HW jobs in pairs: by position (``order``), or by name — a job's jobname or its
    ``name`` option; clones of a name pair in order — and the jobs left over by their key
    options (rw, bs, iodepth, numjobs, rwmixread, ioengine; ``name`` does this second step
    too, ``options`` only it). Every pair whose key options differ, and every job left
    without a partner, is named in ``warnings``."""
    warnings = [] if warnings is None else warnings
    sim_jobs, hw_jobs = sim["jobs"], hw["jobs"]
    if match == "order":
        if len(sim_jobs) != len(hw_jobs):
            raise ScenarioError(
                f"--match order: SIM has {len(sim_jobs)} jobs, HW has {len(hw_jobs)}; accepted: "
                "the same number of jobs in both files"
            )
        pairs = list(zip(range(len(sim_jobs)), range(len(hw_jobs)), strict=True))
        how = {p: "position" for p in pairs}
    else:
        pairs, how = [], {}
        free_hw = list(range(len(hw_jobs)))
        free_sim = list(range(len(sim_jobs)))
        if match == "name":
            for i in list(free_sim):
                for j in free_hw:
                    if _names(sim_jobs[i]) & _names(hw_jobs[j]):
                        pairs.append((i, j))
                        how[(i, j)] = "name"
                        free_hw.remove(j)
                        free_sim.remove(i)
                        break
        for i in list(free_sim):
            if not free_hw:
                break
            mine = job_options(sim, sim_jobs[i])
            best = max(
                free_hw,
                key=lambda j: (
                    sum(mine.get(k) == v for k, v in job_options(hw, hw_jobs[j]).items()),
                    -j,
                ),
            )
            pairs.append((i, best))
            how[(i, best)] = "options"
            free_hw.remove(best)
            free_sim.remove(i)
        for i in free_sim:
            warnings.append(f"SIM job {quote(sim_jobs[i]['jobname'])} has no HW job left to pair")
        for j in free_hw:
            warnings.append(f"HW job {quote(hw_jobs[j]['jobname'])} has no SIM job left to pair")
        if not pairs:
            raise ScenarioError(
                "no job pairs: SIM or HW has no jobs; accepted: fio results with jobs"
            )
        pairs.sort()
    out = []
    seen: dict[str, int] = {}
    labels = [s["jobname"] for s in sim_jobs]
    for i, j in pairs:
        s, h = sim_jobs[i], hw_jobs[j]
        name = s["jobname"] if s["jobname"] == h["jobname"] else f"{s['jobname']}/{h['jobname']}"
        if labels.count(s["jobname"]) > 1 or name in seen:
            k = seen.get(name, 0)
            seen[name] = k + 1
            name = f"{name}#{k}"
        else:
            seen[name] = 1
        so, ho = job_options(sim, s), job_options(hw, h)
        differ = [f"{k} {so.get(k, '-')} vs {ho.get(k, '-')}" for k in KEY_OPTIONS
                  if so.get(k) != ho.get(k)]  # fmt: skip
        if how[(i, j)] == "options":
            warnings.append(
                f"SIM job {quote(s['jobname'])} paired with HW job {quote(h['jobname'])} by "
                "options (no job of its name)"
            )
        if differ:
            warnings.append(
                f"{name}: SIM and HW ran different jobs ({', '.join(differ)}, SIM vs HW): the "
                "comparison is not like for like"
            )
        out.append((name, s, h))
    return out


def compare(sim: dict, hw: dict, match: str = "name", warnings: list | None = None) -> list[dict]:
    """Rows (job, dir, metric, hw, sim, rel_err_pct) for read and write of every job pair that
    did I/O in that direction in either file. ``rel_err_pct`` = (sim - hw) / hw * 100, None when
    a value is missing or hw is 0. Pairing and its ``warnings``: ``_pair_jobs``."""
    if match not in MATCHES:
        raise ScenarioError(f"--match: got {quote(match)}; accepted: name, options or order")
    rows = []
    for label, s, h in _pair_jobs(sim, hw, match, warnings):
        for ddir in DDIRS:
            sd, hd = s[ddir], h[ddir]
            if not (sd.get("total_ios") or hd.get("total_ios")):
                continue
            for metric, get in METRICS:
                sv, hv = get(sd), get(hd)
                err = None
                if sv is not None and hv is not None and hv != 0:
                    err = (sv - hv) / hv * 100.0
                rows.append(
                    {"job": label, "dir": ddir, "metric": metric, "hw": hv, "sim": sv,
                     "rel_err_pct": err}
                )  # fmt: skip
    if not rows:
        raise ScenarioError(
            "neither file has a read or write I/O in a matched job; accepted: fio results with "
            "total_ios > 0"
        )
    return rows


def format_comparison(rows: list[dict]) -> str:
    """The rows as an aligned text table: job, dir, metric, HW, SIM, err % (the table of
    ``lfsim compare``, with job and direction in two columns)."""
    from .traces.report import text_table

    return text_table(
        ("job", "dir", "metric"),
        [((r["job"], r["dir"], r["metric"]), r["hw"], r["sim"], r["rel_err_pct"]) for r in rows],
    )


FIO_PATTERN = "Fio"


def fio_workload(config: dict) -> tuple[str, dict] | None:
    """The first workload of pattern Fio in a resolved scenario's config, as (name, its
    attributes); None if there is none."""
    for name, item in (config.get("workload") or {}).items():
        if item.get("pattern") == FIO_PATTERN:
            return name, item
    return None


EIO = 5  # errno of an I/O the block layer fails


def storage_fio_json(result: Any, given: set | None = None) -> dict | None:
    """The fio json+ document of a run with a Fio workload (written as ``fio.json`` beside
    summary.json; ``clat_ns.bins`` is fio's own histogram, so fio_jsonplus_clat2csv reads it):
    one fio job per job clone of its first Fio workload, reported as its clone label
    (``h0/job0``: host, job section, clone) with the option ``name`` the scenario's name.
    Like fio, it echoes only the options the job was given: the FioJob options of ``given``
    (the keys the scenario set; default: those whose value differs from FioJob's default) and
    the job section's own. None when no I/O completed after ramp_time."""
    first = next(iter((result.config.get("workload") or {}).values()), {})
    if first.get("pattern") != FIO_PATTERN:
        return None  # the ios table is another storage pattern's (Transactions)
    cfg = result.config["FioJob"]
    ios = result.table("ios")
    labels = result.labels("ios") or []
    ramp = time_seconds(str(cfg["ramp_time"])) or 0.0
    runtime_s = result.summary["sim_time_s"] - ramp
    if ios.empty or runtime_s <= 0 or not (ios["complete_ns"] >= ramp * 1e9).any():
        return None
    if given is None:
        given = _differs_from_default(cfg)
    global_options = {k: str(cfg[k]) for k in cfg if k in given}
    # Each clone's effective options ("rw=randread bs=4096 ...", its job section over
    # FioJob), echoed only where the section of the workload's Jobs set them.
    sections = result.labels("job_options") or [""] * len(labels)
    set_in = _section_keys(str((fio_workload(result.config) or ("", {}))[1].get("Jobs") or ""))
    jobs = []
    for label, text in zip(labels, sections, strict=True):
        spec = {k: str(cfg[k]) for k in ("rw", "bs", "iodepth", "numjobs", "rwmixread",
                                         "ramp_time", "runtime")}  # fmt: skip
        spec.update(dict(item.split("=", 1) for item in text.split()))
        spec["name"] = result.summary["scenario"]
        if spec.get("size") == "0":
            del spec["size"]  # no limit: fio omits what was not given
        section = re.sub(r"\d+$", "", label.split("/", 1)[-1].split(">")[0])
        echo = sorted({"name"} | set_in.get(section, set()))
        jobs.append({"jobname": label, **spec, "_echo": echo})
    table = pd.DataFrame(
        {
            "job": ios["id"].astype(int),
            "op": np.where(ios["read"] > 0, "read", "write"),
            "bytes": ios["bytes"].astype(int),
            "submit_ns": ios["submit_ns"].astype(np.int64),
            "complete_ns": ios["complete_ns"].astype(np.int64),
        }
    )
    errors = [0] * len(jobs)
    if "io_errors" in result.table_names:
        for job in result.table("io_errors")["id"].astype(int):
            errors[job] += 1
    echo = [j.pop("_echo") for j in jobs]
    doc = fio_json(jobs, table, runtime_s, errors=errors, plus=True, global_options=global_options)
    for job, keys in zip(doc["jobs"], echo, strict=True):
        job["job options"] = {k: v for k, v in job["job options"].items() if k in keys}
    return doc


def _section_keys(jobs: str) -> dict[str, set]:
    """The options each section of a Fio workload's Jobs sets ("name: k=v ...; name: ...")."""
    out = {}
    for section in jobs.split(";"):
        name, sep, body = section.partition(":")
        if sep and name.strip():
            out[name.strip()] = {item.split("=", 1)[0] for item in body.split() if "=" in item}
    return out


def _differs_from_default(cfg: Mapping) -> set:
    """FioJob options whose value is not the class default (when the scenario's own keys are
    not known, e.g. a Result built by hand)."""
    try:
        from . import core

        defaults = {a["name"]: a["default"] for a in core.attributes("ns3::FioJob")}
    except Exception:
        return set(cfg)
    return {k for k, v in cfg.items() if str(v) != str(defaults.get(k, v)) or k not in defaults}


# ---------------------------------------------------------------------------------------------
# fio latency logs (--write_lat_log): one line per I/O (with --log_avg_msec=0).

LAT_LOG_FORM = "a fio latency log (--write_lat_log: lines 'msec, nsec, ddir, bs, offset')"


def read_lat_log(path: str | os.PathLike, key: str = "HW") -> pd.DataFrame:
    """time_ms, lat_ns, ddir ("read", "write", "trim"), bs (and offset, prio when present)."""
    p = Path(path)
    try:
        df = pd.read_csv(p, header=None, skipinitialspace=True)
    except FileNotFoundError:
        raise ScenarioError(
            f"{key}: no such file {quote(str(p))}; accepted: {LAT_LOG_FORM}"
        ) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
        raise ScenarioError(f"{key}: {quote(str(p))} is not {LAT_LOG_FORM}") from None
    if df.shape[1] < 4 or not all(pd.api.types.is_numeric_dtype(df[c]) for c in range(4)):
        raise ScenarioError(f"{key}: {quote(str(p))} is not {LAT_LOG_FORM}")
    names = ["time_ms", "lat_ns", "ddir", "bs", "offset", "prio"][: df.shape[1]]
    df = df.iloc[:, : len(names)]
    df.columns = names
    df["ddir"] = df["ddir"].map({0: "read", 1: "write", 2: "trim"}).fillna("other")
    return df


def lat_log_from_ios(ios: pd.DataFrame) -> pd.DataFrame:
    """A simulated run's I/Os (the ios table) as a latency log: completion time, clat."""
    return pd.DataFrame(
        {
            "time_ms": (ios["complete_ns"] // 1_000_000).astype(np.int64),
            "lat_ns": (ios["complete_ns"] - ios["submit_ns"]).astype(np.int64),
            "ddir": np.where(ios["read"] > 0, "read", "write"),
            "bs": ios["bytes"].astype(np.int64),
        }
    )


CDF_POINTS = (1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9)


def compare_lat_logs(hw: pd.DataFrame, sim: pd.DataFrame) -> list[dict]:
    """Per direction present in HW: the latency CDF at CDF_POINTS (exact order statistics,
    linear interpolation) and the Kolmogorov-Smirnov distance between the two CDFs."""
    rows = []
    for ddir in ("read", "write"):
        h = np.sort(hw.loc[hw["ddir"] == ddir, "lat_ns"].to_numpy(dtype=np.float64))
        s = np.sort(sim.loc[sim["ddir"] == ddir, "lat_ns"].to_numpy(dtype=np.float64))
        if len(h) == 0 and len(s) == 0:
            continue
        for p in CDF_POINTS:
            hv = float(np.percentile(h, p)) / 1000 if len(h) else None
            sv = float(np.percentile(s, p)) / 1000 if len(s) else None
            rows.append({"dir": ddir, "metric": f"clat_p{p:g}_us", "hw": hv, "sim": sv})
        if len(h) and len(s):
            grid = np.union1d(h, s)
            ks = float(np.abs(np.searchsorted(h, grid, "right") / len(h)
                              - np.searchsorted(s, grid, "right") / len(s)).max())  # fmt: skip
            rows.append({"dir": ddir, "metric": "ks_distance", "hw": 0.0, "sim": ks})
        rows.append({"dir": ddir, "metric": "ios", "hw": float(len(h)), "sim": float(len(s))})
    if not rows:
        raise ScenarioError("neither log has a read or write I/O; accepted: latency logs with I/Os")
    return rows
