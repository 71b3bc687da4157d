"""The HPCC simulator's ``config.txt`` (github.com/alibaba-edu/High-Precision-Congestion-Control,
``simulation/scratch/third.cc``) and ns3-datacenter's (github.com/inet-tub/ns3-datacenter,
``simulator/ns-3.39/examples/PowerTCP/powertcp-evaluation-{burst,workload,fairness}.cc``), read
as those programs read it and mapped onto lfsim's attributes (``lfsim convert hpcc --config``).

Both programs read the file as a stream of words: a word naming a key takes the words of its
value after it (``KMAX_MAP 2 25000000000 400 100000000000 1600``), any other word is skipped,
and a key given twice keeps its last value. A key the program does not read is ignored there,
so here too, with a warning. What each key means, what it maps to and what lfsim refuses is
the table in docs/scenarios.md ("HPCC simulator's config.txt"); the comments below say where in
the reference code each rule comes from.

The programs differ in a few places, chosen with ``--program``: ``third`` (the HPCC simulator;
its topology starts ``NODES SWITCHES LINKS``) or ``burst``, ``workload``, ``fairness``
(ns3-datacenter's PowerTCP evaluation programs; ``NODES SWITCHES TORS LINKS``):

- switch buffer (switch-mmu.cc): third reserves 4 KiB per port, resumes 3 KiB under the
  threshold and halves the dynamic threshold's 1/8 once per doubling of a port's rate over the
  NIC's (pfc_a_shift); ns3-datacenter reserves nothing, resumes 2496 B under it, uses 1/8
  everywhere, and its burst program adds the headroom to BUFFER_SIZE where workload and
  fairness take it out of BUFFER_SIZE (for all 8 queues of every port);
- ns3-datacenter's programs take the congestion control from their command line, not from the
  file: ``--algorithm`` (default 3) replaces CC_MODE, ``--windowCheck`` (default 1) HAS_WIN and
  VAR_WIN, and with CC mode 3 ``--wien`` (default true) selects PowerTCP, ``--wien --delayWien``
  theta-PowerTCP. convert takes CC_MODE, HAS_WIN and VAR_WIN from the file unless those flags
  are given to it;
- third takes LINK_DOWN's link down; ns3-datacenter reads the key and never does.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from .errors import ScenarioError, quote

PROGRAMS = ("third", "burst", "workload", "fairness")
NS3_DATACENTER = ("burst", "workload", "fairness")
PROGRAM_NAMES = {
    "third": "the HPCC simulator's third.cc",
    "burst": "ns3-datacenter's powertcp-evaluation-burst",
    "workload": "ns3-datacenter's powertcp-evaluation-workload",
    "fairness": "ns3-datacenter's powertcp-evaluation-fairness",
}
# CC_MODE values (third.cc's config_doc.txt; rdma-hw.cc's m_cc_mode) -> RdmaNic.CongestionControl.
CC_MODES = {1: "Dcqcn", 3: "Hpcc", 7: "Timely", 8: "Dctcp"}
CC_ACCEPTED = "1 (DCQCN), 3 (HPCC), 7 (TIMELY) or 8 (DCTCP)"
# The Ethernet rates lfsim models (hpcc.ETHERNET_GBPS), in bit/s as the maps give them.
MAP_RATES = tuple(g * 10**9 for g in (10, 25, 40, 50, 100, 200, 400))
PATH_MTUS = (256, 512, 1024, 2048, 4096)  # RdmaNic.PathMtu: IBTA's path MTUs
DATA_DSCP = 26  # RdmaNic.Dscp's default: class 3, the flows' usual class
INT_HOPS = 5  # IntHeader::maxHop in both codes: every HPCC data packet carries 5 hop records

_KEY_WORD = re.compile(r"[A-Z][A-Z0-9_]*")
_UINT = re.compile(r"\d+")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# ns-3's DataRate strings (src/network/utils/data-rate.cc, DoParse): a number and one of these
# units (bit/s per unit); a bare number is bit/s.
_RATE_UNITS = {
    "bps": 1, "b/s": 1, "Bps": 8, "B/s": 8,
    "kbps": 10**3, "kb/s": 10**3, "Kbps": 10**3, "Kb/s": 10**3,
    "kBps": 8 * 10**3, "kB/s": 8 * 10**3, "KBps": 8 * 10**3, "KB/s": 8 * 10**3,
    "Kib/s": 2**10, "KiB/s": 8 * 2**10,
    "Mbps": 10**6, "Mb/s": 10**6, "MBps": 8 * 10**6, "MB/s": 8 * 10**6,
    "Mib/s": 2**20, "MiB/s": 8 * 2**20,
    "Gbps": 10**9, "Gb/s": 10**9, "GBps": 8 * 10**9, "GB/s": 8 * 10**9,
    "Gib/s": 2**30, "GiB/s": 8 * 2**30,
}  # fmt: skip
_RATE = re.compile(r"(\d+\.?\d*|\.\d+)(" + "|".join(re.escape(u) for u in _RATE_UNITS) + ")?")
RATE_FORM = "a rate as ns-3's DataRate reads it, e.g. 50Mb/s, 100Mbps, 1Gb/s"
_TIME_PS = {"s": 10**12, "ms": 10**9, "us": 10**6, "ns": 10**3, "ps": 1}
_DELAY = re.compile(r"(\d+\.?\d*|\.\d+)(s|ms|us|ns|ps)")

# Every key the two programs read: its value's form and the program's value when the file does
# not give the key (the globals of third.cc and powertcp-evaluation-*.cc; None where that value
# cannot be used: an empty rate string, whose DataRate ns-3 refuses). "flag": an unsigned
# integer, 0 false, anything else true, as `conf >> v; x = v` makes it.
KEYS: dict[str, tuple[str, Any]] = {
    "ENABLE_QCN": ("flag", 1),
    "USE_DYNAMIC_PFC_THRESHOLD": ("flag", 1),
    "CLAMP_TARGET_RATE": ("flag", 0),
    "PAUSE_TIME": ("number", "5"),
    "DATA_RATE": ("word", ""),
    "LINK_DELAY": ("word", ""),
    "PACKET_PAYLOAD_SIZE": ("uint", 1000),
    "L2_CHUNK_SIZE": ("uint", 0),
    "L2_ACK_INTERVAL": ("uint", 0),
    "L2_BACK_TO_ZERO": ("flag", 0),
    "TOPOLOGY_FILE": ("word", ""),
    "FLOW_FILE": ("word", ""),
    "TRACE_FILE": ("word", ""),
    "TRACE_OUTPUT_FILE": ("word", ""),
    "FCT_OUTPUT_FILE": ("word", "fct.txt"),
    "PFC_OUTPUT_FILE": ("word", "pfc.txt"),
    "SIMULATOR_STOP_TIME": ("number", "3.01"),
    "ALPHA_RESUME_INTERVAL": ("number", "55"),
    "RP_TIMER": ("number", "0"),
    "EWMA_GAIN": ("number", "0"),  # `double ewma_gain = 1 / 16;`: an integer division, 0
    "FAST_RECOVERY_TIMES": ("uint", 5),
    "RATE_AI": ("rate", None),
    "RATE_HAI": ("rate", None),
    "ERROR_RATE_PER_LINK": ("number", "0"),
    "CC_MODE": ("uint", 1),
    "RATE_DECREASE_INTERVAL": ("number", "4"),
    "MIN_RATE": ("rate", "100Mb/s"),
    "HAS_WIN": ("uint", 1),
    "GLOBAL_T": ("uint", 1),
    "MI_THRESH": ("uint", 5),
    "VAR_WIN": ("flag", 0),
    "FAST_REACT": ("flag", 1),
    "U_TARGET": ("number", "0.95"),
    "INT_MULTI": ("uint", 1),
    "RATE_BOUND": ("flag", 1),
    "ACK_HIGH_PRIO": ("uint", 0),
    "DCTCP_RATE_AI": ("rate", "1000Mb/s"),
    "LINK_DOWN": ("link_down", (0, 0, 0)),
    "ENABLE_TRACE": ("uint", 1),
    "KMAX_MAP": ("map_uint", {}),
    "KMIN_MAP": ("map_uint", {}),
    "PMAX_MAP": ("map_number", {}),
    "BUFFER_SIZE": ("uint", 16),
    "QLEN_MON_FILE": ("word", ""),
    "QLEN_MON_START": ("uint64", 2000000000),
    "QLEN_MON_END": ("uint64", 2100000000),
    "MULTI_RATE": ("flag", 1),
    "SAMPLE_FEEDBACK": ("flag", 0),
    "PINT_LOG_BASE": ("number", "1.05"),
    "PINT_PROB": ("number", "1.0"),
}
_FORMS = {
    "flag": "0 or 1",
    "uint": "an integer 0..4294967295",
    "uint64": "an integer 0..18446744073709551615",
    "number": "a number, e.g. 0.95 or 1e-3",
    "rate": RATE_FORM,
    "word": "one word (a file name)",
    "link_down": "three integers: time (us after 2 s), node A, node B; 0 0 0 for none",
    "map_uint": "a count N, then N pairs RATE K: a rate in bit/s and an integer (KB)",
    "map_number": "a count N, then N pairs RATE P: a rate in bit/s and a probability",
}


@dataclass
class Setting:
    """One key's value as the program reads it, and where it comes from."""

    key: str
    value: Any
    line: int | None  # None: the key is absent, value is the program's default
    text: str  # the value's words, for messages


