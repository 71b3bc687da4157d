"""Hardware traces side by side with the simulation: perftest outputs, packet captures, NIC
and switch counters, and fio (its JSON and latency logs).

    from lfsim import traces
    hw = traces.read_perftest("ib_write_bw.txt")          # header + results (pandas)
    sim, _ = traces.simulate_perftest(traces.PerftestParams.like(hw))
    cmp = traces.compare_perftest(hw, sim)                 # rows HW, SIM, error
    frames = traces.read_capture("roce.pcap")              # one row per frame
    msgs = traces.messages(frames)                         # per QP: message sizes and times
    c = traces.read_counters("ethtool-S.txt")              # mlx5, SDK, SONiC
    qos = traces.read_mlnx_qos("mlnx_qos.txt"); traces.qos_attributes(qos)

Every comparison is a ``Comparison`` (``table()``, ``as_json()``, ``plot(path)``,
``beyond(tolerance_pct)``), as ``lfsim compare {fio,perftest,capture,counters}`` prints it.
"""

from __future__ import annotations

from pathlib import Path

from .capture import icrc_errors, iscsi_commands, messages, per_qp, read_capture, summary
from .counters import (
    Counters,
    QosSettings,
    compare_counters,
    parse_port_map,
    qos_attributes,
    read_counters,
    read_mlnx_qos,
    unmapped,
)
from .perftest import PerftestParams, PerftestRun, format_report, read_perftest
from .perftest import compare as compare_perftest
from .perftest import simulate as simulate_perftest
from .replay import compare_capture, replay_scenario, write_replay
from .report import Comparison, Row

__all__ = [
    "Comparison",
    "Counters",
    "PerftestParams",
    "PerftestRun",
    "QosSettings",
    "Row",
    "compare_capture",
    "compare_counters",
    "compare_counters_files",
    "compare_fio_files",
    "compare_perftest",
    "compare_perftest_file",
    "format_report",
    "icrc_errors",
    "iscsi_commands",
    "messages",
    "per_qp",
    "qos_attributes",
    "read_capture",
    "read_counters",
    "read_mlnx_qos",
    "read_perftest",
    "replay_scenario",
    "simulate_perftest",
    "summary",
    "unmapped",
    "write_replay",
]


def compare_perftest_file(hw_path, sim=None, *, speed=None, topology=None, overrides=None,
                          seed=None) -> Comparison:  # fmt: skip
    """A perftest output against lfsim perftest's (a folder or perftest.txt), or, without one,
    against the same benchmark simulated now with the output's settings (its header: verb,
    sizes, QPs, MTU, TX depth, CQ moderation, inline data; iterations as printed, perftest's
    default for a -D run)."""
    from .perftest import link_bps, load_sim, simulate

    hw = read_perftest(hw_path, "HW")
    if sim is not None:
        return compare_perftest(hw, load_sim(sim, "SIM"))
    over = dict(overrides or {})
    if hw.max_inline is not None and hw.verb != "read":
        over.setdefault("RdmaNic.MaxInlineData", hw.max_inline)
    notes = []
    if speed is None and hw.link_rate_gbps is not None:
        speed = f"{hw.link_rate_gbps:g}GbE"
        notes.append(f"the link rate the file states, {hw.link_rate_gbps:g} Gb/s, simulated")
    p = PerftestParams.like(hw, speed=speed, topology=topology, seed=seed)
    p.overrides = over
    run, _ = simulate(p)
    run.path = f"lfsim perftest ({p.speed}, {p.topology})"
    cmp = compare_perftest(hw, run)
    cmp.warnings.extend(notes)
    if hw.duration_s is not None:
        cmp.warnings.append(
            f"HW ran for -D {hw.duration_s:g} s; simulated {p.iters} iterations per QP instead"
        )
    elif len(hw.sizes) > 1 and hw.test == "bw":
        cmp.warnings.append(
            "HW's sweep ran the iterations it prints per size; simulated per size at most what "
            "moves 64 MiB per QP (the steady state's average)"
        )
    if hw.test == "bw" and len(hw.results):
        measured = float(hw.bw_gbps().max())
        rate = link_bps(p.speed) / 1e9
        if measured > rate:
            cmp.warnings.append(
                f"HW measured {measured:.4g} Gb/s, more than the simulated link's {rate:g} Gb/s "
                f"({p.speed}): the comparison is of different links; accepted: --speed with "
                "the NIC's rate"
            )
    return cmp


def compare_fio_files(hw_path, sim_path, match: str = "name") -> Comparison:
    """fio JSON against lfsim's fio.json (or a run folder holding one); a fio latency log
    against a run's I/Os (its ios table, or a simulated latency log)."""
    import pandas as pd

    from .. import fio

    cmp = Comparison("fio", str(hw_path), str(sim_path))
    sim_p = Path(sim_path)
    if _is_lat_log(hw_path):
        hw = fio.read_lat_log(hw_path, "HW")
        if sim_p.is_dir():
            if not (sim_p / "ios.parquet").is_file():
                from ..errors import ScenarioError

                raise ScenarioError(
                    f"SIM: {sim_p} has no ios table; accepted: the output folder of a run with a "
                    "Fio workload, or a fio latency log"
                )
            sim = fio.lat_log_from_ios(pd.read_parquet(sim_p / "ios.parquet"))
        else:
            sim = fio.read_lat_log(sim_p, "SIM")
        for r in fio.compare_lat_logs(hw, sim):
            unit = "us" if r["metric"].endswith("_us") else ""
            cmp.add(r["dir"], r["metric"], unit, r["hw"], r["sim"])
        return cmp
    if sim_p.is_dir():
        sim_p = sim_p / "fio.json"
    warnings: list[str] = []
    rows = fio.compare(fio.load_fio_json(sim_p, "SIM"), fio.load_fio_json(hw_path, "HW"), match,
                       warnings)  # fmt: skip
    cmp.warnings.extend(warnings)
    units = {"iops": "IO/s", "bw_MiBps": "MiB/s"}
    for r in rows:
        cmp.add(f"{r['job']} {r['dir']}", r["metric"], units.get(r["metric"], "us"), r["hw"],
                r["sim"])  # fmt: skip
    return cmp


def _is_lat_log(path) -> bool:
    try:
        with open(path, errors="replace") as f:
            first = f.readline()
    except OSError:
        return False
    parts = [x.strip() for x in first.split(",")]
    return len(parts) >= 4 and all(x.lstrip("-").isdigit() for x in parts[:4])


def compare_counters_files(hw_path, result_dir, before=None, ports=None) -> Comparison:
    hw = read_counters(hw_path, "HW")
    if before:
        hw = hw - read_counters(before, "--before")
    return compare_counters(hw, result_dir, parse_port_map(ports))
