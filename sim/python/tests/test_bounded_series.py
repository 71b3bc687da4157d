"""Time series of a run with an output directory stay bounded in memory: the C++ core appends
their rows to files as they grow, and the Parquet files are written from those files chunk by
chunk. The result must be exactly the series an in-memory run gives."""

from __future__ import annotations

import pandas as pd

import lfsim
from lfsim import runner

OVERRIDES = {"mode": "pfc", "sample_interval": "0s", "record": "queue,pause", "stop_time": "3ms"}


def test_spilled_series_equal_the_in_memory_ones(tmp_path, monkeypatch):
    ref = lfsim.run("incast", OVERRIDES)
    queue = ref.timeseries("queue")
    assert len(queue) > 40_000  # enough rows to spill ten times below

    monkeypatch.setattr(runner, "SPILL_ROWS", 4096)
    monkeypatch.setattr(runner.Spilled, "CHUNK", 10_000)
    out = tmp_path / "run"
    r = lfsim.run("incast", OVERRIDES, out=out)
    assert r.metrics == ref.metrics
    for name in ("queue", "pause"):
        disk = pd.read_parquet(out / "series" / f"{name}.parquet")
        mem = ref.timeseries(name)
        pd.testing.assert_frame_equal(
            disk.astype({"label": str}), mem.astype({"label": str}), check_exact=True
        )
        # Written from the raw files of doubles, the columns keep their kinds (issue 40).
        assert (
            disk["id"].dtype == "int64"
            and disk["prio" if name == "pause" else "bytes"].dtype == "int64"
        )
        # The same through the Result's own accessor, read back from the directory.
        assert len(r.timeseries(name)) == len(mem)
    # The raw spill files are gone; only the Parquet files remain.
    assert not (out / ".spill").exists()
    assert sorted(p.name for p in (out / "series").iterdir()) == ["pause.parquet", "queue.parquet"]
