"""Scenario modes: named variants merged over the base scenario, chosen with ``mode``."""

import math

import pandas as pd
import pytest
import yaml
from conftest import MODES_YAML, SMALL_OVERRIDES

import lfsim
from lfsim import core as lfcore
from lfsim.paths import scenarios_dir


def _defaults(type_id):
    return {a["name"]: a["default"] for a in lfcore.attributes(type_id)}


def test_first_mode_is_the_default_and_merges_attribute_by_attribute(modes_file):
    sc = lfsim.load_scenario(modes_file)
    assert sc.mode == "near" and sc.config["mode"] == "near"
    assert sc.config["modes"] == {"near": {}}
    assert sc.config["FcChannel"]["Length"] == "10"  # from the mode
    # The mode names only Length: the base's other attributes are kept.
    assert sc.config["FcNetDevice"]["BbCredit"] == "8"
    assert sc.config["FcNetDevice"]["Speed"] == "2GFC"
    assert sc.config["Report"]["Warmup"] == "200us"
    assert sc.config["topology"]["generator"] == "PointToPoint"
    assert sc.config["description"] == "one FC link in three variants"


def test_top_level_keys_of_a_mode_replace_the_base(modes_file):
    sc = lfsim.load_scenario(modes_file, {"mode": "pingpong"})
    assert sc.stop_time == "1s" and sc.config["record"] == []
    # Another generator replaces the base's topology; `stream: null` removes that workload.
    assert sc.config["topology"]["generator"] == "Star" and sc.config["topology"]["Hosts"] == "2"
    assert list(sc.config["workload"]) == ["pingpong"]
    assert sc.config["workload"]["pingpong"]["pattern"] == "FcPingPong"
    assert sc.config["Report"]["Warmup"] == "200us"  # a class section: merged, not replaced
    assert sc.seed == 1 and sc.config["sample_interval"] == "0s"


def test_a_mode_refines_a_topology_and_a_workload_attribute_by_attribute(tmp_path):
    """The same generator or pattern in a mode: its attributes merge over the base's."""
    path = tmp_path / "m.yaml"
    path.write_text(
        MODES_YAML
        + "  bigger:\n    topology: {HostSpeed: 4GFC}\n    workload: {stream: {Start: 1us}}\n"
    )
    sc = lfsim.load_scenario(path, {"mode": "bigger"})
    assert sc.config["topology"]["generator"] == "PointToPoint"
    assert sc.config["topology"]["HostSpeed"] == "4GFC"
    stream = sc.config["workload"]["stream"]
    assert stream["pattern"] == "FcStream" and stream["Destinations"] == "h0"  # the base's
    assert stream["Start"] == "1us"  # the mode's


