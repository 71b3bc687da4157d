"""perftest: the reader against the real outputs (values read from the files by hand), perftest's
report arithmetic on hand-made times, and the simulated benchmark against closed forms.

Closed forms used below (RoCEv2 over Ethernet, IBTA Annex 17 and 802.3): a data packet of p
payload bytes takes p + 82 line bytes (preamble+SFD 8, Ethernet 14, IPv4 20, UDP 8, BTH 12,
ICRC 4, FCS 4, inter-frame gap 12), an RDMA WRITE's first packet 16 more (RETH).
"""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lfsim
import lfsim.traces
from lfsim.errors import ScenarioError
from lfsim.paths import validation_dir
from lfsim.scenario import time_seconds
from lfsim.traces import perftest as pt

DATA = validation_dir() / "data" / "traces" / "perftest"


def test_cx5_write_bw_header_and_row_as_printed():
    r = pt.read_perftest(DATA / "cx5-100g-baremetal-write-bw-mtu1024.txt")
    assert (r.verb, r.test, r.tool) == ("write", "bw", "ib_write_bw")
    assert r.device == "mlx5_0" and r.link_type == "Ethernet" and r.transport == "IB"
    assert r.connection == "RC" and r.qps == 1 and r.mtu == 1024 and r.tx_depth == 128
    assert r.cq_moderation == 100 and r.max_inline == 0 and r.rdma_cm
    assert r.header["GID index"] == "3" and r.header["Data ex. method"] == "rdma_cm"
    assert r.command == "ib_write_bw -d mlx5_0 10.0.32.34 -zR"
    assert r.units == "MB/sec" and r.duration_s is None
    row = r.results.iloc[0]
    assert (row["bytes"], row["iterations"]) == (65536, 5000)
    assert (row["bw_peak"], row["bw_avg"], row["msg_rate_Mpps"]) == (11023.87, 11023.48, 0.176376)
    # The CPU frequency line inside the table is skipped and said so.
    assert any("Conflicting CPU frequency" in w for w in r.warnings)
    # MB/sec is 2^20 bytes: 11023.48 MB/s is 92.47 Gb/s.
    assert r.bw_gbps().iloc[0] == pytest.approx(11023.48 * 2**20 * 8 / 1e9)


def test_cx5_latency_rows_as_printed():
    r = pt.read_perftest(DATA / "cx5-100g-baremetal-read-lat-mtu1024.txt")
    assert (r.verb, r.test, r.tx_depth, r.outstanding_reads, r.max_inline) == (
        "read", "lat", 1, 16, None,
    )  # fmt: skip
    row = r.results.iloc[0].to_dict()
    assert row == {
        "bytes": 2, "iterations": 1000, "t_min_us": 2.36, "t_max_us": 5.23,
        "t_typical_us": 2.40, "t_avg_us": 2.41, "t_stdev_us": 0.03, "p99_us": 2.53,
        "p99_9_us": 5.23,
    }  # fmt: skip
    w = pt.read_perftest(DATA / "cx5-100g-baremetal-send-lat-mtu1024.txt")
    assert w.max_inline == 236 and w.results["t_typical_us"].iloc[0] == 1.34


def test_duration_runs_and_several_qps_and_gbits():
    b = pt.read_perftest(DATA / "broadcom-bnxt_re-400g-ib_write_bw-3qp.txt")
    assert b.device == "bnxt_re0" and b.qps == 3 and b.cq_moderation == 1
    assert b.header["PCIe relax order"] == "ON" and b.header["ibv_wr* API"] == "OFF"
    assert b.duration_s == 10.0 and b.units == "Gb/sec" and b.report_gbits
    row = b.results.iloc[0]
    assert (row["iterations"], row["bw_peak"], row["bw_avg"]) == (4159603, 0.0, 363.47)
    assert any("peak printed as 0" in w for w in b.warnings)
    assert b.bw_gbps().iloc[0] == 363.47


