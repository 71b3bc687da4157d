"""Issue 40, items 5-7: every metric's name says its unit (one unit per quantity), every metric
comes out as what it is (a count an int, a flag a bool) in Python, summary.json, Parquet, CSV
and sweeps, and the printed summary groups the metrics so that look-alike pairs (the bottleneck
port's queue and the switches' largest, whole flows and messages) are not read as one thing."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest

import lfsim
from lfsim.display import format_summary
from lfsim.metrics import (
    AMBIGUOUS_SUFFIXES,
    BY_FABRIC,
    GROUPS,
    METRICS,
    UNITLESS,
    describe,
    unit_of_name,
    workload_names,
)
from lfsim.paths import REPO_ROOT
from lfsim.scenario import find_scenario, read_yaml

# The heaviest cases (5-25 s each) run the fabrics and workload patterns of lighter ones:
# clos_1024 is fat_tree_websearch's open loop on a larger Clos, bench_dcqcn_incast8 dcqcn's
# incast longer, san_seed000's nvmeof_tcp the Fio workload of latency_vs_depth@nvmeof_tcp.
HEAVY = {"clos_1024@pfc", "clos_1024@pfc_dcqcn", "bench_dcqcn_incast8", "san_seed000@nvmeof_tcp"}


def _cases() -> list[tuple[str, str | None]]:
    out = []
    for name in lfsim.list_scenarios():
        modes = list((read_yaml(find_scenario(name)).get("modes") or {}).keys()) or [None]
        out += [(name, m) for m in modes if (f"{name}@{m}" if m else name) not in HEAVY]
    return out


CASES = _cases()


def test_every_name_says_its_unit():
    described = [*METRICS.items(), *(i for m in BY_FABRIC.values() for i in m.items())]
    for name, m in described:
        said = unit_of_name(name)
        if m.unit in UNITLESS:
            assert said is None, f"{name}: a {m.unit} whose name ends with a unit ({said})"
        else:
            assert said == m.unit, f"{name}: the name says {said}, the metric holds {m.unit}"
        assert not name.endswith(AMBIGUOUS_SUFFIXES), name
        assert m.group in GROUPS and m.meaning, name
        assert m.kind in (int, float, bool, str), name
        # A count is an integer; a quantity with a unit other than bytes a float.
        if m.unit == "count":
            assert m.kind is int, name
        if m.unit not in (*UNITLESS, "bytes"):
            assert m.kind is float, name


def _check_value(name: str, value, kind: type, vector: bool) -> None:
    values = value if vector else [value]
    assert isinstance(value, list) == vector, f"{name}: {value!r}"
    for v in values:
        if kind is float:  # a measurement (a count would be an int)
            assert type(v) is float, f"{name}: {v!r} is not a float"
        else:
            assert type(v) is kind, f"{name}: {v!r} is not {kind.__name__}"


@pytest.mark.parametrize(("name", "mode"), CASES, ids=[f"{n}@{m}" if m else n for n, m in CASES])
def test_builtin_metrics_are_described_and_typed(name, mode):
    r = lfsim.run(name, {"mode": mode} if mode else {})
    workloads = workload_names(r.config)
    for metric, value in r.metrics.items():
        what, _ = describe(metric, workloads, r.summary["fabric"])
        assert what is not None, f"{metric} is not in lfsim.metrics"
        _check_value(metric, value, what.kind, what.vector)
    for kind, names in (("table", r.table_names), ("series", r.series_names)):
        for t in names:
            df = r.table(t) if kind == "table" else r.timeseries(t)
            for column in df.columns:
                assert not column.endswith(AMBIGUOUS_SUFFIXES), f"{kind} {t}: {column}"
                if column == "id" or column.endswith("_ns") and df[column].notna().all():
                    assert df[column].dtype == "int64" or t == "perftest", f"{t}.{column}"


def test_files_keep_the_kinds(tmp_path):
    out = tmp_path / "o"
    r = lfsim.run("incast", {"stop_time": "2ms", "Report.Warmup": "200us"}, out=out)
    assert type(r.metrics["messages_completed"]) is int and type(r.metrics["deadlock"]) is bool
    summary = json.loads((out / "summary.json").read_text())["metrics"]
    assert re.search(r'"packet_hops": \d+,', (out / "summary.json").read_text())
    assert summary["deadlock"] is False and summary["flows"] == 17

    flows = pd.read_parquet(out / "flows.parquet")
    for column in ("id", "workload", "src", "dst", "size_bytes", "messages", "retransmitted"):
        assert flows[column].dtype == "int64", column
    # Names beside the ids: the hosts and workloads the ids index.
    assert list(flows.loc[flows["src"] == 1, "src_label"].astype(str).unique()) == ["h1"]
    assert set(flows["dst_label"].astype(str)) == {"h0", "h18"}  # incast.yaml: into h0; h17>h18
    assert set(flows["workload_label"].astype(str)) == {"incast", "victim"}
    links = pd.read_parquet(out / "links.parquet")
    assert links["a"].dtype == "int64" and links["a_label"].astype(str).iloc[0] == "h0"
    ports = pd.read_parquet(out / "ports.parquet")
    assert ports["frames_tx"].dtype == "int64" and ports["paused_time_us"].dtype == "float64"

    # CSV: integers without a fraction.
    first = (out / "links.csv").read_text().splitlines()[1].split(",")
    assert re.fullmatch(r"\d+", first[0]) and re.fullmatch(r"\d+", first[2]), first
    text = (out / "flows.csv").read_text()
    row = dict(zip(text.splitlines()[0].split(","), text.splitlines()[1].split(","), strict=True))
    assert row["src"] == "1" and row["src_label"] == "h1" and row["size_bytes"].isdigit()

    storage = lfsim.run("storage_qd1", {"mode": "fcp"}, out=tmp_path / "s")
    ios = pd.read_parquet(tmp_path / "s" / "ios.parquet")
    assert ios["read"].dtype == "bool" and ios["submit_ns"].dtype == "int64"
    assert type(storage.metrics["read_ios"]) is int


def test_sweep_keeps_the_kinds(tmp_path):
    # FC has no CNPs: the count is missing from one point, a nullable integer, not 0.0/NaN.
    df = lfsim.sweep(
        "incast",
        {"mode": ["pfc", "fc"]},
        overrides={"stop_time": "1ms", "Report.Warmup": "100us"},
        jobs=2,
        out=tmp_path / "sw",
    )
    assert df["packet_hops"].dtype == "int64" and df["deadlock"].dtype == "bool"
    assert str(df["cnps_sent"].dtype) == "Int64" and df["cnps_sent"].isna().tolist() == [
        False,
        True,
    ]
    disk = pd.read_parquet(tmp_path / "sw" / "sweep.parquet")
    assert disk["packet_hops"].dtype == "int64" and disk["deadlock"].dtype == "bool"
    csv = pd.read_csv(tmp_path / "sw" / "sweep.csv", dtype=str)
    assert csv["packet_hops"].str.fullmatch(r"\d+").all()
    assert csv["deadlock"].tolist() == ["False", "False"]
    assert csv["cnps_sent"].iloc[0].isdigit() and pd.isna(csv["cnps_sent"].iloc[1])


def _groups(text: str) -> dict[str, list[str]]:
    """Group header -> the metric names printed under it."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines()[1:]:
        if re.match(r"  \S", line):
            current = line.strip().split(":")[0]
            out[current] = []
        elif current is not None:
            out[current].append(re.split(r"[\s:(]", line.strip())[0])
    return out


