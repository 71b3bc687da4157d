"""Scenario loading and resolution against the real attribute tables of ``_core``."""

import lfsim._core as core
import pytest

import lfsim
from lfsim.scenario import (
    parse_assignment,
    parse_grid,
    split_time,
    time_seconds,
    to_core_string,
)


def test_time_strings_need_a_unit():
    assert split_time("2ms") == (2.0, "ms")
    assert time_seconds("1.5us") == pytest.approx(1.5e-6)
    assert time_seconds("1e-3s") == pytest.approx(1e-3)
    for bad in ("2", "2 ms", "5 parsecs", "ms", "", None, 2.0):
        assert split_time(bad) is None


def test_yaml_values_become_core_strings():
    assert to_core_string(True) == "true"
    assert to_core_string(False) == "false"
    assert to_core_string(8) == "8"
    assert to_core_string(0.1) == "0.1"
    assert float(to_core_string(1 / 3)) == 1 / 3  # round-trips exactly
    assert to_core_string("2GFC") == "2GFC"
    assert to_core_string([1]) is None


def test_assignment_and_grid_syntax():
    assert parse_assignment("FcNetDevice.BbCredit=16") == ("FcNetDevice.BbCredit", "16")
    assert parse_assignment("record=a,b") == ("record", "a,b")
    assert parse_grid(["FcChannel.Length=10, 20"]) == {"FcChannel.Length": ["10", "20"]}
    for bad in ("nokey", "=5", "a b=1"):
        with pytest.raises(lfsim.ScenarioError):
            parse_assignment(bad)
    for bad in (["x=1,,2"], ["x="], ["x=1", "x=2"]):
        with pytest.raises(lfsim.ScenarioError):
            parse_grid(bad)


def test_resolved_config_has_every_class_and_attribute():
    sc = lfsim.load_scenario("fc_distance")
    fabric = {f["name"]: f for f in core.fabrics()}["fc"]
    cfg = sc.core_config()
    # The fabric's classes and the report, which every open fabric shares.
    classes = [*fabric["type_ids"], "ns3::Report"]
    assert sorted(cfg["attributes"]) == sorted(classes)
    for tid in classes:
        names = [a["name"] for a in core.attributes(tid)]
        assert list(cfg["attributes"][tid]) == names
        assert all(isinstance(v, str) for v in cfg["attributes"][tid].values())
    # The scenario's own values win over the defaults; untouched ones keep the default.
    assert cfg["attributes"]["ns3::FcNetDevice"]["Speed"] == "2GFC"
    assert cfg["attributes"]["ns3::FcChannel"]["Length"] == "10000"
    defaults = {a["name"]: a["default"] for a in core.attributes("ns3::FcSwitch")}
    assert cfg["attributes"]["ns3::FcSwitch"] == defaults
    assert sc.config["sample_interval"] == "0s"  # filled default
    assert cfg["attributes"]["ns3::Report"]["Warmup"] == "2ms"


def _instance_attributes(type_id):
    """Names of the attributes an instance takes: its ancestors' first, then its own."""
    return [a["name"] for t in [*core.parents(type_id), type_id] for a in core.attributes(t)]


def test_topology_and_workload_are_resolved_with_inherited_attributes():
    sc = lfsim.load_scenario("fc_incast")
    cfg = sc.core_config()
    topo = cfg["topology"]
    assert topo["type_id"] == "ns3::StarTopology"
    # ns3::Topology's attributes (Routing, HostSpeed, ...) and Star's own (Hosts).
    assert list(topo["attributes"]) == _instance_attributes("ns3::StarTopology")
    assert {"Routing", "HostSpeed", "Hosts"} <= set(topo["attributes"])
    assert topo["attributes"]["Hosts"] == "9"
    assert topo["attributes"]["Routing"] == "ShortestPath"  # a default of the parent
    [fcp] = cfg["workloads"]
    assert fcp["name"] == "fcp" and fcp["type_id"] == "ns3::FcpWorkload"
    assert list(fcp["attributes"]) == _instance_attributes("ns3::FcpWorkload")
    assert fcp["attributes"]["Hosts"] == "h1-h8" and fcp["attributes"]["StartSpread"] == "10us"
    # The resolved form (config.yaml) keeps the generator and the pattern by name.
    assert sc.config["topology"]["generator"] == "Star"
    assert sc.config["workload"]["fcp"]["pattern"] == "Fcp"


def test_precedence_scenario_then_overrides_then_seed():
    sc = lfsim.load_scenario(
        "fc_distance", {"FcNetDevice.BbCredit": 16, "seed": 7, "record": "credits,rx_buffers"}
    )
    assert sc.config["FcNetDevice"]["BbCredit"] == "16"
    assert sc.seed == 7
    assert sc.config["record"] == ["credits", "rx_buffers"]
    assert lfsim.load_scenario("fc_distance", {"seed": 7}, seed=3).seed == 3


def test_inline_mapping_and_errors_are_one_line():
    sc = lfsim.load_scenario(
        {
            "fabric": "fc",
            "stop_time": "1ms",
            "topology": {"generator": "PointToPoint"},
            "FcChannel": {"Length": 5},
        }
    )
    assert sc.name == "scenario" and sc.config["FcChannel"]["Length"] == "5"
    with pytest.raises(lfsim.ScenarioError) as err:
        lfsim.load_scenario("fc_distance", {"FcNetDevice.BbCredit": -3})
    assert str(err.value) == "FcNetDevice.BbCredit: got '-3'; accepted: an integer in 1..32767"
    assert isinstance(err.value, ValueError)


