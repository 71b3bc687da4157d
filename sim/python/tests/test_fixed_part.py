"""The scenario's fixed keys were checked by a pydantic model; lfsim.scenario._parse_fixed now
checks them without pydantic (its import and the model's building were a quarter of a short
run's start-up). Against that model, rebuilt here with the same checks: the same values, or
the same first key failing (fields in order, then unknown keys in the scenario's order)."""

import enum
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError, create_model, field_validator

from lfsim import scenario
from lfsim.scenario import _Fixed, _Invalid, _parse_fixed


def _before(name: str, check):
    return field_validator(name, mode="before")(classmethod(lambda cls, v: check(v)))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = ""
    fabric: str
    seed: int = 1
    stop_time: str
    sample_interval: str = "0s"
    record: list[str] = []
    stop_on_deadlock: bool = False
    SchedulerType: str | None = None
    name: str | None = None
    topology: Any = None
    workload: Any = None
    calibrated: dict[str, list[str]] = {}
    faults: list[dict[str, str]] = []
    hpcc_output: dict[str, str] | None = None

    _v1 = _before("description", _Fixed._description)
    _v2 = _before("seed", _Fixed._seed)
    _v3 = _before("stop_time", _Fixed._stop_time)
    _v4 = _before("sample_interval", _Fixed._sample_interval)
    _v5 = _before("record", _Fixed._record)
    _v6 = _before("stop_on_deadlock", _Fixed._stop_on_deadlock)
    _v7 = _before("SchedulerType", _Fixed._scheduler_type)
    _v8 = _before("name", _Fixed._name)
    _v9 = _before("calibrated", _Fixed._calibrated)
    _v10 = _before("faults", _Fixed._faults)
    _v11 = _before("hpcc_output", _Fixed._hpcc_output)


CLASSES = {"FcChannel": "ns3::FcChannel", "FcNetDevice": "ns3::FcNetDevice"}
MODEL = create_model(
    "Scenario_test", __base__=_Model, **{c: (dict[str, Any] | None, None) for c in CLASSES}
)
FIELDS = [k for k, _, _ in scenario._FIELDS]


def _pydantic(raw) -> tuple:
    try:
        m = MODEL.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        kind = {"extra_forbidden": "unknown", "missing": "missing"}.get(err["type"], "invalid")
        return ("error", str(err["loc"][0]), kind)
    return ("ok", {k: getattr(m, k) for k in [*FIELDS, *CLASSES]})


def _ours(raw) -> tuple:
    try:
        parsed = _parse_fixed(raw, CLASSES)
    except _Invalid as exc:
        return ("error", exc.key, exc.kind)
    return ("ok", {k: getattr(parsed, k) for k in [*FIELDS, *CLASSES]})


class Plain(enum.Enum):
    A = "Length"


class Named(enum.StrEnum):
    A = "seed"


class S(str):
    pass


VALUES = {
    "description": ["a run", " padded ", "two\nlines", None, 5, ["x"]],
    "seed": [1, "7", " 8 ", 0, -1, 4294944443, True, 2.0, "x", None, "٣"],
    "stop_time": ["1ms", " 2us ", "0s", "-1ms", 5, None, "1 ms", "1e3ns", "1000d"],
    "sample_interval": ["0s", "1us", "-1us", None, 3],
    "record": ["a,b", ["queue", " pause "], [1], None, "", 7],
    "stop_on_deadlock": [True, "true", " FALSE ", "yes", 1, None],
    "SchedulerType": ["ns3::HeapScheduler", " ns3::MapScheduler ", "ns3::Nope", None, 3],
    "name": ["run-1.a", "bad name", None, 5, ""],
    "topology": [None, {"generator": "Star"}, 5, "x"],
    "workload": [None, {"w": {"pattern": "Flows"}}, []],
    "calibrated": [
        None,
        {"FcChannel.Length": "data.csv:3"},
        {"k": ["a:1", "b:2"]},
        {"k": []},
        {5: "a:1"},
        "x",
        {"k": "nope"},
    ],  # fmt: skip
    "faults": [
        None,
        "[{at: 1ms, what: link_down, where: a-b}]",
        [{"at": "1ms"}],
        [{"bad": 1}],
        "[",
        5,
        [{"at": "-1ms"}],
        [{"at": None}],
    ],  # fmt: skip
    "hpcc_output": [
        True,
        False,
        None,
        "true",
        {"fct": "fct.txt"},
        {"fct": "a.txt", "pfc": "a.txt"},
        {"fct": "../x.txt"},
        {"nope": "x"},
        "{fct: f.txt, pfc: p.txt}",
        3,
        "{",
    ],  # fmt: skip
    "FcChannel": [
        None,
        {},
        {"Length": 5},
        {b"Length": 1},
        {b"\xff": 1},
        {5: 1},
        {True: 1},
        {Plain.A: 1},
        {S("Length"): 2},
        types.MappingProxyType({"Length": 1}),
        [1],
        "x",
        5,
    ],  # fmt: skip
    "FcNetDevice": [None, {"BbCredit": 4}, {1.5: 2}],
}
EXTRA = ["zzz", "mode", 5, b"seed", Named.A, S("nope"), "RoceSwitch"]


@st.composite
def raws(draw):
    keys = draw(st.lists(st.sampled_from([*VALUES, *EXTRA]), unique_by=repr, max_size=8))
    raw = {"fabric": "fc"}
    if draw(st.booleans()):
        raw["stop_time"] = "1ms"
    for key in draw(st.permutations(keys)):
        raw[key] = draw(st.sampled_from(VALUES[key])) if key in VALUES else 1
    return raw


@settings(max_examples=600, deadline=None)
@given(raws())
def test_the_checks_give_what_the_pydantic_model_gave(raw):
    assert _ours(raw) == _pydantic(raw)


@pytest.mark.parametrize(
    "key,value", [(k, v) for k, values in VALUES.items() for v in values], ids=repr
)
def test_each_value_of_each_key(key, value):
    raw = {"fabric": "fc", "stop_time": "1ms", key: value}
    assert _ours(raw) == _pydantic(raw)


def test_the_loader_does_not_import_pydantic():
    import subprocess
    import sys

    code = (
        "import sys; from lfsim.scenario import load_scenario; "
        "load_scenario('fc_pingpong', {'stop_time': '1us'}); print('pydantic' in sys.modules)"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"
