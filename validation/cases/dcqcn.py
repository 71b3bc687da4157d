"""DCQCN case: the simulator against the DCQCN fluid model (validation/dcqcn_fluid.py).

N long RDMA WRITE flows (N = 2, 8, 16) into one 40GbE receiver through one switch
(scenarios/dcqcn.yaml, DCQCN `paper` preset). The fluid model gets the simulator's resolved
configuration: the same packet, thresholds, timers and gains, and the CNP loop delay of the
simulated topology. Both are compared over the same window after the start-up transient.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from lfsim.scenario import time_seconds
from lfsim.validate import Case, Row

KIB = 1024


def _load(stem: str):
    """validation/<stem>.py, by path: the case discoverer puts only cases/ on sys.path."""
    name = f"lfsim_validation_{stem}"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).resolve().parent.parent / f"{stem}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their defining module up here
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


fluid = _load("dcqcn_fluid")
stochastic = _load("dcqcn_stochastic")
packet = _load("dcqcn_packet")

FLOWS = (2, 8, 16)
MTU = 1024  # RdmaNic.PathMtu: 1 KiB payload, the packet closest to the paper's 1 KB
STOP_S = 0.100
WINDOW_S = 0.040  # compared from here to STOP_S, in both models
SAMPLE_S = 10e-6  # the scenario's sample_interval; the fluid model is recorded on the same grid
FLUID_DT_S = 1e-6  # 0.25 us moves the window means of these runs by < 0.02 %
CNP_SMOOTH_S = 50e-6  # the verdict smooths the queue over one CNP interval
ACF_MAX_LAG_S = 10e-3  # the verdict's search range for the autocorrelation peak
REL_STD_MIN = 0.05  # below this swing (std / mean) a queue is stable whatever its shape
ACF_PEAK_MIN = 0.5  # an autocorrelation peak this high marks a sustained oscillation
PACKET_SEEDS = tuple(range(1, 11))  # the packet model's runs: one 60 ms window is noisy
SWING_MTU = 4096  # N = 2 with 4 KiB packets and a 10 us CNP interval: a queue that swings
SWING_SIM_SEEDS = (1, 2, 3)  # ... so much that one simulated window is not enough either
PACKET_LABEL = "dcqcn_packet.py (seed 1)"
FAST = "100GbE"  # the dead-time error at 100 Gb/s, where N = 8 does not cycle
FAST_STOP_S, FAST_WINDOW_S = 0.200, 0.100  # the start-up recovery takes longer at 100 Gb/s


# A full RDMA WRITE Middle packet, from the standards (as in cases/roce.py): Ethernet 14, IPv4
# 20, UDP 8, BTH 12, payload, ICRC 4 is the frame the switch queues and counts (no FCS); FCS 4,
# preamble+SFD 8 and gap 12 make its line time. The First packet's RETH (16 B once per 1 MiB
# message, 1 packet in 1024) is left out: 0.0014 % of the bytes.
def packet_bytes(mtu: int) -> tuple[int, int]:
    """(frame, line) bytes of a full RDMA WRITE Middle packet with `mtu` bytes of payload:
    1082 and 1106 for this case's 1024."""
    frame = 14 + 20 + 8 + 12 + mtu + 4
    return frame, frame + 4 + 8 + 12


CNP_FRAME_BYTES = 74  # Eth, IPv4, UDP, BTH, 16 reserved, ICRC (models/roce_pfc_ecn doc)


