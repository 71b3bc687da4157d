"""The Python API (lfsim.run / Result) on the real simulator."""

import numpy as np
import pandas as pd
import pytest
from conftest import SMALL_OVERRIDES

import lfsim
from lfsim import runner


def test_run_returns_dataframes_with_labels():
    r = lfsim.run("fc_distance", {**SMALL_OVERRIDES, "record": "credits,rx_buffers"})
    assert r.out is None
    assert r.summary["scenario"] == "fc_distance" and r.metrics is r.summary["metrics"]
    assert set(r.series_names) == {"credits", "rx_buffers"}
    df = r.timeseries("credits")
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["time_s", "id", "label", "credits"]
    # One label per port, and the sender's port starts with its full BB_Credit (8 here).
    assert df.groupby("id")["label"].nunique().eq(1).all()
    assert df["credits"].max() == 8 and df["credits"].min() >= 0
    assert (
        r.config
        == lfsim.load_scenario(
            "fc_distance", SMALL_OVERRIDES | {"record": "credits,rx_buffers"}
        ).config
    )
    with pytest.raises(KeyError, match="no series named 'tx_queue'"):
        r.timeseries("tx_queue")


def test_dataframes_share_memory_with_core_arrays():
    r = lfsim.run("fc_distance", SMALL_OVERRIDES)
    raw = r._series["credits"]
    df = r.timeseries("credits")
    for col in ("time_s", "id", "credits"):
        assert np.shares_memory(df[col].to_numpy(), raw[col]), col


def test_tables_and_per_flow_labels():
    r = lfsim.run("fc_incast", {"stop_time": "3ms"})
    assert r.table_names
    for name in r.table_names:
        t = r.table(name)
        assert len(t) > 0
        if "id" in t.columns:
            assert t["label"].notna().all()


def test_same_seed_in_one_process_is_identical():
    """ns-3 keeps global state between runs; a second run in the same process must not see it."""
    a = lfsim.run("fc_incast", {"stop_time": "3ms"}, seed=4)
    b = lfsim.run("fc_incast", {"stop_time": "3ms"}, seed=4)
    assert a.metrics == b.metrics and a.summary["events"] == b.summary["events"]


def test_run_with_out_writes_atomically(tmp_path):
    out = tmp_path / "deep" / "run"
    r = lfsim.run("fc_distance", SMALL_OVERRIDES, out=out, plot=True)
    assert r.out == out
    assert (out / "summary.json").is_file() and (out / "plots" / "credits.png").is_file()
    assert sorted(p.name for p in out.parent.iterdir()) == ["run"]


def test_bad_input_raises_scenario_error_and_writes_nothing(tmp_path):
    out = tmp_path / "never"
    with pytest.raises(lfsim.ScenarioError, match=r"^FcChannel.Length: got '-1'; accepted: "):
        lfsim.run("fc_distance", {"FcChannel.Length": -1}, out=out)
    with pytest.raises(lfsim.ScenarioError, match="plot: needs an output directory"):
        lfsim.run("fc_distance", SMALL_OVERRIDES, plot=True)
    assert not out.exists()


def test_value_error_from_core_becomes_scenario_error():
    """A configuration that only C++ rejects (validation bypassed on purpose)."""
    sc = lfsim.load_scenario("fc_distance", SMALL_OVERRIDES)
    cfg = {**sc.config, "FcNetDevice": {**sc.config["FcNetDevice"], "BbCredit": "0"}}
    tampered = lfsim.Scenario(name=sc.name, path=None, config=cfg)
    with pytest.raises(lfsim.ScenarioError) as err:
        runner.execute(tampered)
    assert "\n" not in str(err.value) and "BbCredit" in str(err.value)


def test_progress_bar_appears_only_after_the_delay(capsys, monkeypatch):
    lfsim.run("fc_distance", SMALL_OVERRIDES, progress=True)
    assert capsys.readouterr().err == ""  # a short run shows no bar
    monkeypatch.setattr(runner._Progress, "DELAY_S", 0.0)
    # C++ calls back every 0.25 s of wall time: the run must outlast that on a fast host too
    # (800 ms of fc_incast took 0.24 s on an AMD EPYC host and showed no bar; 4 s about 1.2 s).
    lfsim.run("fc_incast", {"stop_time": "4000ms", "record": ""}, progress=True)
    err = capsys.readouterr().err
    assert "simulated" in err and "/4000 ms |" in err  # in the unit of stop_time


def test_seed_drives_the_random_start_times():
    """fc_incast draws each initiator's start in [0, StartSpread) from the seed's RNG streams."""
    a = lfsim.run("fc_incast", {"stop_time": "3ms"}, seed=4)
    b = lfsim.run("fc_incast", {"stop_time": "3ms"}, seed=5)
    c = lfsim.run("fc_incast", {"stop_time": "3ms", "workload.fcp.StartSpread": "0s"}, seed=4)
    d = lfsim.run("fc_incast", {"stop_time": "3ms", "workload.fcp.StartSpread": "0s"}, seed=5)
    assert a.metrics != b.metrics
    assert c.metrics == d.metrics  # nothing random left: the seed must not matter


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: lfsim.run("fc_distance", ["stop_time=1ms"]), "overrides: got list"),
        (lambda: lfsim.load_scenario("fc_distance", ["stop_time=1ms"]), "overrides: got list"),
        (lambda: lfsim.run("fc_distance", "stop_time=1ms"), "overrides: got str"),
        (lambda: lfsim.run("fc_distance", {"stop_time": "1ms"}, out=123), "out: got int"),
        (lambda: lfsim.run("fc_distance", {"stop_time": "1ms"}, plot="yes"), "plot: got 'yes'"),
        (lambda: lfsim.sweep("fc_distance", [("seed", [1, 2])]), "grid: got list"),
        (lambda: lfsim.sweep("fc_distance", "seed=1,2"), "grid: got str"),
        (lambda: lfsim.sweep("fc_distance", {"seed": [1]}, out=5), "out: got int"),
        (lambda: lfsim.sweep("fc_distance", {"seed": [1]}, overrides=["a"]), "overrides: got"),
    ],
)
def test_api_arguments_of_the_wrong_type_are_named(call, named):
    """Issue 40 item 16: these raised AttributeError or TypeError from inside lfsim."""
    with pytest.raises(lfsim.ScenarioError) as e:
        call()
    assert str(e.value).startswith(named) and "accepted:" in str(e.value), str(e.value)
