"""SchedulerType (issue 20): the event list's implementation is a scenario setting. ns-3 runs
events in (time, scheduling order) whatever the scheduler, so a run's results must not depend on
it; a name that is not an ns-3 scheduler is refused before anything runs."""

import pytest
from conftest import run_cli

import lfsim


def _fingerprint(r: lfsim.Result) -> tuple:
    series = r.timeseries("queue")
    return (r.metrics, r.summary["events"], tuple(series["time_s"]), tuple(series["bytes"]))


@pytest.mark.parametrize("scenario,mode", [("incast", "pfc"), ("incast", "pfc_dcqcn")])
def test_every_scheduler_gives_the_same_run(scenario, mode):
    # PFC incast: sixteen senders at the same rate, so events tie to the picosecond all the time
    # and only the scheduling order separates them.
    over = {"mode": mode, "stop_time": "3ms", "record": ["queue"], "sample_interval": "0s"}
    runs = {
        s: _fingerprint(lfsim.run(scenario, {**over, "SchedulerType": s}))
        for s in (
            "ns3::LfsimScheduler",
            "ns3::PriorityQueueScheduler",
            "ns3::MapScheduler",
            "ns3::HeapScheduler",
            "ns3::CalendarScheduler",
        )
    }
    first = runs["ns3::LfsimScheduler"]
    assert first[0]["packet_hops"] > 10_000
    for name, fp in runs.items():
        assert fp == first, name


def test_the_default_is_written_into_the_resolved_config(tmp_path):
    r = lfsim.run("incast", {"stop_time": "3ms"}, out=tmp_path / "out")
    assert r.config["SchedulerType"] == "ns3::LfsimScheduler"
    assert "SchedulerType: ns3::LfsimScheduler" in (tmp_path / "out/config.yaml").read_text()


def test_an_unknown_scheduler_is_one_line_exit_2(tmp_path):
    p = run_cli(
        "run", "incast", "--set", "stop_time=3ms", "--set", "SchedulerType=ns3::Fast",
        "--out", str(tmp_path / "out"), cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 2
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "SchedulerType: got 'ns3::Fast'" in lines[0], p.stderr
    assert "ns3::PriorityQueueScheduler" in lines[0]
    assert not (tmp_path / "out").exists()