def test_the_anomalous_read_run_is_read_as_printed_and_named():
    r = pt.read_perftest(DATA / "cx5-100g-baremetal-read-bw-mtu1024.txt")
    row = r.results.iloc[0]
    assert (row["bw_peak"], row["bw_avg"], row["msg_rate_Mpps"]) == (10182.70, 24.95, 0.000399)
    assert any("408 x the average" in w and "anomalous" in w for w in r.warnings)


def test_intel_e810_header_without_rdma_cm():
    r = pt.read_perftest(DATA / "intel-e810-irdma-ib_write_bw-mtu1024.txt")
    assert r.device == "irdma1" and not r.rdma_cm and r.header["Data ex. method"] == "Ethernet"
    assert r.results["bw_avg"].iloc[0] == 1103.38 and r.warnings == []


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("hello\n", "has no perftest title line"),
        ("                    RDMA_Write BW Test\n Mtu : 1024[B]\n---\n", "has no result table"),
        ("   Send BW Test\n---\n #bytes #iterations BW peak[MB/sec]\n---\n", "without rows"),
    ],
)
def test_not_perftest_is_one_line_naming_the_key(tmp_path, text, needle):
    p = tmp_path / "x.txt"
    p.write_text(text)
    with pytest.raises(ScenarioError, match=needle) as e:
        pt.read_perftest(p, "HW")
    assert str(e.value).startswith("HW: ")
    with pytest.raises(ScenarioError, match="HW: no such file"):
        pt.read_perftest(tmp_path / "missing.txt")


# ---------------------------------------------------------------------------------------------
# perftest's arithmetic, on times made by hand.


def test_bw_average_and_peak_by_hand():
    # 4 messages of 1 MiB: posted at 0, 1, 2, 3 us, completed at 10, 12, 13, 20 us.
    t = pd.DataFrame({"qp": 0, "post_ns": [0, 1000, 2000, 3000],
                      "done_ns": [10000, 12000, 13000, 20000]})  # fmt: skip
    r = pt.report_from_table(t, "write", "bw", 2**20, cq_mod=1)
    # average: 4 MiB over 20 us = 209715.2 MB/s (2^20 bytes); message rate 0.2 Mpps
    assert r["bw_avg"] == pytest.approx(4 / 20e-6)
    assert r["msg_rate_Mpps"] == pytest.approx(0.2)
    # peak: min over i <= j of (done[j] - post[i]) / (j - i + 1); i=0: 10, 6, 4.33, 5;
    # i=1: 11, 6, 6.33; i=2: 11, 9; i=3: 17 -> 13 us / 3 (i=0, j=2)
    assert r["bw_peak"] == pytest.approx(3 / 13e-6)
    # With a completion signalled every 2 (cq_mod 2) only j = 1, 3 count: i=0: 6, 5;
    # i=1: 11, 6.33; i=2: 9; i=3: 17 -> 5 us (i=0, j=3)
    r2 = pt.report_from_table(t, "write", "bw", 2**20, cq_mod=2)
    assert r2["bw_peak"] == pytest.approx(1 / 5e-6)
    g = pt.report_from_table(t, "write", "bw", 2**20, cq_mod=1, gbits=True)
    assert g["bw_avg"] == pytest.approx(4 * 2**20 * 8 / 20e-6 / 1e9)


def test_latency_statistics_by_hand():
    # Posts 2 us apart except four: round trips (ping-pong) of 2.0 x 10, then 3, 4, 10, 20 us.
    gaps = [2000] * 10 + [3000, 4000, 10000, 20000]
    post = np.concatenate(([0], np.cumsum(gaps)))
    t = pd.DataFrame({"qp": 0, "post_ns": post, "done_ns": post + 1})
    r = pt.report_from_table(t, "write", "lat", 2)
    # one-way = gap / 2: sorted 1 x 10, 1.5, 2, 5, 10; the 2 largest dropped -> 12 kept
    assert r["iterations"] == 15
    assert r["t_min_us"] == 1.0
    assert r["t_max_us"] == 5.0  # delta[measure_cnt]: the first one dropped
    assert r["t_typical_us"] == 1.0  # 12 values: (d[6] + d[5]) / 2 = 1
    kept = [1.0] * 10 + [1.5, 2.0]
    assert r["t_avg_us"] == pytest.approx(np.mean(kept))
    assert r["t_stdev_us"] == pytest.approx(np.std(kept))
    assert r["p99_us"] == 5.0 and r["p99_9_us"] == 5.0  # ceil(12 x 0.99) = 12
    # A READ's latency is the whole interval (no round-trip halving).
    assert pt.report_from_table(t, "read", "lat", 2)["t_min_us"] == 2.0


