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
