"""Inputs that used to pass validation and then abort ns-3, print a traceback or eat the
machine (issue 19): each now gets one line naming the key and the accepted form, exit code 2,
and nothing written."""

from pathlib import Path

import pytest
from conftest import process_table, run_cli

from lfsim.errors import ScenarioError

STORAGE = ["--set", "stop_time=2ms", "--set", "FioJob.runtime=1ms", "--set", "FioJob.ramp_time=0s"]
INCAST = ["--set", "stop_time=2ms"]


def _refused(tmp_path, *args: str, key: str, accepted: str) -> None:
    out = tmp_path / "out"
    p = run_cli(*args, "--out", str(out), cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0].startswith("lfsim: error: ") and f"{key}: got " in lines[0], lines[0]
    assert accepted in lines[0], lines[0]
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [], "nothing written, not even a temporary folder"


@pytest.mark.parametrize("where", ["--seed", "--set"])
@pytest.mark.parametrize(
    "seed",
    [
        "4294944443",  # MRG32k3a's second modulus: ns-3 aborts "invalid Seed" from here up
        "4294967295",
        "１２",  # full-width digits: int() reads them as 12
    ],
)
def test_seeds_ns3_cannot_take_are_refused(tmp_path, where, seed):
    given = ["--seed", seed] if where == "--seed" else ["--set", f"seed={seed}"]
    key = "--seed" if where == "--seed" and not seed.isascii() else "seed"
    _refused(tmp_path, "run", "incast", *INCAST, *given, key=key, accepted="1..4294944442")


def test_the_largest_seed_ns3_takes_runs(tmp_path):
    p = run_cli("run", "incast", *INCAST, "--seed", "4294944442", "--out", "o", cwd=tmp_path)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize(
    ("scenario", "assignment"),
    [
        ("incast", "Dcqcn.rpg_ai_rate=40 Mbps"),  # ns-3's DataRate aborts on the space
        ("incast", "Dcqcn.rpg_max_rate=40 Gbps"),
        ("incast", "Dcqcn.rpg_ai_rate=40"),  # ns-3 would run it at 40 bit/s
        ("incast", "Dcqcn.rpg_ai_rate=40 Mbit"),
        ("incast", "Dcqcn.rpg_ai_rate=2e19bps"),  # beyond ns-3's uint64 bit/s
        ("storage_qd1", "BlockTarget.MaxBandwidth=1 GBps"),
    ],
)
def test_data_rates_need_a_number_and_a_unit(tmp_path, scenario, assignment):
    args = INCAST if scenario == "incast" else STORAGE
    mode = ["--set", "mode=pfc_dcqcn"] if scenario == "incast" else []
    key = assignment.split("=")[0]
    _refused(
        tmp_path,
        "run",
        scenario,
        *args,
        *mode,
        "--set",
        assignment,
        key=key,
        accepted="a data rate: a number and a unit with no space",
    )


@pytest.mark.parametrize("value", ["1e7s", "200d", "1e999s"])
def test_times_beyond_ns3_range_are_refused_by_name(tmp_path, value):
    # ns-3's Time is 2^63 ps = 9.22e6 s; these used to be answered "must be positive".
    _refused(
        tmp_path,
        "run",
        "incast",
        "--set",
        f"stop_time={value}",
        key="stop_time",
        accepted="at most 9.2e6 s",
    )


def test_an_attribute_time_beyond_ns3_range_is_refused(tmp_path):
    _refused(
        tmp_path,
        "run",
        "storage_qd1",
        *STORAGE,
        "--set",
        "BlockTarget.ReadServiceTime=200d",
        key="BlockTarget.ReadServiceTime",
        accepted="at most 9.2e6 s",
    )


def test_a_sample_interval_that_would_fill_memory_is_refused(tmp_path):
    # 1 ps over 2 ms is 2e9 samples per series (it used to run until MemoryError).
    _refused(
        tmp_path,
        "run",
        "incast",
        *INCAST,
        "--set",
        "sample_interval=1ps",
        key="sample_interval",
        accepted="at least stop_time / 10,000,000",
    )


