"""NVMe-oF (RDMA) recovery as the Linux host does it: a queue pair in error resets the
controller, its commands fail over to the other fabric, reconnect tries every reconnect_delay
until the path is back or ctrl_loss_tmo deletes the controller (scenarios/faults.yaml, mode
nvmeof_failover: link A of h1 down from 2 to 8 ms)."""

import math

import pytest

import lfsim

RTO_US = 4.096 * 2**5  # RdmaNic.LocalAckTimeout 5 in the mode: 4.096 us x 2^5
TRIES = 8  # RetryCount 7: the 8th local ACK timeout in a row puts the QP in error
FAILOVER = {"mode": "nvmeof_failover"}


def conserved(m):
    return m["ios_submitted"] == m["ios_completed"] + m["ios_failed"] + m["ios_in_flight"]


def test_a_link_down_resets_the_controller_and_its_ios_fail_over():
    r = lfsim.run("faults", FAILOVER)
    m = r.metrics
    # Detected by the host's queue pair: 8 timeouts after its last progress, which was
    # before the link went down at 2 ms.
    assert 2000 + (TRIES - 1) * RTO_US < m["qp_error_first_us"] <= 2000 + TRIES * RTO_US
    assert m["controller_resets"] == 1 and m["path_failures"] == 1
    assert m["ios_aborted"] == m["ios_retried"] > 0
    assert m["ios_failed"] == 0 and m["ios_in_flight"] == 0 and conserved(m)
    ios = r.table("ios")
    lat = (ios["complete_ns"] - ios["submit_ns"]) / 1e3
    normal = lat[lat < 100]
    # The cancelled I/Os (on fabric A when it went down) complete once, after the reset, by
    # fabric B: their latency is the wait for the reset plus about one ordinary I/O.
    failed_over = ios[lat >= 100]
    assert len(failed_over) == m["ios_aborted"]
    done_us = failed_over["complete_ns"] / 1e3
    assert (done_us > m["qp_error_first_us"]).all()
    assert (done_us < m["qp_error_first_us"] + 2 * normal.max()).all()
    assert m["slowest_completed_us"] < 2000 + TRIES * RTO_US  # no I/O waited for A to return


def test_reconnect_tries_every_reconnect_delay_until_the_path_is_back():
    # Each try is a new queue pair sending a Fabrics Connect, retransmitted every RTO: it
    # succeeds if its last retransmission (7 RTO after the first send) leaves after the link
    # is back, else its retries run out (8 RTO) and the next try starts reconnect_delay later.
    for until_ms, delay_ms in [(8, 2), (9, 2), (10, 2), (8, 1)]:
        over = {
            **FAILOVER,
            "faults": f"[{{at: 2ms, what: link_down, where: A/sw-h1, until: {until_ms}ms}}]",
            "NvmeofStack.ReconnectDelay": f"{delay_ms}ms",
        }
        m = lfsim.run("faults", over).metrics
        t = m["qp_error_first_us"] + delay_ms * 1000  # first try
        tries = 1
        while t + (TRIES - 1) * RTO_US < until_ms * 1000:
            t += TRIES * RTO_US + delay_ms * 1000
            tries += 1
        assert m["reconnect_tries"] == tries, (until_ms, delay_ms)
        assert m["controllers_reconnected"] == 1 and m["controllers_deleted"] == 0
        assert m["ios_failed"] == 0 and conserved(m)


def test_ctrl_loss_tmo_deletes_the_controller_and_the_other_fabric_carries_on():
    over = {
        **FAILOVER,
        "faults": "[{at: 2ms, what: link_down, where: A/sw-h1}]",
        "NvmeofStack.CtrlLossTimeout": "3ms",
    }
    m = lfsim.run("faults", over).metrics
    # max_reconnects = DIV_ROUND_UP(ctrl_loss_tmo, reconnect_delay) = 2 tries, then deleted.
    assert m["reconnect_tries"] == math.ceil(3 / 2)
    assert m["controllers_deleted"] == 1 and m["controllers_reconnected"] == 0
    assert m["ios_failed"] == 0 and m["ios_in_flight"] == 0 and conserved(m)


def test_with_no_controller_left_the_ios_fail_with_eio_and_the_job_stops():
    # One fabric only: nothing to fail over to. The I/Os wait (nvme multipath queues them
    # while a controller may come back), and fail when ctrl_loss_tmo deletes it; fio stops
    # the job at its first error (continue_on_error=none).
    over = {
        **FAILOVER,
        "topology.Planes": 1,
        "faults": "[{at: 2ms, what: link_down, where: sw-h1}]",
        "NvmeofStack.CtrlLossTimeout": "3ms",
    }
    r = lfsim.run("faults", over)
    m = r.metrics
    assert m["controllers_deleted"] == 1
    assert m["ios_failed"] == 8  # iodepth: every I/O of the job was waiting
    assert m["ios_in_flight"] == 0 and conserved(m)
    assert m["lat_excluded_ios"] == m["ios_failed"]
    errors = r.table("io_errors")
    assert len(errors) == 8 and (errors["errno"] == 5).all()
    # Two tries (2 ms after the reset, then 2 ms after the first failed), each failing
    # 8 RTO after its Connect left (a few us after the try starts).
    deleted_at = m["qp_error_first_us"] + 2 * (2000 + TRIES * RTO_US)
    assert deleted_at <= errors["time_ns"].min() / 1e3 < deleted_at + 10