def _bps(text: str) -> float:
    """'40Mbps' -> 4e7 (the DataRate strings of the resolved configuration)."""
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([kMG]?)bps\s*", str(text))
    if not m:
        raise ValueError(f"unexpected data rate {text!r}; expected e.g. '40Mbps'")
    return float(m.group(1)) * {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def _speed_bps(text: str) -> float:
    m = re.fullmatch(r"(\d+)GbE", str(text))
    if not m:
        raise ValueError(f"unexpected topology.HostSpeed {text!r}; expected e.g. '40GbE'")
    return float(m.group(1)) * 1e9


def _loop_delay_s(cfg: dict, line_bps: float) -> float:
    """Fixed part of the CNP loop: from a packet's marking to the marked rate change reaching
    the queue, without the queueing delay q/C (the fluid model adds that, `queue_delay`).

    Per the simulator's timing (store-and-forward, a frame's last bit arrives (8 + frame + 4)
    byte times plus the cable after its first bit): half a data packet still in service when
    the marked one joins a busy queue, the marked packet to the receiver, the CNP (sent at once,
    strict priority) to the switch, ForwardingLatency, the CNP to the sender; the sender's
    pacing follows the cut at once, and its next packet needs its serialization, the cable and
    ForwardingLatency to reach the queue. Waiting behind an ACK in progress (<= 86 B) is left
    out.
    """
    frame, line = packet_bytes(int(cfg["RdmaNic"]["PathMtu"]))
    byte_s = 8.0 / line_bps
    cable_s = float(cfg["RoceChannel"]["Length"]) * time_seconds(
        cfg["RoceChannel"]["PropagationDelayPerMeter"]
    )
    forward_s = time_seconds(cfg["RoceSwitch"]["ForwardingLatency"])
    data_arrival = 8 + frame + 4
    cnp_arrival = 8 + CNP_FRAME_BYTES + 4
    line_bytes = line / 2 + data_arrival + 2 * cnp_arrival + data_arrival
    return line_bytes * byte_s + 4 * cable_s + 2 * forward_s


def fluid_params(cfg: dict):
    """The fluid model's parameters from a run's resolved configuration, and the line rate."""
    dc, nic, sw = cfg["Dcqcn"], cfg["RdmaNic"], cfg["RoceSwitch"]
    # The fluid model has the paper's reaction point only: refuse settings it does not have.
    expected = {
        "rpg_min_dec_fac": "50",
        "rate_reduce_monitor_period": "0s",
        "clamp_tgt_rate": "true",
        "rate_to_set_on_first_cnp": "0bps",
        "rpg_max_rate": "0bps",
        "initial_alpha_value": "1024",
    }
    for key, value in expected.items():
        if str(dc[key]) != value:
            raise ValueError(f"Dcqcn.{key} = {dc[key]}: the fluid model assumes {value}")
    if str(sw["EcnEnabled"]) != "true":
        raise ValueError("the case needs RoceSwitch.EcnEnabled")
    # The hosts' line rate: the topology's HostSpeed, or the port's own default when empty.
    line_bps = _speed_bps(cfg["topology"]["HostSpeed"] or cfg["RoceNetDevice"]["Speed"])
    frame, line = packet_bytes(int(nic["PathMtu"]))
    params = fluid.FluidParams(
        mtu_bytes=line,  # rates, pacing and the byte counter count line bytes
        queue_bytes_per_packet=frame,  # the switch queue and Kmin/Kmax count frames
        kmin_bytes=float(sw["Kmin"]),
        kmax_bytes=float(sw["Kmax"]),
        pmax=float(sw["Pmax"]),
        g=1.0 - int(dc["dce_tcp_g"]) / 1024.0,
        cnp_interval_s=time_seconds(nic["CnpInterval"]),
        alpha_period_s=time_seconds(dc["dce_tcp_rtt"]),
        feedback_delay_s=_loop_delay_s(cfg, line_bps),
        queue_delay=True,
        timer_s=time_seconds(dc["rpg_time_reset"]),
        byte_counter_bytes=float(dc["rpg_byte_reset"]),
        fast_recovery_steps=int(dc["rpg_threshold"]),
        rai_bps=_bps(dc["rpg_ai_rate"]),
    )
    return params, line_bps


def oscillation(q: np.ndarray) -> tuple[float, float, float, str]:
    """(std / mean, autocorrelation peak, its lag in s, verdict) of a queue sampled every
    SAMPLE_S.

    The queue is first averaged over one CNP interval (50 us): a sender reacts at most once per
    interval, so faster wiggles (packet arrivals, random marking) are not the loop's dynamics.
    The verdict is "oscillating" when the smoothed queue swings (std >= 5 % of its mean, the
    fluid module's own amplitude floor) and the swing repeats itself: the normalized
    autocorrelation rho(lag) reaches >= 0.5 somewhere between its first zero crossing and
    10 ms (several periods of any cycle seen here). A settled queue has no swing; noise around a
    stable level decorrelates, its rho after the first zero crossing stays low; a sustained
    cycle returns to itself one period later (rho near 1, lowered by noise and period jitter).
    For a linear damped oscillation rho's first peak is exp(-2 pi z / sqrt(1 - z^2)), so 0.5
    calls anything ringing with damping ratio z < 0.11 (losing < half its swing per period)
    oscillating. Without a zero crossing (a drift) the peak is 0. The peak's lag is the period
    of a cycle (reported, not judged).
    """
    k = int(round(CNP_SMOOTH_S / SAMPLE_S))
    smooth = np.convolve(q, np.ones(k) / k, mode="valid")
    mean = float(smooth.mean())
    std = float(smooth.std())
    rel = std / mean if mean > 0 else 0.0
    x = smooth - mean
    peak, lag = 0.0, float("nan")
    if std > 0:
        n = len(x)
        spec = np.fft.rfft(x, 2 * n)
        acf = np.fft.irfft(spec * np.conj(spec))[:n]
        acf /= acf[0]
        max_lag = min(int(ACF_MAX_LAG_S / SAMPLE_S), n - 1)
        below = np.nonzero(acf[: max_lag + 1] <= 0)[0]
        if len(below):
            k_peak = int(below[0] + np.argmax(acf[below[0] : max_lag + 1]))
            peak, lag = float(acf[k_peak]), k_peak * SAMPLE_S
    verdict = "oscillating" if rel >= REL_STD_MIN and peak >= ACF_PEAK_MIN else "stable"
    return rel, peak, lag, verdict


def _at(lag_s: float) -> str:
    return "" if np.isnan(lag_s) else f" at {lag_s * 1e3:.2f} ms"


def _overrides(n: int) -> dict:
    return {
        "topology.Hosts": n + 1,  # the receiver h0 and the N senders on one switch
        "RdmaNic.PathMtu": MTU,
        "stop_time": f"{STOP_S * 1e3:g}ms",
        "Report.Warmup": f"{WINDOW_S * 1e3:g}ms",
    }


def _simulated(r, window_s: float = WINDOW_S) -> dict:
    q = r.timeseries("queue")
    q = q[q["label"] == r.metrics["bottleneck_port"]].sort_values("time_s")
    cc = r.timeseries("cc")
    rate = cc.groupby("time_s")["current_Gbps"].mean()  # flow mean at each sample
    qw = q[q["time_s"] >= window_s - 1e-12]
    return {
        "t": q["time_s"].to_numpy(),
        "q": q["bytes"].to_numpy(dtype=float),
        "rate_t": rate.index.to_numpy(),
        "rate": rate.to_numpy(),
        "window_q": qw["bytes"].to_numpy(dtype=float),
        "mean_q": float(qw["bytes"].mean()),
        "mean_rate_Gbps": float(rate[rate.index >= window_s - 1e-12].mean()),
        "pauses": float(r.metrics["pause_frames_sent"]),
    }


def _fluid(n: int, params, line_bps: float) -> dict:
    df = fluid.simulate(
        n,
        line_bps,
        params,
        duration_s=STOP_S,
        dt_s=FLUID_DT_S,
        record_every=int(round(SAMPLE_S / FLUID_DT_S)),
    )
    w = df[df["t"] >= WINDOW_S - 1e-12]
    return {
        "t": df["t"].to_numpy(),
        "q": df["q"].to_numpy(),
        "rate": df["rc"].to_numpy() / 1e9,
        "window_q": w["q"].to_numpy(),
        "mean_q": float(w["q"].mean()),
        "mean_rate_Gbps": float(w["rc"].mean() / 1e9),
        "mean_delay_us": float(w["delay"].mean() * 1e6),
        "equilibrium": fluid.equilibrium(n, line_bps, params),
    }


def _packet(n: int, params, line_bps: float, hai_bps: float) -> dict:
    """validation/dcqcn_packet.py over PACKET_SEEDS: window means and verdicts."""
    qs, rates, verdicts, peaks, lags = [], [], [], [], []
    first = None
    for seed in PACKET_SEEDS:
        res = packet.simulate(
            n, line_bps, params, duration_s=STOP_S, sample_s=SAMPLE_S, hai_bps=hai_bps, seed=seed
        )
        first = first or res
        w = res["t"] >= WINDOW_S - 1e-12
        qs.append(float(res["q"][w].mean()))
        rates.append(float(res["rate"][w].mean()))
        _, peak, lag, verdict = oscillation(res["q"][w])
        verdicts.append(verdict)
        peaks.append(peak)
        lags.append(lag)
    oscillating = verdicts.count("oscillating")
    return {
        "mean_q": float(np.mean(qs)),
        "min_q": min(qs),
        "max_q": max(qs),
        "mean_rate_Gbps": float(np.mean(rates)) / 1e9,
        "oscillating": oscillating,
        "verdict": "oscillating" if 2 * oscillating > len(PACKET_SEEDS) else "stable",
        "peak": float(np.mean(peaks)),
        "lag": float(np.nanmedian(lags)) if not all(np.isnan(lags)) else float("nan"),
        "t": first["t"],
        "q": first["q"],
        "rate": first["rate"] / 1e9,
    }


def _figure(ctx, name: str, runs: dict, t0: float, t1: float, params, packets=None) -> None:
    """Queue and rate of each N; `packets` adds dcqcn_packet.py's first seed."""
    fig, axes = plt.subplots(len(runs), 2, figsize=(12, 3.0 * len(runs)), squeeze=False)
    for row, (n, (sim, flu)) in enumerate(runs.items()):
        aq, ar = axes[row]
        sel = (sim["t"] >= t0) & (sim["t"] <= t1)
        fsel = (flu["t"] >= t0) & (flu["t"] <= t1)
        aq.plot(sim["t"][sel] * 1e3, sim["q"][sel] / KIB, lw=0.5, label="lfsim")
        aq.plot(flu["t"][fsel] * 1e3, flu["q"][fsel] / KIB, lw=1.0, label="fluid model")
        for k, lab in ((params.kmin_bytes, "Kmin"), (params.kmax_bytes, "Kmax")):
            aq.axhline(k / KIB, color="grey", ls=":", lw=0.8)
            aq.text(t1 * 1e3, k / KIB, f" {lab}", va="center", fontsize=7, color="grey")
        aq.set_ylim(0, 1.5 * params.kmax_bytes / KIB)
        aq.set_ylabel("queue (KiB)")
        aq.set_title(f"N = {n}: bottleneck queue", fontsize=9)
        rsel = (sim["rate_t"] >= t0) & (sim["rate_t"] <= t1)
        ar.plot(sim["rate_t"][rsel] * 1e3, sim["rate"][rsel], lw=0.5, label="lfsim (mean of flows)")
        ar.plot(flu["t"][fsel] * 1e3, flu["rate"][fsel], lw=1.0, label="fluid model")
        if packets:
            pk = packets[n]
            psel = (pk["t"] >= t0) & (pk["t"] <= t1)
            aq.plot(pk["t"][psel] * 1e3, pk["q"][psel] / KIB, lw=0.5, label=PACKET_LABEL)
            ar.plot(pk["t"][psel] * 1e3, pk["rate"][psel], lw=0.5, label=PACKET_LABEL)
        ar.set_ylabel("R_C per flow (Gb/s, line)")
        ar.set_title(f"N = {n}: per-flow current rate", fontsize=9)
        if t1 - t0 > 2 * (STOP_S - WINDOW_S) / 3:  # the full run: show the compared window
            for a in (aq, ar):
                a.axvspan(WINDOW_S * 1e3, STOP_S * 1e3, color="0.93", zorder=0)
            ar.set_ylim(0, 1.1 * max(float(sim["rate"].max()), float(flu["rate"].max())))
        for a in (aq, ar):
            a.set_xlim(t0 * 1e3, t1 * 1e3)
            a.set_xlabel("time (ms)")
        if row == 0:
            aq.legend(fontsize=8, loc="upper right")
            ar.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(ctx.plot_path(name), dpi=100)
    plt.close(fig)


# Failures investigated and explained (lfsim.validate reports them as FAIL with this text; they
# turn into UNEXPECTED PASS, which fails the run, when the cause goes away).
# Measured on this case's runs (seed 1), in dcqcn_stochastic.py and in dcqcn_packet.py: the
# reasons the rows added after the loop in _evaluate check.
_DEAD_TIME = (
    "the fluid model's mean-field CNP term, not the simulator. The paper's notification point "
    "sends a CNP at the first mark 50 us or more after its previous CNP, and every CNP cuts: "
    "so no cut lands in the first 50 us after a cut, when R_T - R_C is largest, and the clamp "
    "R_T <- R_C takes less off R_T than the fluid model's term, which treats a cut as equally "
    "likely at any moment and so applies the time-averaged gap. The sender then needs more "
    "marking, a higher queue, for the same rate. Two rows below show it: the reaction point "
    "alone, under marks at a fixed p with no network (validation/dcqcn_stochastic.py), needs "
    "the simulated queue, not the fluid one; and with a 10 us CNP interval, where the dead "
    "time is short against the ~450 us between a flow's CNPs, the fluid model and the "
    "simulator agree. The error is not particular to N = 2 or to 40GbE: at 100GbE, where "
    "N = 8 does not cycle, the simulated N = 8 queue is 24 % above the fluid fixed point and "
    "within 1.3 % of the reaction point alone (row below). With 4096 B packets this case's "
    "N = 2 means agree (69.1 KiB simulated, "
    "67.2 fluid) by a cancellation, not a better fit: the dead time raises the level the "
    "algorithm needs (the reaction point alone: 85.3 KiB), while the queue, which with 4 KiB "
    "packets swings from empty to Kmax, is empty in 11 % of the samples and its mean falls. "
    "With a 10 us interval only the second effect is left: the queue is empty in 26 % of the "
    "samples, the idle link lowers R_C by 4 %, and the simulator is 34 % below the fluid "
    "model, in agreement with the paper's algorithm run packet by packet "
    "(validation/dcqcn_packet.py, rows below)"
)
_CYCLE = (
    "the fluid fixed point (about 102 KiB, p* = 0.46 %) is stable but lightly damped, while "
    "the paper's algorithm run packet by packet settles into a cycle (about 2.1 ms; the queue "
    "from empty to about 215 KiB, where every packet is marked and all flows are cut "
    "together) whose mean is lower. The cycle is not the simulator's: "
    "validation/dcqcn_packet.py, written from the paper independently of models/dcqcn, cycles "
    "in all 10 seeds with the same period and mean (rows below). Nor is it kept going by the "
    "random marking alone: with RED's marks spread evenly at the same probability (the packet "
    "model's even_marks; in the simulator a temporary switch patch, not kept) both leave the "
    "fixed point and settle into the same cycle after about 100 ms (200-300 ms: packet model "
    "67.2 KiB, simulator 66.2 KiB, ACF peak 0.96 in both). The fluid fixed point also "
    "carries the error explained at N = 2: the reaction point alone (dcqcn_stochastic.py) "
    "needs p = 0.63 % (128.6 KiB) for 5 Gb/s, 25 % above it, and at 100GbE, where N = 8 "
    "settles, the simulator's queue is where the reaction point alone puts it (row below)"
)
KNOWN = {
    (2, "queue"): _DEAD_TIME,
    (8, "queue"): _CYCLE,
    (8, "verdict"): _CYCLE,
}
DEAD_TIME_CNP_INTERVAL = "10us"  # 1/5 of the paper's 50 us: the dead-time check


def _evaluate(ctx):
    rows, runs, setup, verdicts = [], {}, {}, {}
    window = f"{WINDOW_S * 1e3:g}-{STOP_S * 1e3:g} ms"
    pauses = 0.0
    for n in FLOWS:
        r = ctx.run("dcqcn", _overrides(n))
        params, line_bps = fluid_params(r.config)
        setup[n] = (params, line_bps, _bps(r.config["Dcqcn"]["rpg_hai_rate"]))
        sim = _simulated(r)
        flu = _fluid(n, params, line_bps)
        runs[n] = (sim, flu)
        pauses += sim["pauses"]
        s_rel, s_peak, s_lag, s_verdict = oscillation(sim["window_q"])
        verdicts[n] = (s_peak, s_verdict)
        f_rel, f_peak, f_lag, f_verdict = oscillation(flu["window_q"])
        eq = flu["equilibrium"]
        fixed = "none (p* > Pmax)" if eq is None else f"{eq['q_bytes'] / KIB:.1f} KiB"
        rows += [
            Row(
                f"N={n}: mean queue {window} (fluid fixed point {fixed}; "
                f"fluid mean feedback delay {flu['mean_delay_us']:.1f} us)",
                "KiB",
                flu["mean_q"] / KIB,
                sim["mean_q"] / KIB,
                0.15,
                known_deviation=KNOWN.get((n, "queue"), ""),
                evidence="closed_form",
            ),
            Row(
                f"N={n}: mean per-flow rate R_C {window} (line bits)",
                "Gb/s",
                flu["mean_rate_Gbps"],
                sim["mean_rate_Gbps"],
                0.15,
                evidence="closed_form",
            ),
            Row(
                f"N={n}: verdict, fluid {f_verdict} (std/mean {f_rel:.3f}, ACF peak "
                f"{f_peak:.2f}{_at(f_lag)}) vs lfsim {s_verdict} (std/mean {s_rel:.3f}, ACF peak "
                f"{s_peak:.2f}{_at(s_lag)}); simulated column: lfsim ACF peak",
                "",
                None,
                s_peak,
                kind="shape",
                passed=f_verdict == s_verdict,
                known_deviation=KNOWN.get((n, "verdict"), ""),
                criterion="same verdict (oscillating: std/mean >= 0.05 and ACF peak >= 0.5)",
                evidence="closed_form",
            ),
        ]
    # The N = 2 deviation, explained (KNOWN[(2, "queue")]): the simulator against a model with
    # the notification point's dead time and no mean field, then both without the dead time.
    params, line_bps, hai_bps = setup[2]
    sto = stochastic.equilibrium(2, line_bps, params, hai_bps=hai_bps)
    rows.append(
        Row(
            "N=2: mean queue against the reaction point alone (validation/dcqcn_stochastic.py: "
            "the paper's RP and NP, every packet marked with a fixed p, no network; expected: "
            f"the queue whose p = {sto['p'] * 100:.3f} % gives R_C = C/N)",
            "KiB",
            sto["q_bytes"] / KIB,
            runs[2][0]["mean_q"] / KIB,
            0.15,
            evidence="closed_form",
        )
    )
    r = ctx.run("dcqcn", {**_overrides(2), "RdmaNic.CnpInterval": DEAD_TIME_CNP_INTERVAL})
    params, line_bps = fluid_params(r.config)
    sim, flu = _simulated(r), _fluid(2, params, line_bps)
    pauses += sim["pauses"]
    rows.append(
        Row(
            f"N=2, RdmaNic.CnpInterval {DEAD_TIME_CNP_INTERVAL} in both: mean queue {window}",
            "KiB",
            flu["mean_q"] / KIB,
            sim["mean_q"] / KIB,
            0.15,
            evidence="closed_form",
        )
    )
    r = ctx.run(
        "dcqcn",
        {
            **_overrides(8),
            "topology.HostSpeed": FAST,
            "stop_time": f"{FAST_STOP_S * 1e3:g}ms",
            "Report.Warmup": f"{FAST_WINDOW_S * 1e3:g}ms",
        },
    )
    params, line_bps = fluid_params(r.config)
    sim = _simulated(r, FAST_WINDOW_S)
    pauses += sim["pauses"]
    sto = stochastic.equilibrium(8, line_bps, params, hai_bps=setup[8][2])
    eq = fluid.equilibrium(8, line_bps, params)
    _, s_peak, _, s_verdict = oscillation(sim["window_q"])
    rows.append(
        Row(
            f"N=8 at {FAST}: mean queue {FAST_WINDOW_S * 1e3:g}-{FAST_STOP_S * 1e3:g} ms "
            f"(lfsim {s_verdict}, ACF peak {s_peak:.2f}) against the reaction point alone "
            f"(dcqcn_stochastic.py, p = {sto['p'] * 100:.3f} %; fluid fixed point "
            f"{eq['q_bytes'] / KIB:.1f} KiB)",
            "KiB",
            sto["q_bytes"] / KIB,
            sim["mean_q"] / KIB,
            0.15,
            evidence="closed_form",
        )
    )
    # The rest of the differences (KNOWN[(8, ...)] and the 4 KiB swing in KNOWN[(2, "queue")]):
    # the simulator against the paper's algorithm run packet by packet outside ns-3.
    packets = {}
    for n in FLOWS:
        pk = packets[n] = _packet(n, *setup[n])
        sim = runs[n][0]
        s_peak, s_verdict = verdicts[n]
        rows += [
            Row(
                f"N={n}: mean queue {window} against validation/dcqcn_packet.py (the paper's "
                f"algorithm packet by packet with random RED marks, no ns-3; mean of "
                f"{len(PACKET_SEEDS)} seeds, {pk['min_q'] / KIB:.1f} to {pk['max_q'] / KIB:.1f})",
                "KiB",
                pk["mean_q"] / KIB,
                sim["mean_q"] / KIB,
                0.15,
                evidence="closed_form",
            ),
            Row(
                f"N={n}: verdict, dcqcn_packet.py {pk['verdict']} (oscillating in "
                f"{pk['oscillating']} of {len(PACKET_SEEDS)} seeds, mean ACF peak "
                f"{pk['peak']:.2f}{_at(pk['lag'])}) vs lfsim {s_verdict}; simulated column: "
                "lfsim ACF peak",
                "",
                None,
                s_peak,
                kind="shape",
                passed=pk["verdict"] == s_verdict,
                criterion="same verdict as most of the seeds",
                evidence="closed_form",
            ),
        ]
    swing = {
        **_overrides(2),
        "RdmaNic.PathMtu": SWING_MTU,
        "RdmaNic.CnpInterval": DEAD_TIME_CNP_INTERVAL,
    }
    sims = [_simulated(ctx.run("dcqcn", {**swing, "seed": seed})) for seed in SWING_SIM_SEEDS]
    pauses += sum(x["pauses"] for x in sims)
    r = ctx.run("dcqcn", {**swing, "seed": SWING_SIM_SEEDS[0]})  # cached: for its config
    params, line_bps = fluid_params(r.config)
    flu, pk = _fluid(2, params, line_bps), _packet(2, params, line_bps, setup[2][2])
    per_seed = ", ".join(f"{x['mean_q'] / KIB:.1f}" for x in sims)
    sim_q = float(np.mean([x["mean_q"] for x in sims]))
    sim_rate = float(np.mean([x["mean_rate_Gbps"] for x in sims]))
    label = (
        f"N=2, PathMtu {SWING_MTU}, CnpInterval {DEAD_TIME_CNP_INTERVAL}, lfsim seeds "
        f"{SWING_SIM_SEEDS[0]}-{SWING_SIM_SEEDS[-1]} against dcqcn_packet.py seeds "
        f"{PACKET_SEEDS[0]}-{PACKET_SEEDS[-1]}:"
    )
    rows += [
        Row(
            f"{label} mean queue {window} (fluid model {flu['mean_q'] / KIB:.1f} KiB; lfsim "
            f"seeds {per_seed})",
            "KiB",
            pk["mean_q"] / KIB,
            sim_q / KIB,
            0.15,
            evidence="closed_form",
        ),
        Row(
            f"{label} mean per-flow rate R_C {window}, the link partly idle (fluid model "
            f"{flu['mean_rate_Gbps']:.3f} Gb/s)",
            "Gb/s",
            pk["mean_rate_Gbps"],
            sim_rate,
            0.01,
            evidence="closed_form",
        ),
    ]
    rows.append(
        Row(
            "PFC pause frames sent in the eight runs (the fluid model has no PFC)",
            "",
            None,
            pauses,
            kind="shape",
            passed=pauses == 0,
            criterion="0",
            evidence="consistency",
        )
    )
    params = setup[FLOWS[0]][0]  # the band is the same in every run
    _figure(ctx, "timeseries", runs, 0.0, STOP_S, params)
    _figure(ctx, "zoom", runs, 0.060, 0.066, params, packets)
    return rows


_NOTE = (
    "Nothing calibrated on the results: the fluid model (validation/dcqcn_fluid.py, the "
    "delay-differential equations of Zhu et al. SIGCOMM 2015 / CoNEXT 2016) gets the "
    "simulator's resolved configuration. Packet: RdmaNic.PathMtu 1024 (the paper's 1 KB "
    "packets); a full packet is 1082 B of frame (what the switch queue, Kmin and Kmax count) "
    "and 1106 B of line time (what the DCQCN rates, the pacing and the byte counter count), so "
    "the fluid model counts packets of 1106 B in the capacity (40 Gb/s), the rates, B and R_AI "
    "and of 1082 B in the queue and the thresholds; both queues are in frame bytes. Kmin 5120 "
    "B, Kmax 204800 B, Pmax 1 % (RED per packet on the instantaneous queue in the simulator), "
    "g = 1/256, CNP interval 50 us, alpha period 55 us, timer T 55 us, B 10 MB, F 5, R_AI "
    "40 Mb/s: the `paper` preset of models/dcqcn (SIGCOMM 2015). Feedback delay: the marked "
    "packet's queueing delay q/C plus a fixed 1.62 us from the topology (2 m cables at 5 ns/m, "
    "500 ns switch forwarding latency twice, serialization of the marked packet, the CNP twice "
    "and the sender's next packet, half a packet in service; computed in the case from the "
    "configuration), so the fluid model's delay follows its queue instead of the 50-85 us "
    "constants of the papers (with the matched parameters and a constant 50 us the fluid "
    "verdicts and means for N = 2 and 8 are the same). Both start with every flow at line "
    "rate and alpha = 1 and are compared over 40-100 ms on the same 10 us grid: by 40 ms the "
    "simulator's rates have recovered from the start-up cut (N = 2 is the slowest, about "
    "20 ms) and its N = 8 run has left its irregular early phase (about 30 ms); the fluid "
    "model's queue approaches its fixed point with alpha's time constant (55 us x 256 = "
    "14 ms) and is still 6-7 % below it at 40 ms for N = 2 and 8, which lowers its window mean "
    "by about 1 %. Verdict criterion (one for both): the queue averaged over a CNP interval; "
    "oscillating if its std/mean >= 0.05 and its autocorrelation peaks >= 0.5 between its "
    "first zero crossing and 10 ms. What differs: the simulator has packets, random marking, "
    "discrete cuts of alpha/2 at random times, and a notification point that sends a CNP at "
    "the first marked packet 50 us or more after the previous one (the fluid model: the chance "
    "of a mark within a 50 us slot); the fluid model is the mean of that noise. Its N = 8 "
    "fixed point is stable but lightly damped (started from the simulator's cycle state it "
    "rings with a 2.5 ms period and loses about 30 % of its swing per period), while the "
    "algorithm run packet by packet cycles (rows against dcqcn_packet.py). PFC "
    "(none was sent, row below) and hyper increase are not in the fluid model; hyper increase "
    "needs both counters past F = 5, i.e. 60 MB sent without a cut (24 ms at 20 Gb/s), while "
    "the longest interval between a simulated flow's cuts after 20 ms is about 3 ms. One "
    "simulator seed (the scenario's, 1) except where a row says otherwise. The rows after the "
    "per-N ones test the explanations of the deviations (their notes): the simulator against "
    "the reaction and notification points alone (validation/dcqcn_stochastic.py, 5 s after "
    "0.2 s, seeded), at 40GbE for N = 2 and at 100GbE for N = 8 (100-200 ms: at 100 Gb/s "
    "the flows need longer to recover from the start-up cut); both models with a 10 us CNP "
    "interval; and the simulator against the "
    "paper's algorithm run packet by packet outside ns-3 (validation/dcqcn_packet.py: N "
    "senders with the paper's reaction point, one FIFO at the line rate with RED on its "
    "instantaneous queue, the paper's notification point, the same packet sizes and fixed "
    "loop delay; 10 seeds), at N = 2, 8 and 16 and where the 4 KiB queue swings."
)

CASES = [
    Case(
        "dcqcn_fluid_40g",
        source=(
            "DCQCN fluid model (Zhu et al., SIGCOMM 2015; CoNEXT 2016) in validation/"
            "dcqcn_fluid.py vs scenarios/dcqcn.yaml, N = 2, 8, 16 long flows into one 40GbE port"
        ),
        note=_NOTE,
        evaluate=_evaluate,
    )
]
