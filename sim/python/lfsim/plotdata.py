"""What lfsim's figures and animations show, computed from a run without drawing.

``plotting`` and ``animate`` draw; this module reads a result (or a results folder's tables)
and returns plain data: series split per id, the blocked spells of a pause map, the deadlock's
wait-for cycle and its instants, the fabric as a graph (``topology_graph``) with its nodes'
positions (``topology_layout``), flows' workloads, and a sweep's heat-map tables. Nothing here
imports matplotlib.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import networkx as nx
import numpy as np
import pandas as pd


class RunResult(Protocol):
    """What the figures read of a run (``lfsim.Result`` has it): its summary and metrics, its
    series and tables, and the labels of their ids."""

    summary: dict[str, Any]

    @property
    def metrics(self) -> dict[str, Any]: ...
    @property
    def mode(self) -> str | None: ...
    @property
    def series_names(self) -> list[str]: ...
    @property
    def table_names(self) -> list[str]: ...
    def timeseries(self, name: str) -> pd.DataFrame: ...
    def table(self, name: str) -> pd.DataFrame: ...
    def labels(self, name: str) -> list[str] | None: ...


# ---------------------------------------------------------------------------------------------
# Series: rows per id, and the time a series covers.


def id_groups(df: pd.DataFrame) -> list[tuple[str, np.ndarray]]:
    """(legend label, row indices) per id, in id order; one unnamed group without an id."""
    if "id" not in df.columns:
        return [("", np.arange(len(df)))]
    ids = df["id"].to_numpy()
    order = np.argsort(ids, kind="stable")
    uniq, starts = np.unique(ids[order], return_index=True)
    labels = df["label"].to_numpy() if "label" in df.columns else uniq
    out = []
    for idx in np.split(order, starts[1:]):
        out.append((str(labels[idx[0]]), idx))
    return out


def end_time(df: pd.DataFrame, end_s: float | None) -> float:
    t = df["time_s"].to_numpy()
    return max(end_s or 0.0, float(np.nanmax(t)) if len(t) else 0.0)


def natural_key(text: str) -> list:
    """Sort key in which digits compare as numbers: ring9 before ring10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(text))]


# ---------------------------------------------------------------------------------------------
# Deadlocks: the ``blocked`` recorder's spells and the metrics' wait-for cycle.
#
# ``blocked`` holds one row per change of a queue's blocked state (blocked 1 stamped at the
# start of the spell, 0 at the detector check that saw the queue free); ``deadlock_cycle`` lists
# queue labels in wait-for order (each waits on the next, the last on the first). A queue label
# is a port label ("ring0/p1", "h3") or a port label with a suffix ("ring0/p1/prio3").


def metric_seconds(metrics: Mapping | None, key: str) -> float | None:
    """A ``*_us`` metric in seconds; None when absent, null or not finite."""
    value = (metrics or {}).get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        return None
    return float(value) * 1e-6


def deadlock_cycle(metrics: Mapping | None) -> list[str]:
    """The wait-for cycle of a run that deadlocked, else []."""
    if not (metrics or {}).get("deadlock"):
        return []
    return [str(q) for q in (metrics or {}).get("deadlock_cycle") or []]


def blocked_spells(df: pd.DataFrame, end_s: float | None = None) -> pd.DataFrame:
    """The blocked spells of every queue of a ``blocked`` series, one row per spell.

    Columns: ``queue`` (label), ``start_s``, ``end_s`` (the check that saw it free, or the end
    of the run), ``ongoing`` (still blocked when the run ended), ``bytes`` (queued bytes at the
    detector check that first saw the spell). Rows of one queue are taken in the order they
    were recorded (the series is not sorted by time across queues). Sorted by start, then
    queue."""
    columns = ["queue", "start_s", "end_s", "ongoing", "bytes"]
    if not len(df) or not {"time_s", "id", "blocked"} <= set(df.columns):
        return pd.DataFrame({c: [] for c in columns}).astype(
            {"queue": object, "start_s": float, "end_s": float, "ongoing": bool, "bytes": float}
        )
    t_end = end_time(df, end_s)
    t_all = df["time_s"].to_numpy(dtype=float)
    b_all = df["blocked"].to_numpy(dtype=float) > 0.5
    q_all = df["bytes"].to_numpy(dtype=float) if "bytes" in df.columns else np.zeros(len(df))
    parts = []
    for label, idx in id_groups(df):
        state = b_all[idx]
        # Keep the changes only (a repeated state adds nothing): then 1, 0, 1, 0, ...
        change = state != np.r_[False, state[:-1]]
        idx = idx[change]
        starts, ends = idx[0::2], idx[1::2]
        end_t = np.full(len(starts), t_end)
        end_t[: len(ends)] = t_all[ends]
        ongoing = np.arange(len(starts)) >= len(ends)
        parts.append(
            pd.DataFrame(
                {
                    "queue": str(label),
                    "start_s": t_all[starts],
                    "end_s": np.maximum(end_t, t_all[starts]),
                    "ongoing": ongoing,
                    "bytes": q_all[starts],
                }
            )
        )
    spells = pd.concat(parts, ignore_index=True)
    return spells.sort_values(["start_s", "queue"], kind="stable", ignore_index=True)


