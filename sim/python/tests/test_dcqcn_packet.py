"""validation/dcqcn_packet.py, the packet-level reference the DCQCN case checks the simulator
against: its FIFO, its marking and its reaction point against closed forms."""

import dataclasses
import sys

import numpy as np
import pytest

from lfsim.paths import validation_dir

sys.path.insert(0, str(validation_dir()))  # as the notebooks do: the models live in validation/
import dcqcn_fluid as fluid  # noqa: E402
import dcqcn_packet as packet  # noqa: E402

LINE = 40e9
LINE_BYTES, FRAME_BYTES = 1106, 1082  # a 1 KiB RoCE packet on the wire and in the queue
SERVICE_S = LINE_BYTES * 8 / LINE
PAPER = fluid.FluidParams(
    mtu_bytes=LINE_BYTES,
    queue_bytes_per_packet=FRAME_BYTES,
    kmin_bytes=5120,
    kmax_bytes=204800,
    feedback_delay_s=1.62e-6,
    queue_delay=True,
)


def test_one_sender_at_the_line_rate_never_queues_nor_marks():
    # Even with the band starting at an empty queue: each packet arrives as the one before it
    # leaves, and the packet in service is not in the queue RED looks at.
    params = dataclasses.replace(PAPER, kmin_bytes=0, kmax_bytes=FRAME_BYTES)
    res = packet.simulate(1, LINE, params, duration_s=2e-3)
    assert res["q"].max() == 0
    assert res["cnps"] == 0
    assert np.all(res["rate"] == LINE)


def test_two_unmarked_senders_fill_the_fifo_by_one_packet_per_service_time():
    # Band above anything reached: no marks, both stay at the line rate, and the FIFO gets two
    # packets per service time and serves one.
    params = dataclasses.replace(PAPER, kmin_bytes=1e12, kmax_bytes=2e12)
    res = packet.simulate(2, LINE, params, duration_s=1e-3, sample_s=1e-6)
    assert res["cnps"] == 0
    assert np.all(res["rate"] == LINE)
    # Sender 0 sends at k s, sender 1 at (k + 1) s, the FIFO starts one every s from 0: at
    # time t, floor(t / s) packets wait (the one in service is not counted). Off by one only
    # where t / s is an integer up to rounding.
    waiting = res["q"] / FRAME_BYTES
    expected = np.floor(res["t"] / SERVICE_S)
    assert np.max(np.abs(waiting - expected)) <= 1
    assert np.mean(waiting == expected) > 0.99


def test_the_first_cnp_of_each_sender_halves_its_rate():
    # Every packet above one waiting frame is marked: each sender's first CNP cuts it by
    # alpha / 2 with alpha = 1, and the notification point sends its second CNP 50 us after
    # the first (the marks in between are answered then), the timer no increase for 55 us. So
    # the mean rate steps 40 -> 30 -> 20 Gb/s and stays over 45 us.
    params = dataclasses.replace(PAPER, kmin_bytes=0, kmax_bytes=FRAME_BYTES)
    res = packet.simulate(2, LINE, params, duration_s=45e-6, sample_s=10e-9)
    assert _steps(res["rate"]) == [LINE, 0.75 * LINE, 0.5 * LINE]
    assert res["cnps"] == 2


def _steps(rate):
    """The successive distinct values of a sampled rate."""
    return rate[np.concatenate(([True], np.diff(rate) != 0))].tolist()


def test_then_each_timer_event_recovers_half_the_gap_to_the_target():
    # One CNP per sender, ever: both are cut from 40 to 20 Gb/s (R_T = 40) a few microseconds
    # apart, then every T = 55 us fast recovery sets R_C = (R_T + R_C) / 2: 30, then 35. The
    # byte counter (10 MB) is far off.
    params = dataclasses.replace(PAPER, kmin_bytes=0, kmax_bytes=FRAME_BYTES, cnp_interval_s=1.0)
    res = packet.simulate(2, LINE, params, duration_s=130e-6, sample_s=10e-9)
    g = 1e9
    assert _steps(res["rate"]) == [40 * g, 30 * g, 20 * g, 25 * g, 30 * g, 32.5 * g, 35 * g]


def test_same_seed_same_run_other_seed_other_marks():
    a = packet.simulate(2, LINE, PAPER, duration_s=5e-3, seed=3)
    b = packet.simulate(2, LINE, PAPER, duration_s=5e-3, seed=3)
    c = packet.simulate(2, LINE, PAPER, duration_s=5e-3, seed=4)
    assert np.array_equal(a["q"], b["q"]) and np.array_equal(a["rate"], b["rate"])
    assert not np.array_equal(a["q"], c["q"])


def test_in_steady_state_two_senders_share_the_line():
    # 40-100 ms with the paper's parameters: the queue stays in the marking band, so the link
    # is busy and the senders' mean rate is C/N (less the moments the queue runs empty).
    res = packet.simulate(2, LINE, PAPER, duration_s=0.1)
    w = res["t"] >= 0.04
    assert res["rate"][w].mean() == pytest.approx(LINE / 2, rel=0.01)
    assert PAPER.kmin_bytes < res["q"][w].mean() < PAPER.kmax_bytes


def test_even_marks_are_deterministic():
    a = packet.simulate(2, LINE, PAPER, duration_s=5e-3, seed=1, even_marks=True)
    b = packet.simulate(2, LINE, PAPER, duration_s=5e-3, seed=2, even_marks=True)
    assert np.array_equal(a["q"], b["q"])
    assert a["cnps"] > 0


def test_dropping_marks_inside_the_cnp_interval_raises_the_two_flow_queue():
    # The answer to the DCQCN validation's open question (validation/cases/dcqcn.py): with
    # the paper's parameters and N = 2, marks are sparse (p ~ 0.1 %: a flow's CNPs are ~450 us
    # apart) and a notification point that drops the marks arriving within 50 us of its last
    # CNP loses the CNPs that would cut right after a cut. Its senders need more marking, a
    # higher queue, for the same rate: above the fluid model's fixed point, which has the
    # paper's notification point's CNP rate (one per interval holding a mark), while the
    # paper's notification point run packet by packet stays below it.
    paper, drop = [], []
    for seed in (1, 2, 3):
        for mode, out in (("paper", paper), ("drop", drop)):
            res = packet.simulate(2, LINE, PAPER, duration_s=0.1, seed=seed, np_mode=mode)
            out.append(res["q"][res["t"] >= 0.04].mean())
    fixed = fluid.equilibrium(2, LINE, PAPER)["q_bytes"]
    assert np.mean(drop) > 1.25 * np.mean(paper)
    assert np.mean(drop) > fixed > np.mean(paper)
