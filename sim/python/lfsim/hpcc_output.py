"""The HPCC simulator's result files from an lfsim run (scenario key ``hpcc_output``, ``lfsim run
--hpcc-output``): ``fct.txt`` and ``pfc.txt`` as github.com/alibaba-edu/High-Precision-Congestion-
Control's ``simulation/scratch/third.cc`` writes them (``qp_finish``, ``get_pfc``; ns3-datacenter's
``powertcp-evaluation-{burst,fairness}.cc`` write the same fct.txt), so that the analysis
scripts written for those files (``analysis/fct_analysis.py``) read lfsim's results unchanged.

fct.txt, one line per completed flow in completion order::

    sip dip sport dport size start_time fct standalone_fct

``%08x`` IPv4 addresses of the node ids (``node_id_to_ip``: 0x0b000001 + (id / 256) * 0x10000 +
(id % 256) * 0x100, 11.0.0.1 for node 0), the source port of the QP (10000 for a host pair's
first flow, then 10001, ... in the flow file's order), the flow file's DPORT, the size in bytes,
the start and the flow completion time (post to last ACK, as lfsim's ``fct_us``) in
nanoseconds, and the ideal FCT as that code computes it: the pair's base RTT (twice the
propagation delay of the path, plus one PACKET_PAYLOAD_SIZE, lfsim's RdmaNic.PathMtu,
serialised at every hop) plus the size and 48 B of headers per packet over the slowest link of
the path. A flow of several messages has a line per message (the run's messages table).

pfc.txt, one line per PFC frame a port received that changed its pause state::

    time node nodetype ifindex type

(ns; node id; 0 host, 1 switch; the port's net device index, 1 + the rank of its link among the
node's links in topology order, 0 being the loopback; 1 pause, 0 resume).

Node ids: a scenario converted from HPCC files names host id k ``hk`` and switch id k ``swk``:
those ids. Any other scenario's nodes are numbered as a topology.txt written from it would
number them: hosts 0, 1, ... in lfsim's host order, then the switches in their order.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .hpcc_check import read_flow_file, same_flows
from .values import TIME_RE, length_metres

if TYPE_CHECKING:
    import numpy as np

    from .runner import Result


def _table(result: Result, name: str) -> dict[str, list]:
    """A table's columns as lists, the values its DataFrame's ``tolist()`` gives (a label column:
    its names, "nan" where an id has none), without importing pandas: these files are written
    as a run ends, and pandas alone took longer to import than writing them."""
    from .tables import Labels

    out: dict[str, list] = {}
    for column, values in result._columns(name, result._tables).items():
        if isinstance(values, Labels):
            names = values.categories
            out[column] = [names[c] if c >= 0 else "nan" for c in values.codes.tolist()]
        else:
            out[column] = values.tolist()
    return out


# CustomHeader::GetStaticWholeHeaderSize() - IntHeader::GetStaticSize() in both codes: Ethernet
# 14 + IPv4 20 + UDP 8 + the qbb header's pg (2) and seq (4). qp_finish counts it per packet.
HEADER_BYTES = 48
FIRST_SPORT = 10000  # third.cc: "each host pair use port number from 10000"
# The DPORT of HPCC's traffic_gen.py (its normal traffic; fct_analysis.py selects $4==100).
DEFAULT_DPORT = 100
_GBE = re.compile(r"(\d+)GbE")
_TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".yaml", ".yml")


def node_ip(node_id: int) -> int:
    """third.cc's node_id_to_ip, as the 32-bit number fct.txt prints with %08x."""
    return (0x0B000001 + (node_id // 256) * 0x00010000 + (node_id % 256) * 0x00000100) & (2**32 - 1)


# ---------------------------------------------------------------------------------------------
# The fabric as the HPCC code numbers it

# Picoseconds per unit of a resolved time text (ns-3 rounds to lfsim's picosecond resolution).
_PS = {
    "d": Decimal(86400 * 10**12),
    "h": Decimal(3600 * 10**12),
    "min": Decimal(60 * 10**12),
    "s": Decimal(10**12),
    "ms": Decimal(10**9),
    "us": Decimal(10**6),
    "ns": Decimal(10**3),
    "ps": Decimal(1),
    "fs": Decimal("0.001"),
}
# Picoseconds per byte of each Ethernet rate, as RoceNetDevice's EthSpeed: bit/s = 8e12 / this.
_PS_PER_BYTE = {10: 800, 25: 320, 40: 200, 50: 160, 100: 80, 200: 40, 400: 20}


def _ps(text: str) -> int:
    m = TIME_RE.fullmatch(str(text).strip())
    if m is None:
        raise ValueError(f"not a time: {text!r}")
    return int((Decimal(m.group(1)) * _PS[m.group(2)]).to_integral_value(ROUND_HALF_EVEN))


def _length_ps(length: Any, per_metre: str) -> int:
    """RoceChannel's delay: llround(Length x PropagationDelayPerMeter)."""
    metres = length_metres(length)
    if metres is None:
        raise ValueError(f"not a length: {length!r}")
    return int((metres * _ps(per_metre)).to_integral_value(ROUND_HALF_UP))


def _ps_per_byte(speed: str) -> int:
    m = _GBE.fullmatch(str(speed).strip())
    if m is None or int(m.group(1)) not in _PS_PER_BYTE:
        raise ValueError(f"not an Ethernet speed: {speed!r}")
    return _PS_PER_BYTE[int(m.group(1))]


@dataclass
class _Port:
    node: int  # HPCC node id
    ifindex: int  # its net device: 1 + the rank of its link among the node's links
    ps_per_byte: int
    response_ps: int  # RoceNetDevice.PfcResponseDelay: a frame acts that long after it arrived


@dataclass
class Fabric:
    """An lfsim fabric as the HPCC code sees it: node ids, links, net device indices."""

    ids: dict[str, int]  # node name -> HPCC node id
    switches: set[int]
    # Per node id, each neighbour (in the order HPCC's BFS visits them: by node id) and the
    # link to it: (propagation delay in ns, rate in bit/s); of parallel links the last listed,
    # as third.cc's nbr2if[a][b] keeps the last.
    nbr: dict[int, dict[int, tuple[int, int]]]
    ports: dict[int, _Port]  # port id (the links table's a and b) -> its device
    hpcc_names: bool  # ids taken from hK / swK names

    def paths_from(self, root: int, payload: int) -> dict[int, tuple[int, int, int]]:
        """third.cc's CalculateRoute(root): per node reached, (propagation delay in ns, one
        payload's serialisation at every hop in ns, the slowest rate in bit/s) along the path
        the breadth-first search from the host ``root`` finds first (only switches are passed
        through)."""
        found = {root: (0, 0, 2**64 - 1)}
        queue = [root]
        for now in queue:
            delay, tx, rate = found[now]
            for nxt, (d, bps) in self.nbr[now].items():
                if nxt in found:
                    continue
                found[nxt] = (delay + d, tx + payload * 1000000000 * 8 // bps, min(rate, bps))
                if nxt in self.switches:
                    queue.append(nxt)
        return found


def node_ids(hosts: list[str], switches: list[str]) -> tuple[dict[str, int], bool]:
    """hK -> K and swK -> K when every node is named so, each K once (a scenario converted from
    HPCC files: its ids); otherwise hosts 0..H-1 in lfsim's order, then the switches in
    theirs, as a topology.txt written from the scenario would number them."""
    ids: dict[str, int] = {}
    for names, prefix in ((hosts, "h"), (switches, "sw")):
        for name in names:
            m = re.fullmatch(prefix + r"(0|[1-9][0-9]{0,8})", name)
            if m is not None:
                ids[name] = int(m.group(1))
    if len(ids) == len(hosts) + len(switches) and len(set(ids.values())) == len(ids):
        return ids, True
    return {name: i for i, name in enumerate([*hosts, *switches])}, False


def _port_of(label: str, hosts: set[str]) -> tuple[str, int]:
    """A port label -> (node, port number): a host's one port is labelled by its name (port 0),
    other ports NODE/pN."""
    if label in hosts:
        return label, 0
    node, _, last = label.rpartition("/")
    m = re.fullmatch(r"p([0-9]+)", last)
    if m is None:
        raise RuntimeError(f"port label {label!r} is not NODE/pN")
    return node, int(m.group(1))


def fabric_of(result: Result) -> Fabric:
    """The run's nodes and cables with each cable's rate and delay as the scenario set them.
    A node's net device k (ifindex k) is its port k - 1: lfsim numbers a node's ports in the
    order its links are listed, as third.cc adds devices in the order of topology.txt."""
    config = result.config
    hosts = list(result.labels("hosts") or [])
    switches = list(result.labels("switches") or [])
    ids, hpcc_names = node_ids(hosts, switches)
    host_set = set(hosts)
    labels = list(result.labels("links") or [])
    port_ids = {_port_of(label, host_set): i for i, label in enumerate(labels)}
    topo, dev, ch = config["topology"], config["RoceNetDevice"], config["RoceChannel"]
    # (node a, port a, node b, port b, speed, delay in ps, PfcResponseDelay) per cable, in the
    # order of the scenario's links (a generator's: the links table's).
    cables = []
    if "links" in topo:
        rank: dict[str, int] = {}
        for link in topo["links"]:
            a, b = link["a"], link["b"]
            pa, pb = rank.get(a, 0), rank.get(b, 0) + (a == b)
            rank[a], rank[b] = pa + 1, pb + 1
            sets = link.get("set", {})
            speed = link.get("speed") or sets.get("RoceNetDevice.Speed") or dev["Speed"]
            if "delay" in link:
                delay = _ps(link["delay"])
            else:
                delay = _length_ps(
                    link.get("length", sets.get("RoceChannel.Length", ch["Length"])),
                    sets.get(
                        "RoceChannel.PropagationDelayPerMeter", ch["PropagationDelayPerMeter"]
                    ),
                )
            response = sets.get("RoceNetDevice.PfcResponseDelay", dev["PfcResponseDelay"])
            cables.append((a, pa, b, pb, speed, delay, response))
    else:
        # A generator's: host links at HostSpeed, the others at UplinkSpeed (empty: HostSpeed),
        # both empty: the port's Speed; every cable RoceChannel.Length long.
        delay = _length_ps(ch["Length"], ch["PropagationDelayPerMeter"])
        table = _table(result, "links")
        for pa, pb in zip(table["a"], table["b"], strict=True):
            (a, na), (b, nb) = _port_of(labels[pa], host_set), _port_of(labels[pb], host_set)
            uplink = a not in host_set and b not in host_set
            speed = (topo.get("UplinkSpeed") if uplink else "") or topo.get("HostSpeed")
            cables.append((a, na, b, nb, speed or dev["Speed"], delay, dev["PfcResponseDelay"]))
    nbr: dict[int, dict[int, tuple[int, int]]] = {i: {} for i in ids.values()}
    ports: dict[int, _Port] = {}
    for a, na, b, nb, speed, delay, response in cables:
        per_byte = _ps_per_byte(speed)
        # HPCC's delays are ns-3 Times at its nanosecond resolution.
        link = (delay // 1000, 8 * 10**12 // per_byte)
        nbr[ids[a]][ids[b]] = nbr[ids[b]][ids[a]] = link
        for node, number in ((a, na), (b, nb)):
            ports[port_ids[(node, number)]] = _Port(ids[node], number + 1, per_byte, _ps(response))
    nbr = {u: dict(sorted(v.items())) for u, v in nbr.items()}
    return Fabric(ids, {ids[s] for s in switches}, nbr, ports, hpcc_names)


# ---------------------------------------------------------------------------------------------
# fct.txt


def standalone_fct(fabric: Fabric, src: int, dst: int, size: int, payload: int, cache: dict) -> int:
    """qp_finish's standalone_fct in ns: the pair's base RTT (pairRtt: twice the propagation
    delay plus one payload's serialisation per hop) plus the bytes with 48 B of headers per
    packet of ``payload`` bytes (no INT) over the path's slowest link (pairBw). Both are
    third.cc's pairRtt[src][dst] and pairBw[src][dst], from the search rooted at dst."""
    if dst not in cache:
        cache[dst] = fabric.paths_from(dst, payload)
    delay, tx, bps = cache[dst][src]
    total = (size + ((size - 1) // payload + 1) * HEADER_BYTES) & (2**32 - 1)  # a uint32_t
    return 2 * delay + tx + total * 8000000000 // bps


def _table_flows(flows: dict[str, list], rows: list[int]) -> list[tuple[str, str, int]]:
    src, dst, size = flows["src_label"], flows["dst_label"], flows["size_bytes"]
    return [(src[r], dst[r], size[r]) for r in rows]


def dports(result: Result, flows: dict[str, list]) -> list[int]:
    """Each flow's DPORT: from hpcc_output.flow_file (every flow of the run, in order), else
    from a Flows workload's own HPCC flow.txt for its flows, else 100 (traffic_gen.py's)."""
    spec = result.config.get("hpcc_output") or {}
    n = len(flows["src"])
    out = [DEFAULT_DPORT] * n
    if "flow_file" in spec:
        return same_flows(Path(spec["flow_file"]), _table_flows(flows, list(range(n))), "the run's")
    workload = flows["workload"]
    for w, name in enumerate(result.labels("workloads") or []):
        listed = (result.config.get("workload") or {}).get(name, {}).get("flows")
        if isinstance(listed, dict) and Path(listed["file"]).suffix not in _TABLE_SUFFIXES:
            rows = [i for i, x in enumerate(workload) if x == w]
            ports = read_flow_file(Path(listed["file"]))[2]
            if len(ports) != len(rows):  # a flow file checked when loaded: not expected
                raise RuntimeError(f"{len(rows)} flows of workload {name}, {len(ports)} listed")
            for r, port in zip(rows, ports, strict=True):
                out[r] = port
    return out


def fct_lines(result: Result) -> tuple[list[str], int]:
    """fct.txt's lines in completion order: one per message completed (the messages table, which
    hpcc_output's fct asks the run for; a flow of one message is one line, as the HPCC code's
    one QP a flow), and how many flows were left out (0; a run without the messages table
    falls back to the flows table, whose flows of several messages have only a mean FCT)."""
    flows = _table(result, "flows")
    fabric = fabric_of(result)
    hosts = list(result.labels("hosts") or [])
    payload = int(result.config["RdmaNic"]["PathMtu"])
    ports = dports(result, flows)
    nodes = [fabric.ids[h] for h in hosts]
    cache: dict = {}
    sports: dict[tuple[int, int], int] = {}
    flow_sport = []
    for s, d in zip(flows["src"], flows["dst"], strict=True):
        # third.cc gives each flow of a host pair the next port, from 10000, as it starts (the
        # flow file's order); a uint16_t. A flow's messages share its QP and so its port.
        n = sports.get((nodes[s], nodes[d]), 0)
        sports[(nodes[s], nodes[d])] = n + 1
        flow_sport.append((FIRST_SPORT + n) % 65536)
    if "messages" in result.table_names:
        m = _table(result, "messages")
        done = zip(
            m["flow"],
            (round(x * 1000) for x in m["start_ns"]),
            (round(x * 1000) for x in m["fct_ns"]),
            strict=True,
        )
        several = 0
    else:
        columns = ("start_us", "fct_us", "messages")
        done, several = [], 0
        for i, (start_us, fct_us, messages) in enumerate(
            zip(*(flows[c] for c in columns), strict=True)
        ):
            if messages != 1 or not math.isfinite(fct_us):
                several += messages > 1
                continue
            done.append((i, round(start_us * 1e6), round(fct_us * 1e6)))
    src, dst, size = (flows[c] for c in ("src", "dst", "size_bytes"))
    rows = []
    for i, start_ps, fct_ps in done:
        a, b = nodes[src[i]], nodes[dst[i]]
        end_ps = start_ps + fct_ps
        start_ns = start_ps // 1000  # ns-3 Times at the nanosecond, as HPCC's
        line = (
            f"{node_ip(a):08x} {node_ip(b):08x} {flow_sport[i]} {ports[i]} {size[i]} "
            f"{start_ns} {end_ps // 1000 - start_ns} "
            f"{standalone_fct(fabric, a, b, size[i], payload, cache)}\n"
        )
        rows.append((end_ps, i, line))
    rows.sort()
    return [r[2] for r in rows], several


# ---------------------------------------------------------------------------------------------
# pfc.txt


def _pause_columns(result: Result) -> dict[str, np.ndarray]:
    from .runner import Spilled

    columns = result.hidden_series.get("pause") or result._series.get("pause")
    if columns is None:
        raise RuntimeError("the run recorded no pause series")
    return columns.arrays() if isinstance(columns, Spilled) else columns


def pfc_lines(result: Result) -> list[str]:
    """pfc.txt's lines: each PFC frame a port received that paused or resumed one of its
    classes, at its arrival (get_pfc's time), and a resume when a pause ran out without one
    (lfsim's timers: the HPCC code's pauses last until resumed). A refresh of a running pause
    changes nothing and has no line; neither has an XON to a class not paused."""
    columns = _pause_columns(result)
    fabric = fabric_of(result)
    end_ps = round(result.summary["sim_time_s"] * 1e12)
    state: dict[tuple[int, int], list] = {}  # (port, class) -> [written paused, from, until]
    events: list[tuple[int, int, int, int]] = []  # (time ps, order, port, type)
    names = ("time_s", "id", "prio", "quanta", "dir")
    for t, port, prio, quanta, rx in zip(*(columns[c].tolist() for c in names), strict=True):
        if rx != 1:
            continue  # sent: the peer's line
        port, quanta = int(port), int(quanta)
        p = fabric.ports[port]
        now = round(t * 1e12)
        start = now + p.response_ps
        st = state.setdefault((port, int(prio)), [False, 0, 0])
        if st[0] and st[2] <= start:  # ran out before this frame acts
            events.append((min(st[2], now), len(events), port, 0))
            st[0] = False
        until = start + quanta * 64 * p.ps_per_byte  # quanta of 512 bit times
        if st[2] > start:  # RoceNetDevice::OnPause: still held, the new timer replaces
            st[2] = max(until, st[1])
            if quanta == 0 and st[0]:
                events.append((now, len(events), port, 0))
                st[0] = False
        elif quanta:
            st[1], st[2] = start, until
            events.append((now, len(events), port, 1))
            st[0] = True
    for (port, _), (paused, _, until) in state.items():
        if paused and until <= end_ps:
            events.append((until, len(events), port, 0))
    events.sort()
    out = []
    for when, _, port, kind in events:
        p = fabric.ports[port]
        out.append(f"{when // 1000} {p.node} {int(p.node in fabric.switches)} {p.ifindex} {kind}\n")
    return out


# ---------------------------------------------------------------------------------------------


def write(result: Result, folder: Path) -> int:
    """Write the files ``hpcc_output`` names into ``folder`` (the run's output folder, still
    being made); returns how many flows fct.txt left out (several messages each)."""
    spec = result.config.get("hpcc_output") or {}
    left_out = 0
    if "fct" in spec:
        lines, left_out = fct_lines(result)
        _write_lines(folder / spec["fct"], lines)
    if "pfc" in spec:
        _write_lines(folder / spec["pfc"], pfc_lines(result))
    return left_out


def _write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="ascii")
