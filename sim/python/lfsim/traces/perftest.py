"""perftest (``ib_{write,read,send}_{bw,lat}``): its text output read into pandas, the same
benchmark run in the simulator (the ``Perftest`` workload), and the two compared.

``read_perftest(path)`` reads the header (device, link type, transport, connection type, QPs,
MTU, TX depth, CQ moderation, inline data, outstanding reads, ...), the command line (size
``-s`` or sweep ``-a``, ``-n``, ``-D``, ``-q``, ``--report_gbits``) and the result table.
Lines perftest prints among them (CPU frequency warnings) are skipped; an odd run (a peak far
above the average, a peak of 0.00 with ``-D``) is read as printed and named in ``warnings``.

``report_from_table(table, ...)`` turns the simulated per-iteration times into perftest's own
report, with perftest's arithmetic (perftest_parameters.c: ``print_report_bw``,
``print_report_lat``): BW average = size x iterations x QPs / (last completion - first post),
in MB/s of 2^20 bytes or Gb/s of 10^9 bits (``--report_gbits``); the peak is the best rate
over any window from post i to the cq_mod-th completion after it; latency is the time between
consecutive posts (half of it for WRITE and SEND, a round trip), sorted with the two largest
dropped, t_typical its median, 99 % and 99.9 % the values at ceil(n x 0.99) and ceil(n x 0.999).
"""

from __future__ import annotations

import copy
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ScenarioError, quote

VERBS = ("write", "read", "send")
TESTS = ("bw", "lat")
TOOLS = tuple(f"ib_{v}_{t}" for v in VERBS for t in TESTS)
MB = 0x100000  # perftest's MB/sec: 2^20 bytes
GB_BYTES = 125_000_000  # perftest's Gb/sec: 10^9 bits
PERFTEST_FORM = "the text output of ib_{write,read,send}_{bw,lat} (perftest)"

_TITLES = {
    "RDMA_Write BW Test": ("write", "bw"),
    "RDMA_Read BW Test": ("read", "bw"),
    "Send BW Test": ("send", "bw"),
    "RDMA_Write Latency Test": ("write", "lat"),
    "RDMA_Read Latency Test": ("read", "lat"),
    "Send Latency Test": ("send", "lat"),
}
_KEY = r"[A-Za-z][A-Za-z0-9_.* -]*?"
_FIELD = re.compile(rf"({_KEY})\s*:\s*(\S+)")
_BW_COLS = ["bytes", "iterations", "bw_peak", "bw_avg", "msg_rate_Mpps"]
_LAT_COLS = ["bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us", "t_avg_us",
             "t_stdev_us", "p99_us", "p99_9_us"]  # fmt: skip
# perftest's defaults (perftest_parameters.h) for what a header does not print.
DEFAULT_ITERS = {"bw": 5000, "lat": 1000}
DEFAULT_SIZE = {"bw": 65536, "lat": 2}


