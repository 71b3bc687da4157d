"""The faults timeline (issue 19): `faults:` schedules link failures and losses on any link of
any open fabric; every frame lost is counted by reason, and what is sent equals what arrives
plus what was lost, per direction."""

import copy
import json
import math

import pytest
from conftest import run_cli

import lfsim

# One 1 MB RDMA WRITE over a single 25GbE cable: 245 data frames, 245 ACKs, no switch.
ROCE = {
    "fabric": "roce",
    "stop_time": "20ms",
    "Report": {"Warmup": "0s"},
    "topology": {"generator": "PointToPoint", "HostSpeed": "25GbE"},
    "workload": {
        "w": {
            "pattern": "Flows",
            "flows": [{"src": "h0", "dst": "h1", "size": 1000000, "start": "0s", "messages": 1}],
        }
    },
}


def _with(faults, base=ROCE, **over):
    s = copy.deepcopy(base)
    s["faults"] = faults
    s.update(over)
    return lfsim.run(s)


def _conserved(r) -> None:
    """Per direction of the one cable: frames sent = frames received + frames lost."""
    ports = r.table("ports").set_index("label")
    lost = r.table("link_faults").iloc[0]
    lost_total = sum(lost[c] for c in lost.index if c.startswith("lost_"))
    sent = ports["frames_tx"].sum()
    received = ports["frames_rx"].sum()
    assert sent == received + lost_total


@pytest.fixture(scope="module")
def clean():
    return lfsim.run(ROCE)


def test_no_fault_no_loss(clean):
    m = clean.metrics
    assert m["flows_completed"] == 1 and "link_faults" not in clean.table_names
    ports = clean.table("ports").set_index("label")
    assert ports.loc["h0", "frames_tx"] == ports.loc["h1", "frames_rx"]


def test_link_down_loses_everything_in_its_window_and_rc_recovers(clean):
    r = _with([{"at": "100us", "what": "link_down", "where": "h0-h1", "until": "200us"}])
    m = r.metrics
    assert m["flows_completed"] == 1  # go-back-N retransmission after the link came back
    assert m["fault_lost_link_down"] > 0
    assert m["fault_lost_drop_every"] == m["fault_lost_drop_random"] == 0
    assert m["fault_lost_bit_error"] == 0
    # 100 us of 25 Gb/s is about 75 frames of 4178 B on the line: all lost, both directions.
    assert 60 <= m["fault_lost_link_down"] <= 100
    assert m["fct_mean_us"] >= clean.metrics["fct_mean_us"] + 100
    assert m["retransmitted_packets"] > 0
    _conserved(r)


def test_drop_every_n_loses_exactly_every_nth_frame_per_direction():
    n = 50
    r = _with([{"at": "0s", "what": "drop", "where": "h1-h0", "every": n}])
    ports = r.table("ports").set_index("label")
    expected = sum(math.floor(ports.loc[h, "frames_tx"] / n) for h in ("h0", "h1"))
    assert r.metrics["fault_lost_drop_every"] == expected > 0
    assert r.metrics["flows_completed"] == 1
    _conserved(r)


def test_a_flap_goes_down_count_times():
    # Down for 50 us at 100, 200 and 300 us: three windows of losses.
    flap = [{"at": "100us", "what": "link_flap", "where": "h0-h1", "period": "100us",
             "count": 3}]  # fmt: skip
    down = [
        {"at": f"{t}us", "what": "link_down", "where": "h0-h1", "until": f"{t + 50}us"}
        for t in (100, 200, 300)
    ]
    a, b = _with(flap), _with(down)
    assert a.metrics["fault_lost_link_down"] == b.metrics["fault_lost_link_down"] > 0
    assert a.metrics["fct_mean_us"] == b.metrics["fct_mean_us"]
    _conserved(a)


def test_a_bit_error_rate_of_one_loses_every_frame_while_it_lasts(clean):
    r = _with([{"at": "0s", "what": "ber", "where": "h0-h1", "rate": 1, "until": "50us"}])
    m = r.metrics
    assert m["fault_lost_bit_error"] > 0 and m["flows_completed"] == 1
    _conserved(r)


