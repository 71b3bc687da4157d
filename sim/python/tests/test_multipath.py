"""Storage deployments: several paths (dual fabrics, several target ports), path selectors,
host queue limits, several targets, losslessness, and the SAN of seed 000."""

import copy

import pytest

import lfsim

STACKS = {"nvmeof_rdma": "roce", "iscsi": "roce", "fcp": "fc", "nvmeof_tcp": "roce"}
SPEED = {"roce": {"RoceNetDevice": {"Speed": "25GbE"}}, "fc": {"FcNetDevice": {"Speed": "32GFC"}}}


def scenario(stack, topology, fio=None, job=None, **classes):
    """A Fio workload 'fio' (h... initiators against the hosts of Destinations) over `topology`;
    `fio` and `job` override the workload's and FioJob's attributes."""
    fabric = STACKS[stack]
    out = {
        "fabric": fabric,
        "stop_time": "100ms",
        "topology": copy.deepcopy(topology),
        "workload": {"fio": {"pattern": "Fio", "Stack": stack, **(fio or {})}},
        "FioJob": {
            "rw": "randread",
            "bs": 4096,
            "runtime": "5ms",
            "ramp_time": "1ms",
            **(job or {}),
        },
        **copy.deepcopy(SPEED[fabric]),
    }
    for cls, attrs in classes.items():
        out.setdefault(cls, {}).update(attrs)
    return out


# One server (a port in fabric A, one in B) and an array with two ports in each fabric.
DUAL = {
    "Planes": 2,
    "nodes": [
        {"name": "db0", "kind": "host"},
        {"name": "array", "kind": "host"},
        {"name": "sw", "kind": "switch"},
    ],
    "links": [{"a": "db0", "b": "sw"}, {"a": "array", "b": "sw", "count": 2}],
}


def paths(r) -> dict[str, float]:
    t = r.table("paths")
    return dict(zip(t["label"], t["requests"], strict=True))


@pytest.mark.parametrize("stack", STACKS)
def test_round_robin_gives_every_path_the_same_number_of_requests(stack):
    """dm-round-robin, one request per path in turn: 400 reads over the 4 paths of a
    dual-fabric server to a 4-port array are exactly 100 per path, on both fabrics."""
    s = scenario(
        stack,
        DUAL,
        {"Hosts": "db0", "Destinations": "array", "PathSelector": "round-robin"},
        {"iodepth": 4, "runtime": "0s", "ramp_time": "0s", "size": 400 * 4096},
    )
    r = lfsim.run(s)
    assert paths(r) == {
        "db0/A>array/A0": 100,
        "db0/A>array/A1": 100,
        "db0/B>array/B0": 100,
        "db0/B>array/B1": 100,
    }
    assert r.metrics["read_ios"] == 400 and r.metrics["ios_in_flight"] == 0


# Fabric A as short as usual, fabric B with a 20 km cable to the server: 100 us each way.
SLOW_B = {
    "nodes": [
        {"name": "h0", "kind": "host"},
        {"name": "t0", "kind": "host"},
        {"name": "swA", "kind": "switch"},
        {"name": "swB", "kind": "switch"},
    ],
    "links": [
        {"a": "h0", "b": "swA"},
        {"a": "t0", "b": "swA"},
        {"a": "h0", "b": "swB", "length": 20000},
        {"a": "t0", "b": "swB"},
    ],
}


def test_queue_length_prefers_the_path_whose_requests_come_back_sooner():
    """A request on the slow path is in flight 200 us longer. Round-robin splits the requests
    evenly; queue-length keeps the paths' in-flight counts level, so by Little's law each path
    carries requests in proportion to 1 / its time in flight: ~10x more on the fast one. The
    slow path then holds fewer I/Os and the job completes more of them."""
    fio = {"Hosts": "h0", "Destinations": "t0"}
    job = {"iodepth": 16, "runtime": "10ms"}
    rr = lfsim.run(scenario("nvmeof_rdma", SLOW_B, {**fio, "PathSelector": "round-robin"}, job))
    ql = lfsim.run(scenario("nvmeof_rdma", SLOW_B, {**fio, "PathSelector": "queue-length"}, job))
    fast, slow = "h0/p0>t0/p0", "h0/p1>t0/p1"
    assert abs(paths(rr)[fast] - paths(rr)[slow]) <= 1
    assert paths(ql)[fast] > 5 * paths(ql)[slow] > 0
    assert ql.metrics["read_iops"] > 2 * rr.metrics["read_iops"]
    assert ql.metrics["read_lat_mean_us"] < rr.metrics["read_lat_mean_us"]