def cycle_queue_bytes(result: RunResult) -> dict[str, float] | None:
    """Queue label -> its queued bytes when the detector first saw its last blocked spell (the
    bytes topology.png names beside the cycle), for a run that deadlocked and recorded
    ``blocked``; else None."""
    if not deadlock_cycle(result.metrics) or "blocked" not in result.series_names:
        return None
    spells = blocked_spells(result.timeseries("blocked"), result.summary["sim_time_s"])
    return spells.groupby("queue", sort=False)["bytes"].last().to_dict()


# ---------------------------------------------------------------------------------------------
# The fabric as a graph, from the ``links`` table (one row per cable: columns a, b index the
# port labels of the table), and where its nodes are drawn.

_SWITCH_PORT = re.compile(r"(.+)/p\d+")


def node_of(port: str) -> str:
    """The switch or host a port belongs to: "ring0/p1" -> "ring0", "A/leaf0/p1" -> "A/leaf0"
    (plane A of a dual fabric); a host port "h3" is its own node, "h0/A" (host h0's port on
    plane A) belongs to h0."""
    m = _SWITCH_PORT.fullmatch(str(port))
    return m.group(1) if m else str(port).split("/", 1)[0]


def is_host_port(label: str) -> bool:
    """Host ports are labelled by their host (h3; h0/A in a dual fabric), switch ports by
    switch/pN (leaf0/p1; A/leaf0/p1)."""
    return _SWITCH_PORT.fullmatch(str(label)) is None


def queue_port(queue: str, ports) -> str | None:
    """The port of a queue label: the label itself or its longest prefix (cut at "/") that is
    one of ``ports`` ("ring0/p1/prio3" -> "ring0/p1"); None if there is none."""
    parts = str(queue).split("/")
    for n in range(len(parts), 0, -1):
        candidate = "/".join(parts[:n])
        if candidate in ports:
            return candidate
    return None


def link_peers(links: pd.DataFrame, port_labels: Sequence[str]) -> dict[str, str]:
    """Port label -> the port label at the other end of its cable, from a ``links`` table."""
    peers = {}
    for a, b in zip(links["a"].to_numpy(), links["b"].to_numpy(), strict=True):
        pa, pb = str(port_labels[int(a)]), str(port_labels[int(b)])
        peers[pa], peers[pb] = pb, pa
    return peers


def topology_graph(links: pd.DataFrame, port_labels: Sequence[str]) -> nx.Graph:
    """networkx Graph of the fabric: one node per switch or host (attribute ``kind``), one
    edge per pair of connected nodes (attribute ``ports``: the (port, port) pairs of its
    cables)."""
    g = nx.Graph()
    for pa, pb in link_peers(links, port_labels).items():
        u, v = node_of(pa), node_of(pb)
        for node, port in ((u, pa), (v, pb)):
            switch = not is_host_port(port) or g.nodes.get(node, {}).get("kind") == "switch"
            g.add_node(node, kind="switch" if switch else "host")
        if g.has_edge(u, v):
            pairs = g.edges[u, v]["ports"]
            if (pb, pa) not in pairs and (pa, pb) not in pairs:
                pairs.append((pa, pb))
        else:
            g.add_edge(u, v, ports=[(pa, pb)])
    return g


def cycle_hops(
    cycle: Sequence[str], links: pd.DataFrame, port_labels: Sequence[str]
) -> list[tuple[str, str, str]]:
    """(queue, its node, the node at the other end of its port's cable) for each member of a
    wait-for cycle, in cycle order; members whose port has no cable are left out."""
    peers = link_peers(links, port_labels)
    hops = []
    for q in cycle:
        port = queue_port(q, peers)
        if port is not None:
            hops.append((str(q), node_of(port), node_of(peers[port])))
    return hops


def cycle_edges(
    cycle: Sequence[str], links: pd.DataFrame, port_labels: Sequence[str]
) -> list[tuple[str, str]]:
    """The wait-for cycle as directed node pairs along the cables, in cycle order: each
    member's switch -> the switch its port sends to (the clockwise ring: (ring0, ring1), ...)."""
    return [(u, v) for _, u, v in cycle_hops(cycle, links, port_labels)]


def _switch_ring(g) -> list[str] | None:
    """The switches in ring order when they form a ring (each linked to exactly two others,
    all connected, at least three), else None."""
    switches = [n for n, kind in g.nodes(data="kind") if kind == "switch"]
    if len(switches) < 3:
        return None
    s = g.subgraph(switches)
    if not nx.is_connected(s) or any(d != 2 for _, d in s.degree()):
        return None
    order = [min(switches, key=natural_key)]
    prev = None
    while len(order) < len(switches):
        nxt = sorted((n for n in s.neighbors(order[-1]) if n != prev), key=natural_key)[0]
        prev = order[-1]
        order.append(nxt)
    return order


