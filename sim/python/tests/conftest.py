"""Shared helpers. Every test drives the real compiled ``lfsim._core``."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Small runs of the built-in fc_distance scenario: 2 ms of one 2GFC link, warm-up shortened
# so that the throughput metric covers a real interval.
SMALL = ["--set", "stop_time=2ms", "--set", "Report.Warmup=200us"]
SMALL_OVERRIDES = {"stop_time": "2ms", "Report.Warmup": "200us"}


def run_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m lfsim.cli ARGS`` in ``cwd``; text output captured."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "lfsim.cli", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def cli(tmp_path):
    def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return run_cli(*args, cwd=tmp_path, env=env)

    return _run


@pytest.fixture
def refused(cli, tmp_path):
    """``refused(*args, expected=...)``: ``lfsim ARGS --out out`` is bad input: exit 2, one
    line containing ``expected``, no traceback, no ``out`` written."""

    def _check(*args: str, expected: str) -> None:
        p = cli(*args, "--out", "out")
        assert p.returncode == 2, p.stderr
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
        assert expected in lines[0], lines[0]
        assert not (tmp_path / "out").exists()

    return _check


# A scenario with modes on the fc fabric: one 2GFC link of 10 km with 8 BB_Credits, and three
# variants. "near" and "far" change attributes (merged over the base), "pingpong" changes the
# topology and the workload (another generator and pattern replace the base's), its stop time
# and its recorders (top-level keys replace the base's).
MODES_YAML = """\
description: one FC link in three variants
fabric: fc
seed: 1
stop_time: 2ms
record: [credits]
topology: {generator: PointToPoint}
workload: {stream: {pattern: FcStream, Destinations: h0}}
Report: {Warmup: 200us}
FcNetDevice: {Speed: 2GFC, BbCredit: 8}
FcChannel: {Length: 10000}
modes:
  near: {FcChannel: {Length: 10}}
  far: {FcNetDevice: {BbCredit: 2}}
  pingpong:
    topology: {generator: Star, Hosts: 2}
    workload: {stream: null, pingpong: {pattern: FcPingPong, Hosts: h1, Destinations: h0}}
    FcPingPong: {MinSize: 1024, MaxSize: 4096, Step: 1024, RoundTrips: 2}
    stop_time: 1s
    record: []
"""


@pytest.fixture
def modes_file(tmp_path):
    path = tmp_path / "modes.yaml"
    path.write_text(MODES_YAML)
    return path


def process_table() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, command line), from /proc."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        out[int(stat.parent.name)] = (ppid, cmd)
    return out
