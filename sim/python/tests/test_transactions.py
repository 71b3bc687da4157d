"""The Transactions pattern: seed 000's GaussDB as sysbench and TPC-C transactions on hosts with
CPUs (scenarios/gaussdb_seed000.yaml), its closed loop, its I/Os and its bad input."""

import pytest

import lfsim

SHORT = {"workload.db.Duration": "20ms", "workload.db.WarmupTime": "8ms", "stop_time": "30ms"}
SYSBENCH_TRIPS = 20  # BEGIN, 18 statements, COMMIT


@pytest.mark.parametrize("mode", ["sysbench_roce", "sysbench_fc"])
def test_sysbench_closed_loop_of_384_threads(mode):
    r = lfsim.run("gaussdb_seed000", {"mode": mode, **SHORT})
    m = r.metrics
    txns = r.table("transactions")
    labels = r.labels("transactions")
    conns = {labels[int(i)] for i in txns["id"]}
    assert len(conns) == 384 and all("/conn" in c for c in conns)  # 3 servers x 128 threads
    # Little's law for a closed loop without think time: threads = TPS x latency.
    assert m["tps"] * m["txn_lat_mean_us"] / 1e6 == pytest.approx(384, rel=0.03)
    assert m["qps"] == pytest.approx(SYSBENCH_TRIPS * m["tps"])
    # All cached (MissRatio 0): the array sees WAL flushes and page writes only.
    assert m["read_ios"] == 0 and m["write_ios"] > 0
    assert m["commits_per_flush"] > 1  # group commit
    assert m["drops"] == 0 and m["txn_errors"] == 0
    assert 0 < m["cpu_util"] < 1 and len(r.labels("cpu")) == 3 * 64


def test_tpcc_reports_new_orders_per_second():
    r = lfsim.run("gaussdb_seed000", {"mode": "tpcc_roce", **SHORT})
    m = r.metrics
    txns = r.table("transactions")
    names = r.labels("transaction_types")
    assert names == ["new_order", "payment", "order_status", "delivery", "stock_level"]
    counted = txns[(txns["end_ns"] >= 8e6) & (txns["end_ns"] <= 20e6)]
    new_orders = (counted["type"] == names.index("new_order")).sum()
    # Per second like every rate (TPC-C's tpmC is this times 60).
    assert m["new_order_tps"] == pytest.approx(new_orders / 12e-3)
    # The mix's weights: 45 % new orders, within 5 standard deviations.
    n = len(counted)
    assert abs(new_orders / n - 0.45) < 5 * (0.45 * 0.55 / n) ** 0.5


def test_misses_read_pages_of_pagesize():
    r = lfsim.run(
        "gaussdb_seed000",
        {"mode": "sysbench_roce", **SHORT, "workload.db.MissRatio": 0.1},
    )
    ios = r.table("ios")
    reads = ios[ios["read"] > 0]
    assert len(reads) > 0 and (reads["bytes"] == 8192).all()
    # 45 pages touched per sysbench transaction.
    assert r.metrics["page_reads_per_txn"] == pytest.approx(4.5, rel=0.1)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--set", "workload.db.Mix=a: weight=50 point_select=1"],
            "workload.db.Mix: weights sum to 50; accepted: weights summing to 100",
        ),
        (
            ["--set", "workload.db.Mix=a: weight=100 selects=3"],
            "workload.db.Mix: got 'selects=3' in type a; accepted: 'name: weight=W",
        ),
        (
            ["--set", "workload.db.Mix=a: weight=100 insert=1; a: weight=0 insert=1"],
            "workload.db.Mix: got 'a: weight=0 insert=1'; accepted: 'name: weight=W",
        ),
        (
            ["--set", "workload.db.Threads=0"],
            "workload.db.Threads: got '0'; accepted: an integer in 1..65536",
        ),
        (
            ["--set", "workload.db.MissRatio=1.5"],
            "workload.db.MissRatio: got '1.5'; accepted: a number in 0..1",
        ),
        (
            ["--set", "workload.db.StatementCpu=50"],
            "workload.db.StatementCpu: got '50'; accepted: a time >= 0 with a unit",
        ),
        (
            ["--set", "workload.db.WarmupTime=210ms"],
            "workload.db.WarmupTime: got '210ms'; accepted: a time shorter than Duration (200ms)",
        ),
        (
            ["--set", "HostCpu.Cores=0"],
            "HostCpu.Cores: got '0'; accepted: an integer in 1..4096",
        ),
    ],
    ids=lambda x: " ".join(x)[:40],
)
def test_bad_input_is_one_line_exit_2(refused, args, expected):
    refused("run", "gaussdb_seed000", *args, expected=expected)


def test_the_storage_doc_example_runs(tmp_path):
    """The Transactions example of models/storage/doc/storage.md, as written."""
    from lfsim.paths import REPO_ROOT

    doc = (REPO_ROOT / "models/storage/doc/storage.md").read_text()
    section = doc.split("## Transactions (`pattern: Transactions`)", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "db.yaml"
    path.write_text("description: the storage doc's Transactions example\n" + block)
    m = lfsim.run(str(path)).metrics
    assert m["tps"] > 0 and m["page_reads_per_txn"] > 0 and m["txn_errors"] == 0
    assert m["tps"] * m["txn_lat_mean_us"] / 1e6 == pytest.approx(3 * 128, rel=0.05)
