"""Parameter sweeps: the cartesian product of a grid, one Dask task (and process) per point.

Each point is a task on Dask distributed: on a `LocalCluster` of this machine that the sweep
starts and closes, or on a running cluster (``scheduler="tcp://HOST:PORT"``, CLI
``--scheduler``). The task runs the point in a fresh interpreter of its own on the worker
(``python -m lfsim._worker``) and returns its scalar results; the table is built here.

With ``heatmap`` (CLI ``--heatmap``), a sweep over two varying keys also draws each named metric
as a heat map (x: the first varying key, y: the second); a third varying key gives one panel per
value. The PNGs are written next to ``sweep.csv`` as ``heatmap_<metric>.png``.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._env import simulation_env
from .errors import (
    OVERRIDES_ACCEPTED,
    ScenarioError,
    SimulationError,
    bool_arg,
    mapping_arg,
    one_line,
    path_arg,
    quote,
)
from .output import atomic_dir, check_target
from .scenario import Scenario, load_scenario

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client


class _Died(Exception):
    """A child interpreter ended without a reply (crash, abort, killed)."""


# Per worker process: the simulations each sweep has running there, so that a cancelled sweep
# can kill its own (and only its own) on a cluster it shares with others.
_lock = threading.Lock()
_running: dict[str, set[subprocess.Popen]] = {}
_stopped: set[str] = set()


def _run_point(sweep_id: str, config: dict) -> dict:
    """A Dask task: one point in its own interpreter on the worker running the task.

    A fresh process per point, exactly as a separate `lfsim run`: ns-3 keeps global state
    between runs in one process. Not multiprocessing: its spawned children re-import the
    caller's ``__main__``, which breaks scripts that lack a ``__main__`` guard. The interpreter
    and lfsim are the worker's own (``sys.executable``, this module's folder), and the files
    passing the point in and its reply out are in the worker's temporary folder, so a remote
    worker needs lfsim installed but shares no files with the sweep."""
    env = simulation_env()
    # The child imports this very lfsim, however the worker found it.
    here = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="lfsim-point-") as workdir:
        src, dst = Path(workdir) / "in", Path(workdir) / "out"
        with open(src, "wb") as f:
            pickle.dump(config, f)
        cmd = [sys.executable, "-m", "lfsim._worker", str(src), str(dst)]
        with _lock:
            if sweep_id in _stopped:
                raise _Died("stopped")
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, env=env,
            )  # fmt: skip
            _running.setdefault(sweep_id, set()).add(proc)
        try:
            _, err = proc.communicate()
        finally:
            with _lock:
                _running.get(sweep_id, set()).discard(proc)
        if proc.returncode != 0 or not dst.exists():
            rc = proc.returncode
            how = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}"
            last = err.decode(errors="replace").strip().splitlines()[-1:]
            raise _Died(how + (f": {one_line(last[0])}" if last else ""))
        with open(dst, "rb") as f:
            return pickle.load(f)


def _stop_points(sweep_id: str) -> None:
    """Run on every worker when a sweep is cancelled: kill its simulations, start no more."""
    with _lock:
        _stopped.add(sweep_id)
        for proc in _running.pop(sweep_id, set()):
            proc.kill()


SCHEDULER_FORM = "tcp://HOST:PORT of a running Dask scheduler"
_SCHEDULER_RE = re.compile(r"tcp://(\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+):([0-9]{1,5})")
CONNECT_TIMEOUT_S = 5


def check_scheduler(address: Any, key: str = "scheduler") -> str:
    """The address if it has the form ``tcp://HOST:PORT``."""
    m = _SCHEDULER_RE.fullmatch(address) if isinstance(address, str) else None
    if m is None or not 1 <= int(m.group(2)) <= 65535:
        raise ScenarioError(f"{key}: got {quote(address)}; accepted: {SCHEDULER_FORM}")
    return address


def connect(address: Any, key: str = "scheduler") -> Client:
    """A client of the running scheduler at ``address``, or a ScenarioError naming ``key``."""
    from distributed import Client

    check_scheduler(address, key)
    # A failed connection logs its retries and a traceback; the error below says it in a line.
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise ScenarioError(
            f"{key}: got {quote(address)} (not reachable: "
            f"{one_line(str(exc))}); accepted: {SCHEDULER_FORM}"
        ) from None
    finally:
        log.setLevel(level)


