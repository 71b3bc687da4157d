"""Heat maps of sweeps (``lfsim sweep --heatmap``): each cell shows the sweep.csv value of its
point, the PNGs are written next to the table, and bad requests fail before anything is written.
"""

import struct

import numpy as np
import pandas as pd
import pytest
from conftest import SMALL

import lfsim
from lfsim import plotting

CREDITS = "FcNetDevice.BbCredit=8,2"  # not sorted: the heat map keeps the grid's order
LENGTH = "FcChannel.Length=1000,20000"
METRIC = "throughput_MiBps"


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])  # IHDR: width, height


def _cells(fig):
    """(panel title, x tick labels, y tick labels, drawn array, cell texts) of each panel."""
    out = []
    for ax in fig.axes:
        if not ax.images:
            continue  # the colour bar
        out.append(
            (
                ax.get_title(),
                [t.get_text() for t in ax.get_xticklabels()],
                [t.get_text() for t in ax.get_yticklabels()],
                ax.images[0].get_array(),
                {
                    (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
                    for t in ax.texts
                },
            )
        )
    return out


def _check_panel(panel, table, x, y):
    """Every drawn cell is the value of the point its tick labels name, looked up row by row."""
    _, xs, ys, arr, texts = panel
    assert arr.shape == (len(ys), len(xs))
    for i, yv in enumerate(ys):
        for j, xv in enumerate(xs):
            row = table[(table[x].astype(str) == xv) & (table[y].astype(str) == yv)]
            assert len(row) == 1
            assert arr[i, j] == pytest.approx(row[METRIC].iloc[0], rel=1e-12)
            assert texts[(i, j)] == f"{row[METRIC].iloc[0]:.4g}"


def test_three_keys_one_panel_per_value_of_the_third(cli, tmp_path):
    out = tmp_path / "hm"
    p = cli(
        "sweep",
        "fc_distance",
        *SMALL,
        "--grid",
        CREDITS,
        "--grid",
        LENGTH,
        "--grid",
        "FcNetDevice.Speed=1GFC,2GFC",
        "--heatmap",
        METRIC,
        "--jobs",
        "2",
        "--out",
        str(out),
    )
    assert p.returncode == 0, p.stderr
    png = out / f"heatmap_{METRIC}.png"
    assert f"heat map: {png}" in p.stdout
    assert sorted(f.name for f in out.iterdir()) == [png.name, "sweep.csv", "sweep.parquet"]
    width, height = _png_size(png)
    assert width > height  # two panels side by side

    table = pd.read_csv(out / "sweep.csv")
    keys = ["FcNetDevice.BbCredit", "FcChannel.Length", "FcNetDevice.Speed"]
    panels = _cells(plotting.heatmap_figure(table, METRIC, keys))
    assert [t for t, *_ in panels] == ["FcNetDevice.Speed = 1GFC", "FcNetDevice.Speed = 2GFC"]
    for panel, speed in zip(panels, ["1GFC", "2GFC"], strict=True):
        assert panel[1] == ["8", "2"] and panel[2] == ["1000", "20000"]  # grid order
        _check_panel(panel, table[table["FcNetDevice.Speed"] == speed], *keys[:2])
    # The physics the map shows: 20 km needs more than 2 credits in flight, so 8 carry more.
    for _, _, _, arr, _ in panels:
        assert arr[1, 0] > arr[1, 1]


def test_two_keys_the_png_is_sweep_csv_drawn(cli, tmp_path):
    out = tmp_path / "hm"
    p = cli(
        "sweep",
        "fc_distance",
        *SMALL,
        "--grid",
        CREDITS,
        "--grid",
        LENGTH,
        "--grid",
        "FcNetDevice.Speed=2GFC",
        "--heatmap",
        f"{METRIC},events",
        "--jobs",
        "2",
        "--out",
        str(out),
        "--quiet",
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    table = pd.read_csv(out / "sweep.csv")
    # The PNG the sweep wrote is, byte for byte, sweep.csv drawn again (with the constant
    # FcNetDevice.Speed in its title); the figure's cells are checked against the table below.
    expected = plotting.plot_heatmaps(
        table,
        ["FcNetDevice.BbCredit", "FcChannel.Length"],
        [METRIC],
        tmp_path,
        "fc_distance",
        {"FcNetDevice.Speed": "2GFC"},
    )
    assert (out / f"heatmap_{METRIC}.png").read_bytes() == expected[0].read_bytes()
    fig = plotting.heatmap_figure(table, METRIC, ["FcNetDevice.BbCredit", "FcChannel.Length"], "t")
    (panel,) = _cells(fig)
    assert panel[0] == ""  # no panel key, no panel title
    _check_panel(panel, table, "FcNetDevice.BbCredit", "FcChannel.Length")
    _png_size(out / "heatmap_events.png")  # a sweep column that is not a metric may be drawn too


def test_a_point_without_the_metric_is_a_grey_cell():
    table = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "y", "x", "y"], "m": [1.0, np.nan, 3, 4]})
    (panel,) = _cells(plotting.heatmap_figure(table, "m", ["a", "b"]))
    arr = panel[3]
    assert arr.mask.tolist() == [[False, False], [True, False]]  # rows b, columns a
    assert arr[0, 0] == 1 and arr[0, 1] == 3 and arr[1, 1] == 4
    assert (1, 0) not in panel[4]


BAD = {
    "one varying key": (
        ["--grid", CREDITS, "--heatmap", METRIC],
        "the grid varies 1 key (FcNetDevice.BbCredit)",
    ),
    "four varying keys": (
        [
            "--grid",
            CREDITS,
            "--grid",
            LENGTH,
            "--grid",
            "FcNetDevice.Speed=1GFC,2GFC",
            "--grid",
            "seed=1,2",
            "--heatmap",
            METRIC,
        ],
        "the grid varies 4 keys",
    ),
    "repeated value": (
        ["--grid", "FcNetDevice.BbCredit=2,2", "--grid", LENGTH, "--heatmap", METRIC],
        "repeats a value",
    ),
    "empty name": (["--grid", CREDITS, "--grid", LENGTH, "--heatmap", "a,,b"], "got ''"),
    "unknown metric": (
        ["--grid", CREDITS, "--grid", LENGTH, "--heatmap", "goodput", "--jobs", "1"],
        "no scalar metric 'goodput' in the results; accepted: one of",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_heatmap_requests_exit_2_and_write_nothing(cli, tmp_path, case):
    args, phrase = BAD[case]
    out = tmp_path / "hm"
    p = cli("sweep", "fc_distance", *SMALL, *args, "--out", str(out), "--quiet")
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lfsim: error:"), p.stderr
    assert "heatmap" in lines[0] and phrase in lines[0]
    if case == "unknown metric":
        assert METRIC in lines[0]  # the accepted names are listed
    assert not out.exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == []


def test_api_heatmap_needs_an_output_directory():
    with pytest.raises(lfsim.ScenarioError, match="heatmap: needs an output directory"):
        lfsim.sweep(
            "fc_distance",
            {"FcNetDevice.BbCredit": [2, 8], "FcChannel.Length": [1, 2]},
            heatmap=METRIC,
        )