@dataclass
class PerftestRun:
    """One perftest output: ``header`` as printed (strings), the typed settings, ``results``
    (one row per size) and what was odd about it (``warnings``)."""

    path: str
    verb: str
    test: str
    header: dict = field(default_factory=dict)
    command: str = ""
    results: pd.DataFrame = field(default_factory=pd.DataFrame)
    warnings: list = field(default_factory=list)
    units: str = "MB/sec"  # bw: MB/sec or Gb/sec; lat: usec

    @property
    def tool(self) -> str:
        return f"ib_{self.verb}_{self.test}"

    def _int(self, key: str, default=None):
        v = self.header.get(key)
        m = re.match(r"-?\d+", v or "")
        return int(m.group(0)) if m else default

    @property
    def device(self) -> str | None:
        return self.header.get("Device")

    @property
    def link_type(self) -> str | None:
        return self.header.get("Link type")

    @property
    def transport(self) -> str | None:
        return self.header.get("Transport type")

    @property
    def connection(self) -> str | None:
        return self.header.get("Connection type")

    @property
    def qps(self) -> int:
        return self._int("Number of qps", 1)

    @property
    def mtu(self) -> int | None:
        return self._int("Mtu")

    @property
    def tx_depth(self) -> int:
        return self._int("TX depth", 128 if self.test == "bw" else 1)

    @property
    def cq_moderation(self) -> int:
        return self._int("CQ Moderation", 100 if self.test == "bw" else 1)

    @property
    def max_inline(self) -> int | None:
        return self._int("Max inline data")

    @property
    def outstanding_reads(self) -> int | None:
        return self._int("Outstand reads")

    # What a lab pastes beside perftest's output: ibstat's "Rate: 100" or ibv_devinfo -v's
    # "active_speed: 25.0 Gbps (32)" with "active_width: 4X (2)" (the port's lanes).
    link_rate_gbps: float | None = None

    @property
    def rdma_cm(self) -> bool:
        return (self.header.get("rdma_cm QPs") or "").upper() == "ON"

    def option(self, *names: str) -> str | None:
        """The value of a command-line option (``-D``, ``--duration``), None if absent."""
        words = self.command.split()
        for i, w in enumerate(words):
            for name in names:
                if w == name and i + 1 < len(words):
                    return words[i + 1]
                if name.startswith("--") and w.startswith(name + "="):
                    return w.split("=", 1)[1]
        return None

    @property
    def duration_s(self) -> float | None:
        v = self.option("-D", "--duration")
        return float(v) if v is not None else None

    @property
    def report_gbits(self) -> bool:
        return "--report_gbits" in self.command.split() or self.units == "Gb/sec"

    @property
    def sizes(self) -> list[int]:
        return [int(s) for s in self.results["bytes"]] if len(self.results) else []

    def bw_gbps(self) -> pd.Series:
        """The average bandwidth of each size in Gb/s (10^9 bit/s), whatever the units."""
        scale = 1.0 if self.units == "Gb/sec" else MB * 8 / 1e9
        return self.results["bw_avg"] * scale

    def summary(self) -> dict:
        return {
            "tool": self.tool,
            "device": self.device,
            "link_type": self.link_type,
            "transport": self.transport,
            "connection": self.connection,
            "qps": self.qps,
            "mtu": self.mtu,
            "tx_depth": self.tx_depth,
            "cq_moderation": self.cq_moderation,
            "max_inline": self.max_inline,
            "outstanding_reads": self.outstanding_reads,
            "duration_s": self.duration_s,
            "units": self.units,
        }


def _check_path(path, key: str) -> str:
    from .report import read_text

    return read_text(path, key, PERFTEST_FORM)


def read_perftest(path: str | os.PathLike, key: str = "HW") -> PerftestRun:
    """Read one perftest output file; a ScenarioError naming ``key`` if it is not one."""
    return parse_perftest(_check_path(path, key), str(path), key)


def parse_perftest(text: str, name: str = "<text>", key: str = "HW") -> PerftestRun:
    lines = text.splitlines()
    title = next(
        ((i, _TITLES[t]) for i, line in enumerate(lines) for t in _TITLES if line.strip() == t),
        None,
    )
    if title is None:
        raise ScenarioError(
            f"{key}: {quote(name)} has no perftest title line (e.g. 'RDMA_Write BW Test'); "
            f"accepted: {PERFTEST_FORM}"
        )
    start, (verb, test) = title
    run = PerftestRun(path=name, verb=verb, test=test)
    # The command: the last line before the title that runs the tool (client and server lines
    # are often both pasted; the client's names the server's address and comes last).
    tool = f"ib_{verb}_{test}"
    commands = [line for line in lines[:start] if tool in line]
    if commands:
        run.command = commands[-1][commands[-1].index(tool) :].strip()
    # The header: "Key : value" pairs (one or two per line) up to the next dashed line.
    i = start + 1
    while i < len(lines) and not lines[i].strip().startswith("---"):
        for k, v in _FIELD.findall(lines[i]):
            run.header[k.strip()] = v.strip()
        i += 1
    # The result table: the line starting "#bytes", then its rows up to a dashed line.
    head = next((j for j in range(i, len(lines)) if lines[j].strip().startswith("#bytes")), None)
    if head is None:
        raise ScenarioError(
            f"{key}: {quote(name)} has no result table (a '#bytes' line); accepted: {PERFTEST_FORM}"
        )
    m = re.search(r"BW average\[([^\]]+)\]", lines[head])
    run.units = m.group(1) if m else "usec"
    cols = _BW_COLS if test == "bw" else _LAT_COLS
    rows = []
    for line in lines[head + 1 :]:
        s = line.strip()
        if s.startswith("---"):
            break
        words = s.split()
        if words and all(_is_num(w) for w in words) and len(words) >= len(cols):
            rows.append([float(w) for w in words[: len(cols)]])
        elif s:
            run.warnings.append(f"not a result row, skipped: {s}")
    if not rows:
        raise ScenarioError(
            f"{key}: {quote(name)} has a result table without rows; accepted: {PERFTEST_FORM}"
        )
    run.link_rate_gbps = _stated_rate(lines)
    df = pd.DataFrame(rows, columns=cols)
    df["bytes"] = df["bytes"].astype(np.int64)
    df["iterations"] = df["iterations"].astype(np.int64)
    run.results = df
    _odd(run)
    return run