def _reply(reply: dict, point: Mapping[str, Any]) -> dict:
    """A worker's reply as a result, or the exception it stands for."""
    if "ok" in reply:
        return reply["ok"]
    kind, message = reply["error"], reply["message"]
    if kind == "value":
        raise ScenarioError(f"{_describe(point)}: {one_line(message)}")
    raise SimulationError(f"{_describe(point)}: {one_line(message)}")


def _column_value(value: Any) -> Any:
    """Grid values from the command line are text; numbers become numeric columns."""
    if not isinstance(value, str):
        return value
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    for key, values in grid.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise ScenarioError(
                f"grid {key}: got {quote(values)}; accepted: a non-empty list of values"
            )
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]


HEATMAP_FORM = "names of scalar metrics, e.g. mean_queue_KiB,jain_fairness"


def heatmap_keys(grid: Mapping[str, Sequence[Any]], key: str = "heatmap") -> list[str]:
    """The keys a heat map is drawn over: x, y and, if present, the panel key.

    They are the grid keys with more than one value, in grid order; there must be 2 or 3 of
    them, each with distinct values (a cell must be one point). Keys with one value are
    constants of the sweep."""
    grid_points(grid)  # the form of the grid itself
    varying = [k for k, values in grid.items() if len(values) > 1]
    if len(varying) not in (2, 3):
        got = ", ".join(varying) if varying else "none"
        raise ScenarioError(
            f"{key}: the grid varies {len(varying)} key{'' if len(varying) == 1 else 's'} "
            f"({got}); accepted: 2 or 3 grid keys "
            "with more than one value each (x, y and one panel per value of a third)"
        )
    for k in varying:
        values = [_column_value(v) for v in grid[k]]
        if len(set(map(repr, values))) != len(values):
            raise ScenarioError(
                f"{key}: grid {k} repeats a value ({', '.join(map(str, grid[k]))}); "
                "accepted: distinct values, one heat map cell each"
            )
    return varying


