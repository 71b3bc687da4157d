"""Shared helpers. Every test drives the real compiled ``lfsim._core``."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Small runs of the built-in fc_distance scenario: 2 ms of one 2GFC link, warm-up shortened
# so that the throughput metric covers a real interval.
SMALL = ["--set", "stop_time=2ms", "--set", "FcScenario.Warmup=200us"]
SMALL_OVERRIDES = {"stop_time": "2ms", "FcScenario.Warmup": "200us"}


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