def test_random_losses_follow_the_bit_error_rate_and_the_seed():
    # 2e-6 per bit: a 4178-byte data frame is lost with p = 1 - (1 - 2e-6)^(8 x 4178) = 6.5 %.
    fault = [{"at": "0s", "what": "ber", "where": "h0-h1", "rate": 2e-6}]
    a, b = _with(fault), _with(fault)
    assert a.metrics == b.metrics  # same seed, same losses
    c = _with(fault, seed=2)
    assert c.metrics["fault_lost_bit_error"] != a.metrics["fault_lost_bit_error"]
    ports = a.table("ports").set_index("label")
    data = ports.loc["h0", "frames_tx"]
    p = -math.expm1(8 * 4178 * math.log1p(-2e-6))
    lost_data = a.metrics["fault_lost_bit_error"]  # ACKs (< 100 B) are lost 50x less often
    sigma = math.sqrt(data * p * (1 - p))
    assert abs(lost_data - data * p) < 4 * sigma + 2
    _conserved(a)


def test_drop_with_a_probability():
    r = _with([{"at": "0s", "what": "drop", "where": "h0-h1", "probability": 0.05}])
    assert r.metrics["fault_lost_drop_random"] > 0 and r.metrics["flows_completed"] == 1
    _conserved(r)


def test_fc_link_down_discards_and_link_initialization_restores_the_credit():
    # While its link is down a port is in the link failure state: it discards the frames it
    # holds and those given to it (nothing waits for credit that cannot come back). When the
    # link returns, both ends start again from the login BB_Credit and the flow resumes.
    fault = "[{at: 500us, what: link_down, where: h0-h1, until: 1ms}]"
    over = {"stop_time": "4ms", "Report.Warmup": "0s"}
    m = lfsim.run("fc_distance", {**over, "faults": fault}).metrics
    # The fault counters count control words (R_RDY) too; the FC counters split them.
    assert m["fault_lost_link_down"] == m["frames_lost"] + m["primitives_lost"] > 0
    assert m["frames_discarded_link_down"] > 0
    assert m["stall"] is False and m["credit_overflows"] == 0
    forever = "[{at: 500us, what: link_down, where: h0-h1}]"
    down = lfsim.run("fc_distance", {**over, "faults": forever}).metrics
    clean = lfsim.run("fc_distance", over).metrics
    key = next(k for k in m if k.endswith("throughput_MiBps"))
    # Down for 0.5 ms of 4 ms, a link 1 ms round trip or so long: between the two.
    assert down[key] < m[key] < clean[key]


def test_faults_come_from_set_too(tmp_path):
    text = "[{at: 100us, what: link_down, where: h0-h1, until: 200us}]"
    p = run_cli("run", "fc_distance", "--set", "stop_time=2ms", "--set", "Report.Warmup=0s",
                "--set", f"faults={text}", "--out", "o", "--quiet", cwd=tmp_path)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "o" / "link_faults.csv").is_file()


@pytest.mark.parametrize(
    ("fault", "expect"),
    [
        ("{at: 0s, what: melt, where: h0-h1}", "faults[0].what: got 'melt'; accepted: link_down"),
        ("{at: 0s, what: link_down, where: h0-h7}", "faults[0].where: got 'h0-h7'; accepted: "),
        ("{at: 0s, what: link_down, where: h0}", "faults[0].where: got 'h0'"),
        ("{at: 2ms, what: link_down, where: h0-h1, until: 1ms}", "faults[0].until: got '1ms'"),
        ("{at: 0s, what: drop, where: h0-h1}", "give every or probability"),
        ("{at: 0s, what: drop, where: h0-h1, probability: 2}", "faults[0].probability: got '2'"),
        ("{at: 0s, what: link_flap, where: h0-h1, count: 2}", "faults[0].period: missing"),
        ("{at: 0s, what: ber, where: h0-h1, rate: -1}", "faults[0].rate: got '-1'"),
        ("{at: 0s, what: link_down, where: h0-h1, colour: red}", "faults: got"),
        ("{at: soon, what: link_down, where: h0-h1}", "faults: got"),
    ],
)
def test_a_bad_fault_is_one_line_naming_its_key(tmp_path, fault, expect):
    p = run_cli("run", "fc_distance", "--set", "stop_time=2ms", "--set", "Report.Warmup=0s",
                "--set", f"faults=[{fault}]", "--out", "o", cwd=tmp_path)  # fmt: skip
    assert p.returncode == 2, p.stdout + p.stderr
    assert len(p.stderr.splitlines()) == 1 and expect in p.stderr, p.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_fabric_that_builds_its_own_network_takes_no_faults(tmp_path):
    fault = "faults=[{at: 0s, what: link_down, where: a-b}]"
    p = run_cli("run", "iscsi_burst", "--set", fault, "--out", "o", cwd=tmp_path)
    assert p.returncode == 2 and "faults: fabric " in p.stderr, p.stderr


