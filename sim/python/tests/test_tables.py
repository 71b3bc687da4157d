"""lfsim.tables writes a run's tables and series without pandas: the files must have the bytes
pandas' to_parquet / to_csv give the same DataFrame (make_frame), on real runs and on values
whose formatting or encoding could differ."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import lfsim
from lfsim import tables
from lfsim.runner import Spilled, make_frame


def _pandas_files(df: pd.DataFrame, tmp_path, tag: str) -> tuple[bytes, bytes]:
    df.to_parquet(tmp_path / f"{tag}-pd.parquet", index=False)
    df.to_csv(tmp_path / f"{tag}-pd.csv", index=False)
    return (tmp_path / f"{tag}-pd.parquet").read_bytes(), (tmp_path / f"{tag}-pd.csv").read_bytes()


def _our_files(cols, tmp_path, tag: str) -> tuple[bytes, bytes]:
    assert tables.writable(cols)
    tables.write_parquet(cols, tmp_path / f"{tag}.parquet")
    tables.write_csv(cols, tmp_path / f"{tag}.csv")
    return (tmp_path / f"{tag}.parquet").read_bytes(), (tmp_path / f"{tag}.csv").read_bytes()


def _same(columns, labels, refs, tmp_path, tag="t"):
    ours = _our_files(tables.frame_columns(columns, labels, refs), tmp_path, tag)
    theirs = _pandas_files(make_frame(columns, labels, refs), tmp_path, tag)
    assert ours[1].decode() == theirs[1].decode()
    assert ours[0] == theirs[0]


@pytest.mark.parametrize(
    "scenario,overrides",
    [
        ("incast", {"mode": "pfc", "stop_time": "200us", "Report.Warmup": "0s"}),
        ("pfc_deadlock", {"mode": "deadlock"}),
        ("fc_pingpong", {}),
        ("storage_qd1", {"mode": "nvmeof_tcp"}),
        ("faults", {"mode": "flap_pfc"}),
    ],
)
def test_a_runs_tables_and_series_as_pandas_writes_them(tmp_path, scenario, overrides):
    r = lfsim.run(scenario, overrides)
    assert r.table_names
    for kind, source in (("table", r._tables), ("series", r._series)):
        for name in source:
            if isinstance(source[name], Spilled):
                continue
            _same(source[name], r._labels.get(name), r._refs(name), tmp_path, f"{kind}-{name}")


def test_values_whose_text_or_encoding_could_differ(tmp_path):
    n = 300
    rng = np.random.default_rng(7)
    floats = rng.normal(size=n) * 10.0 ** rng.integers(-20, 20, size=n)
    floats[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.1, 1e16, 1e-5, 123456789.0]
    ids = np.arange(n, dtype=np.float64) % 150  # beyond the labels: shown as their number
    ids[3] = np.nan  # no label at all
    columns = {
        "time_s": floats,
        "id": ids,
        "count": rng.integers(-(2**62), 2**62, size=n),
        "flag": rng.integers(0, 2, size=n).astype(bool),
        "peer": (np.arange(n) % 5).astype(np.int64),
    }
    labels = [
        "a,b",
        'q"uote',
        "new\nline",
        "ü/p0",
        "a,b",
        " space",
        "",
        *[f"h{i}" for i in range(60)],
    ]
    _same(columns, labels, {"peer": ["x", "y"]}, tmp_path, "odd")
    # 150 categories: int16 codes (int8 below 127)
    assert "int16" in (tmp_path / "odd.parquet").read_bytes().decode("latin-1")


def test_empty_tables_and_what_is_left_to_pandas(tmp_path):
    empty = {"id": np.array([], dtype=np.int64), "bytes": np.array([], dtype=np.float64)}
    _same(empty, ["h0", "h1"], None, tmp_path, "empty")
    # No labels and no rows: pandas writes a column of type null; that stays pandas' job.
    assert not tables.writable(tables.frame_columns(empty, [], None))
    assert not tables.writable({"x": np.array([1, 2], dtype=np.int32)})
    assert not tables.writable({})


def test_a_spilled_series_as_before(tmp_path):
    """Spilled.write_parquet in chunks (label as dictionary<int32, string>), against the
    chunks through pandas as it wrote them before."""
    rows, cols = 700, ["time_s", "id", "bytes"]
    data = {
        "time_s": np.linspace(0, 1e-3, rows),
        "id": (np.arange(rows) % 3).astype(np.float64),
        "bytes": np.arange(rows, dtype=np.float64) * 3.5,
    }
    for i, c in enumerate(cols):
        data[c].tofile(tmp_path / f"s.{i}.f64")
    spilled = Spilled(str(tmp_path / "s"), rows, cols, ["real", "int", "real"])
    spilled.CHUNK = 256
    spilled.write_parquet(tmp_path / "ours.parquet", ["p0", "p1", "p2"])

    import pyarrow.parquet as pq

    writer = None
    for lo in range(0, rows, spilled.CHUNK):
        part = {c: a[lo : lo + spilled.CHUNK] for c, a in data.items()}
        part["id"] = part["id"].astype(np.int64)
        table = pa.Table.from_pandas(make_frame(part, ["p0", "p1", "p2"]), preserve_index=False)
        i = table.column_names.index("label")
        kind = pa.dictionary(pa.int32(), pa.string())
        table = table.set_column(i, "label", table.column(i).cast(kind))
        writer = writer or pq.ParquetWriter(tmp_path / "theirs.parquet", table.schema)
        writer.write_table(table)
    writer.close()
    assert (tmp_path / "ours.parquet").read_bytes() == (tmp_path / "theirs.parquet").read_bytes()


def test_the_summary_labels_of_per_flow_goodput_as_from_the_flows_frame():
    r = lfsim.run("incast", {"mode": "pfc", "stop_time": "200us", "Report.Warmup": "0s"})
    flows = r.table("flows")
    expected = [str(x) for x in flows.loc[flows["workload"] == 0, "label"]]
    assert len(expected) > 1
    assert r.metric_labels("per_flow_goodput_Gbps") == expected


def test_label_codes_by_hand():
    """The label column's categories written out by hand (the comparisons above build both sides
    with label_codes): a repeated name takes its id, an id past the labels its number, a missing
    id (NaN) code -1."""
    got = tables.label_codes(np.array([0, 1, 2, np.nan, 4.0]), ["a,b", "c", "a,b"])
    assert got.categories == ["a,b", "c", "a,b (2)", "3", "4"]
    assert got.codes.tolist() == [0, 1, 2, -1, 4]