def test_precedence_file_mode_then_override_mode_then_class_overrides(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(MODES_YAML + "mode: far\n")
    assert lfsim.load_scenario(path).mode == "far"
    assert lfsim.load_scenario(path).config["FcNetDevice"]["BbCredit"] == "2"
    assert lfsim.load_scenario(path, {"mode": "near"}).mode == "near"
    # A command-line override beats what the mode sets.
    sc = lfsim.load_scenario(path, {"FcNetDevice.BbCredit": 4})
    assert sc.mode == "far" and sc.config["FcNetDevice"]["BbCredit"] == "4"


def test_a_resolved_scenario_can_be_resolved_for_another_mode(modes_file):
    """What a sweep over mode does: the earlier overrides stay, the new mode is merged."""
    base = lfsim.load_scenario(modes_file, {"FcNetDevice.Speed": "4GFC"}, seed=9)
    far = lfsim.load_scenario(base, {"mode": "far"})
    assert far.mode == "far" and far.seed == 9
    assert far.config["FcNetDevice"]["Speed"] == "4GFC"
    assert far.config["FcNetDevice"]["BbCredit"] == "2"
    assert far.config["FcChannel"]["Length"] == "10000"  # near's Length is not carried over
    assert far.name == base.name == "modes"


def test_resolved_config_resolves_to_itself(modes_file):
    sc = lfsim.load_scenario(modes_file, {"mode": "far"})
    again = lfsim.load_scenario(sc.config)
    assert again.config == sc.config and again.mode == "far"


def test_a_mode_with_another_fabric_inherits_only_top_level_keys_and_shared_parts(
    monkeypatch, tmp_path
):
    """A second fabric made of one of fc's classes (only resolved here, never run)."""
    real = dict(lfcore.fabrics())
    other = {
        "name": "fcx",
        "description": "test-only",
        "type_ids": ["ns3::FcChannel"],
        "recorders": {"credits": "test-only"},
        "open": True,
    }
    monkeypatch.setattr(lfcore, "fabrics", lambda: {**real, "fcx": other})
    base = yaml.safe_load(MODES_YAML)
    base["record"] = ["credits", "rx_buffers"]
    base["sample_interval"] = "5us"
    # FcStream is tied to fc: the mode brings a pattern of every fabric.
    workload = {"stream": {"pattern": "Incast", "Destinations": "h0"}}
    base["modes"]["x"] = {"fabric": "fcx", "record": ["credits"], "workload": workload}
    sc = lfsim.load_scenario(base, {"mode": "x"})
    assert sc.fabric == "fcx" and sc.mode == "x"
    assert set(sc.config) >= {"FcChannel", "Report", "topology", "workload"}
    assert "FcNetDevice" not in sc.config  # not a class of fcx: the base's section is dropped
    # The base's FcChannel section belongs to fc: fcx starts from the defaults.
    assert sc.config["FcChannel"] == _defaults("ns3::FcChannel")
    # Topology and report are shared by every open fabric: they carry over.
    assert sc.config["topology"]["generator"] == "PointToPoint"
    assert sc.config["Report"]["Warmup"] == "200us"
    assert sc.config["workload"]["stream"]["pattern"] == "Incast"
    assert sc.stop_time == "2ms" and sc.config["sample_interval"] == "5us"
    assert sc.description == "one FC link in three variants"

    # Without its own workload, the base's fc-only pattern is refused on fcx.
    del base["modes"]["x"]["workload"]
    with pytest.raises(lfsim.ScenarioError) as err:
        lfsim.load_scenario(base, {"mode": "x"})
    assert str(err.value) == (
        "mode x: workload.stream.pattern: got 'FcStream' with fabric fcx; accepted: fabric fc "
        "for this pattern"
    )
    base["modes"]["x"]["workload"] = workload

    # Without its own record, the base's recorders must exist in the mode's fabric.
    del base["modes"]["x"]["record"]
    with pytest.raises(lfsim.ScenarioError) as err:
        lfsim.load_scenario(base, {"mode": "x"})
    assert str(err.value) == (
        "mode x: record: recorder 'rx_buffers' does not exist in fabric fcx; accepted: credits"
    )


BAD_MODES = [
    ({"mode": "nope"}, "", "mode: got 'nope'; accepted: one of near, far, pingpong"),
    ({}, "mode: 3\n", "mode: got '3'; accepted: one of near, far, pingpong"),
    (
        {"mode": "near", "FcChannel.Length": -1},
        "",
        "mode near: FcChannel.Length: got '-1'; accepted: ",
    ),
    ({"mode": "far"}, "", None),  # sanity: the file itself is fine
]


@pytest.mark.parametrize(("overrides", "extra", "expected"), BAD_MODES)
def test_mode_errors(tmp_path, overrides, extra, expected):
    path = tmp_path / "m.yaml"
    path.write_text(MODES_YAML + extra)
    if expected is None:
        lfsim.load_scenario(path, overrides)
        return
    with pytest.raises(lfsim.ScenarioError) as err:
        lfsim.load_scenario(path, overrides)
    assert str(err.value).startswith(expected)


BASE = "fabric: fc\nstop_time: 1ms\ntopology: {generator: PointToPoint}\n"
BAD_FILES = [
    ("modes: [a, b]\n", "modes: got '['a', 'b']'; accepted: a mapping of mode names to"),
    ("modes: {}\n", "modes: got '{}'; accepted: a mapping of mode names"),
    ("modes: {a: 5}\n", "modes.a: got '5'; accepted: a mapping of scenario keys"),
    ("modes: {a b: {}}\n", "modes: mode name 'a b' is not a name"),
    ("modes: {1: {}}\n", "modes: mode name '1' is not a name"),
    ("modes: {a: {mode: b}}\n", "modes.a: key 'mode' is not allowed in a mode"),
    ("modes: {a: {FcNetDevice: {Nope: 1}}}\n", "mode a: FcNetDevice.Nope does not exist"),
    ("modes: {a: {fabric: nosuch}}\n", "mode a: fabric: got 'nosuch'; accepted: one of fc"),
    ("mode: a\n", "mode: got 'a'; accepted: the name of a mode under modes:"),
]


@pytest.mark.parametrize(("text", "expected"), BAD_FILES, ids=[t for t, _ in BAD_FILES])
def test_bad_modes_block_is_one_line_naming_the_key(tmp_path, text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(BASE + text)
    with pytest.raises(lfsim.ScenarioError) as err:
        lfsim.load_scenario(path)
    assert str(err.value).startswith(expected), str(err.value)
    assert "\n" not in str(err.value)


def test_mode_override_on_a_scenario_without_modes():
    with pytest.raises(lfsim.ScenarioError, match=r"^mode: got 'pfc'; accepted: the name of"):
        lfsim.load_scenario("fc_distance", {"mode": "pfc"})


def test_run_records_the_mode_and_modes_change_the_physics(modes_file):
    near = lfsim.run(modes_file)
    far = lfsim.run(modes_file, {"mode": "far"})
    assert near.mode == "near" and near.summary["mode"] == "near" and far.mode == "far"
    # 10 km at 2GFC: 2 credits cannot cover the round trip, 8 credits over 10 m easily do.
    assert far.metrics["throughput_MiBps"] < 0.5 * near.metrics["throughput_MiBps"]
    assert lfsim.run("fc_distance", SMALL_OVERRIDES).summary["mode"] is None


def test_sweep_over_modes_has_the_union_of_metrics(modes_file, tmp_path):
    """Modes with different workloads report different metrics: one column per metric of any
    point, missing where a point has no such metric (as with modes of different fabrics): NaN,
    or <NA> in a column of counts or flags (which keeps their kind)."""
    modes = ["near", "far", "pingpong"]
    out = tmp_path / "sw"
    df = lfsim.sweep(modes_file, {"mode": modes}, jobs=3, out=out)
    assert df["mode"].tolist() == modes
    singles = {m: lfsim.run(modes_file, {"mode": m}).metrics for m in modes}
    scalar = {m: {k for k, v in r.items() if not isinstance(v, list)} for m, r in singles.items()}
    assert scalar["near"] != scalar["pingpong"]  # otherwise this test shows nothing
    union = set().union(*scalar.values())
    assert set(df.columns) == {"mode", "wall_time_s", "events"} | union
    for _, row in df.iterrows():
        for k in union:
            if k in scalar[row["mode"]]:
                assert row[k] == singles[row["mode"]][k], (row["mode"], k)
            else:
                assert pd.isna(row[k]), (row["mode"], k)
    written = pd.read_parquet(out / "sweep.parquet")
    pd.testing.assert_frame_equal(written, df)


def _builtin_with_modes(name):
    path = scenarios_dir() / f"{name}.yaml"
    if not path.is_file():
        return None
    raw = yaml.safe_load(path.read_text())
    return raw if isinstance(raw, dict) and isinstance(raw.get("modes"), dict) else None


@pytest.mark.skipif(
    _builtin_with_modes("incast") is None, reason="scenarios/incast.yaml with modes not there yet"
)
def test_incast_sweep_over_all_its_modes(cli, tmp_path):
    """The demo's sweep: modes of different fabrics in one table."""
    modes = list(_builtin_with_modes("incast")["modes"])
    p = cli(
        "sweep",
        "incast",
        "--grid",
        "mode=" + ",".join(modes),
        "--set",
        "stop_time=1100us",  # just past the scenario's 1 ms warmup
        "--out",
        "sw",
        "--quiet",
    )
    assert p.returncode == 0, p.stderr
    df = pd.read_parquet(tmp_path / "sw" / "sweep.parquet")
    assert df["mode"].tolist() == modes
    metrics = [c for c in df.columns if c not in ("mode", "wall_time_s", "events")]
    assert metrics
    for _, row in df.iterrows():  # every point reported something
        assert any(not (isinstance(row[k], float) and math.isnan(row[k])) for k in metrics)
