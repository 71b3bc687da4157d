"""Readers of the HPCC simulator's input files (github.com/alibaba-edu/High-Precision-Congestion-
Control, also ns3-datacenter): ``topology.txt`` and ``flow.txt``, into lfsim's graph and flow
lists. Every error names the file, the line and the field.

topology.txt: a first line ``NODES SWITCHES LINKS`` (ns3-datacenter's: ``NODES SWITCHES TORS
LINKS``, the first TORS switch ids its top-of-rack switches), a line of the switches' node ids,
then one line per link ``SRC DST RATE DELAY ERROR_RATE`` (e.g. ``0 320 100Gbps 1000ns 0``; a
bare RATE is bit/s, as ns-3's DataRate reads it: ``100000000000.0``). Node ids not listed as
switches are hosts. Names: host id k is ``hk``, switch id k ``swk``.

flow.txt: a first line with the number of flows N, then N lines ``SRC DST PRIORITY DPORT SIZE
START`` (SIZE in bytes, START in seconds); lines after the N-th are not read (the simulator
does the same, and its example file ends with notes).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

from .errors import ScenarioError, quote
from .values import TIME_MAX_S, TIME_MAX_TEXT, time_seconds
from .yamlio import Located

# Ethernet rates lfsim models (RoceNetDevice): an HPCC rate maps to one of these.
ETHERNET_GBPS = (10, 25, 40, 50, 100, 200, 400)
# A bare number is bit/s, as ns-3's DataRate reads it (ns3-datacenter writes 100000000000.0).
_RATE_RE = re.compile(r"(\d+(?:\.\d+)?)(Gbps|Mbps|Kbps|bps|)")
_UNIT_BPS = {"Gbps": 10**9, "Mbps": 10**6, "Kbps": 10**3, "bps": 1, "": 1}


def host_name(node_id: int) -> str:
    return f"h{node_id}"


def switch_name(node_id: int) -> str:
    return f"sw{node_id}"


def _lines(path: Path) -> list[tuple[int, list[str]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ScenarioError(
            f"{path}: cannot read ({reason}); accepted: a readable text file"
        ) from None
    return [(n, line.split()) for n, line in enumerate(text.splitlines(), start=1)]


def _int(path: Path, line: int, field: str, text: str, lo: int, hi: int) -> int:
    try:
        v = int(text)
    except ValueError:
        v = None
    if v is None or not lo <= v <= hi:
        raise ScenarioError(
            f"{path} line {line}, field {field}: got {quote(text)}; accepted: an integer in "
            f"{lo}..{hi}"
        )
    return v


def ethernet_speed(path: Path, line: int, text: str) -> str:
    """``100Gbps`` -> ``100GbE``."""
    m = _RATE_RE.fullmatch(text)
    accepted = ", ".join(f"{g}Gbps" for g in ETHERNET_GBPS)
    if m:
        bps = Decimal(m.group(1)) * _UNIT_BPS[m.group(2)]
        for g in ETHERNET_GBPS:
            if bps == g * 10**9:
                return f"{g}GbE"
    raise ScenarioError(
        f"{path} line {line}, field rate: got {quote(text)}; accepted: one of {accepted} (the "
        "Ethernet rates lfsim models)"
    )


def read_topology(path: Path) -> dict:
    """A topology.txt -> {"nodes": [...], "links": [...]} in the scenario's graph form."""
    lines = [(n, f) for n, f in _lines(path) if f]
    if len(lines) < 2:
        raise ScenarioError(
            f"{path}: {len(lines)} non-empty line(s); accepted: 'NODES SWITCHES LINKS', the "
            "switch ids, then one line per link"
        )
    n0, head = lines[0]
    if len(head) not in (3, 4):
        raise ScenarioError(
            f"{path} line {n0}: got {quote(' '.join(head))}; accepted: 'NODES SWITCHES LINKS' "
            "(HPCC) or 'NODES SWITCHES TORS LINKS' (ns3-datacenter)"
        )
    nodes = _int(path, n0, "nodes", head[0], 2, 10**7)
    switches = _int(path, n0, "switches", head[1], 0, nodes)
    if len(head) == 4:
        # ns3-datacenter: the first TORS of the switch ids are top-of-rack switches, which
        # changes nothing of the graph (its routing is by shortest paths, as HPCC's).
        _int(path, n0, "tors", head[2], 0, switches)
    links = _int(path, n0, "links", head[-1], 1, 10**8)
    n1, ids = lines[1]
    if len(ids) != switches:
        raise ScenarioError(
            f"{path} line {n1}: {len(ids)} switch ids; accepted: {switches} (the first line's "
            "SWITCHES), each a node id"
        )
    switch_ids = set()
    for i, text in enumerate(ids):
        v = _int(path, n1, f"switch {i + 1}", text, 0, nodes - 1)
        if v in switch_ids:
            raise ScenarioError(f"{path} line {n1}: switch id {v} twice; accepted: each once")
        switch_ids.add(v)
    body = lines[2:]
    if len(body) != links:
        raise ScenarioError(
            f"{path}: {len(body)} link lines; accepted: {links} (the first line's LINKS)"
        )
    name = {k: (switch_name(k) if k in switch_ids else host_name(k)) for k in range(nodes)}
    out_nodes = [{"name": name[k], "kind": "host"} for k in range(nodes) if k not in switch_ids]
    out_nodes += [{"name": name[k], "kind": "switch"} for k in sorted(switch_ids)]
    out_links = []
    for n, f in body:
        if len(f) != 5:
            raise ScenarioError(
                f"{path} line {n}: got {quote(' '.join(f))}; accepted: 'SRC DST RATE DELAY "
                "ERROR_RATE'"
            )
        a = _int(path, n, "src", f[0], 0, nodes - 1)
        b = _int(path, n, "dst", f[1], 0, nodes - 1)
        if a == b:
            raise ScenarioError(
                f"{path} line {n}, field dst: got {quote(f[1])}; accepted: a node other than src"
            )
        speed = ethernet_speed(path, n, f[2])
        delay = f[3]
        if time_seconds(delay) is None or time_seconds(delay) < 0:
            raise ScenarioError(
                f"{path} line {n}, field delay: got {quote(delay)}; accepted: a time >= 0 with "
                "a unit, e.g. 1000ns"
            )
        try:
            err = float(f[4])
        except ValueError:
            err = None
        if err != 0:
            raise ScenarioError(
                f"{path} line {n}, field error_rate: got {quote(f[4])}; accepted: 0 (lfsim's "
                "Ethernet links do not corrupt frames)"
            )
        out_links.append(
            Located({"a": name[a], "b": name[b], "speed": speed, "delay": delay}, str(path), n)
        )
    return {"nodes": out_nodes, "links": out_links}