def _stated_rate(lines: list[str]) -> float | None:
    """The link rate (Gb/s) the file states, if it holds ibstat's or ibv_devinfo's port
    output; None if it states none or several different ones."""
    rates = set()
    width = None
    for line in lines:
        if m := re.match(r"\s*Rate:\s*(\d+(?:\.\d+)?)\s*$", line):
            rates.add(float(m.group(1)))
        elif m := re.match(r"\s*active_width:\s*(\d+)X", line):
            width = int(m.group(1))
        elif m := re.match(r"\s*active_speed:\s*(\d+(?:\.\d+)?)\s*Gbps", line):
            rates.add(-float(m.group(1)))  # per lane: times the width below
    if width is not None:
        rates = {-r * width if r < 0 else r for r in rates}
    rates = {r for r in rates if r > 0}
    return rates.pop() if len(rates) == 1 else None


def _is_num(w: str) -> bool:
    try:
        float(w)
    except ValueError:
        return False
    return True


def _odd(run: PerftestRun) -> None:
    if run.test == "bw":
        for _, r in run.results.iterrows():
            if r["bw_peak"] == 0:
                run.warnings.append(
                    f"{int(r['bytes'])} B: BW peak printed as 0 (no peak is measured with -D or "
                    "--run_infinitely)"
                )
            elif r["bw_avg"] > 0 and r["bw_peak"] > 10 * r["bw_avg"]:
                run.warnings.append(
                    f"{int(r['bytes'])} B: BW peak {r['bw_peak']:g} is "
                    f"{r['bw_peak'] / r['bw_avg']:.0f} x the average {r['bw_avg']:g}: an "
                    "anomalous run (the average is the one compared)"
                )
    gid = " ".join(k for k in run.header) + " " + " ".join(run.header.values())
    if run.link_type == "IB" and ("Ethernet" in gid or run.rdma_cm):
        run.warnings.append(
            "header says Link type IB for a RoCE run; read the table, not the label"
        )


# ---------------------------------------------------------------------------------------------
# perftest's report from simulated times.


