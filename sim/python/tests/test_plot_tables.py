"""Plots of the shared report's tables (flows, slowdown_by_size, links) and of other tables.

The tables are built here with known contents, and each figure is checked to draw exactly
that: which buckets have a slowdown point and where, which flows each CDF steps through, how
many link directions fall in each utilisation bin.
"""

import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle

from lfsim import plotdata, plotting
from lfsim.runner import Result, make_frame

# Report.SizeBuckets 10000,100000,1000000: four buckets, the second without a message.
SLOWDOWN = {
    "size_lo_bytes": np.array([0.0, 1e4, 1e5, 1e6]),
    "size_hi_bytes": np.array([1e4, 1e5, 1e6, np.inf]),
    "messages": np.array([12.0, 0.0, 5.0, 2.0]),
    "p50": np.array([1.5, np.nan, 3.0, 1.1]),
    "p95": np.array([2.0, np.nan, 9.0, 1.2]),
    "p99": np.array([4.0, np.nan, 20.0, 1.2]),
}


def _lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def test_slowdown_has_p50_and_p99_of_each_bucket_with_messages_on_a_log_scale():
    fig = plotting.slowdown_figure(pd.DataFrame(SLOWDOWN), "slowdown")
    ax = fig.axes[0]
    lines = _lines(ax)
    assert ax.get_yscale() == "log"
    # Buckets 0, 2 and 3 have messages: a point each, at the bucket's position.
    np.testing.assert_array_equal(lines["p50"].get_xdata(), [0, 2, 3])
    np.testing.assert_array_equal(lines["p50"].get_ydata(), [1.5, 3.0, 1.1])
    np.testing.assert_array_equal(lines["p99"].get_ydata(), [4.0, 20.0, 1.2])
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == [
        "< 10 kB\n12 msgs",
        "10 kB - 100 kB\n0 msgs",
        "100 kB - 1 MB\n5 msgs",
        ">= 1 MB\n2 msgs",
    ]
    assert "slowdown" in ax.get_ylabel() and "size" in ax.get_xlabel()


def test_slowdown_without_a_completed_message_says_so():
    empty = {**SLOWDOWN, "messages": np.zeros(4), "p50": np.full(4, np.nan)}
    empty["p99"] = empty["p50"]
    fig = plotting.slowdown_figure(pd.DataFrame(empty), "slowdown")
    assert any("no message completed" in t.get_text() for t in fig.axes[0].texts)
    assert plotting.slowdown_figure(pd.DataFrame({"x": [1.0]}), "other columns") is None


def flows_table():
    """Workload 0 ("incast"): three flows of FCT 10, 30, 20 us; workload 1 ("bulk"): two flows,
    one that completed no message (NaN)."""
    cols = {
        "id": np.arange(5.0),
        "workload": np.array([0.0, 0.0, 0.0, 1.0, 1.0]),
        "src": np.array([1.0, 2.0, 3.0, 4.0, 5.0]),
        "dst": np.zeros(5),
        "size_bytes": np.full(5, 65536.0),
        "goodput_Gbps": np.array([2.0, 1.0, 3.0, 20.0, 0.0]),
        "fct_us": np.array([10.0, 30.0, 20.0, 4000.0, np.nan]),
        "slowdown": np.array([2.0, 6.0, 4.0, 1.0, np.nan]),
    }
    return make_frame(cols, ["h1>h0", "h2>h0", "h3>h0", "h4>h0", "h5>h0"])


