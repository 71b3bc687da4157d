"""NIC and switch counters: mlx5 ``ethtool -S`` (and the RDMA ``hw_counters`` a lab greps
with it), NVIDIA/Mellanox SDK port counter dumps (``name = value``), ``mlnx_qos``, and SONiC's
``show pfc counters`` / ``pfcstat`` and ``show queue counters``.

A counter file reads into a ``Counters`` snapshot: ``values`` (name -> number, per port for the
switch tables: ``Ethernet6/rx_pfc3``) and ``ports`` (a DataFrame per port and priority: pause
frames received and sent, pause duration, and for queues packets, bytes and drops). Two
snapshots give deltas (``after - before``). ``compare_counters`` sets them against the
simulated per-port counters of a run (``ports`` table: pause_rx, pause_tx, paused_time_us,
cnp_tx, cnp_rx, frames_tx). ``read_mlnx_qos`` reads the trust mode, DSCP-to-priority map, PFC
priorities, traffic classes and receive buffers, and ``qos_attributes`` maps them onto scenario
attributes where lfsim has them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import ScenarioError, quote

COUNTERS_FORM = (
    "counters as printed by ethtool -S (mlx5), an SDK port counter dump, SONiC's show pfc "
    "counters / pfcstat or show queue counters"
)
_NUM = re.compile(r"^-?[\d,]+$")


@dataclass
class Counters:
    """One snapshot. ``kind``: mlx5 (ethtool -S and hw_counters), sdk (a switch SDK dump),
    sonic_pfc (show pfc counters or pfcstat) or sonic_queue (show queue counters)."""

    path: str
    kind: str
    values: dict = field(default_factory=dict)
    ports: pd.DataFrame = field(default_factory=pd.DataFrame)
    warnings: list = field(default_factory=list)

    def __sub__(self, before: Counters) -> Counters:
        """after - before, counter by counter (the deltas of two snapshots)."""
        if before.kind != self.kind:
            raise ScenarioError(
                f"--before: a {before.kind} snapshot, the counters are {self.kind}; accepted: two "
                "snapshots of the same tool"
            )
        values = {k: v - before.values.get(k, 0) for k, v in self.values.items()}
        out = Counters(self.path, self.kind, values, warnings=[*self.warnings])
        out.ports = _ports_table(self.kind, values)
        if any(v < 0 for v in values.values()):
            out.warnings.append("a counter went down between the snapshots (cleared or wrapped)")
        return out


def _int(text: str) -> int | None:
    t = text.strip()
    return int(t.replace(",", "")) if _NUM.match(t) else None


def _read(path, key: str) -> str:
    from .report import read_text

    return read_text(path, key, COUNTERS_FORM)


def read_counters(path: str | os.PathLike, key: str = "HW") -> Counters:
    """Any of the counter formats (told apart by their content)."""
    text = _read(path, key)
    if re.search(r"^Priority trust state:|^PFC configuration:", text, re.M):
        raise ScenarioError(
            f"{key}: {quote(str(path))} is an mlnx_qos report (settings, not counters; read it "
            f"with read_mlnx_qos); accepted: {COUNTERS_FORM}"
        )
    if re.search(r"^\s*Port\s+[RT]x\s+PFC0", text, re.M):
        c = _sonic_pfc(text)
    elif re.search(r"^\s*Port\s+TxQ\s+Counter/pkts", text, re.M):
        c = _sonic_queue(text)
    elif re.search(r"^\s*[A-Za-z][\w\[\]./-]*\s*=\s*-?\d", text, re.M):
        c = _sdk(text)
    elif re.search(r"^\s*[A-Za-z][\w\[\]./-]*\s*:\s*-?\d+\s*$", text, re.M):
        c = _ethtool(text)
    else:
        raise ScenarioError(f"{key}: {quote(str(path))} has no counters; accepted: {COUNTERS_FORM}")
    c.path = str(path)
    c.ports = _ports_table(c.kind, c.values)
    return c


def _ethtool(text: str) -> Counters:
    """``name: value`` lines (ethtool -S), and ``.../hw_counters/name:value`` (grep of sysfs)."""
    c = Counters("", "mlx5")
    for line in text.splitlines():
        m = re.match(r"^\s*(?:\S*/)?([A-Za-z][\w\[\].-]*)\s*:\s*(-?\d+)\s*$", line)
        if m:
            c.values[m.group(1)] = int(m.group(2))
    return c


def _sdk(text: str) -> Counters:
    """``name = value`` lines; ``Prio N`` headings qualify the per-priority ones that follow."""
    c = Counters("", "sdk")
    prio = None
    for line in text.splitlines():
        h = re.match(r"^\s*Prio\s+(\d)\s*$", line)
        if h:
            prio = int(h.group(1))
            continue
        if re.match(r"^\s*Port\s+\S+\s+-", line) or line.strip().startswith("="):
            prio = None if "Prio" not in line else prio
        m = re.match(r"^\s*([A-Za-z][\w.-]*)\s*=\s*(-?\d+)\s*$", line)
        if m:
            name = m.group(1)
            if prio is not None and name.startswith(("rx_", "tx_")):
                name = f"{name[:3]}prio{prio}_{name[3:]}"  # rx_pause -> rx_prio3_pause
            c.values[name] = int(m.group(2))
    return c


def _sonic_pfc(text: str) -> Counters:
    """Tables ``Port Rx PFC0 ... PFC7`` and ``Port Tx ...`` (show pfc counters, pfcstat)."""
    c = Counters("", "sonic_pfc")
    direction = None
    for line in text.splitlines():
        h = re.match(r"^\s*Port\s+([RT]x)\s+PFC0", line)
        if h:
            direction = h.group(1).lower()
            continue
        words = line.split()
        if direction and len(words) == 9 and not set(line.strip()) <= {"-", " "}:
            vals = [_int(w) for w in words[1:]]
            if all(v is not None for v in vals):
                for p, v in enumerate(vals):
                    c.values[f"{words[0]}/{direction}_prio{p}_pause"] = v
            elif words[0].startswith("Ethernet"):
                c.warnings.append(f"unreadable row, skipped: {line.strip()}")
    if not any("/tx_" in k for k in c.values):
        c.warnings.append("no Tx PFC table: the Tx counters are unknown, not zero")
    return c


def _sonic_queue(text: str) -> Counters:
    """``Port TxQ Counter/pkts Counter/bytes Drop/pkts Drop/bytes`` rows (show queue counters)."""
    c = Counters("", "sonic_queue")
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 6 and re.match(r"^(UC|MC|ALL)\d+$", w[1]):
            names = ("packets", "bytes", "drop_packets", "drop_bytes")
            for name, v in zip(names, w[2:6], strict=True):
                n = _int(v)
                if n is not None:
                    c.values[f"{w[0]}/{w[1]}_{name}"] = n
    return c


def _ports_table(kind: str, values: dict) -> pd.DataFrame:
    """Per port and priority: rx_pause, tx_pause, rx_pause_duration, tx_pause_duration (the NIC's
    units: mlx5 microseconds), and for queues packets/bytes/drops."""
    rows = {}
    for name, v in values.items():
        port, _, counter = name.rpartition("/")
        port = port or ("nic" if kind in ("mlx5", "sdk") else "")
        m = re.match(r"^(rx|tx)_prio(\d)_pause(_duration)?$", counter)
        if m:
            r = rows.setdefault(
                (port, int(m.group(2))), {"port": port, "priority": int(m.group(2))}
            )
            r[f"{m.group(1)}_pause{m.group(3) or ''}"] = v
            continue
        q = re.match(r"^(UC|MC|ALL)(\d)_(packets|bytes|drop_packets|drop_bytes)$", counter)
        if q:
            r = rows.setdefault(
                (port, int(q.group(2))), {"port": port, "priority": int(q.group(2))}
            )
            r[f"{q.group(1).lower()}_{q.group(3)}"] = v
    return pd.DataFrame(list(rows.values()))


# ---------------------------------------------------------------------------------------------
# mlnx_qos.


@dataclass
class QosSettings:
    trust: str | None = None
    dcbx: str | None = None
    dscp2prio: dict = field(default_factory=dict)  # dscp -> priority
    pfc: list = field(default_factory=list)  # 8 flags, priority 0..7
    cable_len_m: int | None = None
    tc_of_priority: dict = field(default_factory=dict)
    rx_buffers: list = field(default_factory=list)  # bytes per receive buffer
    buffer_of_priority: dict = field(default_factory=dict)


def read_mlnx_qos(path: str | os.PathLike, key: str = "HW") -> QosSettings:
    """The last mlnx_qos report in the file (a script's output may show several)."""
    text = _read(path, key)
    blocks = re.split(r"(?m)^(?=DCBX mode:|Priority trust state:)", text)
    blocks = [b for b in blocks if "PFC configuration" in b or "trust state" in b]
    if not blocks:
        raise ScenarioError(
            f"{key}: {quote(str(path))} has no mlnx_qos report; accepted: the output of mlnx_qos "
            "-i IFACE"
        )
    # A report begins at "DCBX mode" when printed, else at the trust line.
    q = QosSettings()
    block = text[text.rfind("DCBX mode:") if "DCBX mode:" in text else 0 :]
    if "PFC configuration" not in block:
        block = blocks[-1]
    if m := re.search(r"DCBX mode:\s*(.+)", block):
        q.dcbx = m.group(1).strip()
    if m := re.search(r"Priority trust state:\s*(\w+)", block):
        q.trust = m.group(1)
    for prio, dscps in re.findall(r"prio:(\d)\s+dscp:([\d,]+)", block):
        for d in dscps.strip(",").split(","):
            q.dscp2prio[int(d)] = int(prio)
    if m := re.search(r"Cable len:\s*(\d+)", block):
        q.cable_len_m = int(m.group(1))
    if m := re.search(r"enabled\s+((?:[01]\s+){7}[01])", block):
        q.pfc = [int(x) for x in m.group(1).split()]
    for tc, prios in re.findall(r"tc:\s*(\d)[^\n]*\n\s*priority:\s*([\d ]+)", block):
        for p in prios.split():
            q.tc_of_priority[int(p)] = int(tc)
    if m := re.search(r"Receive buffer size \(bytes\):\s*([\d,]+)", block):
        q.rx_buffers = [int(x) for x in m.group(1).strip(",").split(",")]
    if m := re.search(r"buffer\s+((?:\d\s+){7}\d)", block):
        q.buffer_of_priority = {p: int(b) for p, b in enumerate(m.group(1).split())}
    return q


def qos_attributes(q: QosSettings) -> dict:
    """Scenario attributes (``Class.Attribute`` -> value) that say what the mlnx_qos settings
    say, where lfsim has an attribute for them; what has none is left out (see ``unmapped``)."""
    out = {}
    if q.pfc:
        mask = sum(1 << p for p, on in enumerate(q.pfc) if on)
        out["RdmaNic.LosslessPriorities"] = mask
        out["RoceSwitch.LosslessPriorities"] = mask
    if q.trust in ("dscp", "pcp"):
        out["RoceSwitch.TrustPcp"] = q.trust == "pcp"
        if q.trust == "pcp":
            out["RdmaNic.VlanTagged"] = True
    differing = {d: p for d, p in sorted(q.dscp2prio.items()) if p != d >> 3}
    if q.dscp2prio:
        out["RoceSwitch.DscpMap"] = ",".join(f"{d}:{p}" for d, p in differing.items())
    if q.rx_buffers and q.buffer_of_priority and q.pfc:
        lossless = {q.buffer_of_priority.get(p) for p, on in enumerate(q.pfc) if on}
        size = sum(q.rx_buffers[b] for b in lossless if b is not None and b < len(q.rx_buffers))
        if size:
            out["RdmaNic.RxBufferSize"] = max(size, 16384)
    return out


def unmapped(q: QosSettings) -> list[str]:
    """Settings of the report that no lfsim attribute carries."""
    out = []
    if q.cable_len_m is not None:
        out.append(f"Cable len {q.cable_len_m} m (the headroom formula uses the link's own length)")
    if q.tc_of_priority and any(q.tc_of_priority.get(p) != p for p in q.tc_of_priority):
        out.append("priority-to-TC map (lfsim queues one class per priority)")
    if q.dcbx:
        out.append(f"DCBX mode {q.dcbx}")
    return out


# ---------------------------------------------------------------------------------------------
# Counters against a run's ports table.


def compare_counters(hw: Counters, result_dir: str | os.PathLike, port_map: dict[str, str]):
    """HW counters per port (``port_map``: HW port -> lfsim port label; an mlx5 or SDK file is
    one port, named ``nic``) against the run's ``ports`` table. PFC counts compare the HW sum
    over priorities with the port's pauses (lfsim counts per port); mlx5's pause durations are
    microseconds, compared with paused_time_us; np_cnp_sent/rp_cnp_handled with the port's CNPs
    sent and received."""
    from .report import Comparison

    rd = Path(result_dir)
    if not (rd / "ports.parquet").is_file() or not (rd / "summary.json").is_file():
        raise ScenarioError(
            f"SIM: {quote(str(rd))} has no ports table; accepted: the output folder of lfsim run "
            "(fabric roce)"
        )
    ports = pd.read_parquet(rd / "ports.parquet")
    by_label = {str(row["label"]): row for _, row in ports.iterrows()} if "label" in ports else {}
    c = Comparison("counters", hw.path, str(rd))
    c.warnings.extend(f"HW: {w}" for w in hw.warnings)
    hw_ports = sorted(set(hw.ports["port"])) if len(hw.ports) else []
    if not port_map:
        raise ScenarioError(
            "--port: none given; accepted: HWPORT=LFSIMPORT pairs, e.g. Ethernet6=sw0/p1 (an "
            f"ethtool or SDK file is one port: nic=h0); HW ports: {', '.join(hw_ports) or 'none'}"
        )
    for hp, sp in port_map.items():
        if sp not in by_label:
            raise ScenarioError(
                f"--port: got {quote(sp)}; accepted: a port of the run "
                f"({', '.join(list(by_label)[:12])}{', ...' if len(by_label) > 12 else ''})"
            )
        if hp not in hw_ports and hw.kind != "mlx5":
            raise ScenarioError(
                f"--port: got {quote(hp)}; accepted: a port of the HW counters "
                f"({', '.join(hw_ports) or 'none'})"
            )
        s = by_label[sp]
        mine = hw.ports[hw.ports["port"] == hp] if len(hw.ports) else pd.DataFrame()
        item = f"{hp}={sp}"

        def total(col, rows=mine):
            return float(rows[col].fillna(0).sum()) if col in rows else None

        if hw.kind == "sonic_queue":
            pk = sum(total(f"{q}_packets") or 0 for q in ("uc", "mc", "all"))
            c.add(item, "frames sent", "frames", pk, s["frames_tx"])
            continue
        c.add(item, "PFC pause frames received", "frames", total("rx_pause"), s["pause_rx"])
        c.add(item, "PFC pause frames sent", "frames", total("tx_pause"),
              s["pause_tx"] + s["xon_tx"])  # fmt: skip
        if hw.kind == "mlx5" and "rx_pause_duration" in mine:
            c.add(item, "paused time", "us", total("rx_pause_duration"), s["paused_time_us"])
        if hw.kind == "mlx5":
            for name, col in (("np_cnp_sent", "cnp_tx"), ("rp_cnp_handled", "cnp_rx")):
                if name in hw.values:
                    c.add(item, name, "frames", hw.values[name], s[col])
            for name in ("np_ecn_marked_roce_packets", "out_of_sequence", "packet_seq_err"):
                if name in hw.values:
                    c.add(item, name, "packets", hw.values[name], None,
                          note="no per-port counterpart in the run")  # fmt: skip
    return c


def parse_port_map(items: list[str] | None) -> dict[str, str]:
    out = {}
    for item in items or []:
        for part in str(item).split(","):
            a, sep, b = part.partition("=")
            if not sep or not a.strip() or not b.strip():
                raise ScenarioError(
                    f"--port: got {quote(part)}; accepted: HWPORT=LFSIMPORT, e.g. Ethernet6=sw0/p1"
                )
            out[a.strip()] = b.strip()
    return out
