"""``lfsim convert hpcc TOPOLOGY FLOWS -o SCENARIO.yaml``: a user of the HPCC simulator (or of
ns3-datacenter) migrates in one command. The scenario lists the graph and the flows themselves
(YAML stays the one scenario format) and is checked by loading it before it is written."""

from __future__ import annotations

from pathlib import Path

import yaml

from . import hpcc
from .errors import ScenarioError
from .output import check_file_target, write_file

_UNITS = (("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3), ("ps", 1))


def exact_time(ps: int) -> str:
    """Picoseconds as the shortest exact time string: 2000000000000 -> '2s'."""
    for unit, scale in _UNITS:
        if ps % scale == 0:
            return f"{ps // scale}{unit}"
    return f"{ps}ps"


def _ps(text: str) -> int:
    return int(text[:-2])  # hpcc.read_flows writes '<n>ps'


def hpcc_scenario(topology: Path, flows: Path) -> dict:
    """The scenario mapping of the two files (not yet validated)."""
    graph = hpcc.read_topology(topology)
    flow_list = hpcc.read_flows(flows)
    hosts = {n["name"] for n in graph["nodes"] if n["kind"] == "host"}
    switches = {n["name"] for n in graph["nodes"] if n["kind"] == "switch"}
    for f in flow_list:
        for end in ("src", "dst"):
            if f[end] not in hosts:
                node_id = f[end][1:]
                what = "a switch" if f"sw{node_id}" in switches else "not a node"
                raise ScenarioError(
                    f"{flows} line {f.line}, field {end}: got '{node_id}', {what} of {topology}; "
                    "accepted: the id of a host (a node that is not a switch)"
                )
    last = max(_ps(f["start"]) for f in flow_list)
    links = []
    for link in graph["links"]:
        links.append({k: link[k] for k in ("a", "b", "speed", "delay")})
    return {
        "description": (
            f"Converted from the HPCC files {topology.name} ({len(hosts)} hosts, "
            f"{len(switches)} switches, {len(links)} links) and {flows.name} ({len(flow_list)} "
            "flows) by lfsim convert hpcc"
        ),
        "fabric": "roce",
        "seed": 1,
        # An upper bound: one second after the last flow starts; the run ends as soon as every
        # flow has completed.
        "stop_time": exact_time(last + 10**12),
        "topology": {
            "hosts": [n["name"] for n in graph["nodes"] if n["kind"] == "host"],
            "switches": [n["name"] for n in graph["nodes"] if n["kind"] == "switch"],
            "links": links,
        },
        "workload": {
            "flows": {
                "pattern": "Flows",
                "flows": [
                    {
                        "src": f["src"],
                        "dst": f["dst"],
                        "size": f["size"],
                        "start": exact_time(_ps(f["start"])),
                        "priority": f["priority"],
                        "messages": 1,
                    }
                    for f in flow_list
                ],
            }
        },
    }


class _Dumper(yaml.SafeDumper):
    pass


def _flow_style_items(dumper: yaml.SafeDumper, data: dict) -> yaml.Node:
    # Links and flows one per line: {a: h0, b: sw16, speed: 100GbE, delay: 1000ns}.
    flow = all(not isinstance(v, dict | list) for v in data.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flow)


def _flow_style_names(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    # A list of names on one line: hosts: [h0, h1, ...].
    flow = all(isinstance(v, str) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(dict, _flow_style_items)
_Dumper.add_representer(list, _flow_style_names)


def convert_hpcc(topology: Path, flows: Path, out: Path) -> str:
    """Writes the scenario to `out` (atomically) and returns a one-line summary."""
    from .scenario import load_scenario

    if out.suffix not in (".yaml", ".yml"):
        raise ScenarioError(f"--out: got '{out}'; accepted: a path ending in .yaml")
    check_file_target(out, "--out")  # before the work: a device, a folder, no permission
    scenario = hpcc_scenario(topology, flows)
    load_scenario(scenario)  # every check a run makes, before anything is written
    text = (
        f"# lfsim scenario converted from {topology} and {flows}.\n"
        "# Host id k is hk, switch id k swk; rates are Ethernet speeds, delays cable delays.\n"
        + yaml.dump(scenario, Dumper=_Dumper, sort_keys=False, width=100)
    )
    write_file(out, text, "--out")
    t = scenario["topology"]
    return (
        f"{len(t['hosts'])} hosts, {len(t['switches'])} switches, {len(t['links'])} links, "
        f"{len(scenario['workload']['flows']['flows'])} flows"
    )