@dataclass
class HpccConfig:
    path: Path
    settings: dict[str, Setting]
    # Map keys: rate (bit/s) -> (value, line), merged over repeated keys as the programs do.
    maps: dict[str, dict[int, tuple[Any, int]]]
    warnings: list[str] = field(default_factory=list)

    def get(self, key: str) -> Setting:
        if key in self.settings:
            return self.settings[key]
        kind, default = KEYS[key]
        value = default
        if kind == "number":
            value = Decimal(default)
        elif kind == "rate" and default is not None:
            value = data_rate_bps(default)
        text = " ".join(map(str, default)) if isinstance(default, tuple) else str(default)
        return Setting(key, value, None, text)

    def where(self, key: str) -> str:
        s = self.get(key)
        if s.line is None:
            return f"{self.path}: key {key} absent (the program's default {s.text})"
        return f"{self.path} line {s.line}, key {key}"

    def bad(self, key: str, accepted: str) -> ScenarioError:
        """A one-line error about this key's value (as read, or its default when absent)."""
        s = self.get(key)
        if s.line is None:
            return ScenarioError(f"{self.where(key)}; accepted: {accepted}")
        return ScenarioError(f"{self.where(key)}: got {quote(s.text)}; accepted: {accepted}")


def _words(path: Path) -> list[tuple[str, int]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ScenarioError(
            f"--config: cannot read {path} ({reason}); accepted: a readable text file (the "
            "HPCC simulator's or ns3-datacenter's config.txt)"
        ) from None
    return [(w, n) for n, line in enumerate(text.splitlines(), start=1) for w in line.split()]


def _uint(text: str, bits: int = 32) -> int | None:
    if not _UINT.fullmatch(text):
        return None
    v = int(text)
    return v if v < 2**bits else None


def _number(text: str) -> Decimal | None:
    return Decimal(text) if _NUMBER.fullmatch(text) else None


def data_rate_bps(text: str) -> int | None:
    """An ns-3 DataRate string -> bit/s, as DoParse computes it (truncated); None if ns-3 would
    not read it."""
    m = _RATE.fullmatch(text)
    if not m:
        return None
    return int(Decimal(m.group(1)) * _RATE_UNITS.get(m.group(2) or "bps", 1))


def read_config(path: Path, program: str) -> HpccConfig:
    """config.txt -> its settings, every value checked for its form (one-line errors naming the
    file, the line and the key)."""
    words = _words(path)
    settings: dict[str, Setting] = {}
    maps: dict[str, dict[int, tuple[Any, int]]] = {}
    warnings: list[str] = []
    i = 0

    def take(key: str, line: int, form: str) -> tuple[str, int]:
        nonlocal i
        if i >= len(words):
            raise ScenarioError(
                f"{path} line {line}, key {key}: no value at the end of the file; accepted: {form}"
            )
        w = words[i]
        i += 1
        return w

    while i < len(words):
        key, line = words[i]
        i += 1
        if key not in KEYS:
            if _KEY_WORD.fullmatch(key):
                # Both programs skip a word that is no key (and then each word of its value).
                warnings.append(
                    f"{path} line {line}: {key} is not a key {PROGRAM_NAMES[program]} reads; "
                    "ignored, as it ignores it"
                )
            continue
        kind, _ = KEYS[key]
        form = _FORMS[kind]

        def bad(text: str, wline: int, accepted: str = form, k: str = key) -> ScenarioError:
            return ScenarioError(
                f"{path} line {wline}, key {k}: got {quote(text)}; accepted: {accepted}"
            )

        if kind in ("map_uint", "map_number"):
            n_text, n_line = take(key, line, form)
            n = _uint(n_text)
            if n is None or n > 64:
                raise bad(n_text, n_line, "a count N of pairs RATE VALUE, 0..64")
            entries = maps.setdefault(key, {})
            texts = [n_text]
            for _ in range(n):
                r_text, r_line = take(key, line, form)
                rate = _uint(r_text, 64)
                if rate not in MAP_RATES:
                    rates = ", ".join(str(r) for r in MAP_RATES)
                    raise bad(
                        r_text,
                        r_line,
                        f"a rate in bit/s among {rates} (the Ethernet rates lfsim models)",
                    )
                v_text, v_line = take(key, line, form)
                if kind == "map_uint":
                    v = _uint(v_text)
                    if v is None:
                        raise bad(v_text, v_line, "an integer 0..4294967295 (KB, 1000 bytes)")
                else:
                    v = _number(v_text)
                    if v is None or not 0 <= v <= 1:
                        raise bad(v_text, v_line, "a probability 0..1")
                entries[rate] = (v, v_line)
                texts += [r_text, v_text]
            settings[key] = Setting(key, None, line, " ".join(texts))
            continue
        if kind == "link_down":
            parts = [take(key, line, form) for _ in range(3)]
            values = [_uint(t, 64 if j == 0 else 32) for j, (t, _) in enumerate(parts)]
            for (t, wl), v in zip(parts, values, strict=True):
                if v is None:
                    raise bad(t, wl)
            text = " ".join(t for t, _ in parts)
            settings[key] = Setting(key, tuple(values), line, text)
            continue
        text, wline = take(key, line, form)
        if kind in ("uint", "uint64"):
            v = _uint(text, 64 if kind == "uint64" else 32)
        elif kind == "flag":
            v = _uint(text)
            v = None if v is None else int(v != 0)
        elif kind == "number":
            v = _number(text)
        elif kind == "rate":
            v = data_rate_bps(text)
        else:
            v = text
        if v is None:
            raise bad(text, wline)
        settings[key] = Setting(key, v, wline, text)
    return HpccConfig(path, settings, maps, warnings)


# ---------------------------------------------------------------------------------------------
# What the programs compute from the topology.


def cc_name(cc_mode: int, wien: bool = False, delay_wien: bool = False) -> str | None:
    """RdmaNic.CongestionControl for a CC mode and ns3-datacenter's --wien/--delayWien; None for
    a mode lfsim lacks. ns3-datacenter runs PowerTCP inside CC mode 3's ACK handler (rdma-hw.cc
    HandleAckHp: UpdateRatePower when PowerTCPEnabled, its delay form when PowerTCPdelay too);
    --delayWien alone changes nothing, and with another mode both are unused."""
    if cc_mode == 3 and wien:
        return "ThetaPowerTcp" if delay_wien else "PowerTcp"
    return CC_MODES.get(cc_mode)


def headroom_bytes(rate_bps: int, delay_ns: int) -> int:
    """A switch port's PFC headroom, as both programs compute it per port: 3 x rate x delay, in
    their integer arithmetic (`rate * delay / 8 / 1000000000 * 3`)."""
    return rate_bps * delay_ns // 8 // 1_000_000_000 * 3


def pfc_alpha_shift(rate_bps: int, nic_bps: int) -> int:
    """third.cc's pfc_a_shift of a switch port: 3 (alpha 1/8), less one per halving of the
    port's rate until it is no more than the NIC's (at least 0)."""
    shift = 3
    while rate_bps > nic_bps and shift > 0:
        shift -= 1
        rate_bps //= 2
    return shift


@dataclass
class Link:
    a: int
    b: int
    bps: int
    delay_ns: int
    line: int
    name: str  # "A-B" as lfsim's faults name it


@dataclass
class Network:
    switches: set[int]
    links: list[Link]

    def switch_ports(self) -> dict[int, list[Link]]:
        """Each switch's links, in the topology's order (its ports' order)."""
        out: dict[int, list[Link]] = {s: [] for s in sorted(self.switches)}
        for x in self.links:
            for end in {x.a, x.b} & self.switches:
                out[end].append(x)
        return out


def network(graph: dict, topology: Path) -> Network:
    """The converted graph (hpcc.read_topology) with rates in bit/s and delays in ns."""
    switches = {int(n["name"][2:]) for n in graph["nodes"] if n["kind"] == "switch"}

    def node_id(name: str) -> int:
        return int(name[2:]) if name.startswith("sw") else int(name[1:])

    links = []
    for x in graph["links"]:
        a, b = node_id(x["a"]), node_id(x["b"])
        line = getattr(x, "line", 0)
        m = _DELAY.fullmatch(x["delay"])
        ps = Decimal(m.group(1)) * _TIME_PS[m.group(2)] if m else None
        if ps is None or ps % 1000:
            raise ScenarioError(
                f"{topology} line {line}, field delay: got {quote(x['delay'])}; accepted with "
                "--config: a delay in whole nanoseconds (the HPCC code's time resolution), e.g. "
                "1us or 1000ns"
            )
        links.append(Link(a, b, int(x["speed"][:-3]) * 10**9, int(ps // 1000), line, ""))
    # lfsim's faults name a link by its ends, with #k among parallel links.
    pairs: dict[tuple[int, int], list[Link]] = {}
    for x in links:
        pairs.setdefault((min(x.a, x.b), max(x.a, x.b)), []).append(x)
    for x, raw in zip(links, graph["links"], strict=True):
        same = pairs[(min(x.a, x.b), max(x.a, x.b))]
        x.name = f"{raw['a']}-{raw['b']}" + (
            f"#{[id(y) for y in same].index(id(x))}" if len(same) > 1 else ""
        )
    return Network(switches, links)


def max_rtt(net: Network, payload: int) -> int:
    """maxRtt (ns) as both programs compute it (CalculateRoute from every host, then the loop
    over host pairs in main): a breadth-first search from the destination over switches
    (neighbours in node id order: the code's map of node pointers, made in id order) gives each
    node the delay of the path it was first reached by and one payload's serialisation per hop
    (integer ns); a pair's RTT is twice that delay plus those serialisations.

    Hosts alike (links of the same delay and rate to the same switches) are reached alike from
    any other host, and reach it alike: one search per kind of host, over the switches only,
    and one figure per kind of destination, from the switch that reaches it first."""
    adj: dict[int, dict[int, tuple[int, int]]] = {}
    for x in net.links:
        # nbr2if[a][b]: a later parallel link replaces an earlier one, as in both codes.
        adj.setdefault(x.a, {})[x.b] = (x.delay_ns, x.bps)
        adj.setdefault(x.b, {})[x.a] = (x.delay_ns, x.bps)
    sw = net.switches
    hosts = sorted(n for n in adj if n not in sw)
    if any(m not in sw for h in hosts for m in adj[h]):
        return _max_rtt_each_host(adj, sw, hosts, payload)  # hosts joined directly: rare
    kinds: dict[tuple, list[int]] = {}
    for h in hosts:
        kinds.setdefault(tuple(sorted(adj[h].items())), []).append(h)
    hop = {n: {m: v for m, v in sorted(adj.get(n, {}).items()) if m in sw} for n in sw}
    best = 0
    for kind in kinds:
        delay: dict[int, int] = {}
        tx: dict[int, int] = {}
        order: dict[int, int] = {}
        queue = []
        for s, (d, b) in kind:  # the root's switches, in id order
            delay[s], tx[s] = d, payload * 8_000_000_000 // b
            order[s] = len(queue)
            queue.append(s)
        for now in queue:
            for nxt, (d, b) in hop[now].items():
                if nxt not in delay:
                    delay[nxt] = delay[now] + d
                    tx[nxt] = tx[now] + payload * 8_000_000_000 // b
                    order[nxt] = len(queue)
                    queue.append(nxt)
        for other, dests in kinds.items():
            if other == kind and len(dests) == 1:
                continue  # the root alone: no pair
            reached = [(order[s], s, d, b) for s, (d, b) in other if s in order]
            if not reached:
                continue
            _, s, d, b = min(reached)
            rtt = 2 * (delay[s] + d) + tx[s] + payload * 8_000_000_000 // b
            best = max(best, rtt)
    return best


def _max_rtt_each_host(
    adj: dict[int, dict[int, tuple[int, int]]], sw: set[int], hosts: list[int], payload: int
) -> int:
    """maxRtt by one search from every host, as the code does."""
    best = 0
    for root in hosts:
        delay, tx, queue = {root: 0}, {root: 0}, [root]
        for now in queue:
            for nxt, (d, b) in sorted(adj[now].items()):
                if nxt not in delay:
                    delay[nxt] = delay[now] + d
                    tx[nxt] = tx[now] + payload * 8_000_000_000 // b
                    if nxt in sw:
                        queue.append(nxt)
        best = max([best] + [2 * delay[h] + tx[h] for h in hosts if h in delay])
    return best


# ---------------------------------------------------------------------------------------------
# The mapping.


@dataclass
class Flags:
    """ns3-datacenter's command-line overrides (None: not given)."""

    algorithm: int | None = None
    wien: bool | None = None
    delay_wien: bool | None = None
    window_check: int | None = None


@dataclass
class Mapped:
    classes: dict[str, dict[str, Any]]
    stop_ps: int
    faults: list[dict]
    hpcc_output: dict[str, str]
    warnings: list[str]


def rate_text(bps: int) -> str:
    for unit, scale in (("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps and bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bps"


def _time_text(ps: int) -> str:
    from .convert import exact_time

    return exact_time(ps)


def _micros_ps(cfg: HpccConfig, key: str, positive: bool = True) -> int:
    """A key in microseconds (MicroSeconds(double) in the code) -> ps, to the nanosecond."""
    v = cfg.get(key).value
    ps = v * 10**6
    if ps < 0 or (positive and ps == 0) or ps % 1000 or ps > Decimal(9.2e18):
        raise cfg.bad(key, "microseconds > 0, to the nanosecond (ns-3's time resolution)")
    return int(ps)


def _rate(cfg: HpccConfig, key: str) -> int:
    v = cfg.get(key).value
    if v is None:
        raise cfg.bad(key, f"{key} given: {RATE_FORM} (the program leaves it empty)")
    return v


def _flag(cfg: HpccConfig, key: str, want: int, why: str) -> None:
    if cfg.get(key).value != want:
        raise cfg.bad(key, f"{want} ({why})")


def map_config(
    cfg: HpccConfig,
    net: Network,
    flows: list[dict],
    topology: Path,
    flows_path: Path,
    out: Path,
    program: str,
    flags: Flags,
) -> Mapped:
    """The scenario's attribute sections and top-level keys for a read config."""
    classes: dict[str, dict[str, Any]] = {}
    warnings = list(cfg.warnings)
    nsdc = program in NS3_DATACENTER

    # Packets and ACKs (rdma-hw.cc): the payload per packet, an ACK per packet.
    payload = cfg.get("PACKET_PAYLOAD_SIZE").value
    if payload not in PATH_MTUS:
        raise cfg.bad(
            "PACKET_PAYLOAD_SIZE",
            "256, 512, 1024, 2048 or 4096 (RoCE's path MTUs, lfsim's RdmaNic.PathMtu)",
        )
    ack = cfg.get("L2_ACK_INTERVAL").value
    # ReceiverCheckSeq: an ACK once the next expected byte reaches the milestone, which
    # ReceiveUdp resets to L2_ACK_INTERVAL (bytes) before every packet: every packet is
    # acknowledged when the interval is at most a payload; 0 acknowledges every packet and
    # ReceiveAck then refuses them ("shouldn't receive ack"), so no flow completes.
    if not 1 <= ack <= payload:
        raise cfg.bad(
            "L2_ACK_INTERVAL",
            f"1..{payload} (bytes, at most PACKET_PAYLOAD_SIZE: the HPCC code then "
            "acknowledges every packet, as lfsim's RdmaNic.AckInterval 1)",
        )
    _flag(
        cfg,
        "L2_BACK_TO_ZERO",
        0,
        "go back N, the ACKed sequence number, as lfsim's RDMA NICs do on a NAK",
    )
    _flag(cfg, "RATE_BOUND", 1, "each QP paced at its rate, as lfsim's are")
    if cfg.get("ACK_HIGH_PRIO").value != 0:
        raise cfg.bad(
            "ACK_HIGH_PRIO", "0 (ACKs in their data's priority: lfsim sends them in RdmaNic.Dscp)"
        )
    pause = cfg.get("PAUSE_TIME").value
    if pause < 1:
        # UintegerValue(pause_time): a PAUSE with time 0 is read as a resume (qbb-net-device.cc).
        raise cfg.bad(
            "PAUSE_TIME",
            "a number >= 1 (any such: a pause lasts until its resume, as lfsim's; below 1 the "
            "HPCC code's XOFF carries 0, a resume)",
        )
    flow_prios = sorted({int(f["priority"]) for f in flows})
    if 0 in flow_prios:
        f0 = next(f for f in flows if int(f["priority"]) == 0)
        raise ScenarioError(
            f"{flows_path} line {getattr(f0, 'line', '?')}, field priority: got '0'; accepted "
            "with --config: 1..7 (the HPCC code's queue 0 is its control queue: no PFC, no "
            "buffer accounting)"
        )
    nic = {"PathMtu": payload, "AckInterval": 1}

    # Congestion control.
    cc_mode_src = "CC_MODE"
    cc_mode = cfg.get("CC_MODE").value
    if flags.algorithm is not None:
        cc_mode, cc_mode_src = flags.algorithm, "--algorithm"
    has_win = cfg.get("HAS_WIN").value != 0
    var_win = cfg.get("VAR_WIN").value != 0
    if flags.window_check is not None:
        has_win = var_win = flags.window_check != 0
    name = cc_name(cc_mode, bool(flags.wien), bool(flags.delay_wien))
    if name is None:
        accepted = f"{CC_ACCEPTED}; 10 is HPCC-PINT, which lfsim does not model"
        if cc_mode_src == "--algorithm":
            raise ScenarioError(f"--algorithm: got {quote(cc_mode)}; accepted: {accepted}")
        raise cfg.bad("CC_MODE", accepted)
    nic["CongestionControl"] = name
    rtt = max_rtt(net, payload)

    def window_bad(accepted: str) -> ScenarioError:
        if flags.window_check is not None:
            return ScenarioError(
                f"--windowCheck: got {quote(flags.window_check)}; accepted: {accepted}"
            )
        return cfg.bad("HAS_WIN", accepted)

    def var_win_bad(accepted: str) -> ScenarioError:
        if flags.window_check is not None:
            return ScenarioError(
                f"--windowCheck: got {quote(flags.window_check)}; accepted: {accepted}"
            )
        return cfg.bad("VAR_WIN", accepted)

    if name == "Dcqcn":
        if has_win:
            raise window_bad("0 with CC mode 1: lfsim's Dcqcn has no window, only its rate")
        gain = cfg.get("EWMA_GAIN").value * 1024
        if gain != gain.to_integral_value() or not 1 <= gain <= 1024:
            raise cfg.bad(
                "EWMA_GAIN",
                "k/1024 for an integer k in 1..1024 (lfsim's Dcqcn.dce_tcp_g is "
                "1024 x (1 - g)), e.g. 0.00390625",
            )
        frt = cfg.get("FAST_RECOVERY_TIMES").value
        if not 1 <= frt <= 31:
            raise cfg.bad("FAST_RECOVERY_TIMES", "1..31 (lfsim's Dcqcn.rpg_threshold)")
        # The Mellanox DCQCN of rdma-hw.cc (cnp_received_mlx and the events it schedules).
        classes["Dcqcn"] = {
            "rpg_time_reset": _time_text(_micros_ps(cfg, "RP_TIMER")),
            "rpg_byte_reset": 0,  # no byte counter: increases come from RP_TIMER alone
            "rpg_threshold": frt,
            "rpg_ai_rate": rate_text(_rate(cfg, "RATE_AI")),
            "rpg_hai_rate": rate_text(_rate(cfg, "RATE_HAI")),
            "rpg_min_rate": rate_text(_rate(cfg, "MIN_RATE")),
            "rpg_max_rate": "0bps",  # the NIC's line rate
            "rpg_min_dec_fac": 50,  # rate x (1 - alpha / 2), alpha <= 1
            "rate_to_set_on_first_cnp": "0bps",  # RateOnFirstCnp 1.0: the rate it has
            "dce_tcp_g": 1024 - int(gain),
            "dce_tcp_rtt": _time_text(_micros_ps(cfg, "ALPHA_RESUME_INTERVAL")),
            "initial_alpha_value": 1024,  # alpha = 1 at the first CNP
            # A rate cut at most every RATE_DECREASE_INTERVAL, if a CNP came in it (0 would
            # reschedule CheckRateDecreaseMlx at the same time forever).
            "rate_reduce_monitor_period": _time_text(_micros_ps(cfg, "RATE_DECREASE_INTERVAL")),
            "clamp_tgt_rate": bool(cfg.get("CLAMP_TARGET_RATE").value),
            # Without CLAMP_TARGET_RATE the target follows the rate at a cut only when the
            # timer has raised it since the previous one (m_rpTimeStage != 0).
            "clamp_tgt_rate_after_time_inc": True,
            # UpdateAlphaMlx every ALPHA_RESUME_INTERVAL from the first CNP: up if a CNP came.
            "AlphaUpdate": "PerWindow",
        }
        # The receiver flags the ACK of every ECN-marked packet (ReceiveUdp), and the ACK
        # travels in the data's class: one CNP per marked packet, in the flows' class.
        nic["CnpInterval"] = "0s"
        if len(flow_prios) > 1:
            raise ScenarioError(
                f"{flows_path}: flows of priorities {', '.join(map(str, flow_prios))} with CC "
                "mode 1; accepted: one priority (the HPCC code's CNP rides on each flow's ACK, "
                "in its class; lfsim's CNPs take one class, RdmaNic.CnpDscp)"
            )
        nic["CnpDscp"] = flow_prios[0] << 3 | (DATA_DSCP & 7) if flow_prios else DATA_DSCP
    elif name in ("Hpcc", "PowerTcp", "ThetaPowerTcp"):
        if not has_win:
            raise window_bad(
                "1 with CC mode 3 (the HPCC code's update divides by the window; lfsim's keeps "
                "one, line rate x its base RTT)"
            )
        if not var_win:
            raise var_win_bad("1 with CC mode 3 (lfsim's window follows the rate, W = R x T)")
        _flag(cfg, "FAST_REACT", 1, "an update at every ACK, as lfsim's")
        _flag(cfg, "SAMPLE_FEEDBACK", 0, "INT from every ACK, as lfsim's")
        if cfg.get("INT_MULTI").value < 1:
            raise cfg.bad("INT_MULTI", "an integer >= 1 (the HPCC code divides by it)")
        base_rtt = f"{rtt}ns"
        if cfg.get("GLOBAL_T").value != 1:
            # The pair's own RTT: lfsim's BaseRtt 0, where the model offers it.
            from .core import check_value

            try:
                refused = check_value(f"ns3::{name}", "BaseRtt", "0s") is not None
            except ValueError:  # a model not built into this lfsim
                refused = True
            if refused:
                raise cfg.bad(
                    "GLOBAL_T",
                    f"1 (the largest pair RTT for every pair: lfsim's {name}.BaseRtt takes "
                    "one time)",
                )
            base_rtt = "0s"
        if name == "Hpcc":
            _flag(cfg, "MULTI_RATE", 0, "one rate for all hops, as lfsim's Hpcc")
            u = cfg.get("U_TARGET").value
            if not Decimal("0.01") <= u <= 1:
                raise cfg.bad("U_TARGET", "0.01..1 (lfsim's Hpcc.TargetUtilization)")
            stage = cfg.get("MI_THRESH").value
            if stage > 1000:
                raise cfg.bad("MI_THRESH", "0..1000 (lfsim's Hpcc.MaxStage)")
            classes["Hpcc"] = {
                "BaseRtt": base_rtt,
                "TargetUtilization": float(u),
                "MaxStage": stage,
                "RateAI": rate_text(_rate(cfg, "RATE_AI")),
                "MinRate": rate_text(_rate(cfg, "MIN_RATE")),
                "IntHops": INT_HOPS,
            }
        else:
            power = _powertcp_attributes(
                name, base_rtt, rate_text(_rate(cfg, "MIN_RATE")), cfg.get("U_TARGET").value
            )
            if power:
                classes[name] = power
    elif name == "Timely":
        if has_win:
            raise window_bad("0 with CC mode 7: lfsim's Timely has no window, only its rate")
        ai = _rate(cfg, "RATE_AI")
        hai = _rate(cfg, "RATE_HAI")
        if ai == 0 or hai % ai or not 1 <= hai // ai <= 1000:
            raise cfg.bad(
                "RATE_HAI",
                f"a multiple 1..1000 of RATE_AI ({rate_text(ai)}): lfsim's Timely.HaiN x Delta",
            )
        # UpdateRateTimely: RATE_AI for the first 5 increases in a row, then RATE_HAI; its
        # other constants are RdmaHw's defaults (TimelyTLow 50 us, THigh 500 us, MinRtt 20 us,
        # alpha 0.875, beta 0.8), which the file does not set.
        classes["Timely"] = {
            "TLow": "50us",
            "THigh": "500us",
            "MinRtt": "20us",
            "Delta": rate_text(ai),
            "MinRate": rate_text(_rate(cfg, "MIN_RATE")),
            "EwmaAlpha": 0.875,
            "Beta": 0.8,
            "HaiThreshold": 5,
            "HaiN": hai // ai,
        }
    elif name == "Dctcp":
        g = cfg.get("EWMA_GAIN").value
        if not Decimal("1e-6") <= g <= 1:
            raise cfg.bad("EWMA_GAIN", "1e-6..1 (lfsim's Dctcp.g)")
        if has_win and not var_win:
            raise var_win_bad("1 with a window in CC mode 8 (lfsim's window follows the rate)")
        if has_win and cfg.get("GLOBAL_T").value != 1:
            raise cfg.bad("GLOBAL_T", "1 with a window in CC mode 8 (lfsim's Dctcp.BaseRtt)")
        classes["Dctcp"] = {
            "g": float(g),
            "RateAI": rate_text(_rate(cfg, "DCTCP_RATE_AI")),
            "MinRate": rate_text(_rate(cfg, "MIN_RATE")),
            "InitialAlpha": 1,
            "BaseRtt": f"{rtt}ns" if has_win else "0s",
        }
    sw = _switch(cfg, net, topology, program, flow_prios)
    classes = {"RoceSwitch": sw, "RdmaNic": nic, **classes}

    faults = []
    p = cfg.get("ERROR_RATE_PER_LINK").value
    if not 0 <= p <= 1:
        raise cfg.bad("ERROR_RATE_PER_LINK", "a probability 0..1")
    if p > 0:
        # A RateErrorModel (packets) on every device whose link has no error rate of its own;
        # lfsim's topology reader takes only links without one.
        for x in net.links:
            faults.append({"at": "0s", "what": "drop", "where": x.name, "probability": float(p)})
    t, a, b = cfg.get("LINK_DOWN").value
    if t:
        if nsdc:
            warnings.append(
                f"{cfg.where('LINK_DOWN')}: {PROGRAM_NAMES[program]} reads it but never takes the "
                "link down; ignored, as it does"
            )
        else:
            raise cfg.bad(
                "LINK_DOWN",
                "0 0 0 (third.cc reroutes around the link it takes down; lfsim's link_down "
                "fault loses the link's frames without new routes)",
            )

    stop = cfg.get("SIMULATOR_STOP_TIME").value * 10**12
    if stop <= 0 or stop % 1000 or stop > Decimal(9.2e18):
        raise cfg.bad(
            "SIMULATOR_STOP_TIME", "seconds > 0, to the nanosecond (ns-3's time resolution)"
        )
    output = {}
    for key, part in (("FCT_OUTPUT_FILE", "fct"), ("PFC_OUTPUT_FILE", "pfc")):
        name_ = str(cfg.get(key).value)
        if not _output_name(name_):
            raise cfg.bad(
                key,
                "a relative file name ending in .txt (lfsim writes it inside the run's output "
                "folder), e.g. mix/fct.txt",
            )
        output[part] = name_
    if output["fct"] == output["pfc"]:
        raise cfg.bad("PFC_OUTPUT_FILE", "a file other than FCT_OUTPUT_FILE")
    output["flow_file"] = _relative(flows_path, out.parent)

    if cfg.get("ENABLE_TRACE").value:
        warnings.append(
            f"{cfg.where('ENABLE_TRACE')}: lfsim writes no packet trace "
            f"({cfg.get('TRACE_OUTPUT_FILE').value or 'TRACE_OUTPUT_FILE'}); lfsim run --pcap "
            "captures packets"
        )
    qlen = cfg.get("QLEN_MON_FILE")
    if qlen.value and cfg.get("QLEN_MON_START").value * 1000 <= stop:
        warnings.append(
            f"{cfg.where('QLEN_MON_FILE')}: lfsim writes no queue-length histogram "
            f"({qlen.value}); the scenario's record: [queue] gives queue series"
        )
    if cfg.get("USE_DYNAMIC_PFC_THRESHOLD").value == 0:
        warnings.append(
            f"{cfg.where('USE_DYNAMIC_PFC_THRESHOLD')}: the HPCC code never reads its value (its "
            "PFC threshold is always the dynamic one), nor does lfsim"
        )
    return Mapped(classes, int(stop), faults, output, warnings)


_OUT_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _output_name(name: str) -> bool:
    return name.endswith(".txt") and all(_OUT_PART.fullmatch(p) for p in name.split("/"))


def _relative(path: Path, base: Path) -> str:
    try:
        return os.path.relpath(path.resolve(), base.resolve())
    except ValueError:  # another drive
        return str(path.resolve())


def _powertcp_attributes(
    name: str, base_rtt: str, min_rate: str, u_target: Decimal
) -> dict[str, Any]:
    """PowerTcp's or ThetaPowerTcp's attributes as ns3-datacenter's rdma-hw.cc sets them
    (UpdateRatePower: m_minRate; 150 Mb/s added to the rate; the new rate weighed 0.9 with
    PowerTCP, 0.7 with theta-PowerTCP; PowerTCP divides by U_TARGET; qp->m_baseRtt; at every
    ACK from hp.m_curRate, the rate of the last per-RTT update, in both terms), those the
    model has."""
    from .core import attributes
    from .errors import CoreUnavailable

    try:
        have = {a["name"] for a in attributes(f"ns3::{name}")}
    except (CoreUnavailable, ValueError):  # a model not built into this lfsim
        have = set()
    wanted: dict[str, Any] = {
        "BaseRtt": base_rtt,
        "MinRate": min_rate,
        "AdditiveIncrease": "150Mbps",
        "Gamma": 0.9 if name == "PowerTcp" else 0.7,
        "WindowUpdate": "FromLastRtt",
    }
    if name == "PowerTcp":
        wanted["TargetUtilization"] = float(u_target)
    return {k: v for k, v in wanted.items() if k in have}


def _switch(
    cfg: HpccConfig, net: Network, topology: Path, program: str, flow_prios: list[int]
) -> dict[str, Any]:
    """RoceSwitch's attributes: the buffer, PFC and ECN as the program sets up its switches."""
    third = program == "third"
    ports = net.switch_ports()
    hosts = sorted({n for x in net.links for n in (x.a, x.b)} - net.switches)
    # get_nic_rate: the first host's first link.
    nic_bps = next(x.bps for x in net.links if hosts and hosts[0] in (x.a, x.b))
    rooms = {id(x): headroom_bytes(x.bps, x.delay_ns) for x in net.links}
    h = max((rooms[id(x)] for ps in ports.values() for x in ps), default=0)
    if h == 0:
        raise ScenarioError(
            f"{topology}: every switch port's PFC headroom is 0 (3 x rate x delay, as the HPCC "
            "code sizes it); accepted with --config: links with a delay"
        )
    if h >= 2**32:
        x = next(x for ps in ports.values() for x in ps if rooms[id(x)] == h)
        raise ScenarioError(
            f"{topology} line {x.line}: a PFC headroom of {h} bytes (3 x rate x delay) "
            "overflows the HPCC code's 32 bits; accepted with --config: a shorter delay"
        )
    lossless = 0
    for p in flow_prios:
        lossless |= 1 << p
    lossless = lossless or 1 << 3
    n_lossless = bin(lossless).count("1")
    buffer_mib = cfg.get("BUFFER_SIZE").value
    reserved = 4096 if third else 0  # third: SwitchMmu's reserve; ns3-datacenter sets none
    sizes: dict[int, int] = {}
    for s, ps in ports.items():
        if not ps:
            continue  # a switch without links holds nothing
        total = sum(rooms[id(x)] for x in ps)
        if third:
            # ConfigBufferSize, ConfigHdrm, ConfigNPort: the dynamic threshold shares what is
            # left after every port's headroom and 4 KiB reserve.
            shared = buffer_mib * 2**20 - total - len(ps) * reserved
        elif program == "burst":
            shared = buffer_mib * 2**20  # ingress pool; the headroom pool on top of it
        else:
            shared = buffer_mib * 2**20 - 8 * total  # ingress pool = buffer - all headroom
        if shared <= 0:
            raise cfg.bad(
                "BUFFER_SIZE",
                f"more MiB than switch sw{s}'s headroom and reserve "
                f"({-shared + buffer_mib * 2**20} bytes) take",
            )
        # lfsim: BufferSize = reserved bytes of every (port, class) + headroom of every
        # (port, lossless class) + the shared pool.
        sizes[s] = shared + len(ps) * 8 * reserved + n_lossless * len(ps) * h
    if len(set(sizes.values())) > 1:
        (s1, b1), (s2, b2) = sorted(sizes.items(), key=lambda kv: kv[1])[:: len(sizes) - 1]
        raise cfg.bad(
            "BUFFER_SIZE",
            "switches alike, as lfsim sets one RoceSwitch.BufferSize for all: "
            f"sw{s1} and sw{s2} have ports of other counts, rates or delays and would need "
            f"{b1} and {b2} bytes for the program's shared pool",
        )
    out: dict[str, Any] = {
        "ForwardingLatency": "0ns",  # SwitchNode forwards as a packet arrives
        "ReservedBytes": reserved,
        "Headroom": h,
        "BufferSize": next(iter(sizes.values())),
    }
    if third:
        shifts = {}
        for ps in ports.values():
            for x in ps:
                shifts.setdefault(pfc_alpha_shift(x.bps, nic_bps), x)
        if len(shifts) > 1:
            x = max(shifts.values(), key=lambda y: y.bps)
            raise ScenarioError(
                f"{topology} line {x.line}: third.cc gives this {x.bps // 10**9} Gb/s switch port "
                f"PFC alpha 1/{2 ** pfc_alpha_shift(x.bps, nic_bps)} and others 1/"
                f"{2 ** max(shifts)} (1/8, doubled per doubling over the NIC's "
                f"{nic_bps // 10**9} Gb/s); accepted with --program third: one alpha for every "
                "switch port (lfsim's RoceSwitch.Alpha): switch ports no faster than the NIC, or "
                "all of one rate"
            )
        out["Alpha"] = 1 / 2 ** next(iter(shifts))
        out["XonOffset"] = 3072  # SwitchMmu's resume_offset
    else:
        out["Alpha"] = 0.125  # SetAlphaIngress(1.0 / 8)
        out["XonOffset"] = 2496  # SwitchMmu's xon_offset
    out["PfcEnabled"] = True
    if lossless != 1 << 3:
        out["LosslessPriorities"] = lossless
    ecn = bool(cfg.get("ENABLE_QCN").value)
    out["EcnEnabled"] = ecn
    if ecn:
        rates: dict[int, Link] = {}
        for ps in ports.values():
            for x in ps:
                rates.setdefault(x.bps, x)
        values = {}
        for rate, x in rates.items():
            v = []
            for key in ("KMIN_MAP", "KMAX_MAP", "PMAX_MAP"):
                entry = cfg.maps.get(key, {}).get(rate)
                if entry is None:
                    raise cfg.bad(
                        key,
                        f"an entry for {rate} (the rate of {topology} line {x.line}'s switch "
                        "port): one for every switch port rate, as the HPCC code asserts",
                    )
                v.append(entry[0])
            values[rate] = tuple(v)
        if len(set(values.values())) > 1:
            (r1, v1), (r2, v2) = sorted(values.items())[:: len(values) - 1]
            key = next(
                k for k, i in (("KMAX_MAP", 1), ("KMIN_MAP", 0), ("PMAX_MAP", 2)) if v1[i] != v2[i]
            )
            raise cfg.bad(
                key,
                f"the same value for every switch port rate: the topology's {r1} and {r2} b/s "
                "ports differ, and lfsim holds one RoceSwitch.Kmin, Kmax and Pmax per switch",
            )
        kmin, kmax, pmax = next(iter(values.values()))
        if kmin > kmax:
            raise cfg.bad("KMIN_MAP", "values no larger than KMAX_MAP's")
        # ConfigEcn: KB of 1000 bytes; ShouldSendCN at dequeue, on the queue behind the packet.
        out.update(
            Kmin=kmin * 1000,
            Kmax=kmax * 1000,
            Pmax=float(pmax),
            EcnMarkingPoint="Dequeue",
        )
    return out
