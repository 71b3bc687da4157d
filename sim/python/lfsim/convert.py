"""``lfsim convert hpcc TOPOLOGY FLOWS -o SCENARIO.yaml``: a user of the HPCC simulator (or of
ns3-datacenter) migrates in one command. The scenario lists the graph and the flows themselves
(YAML stays the one scenario format) and is checked by loading it before it is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from . import hpcc
from .errors import ScenarioError, quote
from .hpcc_config import PROGRAM_NAMES, PROGRAMS, Flags, map_config, network, read_config
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


def topology_program(topology: Path) -> str:
    """The program whose topology header the file has: third.cc's 'NODES SWITCHES LINKS' or
    ns3-datacenter's 'NODES SWITCHES TORS LINKS' (whose burst program is the default)."""
    for line in topology.read_text(encoding="utf-8").splitlines():
        if line.split():
            return "burst" if len(line.split()) == 4 else "third"
    return "third"


def _program(topology: Path, program: str | None, flags: Flags | None) -> str:
    header = topology_program(topology)
    if program is None:
        return header
    if program not in PROGRAMS:
        raise ScenarioError(
            f"--program: got {quote(program)}; accepted: {', '.join(PROGRAMS)} (the HPCC "
            "simulator's third.cc, or ns3-datacenter's powertcp-evaluation-burst, -workload, "
            "-fairness)"
        )
    if (program == "third") != (header == "third"):
        form = "NODES SWITCHES LINKS" if header == "third" else "NODES SWITCHES TORS LINKS"
        fits = "third" if header == "third" else "burst, workload or fairness"
        raise ScenarioError(
            f"--program: got {quote(program)}, which does not read {topology}'s header "
            f"'{form}'; accepted: {fits}"
        )
    return program


def hpcc_scenario(
    topology: Path,
    flows: Path,
    config: Path | None = None,
    program: str | None = None,
    flags: Flags | None = None,
    out: Path | None = None,
    warnings: list[str] | None = None,
) -> dict:
    """The scenario mapping of the files (not yet validated). With ``config`` (config.txt),
    its settings as ``program`` reads them (default: the program whose topology header the
    file has), ``flags`` its command line's (ns3-datacenter's), ``out`` the scenario's path
    (hpcc_output's flow_file is relative to it); warnings are appended to ``warnings``."""
    if config is None and (program is not None or (flags and flags != Flags())):
        given = "--program" if program is not None else "--algorithm, --wien, --delayWien"
        raise ScenarioError(f"{given}: given without --config; accepted: with --config")
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
    starts = [_ps(f["start"]) for f in flow_list]
    last = max(starts)
    links = []
    for link in graph["links"]:
        links.append({k: link[k] for k in ("a", "b", "speed", "delay")})
    mapped = None
    if config is not None:
        prog = _program(topology, program, flags)
        flags = flags or Flags()
        if prog == "third" and flags != Flags():
            raise ScenarioError(
                "--algorithm, --wien, --delayWien, --windowCheck: given with --program third; "
                "accepted: with an ns3-datacenter program (burst, workload, fairness), whose "
                "command line they are"
            )
        cfg = read_config(config, prog)
        net = network(graph, topology)
        mapped = map_config(
            cfg, net, flow_list, topology, flows, out or Path("scenario.yaml"), prog, flags
        )
        if warnings is not None:
            warnings.extend(mapped.warnings)
    files = [
        f"{topology.name} ({len(hosts)} hosts, {len(switches)} switches, {len(links)} links)",
        f"{flows.name} ({len(flow_list)} flows)",
    ]
    if config is not None:
        files.append(f"{config.name} (as {PROGRAM_NAMES[prog]} reads it)")
    described = f"Converted from the HPCC files {', '.join(files[:-1])} and {files[-1]}"
    scenario: dict[str, Any] = {
        "description": described + " by lfsim convert hpcc",
        "fabric": "roce",
        "seed": 1,
        # An upper bound: one second after the last flow starts (with a config, its
        # SIMULATOR_STOP_TIME); the run ends as soon as every flow has completed.
        "stop_time": exact_time(mapped.stop_ps if mapped else last + 10**12),
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
    if mapped:
        if mapped.faults:
            scenario["faults"] = mapped.faults
        scenario["hpcc_output"] = mapped.hpcc_output
        scenario.update(mapped.classes)
    # Goodput is what is delivered in the report's window over the window. The HPCC simulators'
    # flows start after their set-up time (2 s in their examples): the window opens with the
    # first flow, or per-flow goodput would be diluted by the idle seconds.
    scenario.setdefault("Report", {})["Warmup"] = exact_time(min(starts))
    return scenario


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


def convert_hpcc(
    topology: Path,
    flows: Path,
    out: Path,
    config: Path | None = None,
    program: str | None = None,
    flags: Flags | None = None,
    warnings: list[str] | None = None,
) -> str:
    """Writes the scenario to `out` (atomically) and returns a one-line summary; with
    ``config``, the config.txt's settings too (``hpcc_scenario``), its warnings appended to
    ``warnings``."""
    from .scenario import load_scenario

    if out.suffix not in (".yaml", ".yml"):
        raise ScenarioError(f"--out: got '{out}'; accepted: a path ending in .yaml")
    check_file_target(out, "--out")  # before the work: a device, a folder, no permission
    notes: list[str] = []
    scenario = hpcc_scenario(topology, flows, config, program, flags, out, notes)
    # Every check a run makes, before anything is written (hpcc_output's flow file is relative
    # to where the scenario will be: checked by its absolute path).
    checked = dict(scenario)
    if "hpcc_output" in checked:
        checked["hpcc_output"] = {**checked["hpcc_output"], "flow_file": str(flows.resolve())}
    load_scenario(checked)
    source = f"{topology} and {flows}" + (f" with {config}" if config else "")
    text = (
        f"# lfsim scenario converted from {source}.\n"
        "# Host id k is hk, switch id k swk; rates are Ethernet speeds, delays cable delays.\n"
        + yaml.dump(scenario, Dumper=_Dumper, sort_keys=False, width=100)
    )
    write_file(out, text, "--out")
    if warnings is not None:
        warnings.extend(notes)
    t = scenario["topology"]
    return (
        f"{len(t['hosts'])} hosts, {len(t['switches'])} switches, {len(t['links'])} links, "
        f"{len(scenario['workload']['flows']['flows'])} flows"
    )