def test_flow_cdf_has_one_line_per_workload_through_every_completed_flow():
    fig = plotting.flow_cdf_figure(flows_table(), "flows", ["incast", "bulk"])
    fct, slowdown, goodput = fig.axes[:3]
    lines = _lines(fct)
    assert set(lines) == {"incast (3 flows)", "bulk (2 flows)"}
    incast = lines["incast (3 flows)"]
    # Steps at the sorted FCTs, reaching 1/3, 2/3, 1 (after a start at 0).
    np.testing.assert_array_equal(incast.get_xdata(), [10, 10, 20, 30])
    np.testing.assert_allclose(incast.get_ydata(), [0, 1 / 3, 2 / 3, 1])
    # The flow without a completed message is not in its workload's CDF.
    np.testing.assert_array_equal(lines["bulk (2 flows)"].get_xdata(), [4000, 4000])
    assert fct.get_xscale() == "log"  # 10 .. 4000 us: more than two decades
    assert "slowdown" in slowdown.get_xlabel().lower()
    assert "goodput" in goodput.get_xlabel() and "fraction of flows" in goodput.get_ylabel()
    assert "CDF over 5 flows (4 with a completed message)" in fig.get_suptitle()
    # The report's flows table of a fabric-installed pattern (FC's Fcp) has no FCT column.
    assert plotting.flow_cdf_figure(flows_table().drop(columns="fct_us"), "t") is None


def test_flow_cdf_of_flows_that_completed_nothing_says_so_without_a_legend(recwarn):
    """A deadlocked run: every flow started, none completed a message."""
    frozen = flows_table().assign(fct_us=np.nan, slowdown=np.nan)
    fig = plotting.flow_cdf_figure(frozen, "flows", ["incast", "bulk"])
    assert any("no flow completed a message" in t.get_text() for t in fig.axes[0].texts)
    assert fig.axes[0].get_legend() is None and not recwarn.list
    assert "(0 with a completed message)" in fig.get_suptitle()


PORTS = ["h0", "h1", "sw0/p0", "sw0/p1", "A/sw1/p0", "A/sw1/p1"]


def test_link_util_counts_every_direction_host_and_switch_links_apart():
    # h0 - sw0/p0 (host link), h1 - A/sw1/p0 (host link), sw0/p1 - A/sw1/p1 (switch link).
    links = pd.DataFrame(
        {
            "a": [0.0, 1.0, 3.0],
            "b": [2.0, 4.0, 5.0],
            "util_ab": [0.12, 0.97, 0.52],
            "util_ba": [0.01, 0.02, 0.47],
        }
    )
    fig = plotting.link_util_figure(links, PORTS, "links")
    ax = fig.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_height() > 0]
    assert sum(p.get_height() for p in bars) == 6  # 3 links, both directions
    by_bin = {}
    for p in bars:
        key = round(p.get_x(), 6)
        by_bin[key] = by_bin.get(key, 0) + p.get_height()
    assert by_bin == {0.0: 2, 0.1: 1, 0.45: 1, 0.5: 1, 0.95: 1}
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["host links (4 directions)", "switch-to-switch links (2 directions)"]
    assert "busiest direction 97%" in fig.get_suptitle()
    assert "utilisation" in ax.get_xlabel() and ax.get_ylabel() == "link directions"


def test_ports_of_a_dual_fabric_belong_to_their_switch_or_host():
    assert plotdata.node_of("A/leaf0/p3") == "A/leaf0"
    assert plotdata.node_of("ring0/p1") == "ring0"
    assert plotdata.node_of("h0/B") == "h0" and plotdata.node_of("h7") == "h7"
    links = pd.DataFrame({"a": [0.0, 1.0, 3.0], "b": [2.0, 4.0, 5.0]})
    g = plotdata.topology_graph(links, PORTS)
    assert dict(g.nodes(data="kind")) == {
        "h0": "host",
        "h1": "host",
        "sw0": "switch",
        "A/sw1": "switch",
    }


def _id_table(n):
    return make_frame(
        {
            "id": np.arange(float(n)),
            "frames_tx": np.arange(float(n)) * 10,
            "drops": np.zeros(n),
        },
        [f"sw0/p{i}" for i in range(n)],
    )