def hang_target(**fio):
    """The target's software stops posting receive WQEs from 2 ms: every command capsule (a
    SEND) meets an RNR NAK and, with RnrRetry 7, is retried for ever; no queue pair errs."""
    over = {
        **FAILOVER,
        "faults": "[{at: 2ms, what: receiver_not_ready, where: h0}]",
        **{k if "." in k else f"workload.fio.{k}": v for k, v in fio.items()},
    }
    return lfsim.run("faults", over).metrics


def test_an_unanswered_keep_alive_resets_the_controller_after_kato():
    # KATO 2 ms: a Keep Alive every KATO/2 = 1 ms from the start; the one sent at 2 ms meets
    # the hung target and is still unanswered at 4 ms, when both controllers are reset.
    m = hang_target(**{"NvmeofStack.KeepAliveTimeout": "2ms"})
    assert m["qps_in_error"] == 0 and m["rnr_naks_sent"] > 0
    assert m["keep_alive_timeouts"] == 2 and m["controller_resets"] == 2
    assert m["controller_reset_first_us"] == 4000
    # Reconnect's Fabrics Connect is a SEND too: it waits, nothing completes, and the run
    # says how long the I/Os have waited.
    assert m["controllers_reconnected"] == 0 and m["ios_in_flight"] == 8 and conserved(m)
    assert m["lat_excluded_ios"] == 8


def test_a_command_timeout_resets_the_controller():
    # No keep-alive; nvme_core.io_timeout 3 ms: the first command to meet the hung target
    # (dispatched within one I/O time, about 25 us, of 2 ms) times out 3 ms after its dispatch.
    m = hang_target(**{"NvmeofStack.KeepAliveTimeout": "0s", "IoTimeout": "3ms"})
    assert m["keep_alive_timeouts"] == 0 and m["ios_timed_out"] >= 1
    assert 5000 - 30 < m["controller_reset_first_us"] < 5000 + 30
    assert m["controller_resets"] == 2 and m["ios_in_flight"] == 8 and conserved(m)
    # Without the timeout (30 s) nothing is reset within the run.
    assert hang_target(**{"NvmeofStack.KeepAliveTimeout": "0s"})["controller_resets"] == 0


def test_nvme_tcp_a_lost_path_is_found_by_keep_alive_and_its_ios_fail_over():
    # The same controller life over NVMe/TCP. TCP retransmits for seconds before it gives up,
    # so the host learns of the lost link from its Keep Alive (KATO 1 ms, one every 0.5 ms):
    # the first one sent after 2 ms is unanswered KATO later, and the controller is reset.
    kato_us = 1000
    r = lfsim.run(
        "faults",
        {
            **FAILOVER,
            "workload.fio.Stack": "nvmeof_tcp",
            "NvmeofStack.KeepAliveTimeout": f"{kato_us}us",
        },
    )
    m = r.metrics
    assert m["keep_alive_timeouts"] == 1 and m["controller_resets"] == 1
    assert 2000 + kato_us <= m["controller_reset_first_us"] <= 2000 + kato_us * 1.5
    # Its I/Os in flight on fabric A were cancelled and completed on B; none failed or hung.
    assert m["ios_aborted"] == m["ios_retried"] > 0 and m["path_failures"] == 1
    assert m["ios_failed"] == 0 and m["ios_in_flight"] == 0 and conserved(m)
    assert m["stale_completions"] == 0
    ios = r.table("ios")
    slow = ios[(ios["complete_ns"] - ios["submit_ns"]) / 1e3 > 100]
    assert len(slow) == m["ios_aborted"]
    assert (slow["complete_ns"] / 1e3 > m["controller_reset_first_us"]).all()
    # A reconnect tries ReconnectDelay (2 ms) after the reset; its TCP SYN is lost while A is
    # down, and nvme-tcp's connect, with one SYN retry (tcp_sock_set_syncnt(sk, 1)), gives up
    # only after 1 + 2 s: within the run the path stays down and fabric B carries the rest.
    assert m["reconnect_tries"] == 1 and m["controllers_reconnected"] == 0
    paths = r.table("paths").set_index("label")["requests"]
    assert paths["h1/B>h0/B"] > 10 * paths["h1/A>h0/A"] > 0


@pytest.mark.parametrize("stack", ["nvmeof_rdma", "nvmeof_tcp"])
def test_a_timed_out_command_fails_over_and_completes_on_the_other_path(stack):
    # Link A down from 2 ms, no keep-alive, nvme_core.io_timeout 1 ms: the command that meets
    # the dead link first times out, its controller is reset, and it is sent again down B with
    # the others the reset cancelled, its command timer running again. (RDMA: a local ACK
    # timeout of 4.096 us x 2^20, 4.3 s, so that no queue pair errs within the run.)
    extra = {"RdmaNic.LocalAckTimeout": 20} if stack == "nvmeof_rdma" else {}
    over = {
        **FAILOVER,
        "workload.fio.Stack": stack,
        "NvmeofStack.KeepAliveTimeout": "0s",
        "workload.fio.IoTimeout": "1ms",
        **extra,
    }
    m = lfsim.run("faults", over).metrics
    assert m["ios_timed_out"] == 1 and m["controller_resets"] == 1 and m["qps_in_error"] == 0
    # Dispatched within one I/O time (about 25 us) of 2 ms, it times out 1 ms later.
    assert 3000 - 30 < m["controller_reset_first_us"] < 3000 + 30
    assert m["ios_aborted"] == m["ios_retried"] > 0
    # Every I/O completed; none hangs without a timer.
    assert m["ios_in_flight"] == 0 and m["ios_hung_at_end"] == 0 and m["ios_failed"] == 0
    assert m["stale_completions"] == 0 and conserved(m)