def test_lost_r_rdys_take_credits_and_bb_sc_gives_them_back():
    storm = "[{at: 500us, what: lose_r_rdy, where: sw0-h1, every: 3, until: 3ms}]"
    plain = lfsim.run("fc_incast", {"stop_time": "5ms", "faults": storm}).metrics
    assert plain["fault_lost_r_rdy"] == plain["primitives_lost"] > 0
    assert plain["credits_recovered"] == 0
    assert plain["credits_lost"] == plain["fault_lost_r_rdy"]  # one credit per lost R_RDY
    assert plain["stall"] is True and plain["stall_queue"] == "h1"  # its credits ran out
    bbsc = lfsim.run("fc_incast", {"stop_time": "5ms", "faults": storm, "FcNetDevice.BbScN": 2})
    m = bbsc.metrics
    # BB_SC (FC-FS-3): every lost R_RDY is found by the BB_SCr count and its credit restored.
    assert m["credits_recovered"] == m["fault_lost_r_rdy"] == m["credits_lost"] > 0
    assert m["stall"] is False


def test_a_pfc_storm_pauses_the_switch_port_until_it_ends():
    # h0's NIC pauses its port from 1 to 4 ms, refreshing the 65535-quanta pause at half its
    # length (1.34 ms at 25GbE... here ~0.67 ms): leaf0's port toward h0 cannot send, the
    # stall is named, and the rest of the fabric keeps going.
    fault = "[{at: 1ms, what: pfc_storm, where: h0, until: 4ms}]"
    r = lfsim.run("incast", {"mode": "pfc", "stop_time": "6ms", "faults": fault})
    m = r.metrics
    clean = lfsim.run("incast", {"mode": "pfc", "stop_time": "6ms"}).metrics
    half = 0xFFFF // 2 * 512 / 25e9  # seconds between refreshes
    assert m["pfc_storm_pauses_sent"] == math.ceil(3e-3 / half)
    assert m["stall"] is True and m["stall_queue"].startswith("leaf0/")
    assert m["stall_since_us"] == pytest.approx(1000, abs=1)
    assert m["total_goodput_Gbps"] < clean["total_goodput_Gbps"]
    assert m["drops"] == 0


def test_a_node_down_takes_all_its_links():
    fault = [{"at": "100us", "what": "node_down", "where": "h1", "until": "200us"}]
    a = _with(fault)
    b = _with([{"at": "100us", "what": "link_down", "where": "h0-h1", "until": "200us"}])
    assert a.metrics["fault_lost_link_down"] == b.metrics["fault_lost_link_down"] > 0


@pytest.mark.parametrize(
    ("fault", "expect"),
    [
        ("{at: 0s, what: lose_r_rdy, where: h0-h1, every: 2}", "lose_r_rdy: fc only"),
        ("{at: 0s, what: pfc_storm, where: h9}", "faults[0].where: got 'h9'"),
    ],
)
def test_a_fault_the_fabric_does_not_have_is_refused(tmp_path, fault, expect):
    s = copy.deepcopy(ROCE)
    (tmp_path / "s.yaml").write_text(__import__("yaml").safe_dump(s))
    p = run_cli("run", "s.yaml", "--set", f"faults=[{fault}]", "--out", "o", cwd=tmp_path)
    assert p.returncode == 2 and expect in p.stderr, p.stderr


@pytest.mark.parametrize("ber", [1e-6, 1e-5])
def test_fc_bit_errors_hit_every_bit_of_a_frame(ber):
    # 2GFC, 8b/10b: a full frame is 2148 B on the line, 21,480 line bits; it is lost with
    # p = 1 - (1 - ber)^21480 (1e-6: 2.1 %, 1e-5: 19.3 %). It used to be only the SOF's 40.
    r = lfsim.run(
        "fc_distance",
        {"stop_time": "20ms", "Report.Warmup": "0s", "FcChannel.BitErrorRate": ber,
         "FcNetDevice.BbScN": 2},
    )  # fmt: skip
    sent = r.table("ports")["frames_tx"].sum()
    p = -math.expm1(21480 * math.log1p(-ber))
    lost = r.metrics["frames_lost"]
    assert abs(lost - sent * p) < 4 * math.sqrt(sent * p * (1 - p)) + 1, (lost, sent * p)


