"""Latency versus protocol depth (lfsim depth): D from the layer lists, T = k D + C fits, the
breakdown adds up, and layer delays enter the latency one for one."""

import json

import numpy as np
import pytest

import lfsim
from lfsim.depth import fit_line, latency_vs_depth

SHORT = {"FioJob.runtime": "2ms", "FioJob.ramp_time": "200us", "stop_time": "5ms"}


@pytest.fixture(scope="module")
def base():
    return latency_vs_depth("latency_vs_depth", SHORT)


def test_depth_is_counted_from_the_layer_lists(base):
    from lfsim.core import choices

    # Every stack of the table is a registered one (its layers are its class's Layers).
    assert set(base.points["stack"]) <= set(choices("ns3::FioWorkload", "Stack"))
    assert dict(zip(base.points["stack"], base.points["depth"], strict=True)) == {
        "fcp": 5,  # application, block, scsi, fcp, hba
        "nvmeof_rdma": 6,  # application, block, nvme, nvmeof, rdma, rnic
        "iscsi": 7,  # application, block, scsi, iscsi, tcp, ip, nic
        "nvmeof_tcp": 7,  # application, block, nvme, nvme_tcp, tcp, ip, nic
    }
    # Two more layers on fcp: D follows the list, not a typed-in number.
    more = latency_vs_depth(
        "latency_vs_depth",
        {**SHORT, "FcpStack.Layers": "a:1us,b:1us,c:1us,d:1us,e:1us,f:1us,g:1us"},
        modes=["fcp"],
    )
    assert set(more.points["depth"]) == {7}
    assert more.fits == {}  # one depth: no line


def test_breakdown_adds_up_to_the_latency(base):
    parts = base.breakdown.groupby(["mode", "op"], sort=False)["us"].sum()
    for r in base.points.itertuples():
        assert parts[(r.mode, r.op)] == pytest.approx(r.latency_us, abs=1e-9)
        assert r.transport_us > 0  # frames take time on the wire
        assert r.device_us == pytest.approx(10.0, abs=1e-6)  # the constant device time


def _fcp_layers_with(first: str) -> str:
    """The scenario's FcpStack.Layers with the first layer replaced."""
    text = lfsim.load_scenario("latency_vs_depth").config["FcpStack"]["Layers"]
    return ",".join([first, *text.split(",")[1:]])


def test_a_layer_delay_adds_one_for_one_at_qd1(base):
    """QD1 with constant times: 3 us more in one fcp layer is 3 us more latency, read and
    write alike (half on submission, half on completion, nothing overlaps it)."""
    first = lfsim.load_scenario("latency_vs_depth").config["FcpStack"]["Layers"]
    name, _, value = first.split(",")[0].partition(":")
    us = float(value.removesuffix("ns")) / 1e3
    slow = latency_vs_depth(
        "latency_vs_depth",
        {**SHORT, "FcpStack.Layers": _fcp_layers_with(f"{name}:{us + 3}us")},
        modes=["fcp"],
    )
    old = base.points[base.points["stack"] == "fcp"].set_index("op")["latency_us"]
    new = slow.points.set_index("op")["latency_us"]
    assert (new - old).to_numpy() == pytest.approx([3.0, 3.0], abs=1e-4)


def test_fit_is_least_squares():
    d = [5, 6, 7, 5, 6, 7]
    t = [20.0, 23.5, 30.0, 21.0, 24.0, 29.0]
    f = fit_line(d, t)
    a = np.vstack([d, np.ones(len(d))]).T
    (k, c), *_ = np.linalg.lstsq(a, np.array(t), rcond=None)
    assert f["k_us"] == pytest.approx(k) and f["C_us"] == pytest.approx(c)
    pred = k * np.array(d) + c
    r2 = 1 - ((np.array(t) - pred) ** 2).sum() / ((np.array(t) - np.mean(t)) ** 2).sum()
    assert f["r2"] == pytest.approx(r2)


def test_cli_writes_tables_fits_and_plots(cli, tmp_path):
    p = cli("depth", "--set", "FioJob.runtime=1ms", "--set", "FioJob.ramp_time=100us", "--out", "d")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "d"
    fits = json.loads((out / "fit.json").read_text())
    assert set(fits) == {"randread", "randwrite"}
    assert all({"k_us", "C_us", "r2"} <= set(f) for f in fits.values())
    for name in ("depth.csv", "breakdown.csv", "plots/depth.png", "plots/breakdown.png"):
        assert (out / name).stat().st_size > 0
    assert "fit randread: T =" in p.stdout


def test_cli_bad_mode_is_one_line_exit_2(cli, tmp_path):
    p = cli("depth", "--modes", "fcp,infiniband", "--out", "d")
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "modes: got infiniband; accepted:" in p.stderr
    assert not (tmp_path / "d").exists()


def test_a_per_kib_layer_cost_scales_with_the_block_size(base):
    """'+t/KiB' adds t for every KiB of the I/O's data: 0.5 us/KiB on a 4 KiB read is 2 us,
    and the breakdown charges it to that layer."""
    first = lfsim.load_scenario("latency_vs_depth").config["FcpStack"]["Layers"]
    head = first.split(",")[0]
    slow = latency_vs_depth(
        "latency_vs_depth",
        {**SHORT, "FcpStack.Layers": _fcp_layers_with(head + "+0.5us/KiB")},
        modes=["fcp"],
        ops=["randread"],
    )
    old = base.points[(base.points["stack"] == "fcp") & (base.points["op"] == "randread")]
    assert slow.points["latency_us"].iloc[0] - old["latency_us"].iloc[0] == pytest.approx(
        2.0, abs=1e-4
    )
    name = "host " + head.split(":")[0]
    parts = slow.breakdown.set_index("component")["us"]
    base_parts = base.breakdown[
        (base.breakdown["mode"] == "fcp") & (base.breakdown["op"] == "randread")
    ].set_index("component")["us"]
    assert parts[name] - base_parts[name] == pytest.approx(2.0)


def test_the_ordering_fc_roce_iscsi_and_why(base):
    """Seed 000's ordering comes out of the model: FC < NVMe-oF/RoCE < iSCSI/TCP for 4 KiB
    QD1 reads and writes, and the host software layers, not the wire, make the gaps: the
    gap between two stacks is larger than the difference of their transport times."""
    p = base.points.set_index(["stack", "op"])
    for op in ("randread", "randwrite"):
        fc, roce, iscsi = (p.loc[(s, op)] for s in ("fcp", "nvmeof_rdma", "iscsi"))
        assert fc.latency_us < roce.latency_us < iscsi.latency_us
        for lo, hi in ((fc, roce), (roce, iscsi)):
            gap = hi.latency_us - lo.latency_us
            assert hi.layers_us - lo.layers_us > abs(hi.transport_us - lo.transport_us)
            assert gap > 0.5 * (hi.layers_us - lo.layers_us)


def test_cli_a_scenario_without_a_fio_workload_is_one_line_exit_2(cli, tmp_path):
    p = cli("depth", "fc_distance", "--out", "d")
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1
    assert (
        "scenario: got 'fc_distance' (fabric fc, 0 modes, no Fio workload); accepted: a "
        "scenario with a Fio workload and one mode per stack"
    ) in p.stderr
    assert not (tmp_path / "d").exists()
