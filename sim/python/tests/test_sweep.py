"""Sweeps: one process per point, rows in grid order, every point validated first."""

import ast
import subprocess
import sys

import pandas as pd
import pytest
from conftest import SMALL, SMALL_OVERRIDES

import lfsim

GRID = {"FcNetDevice.BbCredit": [2, 8], "FcChannel.Length": [1000, 20000]}


def test_api_sweep_rows_columns_and_physics():
    df = lfsim.sweep("fc_distance", GRID, overrides=SMALL_OVERRIDES, jobs=2)
    assert len(df) == 4
    assert list(df.columns[:2]) == list(GRID)
    assert list(df.columns[-2:]) == ["wall_time_s", "events"]
    single = lfsim.run("fc_distance", SMALL_OVERRIDES)
    scalars = [k for k, v in single.metrics.items() if not isinstance(v, list)]
    assert list(df.columns[2:-2]) == scalars
    assert df[list(GRID)].values.tolist() == [[2, 1000], [2, 20000], [8, 1000], [8, 20000]]
    # A separate process gives what an in-process run of the same point gives.
    row = df[(df["FcNetDevice.BbCredit"] == 8) & (df["FcChannel.Length"] == 10000)]
    assert row.empty  # not a grid point
    point = lfsim.run(
        "fc_distance", {**SMALL_OVERRIDES, "FcNetDevice.BbCredit": 2, "FcChannel.Length": 20000}
    )
    got = df[(df["FcNetDevice.BbCredit"] == 2) & (df["FcChannel.Length"] == 20000)].iloc[0]
    for k in scalars:
        assert got[k] == point.metrics[k], k
    # 20 km: the round trip needs more credits than 2, so 8 credits carry more.
    long = df[df["FcChannel.Length"] == 20000].set_index("FcNetDevice.BbCredit")
    assert long.loc[8, "throughput_MiBps"] > long.loc[2, "throughput_MiBps"]


def test_cli_sweep_writes_parquet_and_csv(cli, tmp_path):
    p = cli(
        "sweep",
        "fc_distance",
        *SMALL,
        "--grid",
        "FcNetDevice.BbCredit=2,4,8",
        "--grid",
        "FcNetDevice.Speed=1GFC,2GFC",
        "--jobs",
        "2",
    )
    assert p.returncode == 0, p.stderr
    (out,) = (tmp_path / "results").glob("fc_distance_sweep-*")  # named with its grid's hash
    df = pd.read_parquet(out / "sweep.parquet")
    csv = pd.read_csv(out / "sweep.csv")
    assert len(df) == 6 and len(csv) == 6
    assert list(df.columns[:2]) == ["FcNetDevice.BbCredit", "FcNetDevice.Speed"]
    assert {"throughput_MiBps", "wall_time_s", "events"} <= set(df.columns)
    assert list(csv.columns) == list(df.columns)
    assert df["FcNetDevice.BbCredit"].tolist() == [2, 2, 4, 4, 8, 8]
    # Doubling the line rate never lowers throughput.
    pivot = df.pivot(
        index="FcNetDevice.BbCredit", columns="FcNetDevice.Speed", values="throughput_MiBps"
    )
    assert (pivot["2GFC"] >= pivot["1GFC"]).all()


def test_a_script_without_a_main_guard_can_sweep(tmp_path):
    # Points run in fresh interpreters that never import the caller's __main__: a plain
    # script (no `if __name__ == "__main__":`) must not re-run itself in its workers.
    script = tmp_path / "plain_script.py"
    script.write_text(
        "import lfsim\n"
        f"df = lfsim.sweep('fc_distance', {{'FcNetDevice.BbCredit': [2, 8]}}, "
        f"overrides={SMALL_OVERRIDES!r}, jobs=2)\n"
        "print(df['throughput_MiBps'].tolist())\n"
    )
    p = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert p.returncode == 0, p.stderr
    got = ast.literal_eval(p.stdout.strip().splitlines()[-1])
    # Each point is the same simulation as an in-process run of it (same seed).
    want = [
        lfsim.run("fc_distance", {**SMALL_OVERRIDES, "FcNetDevice.BbCredit": c}).metrics[
            "throughput_MiBps"
        ]
        for c in (2, 8)
    ]
    assert got == want
    assert got[1] > got[0]  # 10 km at 2GFC is credit-bound below about 10 credits


def test_a_point_that_fails_late_names_the_point():
    # Warmup >= stop_time is found by the C++ core when the point runs, in its worker.
    with pytest.raises(lfsim.ScenarioError, match=r"stop_time=100us: Report\.Warmup"):
        lfsim.sweep("fc_distance", {"stop_time": ["2ms", "100us"]}, SMALL_OVERRIDES, jobs=2)


def test_a_worker_that_dies_is_a_simulation_error(tmp_path, monkeypatch):
    # Stand-in for a simulator crash: the worker interpreter kills itself with SIGSEGV.
    crash = tmp_path / "crashing-python"
    crash.write_text("#!/bin/sh\nkill -SEGV $$\n")
    crash.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(crash))
    with pytest.raises(lfsim.SimulationError, match=r"died \(signal SIGSEGV\) while running"):
        lfsim.sweep("fc_distance", {"FcNetDevice.BbCredit": [2]}, SMALL_OVERRIDES, jobs=1)


def _workers_below(pid: int) -> set[int]:
    """The sweep's point interpreters (``-m lfsim._worker``) below process ``pid``."""
    from conftest import process_table

    tree = process_table()
    found = set()
    for p, (_, cmd) in tree.items():
        up = p
        while up in tree and up != pid and up > 1:
            up = tree[up][0]
        if up == pid and "lfsim._worker" in cmd:
            found.add(p)
    return found


@pytest.mark.parametrize("after", [None, 0.3, 1.0, 2.0])
def test_sigterm_while_points_are_queued_is_clean(after, tmp_path):
    """Issue 40 item 18: SIGTERM while a long sweep's points were being submitted to Dask
    printed Dask's tracebacks (CancelledError from update_graph; once NameError: cannot access
    free variable 'future') or hung. Sent while the cluster starts (None) or seconds after the
    first points started (the others queued, or still being submitted): exit 143, the one
    line, no folder, no point left running."""
    import signal
    import time

    seeds = ",".join(str(i) for i in range(1, 3001))
    p = subprocess.Popen(
        [sys.executable, "-m", "lfsim.cli", "sweep", "fc_distance", "--set", "stop_time=10us",
         "--set", "Report.Warmup=0s", "--grid", f"seed={seeds}", "--jobs", "2", "--out", "sw",
         "--quiet"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    if after is None:
        time.sleep(1.0)
    else:
        while not _workers_below(p.pid):
            assert p.poll() is None and time.monotonic() < deadline, "no point started"
            time.sleep(0.05)
        time.sleep(after)
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError("the sweep did not stop within 60 s of SIGTERM") from None
    assert p.returncode == 143 and err.strip() == "lfsim: terminated", err
    assert list(tmp_path.iterdir()) == []
    assert not _workers_below(p.pid)
