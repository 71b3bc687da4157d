"""Long flow lists (issue 40, item 15): a scenario of 100,000 flows loads in full and exactly as
written, and the quick reading of one-line rows gives what PyYAML itself gives.

Timings are not asserted here (bench/loader.py measures them)."""

import random
import re

import pytest
import yaml

import lfsim
from lfsim import yamlio
from lfsim.errors import ScenarioError

HEAD = "fabric: roce\nstop_time: 10ms\ntopology: {generator: Star, Hosts: 64}\n"


def _flows(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a = rng.randrange(64)
        b = (a + 1 + rng.randrange(63)) % 64
        flow = {"src": f"h{a}", "dst": f"h{b}", "size": rng.randrange(1, 2**31)}
        if rng.random() < 0.9:
            flow["start"] = f"{rng.randrange(10**7)}ns"
        if rng.random() < 0.3:
            flow["priority"] = rng.randrange(8)
        out.append(flow)
    return out


def test_a_scenario_of_100000_flows_loads_complete_and_exact(tmp_path):
    flows = _flows(100_000)
    rows = "".join(
        "      - {" + ", ".join(f"{k}: {v}" for k, v in f.items()) + "}\n" for f in flows
    )
    f = tmp_path / "s.yaml"
    f.write_text(HEAD + "workload:\n  w:\n    pattern: Flows\n    flows:\n" + rows)
    sc = lfsim.load_scenario(f)
    got = sc.config["workload"]["w"]["flows"]
    assert len(got) == len(flows)
    for i, (g, want) in enumerate(zip(got, flows, strict=True)):
        assert g["where"] == f"{f} line {i + 8}, workload.w.flows[{i}]"
        assert {k: v for k, v in g.items() if k != "where"} == want
    (core,) = sc.core_config()["workloads"]
    table = core["tables"]["flows"]
    assert len(table) == len(flows)
    assert table[-1] == {
        **{k: str(v) for k, v in flows[-1].items()},
        "where": f"{f} line {len(flows) + 7}, workload.w.flows[{len(flows) - 1}]",
    }


# Scalars whose meaning YAML 1.1 decides by their text (PyYAML's implicit resolvers).
TRICKY = [
    "h1", "on", "Off", "yes", "NO", "true", "null", "Null", "0", "7", "017", "0x1F", "0b101",
    "1_000", "1:20", "1.5", "1.", "1e3", "1.5e+3", "+12", "-3", ".inf", "-.inf", ".nan",
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "1ms", "0.5us", "0s", "12min", "3d", "x.y",
    "a-b", "_z", "8GFC", "y", "n",
]  # fmt: skip


def _rows(values: list[str], indent: str = "  ") -> str:
    return "".join(
        f"{indent}- {{k: {v}, {v if v.isidentifier() and v not in 'kjn' else 'j'}: {v}, n: {i}}}\n"
        for i, v in enumerate(values)
    )


def _same(a, b) -> None:
    assert type(a) is type(b) or (isinstance(a, dict) and isinstance(b, dict)), (a, b)
    assert a == b or (a != a and b != b)  # .nan


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_one_line_rows_read_as_pyyaml_reads_them(line_end):
    quick = [v for v in TRICKY if re.fullmatch(yamlio._SCALAR, v)]
    values = quick * 4 + TRICKY  # a run of rows read quickly, then rows it leaves to YAML
    text = ("x: 1\nrows:\n" + _rows(values) + "after: {z: 1}\n").replace("\n", line_end)
    taken = yamlio._rows_out(text, yamlio._LOADERS[-1](""), "s.yaml")
    assert taken is not None and len(taken[1][0]) >= len(quick) * 4  # the quick reading ran
    want = yaml.safe_load(text)  # PyYAML's own Python loader: the reference
    got = yamlio.parse_yaml(text, "s.yaml")
    assert list(got) == list(want) and got["after"] == want["after"]
    assert got["after"].line == len(values) + 3  # the lines after the rows keep their numbers
    assert len(got["rows"]) == len(want["rows"]) == len(values)
    for i, (g, w) in enumerate(zip(got["rows"], want["rows"], strict=True)):
        assert list(g) == list(w)
        for k in w:
            _same(g[k], w[k])
        assert (g.source, g.line) == ("s.yaml", i + 3)


def test_rows_inside_a_block_scalar_stay_text():
    text = "description: |\n" + _rows(["a"] * 70) + "n: 1\n"
    assert yamlio.parse_yaml(text, "s.yaml") == yaml.safe_load(text)


def test_an_error_after_rows_names_its_own_line():
    text = "rows:\n" + _rows(["a"] * 100) + "bad: [\n"
    with pytest.raises(ScenarioError, match=r"s.yaml: bad YAML at line 103, column 1"):
        yamlio.parse_yaml(text, "s.yaml")


def test_a_row_with_a_key_twice_is_named_by_its_line():
    values = ["a"] * 200
    text = "rows:\n" + _rows(values[:100]) + "  - {k: 1, k: 2}\n" + _rows(values[100:])
    with pytest.raises(ScenarioError, match=r"line 102, column 12: key 'k' appears twice"):
        yamlio.parse_yaml(text, "s.yaml")


def test_rows_aliased_elsewhere_are_the_same_rows():
    text = "a: &rows\n" + _rows(["h1"] * 70) + "b: *rows\n"
    got = yamlio.parse_yaml(text, "s.yaml")
    assert got["b"] is got["a"] and got == yaml.safe_load(text)


def _table_files(tmp_path, flows: list[dict]) -> dict[str, str]:
    """The flows as a CSV, a Parquet file and an HPCC flow.txt; the scenario for each."""
    import pandas as pd

    df = pd.DataFrame(flows)
    df["size"] = df["size"].astype("Int64")
    df["priority"] = df["priority"].astype("Int64")
    df.to_csv(tmp_path / "f.csv", index=False)
    df.to_parquet(tmp_path / "f.parquet")
    lines = [
        f"{f['src'][1:]} {f['dst'][1:]} {f.get('priority', 0)} 100 {f['size']} "
        f"{int(f.get('start', '0ns')[:-2]) / 1e9:.9f}\n"
        for f in flows
    ]
    (tmp_path / "f.txt").write_text(f"{len(flows)}\n" + "".join(lines))
    out = {}
    for ext in ("csv", "parquet", "txt"):
        out[ext] = HEAD + f"workload:\n  w: {{pattern: Flows, file: f.{ext}}}\n"
    return out


@pytest.mark.parametrize("ext", ["csv", "parquet", "txt"])
def test_100000_flows_from_a_table_file_arrive_complete_and_exact(tmp_path, ext):
    flows = _flows(100_000)
    text = _table_files(tmp_path, flows)[ext]
    (tmp_path / "s.yaml").write_text(text)
    sc = lfsim.load_scenario(tmp_path / "s.yaml")
    ref = sc.config["workload"]["w"]["flows"]  # referred to, not embedded
    assert ref["file"] == str(tmp_path / f"f.{ext}") and ref["count"] == len(flows)
    (core,) = sc.core_config()["workloads"]
    rows = core["tables"]["flows"]
    assert len(rows) == len(flows)
    at = "row" if ext == "parquet" else "line"
    for i, (row, f) in enumerate(zip(rows, flows, strict=True)):
        given = {k: v for k, v in row.items() if v != "" and k not in ("where", "messages")}
        want = {k: str(v) for k, v in f.items()}
        if ext == "txt":  # HPCC: start in picoseconds, priority always given, one message
            want["start"] = f"{int(f.get('start', '0ns')[:-2]) * 1000}ps"
            want["priority"] = str(f.get("priority", 0))
            assert row["messages"] == "1"
        assert given == want, i
        assert row["where"] == f"{tmp_path / f'f.{ext}'} {at} {i + 2 - (ext == 'parquet')}, " + (
            f"workload.w.flows[{i}]"
        )


def test_a_table_file_that_changed_since_it_was_resolved_is_refused(tmp_path):
    flows = _flows(100)
    (tmp_path / "s.yaml").write_text(_table_files(tmp_path, flows)["csv"])
    config = lfsim.load_scenario(tmp_path / "s.yaml").config
    assert lfsim.load_scenario(config).config["workload"] == config["workload"]  # a rerun
    with open(tmp_path / "f.csv", "a") as f:
        f.write("h1,h2,100,,\n")
    with pytest.raises(ScenarioError, match=r"workload.w.flows.file: '.*f.csv' has changed"):
        lfsim.load_scenario(config)
    del config["workload"]["w"]["flows"]["sha256"]  # taken as it is now
    assert lfsim.load_scenario(config).config["workload"]["w"]["flows"]["count"] == 101


@pytest.mark.parametrize(
    ("ext", "cell", "expect"),
    [
        ("csv", ("size", "0"), "f.csv line 52, column size: got '0'; accepted: an integer in 1.."),
        ("csv", ("start", "5"), "f.csv line 52, column start: got '5'; accepted: a time >= 0"),
        ("csv", ("start", "1e308s"), "column start: got '1e308s'; accepted: a time >= 0 with a"),
        ("csv", ("src", ""), "f.csv line 52, column src: got ''; accepted: a host name"),
        ("parquet", ("size", -4), "f.parquet row 51, column size: got '-4'; accepted: an integer"),
        ("parquet", ("priority", 9), "f.parquet row 51, column priority: got '9'"),
    ],
)
def test_a_bad_cell_of_a_table_is_named_by_line_or_row_and_column(tmp_path, ext, cell, expect):
    import pandas as pd

    flows = _flows(100)
    flows[50][cell[0]] = cell[1]
    df = pd.DataFrame(flows)
    if ext == "csv":
        df.to_csv(tmp_path / "f.csv", index=False)
    else:
        df.to_parquet(tmp_path / "f.parquet")
    (tmp_path / "s.yaml").write_text(HEAD + f"workload:\n  w: {{pattern: Flows, file: f.{ext}}}\n")
    with pytest.raises(ScenarioError, match=re.escape(expect)):
        lfsim.load_scenario(tmp_path / "s.yaml")


def test_a_table_of_unknown_columns_is_refused(tmp_path):
    (tmp_path / "f.csv").write_text("src,dst,colour\nh1,h0,red\n")
    (tmp_path / "s.yaml").write_text(HEAD + "workload:\n  w: {pattern: Flows, file: f.csv}\n")
    with pytest.raises(ScenarioError, match="f.csv: column 'colour'; accepted: a table with"):
        lfsim.load_scenario(tmp_path / "s.yaml")
