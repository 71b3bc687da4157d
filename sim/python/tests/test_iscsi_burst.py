"""The iscsi_burst scenario (seed 003) from YAML: the second burst of a default 512 KiB write."""

import pytest

import lfsim

WIRE_256K_US = (256 * 1024 + 32 * 48) * 1502 / 1448 * 8 / 1e3  # see validation/cases/iscsi.py


def _lat(mode, **over):
    r = lfsim.run("iscsi_burst", {"mode": mode, **over})
    m = r.metrics
    assert m["completed"] is True
    return dict(zip(m["size_bytes"], m["write_lat_mean_us"], strict=True)), m


def test_defaults_pay_one_round_trip_between_bursts():
    lat, m = _lat("defaults")
    rtt = m["nop_rtt_us"]
    assert m["r2ts"] == [0, 0, 1, 1, 2]  # 1k and 4k fit in the command's immediate data
    assert 0.9 <= (lat[524288] - lat[262144] - WIRE_256K_US) / rtt <= 1.1


@pytest.mark.parametrize("mode", ["max_burst_512k", "max_outstanding_r2t_2"])
def test_the_remedies_remove_it(mode):
    d, dm = _lat("defaults")
    lat, m = _lat(mode)
    assert 0.9 <= (d[524288] - lat[524288]) / dm["nop_rtt_us"] <= 1.1
    for size in (1024, 4096, 65536, 262144):  # one burst at most: nothing changes
        assert lat[size] == pytest.approx(d[size], abs=1.0)


def test_same_seed_same_table():
    a = lfsim.run("iscsi_burst").table("writes")
    b = lfsim.run("iscsi_burst").table("writes")
    assert a.equals(b) and len(a) == 5 * 5


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--set", "IscsiBurstScenario.Sizes=4096,1000"], "IscsiBurstScenario.Sizes: got"),
        (["--set", "IscsiSession.MaxBurstLength=100"], "IscsiSession.MaxBurstLength"),
        (["--set", "IscsiBurstScenario.LinkRate=1Gbs"], "IscsiBurstScenario.LinkRate"),
    ],
)
def test_bad_input_is_one_line_exit_2(cli, tmp_path, args, expected):
    p = cli("run", "iscsi_burst", *args, "--out", "out")
    assert p.returncode == 2
    assert expected in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "Traceback" not in p.stderr
