"""PFC deadlock from YAML, CLI and Python: summary metrics, stop_on_deadlock, bad input."""

import json

import pandas as pd
import pytest

import lfsim

SHORT = {"stop_time": "3ms"}


@pytest.fixture(scope="module")
def ring():
    return lfsim.run("pfc_deadlock", {"mode": "deadlock", **SHORT})


def test_summary_reports_the_cycle_as_json_types(ring, tmp_path):
    r = lfsim.run("pfc_deadlock", {"mode": "deadlock", **SHORT}, out=tmp_path / "o")
    m = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]
    assert m["deadlock"] is True
    assert m["deadlock_traffic_moving"] is False
    assert sorted(m["deadlock_cycle"]) == [f"ring{i}/p1/prio3" for i in range(4)]
    # Reported PersistenceTime (200 us) after it formed, at the 10 us check resolution.
    lag = m["deadlock_detected_us"] - m["deadlock_time_us"]
    assert 200 <= lag <= 210
    assert m["deadlock_frozen_bytes"] > 4e6
    assert r.metrics == ring.metrics  # same seed, same output


def test_blocked_series_holds_the_cycle_from_its_formation(ring):
    df = ring.timeseries("blocked")
    formed = ring.metrics["deadlock_time_us"] * 1e-6
    for label in ring.metrics["deadlock_cycle"]:
        rows = df[df["label"] == label].sort_values("time_s")
        last = rows.iloc[-1]
        assert last["blocked"] == 1 and last["time_s"] <= formed + 1e-12


def test_stop_on_deadlock_ends_the_run_at_detection_and_reruns(tmp_path):
    r = lfsim.run(
        "pfc_deadlock",
        {"mode": "deadlock", "stop_time": "50ms", "stop_on_deadlock": "true"},
        out=tmp_path / "a",
    )
    assert r.config["stop_on_deadlock"] is True
    assert r.summary["sim_time_s"] * 1e6 == pytest.approx(r.metrics["deadlock_detected_us"])
    again = lfsim.run(tmp_path / "a" / "config.yaml", out=tmp_path / "b")
    assert again.metrics == r.metrics


@pytest.mark.parametrize(
    ("mode", "deadlock"),
    [("light", False), ("updown", False), ("routing_loop", True), ("routing_converged", False)],
)
def test_modes(mode, deadlock):
    r = lfsim.run("pfc_deadlock", {"mode": mode, **SHORT})
    assert r.metrics["deadlock"] is deadlock
    assert r.metrics["drops"] == 0


BAD = [
    (["--set", "stop_on_deadlock=maybe"], "stop_on_deadlock: got 'maybe'; accepted: true or false"),
    (
        [
            "--set",
            "mode=routing_converged",
            "--set",
            "topology.Routing=Clockwise",
        ],
        "topology.Routing: Clockwise needs a ring (switch s linked to s+1 mod n); accepted: "
        "ShortestPath or UpDown, or generator Ring",
    ),
    (
        ["--set", "workload.ring.Shift=4"],
        "workload.ring.Shift: host 0 would send to itself; accepted: a shift that moves every host",
    ),
    (
        ["--set", "mode=routing_loop", "--set", "topology.LinkFailure=leaf0-spine7"],
        "topology.LinkFailure: got 'leaf0-spine7'; accepted: two switches joined by a link, as "
        "A-B (e.g. leaf0-spine0), or empty",
    ),
    (
        ["--set", "DeadlockDetector.PersistenceTime=0s"],
        "DeadlockDetector.PersistenceTime: got '0s'",
    ),
]


@pytest.mark.parametrize(("args", "expected"), BAD, ids=lambda x: " ".join(x)[:50])
def test_bad_input_is_one_line_exit_2_and_nothing_written(cli, tmp_path, args, expected):
    p = cli("run", "pfc_deadlock", *args, "--out", "out")
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr
    assert expected in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def test_blocked_series_is_deterministic(ring):
    again = lfsim.run("pfc_deadlock", {"mode": "deadlock", **SHORT})
    pd.testing.assert_frame_equal(ring.timeseries("blocked"), again.timeseries("blocked"))


WATCHDOG = {
    "RoceSwitch.PfcWatchdog": "true",
    "RoceSwitch.PfcWatchdogDetectionTime": "1ms",
    "RoceSwitch.PfcWatchdogRestorationTime": "1ms",
}


@pytest.mark.parametrize("action", ["Drop", "Forward"])
def test_watchdog_breaks_the_deadlock_and_every_flow_completes(action):
    r = lfsim.run("pfc_deadlock", {"mode": "watchdog", "RoceSwitch.PfcWatchdogAction": action})
    m = r.metrics
    assert m["deadlock"] is True  # it formed and was seen ...
    # ... and the watchdog broke it DetectionTime after the pause spells began.
    assert m["deadlock_time_us"] < m["deadlock_cleared_us"] <= m["deadlock_time_us"] + 1010
    assert m["pfc_watchdog_storms"] >= 1
    assert m["messages_completed"] == 4 * 16
    assert r.summary["sim_time_s"] < 0.05  # ended by completion, not the horizon
    assert m["retransmitted_packets"] > 0  # the price: go-back-N over what was dropped
    if action == "Drop":
        assert m["pfc_watchdog_drops"] > 0 and m["drops"] >= m["pfc_watchdog_drops"]


def test_watchdog_does_not_fire_in_the_healthy_incast():
    base = {"mode": "pfc", "stop_time": "3ms", "record": ""}
    plain = lfsim.run("incast", base)
    guarded = lfsim.run("incast", {**base, **WATCHDOG})
    assert plain.metrics["pause_frames_sent"] > 0  # PFC is at work ...
    assert guarded.metrics["pfc_watchdog_storms"] == 0  # ... but no pause lasts 1 ms
    assert guarded.metrics == plain.metrics
