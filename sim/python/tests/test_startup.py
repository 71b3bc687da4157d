"""Start-up of a short run (issue 39): the `lfsim` command starts itself again in the
simulation's environment (lfsim._env) before importing anything heavy, and a run that writes
its output directory imports neither pandas nor matplotlib. Checked on the modules each
process imports (PYTHONPROFILEIMPORTTIME), never on a time."""

import json
import os
import subprocess
import sys

import pytest

# What .venv/bin/lfsim (the console script of pyproject.toml) runs.
ENTRY = "import sys; from lfsim.cli import main; sys.exit(main())"
HEADER = "import time: self [us] | cumulative | imported package"
# Imported by the process that runs the simulation, and only by it. (The import-time list
# leaves out modules imported by importlib.import_module or `from . import x`, lfsim._core.)
HEAVY = ("lfsim.runner", "lfsim.scenario", "numpy", "pyarrow", "yaml")
NEVER = ("pandas", "matplotlib", "pydantic", "importlib.metadata")


def _imports_per_process(stderr: str) -> list[list[str]]:
    """The modules each process imported, in the order the processes started."""
    processes: list[list[str]] = []
    for line in stderr.splitlines():
        if line.startswith(HEADER):
            processes.append([])
        elif line.startswith("import time:") and processes:
            processes[-1].append(line.rsplit("|", 1)[1].strip())
    return processes


def _top(names: list[str]) -> set[str]:
    return {n.split(".")[0] for n in names} | set(names)


# FC, RoCE with time series, the 128-host fat-tree, and with the HPCC simulator's result files
# (flows complete in 300 us). (A Fio workload's fio.json is still made with pandas: lfsim.fio.)
@pytest.mark.parametrize(
    ("scenario", "extra"),
    [
        ("fc_pingpong", []),
        ("pfc_deadlock", []),
        ("fat_tree_websearch", []),
        ("fat_tree_websearch", ["--hpcc-output", "--set", "stop_time=300us"]),
    ],
)
def test_a_short_run_imports_the_loader_once_and_no_pandas(tmp_path, scenario, extra):
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}  # so that it re-executes
    env["PYTHONPROFILEIMPORTTIME"] = "1"
    out = tmp_path / "out"
    args = ["run", scenario, "--set", "stop_time=1us", *extra, "--out", str(out)]
    p = subprocess.run(
        [sys.executable, "-c", ENTRY, *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert f"results: {out}" in p.stdout  # the summary printed (its labels need no pandas)
    first, *rest = _imports_per_process(p.stderr)
    assert len(rest) == 1, "the command did not start itself again (GLIBC_TUNABLES)"
    assert "lfsim.cli" in first and "lfsim._env" in first
    assert not _top(first) & set(HEAVY), f"imported before re-executing: {_top(first) & set(HEAVY)}"
    second = _top(rest[0])
    assert set(HEAVY) <= second
    assert not second & set(NEVER), f"a short run imported {second & set(NEVER)}"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sim_time_s"] > 0
    assert summary["tables"] and all((out / f"{t}.csv").is_file() for t in summary["tables"])
    assert all((out / f"{t}.parquet").is_file() for t in summary["tables"])
    assert all((out / "series" / f"{s}.parquet").is_file() for s in summary["series"])
    if "--hpcc-output" in extra:
        assert (out / "fct.txt").read_text().count("\n") > 0  # flows completed, written


def test_importing_lfsim_imports_what_is_used_on_first_use():
    code = (
        "import sys, lfsim\n"
        "print(sorted(m for m in ('lfsim.runner', 'lfsim.scenario', 'lfsim.sweep', 'pydantic',"
        " 'numpy', 'pandas', 'yaml') if m in sys.modules))\n"
        "from lfsim import run, ScenarioError\n"
        "print(run.__module__, ScenarioError.__module__, 'lfsim.runner' in sys.modules)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["[]", "lfsim.runner lfsim.errors True"]


def test_the_package_names_stay_what_they_were():
    import lfsim.sweep  # the submodule: lfsim.sweep stays the function

    assert callable(lfsim.sweep) and lfsim.sweep.__module__ == "lfsim.sweep"
    assert lfsim.scenario.find_scenario is sys.modules["lfsim.scenario"].find_scenario
    assert lfsim.Scenario is sys.modules["lfsim.scenario"].Scenario
    assert lfsim.__version__ == sys.modules["lfsim._version"].__version__
    assert all(hasattr(lfsim, n) for n in lfsim.__all__)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        lfsim.no_such_name  # noqa: B018
    assert not hasattr(lfsim, "no_such_module")