def test_rc_retries_exhausted_put_the_qp_in_the_error_state(tmp_path):
    # The link dies at 100 us for good. The requester's last ACK came just before; it times
    # out RetryCount times, an RTO (4.096 us x 2^LocalAckTimeout) apart, and at the next one
    # the QP goes to the error state (IBTA retry_cnt): (RetryCount + 1) x RTO after its last
    # progress.
    s = copy.deepcopy(ROCE)
    s.update(
        stop_time="5ms",
        RdmaNic={"LocalAckTimeout": 5, "RetryCount": 2},  # 131.072 us
        faults=[{"at": "100us", "what": "link_down", "where": "h0-h1"}],
    )
    m = lfsim.run(s).metrics
    assert m["qps_in_error"] == 1 and m["flows_completed"] == 0
    assert m["timeouts"] == 2
    rto = 4.096 * 2**5
    assert 100 + 3 * rto - 3 <= m["qp_error_first_us"] <= 100 + 3 * rto
    (tmp_path / "s.yaml").write_text(__import__("yaml").safe_dump(s))
    p = run_cli("run", "s.yaml", "--out", "o", "--quiet", cwd=tmp_path)
    assert "qps_in_error: 1 queue pair(s) exhausted their retries (RdmaNic.RetryCount 2)" in (
        p.stderr
    )
    s["faults"][0]["until"] = "250us"  # back before the retries run out: it recovers
    m = lfsim.run(s).metrics
    assert m["qps_in_error"] == 0 and m["flows_completed"] == 1


# seed 000's SAN over FCP, db0's fabric-A link down at 3 ms. The SCSI command timer is 1 ms.
SAN_A_DOWN = {"mode": "fcp", "FioJob.runtime": "10ms", "stop_time": "20ms",
              "faults": "[{at: 3ms, what: link_down, where: db0-A/sw}]",
              "workload.oltp.IoTimeout": "1ms"}  # fmt: skip


def test_a_lost_hba_port_blocks_its_remote_ports_and_holds_their_ios():
    # db0's HBA port on fabric A loses signal at 3 ms: its two remote ports (dorado/A0, A1) are
    # blocked, the commands they had out come back and are held with every new one sent down
    # those paths. Linux's timers (fast_io_fail_tmo 5 s, dev_loss_tmo 60 s) outlast the run, so
    # they stay held, and their command timer is reset, not fired (fc_eh_timed_out): nothing is
    # aborted. Before the remote ports were modelled, the same commands were aborted at 4 ms.
    m = lfsim.run("san_seed000", SAN_A_DOWN).metrics
    assert m["ios_timed_out"] == m["ios_aborted"] == m["path_failures"] == 0
    assert m["rports_blocked"] == 2 and m["rport_blocked_first_us"] == 3000
    assert m["ios_requeued"] > 0 and m["ios_in_flight"] > 0
    assert m["rports_fast_io_failed"] == m["ios_fast_failed"] == m["rports_removed"] == 0


def test_fast_io_fail_tmo_fails_the_held_ios_over_to_the_other_fabric():
    # FcpStack.FastIoFailTmo 1 ms: at 4 ms the held I/Os fail to dm-multipath
    # (DID_TRANSPORT_FAILFAST), which fails both fabric-A paths and sends them down fabric B:
    # every I/O completes, none with an error.
    r = lfsim.run("san_seed000", {**SAN_A_DOWN, "FcpStack.FastIoFailTmo": "1ms"})
    m = r.metrics
    assert m["fast_io_fail_first_us"] == 4000 and m["rports_fast_io_failed"] == 2
    assert m["ios_retried"] == m["ios_fast_failed"] > 0 and m["path_failures"] == 2
    assert m["ios_failed"] == m["ios_in_flight"] == m["ios_timed_out"] == 0
    assert m["ios_submitted"] == m["ios_completed"]
    # Those that found a free slot on B left at 4 ms exactly (the rest waited for one).
    ios = r.table("ios")
    sent = ios["complete_ns"] - ios["transport_ns"] - m["stack_delay_us"] * 1e3 / 2
    assert 0 < ((sent - 4e6).abs() < 1).sum() <= m["ios_fast_failed"]
    paths = r.table("paths").set_index("label")["requests"]
    assert paths["db0/B>dorado/B0"] + paths["db0/B>dorado/B1"] > 4 * (
        paths["db0/A>dorado/A0"] + paths["db0/A>dorado/A1"]
    )
    # DevLossTmo 2 ms: at 5 ms the ports are removed and the fabric-A paths are gone.
    gone = lfsim.run(
        "san_seed000",
        {**SAN_A_DOWN, "FcpStack.FastIoFailTmo": "1ms", "FcpStack.DevLossTmo": "2ms"},
    ).metrics
    assert gone["rports_removed"] == 2 and gone["ios_failed"] == gone["ios_in_flight"] == 0