def test_report_is_read_back_by_the_reader():
    run = pt.PerftestRun(path="x", verb="send", test="bw", command="ib_send_bw -s 4096")
    run.header = {"Number of qps": "2", "Mtu": "1024[B]", "TX depth": "64", "CQ Moderation": "100"}
    run.results = pd.DataFrame([{"bytes": 4096, "iterations": 100, "bw_peak": 9000.5,
                                 "bw_avg": 8000.25, "msg_rate_Mpps": 2.048064}])  # fmt: skip
    back = pt.parse_perftest(pt.format_report(run))
    assert (back.verb, back.test, back.qps, back.tx_depth, back.mtu) == ("send", "bw", 2, 64, 1024)
    assert back.results.iloc[0].to_dict() == {
        "bytes": 4096, "iterations": 100, "bw_peak": 9000.5, "bw_avg": 8000.25,
        "msg_rate_Mpps": 2.048064,
    }  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The simulated benchmark (the real core).


def _line_bytes(payload):
    return payload + 82


def test_write_bw_is_the_links_framing_limit():
    # 64 KiB WRITEs at MTU 1024: 64 packets, the first with a RETH; at 100 Gb/s with 128
    # outstanding the link never idles, so the average is the framing limit (minus the first
    # message's latency over 300 messages).
    p = pt.PerftestParams(verb="write", test="bw", sizes=[65536], iterations=300)
    run, results = pt.simulate(p)
    per_msg = 64 * _line_bytes(1024) + 16
    limit = 65536 / (per_msg * 8 / 100e9) / 2**20
    bw = run.results["bw_avg"].iloc[0]
    assert bw < limit and bw == pytest.approx(limit, rel=0.01)
    t = results[0].table("perftest")
    assert len(t) == 300 and (t["done_ns"] > t["post_ns"]).all()
    # TX depth: never more than 128 posted and not completed
    post, done = np.sort(t["post_ns"].to_numpy()), np.sort(t["done_ns"].to_numpy())
    outstanding = np.searchsorted(post, post, "right") - np.searchsorted(done, post, "right")
    assert outstanding.max() == 128


def test_send_bw_with_several_qps_shares_the_link():
    p = pt.PerftestParams(verb="send", test="bw", sizes=[8192], iterations=200, qps=3,
                          tx_depth=16)  # fmt: skip
    run, results = pt.simulate(p)
    t = results[0].table("perftest")
    assert sorted(t.groupby("qp").size()) == [200, 200, 200]
    limit = 8192 / (8 * _line_bytes(1024) * 8 / 100e9) / 2**20  # SEND: no RETH
    assert run.results["bw_avg"].iloc[0] == pytest.approx(limit, rel=0.02)
    assert run.results["iterations"].iloc[0] == 600


def _propagation() -> float:
    """One cable's delay in the perftest scenario (RoceChannel: length x delay per metre)."""
    ch = lfsim.load_scenario("perftest").config["RoceChannel"]
    return float(ch["Length"]) * time_seconds(str(ch["PropagationDelayPerMeter"]))


def _lat(verb, overrides=None, topology="b2b", size=2):
    p = pt.PerftestParams(verb=verb, test="lat", sizes=[size], iterations=50, topology=topology,
                          overrides=overrides or {})  # fmt: skip
    zero = {f"RdmaNic.{a}": "0ns" for a in ("DoorbellLatency", "WqeFetchLatency",
            "DmaReadLatency", "DmaWriteLatency", "CompletionWriteLatency")}  # fmt: skip
    p.overrides = {**zero, **p.overrides}
    run, _ = pt.simulate(p)
    return run.results.iloc[0]


