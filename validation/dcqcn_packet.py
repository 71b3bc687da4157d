"""N DCQCN senders through one RED-marking FIFO, packet by packet, without ns-3.

The fluid model (dcqcn_fluid.py) is the mean of the system: its rates see the mean CNP rate and
its queue the mean arrival rate. dcqcn_stochastic.py keeps the notification point's timing but
marks every packet with a fixed p, with no queue. This module closes the loop with the noise
kept: N senders running the paper's reaction point (Zhu et al., SIGCOMM 2015, Algorithm 1) pace
packets at their current rates into one FIFO served at the line rate; the FIFO marks each
arriving packet by RED on its instantaneous queue (Kmin, Kmax, Pmax; every packet above Kmax),
and the receiver's notification point follows the paper (section 3.1): a marked packet with no
CNP sent for its flow in the last tau sends one at once; after that at most one CNP every tau,
at the interval's end, if a packet arriving within it was marked (np_mode "paper"; "drop": a
mark inside the interval sends nothing, what models/roce_pfc_ecn did before this was found to
depart from the paper). A CNP reaches the sender a fixed delay after it is sent. What
it leaves out on purpose: Ethernet, PFC, ACKs, the switch's buffer accounting and every other
part of the ns-3 model, so that agreement with models/dcqcn run in ns-3 tests the algorithm and
the marking, and a disagreement with the fluid model isolates what its mean-field terms drop.

It is written from the paper's description, independently of models/dcqcn. Rates count the
same packets as FluidParams (mtu_bytes of line time per packet in the rates, the pacing, the
byte counter and the FIFO's service; queue_bytes_per_packet in the queue, Kmin and Kmax); the
queue counts the packets waiting, not the one in service. feedback_delay_s is the fixed part
of the loop, from the marked packet's departure to the cut reaching the queue (the queueing
delay is the packet's own wait). Every random choice draws from one seeded generator, so the
same arguments give the same result.
"""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dcqcn_fluid import FluidParams  # any object with its fields will do

_DRAWS = 8192  # uniforms per refill of the marking stream
_CNP, _TIMER, _SEND = 0, 1, 2  # event kinds; at equal times a cut, then a timer, then a send


class _Sender:
    """One reaction point and its pacer."""

    __slots__ = (
        "rc",
        "rt",
        "alpha",
        "alpha_from",
        "t_stage",
        "b_stage",
        "sent",
        "last_tx",
        "send_version",
        "timer_version",
        "last_cnp",
        "rate_t",
        "rate_v",
    )

    def __init__(self, line_bps: float) -> None:
        self.rc = self.rt = line_bps
        self.alpha, self.alpha_from = 1.0, 0.0
        self.t_stage = self.b_stage = 0
        self.sent = 0.0  # bits since the last cut, for the byte counter
        self.last_tx = -math.inf
        self.send_version = self.timer_version = 0
        self.last_cnp = -math.inf  # the notification point's, at this sender's receiver
        self.rate_t = [0.0]
        self.rate_v = [line_bps]