ONE_PATH = {"generator": "Star", "Hosts": 2}
TWO_TARGETS = {"generator": "Star", "Hosts": 3}


@pytest.mark.parametrize(
    ("stack", "topology", "fio", "queue", "limit"),
    [
        ("fcp", ONE_PATH, {"FcpStack.LunQueueDepth": 4}, "h0>h1:queue_depth", 4),
        ("nvmeof_rdma", ONE_PATH, {"NvmeofStack.QueueSize": 16}, "h0>h1:q0", 15),
        ("iscsi", ONE_PATH, {"IscsiStack.QueueDepth": 4}, "h0>h1:queue_depth", 4),
        ("iscsi", ONE_PATH, {"IscsiStack.CmdsMax": 20}, "h0>h1:cmds_max", 5),
        ("fcp", TWO_TARGETS, {"FcpStack.CanQueue": 6, "Destinations": "h1-h2"}, "h0:can_queue", 6),
    ],
    ids=[
        "fcp-queue_depth",
        "nvmeof-queue_size",
        "iscsi-queue_depth",
        "iscsi-cmds_max",
        "fcp-can_queue",
    ],
)
def test_a_host_queue_limit_holds_ios_at_the_host(stack, topology, fio, queue, limit):
    """32 I/Os outstanding (iodepth 32; 16 per target with two) against a host queue of
    `limit`: the queue fills and never overflows, the rest wait at the host, and their wait is
    part of their latency. Little's law, over the same window: IOPS x latency from submission
    = the 32 outstanding, IOPS x time past the host queue (latency - wait - the stack's own
    time) = the limit."""
    depth = 16 if "Destinations" in fio else 32
    own = {k: v for k, v in fio.items() if "." not in k}
    classes = {}
    for k, v in fio.items():
        if "." in k:
            cls, attr = k.split(".")
            classes.setdefault(cls, {})[attr] = v
    s = scenario(
        stack,
        topology,
        {"Hosts": "h0", "Destinations": "h1", **own},
        {"iodepth": depth, "runtime": "10ms"},
        **classes,
    )
    r = lfsim.run(s)
    m = r.metrics
    q = r.table("host_queues").set_index("label")
    assert q.loc[queue, "peak"] == q.loc[queue, "capacity"] == limit
    assert r.table("paths")["peak_in_flight"].max() <= limit
    assert m["host_wait_us"] > 0
    iops, lat = m["read_iops"], m["read_lat_mean_us"]
    assert iops * lat * 1e-6 == pytest.approx(32, rel=0.02)
    beyond = lat - m["host_wait_us"] - m["stack_delay_us"]
    assert iops * beyond * 1e-6 == pytest.approx(limit, rel=0.02)


@pytest.mark.parametrize("stack", STACKS)
def test_every_target_gets_the_ios_of_the_jobs_against_it(stack):
    """Two initiators x two targets: every job runs against every target (as fio with one job
    section per device), each of a fixed size, so each target's device serves exactly
    2 initiators x 2 clones x 50 I/Os, and no I/O is lost or served twice."""
    s = scenario(
        stack,
        {"generator": "Star", "Hosts": 4},
        {"Hosts": "h0-h1", "Destinations": "h2-h3"},
        {
            "rw": "randrw",
            "numjobs": 2,
            "iodepth": 4,
            "runtime": "0s",
            "ramp_time": "0s",
            "size": 50 * 4096,
        },
    )
    r = lfsim.run(s)
    targets = r.table("targets").set_index("label")["requests"]
    assert targets.to_dict() == {"h2": 200, "h3": 200}
    labels = r.labels("ios")
    assert len(labels) == 8 and sum(">h2" in x for x in labels) == 4
    ios = r.table("ios")
    per_target = ios["id"].map(lambda k: labels[int(k)].rsplit(">", 1)[1]).value_counts()
    assert per_target.to_dict() == {"h2": 200, "h3": 200}
    assert r.metrics["ios_submitted"] == r.metrics["ios_completed"] == 400


INCAST = {"generator": "Star", "Hosts": 9}