def test_a_link_back_before_fast_io_fail_tmo_sends_the_held_ios():
    # Back at 3.2 ms: the remote ports are unblocked and what they held goes out on fabric A;
    # no path is failed, no I/O retried or failed. (Before, the commands whose frames the link
    # lost timed out at 4 ms and were aborted and retried.)
    back = {**SAN_A_DOWN, "faults": "[{at: 3ms, what: link_down, where: db0-A/sw, until: 3.2ms}]"}
    m = lfsim.run("san_seed000", back).metrics
    assert m["ios_retried"] == m["ios_failed"] == m["ios_in_flight"] == m["ios_timed_out"] == 0
    assert m["path_failures"] == 0
    assert m["rports_blocked"] == m["rports_unblocked"] == 2 and m["ios_requeued"] > 0
    assert m["rports_fast_io_failed"] == m["ios_fast_failed"] == 0


def test_without_a_link_fault_on_an_initiator_no_remote_port_metric_appears():
    # The remote ports' metrics come with a blocked port only: other runs keep theirs.
    m = lfsim.run("san_seed000", {"mode": "fcp", "FioJob.runtime": "3ms"}).metrics
    assert not [k for k in m if k.startswith("rport")]


def test_without_bb_sc_the_link_reset_protocol_restores_the_credit():
    # Lost R_RDYs drain h1's credit; after LinkResetTimeout out of credit, LR/LRR: both ends
    # start again from the login BB_Credit, and h1 is never stalled for StallTime (1 ms).
    m = lfsim.run("faults", {"mode": "rrdy_lost_reset"}).metrics
    assert m["fault_lost_r_rdy"] > 0 and m["link_resets"] > 0
    assert m["stall"] is False and m["credit_overflows"] == 0
    # E_D_TOV (2 s) is far beyond the run: without BB_SC or a shorter timer, h1 stalls.
    plain = lfsim.run("faults", {"mode": "rrdy_lost"}).metrics
    assert plain["link_resets"] == 0 and plain["stall"] is True


def test_a_shrunk_switch_buffer_pauses_sooner_and_stays_lossless():
    # The incast of faults.yaml fits a 4 MiB buffer without a PAUSE; shrunk to 200 KB from 1 to
    # 3 ms, the switch's dynamic thresholds fall and PFC holds the senders instead.
    no_fault = {"mode": "storm_pfc", "faults": "[]"}
    clean = lfsim.run("faults", no_fault).metrics
    shrunk = "[{at: 1ms, what: buffer, where: sw0, size: 200000, until: 3ms}]"
    m = lfsim.run("faults", {**no_fault, "faults": shrunk}).metrics
    assert clean["pause_frames_sent"] == 0 < m["pause_frames_sent"]
    assert m["drops"] == 0


# RNR (IBTA 9.7.5.2.8): one 1 MB SEND on the cable of ROCE. Its first packet is a 4154-byte
# frame (54 B of headers, 4096 B of payload, ICRC), on the line 12 B more to its last bit (FCS,
# preamble); an RNR NAK is a 62-byte frame. The 2 m cable takes 10 ns each way at 25 Gb/s.
SEND = copy.deepcopy(ROCE)
SEND["workload"]["w"]["Operation"] = "Send"
NAK_ROUND_US = ((4154 + 12) * 8 / 25e9 + 10e-9 + (62 + 12) * 8 / 25e9 + 10e-9) * 1e6


def test_a_receiver_not_ready_rnr_naks_the_send_which_completes_after_the_timers(tmp_path):
    # h1 posts no receive WQEs for 100 us; MinRnrTimer 1 = 0.01 ms (IBTA Table 45). The k-th
    # try reaches h1 at 1.343 us + k x (10 us + NAK_ROUND_US): k = 0..8 are before 100 us, so
    # 9 RNR NAKs, each costing the message one round and one timer (RnrRetry 7: forever).
    clean = lfsim.run(SEND).metrics
    (tmp_path / "s.yaml").write_text(__import__("yaml").safe_dump(SEND))
    fault = "faults=[{at: 0s, what: receiver_not_ready, where: h1, until: 100us}]"
    p = run_cli("run", "s.yaml", "--set", fault, "--set", "RdmaNic.MinRnrTimer=1",
                "--out", "o", "--quiet", cwd=tmp_path)  # fmt: skip
    assert p.returncode == 0, p.stderr
    m = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]
    assert m["rnr_naks_sent"] == m["rnr_retries"] == 9
    assert m["flows_completed"] == 1 and m["qps_in_error"] == 0
    assert m["timeouts"] == 0 and m["naks_sent"] == 0  # no PSN sequence NAK for what followed
    assert m["fct_mean_us"] - clean["fct_mean_us"] == pytest.approx(
        9 * (10 + NAK_ROUND_US), abs=1e-6
    )