@pytest.mark.parametrize("n", [5, plotting.MAX_BARS + 10])
def test_id_tables_draw_each_row_once_and_name_a_column_without_spread(n):
    fig = plotting.table_figure(_id_table(n), "ports", "ports")
    axes = fig.axes
    assert len(axes) == 1  # frames_tx only: drops is 0 in every row ...
    assert "the same in every row: drops 0" in fig.get_suptitle()  # ... and says so
    ax = axes[0]
    if n <= plotting.MAX_BARS:
        assert len(ax.patches) == n  # one bar per port, named by its label
        assert [t.get_text() for t in ax.get_xticklabels()] == [f"sw0/p{i}" for i in range(n)]
    else:
        # Many ports: the largest MAX_BARS of the non-zero ones (port 0 sent nothing), by name.
        assert len(ax.patches) == plotting.MAX_BARS
        names = [t.get_text() for t in ax.get_yticklabels()]
        assert names == [f"sw0/p{i}" for i in range(n - 1, n - 1 - plotting.MAX_BARS, -1)]
        widths = [p.get_width() for p in ax.patches]
        assert widths == [10.0 * i for i in range(n - 1, n - 1 - plotting.MAX_BARS, -1)]
        assert ax.get_title(loc="left") == f"the 20 largest of {n - 1} of {n} ports non-zero"


def test_many_ports_leave_out_those_at_zero():
    n = plotting.MAX_BARS + 10
    df = _id_table(n)
    df["pause_tx"] = 0.0
    df.loc[[3, 17], "pause_tx"] = [5.0, 40.0]
    fig = plotting.table_figure(df, "ports", "ports")
    ax = next(a for a in fig.axes if a.get_xlabel().startswith("pause"))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["sw0/p17", "sw0/p3"]
    assert ax.get_title(loc="left") == f"2 of {n} ports non-zero"


def test_a_column_in_another_unit_of_the_key_is_not_drawn():
    """FC's pingpong table has size_bytes and size_KiB: size against size is not a plot."""
    df = pd.DataFrame(
        {
            "size_bytes": [1024.0, 2048.0],
            "size_KiB": [1.0, 2.0],
            "latency_us": [100.0, 150.0],
        }
    )
    fig = plotting.table_figure(df, "pingpong")
    assert [ax.get_ylabel() for ax in fig.axes] == ["latency (µs)"]
    assert fig.axes[0].get_xlabel() == "size (B)"


def _result(tables, labels):
    summary = {
        "scenario": "synthetic",
        "fabric": "not-a-fabric",
        "mode": None,
        "seed": 1,
        "stop_time": "1ms",
        "sim_time_s": 1e-3,
        "wall_time_s": 0.0,
        "events": 0,
        "metrics": {},
        "series": [],
        "tables": list(tables),
    }
    return Result(summary, {}, {}, tables, labels)


def test_plot_result_draws_the_report_tables(tmp_path):
    flows = {c: flows_table()[c].to_numpy() for c in flows_table().columns if c != "label"}
    links = {
        "a": np.array([0.0, 1.0]),
        "b": np.array([2.0, 3.0]),
        "util_ab": np.array([0.5, 0.2]),
        "util_ba": np.array([0.1, 0.0]),
    }
    labels = {
        "flows": ["h1>h0", "h2>h0", "h3>h0", "h4>h0", "h5>h0"],
        "workloads": ["incast", "bulk"],
        "links": ["h0", "h1", "sw0/p0", "sw0/p1"],
    }
    r = _result({"flows": flows, "slowdown_by_size": SLOWDOWN, "links": links}, labels)
    written = plotting.plot_result(r, tmp_path)
    assert sorted(p.name for p in written) == [
        "flows.png",
        "link_util.png",
        "slowdown_by_size.png",
        "topology.png",
    ]
    # Without flows there is no slowdown to show.
    empty = {c: v[:0] for c, v in flows.items()}
    r = _result({"flows": empty, "slowdown_by_size": SLOWDOWN}, labels)
    assert [p.name for p in plotting.plot_result(r, tmp_path / "none")] == []
