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
SWING_SIM_SEEDS = tuple(range(1, 11))  # ... so much that it takes as many simulated windows
SIM_SEEDS = (1, 2, 3)  # lfsim's runs per N: one 60 ms window of a cycling queue is noisy too
PACKET_LABEL = "dcqcn_packet.py (seed 1)"
SWING_CNP_INTERVAL = "10us"  # 1/5 of the paper's 50 us: the 4 KiB queue swings from empty


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


def _seeds(runs: list[dict]) -> dict:
    """The first seed's run (series, verdict input) with the means over every seed's window,
    and the verdict most seeds give."""
    out = dict(runs[0])
    for key in ("mean_q", "mean_rate_Gbps"):
        out[key] = float(np.mean([x[key] for x in runs]))
    out["per_seed_q"] = [x["mean_q"] for x in runs]
    out["pauses"] = sum(x["pauses"] for x in runs)
    verdicts = [oscillation(x["window_q"])[3] for x in runs]
    out["verdict"] = max(set(verdicts), key=verdicts.count)
    out["oscillating"] = verdicts.count("oscillating")
    return out


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


def _packet(n: int, params, line_bps: float, hai_bps: float, np_mode: str = "paper") -> dict:
    """validation/dcqcn_packet.py over PACKET_SEEDS: window means and verdicts."""
    qs, rates, verdicts, peaks, lags = [], [], [], [], []
    first = None
    for seed in PACKET_SEEDS:
        res = packet.simulate(
            n,
            line_bps,
            params,
            duration_s=STOP_S,
            sample_s=SAMPLE_S,
            hai_bps=hai_bps,
            seed=seed,
            np_mode=np_mode,
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


def _empty_share(q: np.ndarray) -> float:
    return float(np.mean(q == 0)) if len(q) else float("nan")


# Why the queue and the verdict differ from the fluid model (reported rows, not failures: the
# fluid model stays the reference for the rates; for the queue and the verdict the reference is
# the paper's algorithm run packet by packet, validation/dcqcn_packet.py).
def _queue_note(n: int, sim: dict, flu: dict, pk: dict, sto: dict | None) -> str:
    eq = flu["equilibrium"]
    text = (
        f"lfsim {sim['mean_q'] / KIB:.1f} KiB, the paper's algorithm run packet by packet "
        f"{pk['mean_q'] / KIB:.1f} KiB (rows below), the fluid model {flu['mean_q'] / KIB:.1f} "
        "KiB. "
    )
    if n == 2:
        return text + (
            f"The fluid fixed point ({eq['q_bytes'] / KIB:.1f} KiB) is what the paper's reaction "
            f"and notification points need with marks at a fixed probability and no network "
            f"({sto['q_bytes'] / KIB:.1f} KiB, validation/dcqcn_stochastic.py, row below): the "
            "fluid model's mean-field CNP term holds for the paper's notification point. Both "
            "packet-level runs sit below it, where the queue moves: it is empty in "
            f"{_empty_share(sim['window_q']) * 100:.0f} % of lfsim's seed-1 samples. Before the "
            "notification point was fixed (RdmaNic.CnpMode RateLimited: marks within "
            "CnpInterval of the last CNP dropped, not answered at the interval's end as the "
            "paper's section 3.1 says) lfsim's queue was 26.7 KiB, above both; the rows after "
            "the per-N ones show that departure, and not the fluid model, made the difference"
        )
    if n == 8:
        return text + (
            f"The fluid fixed point ({eq['q_bytes'] / KIB:.1f} KiB) is stable but lightly "
            "damped, while the paper's algorithm run packet by packet cycles (the verdict rows): "
            "the queue runs from empty to above Kmax, where every packet is marked and all "
            "flows are cut together, and the cycle's mean is lower than the fixed point. "
            "validation/dcqcn_packet.py, written from the paper independently of models/dcqcn, "
            f"cycles in {pk['oscillating']} of {len(PACKET_SEEDS)} seeds"
        )
    return text + (
        "The fluid model has no fixed point here (p* > Pmax) and cycles too; the cycle's mean "
        "depends on how the flows' cuts bunch together at Kmax, which a mean-field model does "
        "not hold: the packet-level runs agree with each other"
    )


def _verdict_note(n: int, pk: dict) -> str:
    return (
        f"the paper's algorithm run packet by packet is {pk['verdict']} "
        f"({pk['oscillating']} of {len(PACKET_SEEDS)} seeds oscillating, mean ACF peak "
        f"{pk['peak']:.2f}{_at(pk['lag'])}); the verdict's reference is that (row below), the "
        "fluid model's is context"
    )


def _evaluate(ctx):
    rows, runs, setup, packets = [], {}, {}, {}
    window = f"{WINDOW_S * 1e3:g}-{STOP_S * 1e3:g} ms"
    pauses = 0.0
    sto_paper = None
    for n in FLOWS:
        r = ctx.run("dcqcn", _overrides(n))
        params, line_bps = fluid_params(r.config)
        setup[n] = (params, line_bps, _bps(r.config["Dcqcn"]["rpg_hai_rate"]))
        sim = _seeds(
            [_simulated(ctx.run("dcqcn", {**_overrides(n), "seed": k})) for k in SIM_SEEDS]
        )
        flu = _fluid(n, params, line_bps)
        pk = packets[n] = _packet(n, *setup[n])
        runs[n] = (sim, flu)
        pauses += sim["pauses"]
        if n == 2:
            sto_paper = stochastic.equilibrium(2, line_bps, params, hai_bps=setup[2][2])
        s_rel, s_peak, s_lag, _ = oscillation(sim["window_q"])
        s_verdict = sim["verdict"]
        f_rel, f_peak, f_lag, f_verdict = oscillation(flu["window_q"])
        seeds = f"lfsim seeds {SIM_SEEDS[0]}-{SIM_SEEDS[-1]}"
        eq = flu["equilibrium"]
        fixed = "none (p* > Pmax)" if eq is None else f"{eq['q_bytes'] / KIB:.1f} KiB"
        rows += [
            Row(
                f"N={n}: mean queue {window}, {seeds}, against the fluid model (fixed point "
                f"{fixed}; mean feedback delay {flu['mean_delay_us']:.1f} us)",
                "KiB",
                flu["mean_q"] / KIB,
                sim["mean_q"] / KIB,
                0.15,
                evidence="reported",
                explanation=_queue_note(n, sim, flu, pk, sto_paper),
            ),
            Row(
                f"N={n}: mean per-flow rate R_C {window} (line bits), {seeds}, against the fluid "
                "model",
                "Gb/s",
                flu["mean_rate_Gbps"],
                sim["mean_rate_Gbps"],
                0.15,
                evidence="closed_form",
            ),
            Row(
                f"N={n}: verdict, fluid {f_verdict} (std/mean {f_rel:.3f}, ACF peak "
                f"{f_peak:.2f}{_at(f_lag)}) vs lfsim {s_verdict} ({sim['oscillating']} of "
                f"{len(SIM_SEEDS)} seeds oscillating; seed 1: std/mean {s_rel:.3f}, ACF peak "
                f"{s_peak:.2f}{_at(s_lag)}); simulated column: lfsim seed 1's ACF peak",
                "",
                None,
                s_peak,
                kind="shape",
                passed=f_verdict == s_verdict,
                criterion="same verdict (oscillating: std/mean >= 0.05 and ACF peak >= 0.5)",
                evidence="reported",
                explanation=_verdict_note(n, pk),
            ),
            Row(
                f"N={n}: mean queue {window}, {seeds} ("
                + ", ".join(f"{q / KIB:.1f}" for q in sim["per_seed_q"])
                + f"), against validation/dcqcn_packet.py (the paper's algorithm packet by "
                f"packet with random RED marks, no ns-3; mean of {len(PACKET_SEEDS)} seeds, "
                f"{pk['min_q'] / KIB:.1f} to {pk['max_q'] / KIB:.1f})",
                "KiB",
                pk["mean_q"] / KIB,
                sim["mean_q"] / KIB,
                0.15,
                evidence="closed_form",
            ),
            Row(
                f"N={n}: verdict, dcqcn_packet.py {pk['verdict']} (oscillating in "
                f"{pk['oscillating']} of {len(PACKET_SEEDS)} seeds, mean ACF peak "
                f"{pk['peak']:.2f}{_at(pk['lag'])}) vs lfsim {s_verdict} ({sim['oscillating']} "
                f"of {len(SIM_SEEDS)} seeds); simulated column: lfsim seed 1's ACF peak",
                "",
                None,
                s_peak,
                kind="shape",
                passed=pk["verdict"] == s_verdict,
                criterion="same verdict as most of the seeds",
                evidence="closed_form",
            ),
        ]
    # The open question of the DCQCN issue (lfsim's N = 2 queue above the fluid model and a
    # third-party implementation): the paper's reaction and notification points alone need the
    # fluid fixed point; the notification point lfsim had (marks inside CnpInterval dropped)
    # needs the queue lfsim had, in the packet model as in lfsim.
    params, line_bps, hai_bps = setup[2]
    rows.append(
        Row(
            f"N=2, lfsim seeds {SIM_SEEDS[0]}-{SIM_SEEDS[-1]}: mean queue against the paper's "
            "reaction and notification points alone "
            "(validation/dcqcn_stochastic.py: every packet marked with a fixed p, no network; "
            f"expected: the queue whose p = {sto_paper['p'] * 100:.3f} % gives R_C = C/N)",
            "KiB",
            sto_paper["q_bytes"] / KIB,
            runs[2][0]["mean_q"] / KIB,
            0.15,
            evidence="closed_form",
        )
    )
    old = _seeds(
        [
            _simulated(
                ctx.run("dcqcn", {**_overrides(2), "RdmaNic.CnpMode": "RateLimited", "seed": k})
            )
            for k in SIM_SEEDS
        ]
    )
    pauses += old["pauses"]
    pk_old = _packet(2, params, line_bps, hai_bps, np_mode="drop")
    sto_old = stochastic.equilibrium(2, line_bps, params, hai_bps=hai_bps, np_mode="drop")
    rows += [
        Row(
            f"N=2, RdmaNic.CnpMode RateLimited (lfsim's notification point before the fix: a "
            f"mark within CnpInterval of the last CNP dropped), lfsim seeds {SIM_SEEDS[0]}-"
            f"{SIM_SEEDS[-1]}: mean queue {window} against "
            "dcqcn_packet.py with that notification point (np_mode drop, "
            f"{len(PACKET_SEEDS)} seeds)",
            "KiB",
            pk_old["mean_q"] / KIB,
            old["mean_q"] / KIB,
            0.15,
            evidence="closed_form",
        ),
        Row(
            "N=2, RdmaNic.CnpMode RateLimited: mean queue against dcqcn_stochastic.py with that "
            f"notification point (p = {sto_old['p'] * 100:.3f} %; the paper's: "
            f"{sto_paper['q_bytes'] / KIB:.1f} KiB)",
            "KiB",
            sto_old["q_bytes"] / KIB,
            old["mean_q"] / KIB,
            0.15,
            evidence="closed_form",
        ),
    ]
    swing = {
        **_overrides(2),
        "RdmaNic.PathMtu": SWING_MTU,
        "RdmaNic.CnpInterval": SWING_CNP_INTERVAL,
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
        f"N=2, PathMtu {SWING_MTU}, CnpInterval {SWING_CNP_INTERVAL}, lfsim seeds "
        f"{SWING_SIM_SEEDS[0]}-{SWING_SIM_SEEDS[-1]} against dcqcn_packet.py seeds "
        f"{PACKET_SEEDS[0]}-{PACKET_SEEDS[-1]}:"
    )
    rows += [
        Row(
            f"{label} mean queue {window}, the queue swinging from empty (fluid model "
            f"{flu['mean_q'] / KIB:.1f} KiB; lfsim seeds {per_seed})",
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
            "PFC pause frames sent in the runs (the fluid model has no PFC)",
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
    "first zero crossing and 10 ms. The references: the fluid model for the rates (judged); "
    "for the queue and the stable/oscillating verdict the paper's algorithm run packet by "
    "packet outside ns-3 (validation/dcqcn_packet.py: N senders with the paper's reaction "
    "point, one FIFO at the line rate with RED on its instantaneous queue, the paper's "
    "notification point, the same packet sizes and fixed loop delay; 10 seeds), judged; the "
    "fluid model's queue and verdict are reported with their explanation (the fluid model is "
    "the mean of the packets' noise: random marking, discrete cuts of alpha/2 at random times; "
    "its N = 8 fixed point is stable but lightly damped while the algorithm run packet by "
    "packet cycles). The notification point is the paper's (section 3.1; RdmaNic.CnpMode "
    "PerInterval): a mark with no CNP sent in the last 50 us sends one at once, after that at "
    "most one CNP every 50 us, at the interval's end, if a packet arriving within it was "
    "marked. Until this case found it, lfsim dropped the marks inside the interval "
    "(RateLimited), and its N = 2 queue sat 24 % above the fluid model: the rows after the "
    "per-N ones show that this departure, not the fluid model, made the difference (the "
    "paper's reaction and notification points alone, validation/dcqcn_stochastic.py, 5 s "
    "after 0.2 s, seeded, need the fluid fixed point; with marks dropped they need lfsim's "
    "old queue, and the packet model with marks dropped gives it too). PFC (none was sent, "
    "row below) and hyper increase are not in the fluid model; hyper increase needs both "
    "counters past F = 5, i.e. 60 MB sent without a cut (24 ms at 20 Gb/s). lfsim runs 3 "
    "seeds per N (a cycling queue's 60 ms window is noisy: at N = 8 the seeds' means span "
    "57-75 KiB) and 10 where the queue swings from empty with 4 KiB packets and a 10 us CNP "
    "interval (the last rows), as many as the packet model; the figures show seed 1."
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