def test_rnr_retries_exhausted_put_the_qp_in_the_error_state(tmp_path):
    # Never ready again, RnrRetry 2: the third RNR NAK ends the QP, two timers and three
    # rounds after the SEND started; no local ACK timeout is counted meanwhile.
    s = copy.deepcopy(SEND)
    s.update(
        RdmaNic={"MinRnrTimer": 1, "RnrRetry": 2},
        faults=[{"at": "0s", "what": "receiver_not_ready", "where": "h1"}],
    )
    m = lfsim.run(s).metrics
    assert m["qps_in_error"] == m["qps_in_error_rnr"] == 1 and m["flows_completed"] == 0
    assert m["rnr_naks_sent"] == 3 and m["rnr_retries"] == 2 and m["timeouts"] == 0
    assert m["qp_error_first_us"] == pytest.approx(3 * NAK_ROUND_US + 2 * 10, abs=1e-6)
    (tmp_path / "s.yaml").write_text(__import__("yaml").safe_dump(s))
    p = run_cli("run", "s.yaml", "--out", "o", "--quiet", cwd=tmp_path)
    assert "exhausted their retries (RdmaNic.RnrRetry 2)" in p.stderr, p.stderr


def test_a_receiver_not_ready_in_the_faults_scenario():
    # faults.yaml's rnr_send: h1-h4 SEND to h0, which posts no receive WQEs from 1 to 2 ms;
    # MinRnrTimer 12 = 0.64 ms. Each sender's next SEND after 1 ms (by 1.34 ms: a 262144-B
    # message takes 0.34 ms at a quarter of 25 Gb/s) is NAK'd, and its retry 0.64 ms later
    # again if still before 2 ms: 1 or 2 NAKs per sender. No SEND gets through from 1.34 to
    # 2 ms, 0.66 ms of h0's line: at least 7 messages fewer than without the fault.
    m = lfsim.run("faults", {"mode": "rnr_send"}).metrics
    clean = lfsim.run("faults", {"mode": "rnr_send", "faults": "[]"}).metrics
    assert 4 <= m["rnr_naks_sent"] <= 8 and m["rnr_retries"] == m["rnr_naks_sent"]
    assert clean["rnr_naks_sent"] == 0
    assert m["qps_in_error"] == 0 and m["timeouts"] == 0 and m["drops"] == 0
    lost = 0.66e-3 * 25e9 / 8 / 262144
    assert clean["messages_completed"] - m["messages_completed"] >= math.floor(lost)
    # The victim's RDMA WRITEs need no receive WQE.
    assert m["victim_messages_completed"] >= clean["victim_messages_completed"]


@pytest.mark.parametrize(
    ("scenario", "fault", "expect"),
    [
        ("faults", "{at: 0s, what: buffer, where: sw0, size: lots}", "faults[0].size: got 'lots'"),
        ("faults", "{at: 0s, what: buffer, where: h1, size: 1000}", "a switch of the roce fabric"),
        ("fc_incast", "{at: 0s, what: buffer, where: sw0, size: 1000}", "a switch of the roce"),
        ("faults", "{at: 0s, what: receiver_not_ready, where: sw0}", "a host of the roce fabric"),
        ("faults", "{at: 0s, what: receiver_not_ready, where: h9}", "faults[0].where: got 'h9'"),
        ("fc_incast", "{at: 0s, what: receiver_not_ready, where: h1}", "a host of the roce"),
    ],
)
def test_a_bad_buffer_or_receiver_not_ready_fault_is_refused(tmp_path, scenario, fault, expect):
    p = run_cli("run", scenario, "--set", f"faults=[{fault}]", "--out", "o", cwd=tmp_path)
    assert p.returncode == 2 and expect in p.stderr, p.stderr
    assert len(p.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
