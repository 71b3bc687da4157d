"""Property-based tests (hypothesis): whatever a user types, lfsim answers with a run (exit 0)
or one line naming the key and the accepted form (exit 2) — never a traceback, an abort or a
signal (issue 19). Keys and values are drawn from the real schema: the fabric's classes and
their attributes as `_core` reports them, the top-level keys, and values that are near misses
of the accepted forms (a unit missing or with a space, out of range, wrong type, unicode)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lfsim
from lfsim import core
from lfsim.errors import ScenarioError
from lfsim.paths import scenarios_dir
from lfsim.scenario import OVERRIDABLE

# Small built-in scenarios of each fabric and stack; runs are cut to a few hundred µs.
SCENARIOS = ["fc_distance", "incast", "storage_qd1", "pfc_deadlock", "fc_pingpong"]
SHORT = {"stop_time": "300us"}
# make test runs a sample; LFSIM_FUZZ_EXAMPLES=1000 explores further (each run is a process).
RUNS = int(os.environ.get("LFSIM_FUZZ_EXAMPLES", "40"))


def _attributes(name: str) -> list[tuple[str, dict]]:
    sc = lfsim.load_scenario(name)
    classes = core.fabric_classes(sc.fabric, sc.config.get("workload"))
    return [(cls, a) for cls, tid in classes.items() for a in core.attributes(tid)]


ATTRS = {name: _attributes(name) for name in SCENARIOS}

NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 65535, 65536, 2**32, 2**63, 4294944443]),
)
UNITS = st.sampled_from(
    ["", " ", "s", "ms", "us", "ns", "ps", "d", "bps", "Gbps", " Gbps", "GBps", "MiB/s", "GbE",
     "GFC", "%", "KiB", "x"]
)  # fmt: skip
NEAR_MISSES = st.builds(lambda n, u: f"{n}{u}", NUMBERS, UNITS)
TEXT = st.text(max_size=12)
SCALARS = st.one_of(NEAR_MISSES, TEXT, NUMBERS, st.booleans(), st.none())
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def plausible(attr: dict):
    """Values of the attribute's own kind, mostly in range: they pass validation and run, so
    the fuzzing reaches the models (where ns-3 would abort), not only the checks."""
    kind, info = attr["value_type"].removeprefix("ns3::"), attr["info"]
    if kind == "EnumValue":
        return st.sampled_from(info.split("|"))
    if kind in ("UintegerValue", "IntegerValue"):
        lo, _, hi = info.split(" ")[-1].partition(":")
        lo, hi = int(float(lo)), int(float(hi))
        return st.integers(max(lo, -(10**6)), min(hi, 10**6))
    if kind == "DoubleValue":
        lo, _, hi = info.split(" ")[-1].partition(":")
        return st.floats(max(float(lo), -1e6), min(float(hi), 1e6), allow_nan=False)
    if kind == "TimeValue":
        return st.builds(lambda n, u: f"{n}{u}", st.integers(0, 2000), st.sampled_from(TIME_UNITS))
    if kind == "DataRateValue":
        return st.builds(lambda n, u: f"{n}{u}", st.integers(0, 400), st.sampled_from(RATE_UNITS))
    if kind == "BooleanValue":
        return st.booleans()
    return st.just(str(attr["default"]))


TIME_UNITS = ["ns", "us", "ms"]
RATE_UNITS = ["Mbps", "Gbps", "GBps"]


@st.composite
def overrides(draw) -> tuple[str, dict]:
    name = draw(st.sampled_from(SCENARIOS))
    out = {}
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            cls, attr = draw(st.sampled_from(ATTRS[name]))
            key = f"{cls}.{attr['name']}"
            value = draw(st.one_of(SCALARS, plausible(attr), plausible(attr)))
        else:
            key = draw(st.sampled_from([*OVERRIDABLE, "topology.Hosts", "workload.x.Load"]))
            value = draw(SCALARS)
        out[key] = value
    return name, out


def _cli(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lfsim.cli", *args], cwd=tmp_path, env=dict(os.environ),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _assert_clean(p: subprocess.CompletedProcess, what: str) -> None:
    assert p.returncode in (0, 2), f"{what}: exit {p.returncode}\n{p.stderr[-2000:]}"
    assert "Traceback" not in p.stderr, f"{what}:\n{p.stderr[-2000:]}"
    if p.returncode == 2:
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("lfsim: error: "), f"{what}: {lines}"


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(overrides())
def test_loading_never_raises_anything_but_a_scenario_error(case):
    name, given_overrides = case
    try:
        lfsim.load_scenario(name, given_overrides)
    except ScenarioError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=RUNS, deadline=None, suppress_health_check=list(HealthCheck))
@given(overrides())
def test_a_run_exits_0_or_2_with_one_line(tmp_path_factory, case):
    name, given_overrides = case
    try:  # what loads is run, cut short; what does not is the case above
        lfsim.load_scenario(name, given_overrides)
    except ScenarioError:
        return
    tmp = tmp_path_factory.mktemp("run")
    sets = [f"{k}={v}" for k, v in {**given_overrides, **SHORT}.items()]
    args = ["run", name, "--out", "o", "--quiet"] + [x for s in sets for x in ("--set", s)]
    _assert_clean(_cli(tmp, *args), f"lfsim {' '.join(args)}")


@st.composite
def scenario_files(draw) -> dict:
    base = lfsim.load_scenario(draw(st.sampled_from(SCENARIOS))).source.raw
    doc = {k: v for k, v in base.items() if draw(st.integers(0, 4))}  # drop some keys
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from([*doc, "topology", "workload", "modes", "Nope"]))
        doc[key] = draw(VALUES)
    return doc


@settings(max_examples=RUNS // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario_files())
def test_a_scenario_file_exits_0_or_2_with_one_line(tmp_path_factory, doc):
    tmp = tmp_path_factory.mktemp("file")
    (tmp / "s.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    p = _cli(tmp, "run", "s.yaml", "--out", "o", "--quiet", "--set", "stop_time=300us")
    _assert_clean(p, yaml.safe_dump(doc, allow_unicode=True)[:2000])


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_fuzzed_scenarios_run_as_given(tmp_path, name):
    # The baseline the fuzzing departs from: each scenario runs, cut short.
    p = _cli(tmp_path, "run", name, "--out", "o", "--quiet", "--set", "stop_time=300us",
             "--set", "Report.Warmup=0s")  # fmt: skip
    assert p.returncode == 0, p.stderr


# Issue 40: the bytes of a scenario file mutated (a NUL or a control byte, invalid UTF-8, a tab in
# the indentation, a line doubled or cut, deep nesting, the file truncated), and a long flow
# list in one-line rows (read by the loader's fast path) among the files mutated.
FLOW_ROWS = (
    "fabric: roce\nstop_time: 300us\ntopology: {generator: Star, Hosts: 4}\nReport: {Warmup: 0s}\n"
    "workload:\n  w:\n    pattern: Flows\n    flows:\n"
    + "".join(
        f"      - {{src: h{1 + i % 3}, dst: h0, size: {1000 + i}, start: {i}us}}\n"
        for i in range(40)
    )
)
BASE_FILES = [scenarios_dir() / f"{n}.yaml" for n in SCENARIOS]
JUNK = [b"\x00", b"\x07", b"\xff", b"\xc3", b"\t", b"\r", b"\xef\xbb\xbf", b"{", b"[" * 60,
        b"&a [*a]", b": ", b"- ", b"\\", b"'", b'"', b"!!python/object:os.system", b"1e999",
        b"us", b"km", b"GbE", "µs".encode(), b"\n  ", b"#"]  # fmt: skip


@st.composite
def mutated_files(draw) -> bytes:
    data = bytearray(
        draw(st.sampled_from([FLOW_ROWS.encode(), *(p.read_bytes() for p in BASE_FILES)]))
    )
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert", "replace", "delete", "line", "cut", "indent"]))
        at = draw(st.integers(0, len(data)))
        if op == "insert":
            data[at:at] = draw(st.sampled_from(JUNK))
        elif op == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        elif op == "line":  # a line doubled, or moved to the end
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            line = data[start : (end if end >= 0 else len(data))] + b"\n"
            data[start:start] = line
        elif op == "cut":
            del data[at:]
        else:  # an indentation changed
            start = data.rfind(b"\n", 0, at) + 1
            data[start:start] = draw(st.sampled_from([b" ", b"  ", b"\t", b"    "]))
    return bytes(data)


@settings(max_examples=max(300, RUNS * 5), deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_files())
def test_mutated_bytes_load_or_are_one_scenario_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("bytes") / "s.yaml"
    path.write_bytes(data)
    try:
        lfsim.load_scenario(path)
    except ScenarioError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=RUNS // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_files())
def test_mutated_bytes_run_exit_0_or_2_with_one_line(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("bytes-run")
    (tmp / "s.yaml").write_bytes(data)
    p = _cli(tmp, "run", "s.yaml", "--out", "o", "--quiet", "--set", "stop_time=300us")
    _assert_clean(p, repr(data[:300]))
