"""Plots of the incast recorders (queue, pause, goodput, rate) on a synthetic Result.

The series are built here with known contents (which port peaks highest, how many PAUSE
frames each port sent), and the figures are checked to show exactly that.
"""

import numpy as np
import pytest

from lfsim import plotting
from lfsim.runner import Result, make_frame

T_END = 5e-3


def _long_form(per_id: dict[int, tuple[np.ndarray, dict[str, np.ndarray]]]) -> dict:
    """{id: (times, {column: values})} -> long-form columns sorted by time."""
    t = np.concatenate([times for times, _ in per_id.values()])
    ids = np.concatenate([np.full(len(times), float(i)) for i, (times, _) in per_id.items()])
    cols = {"time_s": t, "id": ids}
    names = next(iter(per_id.values()))[1].keys()
    for name in names:
        cols[name] = np.concatenate([vals[name] for _, vals in per_id.values()]).astype(float)
    order = np.argsort(t, kind="stable")
    return {k: v[order] for k, v in cols.items()}


def queue_series(n_ports=12, dt=10e-6):
    """Port k peaks at k * 20 kB (port 0 never queues) between 1 and 3 ms."""
    ts = np.arange(0, T_END, dt)
    shape = np.clip(np.sin(np.pi * (ts - 1e-3) / 2e-3), 0, None) * (ts < 3e-3)
    per_id = {k: (ts, {"bytes": (k * 20e3) * shape}) for k in range(n_ports)}
    labels = [f"sw0/p{k}" for k in range(n_ports)]
    return _long_form(per_id), labels


# Port id -> (XOFF count, XON count) sent; ports 4 and 5 only receive.
PAUSES_SENT = {0: (40, 1), 1: (7, 2), 2: (0, 1), 3: (12, 0)}


def pause_series():
    per_id = {}
    for port, (n_xoff, n_xon) in PAUSES_SENT.items():
        t = np.concatenate([np.linspace(1e-3, 2e-3, n_xoff), np.linspace(2.5e-3, 3e-3, n_xon)])
        quanta = np.concatenate([np.full(n_xoff, 65535), np.zeros(n_xon)])
        per_id[port] = (t, {"prio": np.full(len(t), 3), "quanta": quanta, "dir": np.zeros(len(t))})
    for port in (4, 5):
        t = np.linspace(1e-3, 2e-3, 30)
        ones = np.ones(len(t))
        per_id[port] = (t, {"prio": 3 * ones, "quanta": 65535 * ones, "dir": ones})
    return _long_form(per_id), [f"leaf{k}/p1" for k in range(6)]


def goodput_series(n_flows=4, dt=100e-6):
    ts = np.arange(dt, T_END, dt)
    rng = np.random.default_rng(1)
    per_id = {f: (ts, {"goodput_Gbps": 10 + rng.random(len(ts))}) for f in range(n_flows)}
    return _long_form(per_id), [f"h{f + 1}" for f in range(n_flows - 1)] + ["victim"]


def synthetic_result(pause=None):
    series, labels = {}, {}
    series["queue"], labels["queue"] = queue_series()
    series["pause"], labels["pause"] = pause or pause_series()
    series["goodput"], labels["goodput"] = goodput_series()
    g = series["goodput"]
    series["rate"] = {"time_s": g["time_s"], "id": g["id"], "rate_Gbps": g["goodput_Gbps"] + 1}
    labels["rate"] = [f"qp{i}" for i in range(4)]
    summary = {
        "scenario": "synthetic",
        "fabric": "not-a-fabric",
        "mode": "pfc",
        "seed": 1,
        "stop_time": "5ms",
        "sim_time_s": T_END,
        "wall_time_s": 0.0,
        "events": 0,
        "metrics": {},
        "series": list(series),
        "tables": [],
    }
    return Result(summary, {}, series, {}, labels)


def _frame(cols_labels):
    cols, labels = cols_labels
    return make_frame(cols, labels)


def test_plot_result_writes_one_png_per_series(tmp_path):
    r = synthetic_result()
    written = plotting.plot_result(r, tmp_path / "plots")
    assert sorted(p.stem for p in written) == sorted(r.series_names)
    for p in written:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_queue_shows_the_ports_with_the_highest_peaks_in_kib():
    df = _frame(queue_series())
    fig = plotting.queue_figure(df, "queue", T_END)
    ax = fig.axes[0]
    shown = [line.get_label().split(" ")[0] for line in ax.get_lines()]
    # Peaks grow with the port number: the top 8 of 12 are p11 .. p4, highest first.
    assert shown == [f"sw0/p{k}" for k in range(11, 3, -1)]
    # In KiB, as the *_KB metrics (bytes / 1024).
    assert max(ax.get_lines()[0].get_ydata()) == pytest.approx(11 * 20e3 / 1024, rel=1e-3)
    assert "KiB" in ax.get_ylabel()
    assert ax.get_lines()[0].get_label() == f"sw0/p11 (peak {11 * 20e3 / 1024:.4g} KiB)"
    assert "top 8 of 12 ports" in fig.get_suptitle()