def test_list_scenarios_has_descriptions():
    listed = lfsim.list_scenarios()
    assert "fc_distance" in listed
    assert listed["fc_distance"] and "\n" not in listed["fc_distance"]


def test_every_calibrated_parameter_names_its_measured_point():
    """Issue 18: a scenario that says it was calibrated declares each calibrated parameter
    under ``calibrated:`` with the measured point ('<validation/data file>:<row>') it was solved
    on, in every mode, and each point names a data file the project carries (the validation
    harness then refuses a prediction on it)."""
    import re

    from lfsim.paths import scenarios_dir, validation_dir
    from lfsim.scenario import find_scenario, read_yaml

    data = validation_dir() / "data"
    declared = 0
    for path in sorted(scenarios_dir().glob("*.yaml")):
        says = re.search(r"calibrated on|fitted to", path.read_text(), re.IGNORECASE)
        raw = read_yaml(find_scenario(path.stem))
        for mode in list(raw.get("modes") or {}) or [None]:
            sc = lfsim.load_scenario(path.stem, {"mode": mode} if mode else None)
            cal = sc.config.get("calibrated", {})
            if says:
                assert cal, f"{path.name} ({mode}): says it was calibrated but has no calibrated:"
            for points in cal.values():
                for point in points:
                    assert (data / f"{point.split(':', 1)[0]}.csv").is_file(), (path.name, point)
                    declared += 1
    assert declared > 0


# Issue 40, item 17: the real bound of a time; lengths with units.

STAR = "fabric: roce\nstop_time: 1ms\ntopology: {generator: Star, Hosts: 3}\n"
TIME_BOUND = "at most 9.2e6 s (ns-3's Time: a 64-bit count of picoseconds, at most 9,223,372 s)"


HEAD = "fabric: roce\nstop_time: 1ms\n"
FLOWS = "workload:\n  w: {pattern: Flows, flows: [{src: h1, dst: h0, start: 1e308s}]}\n"
DELAY = (
    "topology: {nodes: [{name: h0, kind: host}, {name: h1, kind: host}], links: [{a: h0, b: h1, "
    "delay: 1e308s}]}\n"
)


@pytest.mark.parametrize(
    ("files", "scenario", "key"),
    [
        ({}, STAR + FLOWS, "s.yaml line 5, workload.w.flows[0].start: got '1e308s'; accepted: a "
         "time >= 0"),
        ({"flow.txt": "1\n1 0 3 100 1000 1e308\n"},
         STAR + "workload:\n  w: {pattern: Flows, file: flow.txt}\n",
         "flow.txt line 2, field start_time: got '1e308'; accepted: seconds >= 0, "),
        ({"f.csv": "src,dst,start\nh1,h0,1e308s\n"},
         STAR + "workload:\n  w: {pattern: Flows, file: f.csv}\n",
         "f.csv line 2, column start: got '1e308s'; accepted: a time >= 0"),
        ({}, STAR.replace("1ms", "1e308s"), "stop_time: got '1e308s'; accepted: a time > 0"),
        ({}, HEAD + DELAY, "links[0].delay: got '1e308s'; accepted: a time >= 0"),
    ],
)  # fmt: skip
def test_a_time_beyond_ns3_says_the_real_bound(tmp_path, files, scenario, key):
    # 1e308 s used to be refused with "accepted: seconds >= 0" (or "a time >= 0"): it is >= 0.
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "s.yaml").write_text(scenario)
    with pytest.raises(lfsim.ScenarioError) as err:
        lfsim.load_scenario(tmp_path / "s.yaml")
    assert key in str(err.value) and str(err.value).endswith(TIME_BOUND), str(err.value)


@pytest.mark.parametrize(
    ("given", "metres"),
    [("50km", "50000"), ("2.5km", "2500"), ("300m", "300"), ("75cm", "0.75"), (120, "120"),
     ("1e3m", "1000")],
)  # fmt: skip
def test_a_channel_length_takes_units_and_stays_metres_for_cpp(given, metres):
    sc = lfsim.load_scenario("fc_distance", {"FcChannel.Length": given})
    assert sc.config["FcChannel"]["Length"] == metres
    assert sc.core_config()["attributes"]["ns3::FcChannel"]["Length"] == metres


@pytest.mark.parametrize("given", ["50 km", "50 KM", "-5km", "50 miles", "2e4km"])
def test_a_length_in_no_unit_it_takes_is_refused_by_name(given):
    with pytest.raises(lfsim.ScenarioError) as err:
        lfsim.load_scenario("fc_distance", {"FcChannel.Length": given})
    assert str(err.value).startswith(f"FcChannel.Length: got '{given}'; accepted: a number in 0")
    assert "metres, or a number with a unit km, m, cm or mm (no space), e.g. 50km" in str(err.value)


def test_a_link_length_takes_units_too(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "fabric: roce\nstop_time: 1ms\ntopology:\n  nodes: [{name: h0, kind: host}, "
        "{name: h1, kind: host}, {name: sw0, kind: switch}]\n  links: [{a: h0, b: sw0, length: "
        "1.5km}, {a: h1, b: sw0, length: 20}]\n"
    )
    links = lfsim.load_scenario(tmp_path / "s.yaml").core_config()["topology"]["tables"]["links"]
    assert [link["length"] for link in links] == ["1500", "20"]