def report_from_table(
    table: pd.DataFrame, verb: str, test: str, size: int, cq_mod: int = 100, gbits: bool = False
) -> dict:
    """perftest's numbers for one size from the ``perftest`` table of a simulated run
    (post_ns, done_ns per client work request)."""
    if test == "bw":
        post = np.sort(table["post_ns"].to_numpy(dtype=np.float64))
        done = np.sort(table.loc[table["done_ns"] >= 0, "done_ns"].to_numpy(dtype=np.float64))
        n = len(done)
        if n == 0:
            return {"bytes": size, "iterations": 0, "bw_peak": 0.0, "bw_avg": 0.0,
                    "msg_rate_Mpps": 0.0}  # fmt: skip
        span_s = (done[-1] - post[0]) * 1e-9
        factor = GB_BYTES if gbits else MB
        avg = size * n / span_s / factor
        peak = size / (_opt_delta(post[:n], done, max(int(cq_mod), 1)) * 1e-9) / factor
        return {"bytes": size, "iterations": n, "bw_peak": peak, "bw_avg": avg,
                "msg_rate_Mpps": n / span_s / 1e6}  # fmt: skip
    post = np.sort(table["post_ns"].to_numpy(dtype=np.float64))
    rtt = 1 if verb == "read" else 2
    delta = np.sort(np.diff(post)) / rtt / 1000.0  # us
    cnt = len(delta) - 2  # LAT_MEASURE_TAIL
    if cnt < 1:
        raise ScenarioError(
            f"perftest: {len(post)} iterations; accepted: at least 4 for a latency report"
        )
    median = (delta[cnt // 2] + delta[cnt // 2 - 1]) / 2 if (cnt - 1) % 2 else delta[cnt // 2]
    kept = delta[:cnt]
    avg = float(kept.mean())
    return {
        "bytes": size,
        "iterations": len(post),
        "t_min_us": float(delta[0]),
        "t_max_us": float(delta[min(cnt, len(delta) - 1)]),
        "t_typical_us": float(median),
        "t_avg_us": avg,
        "t_stdev_us": float(math.sqrt(((kept - avg) ** 2).mean())),
        "p99_us": float(delta[min(math.ceil(cnt * 0.99), len(delta) - 1)]),
        "p99_9_us": float(delta[min(math.ceil(cnt * 0.999), len(delta) - 1)]),
    }


def _opt_delta(post: np.ndarray, done: np.ndarray, cq_mod: int) -> float:
    """print_report_bw's peak: the smallest (tcompleted[j] - tposted[i]) / (j - i + 1) over
    every i and the signalled completions j >= i (every cq_mod-th, and the last)."""
    n = len(done)
    best = done[0] - post[0]
    signalled = np.arange(cq_mod - 1, n, cq_mod)
    if n % cq_mod:
        signalled = np.append(signalled, n - 1)
    for i in range(n):
        js = signalled[signalled >= i]
        if len(js):
            best = min(best, float(((done[js] - post[i]) / (js - i + 1)).min()))
    return best


def format_report(run: PerftestRun) -> str:
    """The run as perftest prints it: title, header, result table (so that read_perftest reads
    a simulated run as it reads a measured one)."""
    title = {v: k for k, v in _TITLES.items()}[(run.verb, run.test)]
    dash = "-" * 87
    out = [f"lfsim perftest: {run.command}", dash, f"                    {title}"]
    for k, v in run.header.items():
        out.append(f" {k:<15} : {v}")
    out.append(dash)
    if run.test == "bw":
        u = run.units
        out.append(f" #bytes     #iterations    BW peak[{u}]    BW average[{u}]   MsgRate[Mpps]")
        for _, r in run.results.iterrows():
            out.append(
                f" {int(r['bytes']):<10} {int(r['iterations']):<16} {r['bw_peak']:<18.2f} "
                f"{r['bw_avg']:<18.2f} {r['msg_rate_Mpps']:.6f}"
            )
    else:
        out.append(
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
            "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] "
        )
        for _, r in run.results.iterrows():
            out.append(
                f" {int(r['bytes']):<7} {int(r['iterations']):<13} {r['t_min_us']:<14.2f} "
                f"{r['t_max_us']:<12.2f} {r['t_typical_us']:<18.2f} {r['t_avg_us']:<14.2f} "
                f"{r['t_stdev_us']:<15.2f} {r['p99_us']:<22.2f} {r['p99_9_us']:.2f}"
            )
    out.append(dash)
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# The simulated benchmark.

SWEEP_SIZES = [2**k for k in range(1, 24)]  # perftest -a: 2 B .. 8 MiB
TOPOLOGIES = ("switch", "b2b")


@dataclass
class PerftestParams:
    """What ``lfsim perftest`` runs: the tool's options and the network around it."""

    verb: str = "write"
    test: str = "bw"
    sizes: list = field(default_factory=lambda: [65536])
    iterations: int | None = None
    qps: int = 1
    mtu: int = 1024
    tx_depth: int | None = None
    cq_mod: int | None = None
    speed: str = "100GbE"
    topology: str = "switch"
    gbits: bool = False
    seed: int = 1
    overrides: dict = field(default_factory=dict)

    def check(self) -> None:
        if self.verb not in VERBS:
            raise ScenarioError(f"verb: got {quote(self.verb)}; accepted: write, read or send")
        if self.test not in TESTS:
            raise ScenarioError(f"test: got {quote(self.test)}; accepted: bw or lat")
        if self.topology not in TOPOLOGIES:
            raise ScenarioError(
                f"--topology: got {quote(self.topology)}; accepted: switch (two hosts on one "
                "switch) or b2b (back to back)"
            )
        for s in self.sizes:
            if not isinstance(s, (int, np.integer)) or not 1 <= s <= 2**31:
                raise ScenarioError(f"-s: got {quote(s)}; accepted: bytes, 1..2147483648")
        if self.mtu not in (256, 512, 1024, 2048, 4096):
            raise ScenarioError(f"-m: got {quote(self.mtu)}; accepted: 256, 512, 1024, 2048, 4096")
        if self.test == "lat" and self.qps != 1:
            raise ScenarioError(f"-q: got {self.qps} with a latency test; accepted: 1")

    @property
    def iters(self) -> int:
        return self.iterations or DEFAULT_ITERS[self.test]

    def iters_for(self, size: int) -> int:
        """Iterations of one size: -n, or perftest's default; in a sweep (-a) without -n, at
        most what moves 64 MiB per QP (at least 100), so that 8 MiB sizes stay short to
        simulate (a bandwidth average in steady state does not depend on the count)."""
        if self.iterations or len(self.sizes) == 1:
            return self.iters
        return min(self.iters, max(100, 2**26 // int(size)))

    @property
    def depth(self) -> int:
        return 1 if self.test == "lat" else (self.tx_depth or 128)

    @property
    def cq(self) -> int:
        return self.cq_mod or (100 if self.test == "bw" else 1)

    @classmethod
    def like(cls, hw: PerftestRun, **kw) -> PerftestParams:
        """The parameters of a measured run (what its header and command line say)."""
        p = cls(
            verb=hw.verb,
            test=hw.test,
            sizes=hw.sizes,
            qps=hw.qps,
            mtu=hw.mtu or 1024,
            tx_depth=hw.tx_depth,
            cq_mod=hw.cq_moderation,
            gbits=hw.report_gbits,
        )
        if hw.duration_s is None and len(hw.results) and len(hw.sizes) == 1:
            # One size: its iteration count as printed. A sweep (-a) is simulated with
            # iters_for's count per size (its bandwidth average is that of the steady state).
            p.iterations = int(hw.results["iterations"].iloc[0]) // (
                hw.qps if hw.test == "bw" else 1
            )
        for k, v in kw.items():
            if v is not None:
                setattr(p, k, v)
        return p


def link_bps(speed: str) -> float:
    """An Ethernet speed as lfsim names it (25GbE, 400GbE) in bit/s."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*G(?:bE|bps|b/s)?", str(speed).strip(), re.IGNORECASE)
    if not m:
        raise ScenarioError(
            f"--speed: got {quote(speed)}; accepted: a rate such as 25GbE or 100GbE"
        )
    return float(m.group(1)) * 1e9


def scenario_for(p: PerftestParams, size: int) -> dict:
    """The scenario of one size: scenarios/perftest.yaml with the benchmark's settings."""
    from ..paths import scenarios_dir
    from ..scenario import read_yaml

    raw = copy.deepcopy(read_yaml(scenarios_dir() / "perftest.yaml"))
    raw["seed"] = p.seed
    raw["topology"] = (
        {"generator": "Star", "Hosts": 2, "HostSpeed": p.speed}
        if p.topology == "switch"
        else {"generator": "PointToPoint", "HostSpeed": p.speed}
    )
    w = raw["workload"]["perftest"]
    w.update(
        Test=p.test,
        Operation=p.verb.capitalize(),
        MessageSize=int(size),
        Messages=int(p.iters_for(size)),
    )
    w.update(QueueDepth=int(p.depth), QueuePairs=int(p.qps))
    # The run ends when the iterations are done; stop_time is only a bound against a stall,
    # so it must exceed the time the bytes take at the link rate, whatever -n and -q ask.
    qps = p.qps if p.test == "bw" else 1
    wire_s = 2 * int(size) * p.iters_for(size) * qps * 8 / link_bps(p.speed)
    raw["stop_time"] = f"{max(5.0, 4 * wire_s + 0.1):.6g}s"
    raw.setdefault("RdmaNic", {})["PathMtu"] = int(p.mtu)
    raw["name"] = f"perftest_{p.verb}_{p.test}_{size}"
    return raw


def simulate(p: PerftestParams, progress: bool = False) -> tuple[PerftestRun, list]:
    """Run the benchmark size by size; returns the simulated run (perftest's report) and the
    lfsim Results."""
    from ..runner import run as run_scenario
    from ..scenario import load_scenario

    p.check()
    rows, results = [], []
    for size in p.sizes:
        sc = load_scenario(scenario_for(p, size), dict(p.overrides))
        w = sc.config["workload"]["perftest"]
        want = int(w["Messages"]) * (int(w.get("QueuePairs", 1)) if p.test == "bw" else 1)
        r = run_scenario(sc, progress=progress)
        t = r.table("perftest")
        if (t["done_ns"] < 0).any() or len(t) < want:
            raise ScenarioError(
                f"stop_time: the simulated {p.verb} {p.test} of {size} B did not finish "
                f"({int((t['done_ns'] >= 0).sum())} of {want} iterations); accepted: a longer "
                "stop_time (--set stop_time=...)"
            )
        rows.append(report_from_table(t, p.verb, p.test, size, p.cq, p.gbits))
        results.append(r)
    run = PerftestRun(path="<simulated>", verb=p.verb, test=p.test)
    run.units = ("Gb/sec" if p.gbits else "MB/sec") if p.test == "bw" else "usec"
    run.command = (
        f"ib_{p.verb}_{p.test} " + ("-a " if len(p.sizes) > 1 else f"-s {p.sizes[0]} ")
        + f"-n {p.iters} -m {p.mtu}" + (f" -q {p.qps} -t {p.depth}" if p.test == "bw" else "")
        + (" --report_gbits" if p.gbits else "")
        + f"  (lfsim: {p.speed}, {'one switch' if p.topology == 'switch' else 'back to back'})"
    )  # fmt: skip
    run.header = {
        "Device": "lfsim RdmaNic",
        "Number of qps": str(p.qps),
        "Transport type": "IB",
        "Connection type": "RC",
        "TX depth": str(p.depth),
        "Mtu": f"{p.mtu}[B]",
        "Link type": "Ethernet",
    }
    if p.test == "bw":
        run.header["CQ Moderation"] = str(p.cq)
    run.results = pd.DataFrame(rows)
    return run, results


def compare(hw: PerftestRun, sim: PerftestRun, kind_name: str = "perftest"):
    """Per size, HW against SIM: bw tests the average bandwidth (and peak when HW measured
    one) and message rate; lat tests t_typical, t_avg, t_min and the 99 % percentile."""
    from .report import Comparison

    if (hw.verb, hw.test) != (sim.verb, sim.test):
        raise ScenarioError(
            f"SIM: is {sim.tool}, HW is {hw.tool}; accepted: the same perftest tool on both sides"
        )
    c = Comparison(kind_name, hw.path, sim.path)
    c.warnings.extend(f"HW: {w}" for w in hw.warnings)
    by_size = sim.results.set_index("bytes")
    for _, h in hw.results.iterrows():
        size = int(h["bytes"])
        if size not in by_size.index:
            c.warnings.append(f"SIM has no {size} B row")
            continue
        s = by_size.loc[size]
        if hw.test == "bw":
            unit = hw.units
            scale = _unit_scale(sim.units, unit)
            c.add(size, "BW average", unit, h["bw_avg"], s["bw_avg"] * scale)
            if h["bw_peak"] > 0:
                c.add(size, "BW peak", unit, h["bw_peak"], s["bw_peak"] * scale)
            c.add(size, "MsgRate", "Mpps", h["msg_rate_Mpps"], s["msg_rate_Mpps"])
        else:
            for col, name in (("t_typical_us", "t_typical"), ("t_avg_us", "t_avg"),
                              ("t_min_us", "t_min"), ("p99_us", "99%")):  # fmt: skip
                c.add(size, name, "us", h[col], s[col])
    return c


def _unit_scale(src: str, dst: str) -> float:
    """Factor from perftest bandwidth unit src to dst."""
    bps = {"MB/sec": MB * 8, "Gb/sec": 1e9}
    return bps.get(src, 1.0) / bps.get(dst, 1.0)


def load_sim(path: str | os.PathLike, key: str = "SIM") -> PerftestRun:
    """A simulated run written by ``lfsim perftest`` (its perftest.txt, or the folder)."""
    p = Path(path)
    if p.is_dir():
        p = p / "perftest.txt"
    return read_perftest(p, key)