def test_long_queue_series_keep_their_peak():
    n = 200_000  # beyond what is drawn point by point
    t = np.linspace(0, T_END, n)
    v = np.zeros(n)
    v[123_457] = 5e6  # one short spike
    df = make_frame({"time_s": t, "id": np.zeros(n), "bytes": v}, ["sw0/p0"])
    fig = plotting.queue_figure(df, "queue", T_END)
    y = fig.axes[0].get_lines()[0].get_ydata()
    assert len(y) < n // 10
    assert max(y) == pytest.approx(5e6 / 1024)


def test_pause_raster_has_one_row_per_sending_port_with_its_counts():
    df = _frame(pause_series())
    fig = plotting.pause_figure(df, "pause", T_END)
    ax = fig.axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    expected = {f"leaf{k}/p1  ({x} XOFF, {o} XON)" for k, (x, o) in PAUSES_SENT.items()}
    assert set(rows) == expected  # receive-only ports 4 and 5 have no row
    assert rows[-1].startswith("leaf0/p1")  # most XOFFs at the top
    sent = sum(x for x, _ in PAUSES_SENT.values())
    xon = sum(o for _, o in PAUSES_SENT.values())
    assert f"{sent} XOFF, {xon} XON; 60 received" in fig.get_suptitle()
    # One tick per XOFF (full height) and per XON (short), in the row of its port.
    ticks = sum(len(c.get_segments()) for c in ax.collections)
    assert ticks == sent + xon


def test_pause_without_any_pause_frame_still_gives_a_plot(tmp_path):
    empty = {c: np.array([]) for c in ("time_s", "id", "prio", "quanta", "dir")}
    r = synthetic_result(pause=(empty, []))
    written = plotting.plot_result(r, tmp_path)
    assert (tmp_path / "pause.png") in written
    fig = plotting.pause_figure(r.timeseries("pause"), "pause", T_END)
    assert any("no PAUSE frames sent" in t.get_text() for t in fig.axes[0].texts)


def test_goodput_per_flow_and_their_total():
    cols, labels = goodput_series()
    df = make_frame(cols, labels)
    fig = plotting.goodput_figure(df, "goodput", T_END)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert set(lines) == {"h1", "h2", "h3", "victim", "total"}
    by_flow = [cols["goodput_Gbps"][cols["id"] == i] for i in range(4)]
    np.testing.assert_allclose(lines["total"].get_ydata(), np.sum(by_flow, axis=0))
    np.testing.assert_allclose(lines["victim"].get_ydata(), by_flow[3])


def test_goodput_totals_are_per_workload_as_the_metrics_are():
    # h1-h3 are the incast, "victim" a workload of its own: the dashed total sums the incast
    # only (as total_goodput_Gbps does); the one-flow victim needs no total of its own.
    cols, labels = goodput_series()
    df = make_frame(cols, labels)
    of = {"h1": "incast", "h2": "incast", "h3": "incast", "victim": "victim"}
    fig = plotting.goodput_figure(df, "goodput", T_END, workload_of=of)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert set(lines) == {"incast: h1", "incast: h2", "incast: h3", "victim", "incast total"}
    by_flow = [cols["goodput_Gbps"][cols["id"] == i] for i in range(3)]
    np.testing.assert_allclose(lines["incast total"].get_ydata(), np.sum(by_flow, axis=0))


def test_other_columns_keep_the_generic_plot(tmp_path):
    """FC's goodput is in MB/s: not the RoCE plot. Its PNG comes from plot_series."""
    df = make_frame(
        {"time_s": np.array([0.0, 1e-3]), "id": np.zeros(2), "goodput_MiBps": np.ones(2)}, ["h1"]
    )
    assert plotting.goodput_figure(df, "goodput", T_END) is None
    assert plotting.plot_special("goodput", df, "t", tmp_path / "g.png") is None
    assert plotting.plot_special("credits", df, "t", tmp_path / "c.png") is None


def test_goodput_of_many_flows_draws_them_thin_under_their_total():
    """An open-loop run has hundreds of flows: no legend of hundreds, the total on top."""
    n = plotting.MAX_LEGEND + 5
    cols, labels = goodput_series(n_flows=n)
    fig = plotting.goodput_figure(make_frame(cols, labels), "goodput", T_END)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == n + 1 and lines[-1].get_label() == "total"
    assert all(line.get_color() == "0.7" for line in lines[:-1])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"each of {n} flows", "total"]
    assert f"({n} flows)" in fig.get_suptitle()


