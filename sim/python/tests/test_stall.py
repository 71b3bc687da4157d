"""Nothing silent (issue 19): a queue with frames waiting that may not send for
DeadlockDetector.StallTime, whatever the cause, is reported in the metrics and on stderr."""

import pytest
from conftest import run_cli

import lfsim

LOSSY_RRDY = {"FcChannel.LoseRRdyEvery": 7, "stop_time": "5ms"}


def test_a_sender_starved_of_credit_by_lost_frames_is_a_stall():
    # One frame in 10 lost on the fibre (a fault of the timeline): each loss keeps its R_RDY
    # from coming back, the 8 credits are gone after 80 frames, and the port sends nothing more.
    m = lfsim.run(
        "fc_distance",
        {"stop_time": "4ms", "Report.Warmup": "0s",
         "faults": "[{at: 0s, what: drop, where: h0-h1, every: 10}]"},
    ).metrics  # fmt: skip
    assert m["fault_lost_drop_every"] == 8  # the BB_Credit of the link
    assert m["stall"] is True and m["stall_queue"] == "h1"


def test_a_lost_r_rdy_without_bb_sc_is_a_stall_not_silence():
    # One R_RDY in 7 lost and no BB_SC credit recovery: the port's credit drains to zero and it
    # never sends again. Not a deadlock (no cycle), but the run must say so.
    m = lfsim.run("fc_incast", LOSSY_RRDY).metrics
    assert m["primitives_lost"] > 0 and m["deadlock"] is False
    assert m["stall"] is True and m["stall_waiting_bytes"] > 0
    stall = lfsim.load_scenario("fc_incast").config["DeadlockDetector"]["StallTime"]
    assert stall == "1ms"
    # Detected once the queue had been blocked for the window; stalls are looked for every
    # StallTime/8 (125 us), at a check (every 10 us).
    assert 1000 <= m["stall_detected_us"] - m["stall_since_us"] <= 1000 + 125 + 10 + 1e-6


def test_bb_sc_recovers_the_credit_so_there_is_no_stall():
    m = lfsim.run("fc_incast", {**LOSSY_RRDY, "FcNetDevice.BbScN": 2}).metrics
    assert m["primitives_lost"] > 0 and m["credits_recovered"] > 0
    assert m["stall"] is False


@pytest.mark.parametrize(("name", "mode"), [("fc_incast", None), ("incast", "pfc")])
def test_congestion_alone_is_not_a_stall(name, mode):
    m = lfsim.run(name, {"mode": mode} if mode else {}).metrics
    assert m["stall"] is False


def test_a_deadlock_is_a_stall_too():
    m = lfsim.run("pfc_deadlock").metrics
    assert m["deadlock"] is True and m["stall"] is True
    # A queue of the cycle, or one paused behind it: blocked for the whole window.
    assert m["stall_detected_us"] - m["stall_since_us"] >= 1000


