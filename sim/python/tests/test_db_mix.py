"""scenarios/db_mix.yaml (seed 000): the same database-like mix over both stacks, lossless."""

import pytest

import lfsim


@pytest.mark.parametrize("mode", ["roce", "fc"])
def test_db_mix_is_lossless_and_keeps_32_ios_outstanding(mode):
    r = lfsim.run("db_mix", {"mode": mode, "FioJob.runtime": "6ms"})
    m = r.metrics
    assert m["drops"] == 0
    n = m["read_ios"] + m["write_ios"]
    assert 0.6 < m["read_ios"] / n < 0.8  # rwmixread=70
    iops = m["read_iops"] + m["write_iops"]
    lat = (m["read_lat_mean_us"] * m["read_ios"] + m["write_lat_mean_us"] * m["write_ios"]) / n
    assert iops * lat * 1e-6 == pytest.approx(32, rel=0.05)  # Little's law, closed loop
    assert set(r.table("ios")["bytes"]) == {8192}