def test_summary_groups_the_look_alike_pairs():
    # pfc_deadlock: the bottleneck port holds 4 KiB while a switch port in the cycle holds
    # 2448 KiB; no flow completes while messages do (the two confusing pairs).
    r = lfsim.run("pfc_deadlock", {"mode": "deadlock"})
    m = r.metrics
    assert m["peak_queue_KiB"] < 5 < 2000 < m["peak_switch_queue_KiB"]
    assert m["flows_completed"] == 0 < m["messages_completed"]
    text = format_summary(r.summary)
    groups = _groups(text)
    assert groups["Bottleneck port"][:3] == ["bottleneck_port", "peak_queue_KiB", "mean_queue_KiB"]
    assert "peak_switch_queue_KiB" in groups["Switches"]
    assert "flows_completed" in groups["Flows"] and "fct_mean_us" in groups["Messages"]
    assert "messages_completed" in groups["Messages"]
    # Each header says what sets its group apart.
    for g in ("Bottleneck port", "Switches", "Flows", "Messages"):
        assert f"  {g}: {GROUPS[g]}" in text.splitlines()
    # Every printed metric is described (the docs' table comes from the same list).
    printed = [n for names in groups.values() for n in names]
    assert printed and all(describe(n)[0] is not None for n in printed)


def test_a_further_workload_prints_as_its_own_group():
    r = lfsim.run("incast", {"stop_time": "2ms", "Report.Warmup": "200us"})
    groups = _groups(format_summary(r.summary))
    assert groups["Workload victim"] == [
        "victim_goodput_Gbps",
        "victim_messages_completed",
        "victim_fct_p50_us",
        "victim_fct_p99_us",
    ]


def test_the_docs_table_is_the_list():
    p = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "metric_table.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    doc = (REPO_ROOT / "docs" / "usage.md").read_text()
    for name in METRICS:
        assert f"| `{name}` |" in doc, name
