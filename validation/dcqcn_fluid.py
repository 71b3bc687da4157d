"""DCQCN fluid model: the delay-differential equations of Zhu et al.

The model is the one of "Congestion Control for Large-Scale RDMA Deployments" (Zhu et al.,
SIGCOMM 2015, its fluid-model analysis) as restated in "ECN or Delay: Lessons Learnt from
Analysis of DCQCN and TIMELY" (Zhu et al., CoNEXT 2016). N senders share one bottleneck of
capacity C whose queue marks packets with RED probability p(q). Each sender keeps a current
rate R_C, a target rate R_T and the congestion estimate alpha. Feedback reaches the senders
after the delay tau* (CNP path plus queueing), so the senders see p* = p(q(t - tau*)) and
their own rate R* = R_C(t - tau*) from then:

    p(q)     = 0 for q <= Kmin, (q - Kmin)/(Kmax - Kmin) * Pmax up to Kmax, 1 above Kmax
    dalpha/dt = g/tau' * ((1 - (1 - p*)^(tau' R*)) - alpha)
    dR_T/dt  = -(R_T - R_C)/tau * (1 - (1 - p*)^(tau R*))
               + R_AI R* p* (1 - p*)^(F B)      / ((1 - p*)^(-B)      - 1)
               + R_AI R* p* (1 - p*)^(F T R*)   / ((1 - p*)^(-T R*)   - 1)
    dR_C/dt  = -R_C alpha/(2 tau) * (1 - (1 - p*)^(tau R*))
               + (R_T - R_C)/2 * R* p* / ((1 - p*)^(-B)    - 1)
               + (R_T - R_C)/2 * R* p* / ((1 - p*)^(-T R*) - 1)
    dq/dt    = sum of R_C over the senders - C, with q >= 0

Reading of the terms: 1 - (1 - p)^(tau R) is the chance that a CNP interval tau (the receiver
sends at most one CNP per tau) holds a marked packet, so it is the rate of rate cuts times tau;
R p / ((1 - p)^(-B) - 1) is the rate at which the byte counter (B packets) expires between
marks, and the same with T R packets for the timer T; (1 - p)^(F n) is the chance that F such
expiries happened since the last cut, i.e. that fast recovery is over and R_T grows by R_AI.
Hyper increase (R_HAI) is not part of the model. All counts in the exponents are packets, so
internally rates are packets/s and the queue is packets; the interface uses bit/s, bytes and
seconds. A packet is `mtu_bytes` in the rates, the capacity, B and R_AI (a packet simulator's
line bytes, if its rates count them) and `queue_bytes_per_packet` in the queue and in Kmin and
Kmax (what the switch counts, e.g. the frame without preamble and gap; default `mtu_bytes`).
The rates are capped at the sender line rate (`max_rate_bps`, default the bottleneck capacity)
as in the paper's setting where senders and bottleneck run at the same speed. The queue is
unbounded: PFC is not modelled.

The feedback delay is tau* = `feedback_delay_s` by default. With `queue_delay` it is that fixed
part plus the queueing delay of the marked packet: a packet marked when it joins a queue q(s)
at time s reaches the receiver q(s)/C later, so its CNP reaches the sender at
t = s + tau_0 + q(s)/C. That map from s to t never decreases (the queue drains no faster than
C), so the state a sender reacts to at t is read at the s that solves it (method of steps, the
history searched with a pointer that only moves forward).

Integration is Heun's method (explicit trapezoidal rule, second order) with a fixed step and
the method of steps for the delay: every stage is evaluated on the step grid, so the delayed
values are read from the stored history (linearly interpolated when tau* is not a multiple of
the step) and no dense output is needed. A higher order would not pay: the right-hand side has
kinks (p(q) at Kmin and Kmax, the q >= 0 and line-rate bounds), which limit any method to about
second order where the trajectory crosses them. Halving dt is the accuracy check (see
`simulate`).

`equilibrium` solves the fixed-point equations, `steady_state` summarises the late part of a
run and `verdict` calls it "stable" or "oscillating". What the model does with the paper's
parameters at 40 Gb/s: for N <= 14 the fixed point lies on the RED slope and runs settle on
it when tau* is small (4 to 50 us); from N = 15 on the marking needed exceeds Pmax = 1 %, so
there is no fixed point and the queue cycles around Kmax. With tau* = 85 us runs oscillate
from N = 4 on; with the RED slope kept but stretched (Kmax 2000 KB, Pmax 10 %) N = 2 settles,
N = 4 to 16 oscillate and N >= 20 settle again: the non-monotonic stability in N that the
CoNEXT 2016 paper reports for DCQCN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq


@dataclass(frozen=True)
class FluidParams:
    """DCQCN fluid-model parameters; defaults are the paper's (units in the names).

    Paper values (SIGCOMM 2015 / CoNEXT 2016): Kmin 5 KB, Kmax 200 KB, Pmax 1 %, g = 1/256,
    CNP interval tau = N = 50 us, alpha period tau' = K = 55 us, timer T = 55 us, byte counter
    B = 10 MB, F = 5 fast-recovery steps, R_AI = 40 Mb/s, 1 KB (8000 bit) packets, 40 Gb/s
    links. The feedback delay tau* differs between the papers' runs; 50 us is the default here
    and the CoNEXT 2016 instability example uses 85 us. These values come from public
    re-implementations of the model that cite the papers, not from the paper text itself.
    """

    mtu_bytes: float = 1000.0  # per packet in rates, capacity, B and R_AI
    queue_bytes_per_packet: float | None = None  # per packet in the queue, Kmin, Kmax
    kmin_bytes: float = 5e3
    kmax_bytes: float = 200e3
    pmax: float = 0.01
    g: float = 1.0 / 256.0
    cnp_interval_s: float = 50e-6  # tau (N): at most one CNP per flow per interval
    alpha_period_s: float = 55e-6  # tau' (K): alpha update period
    feedback_delay_s: float = 50e-6  # tau*, or its fixed part with queue_delay
    queue_delay: bool = False  # tau* = feedback_delay_s + q(marking)/C
    timer_s: float = 55e-6  # T: rate-increase timer
    byte_counter_bytes: float = 10e6  # B
    fast_recovery_steps: int = 5  # F
    rai_bps: float = 40e6  # R_AI

    def validate(self) -> None:
        """Raise ValueError naming the first parameter outside its range."""
        positive = (
            "mtu_bytes",
            "g",
            "cnp_interval_s",
            "alpha_period_s",
            "feedback_delay_s",
            "timer_s",
            "byte_counter_bytes",
            "rai_bps",
        )
        for name in positive:
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if not 0 <= self.kmin_bytes < self.kmax_bytes:
            raise ValueError("need 0 <= kmin_bytes < kmax_bytes")
        if not 0 < self.pmax <= 1:
            raise ValueError(f"pmax must be in (0, 1], got {self.pmax!r}")
        if self.fast_recovery_steps < 0:
            raise ValueError("fast_recovery_steps must be >= 0")
        if self.queue_bytes_per_packet is not None and not self.queue_bytes_per_packet > 0:
            raise ValueError("queue_bytes_per_packet must be > 0 (or None: mtu_bytes)")

    @property
    def queue_packet_bytes(self) -> float:
        """Bytes one packet counts in the queue."""
        q = self.queue_bytes_per_packet
        return self.mtu_bytes if q is None else q


# exp() overflows past ~709; a counter that long without a mark never expires in practice.
_EXP_LIMIT = 700.0


def _marking(q_pkts: float, kmin: float, kmax: float, pmax: float) -> float:
    """RED marking probability for a queue of q_pkts packets (thresholds in packets)."""
    if q_pkts <= kmin:
        return 0.0
    if q_pkts <= kmax:
        return (q_pkts - kmin) / (kmax - kmin) * pmax
    return 1.0


def _feedback_terms(p: float, r_del: float, prm: _Internal) -> tuple[float, ...]:
    """Event rates seen by a sender whose delayed rate is r_del packets/s under marking p.

    Returns (cut_tau, cut_taup, byte_rate, timer_rate, past_fr_byte, past_fr_timer):
    the probabilities of a mark within tau and tau' worth of packets, the expiry rates (1/s)
    of byte counter and timer, and the probabilities that F expiries passed without a mark.
    Written with L = -log(1 - p) and expm1 so that small p keeps its precision.
    """
    if p <= 0.0:
        return 0.0, 0.0, r_del / prm.b_pkts, 1.0 / prm.timer, 1.0, 1.0
    if p >= 1.0:
        hit = 1.0 if r_del > 0.0 else 0.0
        return hit, hit, 0.0, 0.0, 0.0, 0.0
    lam = -math.log1p(-p)
    cut_tau = -math.expm1(-prm.tau * r_del * lam)
    cut_taup = -math.expm1(-prm.taup * r_del * lam)
    x_b = prm.b_pkts * lam
    byte_rate = r_del * p / math.expm1(x_b) if x_b < _EXP_LIMIT else 0.0
    x_t = prm.timer * r_del * lam
    if x_t <= 0.0:
        timer_rate = p / (prm.timer * lam)  # limit r_del -> 0: the timer still fires
    elif x_t < _EXP_LIMIT:
        timer_rate = r_del * p / math.expm1(x_t)
    else:
        timer_rate = 0.0
    f = prm.f_steps
    past_b = math.exp(-f * x_b) if f * x_b < _EXP_LIMIT else 0.0
    past_t = math.exp(-f * x_t) if f * x_t < _EXP_LIMIT else 0.0
    return cut_tau, cut_taup, byte_rate, timer_rate, past_b, past_t


@dataclass(frozen=True)
class _Internal:
    """Parameters converted to packets and packets/s for the inner loop."""

    kmin: float
    kmax: float
    pmax: float
    g: float
    tau: float
    taup: float
    timer: float
    b_pkts: float
    f_steps: int
    rai: float

    @classmethod
    def of(cls, params: FluidParams) -> _Internal:
        mtu = params.mtu_bytes
        qpkt = params.queue_packet_bytes
        return cls(
            kmin=params.kmin_bytes / qpkt,
            kmax=params.kmax_bytes / qpkt,
            pmax=params.pmax,
            g=params.g,
            tau=params.cnp_interval_s,
            taup=params.alpha_period_s,
            timer=params.timer_s,
            b_pkts=params.byte_counter_bytes / mtu,
            f_steps=params.fast_recovery_steps,
            rai=params.rai_bps / (8.0 * mtu),
        )


def _derivatives(
    rc: float, rt: float, alpha: float, p_del: float, r_del: float, prm: _Internal
) -> tuple[float, float, float]:
    """(dR_C/dt, dR_T/dt, dalpha/dt) of one sender, rates in packets/s."""
    cut_tau, cut_taup, byte_rate, timer_rate, past_b, past_t = _feedback_terms(p_del, r_del, prm)
    d_alpha = prm.g / prm.taup * (cut_taup - alpha)
    d_rt = -(rt - rc) / prm.tau * cut_tau + prm.rai * (byte_rate * past_b + timer_rate * past_t)
    d_rc = -rc * alpha / (2.0 * prm.tau) * cut_tau + 0.5 * (rt - rc) * (byte_rate + timer_rate)
    return d_rc, d_rt, d_alpha


def simulate(
    n_flows: int,
    capacity_bps: float,
    params: FluidParams | None = None,
    duration_s: float = 0.1,
    dt_s: float = 1e-6,
    *,
    initial_rates_bps: float | Sequence[float] | None = None,
    initial_alpha: float = 1.0,
    initial_queue_bytes: float = 0.0,
    max_rate_bps: float | None = None,
    record_every: int = 1,
) -> pd.DataFrame:
    """Integrate the fluid model for n_flows senders into one bottleneck of capacity_bps.

    Senders start at `initial_rates_bps` (one value for all, one per flow, or None for the
    line rate) with R_T = R_C and alpha = `initial_alpha`; the history before t = 0 is that
    initial state. Senders with equal start rates stay equal for ever (same equations, same
    feedback), so they are integrated once as a class; the cost grows with the number of
    distinct start rates, not with n_flows.

    dt_s must not exceed the (fixed part of the) feedback delay. With the paper's parameters at
    40 Gb/s, going from dt_s = 1 us to 0.25 us moves the late-time mean queue by about 0.01 %;
    check with a halved dt_s when moving far from them.

    Returns a DataFrame with one row per `record_every` steps: t (s), q (bytes), p (marking
    probability at the queue, undelayed), delay (s, the feedback delay of the state the
    senders react to at t), rc and rt (bit/s, mean over the flows) and alpha
    (mean); with more than one class also rc_<k>, rt_<k>, alpha_<k> per class k. df.attrs
    holds n_flows, capacity_bps, max_rate_bps, dt_s, the class sizes and the parameters.
    """
    params = FluidParams() if params is None else params
    params.validate()
    if n_flows < 1:
        raise ValueError(f"n_flows must be >= 1, got {n_flows!r}")
    if not capacity_bps > 0:
        raise ValueError(f"capacity_bps must be > 0, got {capacity_bps!r}")
    if not 0 < dt_s <= params.feedback_delay_s:
        raise ValueError("dt_s must be in (0, feedback_delay_s]")
    if not duration_s >= dt_s:
        raise ValueError("duration_s must be >= dt_s")
    if record_every < 1:
        raise ValueError("record_every must be >= 1")

    pkt_bits = 8.0 * params.mtu_bytes
    cap = capacity_bps / pkt_bits
    rmax = (capacity_bps if max_rate_bps is None else max_rate_bps) / pkt_bits
    if initial_rates_bps is None:
        starts = [rmax * pkt_bits] * n_flows
    elif np.ndim(initial_rates_bps) == 0:
        starts = [float(initial_rates_bps)] * n_flows
    else:
        starts = [float(r) for r in initial_rates_bps]
        if len(starts) != n_flows:
            raise ValueError("initial_rates_bps needs one rate per flow")
    # Group equal start rates into classes, remembering how many flows each holds.
    classes: dict[float, int] = {}
    for r in starts:
        classes[r] = classes.get(r, 0) + 1
    start_rates = [min(r / pkt_bits, rmax) for r in classes]
    weights = list(classes.values())
    n_cls = len(weights)

    prm = _Internal.of(params)
    n_steps = int(round(duration_s / dt_s))
    lag = params.feedback_delay_s / dt_s
    # Fixed delay: history slots before t = 0 hold the initial state. Queue delay: a position
    # before t = 0 reads the initial state directly, so one slot is enough.
    pad = 2 if params.queue_delay else int(math.floor(lag + 1e-9)) + 2
    # Queue delay: arrival[k] is when the signal of step k reaches the senders, in steps.
    arrival: list[float] = []
    q_steps = 1.0 / (cap * dt_s)  # steps of queueing delay per packet queued
    ptr = -1  # last k with arrival[k] <= the latest target

    q = initial_queue_bytes / params.queue_packet_bytes
    rc = list(start_rates)
    rt = list(start_rates)
    al = [float(initial_alpha)] * n_cls
    q_hist = [q] * (pad + n_steps + 1)
    rc_hist = [[r] * (pad + n_steps + 1) for r in rc]

    n_rec = n_steps // record_every + 1
    out_t = np.empty(n_rec)
    out_q = np.empty(n_rec)
    out_d = np.empty(n_rec)
    out_rc = np.empty((n_rec, n_cls))
    out_rt = np.empty((n_rec, n_cls))
    out_al = np.empty((n_rec, n_cls))

    def position(i: int) -> float:
        """Step (fractional) whose state the senders react to at step i."""
        nonlocal ptr
        if not params.queue_delay:
            return i - lag
        # arrival[i - 1] >= i (the fixed part is >= one step), so the target is bracketed
        while ptr + 1 < len(arrival) and arrival[ptr + 1] <= i:
            ptr += 1
        if ptr < 0:  # before the first signal: the initial state, whose delay is its own
            return i - lag - q_hist[pad] * q_steps
        if ptr + 1 == len(arrival) or arrival[ptr + 1] == arrival[ptr]:
            return float(ptr)
        return ptr + (i - arrival[ptr]) / (arrival[ptr + 1] - arrival[ptr])

    def delayed(hist: list[float], pos: float) -> float:
        # linear interpolation on the step grid; slot k + pad holds step k
        if pos <= 0.0:
            return hist[pad]
        j = int(pos)
        w = pos - j
        return hist[j + pad] if w == 0.0 else (1.0 - w) * hist[j + pad] + w * hist[j + 1 + pad]

    kmin, kmax, pmax = prm.kmin, prm.kmax, prm.pmax
    rec = 0
    pos1 = position(0)
    for n in range(n_steps + 1):
        if params.queue_delay:
            arrival.append(n + lag + q * q_steps)
        pos0, pos1 = pos1, position(n + 1)
        if n % record_every == 0:
            out_t[rec] = n * dt_s
            out_q[rec] = q
            out_d[rec] = (n - pos0) * dt_s
            out_rc[rec] = rc
            out_rt[rec] = rt
            out_al[rec] = al
            rec += 1
        if n == n_steps:
            break
        # Heun: slope at t_n, Euler predictor, slope at t_{n+1}, average.
        p0 = _marking(delayed(q_hist, pos0), kmin, kmax, pmax)
        p1 = _marking(delayed(q_hist, pos1), kmin, kmax, pmax)
        total = sum(w * r for w, r in zip(weights, rc, strict=True))
        dq0 = total - cap
        if q <= 0.0 and dq0 < 0.0:
            dq0 = 0.0
        q_pred = max(q + dt_s * dq0, 0.0)
        k1 = []
        pred = []
        for c in range(n_cls):
            d = _derivatives(rc[c], rt[c], al[c], p0, delayed(rc_hist[c], pos0), prm)
            k1.append(d)
            pred.append(
                (
                    min(max(rc[c] + dt_s * d[0], 0.0), rmax),
                    min(max(rt[c] + dt_s * d[1], 0.0), rmax),
                    min(max(al[c] + dt_s * d[2], 0.0), 1.0),
                )
            )
        total_pred = sum(w * x[0] for w, x in zip(weights, pred, strict=True))
        dq1 = total_pred - cap
        if q_pred <= 0.0 and dq1 < 0.0:
            dq1 = 0.0
        q = max(q + 0.5 * dt_s * (dq0 + dq1), 0.0)
        for c in range(n_cls):
            x = pred[c]
            d2 = _derivatives(x[0], x[1], x[2], p1, delayed(rc_hist[c], pos1), prm)
            d1 = k1[c]
            rc[c] = min(max(rc[c] + 0.5 * dt_s * (d1[0] + d2[0]), 0.0), rmax)
            rt[c] = min(max(rt[c] + 0.5 * dt_s * (d1[1] + d2[1]), 0.0), rmax)
            al[c] = min(max(al[c] + 0.5 * dt_s * (d1[2] + d2[2]), 0.0), 1.0)
            rc_hist[c][n + 1 + pad] = rc[c]
        q_hist[n + 1 + pad] = q

    w = np.asarray(weights, dtype=float) / n_flows
    q_bytes = out_q[:rec] * params.queue_packet_bytes
    slope = np.clip((out_q[:rec] - kmin) / (kmax - kmin), 0.0, 1.0) * pmax
    data = {
        "t": out_t[:rec],
        "q": q_bytes,
        "p": np.where(out_q[:rec] > kmax, 1.0, slope),
        "delay": out_d[:rec],
        "rc": out_rc[:rec] @ w * pkt_bits,
        "rt": out_rt[:rec] @ w * pkt_bits,
        "alpha": out_al[:rec] @ w,
    }
    if n_cls > 1:
        for c in range(n_cls):
            data[f"rc_{c}"] = out_rc[:rec, c] * pkt_bits
            data[f"rt_{c}"] = out_rt[:rec, c] * pkt_bits
            data[f"alpha_{c}"] = out_al[:rec, c]
    df = pd.DataFrame(data)
    df.attrs.update(
        n_flows=n_flows,
        capacity_bps=capacity_bps,
        max_rate_bps=rmax * pkt_bits,
        dt_s=dt_s,
        class_sizes=weights,
        params=asdict(params),
    )
    return df


def equilibrium(
    n_flows: int, capacity_bps: float, params: FluidParams | None = None
) -> dict | None:
    """Fixed point of the model for n_flows equal senders, or None if it lies above Kmax.

    Setting the derivatives to zero: dq/dt = 0 gives R_C = C/N; dalpha/dt = 0 gives
    alpha = 1 - (1 - p)^(tau' R_C); dR_T/dt = 0 gives
    R_T - R_C = tau R_AI (b (1-p)^(F B) + t (1-p)^(F T R_C)) / a, with a the cut probability
    within tau and b, t the byte-counter and timer expiry rates; dR_C/dt = 0 then leaves the
    one equation R_C alpha a^2 = tau^2 R_AI (b (1-p)^(FB) + t (1-p)^(F T R_C)) (b + t) in p,
    solved here on (0, Pmax] (its left side grows from 0 with p, its right side falls).
    The queue follows from inverting p(q) on the RED slope. Returns rate_bps, rt_bps, alpha,
    p and q_bytes. None means the p needed exceeds Pmax: there is no fixed point, since above
    Kmax p jumps to 1, and the queue cycles around Kmax instead (with the paper's thresholds at
    40 Gb/s this happens from N = 15 on). The fixed point does not depend on tau*; whether the
    model reaches it does.
    """
    params = FluidParams() if params is None else params
    params.validate()
    if n_flows < 1 or not capacity_bps > 0:
        raise ValueError("need n_flows >= 1 and capacity_bps > 0")
    prm = _Internal.of(params)
    pkt_bits = 8.0 * params.mtu_bytes
    r = capacity_bps / n_flows / pkt_bits

    def balance(p: float) -> float:
        cut_tau, cut_taup, byte_rate, timer_rate, past_b, past_t = _feedback_terms(p, r, prm)
        grow = byte_rate * past_b + timer_rate * past_t
        return r * cut_taup * cut_tau**2 - prm.tau**2 * prm.rai * grow * (byte_rate + timer_rate)

    lo, hi = 1e-15, params.pmax
    if balance(hi) < 0.0:
        return None
    p = brentq(balance, lo, hi, xtol=1e-18, rtol=1e-13)
    cut_tau, cut_taup, byte_rate, timer_rate, past_b, past_t = _feedback_terms(p, r, prm)
    gap = prm.tau * prm.rai * (byte_rate * past_b + timer_rate * past_t) / cut_tau
    return {
        "rate_bps": r * pkt_bits,
        "rt_bps": (r + gap) * pkt_bits,
        "alpha": cut_taup,
        "p": p,
        "q_bytes": params.kmin_bytes + p / params.pmax * (params.kmax_bytes - params.kmin_bytes),
    }


def _tail(result: pd.DataFrame, skip_fraction: float) -> pd.DataFrame:
    if not 0 <= skip_fraction < 1:
        raise ValueError("skip_fraction must be in [0, 1)")
    t = result["t"].to_numpy()
    return result[t >= t[0] + skip_fraction * (t[-1] - t[0])]


def steady_state(result: pd.DataFrame, skip_fraction: float = 0.5) -> dict:
    """Late-time statistics of a `simulate` result, leaving out the first skip_fraction.

    Returns mean_queue_bytes, queue_std_bytes, queue_p2p_bytes (peak to peak), mean_rate_bps
    (per flow, time mean of the flow-mean rate), rate_p2p_bps, mean_alpha, mean_p and
    utilization: the bottleneck's output over capacity (full while a queue is standing,
    otherwise the arriving rate).
    """
    tail = _tail(result, skip_fraction)
    q = tail["q"].to_numpy()
    rc = tail["rc"].to_numpy()
    cap = result.attrs["capacity_bps"]
    arriving = rc * result.attrs["n_flows"]
    served = np.where(q > 0.0, cap, np.minimum(arriving, cap))
    return {
        "mean_queue_bytes": float(q.mean()),
        "queue_std_bytes": float(q.std()),
        "queue_p2p_bytes": float(q.max() - q.min()),
        "mean_rate_bps": float(rc.mean()),
        "rate_p2p_bps": float(rc.max() - rc.min()),
        "mean_alpha": float(tail["alpha"].mean()),
        "mean_p": float(tail["p"].mean()),
        "utilization": float(served.mean() / cap),
    }


def verdict(
    result: pd.DataFrame,
    skip_fraction: float = 0.5,
    rel_amplitude: float = 0.05,
    decay_ratio: float = 0.95,
) -> str:
    """Call a run "stable" or "oscillating" from its queue after the first skip_fraction.

    The window left is cut in two halves. The run oscillates when, in the later half, the
    queue's peak-to-peak swing exceeds rel_amplitude times its mean (and at least one packet,
    so an empty or near-empty queue is not judged on noise), and that swing has not shrunk
    below decay_ratio times the earlier half's swing, i.e. the oscillation is sustained rather
    than dying out (a limit cycle keeps its swing; ringing that loses more than 1 - decay_ratio
    of it from one half to the next is decaying). A run that settles, or still rings but
    decays, is "stable"; near the stability boundary the decay can be too slow to show within
    the window, so such runs should be checked with a longer duration.
    """
    tail = _tail(result, skip_fraction)
    q = tail["q"].to_numpy()
    half = len(q) // 2
    early, late = q[:half], q[half:]
    swing_late = float(late.max() - late.min())
    swing_early = float(early.max() - early.min())
    prm = result.attrs["params"]
    packet = prm.get("queue_bytes_per_packet") or prm["mtu_bytes"]
    floor = max(rel_amplitude * float(late.mean()), packet)
    if swing_late > floor and swing_late >= decay_ratio * swing_early:
        return "oscillating"
    return "stable"