def check_heatmap_metrics(metrics: Any, key: str = "heatmap") -> list[str]:
    """Metric names as given (their file names are heatmap_<metric>.png), in order, once each."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, Sequence) or not metrics:
        raise ScenarioError(f"{key}: got {quote(metrics)}; accepted: {HEATMAP_FORM}")
    for m in metrics:
        if (
            not isinstance(m, str)
            or not m
            or m.startswith(".")
            or any(c in m for c in "/\\\0,")
            or any(c.isspace() for c in m)
        ):
            raise ScenarioError(f"{key}: got {quote(m)}; accepted: {HEATMAP_FORM}")
    return list(dict.fromkeys(metrics))


def _check_metrics_present(wanted: Sequence[str], metrics: Mapping[str, Any]) -> None:
    """Raise unless every wanted metric is a number in one point's results (or one of the
    columns every sweep has)."""
    numeric = [k for k, v in metrics.items() if isinstance(v, int | float)]  # flags too, as 0/1
    numeric += ["wall_time_s", "events"]
    for m in wanted:
        if m not in numeric:
            raise ScenarioError(
                f"heatmap: no scalar metric {quote(m)} in the results; accepted: one of "
                + ", ".join(numeric)
            )


def _point_result(fut, point: dict) -> dict:
    try:
        return _reply(fut.result(), point)
    except _Died as exc:
        raise SimulationError(
            f"the simulator process died ({exc}) while running {_describe(point)}"
        ) from None
    except (ScenarioError, SimulationError):
        raise
    except Exception as exc:  # noqa: BLE001 - the cluster lost the task
        raise SimulationError(
            f"{_describe(point)} failed on the cluster: {type(exc).__name__}: {one_line(str(exc))}"
        ) from None


@contextlib.contextmanager
def _deferred_signals():
    """While the sweep drives Dask, SIGINT and SIGTERM only note that they came; the sweep
    acts on them at its own safe points (``interrupted()``), by calling the handler that was
    installed before (the CLI's raises its exception). An exception raised by a handler inside
    Dask's own code leaves its state half-updated and makes it print tracebacks (once:
    ``NameError: cannot access free variable 'future'``)."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None  # signal handlers belong to the main thread
        return
    came: list[int] = []
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    def note(signum, frame) -> None:
        came.append(signum)

    def interrupted() -> None:
        if came:
            signum = came[0]
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)
            raise KeyboardInterrupt  # SIG_DFL: stop as Ctrl-C does, cleaning up

    for s, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(s, note)
    try:
        yield interrupted
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def _quiet_logs(*names: str):
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def sweep(
    scenario: str | Path | Mapping | Scenario,
    grid: Mapping[str, Sequence[Any]],
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
    jobs: int | None = None,
    out: str | Path | None = None,
    progress: bool = False,
    heatmap: str | Sequence[str] | None = None,
    scheduler: str | None = None,
) -> pd.DataFrame:
    """Run every point of the grid's cartesian product; one row per point.

    Columns: the grid keys, every scalar metric of its kind (counts int64, flags bool, a
    nullable ``Int64``/``boolean`` where some point's fabric has no such metric), ``wall_time_s``
    and ``events``; ``df.attrs``: ``fabrics`` (each point's) and ``bool_metrics``. Every point
    is validated before any runs. With ``out``, ``sweep.parquet`` and ``sweep.csv`` are
    written there (atomically). Each point is a Dask task that runs it in a fresh interpreter
    of its own, so ns-3's global state never leaks between points: on a local cluster of
    `jobs` workers (default: the number of CPUs) started and closed by the sweep, or, with
    ``scheduler="tcp://HOST:PORT"``, on that running cluster's workers (each needs this lfsim
    importable; `jobs` is then the cluster's business and must not be given).

    ``heatmap``: metric names (needs ``out`` and a grid varying 2 or 3 keys, see
    `heatmap_keys`); each is drawn into ``out/heatmap_<metric>.png``. A name that is not a
    metric stops the sweep at its first finished point, before anything is written.
    """
    import pandas as pd

    grid = mapping_arg(grid, "grid", "a dict of key to a list of values, e.g. {'seed': [1, 2, 3]}")
    if grid is None:
        raise ScenarioError("grid: got None; accepted: a dict of key to a list of values")
    overrides = mapping_arg(overrides, "overrides", OVERRIDES_ACCEPTED)
    target = path_arg(out, "out")
    progress = bool_arg(progress, "progress")
    base = load_scenario(scenario, overrides, seed)
    points = grid_points(grid)
    maps: list[str] = []
    keys: list[str] = []
    if heatmap is not None:
        maps = check_heatmap_metrics(heatmap)
        keys = heatmap_keys(grid)
        if target is None:
            raise ScenarioError(
                "heatmap: needs an output directory; accepted: heatmap=[metrics] with out=DIR"
            )
    # Validate all points first: a typo in the last value must not cost the whole sweep.
    scenarios = [load_scenario(base, point) for point in points]
    configs = [sc.core_config() for sc in scenarios]
    if target is not None:
        check_target(target, "out")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ScenarioError(f"jobs: got {quote(jobs)}; accepted: an integer >= 1")
    if scheduler is not None:
        check_scheduler(scheduler)
        if jobs is not None:
            raise ScenarioError(
                f"jobs: got {jobs} with a scheduler; accepted: jobs (a local cluster) or "
                "scheduler (its workers), not both"
            )
    workers = max(1, min(jobs or os.cpu_count() or 1, len(configs)))

    from distributed import LocalCluster, as_completed

    results: list[dict | None] = [None] * len(configs)
    unchecked = bool(maps)
    bar = None
    cluster = None
    sweep_id = uuid.uuid4().hex
    signals = contextlib.ExitStack()
    interrupted = signals.enter_context(_deferred_signals())  # Dask's start and close too
    try:
        interrupted()
        if scheduler is not None:
            client = connect(scheduler)
        else:
            # Threads, not processes: a task only waits on its point's own interpreter, and
            # worker processes would be multiprocessing children re-importing the caller's
            # __main__ (see _run_point). No memory limit: the points' memory is not the
            # worker's. The dashboard would take a port; nobody looks at it.
            cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=False,
                dashboard_address=None, memory_limit=0, silence_logs=logging.ERROR,
            )  # fmt: skip
            client = cluster.get_client()
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(configs), unit="point", file=sys.stderr, delay=2.0)
        with client:
            futures = []
            index: dict[str, int] = {}
            pending = as_completed()
            try:
                # Submitted in slices, the signals looked at between them and between results:
                # a 10,000-point sweep takes seconds to submit.
                for start in range(0, len(configs), 64):
                    interrupted()
                    for i in range(start, min(start + 64, len(configs))):
                        fut = client.submit(
                            _run_point, sweep_id, configs[i], key=f"lfsim-point-{i}-{sweep_id}"
                        )
                        index[fut.key] = i
                        futures.append(fut)
                    pending.update(futures[start:])
                while not pending.is_empty():
                    interrupted()
                    batch = pending.next_batch(block=False)
                    if not batch:
                        time.sleep(0.05)
                    for fut in batch:
                        i = index[fut.key]
                        results[i] = _point_result(fut, points[i])
                        if unchecked:
                            # A misspelt metric is known from the first point: stop there.
                            _check_metrics_present(maps, results[i]["metrics"])
                            unchecked = False
                        if bar is not None:
                            bar.update(1)
                interrupted()
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    # Stopped on purpose: what Dask logs of the work it was cutting short
                    # (an update_graph cancelled mid-way, as CancelledError tracebacks) is
                    # noise, not news.
                    signals.enter_context(_quiet_logs("distributed", "asyncio", "tornado"))
                # Queued points never start; running ones are killed where they run.
                client.cancel(futures)
                client.run(_stop_points, sweep_id)
                raise
    finally:
        if bar is not None:
            bar.close()
        if cluster is not None:
            cluster.close()
        signals.close()

    rows = []
    for point, res in zip(points, results, strict=True):
        row = {key: _column_value(value) for key, value in point.items()}
        row.update(res["metrics"])
        row["wall_time_s"] = res["wall_time_s"]
        row["events"] = res["events"]
        rows.append(row)
    df = pd.DataFrame(rows)
    # Keep the documented column order even if a metric is missing from some points.
    metric_cols = list(dict.fromkeys(k for r in results for k in r["metrics"]))
    df = df[list(dict.fromkeys([*points[0].keys(), *metric_cols, "wall_time_s", "events"]))]
    df = df.astype(_metric_dtypes(metric_cols, [r["metrics"] for r in results]))
    if target is not None:
        with atomic_dir(target) as tmp:
            df.to_parquet(tmp / "sweep.parquet", index=False)
            df.to_csv(tmp / "sweep.csv", index=False)
            if maps:
                from .plotting import plot_heatmaps  # lazy: matplotlib only for heat maps

                constants = {k: v[0] for k, v in grid.items() if len(v) == 1}
                # Drawn as numbers: a flag as 0/1, a gap (pd.NA) as NaN.
                drawn = df.astype({m: float for m in maps if m in df.columns})
                plot_heatmaps(drawn, keys, maps, tmp, base.name, constants)
    # Not columns, and set after writing (sweep.csv and .parquet stay as they were): what the
    # printed table needs to know.
    df.attrs["fabrics"] = [sc.fabric for sc in scenarios]
    df.attrs["bool_metrics"] = sorted({k for r in results for k in r.get("bools", ())})
    return df


def _metric_dtypes(names: Sequence[str], points: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Counts and flags keep their kind in the table (pandas would make a count missing from
    one point a float, a flag an object): int64/bool, or Int64/boolean (nullable) with a gap."""
    out = {}
    for name in names:
        values = [p[name] for p in points if name in p]
        gap = len(values) < len(points)
        if values and all(isinstance(v, bool) for v in values):
            out[name] = "boolean" if gap else "bool"
        elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            out[name] = "Int64" if gap else "int64"
    return out


def _describe(point: Mapping[str, Any]) -> str:
    return "point " + ", ".join(f"{k}={v}" for k, v in point.items())
