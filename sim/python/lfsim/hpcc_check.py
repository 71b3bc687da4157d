"""The load-time check of a scenario's ``hpcc_output`` (its fabric, planes, flows table and the
HPCC flow.txt it names), below the scenario loader: hpcc_output writes the files after a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import flows as flow_files
from . import hpcc
from .errors import ScenarioError


def resolve(spec: dict[str, str], config: dict[str, Any], base_dir: Path | None) -> dict:
    """The checked ``hpcc_output`` of a resolved scenario (``config`` has its fabric, Report and
    workloads): a flow_file made absolute and read once, so that a bad one is found before the
    run."""
    if config["fabric"] != "roce":
        raise ScenarioError(
            f"hpcc_output: got it with fabric {config['fabric']}; accepted: hpcc_output with "
            "fabric roce (the HPCC simulator's RDMA fabric)"
        )
    planes = str((config.get("topology") or {}).get("Planes", "1"))
    if planes != "1":
        raise ScenarioError(
            f"hpcc_output: got it with topology.Planes {planes}; accepted: hpcc_output with one "
            "plane (the HPCC simulator's fabrics have one)"
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
        if not path.is_file():  # not a device or a pipe either: it is read whole
            raise ScenarioError(
                f"hpcc_output.flow_file: got '{path}', which is not a file; accepted: the HPCC "
                "flow.txt of the scenario's flows"
            )
        listed = _listed_flows(config.get("workload") or {})
        if listed is not None:  # else checked against the run's flows table
            same_flows(path, listed, "the scenario's")
        out["flow_file"] = str(path.resolve())
    return out


def _listed_flows(workloads: dict[str, dict]) -> list[tuple[str, str, int]] | None:
    """(source, destination, size) of each flow when every workload lists them (pattern
    Flows); None when some other pattern makes its flows as it runs."""
    out = []
    for name, item in workloads.items():
        listed = item.get("flows")
        if item.get("pattern") != "Flows" or listed is None:
            return None
        default = int(item.get("MessageSize", 0))
        if isinstance(listed, dict):
            table = flow_files.read_table(
                Path(listed["file"]), f"workload.{name}.flows", listed.get("sha256")
            ).columns
            sizes = [int(x) if x else default for x in table["size"]]
            out += list(zip(table["src"], table["dst"], sizes, strict=True))
        else:
            out += [(f["src"], f["dst"], int(f.get("size", default))) for f in listed]
    return out


def same_flows(path: Path, ours: list[tuple[str, str, int]], whose: str) -> list[int]:
    """hpcc_output.flow_file must be the HPCC flow.txt of ``ours`` (source, destination and
    size of each flow, in order); returns its DPORTs."""
    key = "hpcc_output.flow_file"
    columns, lines, ports = read_flow_file(path)
    accepted = f"accepted: the HPCC flow.txt of {whose} flows, one line each in their order"
    if len(ports) != len(ours):
        raise ScenarioError(
            f"{key}: '{path}' has {len(ports)} flows and {whose} flows are {len(ours)}; {accepted}"
        )
    for k, mine in enumerate(ours):
        theirs = (columns["src"][k], columns["dst"][k], int(columns["size"][k]))
        if theirs != mine:
            raise ScenarioError(
                f"{key}: '{path}' line {lines[k]} is a flow {theirs[0]}>{theirs[1]} of "
                f"{theirs[2]} B, {whose} flow {k} {mine[0]}>{mine[1]} of {mine[2]} B; {accepted}"
            )
    return ports


def read_flow_file(path: Path) -> tuple[dict[str, list[str]], list[int], list[int]]:
    """An HPCC flow.txt's columns and lines (hpcc.read_flow_columns: its errors name the file,
    the line and the field) and each flow's DPORT, which those columns leave out."""
    try:
        columns, lines = hpcc.read_flow_columns(path)
    except ScenarioError as exc:
        raise ScenarioError(f"hpcc_output.flow_file: {exc}") from None
    text = path.read_text("utf-8").splitlines()
    return columns, lines, [int(text[n - 1].split()[3]) for n in lines]
