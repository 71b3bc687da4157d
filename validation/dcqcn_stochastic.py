"""One DCQCN sender under random marking, event by event, without a network.

The fluid model (dcqcn_fluid.py) replaces the notification point's CNPs by their mean rate:
a CNP interval tau holds a CNP with the chance 1 - (1 - p)^(tau R) that it holds a mark,
independently of what the sender is doing. The notification point of the DCQCN paper (Zhu et
al., SIGCOMM 2015, section 3.1) sends a CNP at once for a marked packet when none was sent in
the last tau, and after that at most one CNP every tau, at the interval's end, if a packet
arriving within it was marked (np_mode "paper"). With np_mode "drop" a mark inside the
interval sends nothing (what models/roce_pfc_ecn did before it was found to depart from the
paper): then no CNP can arrive in the first tau after a cut. This module plays the reaction
point of the paper (Algorithm 1: cut, alpha, timer and byte counter, fast recovery, additive
and hyper increase) against a notification point with every packet marked independently with
a fixed probability p, and measures the time-averaged R_C. The p at which it equals C/N,
mapped through the RED slope, is the queue the sender needs in steady state; against the fluid
model's fixed point it isolates the error of the mean-field CNP term, with no queue dynamics,
feedback delay or second flow involved.

It is written from the paper's description, independently of models/dcqcn. Rates count the
same packets as FluidParams (mtu_bytes per packet in the rates and B); a run is seeded, so the
same arguments give the same result; solving for p reuses one stream of uniforms for every p
(common random numbers), so the mean rate is a smooth, falling function of p.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import brentq

if TYPE_CHECKING:
    from dcqcn_fluid import FluidParams  # any object with its fields will do

_DRAWS = 4096  # uniforms per refill of the mark stream


def mean_rate(
    p: float,
    params: FluidParams,
    line_bps: float,
    *,
    cnp_interval_s: float | None = None,
    hai_bps: float = 0.0,
    duration_s: float = 5.0,
    warmup_s: float = 0.2,
    seed: int = 1,
    np_mode: str = "paper",
) -> dict:
    """Time-averaged R_C (bit/s), CNP rate (1/s) and alpha of one sender whose packets are each
    marked with probability p, over `duration_s` after `warmup_s` (alpha's time constant is
    tau' / g = 14 ms with the paper's values). `cnp_interval_s` overrides params'; 0 sends a
    CNP for every mark. `np_mode`: "paper" or "drop" (module docstring). The sender starts at
    the line rate with alpha = 1."""
    params.validate()
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if np_mode not in ("paper", "drop"):
        raise ValueError(f"np_mode must be 'paper' or 'drop', got {np_mode!r}")
    tau = params.cnp_interval_s if cnp_interval_s is None else cnp_interval_s
    pkt_bits = 8.0 * params.mtu_bytes
    b_bits = 8.0 * params.byte_counter_bytes
    timer, f, g = params.timer_s, params.fast_recovery_steps, params.g
    rng = np.random.default_rng(seed)
    log_keep = math.log1p(-p)
    marks: list[float] = []

    def bits_to_next_mark() -> float:
        # Packets up to and including the next marked one: geometric, by inverse transform.
        if not marks:
            marks.extend(rng.random(_DRAWS).tolist())
        u = marks.pop()
        return math.ceil(math.log1p(-u) / log_keep) * pkt_bits

    rc = rt = line_bps
    alpha, alpha_from = 1.0, 0.0
    t_stage = b_stage = 0
    sent = 0.0  # bits since the last cut, for the byte counter
    to_mark = bits_to_next_mark()
    next_timer = timer
    last_cnp = -math.inf
    pending = math.inf  # np_mode "paper": the CNP owed at the end of the current interval
    end = warmup_s + duration_s
    t = area = alpha_area = 0.0
    cnps = 0

    def increase() -> None:
        nonlocal rc, rt
        lo, hi = min(t_stage, b_stage), max(t_stage, b_stage)
        if lo > f:
            rt += (lo - f) * hai_bps
        elif hi > f:
            rt += params.rai_bps
        rt = min(rt, line_bps)
        rc = min((rt + rc) / 2.0, line_bps)

    while t < end:
        at_max = rc >= line_bps
        dt_mark = to_mark / rc
        dt_bytes = math.inf if at_max else (b_bits - sent) / rc
        dt_timer = math.inf if at_max else next_timer - t
        dt_cnp = pending - t
        dt = min(dt_mark, dt_bytes, dt_timer, dt_cnp)
        if t + dt > warmup_s:
            counted = t + dt - max(t, warmup_s)
            area += rc * counted
            decay = (1.0 - g) ** math.floor((max(t, warmup_s) - alpha_from) / params.alpha_period_s)
            alpha_area += alpha * decay * counted  # alpha's level at the interval's start
        to_mark -= rc * dt
        sent += rc * dt
        t += dt
        if dt == dt_cnp:
            pending = math.inf  # the interval's CNP, sent at its end
        elif dt == dt_timer:
            t_stage += 1
            increase()
            next_timer += timer
            continue
        elif dt == dt_bytes:
            sent -= b_bits
            b_stage += 1
            increase()
            continue
        else:
            to_mark = bits_to_next_mark()
            if pending < math.inf:
                continue  # the CNP owed at this interval's end covers it
            if t - last_cnp < tau:
                if np_mode == "paper":
                    pending = last_cnp + tau
                continue  # "drop": the notification point sent a CNP less than tau ago
        # A CNP: the cut, then alpha (Algorithm 1's order).
        last_cnp = t
        if t > warmup_s:
            cnps += 1
        alpha *= (1.0 - g) ** math.floor((t - alpha_from) / params.alpha_period_s)
        rt = rc
        rc = rc * (1.0 - alpha / 2.0)
        alpha = (1.0 - g) * alpha + g
        alpha_from = t
        t_stage = b_stage = 0
        sent = 0.0
        next_timer = t + timer
    return {
        "rate_bps": area / duration_s,
        "cnp_per_s": cnps / duration_s,
        "alpha": alpha_area / duration_s,
    }


def equilibrium(
    n_flows: int,
    capacity_bps: float,
    params: FluidParams,
    *,
    line_bps: float | None = None,
    **run,
) -> dict:
    """The marking probability p at which one sender's mean R_C is capacity/n_flows, and the
    queue (bytes) on the RED slope that marks with it; `run` goes to `mean_rate`. Raises
    ValueError when even Pmax leaves the sender above its share (no point on the slope)."""
    line = capacity_bps if line_bps is None else line_bps
    share = capacity_bps / n_flows

    def excess(p: float) -> float:
        return mean_rate(p, params, line, **run)["rate_bps"] - share

    lo, hi = 1e-6, params.pmax
    if excess(hi) > 0.0:
        raise ValueError(f"p = Pmax = {hi} leaves the sender above C/N = {share:g} bit/s")
    p = brentq(excess, lo, hi, xtol=1e-9, rtol=1e-6)
    stats = mean_rate(p, params, line, **run)
    q = params.kmin_bytes + p / params.pmax * (params.kmax_bytes - params.kmin_bytes)
    return {"p": p, "q_bytes": q, **stats}