def test_write_ping_pong_on_a_bare_cable_is_the_wire_time():
    # Back to back, no NIC latency: each side answers as soon as the last bit of the other's
    # WRITE is in, but its NIC has already queued the ACK of that WRITE, which goes first. One
    # way = the ACK on the line with its gap (preamble+SFD 8, Ethernet 14, IPv4 20, UDP 8, BTH
    # 12, AETH 4, ICRC 4, FCS 4, gap 12: 86 B), then the 2 B WRITE_ONLY up to its last bit
    # (payload 2, pad 2, RETH 16 + 82 - gap 12: 90 B), then the cable.
    one_way = (86 + 90) * 8 / 100e9 + _propagation()
    r = _lat("write")
    assert r["t_typical_us"] == pytest.approx(one_way * 1e6, abs=1e-6)
    assert r["t_max_us"] == pytest.approx(one_way * 1e6, abs=1e-6)
    # The first round trip has one ACK less ahead of it (the client had nothing to acknowledge)
    first = ((86 + 90 + 90) * 8 / 100e9 + 2 * _propagation()) / 2
    assert r["t_min_us"] == pytest.approx(first * 1e6, abs=1e-6)


@pytest.mark.parametrize(
    ("verb", "attribute", "factor"),
    [
        # ping-pong: each side's post waits the doorbell: the round trip grows by 2 x, one
        # way (printed) by 1 x
        ("write", "DoorbellLatency", 1.0),
        ("send", "DoorbellLatency", 1.0),
        # the server and client see a WRITE's data DmaWriteLatency after it arrived
        ("write", "DmaWriteLatency", 1.0),
        # a SEND's receive completion, and a READ's completion at the client
        ("send", "CompletionWriteLatency", 1.0),
        ("read", "CompletionWriteLatency", 1.0),
        # a READ WQE (not inline) is fetched; the DMA read is the responder's, not the post's
        ("read", "WqeFetchLatency", 1.0),
        ("read", "DmaReadLatency", 0.0),
        # 2 B WRITEs not inline (MaxInlineData 0): fetched and read from host memory
        ("write", "WqeFetchLatency", 1.0),
        ("write", "DmaReadLatency", 1.0),
    ],
)
def test_each_nic_latency_adds_where_it_belongs(verb, attribute, factor):
    # From 300 ns to 1000 ns: with a latency before each answer, the NIC's ACK of the message
    # just received is on the line before the answer is, in both runs (at 0 the answer waits
    # behind it: test_write_ping_pong_on_a_bare_cable_is_the_wire_time).
    ack_gone = {"RdmaNic.DoorbellLatency": "300ns"} if attribute != "DoorbellLatency" else {}
    base = _lat(verb, {**ack_gone, f"RdmaNic.{attribute}": "300ns"})["t_typical_us"]
    more = _lat(verb, {**ack_gone, f"RdmaNic.{attribute}": "1000ns"})["t_typical_us"]
    assert more - base == pytest.approx(0.7 * factor, abs=1e-6)


def test_inline_data_skips_the_fetch_and_the_dma_read():
    slow = {"RdmaNic.WqeFetchLatency": "500ns", "RdmaNic.DmaReadLatency": "300ns",
            "RdmaNic.DoorbellLatency": "300ns"}  # fmt: skip
    inline = _lat("write", {**slow, "RdmaNic.MaxInlineData": 220})["t_typical_us"]
    fetched = _lat("write", slow)["t_typical_us"]
    assert fetched - inline == pytest.approx(0.8, abs=1e-6)
    plain = _lat("write", {"RdmaNic.DoorbellLatency": "300ns"})["t_typical_us"]
    assert inline == pytest.approx(plain, abs=1e-6)
    # 221 B is above MaxInlineData 220: fetched and read again
    big = _lat("write", {**slow, "RdmaNic.MaxInlineData": 220}, size=221)["t_typical_us"]
    small = _lat("write", {**slow, "RdmaNic.MaxInlineData": 221}, size=221)["t_typical_us"]
    assert big - small == pytest.approx(0.8, abs=1e-6)