@pytest.mark.parametrize("stack", STACKS)
def test_an_incast_of_writes_is_lossless(stack):
    """Eight initiators write 64 KiB I/Os, 8 outstanding each, to one target port: the
    switch's port to the target is oversubscribed 8:1. RoCE (nvmeof_rdma, iscsi in the PFC
    class 3) pauses the senders with PFC and drops nothing; FC holds them back with BB_Credit
    and no receive buffer overruns. Without PFC the same switch drops (so the check can fail)."""
    fabric = STACKS[stack]
    small = {"RoceSwitch": {"BufferSize": 524288}} if fabric == "roce" else {}
    s = scenario(
        stack,
        INCAST,
        {"Hosts": "h1-h8", "Destinations": "h0"},
        {"rw": "write", "bs": 65536, "iodepth": 8, "runtime": "3ms", "ramp_time": "0s"},
        **small,
    )
    r = lfsim.run(s)
    m = r.metrics
    assert m["drops"] == 0
    assert m["write_ios"] > 0 and m["ios_submitted"] == m["ios_completed"]
    if fabric == "roce":
        assert m["pause_frames_sent"] > 0
        s["RoceSwitch"]["PfcEnabled"] = False
        assert lfsim.run(s).metrics["drops"] > 0
    else:
        assert m["buffer_overruns"] == 0
        assert max(m["credit_stall_us"]) > 0


@pytest.mark.parametrize("mode", ["nvmeof_roce", "fcp"])
def test_the_san_of_seed_000_runs_lossless_and_conserves_ios(mode):
    """scenarios/san_seed000.yaml: 3 servers x 4 paths (2 per fabric) to the array. Every
    I/O submitted completes once, every request is served once by the array, every path and
    both fabrics carry requests, nothing is dropped, and the closed loop holds the seed's 384
    threads (3 servers x 128), one I/O each; at the Linux defaults no host queue is full."""
    r = lfsim.run("san_seed000", {"mode": mode, "FioJob.runtime": "6ms"})
    m = r.metrics
    assert m["drops"] == 0
    if mode == "fcp":
        assert m["buffer_overruns"] == 0
    assert m["ios_submitted"] == m["ios_completed"] > 0 and m["ios_in_flight"] == 0
    p = paths(r)
    assert len(p) == 12 and min(p.values()) > 0
    assert sum(p.values()) == r.table("targets")["requests"].sum() == m["ios_completed"]
    plane_a = sum(v for k, v in p.items() if "/A>" in k)
    assert 0.45 < plane_a / sum(p.values()) < 0.55
    n = m["read_ios"] + m["write_ios"]
    lat = (m["read_lat_mean_us"] * m["read_ios"] + m["write_lat_mean_us"] * m["write_ios"]) / n
    assert (m["read_iops"] + m["write_iops"]) * lat * 1e-6 == pytest.approx(384, rel=0.03)
    assert m["host_wait_us"] == 0


def test_the_san_config_reruns_identically(tmp_path):
    """config.yaml keeps the listed graph (with the file lines of its links) and reruns to the
    same I/Os."""
    a = lfsim.run("san_seed000", {"mode": "fcp", "FioJob.runtime": "3ms"}, out=tmp_path / "a")
    b = lfsim.run(tmp_path / "a" / "config.yaml")
    assert a.metrics == b.metrics
    assert a.table("ios").equals(b.table("ios"))


def test_two_fio_workloads_keep_their_own_pairs_and_metrics():
    """Any initiator -> target pairs: one Fio workload per pair, h0 -> h2 over NVMe-oF and
    h1 -> h3 over iSCSI, each with its own (prefixed) metrics and tables, each target serving
    only its workload's I/Os; a target named by two workloads is refused."""
    s = {
        "fabric": "roce",
        "stop_time": "20ms",
        "topology": {"generator": "Star", "Hosts": 4, "HostSpeed": "25GbE"},
        "workload": {
            "a": {"pattern": "Fio", "Hosts": "h0", "Destinations": "h2"},
            "b": {"pattern": "Fio", "Hosts": "h1", "Destinations": "h3", "Stack": "iscsi"},
        },
        "FioJob": {"runtime": "0s", "ramp_time": "0s", "iodepth": 4, "size": 300 * 4096},
    }
    r = lfsim.run(s)
    m = r.metrics
    assert m["read_ios"] == m["b_read_ios"] == 300
    assert m["stack_depth"] == 6 and m["b_stack_depth"] == 7  # nvmeof_rdma, iscsi layers
    assert r.table("targets").set_index("label")["requests"].to_dict() == {"h2": 300}
    assert r.table("b_targets").set_index("label")["requests"].to_dict() == {"h3": 300}
    assert list(r.table("b_paths")["label"]) == ["h1>h3"]
    s["workload"]["b"]["Destinations"] = "h2"
    with pytest.raises(lfsim.ScenarioError, match="workload.b.Destinations: h2 is a target of "):
        lfsim.run(s)