def simulate(
    n_flows: int,
    line_bps: float,
    params: FluidParams,
    *,
    duration_s: float,
    sample_s: float = 10e-6,
    cnp_interval_s: float | None = None,
    hai_bps: float = 0.0,
    seed: int = 1,
    even_marks: bool = False,
    np_mode: str = "paper",
) -> dict:
    """Run `duration_s` from every sender at the line rate with alpha = 1 and an empty queue.

    `even_marks` replaces RED's random draw by an even spread at the same probability: a packet
    is marked when the running sum of the marking probabilities passes the next integer (an
    experiment: what is left of the dynamics without the marking noise).

    Returns the sample times `t` (every `sample_s`), the queue `q` (bytes) at each, the senders'
    mean current rate `rate` (bit/s) at each, and `cnps`, the number of CNPs sent."""
    params.validate()
    if np_mode not in ("paper", "drop"):
        raise ValueError(f"np_mode must be 'paper' or 'drop', got {np_mode!r}")
    if n_flows < 1 or duration_s <= 0.0 or sample_s <= 0.0:
        raise ValueError("n_flows >= 1, duration_s > 0 and sample_s > 0 are required")
    tau = params.cnp_interval_s if cnp_interval_s is None else cnp_interval_s
    pkt_bits = 8.0 * params.mtu_bytes
    service_s = pkt_bits / line_bps
    frame = params.queue_packet_bytes
    kmin, kmax, pmax = params.kmin_bytes, params.kmax_bytes, params.pmax
    slope = pmax / (kmax - kmin)
    b_bits = 8.0 * params.byte_counter_bytes
    timer, f, g = params.timer_s, params.fast_recovery_steps, params.g
    period = params.alpha_period_s
    loop_s = params.feedback_delay_s
    rng = np.random.default_rng(seed)
    uniforms: list[float] = []
    owed = 0.0  # even_marks: the marking probability summed since the last mark

    senders = [_Sender(line_bps) for _ in range(n_flows)]
    events: list[tuple[float, int, int, int]] = []  # (time, kind, sender, version)
    # Stagger the first packets by one service time so the senders do not collide exactly.
    for i in range(n_flows):
        heapq.heappush(events, (i * service_s, _SEND, i, 0))

    arrivals: list[float] = []  # every packet's arrival at the FIFO ...
    starts: list[float] = []  # ... and the start of its service (both non-decreasing)
    waiting: list[float] = []  # service starts still in the future, as a queue
    head = 0
    free_at = 0.0  # when the FIFO finishes the packets it holds
    cnps = 0

    def set_rate(s: _Sender, t: float, i: int, rc: float) -> None:
        s.rc = min(rc, line_bps)
        s.rate_t.append(t)
        s.rate_v.append(s.rc)
        # The pacer spaces packets by the new rate from the last one sent.
        s.send_version += 1
        nxt = max(t, s.last_tx + pkt_bits / s.rc)
        heapq.heappush(events, (nxt, _SEND, i, s.send_version))

    def increase(s: _Sender, t: float, i: int) -> None:
        lo, hi = min(s.t_stage, s.b_stage), max(s.t_stage, s.b_stage)
        if lo > f:
            s.rt += (lo - f) * hai_bps
        elif hi > f:
            s.rt += params.rai_bps
        s.rt = min(s.rt, line_bps)
        set_rate(s, t, i, (s.rt + s.rc) / 2.0)

    while events:
        t, kind, i, version = heapq.heappop(events)
        if t > duration_s:
            break
        s = senders[i]
        if kind == _SEND:
            if version != s.send_version:
                continue  # rescheduled by a rate change
            s.last_tx = t
            heapq.heappush(events, (t + pkt_bits / s.rc, _SEND, i, version))
            # The FIFO: drop from the queue what has started service, mark, then join.
            while head < len(waiting) and waiting[head] <= t:
                head += 1
            q = (len(waiting) - head) * frame
            start = max(t, free_at)
            free_at = start + service_s
            arrivals.append(t)
            starts.append(start)
            if start > t:
                waiting.append(start)
            if q > kmin:
                if q > kmax:
                    marked = True
                elif even_marks:
                    owed += slope * (q - kmin)
                    marked = owed >= 1.0
                    if marked:
                        owed -= 1.0
                else:
                    if not uniforms:
                        uniforms.extend(rng.random(_DRAWS).tolist())
                    marked = uniforms.pop() < slope * (q - kmin)
                # The notification point's clock: departures, in order. s.last_cnp is the
                # last CNP sent, or the one owed at the end of the current interval.
                if marked and free_at - s.last_cnp >= tau:
                    s.last_cnp = free_at
                    cnps += 1
                    heapq.heappush(events, (free_at + loop_s, _CNP, i, 0))
                elif marked and np_mode == "paper" and free_at >= s.last_cnp:
                    s.last_cnp += tau  # one CNP when the interval ends
                    cnps += s.last_cnp <= duration_s
                    heapq.heappush(events, (s.last_cnp + loop_s, _CNP, i, 0))
            if s.rc < line_bps:
                s.sent += pkt_bits
                if s.sent >= b_bits:
                    s.sent -= b_bits
                    s.b_stage += 1
                    increase(s, t, i)
        elif kind == _CNP:
            s.alpha *= (1.0 - g) ** math.floor((t - s.alpha_from) / period)
            s.rt = s.rc
            rc = s.rc * (1.0 - s.alpha / 2.0)
            s.alpha = (1.0 - g) * s.alpha + g
            s.alpha_from = t
            s.t_stage = s.b_stage = 0
            s.sent = 0.0
            s.timer_version += 1
            heapq.heappush(events, (t + timer, _TIMER, i, s.timer_version))
            set_rate(s, t, i, rc)
        else:
            if version != s.timer_version:
                continue  # restarted by a cut
            heapq.heappush(events, (t + timer, _TIMER, i, version))
            if s.rc < line_bps:
                s.t_stage += 1
                increase(s, t, i)

    grid = np.arange(0.0, duration_s + 0.5 * sample_s, sample_s)
    arr, st = np.asarray(arrivals), np.asarray(starts)
    # Waiting at time x: arrived at or before x, service not started by x.
    q = (np.searchsorted(arr, grid, side="right") - np.searchsorted(st, grid, side="right")) * frame
    rate = np.zeros_like(grid)
    for s in senders:
        k = np.searchsorted(np.asarray(s.rate_t), grid, side="right") - 1
        rate += np.asarray(s.rate_v)[k]
    return {"t": grid, "q": q.astype(float), "rate": rate / n_flows, "cnps": cnps}