def test_a_switch_adds_its_forwarding_latency_and_a_second_serialization():
    quiet = {"RdmaNic.DoorbellLatency": "300ns"}  # the ACKs are out of the way (see above)
    direct = _lat("write", quiet)["t_typical_us"]
    switched = _lat("write", quiet, topology="switch")["t_typical_us"]
    cfg = lfsim.load_scenario("perftest").config
    fwd = time_seconds(str(cfg["RoceSwitch"]["ForwardingLatency"]))
    ser = (2 + 2 + 16 + 82 - 12) * 8 / 100e9
    assert switched - direct == pytest.approx((fwd + _propagation() + ser) * 1e6, abs=1e-6)


def test_bad_perftest_settings_are_refused():
    for kw, needle in (
        ({"verb": "atomic"}, "verb: got 'atomic'"),
        ({"topology": "ring"}, "--topology: got 'ring'"),
        ({"mtu": 1500}, "-m: got '1500'"),
        ({"test": "lat", "qps": 2}, "-q: got 2 with a latency test"),
    ):
        with pytest.raises(ScenarioError, match=needle):
            pt.PerftestParams(**kw).check()
    with pytest.raises(ScenarioError, match="Messages"):
        pt.simulate(pt.PerftestParams(test="lat", sizes=[2], iterations=1))


def test_bw_values_are_finite_for_every_verb():
    for verb in ("write", "read", "send"):
        run, _ = pt.simulate(pt.PerftestParams(verb=verb, sizes=[4096], iterations=50))
        assert math.isfinite(run.results["bw_avg"].iloc[0]) and run.results["bw_avg"].iloc[0] > 0


SYNTHETIC = Path(__file__).parent / "data" / "perftest" / "synthetic-cx7-400g-a-8qp.txt"


def test_a_400g_sweep_with_8_qps_is_simulated_to_its_end_and_warned_about():
    """Issue 40 item 8: an -a sweep's printed iterations (5000 per QP per size, 8 QPs) made
    each size simulate 5000 x 8 messages: 2 MiB ones took 6.7 s of 100GbE, past stop_time, and
    the comparison stopped with 'did not finish'. A sweep is now simulated per size for what
    moves 64 MiB per QP (its steady-state average), and its run is bounded by the work, not 5 s.
    Compared at the default 100GbE, the 390 Gb/s the file measured is said to exceed the link."""
    cmp = lfsim.traces.compare_perftest_file(SYNTHETIC)
    rows = {(r.item, r.metric): r for r in cmp.rows}
    assert {("1048576", "BW average"), ("2097152", "BW average")} <= set(rows)
    # 100GbE's goodput for 2 MiB writes at MTU 4096: the link, not the file, bounds it.
    assert 95 < rows[("2097152", "BW average")].sim < 100
    assert any("more than the simulated link's 100 Gb/s" in w for w in cmp.warnings)


def test_the_link_rate_a_file_states_is_the_simulated_one(tmp_path):
    """ibstat's port block pasted above the output ("Rate: 400") sets the simulated link when
    --speed is not given; the bandwidth then matches a 400GbE link, with no rate warning."""
    f = tmp_path / "with-ibstat.txt"
    ibstat = "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tRate: 400\n\t\tLink layer: Ethernet\n"
    f.write_text(ibstat + SYNTHETIC.read_text())
    assert pt.read_perftest(f).link_rate_gbps == 400
    cmp = lfsim.traces.compare_perftest_file(f)
    avg = next(r for r in cmp.rows if r.item == "2097152" and r.metric == "BW average")
    assert 385 < avg.sim < 400
    assert any("link rate the file states, 400 Gb/s" in w for w in cmp.warnings)
    assert not any("more than the simulated link" in w for w in cmp.warnings)
    # ibv_devinfo -v: 4 lanes of 25 Gb/s.
    g = tmp_path / "with-devinfo.txt"
    g.write_text("\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t25.0 Gbps (32)\n"
                 + SYNTHETIC.read_text())  # fmt: skip
    assert pt.read_perftest(g).link_rate_gbps == 100
