"""scenarios/cubefs_rdma_tcp.yaml (seed 002): the same 1 MiB QD1 read over RDMA and over TCP."""

import pytest

import lfsim

SHORT = {"FioJob.bs": 1048576, "FioJob.runtime": "6ms", "FioJob.ramp_time": "1ms"}


def _run(mode):
    return lfsim.run("cubefs_rdma_tcp", {"mode": mode, **SHORT})


@pytest.mark.parametrize("mode", ["rdma", "tcp"])
def test_both_transports_run_lossless(mode):
    m = _run(mode).metrics
    assert m["read_ios"] > 0
    assert m["write_ios"] == 0
    assert m["drops"] == 0


def test_rdma_is_faster_at_1m_by_the_tcp_costs_plus_the_wire_difference():
    rdma = _run("rdma").metrics["read_lat_mean_us"]
    tcp = _run("tcp").metrics["read_lat_mean_us"]
    # A 1 MiB read is eight 128 KiB requests in series (MaxRequestSize). TCP's layers add, per
    # request, 5 us + 0.2 us/KiB (client) and 5 us + 0.1 us/KiB (server send): 8 x 48.4 us; the
    # rest is the wire: 1448-byte TCP segments (1538 B of line each) against RoCE packets, a few
    # us either way at 100 Gb/s, never a window stall.
    tcp_layers = 8 * (10 + 0.3 * 128)
    assert tcp_layers < tcp - rdma < tcp_layers + 10


def test_same_seed_identical_output():
    a, b = _run("tcp"), _run("tcp")
    assert a.metrics == b.metrics
    assert a.table("ios").equals(b.table("ios"))