def test_storage_ios_plot_is_a_latency_cdf_per_direction():
    # 30 reads of 100..129 us and 10 writes of 1000 us, completing one per 50 us: the CDF of
    # each direction ends at its largest latency, the histogram counts 30 reads in the bins
    # from 100 to 129 us and 10 writes in the last bin, and the scatter has one point per I/O.
    import pandas as pd

    reads = np.arange(30) * 1e3 + 100e3
    lat_ns = np.r_[reads, np.full(10, 1000e3)]
    done = np.arange(40) * 50e3 + 2e6
    df = pd.DataFrame(
        {"id": 0.0, "read": np.r_[np.ones(30), np.zeros(10)], "bytes": 4096.0,
         "submit_ns": done - lat_ns, "complete_ns": done, "wait_ns": 0.0}
    )  # fmt: skip
    fig = plotting.ios_figure(df, "t")
    cdf, hist, scatter = fig.axes[:3]
    lines = [ln for ln in cdf.get_lines() if ln.get_label().startswith(("read", "write"))]
    assert [ln.get_label().split(":")[0] for ln in lines] == ["read", "write"]
    read_x = lines[0].get_xdata()
    assert read_x.max() == pytest.approx(129) and read_x.min() == pytest.approx(100)
    assert lines[0].get_ydata()[-1] == 1.0
    assert "p50 114.5 µs" in lines[0].get_label()  # the median of 100..129
    assert lines[1].get_xdata().max() == pytest.approx(1000)
    assert cdf.get_xscale() == "linear"  # 100 to 1000 us: one decade, not two
    assert sum(len(c.get_offsets()) for c in scatter.collections) == 40
    (read_hist, write_hist) = hist.patches  # one step outline per direction
    xy = read_hist.get_xy()
    edges, counts = xy[1::2, 0], xy[1::2, 1]  # the tops of the steps: (left edge, count)
    assert counts[:-1].sum() == 30 and edges[np.flatnonzero(counts)].max() < 130
    assert write_hist.get_xy()[1::2, 1][-2] == 10  # the last bin, [977.5, 1000] us
    assert "µs" in hist.get_xlabel() and hist.get_ylabel() == "I/Os per bin"
    assert plotting.ios_figure(df.iloc[:0], "t") is None


def test_long_goodput_is_a_moving_average_with_the_same_mean_and_a_rate_is_not():
    # 500 samples of 10 us alternating 0 and 20 Gbit/s (a message per two intervals): drawn as
    # a mean over 1/60 of the run (round(5 ms / 60 / 10 us) = 8 samples, 80 us) whose values
    # after the first window are all 10, the run's mean; a rate (a state) is drawn as recorded.
    import pandas as pd

    n, dt = 500, 10e-6
    t = np.arange(n) * dt
    v = np.where(np.arange(n) % 2, 20.0, 0.0)
    df = pd.DataFrame({"time_s": t, "id": 0.0, "label": "h1>h0", "goodput_Gbps": v})
    fig = plotting.goodput_figure(df, "goodput", n * dt)
    (line,) = fig.axes[0].get_lines()
    np.testing.assert_allclose(line.get_ydata()[8:], 10.0)
    assert "mean over 0.08 ms" in fig.axes[0].get_ylabel()  # in the time axis unit
    rate = plotting.rate_figure(df.rename(columns={"goodput_Gbps": "rate_Gbps"}), "rate", n * dt)
    (line,) = rate.axes[0].get_lines()
    np.testing.assert_array_equal(line.get_ydata(), v)
    assert "mean" not in rate.axes[0].get_ylabel()


def test_drawing_and_its_data_import_no_runner_and_nothing_inside_functions():
    # plotting draws, plotdata computes what is drawn, animate plays a run's folder: none of
    # them imports the runner (which calls plotting), and every import is at the top of the
    # module, where a cycle would show at once instead of hiding in a function.
    import ast
    from pathlib import Path

    package = Path(plotting.__file__).parent
    wrong = []
    for name in ("plotting.py", "plotdata.py", "animate.py"):
        tree = ast.parse((package / name).read_text())
        # At the top: the module's statements, and its block of type-only imports.
        top = set(tree.body)
        for block in tree.body:
            if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING":
                top |= set(block.body)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                module = getattr(node, "module", None) or ""
                if module.rpartition(".")[2] == "runner" or node not in top:
                    wrong.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert wrong == []