def test_the_cli_names_the_queue_even_when_quiet(tmp_path):
    args = ["run", "fc_incast", "--quiet", "--out", "o"]
    args += [x for k, v in LOSSY_RRDY.items() for x in ("--set", f"{k}={v}")]
    p = run_cli(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    m = lfsim.run("fc_incast", LOSSY_RRDY).metrics
    assert p.stderr.strip().splitlines() == [
        f"lfsim: warning: stall: {m['stall_queue']} could not send (paused or out of credit) "
        f"from {m['stall_since_us']:.1f} us for longer than DeadlockDetector.StallTime 1ms, "
        f"{m['stall_waiting_bytes']:.0f} B waiting at the port"
    ]
    off = run_cli(*args, "--set", "DeadlockDetector.StallTime=0s", cwd=tmp_path)
    assert off.returncode == 0 and off.stderr == ""


LOST_FRAME = {"mode": "fcp", "FcChannel.LoseFrameEvery": 50}


def test_a_hung_io_is_counted_not_left_out():
    # FCP with one frame in 50 lost and no exchange recovery: an I/O never completes. The
    # latency statistics hold only completed I/Os; the metrics say what they leave out.
    r = lfsim.run("storage_qd1", LOST_FRAME)
    m = r.metrics
    assert m["frames_lost"] > 0
    assert m["ios_submitted"] == m["ios_completed"] + m["ios_in_flight"]
    assert m["ios_in_flight"] == 1  # QD1: the job waits on it for the rest of the run
    ios = r.table("ios")
    last_done_ns = ios["complete_ns"].max()
    stop_us = 50_000  # storage_qd1's stop_time (the job never reaches its runtime)
    assert r.summary["sim_time_s"] * 1e6 == pytest.approx(stop_us)
    # The hung I/O went out when the last completed one came back (plus the stack's time).
    assert m["oldest_in_flight_us"] < stop_us - last_done_ns / 1e3
    assert m["oldest_in_flight_us"] > stop_us - last_done_ns / 1e3 - 100
    assert m["slowest_completed_us"] == pytest.approx(
        ((ios["complete_ns"] - ios["submit_ns"]) / 1e3).max()
    )
    assert m["ios_hung_at_end"] == 0  # 30 s: Linux's SCSI and NVMe I/O timeout
    assert m["ios_timed_out"] == 0  # nor has its command timer fired yet


def test_the_cli_warns_of_an_io_left_out_of_the_statistics(tmp_path):
    args = ["run", "storage_qd1", "--quiet", "--out", "o"]
    args += [x for k, v in LOST_FRAME.items() for x in ("--set", f"{k}={v}")]
    p = run_cli(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("lfsim: warning: ios_in_flight: 1 I/O(s) outstanding at the end")
    assert "not in the latency statistics" in line
    clean = run_cli("run", "storage_qd1", "--quiet", "--out", "c", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stderr == ""


def test_a_timed_out_command_is_aborted_and_retried_after_exactly_the_timeout():
    # sd's command timer, 1 ms here: the exchange whose frame was lost is aborted (an ABTS on
    # the wire, answered by BA_ACC) and the command retried. Its latency is k x (timeout + one
    # ABTS round trip) plus one ordinary I/O (k: the attempts lost). A constant device time
    # makes every ordinary read take the same time, to the ns.
    const = {"BlockTarget.ReadDistribution": "Constant"}
    r = lfsim.run("storage_qd1", {**LOST_FRAME, **const, "workload.fio.IoTimeout": "1ms"})
    m = r.metrics
    assert m["ios_timed_out"] > 0 and m["ios_aborted"] == m["ios_timed_out"]
    # An abort whose own ABTS is lost waits for AbortTimeout (2 x R_A_TOV, 20 s): that I/O is
    # still in flight at the end, and said to be.
    assert m["ios_retried"] == m["ios_timed_out"] - m["ios_in_flight"]
    assert m["ios_failed"] == 0 and m["ios_in_flight"] <= 1
    assert m["ios_submitted"] == m["ios_completed"] + m["ios_failed"] + m["ios_in_flight"]
    ios = r.table("ios")
    lat = (ios["complete_ns"] - ios["submit_ns"]) / 1e3
    normal = lat[lat < 1000]
    retried = lat[lat >= 1000]
    assert len(retried) > 0
    assert normal.max() - normal.min() < 0.01  # one ordinary latency
    rtts = [(x - normal.min()) / (x // 1000) - 1000 for x in retried]
    # One ABTS and its BA_ACC over one 32GFC switch: the same for every abort, a few frame
    # times and the switch's latency each way.
    assert max(rtts) - min(rtts) < 0.01 and 0 < min(rtts) < 3, rtts
    assert int(sum(x // 1000 for x in retried)) == m["ios_retried"]


def test_without_retries_the_io_fails_with_eio_and_fio_json_says_so(tmp_path):
    over = {**LOST_FRAME, "workload.fio.IoTimeout": "1ms", "workload.fio.IoRetries": 0}
    args = ["run", "storage_qd1", "--quiet", "--out", "o"]
    args += [x for k, v in over.items() for x in ("--set", f"{k}={v}")]
    p = run_cli(*args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    import json

    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]
    assert summary["ios_failed"] == summary["ios_timed_out"] > 0
    assert summary["ios_submitted"] == summary["ios_completed"] + summary["ios_failed"]
    job = json.loads((tmp_path / "o" / "fio.json").read_text())["jobs"][0]
    assert job["error"] == 5 and job["first_error"] == 5
    assert job["total_err"] == summary["ios_failed"]
    assert f"{int(summary['ios_timed_out'])} command(s) timed out" in p.stderr
    assert f"{int(summary['ios_failed'])} I/O(s) failed with EIO" in p.stderr


def test_an_iscsi_abort_waits_behind_tcps_retransmission():
    # iSCSI: a lost segment stalls the session's TCP connection until TCP's retransmission
    # timeout (ns-3's minimum RTO, 1 s). The command times out at 1 ms; its ABORT TASK goes on
    # the same connection and is delivered in order, after the retransmission: the retry
    # starts only once TCP has recovered.
    over = {
        "mode": "iscsi",
        "stop_time": "1500ms",
        "FioJob.runtime": "1400ms",
        "faults": "[{at: 0s, what: drop, where: sw0-h1, every: 200}]",
        "workload.fio.IoTimeout": "1ms",
    }
    r = lfsim.run("storage_qd1", over)
    m = r.metrics
    assert m["fault_lost_drop_every"] > 0
    assert m["ios_timed_out"] == m["ios_aborted"] > 0 and m["ios_failed"] == 0
    # The last abort may still wait behind a retransmission when the run ends.
    assert m["ios_retried"] == m["ios_aborted"] - m["ios_in_flight"]
    assert m["ios_submitted"] == m["ios_completed"] + m["ios_failed"] + m["ios_in_flight"]
    assert 1e6 < m["slowest_completed_us"] < 1e6 + 2000


def test_a_job_stops_at_its_first_error_unless_continue_on_error_says_otherwise():
    # No retries, a 1 ms timer, one frame in 50 lost: the first lost exchange fails with EIO.
    # fio's default (continue_on_error=none) ends the job there: nothing is submitted after
    # the error. With continue_on_error=io (or read, for these reads) the job goes on to its
    # runtime and every lost exchange is one more error.
    over = {**LOST_FRAME, "workload.fio.IoTimeout": "1ms", "workload.fio.IoRetries": 0}
    r = lfsim.run("storage_qd1", over)
    m = r.metrics
    assert m["ios_failed"] == 1 and m["ios_in_flight"] == 0
    assert m["ios_submitted"] == m["ios_completed"] + 1
    error_ns = r.table("io_errors")["time_ns"].iloc[0]
    assert r.table("ios")["submit_ns"].max() < error_ns  # nothing after the error
    for mode in ("io", "read", "all"):
        m2 = lfsim.run("storage_qd1", {**over, "FioJob.continue_on_error": mode}).metrics
        # Every timed-out command fails once its abort ends (one whose ABTS was lost is
        # still waiting AbortTimeout, in flight, at the end).
        assert m2["ios_failed"] == m2["ios_timed_out"] - m2["ios_in_flight"] > 1, mode
        assert m2["ios_submitted"] == m2["ios_completed"] + m2["ios_failed"] + m2["ios_in_flight"]
        assert m2["ios_completed"] > m["ios_completed"]
    # write: these are reads, so the first read error still ends the job.
    m3 = lfsim.run("storage_qd1", {**over, "FioJob.continue_on_error": "write"}).metrics
    assert m3["ios_failed"] == 1 and m3["ios_completed"] == m["ios_completed"]
