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
propagation delay of the path, plus one PACKET_PAYLOAD_SIZE serialised at every hop) plus the
size and 48 B of headers per packet over the slowest link of the path.

pfc.txt, one line per PFC frame a port received that changed its pause state::

    time node nodetype ifindex type

(ns; node id; 0 host, 1 switch; the port's net device index, 1 + the rank of its link among the
node's links in topology order, 0 being the loopback; 1 pause, 0 resume).

Node ids: a scenario converted from HPCC files names host id k ``hk`` and switch id k ``swk``:
those ids. Any other scenario's nodes are numbered as a topology.txt written from it would
number them: hosts 0, 1, ... in lfsim's host order, then the switches in their order.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .errors import ScenarioError

# CustomHeader::GetStaticWholeHeaderSize() - IntHeader::GetStaticSize() in both codes: Ethernet
# 14 + IPv4 20 + UDP 8 + the qbb header's pg (2) and seq (4). qp_finish counts it per packet.
HEADER_BYTES = 48
FIRST_SPORT = 10000  # third.cc: "each host pair use port number from 10000"
# The DPORT of HPCC's traffic_gen.py (its normal traffic; fct_analysis.py selects $4==100).
DEFAULT_DPORT = 100
_GBE = re.compile(r"(\d+)GbE")
_TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".yaml", ".yml")


def resolve(spec: dict[str, str], config: dict[str, Any], base_dir: Path | None) -> dict:
    """The checked ``hpcc_output`` of a resolved scenario (``config`` has its fabric, Report and
    workloads): a flow_file made absolute and read once, so that a bad one is found before the
    run."""
    if config["fabric"] != "roce":
        raise ScenarioError(
            f"hpcc_output: got it with fabric {config['fabric']}; accepted: hpcc_output with "
            "fabric roce (the HPCC simulator's RDMA fabric)"
        )
    out = dict(spec)
    if "fct" in out and str(config.get("Report", {}).get("FlowTable", "true")) != "true":
        raise ScenarioError(
            "hpcc_output: fct needs the flows table; accepted: Report.FlowTable true with fct, "
            "or hpcc_output without fct"
        )
    if "flow_file" in out:
        path = Path(out["flow_file"])
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        ports = read_dports(path)
        listed = _listed_flows(config.get("workload") or {})
        if listed is not None and listed != len(ports):
            raise ScenarioError(
                f"hpcc_output.flow_file: '{path}' has {len(ports)} flows; accepted: the HPCC "
                f"flow.txt of the scenario's {listed} flows, one line each in their order"
            )
        out["flow_file"] = str(path.resolve())
    return out


def _listed_flows(workloads: dict[str, dict]) -> int | None:
    """How many flows the workloads have when every one lists them (pattern Flows); None when
    some other pattern makes its flows as it runs."""
    total = 0
    for item in workloads.values():
        flows = item.get("flows")
        if item.get("pattern") != "Flows" or flows is None:
            return None
        total += len(flows) if isinstance(flows, list) else int(flows.get("count", 0))
    return total


def read_dports(path: Path) -> list[int]:
    """The DPORT of each flow of an HPCC flow.txt (checked as a flow file first: its errors
    name the file, the line and the field)."""
    from . import hpcc

    try:
        hpcc.read_flow_columns(path)
    except ScenarioError as exc:
        raise ScenarioError(f"hpcc_output.flow_file: {exc}") from None
    lines = [f for f in (line.split() for line in path.read_text("utf-8").splitlines()) if f]
    count = int(lines[0][0])
    return [int(f[3]) for f in lines[1 : 1 + count]]


def node_ip(node_id: int) -> int:
    """third.cc's node_id_to_ip, as the 32-bit number fct.txt prints with %08x."""
    return (0x0B000001 + (node_id // 256) * 0x00010000 + (node_id % 256) * 0x00000100) & (2**32 - 1)