def _tiered_layout(g) -> dict[str, tuple[float, float]] | None:
    """Hosts in the bottom row, each switch in the row of its distance (in cables) from the
    nearest host (leaves, then spines), a switch of the first row above its hosts. None
    without hosts or with a switch that reaches none."""
    hosts = sorted((n for n, k in g.nodes(data="kind") if k != "switch"), key=natural_key)
    if not hosts:
        return None
    tier = nx.multi_source_dijkstra_path_length(g, hosts)
    if len(tier) < g.number_of_nodes():
        return None
    switches = sorted((n for n in g if n not in hosts), key=lambda n: (tier[n], natural_key(n)))
    first = [n for n in switches if tier[n] == 1]
    rank = {n: i for i, n in enumerate(first)}

    def host_key(h):
        up = [rank[m] for m in g.neighbors(h) if m in rank]
        return (min(up) if up else len(rank), natural_key(h))

    hosts.sort(key=host_key)
    width = 3.0
    pos = {}
    for i, h in enumerate(hosts):
        pos[h] = (width * (i + 0.5) / len(hosts) - width / 2, 0.0)
    top = max(tier.values())
    for t in range(1, top + 1):
        row = [n for n in switches if tier[n] == t]
        for i, n in enumerate(row):
            below = [pos[m][0] for m in g.neighbors(n) if m in pos and tier[m] == t - 1]
            x = float(np.mean(below)) if t == 1 and below else width * ((i + 0.5) / len(row) - 0.5)
            pos[n] = (x, 1.2 * t)
    # Switches over the same hosts (the planes of a dual fabric: A/leaf0, B/leaf0) side by side.
    same: dict[tuple[float, float], list[str]] = {}
    for n in switches:
        same.setdefault((round(pos[n][0], 9), pos[n][1]), []).append(n)
    for (x, y), members in same.items():
        step = min(0.3, width / max(len(hosts), 1))
        for k, n in enumerate(members):
            pos[n] = (x + step * (k - (len(members) - 1) / 2), y)
    return pos


def topology_layout(g) -> dict[str, tuple[float, float]]:
    """Node positions. A ring of switches is drawn as a circle, its first switch at the top and
    the ring order clockwise, each host outside its switch; other fabrics in rows (hosts at the
    bottom, then each switch by its distance from the hosts), or, when that does not apply, a
    spring layout with a fixed seed. The same picture every time."""
    ring = _switch_ring(g)
    if ring is None:
        pos = _tiered_layout(g)
        if pos is not None:
            return pos
        pos = nx.spring_layout(g, seed=1)
        return {n: (float(x), float(y)) for n, (x, y) in pos.items()}
    pos, angle = {}, {}
    for i, sw in enumerate(ring):
        angle[sw] = np.pi / 2 - 2 * np.pi * i / len(ring)
        pos[sw] = (float(np.cos(angle[sw])), float(np.sin(angle[sw])))
    hosts_of: dict[str, list[str]] = {}
    for n, kind in g.nodes(data="kind"):
        if kind != "switch":
            attached = sorted((m for m in g.neighbors(n) if m in angle), key=natural_key)
            hosts_of.setdefault(attached[0] if attached else "", []).append(n)
    spread = min(0.5, np.pi / len(ring))
    for sw, hosts in hosts_of.items():
        hosts.sort(key=natural_key)
        for k, h in enumerate(hosts):
            if not sw:  # a host linked to no switch: in the middle
                pos[h] = (0.0, 0.2 * k)
                continue
            a = angle[sw] - spread * (k - (len(hosts) - 1) / 2) / max(len(hosts), 1)
            pos[h] = (float(1.5 * np.cos(a)), float(1.5 * np.sin(a)))
    return pos


# ---------------------------------------------------------------------------------------------
# A result's labels and workloads.


def labels_of(result: RunResult, name: str) -> list[str] | None:
    """The labels of a series' or table's ``id`` (for ``links``: of its a and b columns)."""
    return result.labels(name)


def workload_of(result: RunResult) -> dict[str, str] | None:
    """Flow label -> its workload's name, from the ``flows`` table (None without one)."""
    names = labels_of(result, "workloads")
    if "flows" not in result.table_names or not names:
        return None
    flows = result.table("flows")
    if not {"label", "workload"} <= set(flows.columns):
        return None
    return {
        str(label): names[int(w)]
        for label, w in zip(flows["label"], flows["workload"], strict=True)
        if 0 <= int(w) < len(names)
    }


# ---------------------------------------------------------------------------------------------
# A sweep's heat maps: one metric over two grid keys.


def grid_values(df: pd.DataFrame, key: str) -> list:
    """A grid key's values in grid order: sweep rows come in grid order, so first appearance."""
    return list(dict.fromkeys(df[key].tolist()))


def heatmap_data(df: pd.DataFrame, metric: str, x: str, y: str) -> pd.DataFrame:
    """The metric as a table: one row per value of ``y``, one column per value of ``x``, both
    in grid order; NaN where a point lacks the metric. ``df`` must hold one row per (x, y)."""
    table = df.pivot(index=y, columns=x, values=metric)
    return table.reindex(index=grid_values(df, y), columns=grid_values(df, x)).astype(float)