def test_the_smallest_sample_interval_runs(tmp_path):
    p = run_cli(
        "run",
        "fc_distance",
        "--set",
        "stop_time=100us",
        "--set",
        "Report.Warmup=10us",
        "--set",
        "sample_interval=10ps",
        "--out",
        "o",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("target", ["/proc/lfsim-x", "/sys/lfsim-x", "FILE/sub"])
def test_an_output_folder_that_cannot_be_made_is_refused(tmp_path, target):
    (tmp_path / "FILE").write_text("a file, not a folder")
    p = run_cli("run", "incast", *INCAST, "--out", target, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "out: got " in p.stderr and "where no directory can be made" in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["FILE"]


BASE = "fabric: fc\nstop_time: 1ms\ntopology: {generator: PointToPoint}\n"


def _yaml_refused(tmp_path, text: str | bytes, expect: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_bytes(text) if isinstance(text, bytes) else f.write_text(text)
    p = run_cli("run", "s.yaml", "--out", "o", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert len(p.stderr.splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    assert expect in p.stderr, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.yaml"]


def test_yaml_nested_a_thousand_deep_is_refused(tmp_path):
    # It used to end in RecursionError inside the YAML parser.
    _yaml_refused(
        tmp_path,
        BASE + "FcChannel: " + "[" * 1000 + "1" + "]" * 1000 + "\n",
        "nested too deep; accepted: at most 64 levels of nesting",
    )


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        # PyYAML's ReaderError used to end in a traceback for each of these.
        (BASE.encode() + b"description: a\x00b\n", "line 4, column 15: character U+0000"),
        (BASE.encode() + b"description: a\x07b\n", "line 4, column 15: character U+0007"),
        (BASE.encode() + b"description: \xff\xfe\n", "line 4, column 14: byte 0xff is not UTF-8"),
        (b"\xef\xbb\xbf" + BASE.encode() + b"description: \xc3\n", "line 4, column 14: byte 0xc3"),
    ],
)
def test_bytes_yaml_refuses_are_named_by_line_and_column(tmp_path, text, expect):
    _yaml_refused(tmp_path, text, f"s.yaml: bad YAML at {expect}")
    _yaml_refused(tmp_path, text, "accepted: UTF-8 text without control characters")


def test_a_tab_in_the_indentation_says_so(tmp_path):
    _yaml_refused(tmp_path, BASE + "FcChannel:\n\tLength: 5\n", "(indented with spaces, not tabs)")


@pytest.mark.parametrize("depth", [70, 100_000])
@pytest.mark.parametrize("style", ["flow", "block"])
def test_yaml_nested_deeper_than_64_levels_is_refused(tmp_path, depth, style):
    # libyaml's composer recurses in C without a limit: 100,000 levels used to end the process
    # with a segmentation fault once lfsim read YAML with it.
    if style == "flow":
        nested = "[" * depth + "1" + "]" * depth
    else:
        nested = "\n  " + "- " * depth + "1"  # compact nested sequences: one line
    _yaml_refused(
        tmp_path,
        BASE + "FcChannel: " + nested + "\n",
        "nested too deep; accepted: at most 64 levels of nesting",
    )


def test_many_values_written_out_are_no_alias_bomb():
    # 1,100,001 values written out are no bomb (the bound is on what aliases multiply), even
    # with a value used twice beside them; they used to be refused as one.
    from lfsim.yamlio import check_size

    one = [1]
    check_size({"x": one, "y": one, "rows": [[0] * 10 for _ in range(100_000)]}, "s.yaml")
    with pytest.raises(ScenarioError, match="s.yaml: 11,111,111,112 values once its aliases"):
        check_size(
            {"x": [[[[[[[[[[0] * 10] * 10] * 10] * 10] * 10] * 10] * 10] * 10] * 10] * 10}, "s.yaml"
        )


def test_a_yaml_alias_bomb_is_refused_before_it_is_expanded(tmp_path):
    # 10 levels of 10 aliases: 10^10 values from 12 lines (it used to take minutes and all
    # memory before any error).
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    _yaml_refused(
        tmp_path,
        BASE + "FcChannel:\n" + "".join(f"  {ln}\n" for ln in lines),
        "values once its aliases are expanded; accepted: at most 1,000,000",
    )


def test_a_merge_key_may_be_overridden(tmp_path):
    # `<<: *base` then a key of its own is YAML's override, not a duplicate.
    text = BASE + (
        "FcNetDevice: &dev {BbCredit: 8, Speed: 8GFC}\n"
        "modes:\n  a: {}\n  b:\n    FcNetDevice:\n      <<: *dev\n      BbCredit: 16\n"
    )
    (tmp_path / "s.yaml").write_text(text)
    import lfsim

    dev = lfsim.load_scenario(tmp_path / "s.yaml", {"mode": "b"}).config["FcNetDevice"]
    assert dev["BbCredit"] == "16" and dev["Speed"] == "8GFC"
    twice = BASE + "FcNetDevice: {BbCredit: 8, BbCredit: 16}\n"
    _yaml_refused(tmp_path, twice, "key 'BbCredit' appears twice")


def test_a_mistake_in_a_mode_not_selected_is_refused(tmp_path):
    text = BASE + "mode: a\nmodes:\n  a: {}\n  b:\n    FcNetDevice: {BbCreditt: 16}\n"
    _yaml_refused(tmp_path, text, "mode b: FcNetDevice.BbCreditt does not exist; accepted:")


def test_job_sections_of_separators_only_are_refused(tmp_path):
    _refused(
        tmp_path,
        "run",
        "storage_qd1",
        *STORAGE,
        "--set",
        "workload.fio.Jobs=; ; ;",
        key="workload.fio.Jobs",
        accepted="'name: option=value ...; name: ...'",
    )


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid``."""
    return {p for p, (ppid, _) in process_table().items() if ppid == pid}


def _start(tmp_path, *args: str):
    import os
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "lfsim.cli", *args], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip


def test_sigterm_is_ctrl_c_for_a_run(tmp_path):
    import signal
    import time

    # Long enough to be still running after 4 s on a faster host too (it is stopped then).
    p = _start(tmp_path, "run", "incast", "--set", "stop_time=10s", "--out", "o", "--quiet")
    time.sleep(4)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143 and err.strip() == "lfsim: terminated", err
    assert list(tmp_path.iterdir()) == []  # no half-written folder, no temporary one


def test_sigterm_stops_a_sweeps_workers(tmp_path):
    import os
    import signal
    import time

    p = _start(tmp_path, "sweep", "incast", "--set", "stop_time=2s", "--grid",
               "mode=pfc,fc,lossy", "--jobs", "2", "--out", "sw", "--quiet")  # fmt: skip
    workers: set[int] = set()
    for _ in range(600):  # the two workers start (after Dask's import and local cluster)
        workers |= _children(p.pid)
        if len(workers) >= 2:
            break
        time.sleep(0.1)
    assert len(workers) == 2
    time.sleep(1)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    for pid in workers:  # ended, not left simulating
        try:
            os.kill(pid, 0)
            alive = (Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0]) != "Z"
        except ProcessLookupError:
            alive = False
        assert not alive, f"worker {pid} still running"
    assert list(tmp_path.iterdir()) == []


def test_a_killed_runs_temporary_folder_is_removed_by_the_next_run(tmp_path):
    # SIGKILL cannot be handled; the next run for the same folder removes what it left.
    orphan = tmp_path / ".o.999999999.abcd.tmp"
    (orphan / "series").mkdir(parents=True)
    p = run_cli("run", "fc_distance", "--set", "stop_time=100us", "--set",
                "Report.Warmup=10us", "--out", "o", "--quiet", cwd=tmp_path)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["o"]


def test_an_integer_with_a_trailing_blank_is_refused_not_aborted(tmp_path):
    # Found by the fuzz test: ns-3's integer parser aborts unless the number ends the text.
    from conftest import run_cli

    p = run_cli("run", "incast", "--set", "RdmaNic.RetryCount=3 ", "--out", "o", cwd=tmp_path)
    assert p.returncode == 2 and "RdmaNic.RetryCount" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()