def seconds_to_time(path: Path, line: int, text: str) -> str:
    """``2.000001`` (seconds) -> ``2000001000000ps`` exactly."""
    try:
        s = Decimal(text)
    except InvalidOperation:
        s = None
    if s is None or not s.is_finite() or s < 0 or s > Decimal(TIME_MAX_S):
        raise ScenarioError(
            f"{path} line {line}, field start_time: got {quote(text)}; accepted: seconds >= 0, "
            f"at most {TIME_MAX_TEXT}"
        )
    ps = s * 10**12
    if ps != ps.to_integral_value():
        raise ScenarioError(
            f"{path} line {line}, field start_time: got {quote(text)}; accepted: seconds to "
            "the picosecond"
        )
    return f"{int(ps)}ps"


def read_flows(path: Path) -> list[dict]:
    """A flow.txt -> the flow list of a Flows workload."""
    lines = [(n, f) for n, f in _lines(path) if f]
    if not lines:
        raise ScenarioError(f"{path}: empty; accepted: the number of flows, then one per line")
    n0, head = lines[0]
    if len(head) != 1:
        raise ScenarioError(
            f"{path} line {n0}: got {quote(' '.join(head))}; accepted: the number of flows"
        )
    count = _int(path, n0, "flows", head[0], 1, 10**8)
    body = lines[1 : 1 + count]
    if len(body) < count:
        raise ScenarioError(
            f"{path}: {len(body)} flow lines; accepted: {count} (the first line's count)"
        )
    flows = []
    for n, f in body:
        if len(f) != 6:
            raise ScenarioError(
                f"{path} line {n}: got {quote(' '.join(f))}; accepted: 'SRC DST PRIORITY DPORT "
                "SIZE START_TIME'"
            )
        src = _int(path, n, "src", f[0], 0, 10**7)
        dst = _int(path, n, "dst", f[1], 0, 10**7)
        prio = _int(path, n, "priority", f[2], 0, 7)
        _int(path, n, "dport", f[3], 0, 65535)
        size = _int(path, n, "size", f[4], 1, 2**31)
        start = seconds_to_time(path, n, f[5])
        flows.append(
            Located(
                {
                    "src": host_name(src),
                    "dst": host_name(dst),
                    "size": size,
                    "start": start,
                    "priority": prio,
                    "messages": 1,
                },
                str(path),
                n,
            )
        )
    return flows


_FLOW_LINE = re.compile(
    r"(\d{1,8}) +(\d{1,8}) +([0-7]) +(\d{1,5}) +(\d{1,10}) +(\d{1,7})(?:\.(\d{1,12}))?"
)


def read_flow_columns(path: Path) -> tuple[dict[str, list[str]], list[int]]:
    """A flow.txt as the columns of a flow table (src, dst, size, start, priority, messages)
    and each flow's line: what read_flows gives, a million lines in seconds. Lines in the
    usual form (integers, start seconds with at most 12 decimals, single spaces) are read by
    one regex; anything else goes to read_flows, which reads it or names the error."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    if text is not None:
        fast = _flow_columns(text)
        if fast is not None:
            return fast
    flows = read_flows(path)
    columns = {k: [str(f[k]) for f in flows] for k in ("src", "dst", "size", "start", "priority")}
    columns["messages"] = ["1"] * len(flows)
    return columns, [f.line for f in flows]


def _flow_columns(text: str) -> tuple[dict[str, list[str]], list[int]] | None:
    lines = text.split("\n", 1)
    head = lines[0].strip()
    if not head.isdigit() or not 1 <= int(head) <= 10**8 or len(lines) < 2:
        return None
    count = int(head)
    body = lines[1].split("\n", count)[:count]
    if len(body) < count:
        return None
    match = _FLOW_LINE.fullmatch
    rows = [match(line.strip()) for line in body]
    if not all(rows):
        return None  # a blank line, another spacing, a bad field: read_flows decides
    src, dst, prio, size, start = [], [], [], [], []
    for m in rows:
        a, b, p, port, n, sec, frac = m.groups()
        if (
            int(a) > 10**7
            or int(b) > 10**7
            or int(port) > 65535
            or not 1 <= int(n) <= 2**31
            or int(sec) + bool(frac and int(frac)) > TIME_MAX_S
        ):
            return None  # read_flows names the field
        src.append(f"h{int(a)}")
        dst.append(f"h{int(b)}")
        prio.append(p)
        size.append(str(int(n)))
        start.append(f"{int(sec) * 10**12 + int((frac or '').ljust(12, '0'))}ps")
    columns = {"src": src, "dst": dst, "size": size, "start": start, "priority": prio}
    columns["messages"] = ["1"] * count
    return columns, list(range(2, count + 2))
