"""A capture turned into a scenario (``lfsim replay``) and compared with its run (``lfsim
compare capture``).

Every message of the capture — an RDMA SEND, WRITE or READ of a QP, or a SCSI command of an
iSCSI session — becomes one row of a ``Flows`` workload (one per verb: ``replay_send``,
``replay_write``, ``replay_read``) with its size and its start time relative to the capture's
first message, in nanoseconds, so that the run posts each message exactly when the capture saw
it start. Hosts are mapped by IP address: onto the hosts of a topology the user gives
(``--map IP=HOST``), or onto h0, h1, ... of a star (one switch) in the order the addresses
first appear. The generic Flows pattern runs on any fabric; each message is its own flow (its
own queue pair on roce), so messages a QP of the capture sent one after another may overlap in
the run when the first one is still in flight when the next one starts.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..errors import ScenarioError, quote
from ..output import write_file
from . import capture as cap

VERB_OPERATION = {"send": "Send", "write": "Write", "read": "Read"}


def capture_messages(path: str | os.PathLike, key: str = "CAPTURE") -> tuple[pd.DataFrame, str]:
    """The messages of a capture and their kind ("roce" or "iscsi"): RDMA messages when it has
    RoCEv2 packets, else SCSI commands of iSCSI sessions."""
    frames = cap.read_capture(path, key)
    msgs = cap.messages(frames)
    if len(msgs):
        return msgs.assign(kind="roce"), "roce"
    iscsi = cap.iscsi_commands(frames, path)
    if len(iscsi):
        # The data's sender and receiver: a read moves data from target to initiator.
        read = iscsi["verb"] == "read"
        msgs = pd.DataFrame(
            {
                "src": np.where(read, iscsi["target"], iscsi["initiator"]),
                "dst": np.where(read, iscsi["initiator"], iscsi["target"]),
                "qp": iscsi["session"],
                "verb": iscsi["verb"],
                "bytes": iscsi["bytes"],
                "start_s": iscsi["start_s"],
                "complete_s": iscsi["complete_s"],
                "fct_us": iscsi["fct_us"],
            }
        )
        return msgs.assign(kind="iscsi"), "iscsi"
    raise ScenarioError(
        f"{key}: {quote(str(path))} has no RoCEv2 message and no iSCSI command; accepted: a "
        "capture of RoCEv2 (UDP 4791) or iSCSI (TCP 3260) traffic"
    )


def parse_map(items: list[str] | None, key: str = "--map") -> dict[str, str]:
    out = {}
    for item in items or []:
        for part in str(item).split(","):
            if not part.strip():
                continue
            ip, sep, host = part.partition("=")
            if not sep or not ip.strip() or not host.strip():
                raise ScenarioError(
                    f"{key}: got {quote(part)}; accepted: IP=HOST pairs, e.g. 192.168.70.4=h0"
                )
            out[ip.strip()] = host.strip()
    return out


def host_map(msgs: pd.DataFrame, given: dict | None = None) -> dict[str, str]:
    """IP -> host name: the given pairs, the other addresses onto h0, h1, ... in order of first
    appearance (skipping names already given)."""
    given = dict(given or {})
    pairs = zip(msgs["src"], msgs["dst"], strict=True)
    order = list(dict.fromkeys(x for pair in pairs for x in pair))
    used = set(given.values())
    k = 0
    for ip in order:
        if ip in given:
            continue
        while f"h{k}" in used:
            k += 1
        given[ip] = f"h{k}"
        used.add(f"h{k}")
    return given


def _topology(topology: str | None, n_hosts: int, speed: str) -> dict:
    if topology is None:
        return {"generator": "Star", "Hosts": max(n_hosts, 2), "HostSpeed": speed}
    p = Path(topology)
    if not p.is_file():
        raise ScenarioError(
            f"--topology: no such file {quote(topology)}; accepted: a scenario YAML (its "
            "topology: is used), a YAML of nodes and links or an HPCC topology.txt"
        )
    if p.suffix in (".yaml", ".yml"):
        from ..scenario import read_yaml

        doc = read_yaml(p)
        if isinstance(doc, dict) and isinstance(doc.get("topology"), dict):
            topo = dict(doc["topology"])
            if "file" in topo and not Path(str(topo["file"])).is_absolute():
                topo["file"] = str((p.parent / str(topo["file"])).resolve())
            return topo
    return {"file": str(p.resolve())}


def replay_scenario(
    capture_path: str | os.PathLike,
    *,
    topology: str | None = None,
    mapping: dict | None = None,
    speed: str = "100GbE",
    fabric: str = "roce",
) -> tuple[dict, pd.DataFrame, dict]:
    """(scenario mapping, the capture's messages with their host names, IP -> host)."""
    msgs, kind = capture_messages(capture_path)
    if mapping and topology is None:
        raise ScenarioError(
            "--map: given without --topology; accepted: --map with --topology (the hosts of a "
            "star are named h0, h1, ... in order of appearance)"
        )
    hosts = host_map(msgs, mapping)
    msgs = msgs.copy()
    msgs["src_host"] = msgs["src"].map(hosts)
    msgs["dst_host"] = msgs["dst"].map(hosts)
    t0 = float(msgs["start_s"].min())
    # Start times relative to the first message, in whole nanoseconds (captures have at most
    # nanosecond resolution; pcap's microseconds are multiples of 1000 ns).
    msgs["start_ns"] = np.rint((msgs["start_s"] - t0) * 1e9).astype(np.int64)
    dropped = int((msgs["bytes"] <= 0).sum())
    use = msgs[msgs["bytes"] > 0]
    workload = {}
    # fabric fc carries a flow as an FCP write exchange: every message goes as one, from its
    # data's sender to its receiver (the data moves the same way).
    verbs = VERB_OPERATION if fabric != "fc" else {"write": "Write"}
    if fabric == "fc":
        use = use.assign(verb="write")
        info_note = "fabric fc: every message replayed as an FCP write from its data's sender"
    else:
        info_note = ""
    for verb, op in verbs.items():
        rows = use[use["verb"] == verb]
        if rows.empty:
            continue
        workload[f"replay_{verb}"] = {
            "pattern": "Flows",
            "Operation": op,
            "Messages": 1,
            "flows": [
                {"src": s, "dst": d, "size": int(b), "start": f"{int(t)}ns"}
                for s, d, b, t in zip(
                    rows["src_host"], rows["dst_host"], rows["bytes"], rows["start_ns"],
                    strict=True,
                )
            ],
        }  # fmt: skip
    last = float(use["start_ns"].max()) * 1e-9 if len(use) else 0.0
    stop_ms = max(10.0, math.ceil(last * 1e3 * 1.5 + 10))
    name = Path(capture_path).stem
    scenario = {
        "description": f"Replay of {Path(capture_path).name}: {len(use)} {kind} messages of "
        f"{len(set(zip(use['src'], use['dst'], use['qp'], strict=False)))} QPs/sessions over "
        f"{len(hosts)} hosts (lfsim replay)",
        "name": f"replay_{name}",
        "fabric": fabric,
        "seed": 1,
        "stop_time": f"{stop_ms:g}ms",
        "topology": _topology(topology, len(hosts), speed),
        "workload": workload,
    }
    info = {
        "kind": kind,
        "hosts": hosts,
        "messages": len(use),
        "dropped_empty": dropped,
        "t0_s": t0,
        "note": info_note,
    }
    return scenario, msgs, info


def write_replay(scenario: dict, info: dict, capture_path, out: str | os.PathLike) -> Path:
    out = Path(out)
    head = [
        f"# Written by lfsim replay from {capture_path}",
        "# Hosts by IP address: " + ", ".join(f"{ip} -> {h}" for ip, h in info["hosts"].items()),
        f"# Start times are relative to the capture's first message (t0 = {info['t0_s']:.9f} s).",
    ]
    if info.get("note"):
        head.append(f"# {info['note']}.")
    if info["dropped_empty"]:
        head.append(f"# {info['dropped_empty']} messages of 0 bytes are not replayed.")
    text = "\n".join(head) + "\n" + yaml.safe_dump(scenario, sort_keys=False, width=100)
    write_file(out, text, "-o")
    return out


# ---------------------------------------------------------------------------------------------
# A capture against the run of its replay.


def _result_tables(result_dir: Path) -> tuple[pd.DataFrame, dict, pd.DataFrame | None, dict]:
    import json

    if not (result_dir / "summary.json").is_file():
        raise ScenarioError(
            f"RESULT_DIR: {quote(str(result_dir))} has no summary.json; accepted: the output "
            "folder of lfsim run (of a scenario lfsim replay wrote)"
        )
    summary = json.loads((result_dir / "summary.json").read_text())
    flows_path = result_dir / "flows.parquet"
    if not flows_path.is_file():
        raise ScenarioError(
            f"RESULT_DIR: {quote(str(result_dir))} has no flows table; accepted: a run of a "
            "scenario with Flows workloads (Report.FlowTable true)"
        )
    flows = pd.read_parquet(flows_path)
    ports = result_dir / "ports.parquet"
    from ..scenario import read_yaml

    config = read_yaml(result_dir / "config.yaml") if (result_dir / "config.yaml").is_file() else {}
    return flows, summary, pd.read_parquet(ports) if ports.is_file() else None, config


def compare_capture(
    capture_path: str | os.PathLike,
    result_dir: str | os.PathLike,
    *,
    mapping: dict | None = None,
    speed_bps: float | None = None,
):
    """The capture (HW) against a run of its replay (SIM): per-message completion times
    (distribution and each message), throughput per QP, PFC pause frames and pause time per
    priority, CNPs and the ECN-marked fraction."""
    from .report import Comparison

    frames = cap.read_capture(capture_path)
    msgs, kind = capture_messages(capture_path)
    result_dir = Path(result_dir)
    flows, summary, ports, config = _result_tables(result_dir)
    hosts = host_map(msgs, mapping)
    c = Comparison("capture", str(capture_path), str(result_dir))
    hw = msgs[msgs["bytes"] > 0].copy()
    t0 = float(hw["start_s"].min())
    hw["start_ns"] = np.rint((hw["start_s"] - t0) * 1e9).astype(np.int64)
    hw = hw.sort_values(["start_ns", "bytes"], kind="stable").reset_index(drop=True)
    sim = flows.copy()
    sim["start_ns"] = np.rint(sim["start_us"] * 1e3).astype(np.int64)
    sim = sim.sort_values(["start_ns", "size_bytes"], kind="stable").reset_index(drop=True)
    if len(sim) != len(hw):
        c.warnings.append(
            f"the capture has {len(hw)} messages, the run {len(sim)} flows: paired in start "
            "order as far as both go"
        )
    n = min(len(sim), len(hw))
    moved = int(
        (
            (hw["start_ns"][:n].to_numpy() != sim["start_ns"][:n].to_numpy())
            | (hw["bytes"][:n].to_numpy() != sim["size_bytes"][:n].to_numpy())
        ).sum()
    )
    if moved:
        c.warnings.append(f"{moved} of {n} paired messages differ in start time or size")
    hf = hw["fct_us"][:n].to_numpy(dtype=float)
    sf = sim["fct_us"][:n].to_numpy(dtype=float)
    for name, fn in (("mean", np.nanmean), ("p50", lambda x: np.nanpercentile(x, 50)),
                     ("p99", lambda x: np.nanpercentile(x, 99)), ("max", np.nanmax)):  # fmt: skip
        c.add("all messages", f"completion {name}", "us",
              fn(hf) if np.isfinite(hf).any() else None,
              fn(sf) if np.isfinite(sf).any() else None)  # fmt: skip
    for k in range(n):
        label = f"msg {k} {hw['verb'][k]} {int(hw['bytes'][k])} B"
        c.add(label, "completion", "us", hf[k], sf[k])
    # Throughput per QP (or session): the QP's bytes over its first start to last completion;
    # the run's messages of that QP are the flows paired with them.
    hw_n = hw[:n].assign(sim_start=sim["start_ns"][:n].to_numpy(),
                         sim_fct=sf)  # fmt: skip
    for (src, dst, qp), g in hw_n.groupby(["src", "dst", "qp"], sort=False):
        span_hw = (g["start_s"] + g["fct_us"] * 1e-6).max() - g["start_s"].min()
        span_sim = ((g["sim_start"] * 1e-9 + g["sim_fct"] * 1e-6).max()
                    - (g["sim_start"] * 1e-9).min())  # fmt: skip
        total = float(g["bytes"].sum())
        # QPs in hex as Wireshark's BTH "Destination Queue Pair" and perftest print them.
        flow = f"session {int(qp)}" if kind == "iscsi" else f"qp 0x{int(qp):x}"
        item = f"{hosts.get(src, src)}>{hosts.get(dst, dst)} {flow}"
        c.add(item, "throughput", "Gb/s",
              total * 8 / span_hw / 1e9 if span_hw > 0 else None,
              total * 8 / span_sim / 1e9 if span_sim > 0 else None)  # fmt: skip
    # What the capture saw of flow control, against the run's host ports of the mapped hosts.
    s_hw = cap.summary(frames, speed_bps)
    m = summary.get("metrics", {})
    host_ports = None
    if ports is not None and "label" in ports:
        host_ports = ports[ports["label"].isin(set(hosts.values()))]
    pause_sim = paused_sim = cnp_sim = None
    if host_ports is not None:
        pause_sim = float(host_ports["pause_tx"].sum() + host_ports["pause_rx"].sum())
        paused_sim = float(host_ports["paused_time_us"].sum())
        cnp_sim = float(host_ports["cnp_tx"].sum())
    xoff = sum(s_hw[f"pfc_xoff_prio{p}"] for p in range(8))
    c.add("capture / host ports", "PFC pause frames", "frames", xoff, pause_sim)
    for p in range(8):
        if s_hw[f"pfc_xoff_prio{p}"]:
            c.add(f"priority {p}", "PFC pause frames", "frames", s_hw[f"pfc_xoff_prio{p}"], None,
                  note="the run counts pauses per port, not per priority")  # fmt: skip
    if speed_bps:
        paused = sum(s_hw[f"pfc_pause_us_prio{p}"] for p in range(8))
        c.add("capture / host ports", "PFC pause time", "us", paused, paused_sim)
    c.add("capture / host ports", "CNPs", "frames", s_hw["cnps"], cnp_sim)
    c.add("capture", "ECN-marked fraction", "",
          s_hw["ecn_marked_fraction"] if s_hw["ecn_capable"] else None,
          _sim_marked_fraction(m))  # fmt: skip
    c.add("capture", "ICRC errors", "frames", s_hw["icrc_errors"], None)
    if s_hw["icrc_errors"]:
        c.warnings.append(
            f"HW: {s_hw['icrc_errors']} RoCE frames with a wrong ICRC (corrupted or truncated in "
            "the capture); their messages are still counted"
        )
    return c


def _sim_marked_fraction(m: dict) -> float | None:
    marked, hops = m.get("ecn_marked"), m.get("packet_hops")
    if marked is None or not hops:
        return None
    return None if marked == 0 and hops == 0 else float(marked) / float(hops)
