"""Parameter sweeps: the cartesian product of a grid, one process per point."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError, SimulationError, one_line, quote
from .output import atomic_dir, check_target
from .scenario import Scenario, load_scenario

if TYPE_CHECKING:
    import pandas as pd


def _run_point(core_config: dict) -> dict:
    """Worker: one simulation in a fresh process; only scalar results travel back."""
    from . import core as _core

    t0 = time.perf_counter()
    raw = _core.core().run(core_config, None)
    wall = time.perf_counter() - t0
    metrics = {}
    for k, v in (raw.get("metrics") or {}).items():
        if isinstance(v, str):
            metrics[str(k)] = v
        elif isinstance(v, int | float) or (hasattr(v, "ndim") and v.ndim == 0):
            metrics[str(k)] = float(v)
    return {"metrics": metrics, "wall_time_s": wall, "events": int(raw["events"])}


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


def sweep(
    scenario: str | Path | Mapping | Scenario,
    grid: Mapping[str, Sequence[Any]],
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
    jobs: int | None = None,
    out: str | Path | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run every point of the grid's cartesian product; one row per point.

    Columns: the grid keys, every scalar metric, ``wall_time_s`` and ``events``. Every point
    is validated before any runs. With ``out``, ``sweep.parquet`` and ``sweep.csv`` are
    written there (atomically). Points run in spawned processes, so a script calling this
    needs the usual ``if __name__ == "__main__":`` guard (notebooks do not).
    """
    import pandas as pd

    base = load_scenario(scenario, overrides, seed)
    points = grid_points(grid)
    # Validate all points first: a typo in the last value must not cost the whole sweep.
    configs = [load_scenario(base, point).core_config() for point in points]
    target = Path(out) if out is not None else None
    if target is not None:
        check_target(target, "out")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ScenarioError(f"jobs: got {quote(jobs)}; accepted: an integer >= 1")
    workers = max(1, min(jobs or os.cpu_count() or 1, len(configs)))

    results: list[dict | None] = [None] * len(configs)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(configs), unit="point", file=sys.stderr, delay=2.0)
    # spawn + one task per child: each point starts from a clean process, exactly as a
    # separate `lfsim run` would (ns-3 keeps global state between runs in one process).
    ctx = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(workers, mp_context=ctx, max_tasks_per_child=1) as pool:
            futures = {pool.submit(_run_point, cfg): i for i, cfg in enumerate(configs)}
            try:
                for fut in as_completed(futures):
                    i = futures[fut]
                    try:
                        results[i] = fut.result()
                    except ValueError as exc:
                        raise ScenarioError(
                            f"{_describe(points[i])}: {one_line(str(exc))}"
                        ) from None
                    except BrokenProcessPool:
                        raise SimulationError(
                            f"the simulator process died while running {_describe(points[i])}"
                        ) from None
                    if bar is not None:
                        bar.update(1)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        if bar is not None:
            bar.close()

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
    if target is not None:
        with atomic_dir(target) as tmp:
            df.to_parquet(tmp / "sweep.parquet", index=False)
            df.to_csv(tmp / "sweep.csv", index=False)
    return df


def _describe(point: Mapping[str, Any]) -> str:
    return "point " + ", ".join(f"{k}={v}" for k, v in point.items())
