"""scenarios/cubefs_rdma_tcp.yaml (seed 002): the CubeFS client path over RDMA and over TCP."""

import pytest
import yaml

import lfsim
from lfsim.depth import parse_layers
from lfsim.paths import scenarios_dir

SHORT = {"FioJob.runtime": "6ms", "FioJob.ramp_time": "1ms"}
KIB = 1024
LINE_RATE = 100e9  # 100GbE, b/s


def _lat(mode, bs, rw="read"):
    m = lfsim.run("cubefs_rdma_tcp", {"mode": mode, "FioJob.bs": bs, "FioJob.rw": rw, **SHORT})
    return m.metrics["read_lat_mean_us"]


def _fio():
    with open(scenarios_dir() / "cubefs_rdma_tcp.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)["workload"]["fio"]


def _layers(mode):
    """The Layers of the stack the mode chooses, as the scenario resolves them."""
    from lfsim import core

    config = lfsim.load_scenario("cubefs_rdma_tcp", {"mode": mode}).config
    stack = core.choices("ns3::StorageWorkload", "Stack")[config["workload"]["fio"]["Stack"]]
    return config[core.short_name(stack["type_id"])]["Layers"]


def _per_kib_us(layers):
    """Per-KiB time (us) of each layer of a `name:time+time/KiB,...` list."""
    at0, at1 = dict(parse_layers(layers, 0)), dict(parse_layers(layers, KIB))
    return {name: at1[name] - at0[name] for name in at0}


@pytest.mark.parametrize("mode", ["rdma", "tcp"])
def test_both_transports_run_lossless(mode):
    m = lfsim.run("cubefs_rdma_tcp", {"mode": mode, "FioJob.bs": 1048576, **SHORT}).metrics
    assert m["read_ios"] > 0
    assert m["write_ios"] == 0
    assert m["drops"] == 0


def test_both_transports_share_the_client_and_datanode_path():
    # The model's premise: one CubeFS client and datanode, two transports. Every layer of the
    # RDMA list is in the TCP list with the same time; TCP only adds its socket layers.
    rdma = dict(parse_layers(_layers("rdma"), 64 * KIB))
    tcp = dict(parse_layers(_layers("tcp"), 64 * KIB))
    assert all(tcp[name] == pytest.approx(us) for name, us in rdma.items())
    assert set(tcp) - set(rdma) == {"tcp_client", "tcp_server"}


@pytest.mark.parametrize("mode", ["rdma", "tcp"])
def test_a_1m_read_is_eight_128k_fuse_requests_in_series(mode):
    # FUSE cuts a direct read into requests of 32 pages and waits for each (MaxRequestSize):
    # a 1 MiB read takes eight times a 128 KiB one, a 128 KiB read is not split.
    assert _fio()["MaxRequestSize"] == 32 * 4096
    assert _lat(mode, 1048576) == pytest.approx(8 * _lat(mode, 131072), rel=1e-3)


@pytest.mark.parametrize("mode", ["rdma", "tcp"])
def test_random_reads_take_as_long_as_sequential_ones(mode):
    # The extent is in the datanode's page cache: no seek, no device time, whatever the order.
    assert _lat(mode, 131072, "randread") == pytest.approx(_lat(mode, 131072), rel=1e-3)


def test_rdma_time_within_a_request_grows_by_the_stated_per_kib_work_and_the_wire():
    # From 4 KiB to 128 KiB (one request each) the RDMA read gains 124 KiB of every per-KiB
    # term of the path and 124 KiB more on the 100GbE wire (RoCE headers add a few %).
    per_kib = sum(_per_kib_us(_layers("rdma")).values())
    extra = 124 * KIB
    wire = extra * 8 / LINE_RATE * 1e6
    grown = _lat("rdma", 131072) - _lat("rdma", 4096)
    assert 124 * per_kib + wire < grown < 124 * per_kib + 1.10 * wire + 1.0


def test_tcp_costs_over_rdma_at_1m_are_the_socket_layers_plus_the_wire_difference():
    # A 1 MiB read is eight 128 KiB requests. TCP's layers add per request 2x (tcp_client and
    # tcp_server fixed) + their per-KiB times x 128 KiB; the rest is the wire: 1448-byte TCP
    # segments (1538 B of line each) against RoCE packets, a few us either way at 100 Gb/s per
    # request, never a window stall.
    tcp_layers = dict(parse_layers(_layers("tcp"), 128 * KIB))
    socket = tcp_layers["tcp_client"] + tcp_layers["tcp_server"]
    diff = _lat("tcp", 1048576) - _lat("rdma", 1048576)
    assert 8 * socket < diff < 8 * (socket + 2.0)


def test_same_seed_identical_output():
    a = lfsim.run("cubefs_rdma_tcp", {"mode": "tcp", "FioJob.bs": 1048576, **SHORT})
    b = lfsim.run("cubefs_rdma_tcp", {"mode": "tcp", "FioJob.bs": 1048576, **SHORT})
    assert a.metrics == b.metrics
    assert a.table("ios").equals(b.table("ios"))
