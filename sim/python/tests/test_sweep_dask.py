"""Sweeps on a running Dask cluster: a real `dask scheduler` and two `dask worker` processes."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import SMALL, process_table

import lfsim

DASK = Path(sys.executable).parent / "dask"
GRID = ["--grid", "FcNetDevice.BbCredit=2,4,8,16"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dask_cluster(dask_cluster_procs):
    return dask_cluster_procs[0]


@pytest.fixture
def dask_cluster_procs(tmp_path):
    """The scheduler's address, with two one-thread workers registered, and the processes
    started for them (scheduler, two nannies); all stopped after."""
    from distributed import Client

    # The workers import this lfsim, as a remote worker would its installed one.
    env = dict(os.environ)
    here = str(Path(lfsim.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    commands = [
        [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
        *[
            [
                str(DASK),
                "worker",
                address,
                "--nworkers",
                "1",
                "--nthreads",
                "1",
                "--no-dashboard",
                "--memory-limit",
                "0",
            ]
            for _ in range(2)
        ],
    ]
    procs = []
    try:
        for cmd in commands:
            # A session each, so that cleanup ends a worker's nanny, its worker process and
            # any simulation it started, whatever the test left running.
            procs.append(
                subprocess.Popen(
                    cmd,
                    cwd=tmp_path,
                    env=env,
                    start_new_session=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(address, timeout=5) as client:
                    while len(client.scheduler_info()["workers"]) < 2:
                        assert time.monotonic() < deadline, "two workers never registered"
                        time.sleep(0.2)
                break
            except OSError:  # the scheduler is not listening yet
                assert time.monotonic() < deadline, "the scheduler never started"
                time.sleep(0.2)
        yield address, procs
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def test_a_sweep_on_a_running_cluster_equals_the_local_one(cli, tmp_path, dask_cluster):
    from distributed import Client

    p = cli("sweep", "fc_distance", *SMALL, *GRID, "--scheduler", dask_cluster, "--out", "remote",
            "--quiet")  # fmt: skip
    assert p.returncode == 0, p.stderr
    p = cli("sweep", "fc_distance", *SMALL, *GRID, "--jobs", "2", "--out", "local", "--quiet")
    assert p.returncode == 0, p.stderr
    remote = pd.read_parquet(tmp_path / "remote" / "sweep.parquet")
    local = pd.read_parquet(tmp_path / "local" / "sweep.parquet")
    assert list(remote.columns) == list(local.columns)
    assert remote["FcNetDevice.BbCredit"].tolist() == [2, 4, 8, 16]
    # Same points, same seed: the same simulations wherever they ran.
    same = [c for c in local.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(remote[same], local[same])
    assert remote["throughput_MiBps"].nunique() > 1  # the grid changed something
    # Both workers ran points (the fixture's workers ran nothing else).
    with Client(dask_cluster, timeout=10) as client:
        counts = client.run(lambda dask_worker: dask_worker.state.executed_count)
    assert len(counts) == 2 and all(n >= 1 for n in counts.values()), counts
    assert sum(counts.values()) == 4


def test_a_failed_point_on_a_running_cluster_is_named(tmp_path, dask_cluster):
    # Warmup >= stop_time is found by the C++ core in the point's own process on the worker.
    with pytest.raises(lfsim.ScenarioError, match=r"stop_time=100us: Report\.Warmup"):
        lfsim.sweep(
            "fc_distance",
            {"stop_time": ["2ms", "100us"]},
            {"Report.Warmup": "200us"},
            scheduler=dask_cluster,
        )


@pytest.mark.parametrize(
    "address",
    ["localhost:8786", "tcp://127.0.0.1", "http://127.0.0.1:8786", "tcp://127.0.0.1:99999"],
)
def test_a_malformed_scheduler_is_one_line_and_exit_2(cli, tmp_path, address):
    p = cli("sweep", "fc_distance", *SMALL, *GRID, "--scheduler", address)
    assert p.returncode == 2
    assert p.stderr.strip() == (
        f"lfsim: error: --scheduler: got '{address}'; "
        "accepted: tcp://HOST:PORT of a running Dask scheduler"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_scheduler_is_one_line_and_exit_2(cli, tmp_path):
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    p = cli("sweep", "fc_distance", *SMALL, *GRID, "--scheduler", address)
    assert p.returncode == 2
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"lfsim: error: --scheduler: got '{address}' (not reachable: ")
    assert line.endswith("accepted: tcp://HOST:PORT of a running Dask scheduler")
    assert list(tmp_path.iterdir()) == []


def test_jobs_and_scheduler_together_are_refused(cli, tmp_path):
    p = cli("sweep", "fc_distance", *GRID, "--jobs", "2", "--scheduler", "tcp://127.0.0.1:8786")
    assert p.returncode == 2
    assert p.stderr.startswith("lfsim: error: --jobs: got 2 with --scheduler;")
    assert list(tmp_path.iterdir()) == []


def _simulations_under(roots: set[int]) -> set[int]:
    """The sweep points' interpreters (``-m lfsim._worker``) running below these processes."""
    tree = process_table()
    found = set()
    for pid, (_, cmd) in tree.items():
        if "lfsim._worker" not in cmd:
            continue
        up = pid
        while up in tree and up not in roots and up > 1:
            up = tree[up][0]
        if up in roots:
            found.add(pid)
    return found


def test_sigterm_cancels_a_sweep_on_a_running_cluster(tmp_path, dask_cluster_procs):
    """SIGTERM to `lfsim sweep --scheduler`: the points running on the remote workers are
    killed there, the queued one never starts, no folder is written; the workers stay up."""
    from distributed import Client

    address, procs = dask_cluster_procs
    roots = {p.pid for p in procs}
    # Three points of a minute or more each on two workers: two run, one waits.
    cli = subprocess.Popen(
        [sys.executable, "-m", "lfsim.cli", "sweep", "incast", "--set", "stop_time=10s",
         "--grid", "mode=pfc,fc,lossy", "--scheduler", address, "--out", "sw", "--quiet"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    running: set[int] = set()
    deadline = time.monotonic() + 60
    while len(running) < 2:
        assert time.monotonic() < deadline, "the two points never started on the workers"
        running = _simulations_under(roots)
        time.sleep(0.2)
    cli.send_signal(signal.SIGTERM)
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 143 and err.strip() == "lfsim: terminated", err
    deadline = time.monotonic() + 30
    while _simulations_under(roots):  # killed where they ran, and the third never started
        assert time.monotonic() < deadline, f"left running: {_simulations_under(roots)}"
        time.sleep(0.2)
    assert list(tmp_path.iterdir()) == []
    # The cluster is someone else's: its workers are still there, and free.
    with Client(address, timeout=10) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        assert client.submit(sum, [1, 2], pure=False).result(timeout=30) == 3
