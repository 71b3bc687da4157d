"""The shared parts of a scenario besides the fabric: its topology and its workloads.

``topology:`` names a generator and its attributes, or lists a graph (inline or in a file: a
YAML file of nodes and links, or an HPCC/ns3-datacenter ``topology.txt``). ``workload:`` maps
names to patterns and their attributes (a ``Flows`` pattern also takes a flow list, inline or
from a YAML file or an HPCC ``flow.txt``). Both are resolved here, before anything runs, into
the form ``config.yaml`` keeps (every attribute with its value, files embedded) and into what
``_core.run`` takes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import core as _core
from . import flows, hpcc
from .errors import ScenarioError, quote
from .values import (
    LENGTH_FORM,
    NAME_RE,
    TIME_MAX_S,
    attribute_text,
    check_time,
    decimal_text,
    length_metres,
    name_list,
    time_seconds,
)
from .yamlio import Located, read_yaml

GENERATOR = "generator"
PATTERN = "pattern"
# Keys of a topology section that are not attributes.
TOPOLOGY_KEYS = (GENERATOR, "file", "nodes", "links", "groups")
# Keys of a workload item that are not attributes.
WORKLOAD_KEYS = (PATTERN, "flows", "file")
GRAPH = "Graph"
FLOWS = "Flows"


def _topologies() -> dict[str, dict]:
    return {t["name"]: t for t in _core.core().topologies()}


def _patterns() -> dict[str, dict]:
    return _core.patterns()


def instance_attributes(type_id: str) -> list[dict]:
    """Attributes an instance of ``type_id`` takes: its ancestors' (below ns3::Object), then its
    own."""
    return list(_core.instance_attributes(type_id))


def _resolve_attributes(
    key: str, type_id: str, given: Mapping[str, Any], of: str = ""
) -> dict[str, str]:
    """Every attribute of the instance as a string: given values checked, defaults filled.
    ``of`` names the instance in errors ("generator Star", "pattern Incast")."""
    attrs = instance_attributes(type_id)
    known = [a["name"] for a in attrs]
    values: dict[str, str] = {}
    for attr, value in given.items():
        attr = str(attr)
        if attr not in known:
            where = f" for {of}" if of else ""
            raise ScenarioError(f"{key}.{attr} does not exist{where}; accepted: {', '.join(known)}")
        values[attr] = attribute_text(_owner(type_id, attr), attr, value, f"{key}.{attr}")
    return {a["name"]: values.get(a["name"], str(a["default"])) for a in attrs}


def _where(item: Any, key: str) -> str:
    """The key of an item (``topology.links[3]``), after its file and line when it was read from
    a file (``graph.yaml line 12, topology.links[3]``): errors append ``.field``."""
    line = getattr(item, "line", None)
    source = getattr(item, "source", None)
    if line is not None and source is not None:
        return f"{source} line {line}, {key}"
    return key


def _number(text: str) -> int | float:
    return float(text) if any(c in text for c in ".eE") else int(text)


def _owner(type_id: str, attr: str) -> str:
    """The class (``type_id`` or an ancestor) that declares an instance's attribute."""
    for t in [type_id, *reversed(_core.core().parents(type_id))]:
        if any(a["name"] == attr for a in _core.attributes(t)):
            return t
    return type_id


# ---------------------------------------------------------------------------------------------
# Topology


def _read_graph_file(path: Path, key: str) -> dict:
    """A topology file: YAML with nodes/links (and groups), or an HPCC topology.txt."""
    if not path.is_file():
        raise ScenarioError(
            f"{key}: file '{path}' does not exist; accepted: a YAML file of nodes and links or "
            "an HPCC topology.txt"
        )
    if path.suffix in (".yaml", ".yml"):
        raw = read_yaml(path)
        if not isinstance(raw, dict) or "links" not in raw:
            raise ScenarioError(
                f"{path}: got {quote(raw)}; accepted: a YAML mapping with nodes: (or hosts: and "
                "switches:) and links:"
            )
        return raw
    return hpcc.read_topology(path)


# A link's length in metres: what FcChannel and RoceChannel take (their Length, 0..1e7 m).
LINK_LENGTH_MAX = 10**7

# Classes with one object per node, whose attributes a node may set for itself (`set:`), and
# attributes that are the run's, not a node's (HostCpu.Enabled: a storage workload models all
# its hosts' CPUs or none).
NODE_CLASSES = ("HostCpu",)
RUN_WIDE = ("HostCpu.Enabled",)


def _node_set(n: dict, where: str, classes: Mapping[str, str]) -> dict:
    """A node's ``set:``: attributes of its own per-node objects, each checked."""
    sets = n.get("set", {})
    own = [c for c in NODE_CLASSES if c in classes]
    accepted = (
        f"Class.Attribute with Class one of {', '.join(own)}, not {', '.join(RUN_WIDE)}"
        if own
        else "nothing here: no class of this scenario has an object per node (HostCpu comes "
        "with a storage workload)"
    )
    if not isinstance(sets, dict):
        raise ScenarioError(f"{where}.set: got {quote(sets)}; accepted: a mapping {accepted}")
    checked = {}
    for k, v in sets.items():
        cls, _, attr = str(k).partition(".")
        if cls not in own or not attr or k in RUN_WIDE:
            raise ScenarioError(f"{where}.set: key {quote(k)}; accepted: {accepted}")
        checked[f"{cls}.{attr}"] = attribute_text(classes[cls], attr, v, f"{where}.set.{k}")
    return checked


def _node_list(section: dict, key: str, classes: Mapping[str, str]) -> list[dict]:
    """nodes: [{name, kind, groups, set}] or hosts: [...] and switches: [...] -> normalized
    list."""
    nodes: list[dict] = []
    if "nodes" in section:
        raw = section["nodes"]
        if not isinstance(raw, list) or not raw:
            raise ScenarioError(
                f"{key}.nodes: got {quote(raw)}; accepted: a list of nodes, each "
                "{name: h0, kind: host} or {name: sw0, kind: switch}"
            )
        for i, n in enumerate(raw):
            where = _where(n, f"{key}.nodes[{i}]")
            if not isinstance(n, dict) or not isinstance(n.get("name"), str | int):
                raise ScenarioError(
                    f"{where}: got {quote(n)}; accepted: {{name: NAME, kind: host or switch}}"
                )
            extra = set(n) - {"name", "kind", "groups", "set"}
            if extra:
                raise ScenarioError(
                    f"{where}: key '{sorted(extra)[0]}' does not exist; accepted: name, kind, "
                    "groups, set"
                )
            kind = n.get("kind")
            if kind not in ("host", "switch"):
                raise ScenarioError(f"{where}.kind: got {quote(kind)}; accepted: host or switch")
            groups = n.get("groups", [])
            if isinstance(groups, str):
                groups = [g.strip() for g in groups.split(",") if g.strip()]
            if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
                raise ScenarioError(
                    f"{where}.groups: got {quote(groups)}; accepted: a list of group names"
                )
            node = {"name": str(n["name"]), "kind": kind, "groups": list(groups)}
            checked = _node_set(n, where, classes)
            if checked:
                node["set"] = checked
            nodes.append(node)
    for kind, plural in (("host", "hosts"), ("switch", "switches")):
        if plural in section:
            names = section[plural]
            if not isinstance(names, list) or not all(isinstance(x, str | int) for x in names):
                raise ScenarioError(
                    f"{key}.{plural}: got {quote(names)}; accepted: a list of node names"
                )
            nodes.extend({"name": str(x), "kind": kind, "groups": []} for x in names)
    groups = section.get("groups")
    if groups is not None:
        if not isinstance(groups, dict):
            raise ScenarioError(
                f"{key}.groups: got {quote(groups)}; accepted: a mapping of group name to a "
                "list of node names"
            )
        by_name = {n["name"]: n for n in nodes}
        for group, members in groups.items():
            if not isinstance(members, list):
                raise ScenarioError(
                    f"{key}.groups.{group}: got {quote(members)}; accepted: a list of node names"
                )
            for m in members:
                if str(m) not in by_name:
                    raise ScenarioError(
                        f"{key}.groups.{group}: got {quote(m)}; accepted: names of nodes"
                    )
                by_name[str(m)]["groups"].append(str(group))
    seen: set[str] = set()
    for n in nodes:
        if n["name"] in seen:
            raise ScenarioError(f"{key}: node '{n['name']}' listed twice; accepted: each node once")
        seen.add(n["name"])
    if not nodes:
        raise ScenarioError(
            f"{key}: no nodes; accepted: nodes: (or hosts: and switches:) with the links"
        )
    return nodes


def _link_list(section: dict, key: str, nodes: list[dict], classes: Mapping[str, str]) -> list:
    raw = section.get("links")
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(
            f"{key}.links: got {quote(raw)}; accepted: a list of links, each {{a: h0, b: sw0}} "
            "with optional speed, length or delay, count and set"
        )
    names = {n["name"] for n in nodes}
    listed = name_list([n["name"] for n in nodes])
    links = []
    for i, item in enumerate(raw):
        where = _where(item, f"{key}.links[{i}]")
        if isinstance(item, str):
            parts = item.split()
            if len(parts) not in (2, 3):
                raise ScenarioError(
                    f"{where}: got {quote(item)}; accepted: 'A B [SPEED]' or {{a: A, b: B}}"
                )
            item = {"a": parts[0], "b": parts[1], **({"speed": parts[2]} if parts[2:] else {})}
        if not isinstance(item, dict):
            raise ScenarioError(f"{where}: got {quote(item)}; accepted: {{a: A, b: B, ...}}")
        # "where": the line a resolved config.yaml keeps for a link read from a file.
        extra = set(item) - {"a", "b", "speed", "length", "delay", "count", "set", "where"}
        if extra:
            raise ScenarioError(
                f"{where}: key '{sorted(extra)[0]}' does not exist; accepted: a, b, speed, "
                "length, delay, count, set"
            )
        link: dict[str, Any] = {}
        for end in ("a", "b"):
            v = item.get(end)
            if v is None or str(v) not in names:
                raise ScenarioError(
                    f"{where}.{end}: got {quote(v)}; accepted: the name of a node in nodes "
                    f"({listed})"
                )
            link[end] = str(v)
        if link["a"] == link["b"]:
            raise ScenarioError(f"{where}.b: got {quote(link['b'])}; accepted: a node other than a")
        if "speed" in item:
            if not isinstance(item["speed"], str) or not item["speed"].strip():
                raise ScenarioError(
                    f"{where}.speed: got {quote(item['speed'])}; accepted: a line rate such as "
                    "25GbE or 32GFC"
                )
            link["speed"] = item["speed"].strip()
        if "length" in item:
            v = item["length"]
            metres = length_metres(v)
            if metres is None or not 0 <= metres <= LINK_LENGTH_MAX:
                raise ScenarioError(
                    f"{where}.length: got {quote(v)}; accepted: {LENGTH_FORM}, at most 10000km"
                )
            link["length"] = v if isinstance(v, int | float) else _number(decimal_text(metres))
        if "delay" in item:
            link["delay"] = check_time(item["delay"], f"{where}.delay", example="1us")
        if "length" in link and "delay" in link:
            raise ScenarioError(f"{where}: both length and delay; accepted: one of them")
        count = item.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 1024:
            raise ScenarioError(
                f"{where}.count: got {quote(count)}; accepted: parallel cables, 1..1024"
            )
        sets = item.get("set", {})
        if not isinstance(sets, dict):
            raise ScenarioError(
                f"{where}.set: got {quote(sets)}; accepted: a mapping Class.Attribute: value "
                "for this cable's channel and ports"
            )
        checked = {}
        for k, v in sets.items():
            cls, _, attr = str(k).partition(".")
            if cls not in classes or not attr:
                raise ScenarioError(
                    f"{where}.set: key {quote(k)}; accepted: Class.Attribute with Class one of "
                    f"{', '.join(sorted(classes))}"
                )
            checked[f"{cls}.{attr}"] = attribute_text(classes[cls], attr, v, f"{where}.set.{k}")
        if checked:
            link["set"] = checked
        if getattr(item, "line", None) is not None:
            link["where"] = where  # read from a file: its line, for errors at build time
        for _ in range(count):
            links.append(dict(link))
    return links


def resolve_topology(
    raw: Any, classes: Mapping[str, str], base_dir: Path | None, key: str = "topology"
) -> dict:
    """The scenario's ``topology:`` -> its resolved form (generator and every attribute; a
    listed graph's nodes and links embedded)."""
    generators = _topologies()
    accepted = (
        f"a mapping with {GENERATOR}: one of {', '.join(generators)} and its attributes, or "
        "nodes: and links:, or file: a topology file"
    )
    if not isinstance(raw, dict):
        raise ScenarioError(f"{key}: got {quote(raw)}; accepted: {accepted}")
    section = dict(raw)
    graph: dict | None = None
    if "file" in section:
        f = section.pop("file")
        if not isinstance(f, str) or not f:
            raise ScenarioError(f"{key}.file: got {quote(f)}; accepted: a path to a file")
        path = Path(f)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        graph = _read_graph_file(path, f"{key}.file")
    elif "nodes" in section or "links" in section or "hosts" in section:
        graph = {
            k: section.pop(k)
            for k in ("nodes", "links", "hosts", "switches", "groups")
            if k in section
        }
    name = section.pop(GENERATOR, None)
    if graph is not None:
        if name not in (None, GRAPH):
            raise ScenarioError(
                f"{key}.{GENERATOR}: got {quote(name)} with a listed graph; accepted: no "
                "generator with nodes/links or file"
            )
        name = GRAPH
    if name is None:
        raise ScenarioError(f"{key}: no {GENERATOR}; accepted: {accepted}")
    if name not in generators:
        raise ScenarioError(
            f"{key}.{GENERATOR}: got {quote(name)}; accepted: one of {', '.join(generators)}"
        )
    if name == GRAPH and graph is None:
        raise ScenarioError(f"{key}: generator Graph without nodes and links; accepted: {accepted}")
    for k in list(section):
        if k in ("hosts", "switches", "groups"):
            raise ScenarioError(f"{key}.{k}: only with a listed graph; accepted: nodes: and links:")
    out: dict[str, Any] = {GENERATOR: name}
    out.update(_resolve_attributes(key, generators[name]["type_id"], section, f"generator {name}"))
    if graph is not None:
        nodes = _node_list(graph, key, classes)
        out["nodes"] = nodes
        out["links"] = _link_list(graph, key, nodes, classes)
    return out


def topology_core(resolved: dict, classes: Mapping[str, str]) -> dict:
    """The resolved topology -> ``_core.run``'s {"type_id", "attributes", "tables"}."""
    generators = _topologies()
    name = resolved[GENERATOR]
    attrs = {k: v for k, v in resolved.items() if k not in TOPOLOGY_KEYS}
    out: dict[str, Any] = {"type_id": generators[name]["type_id"], "attributes": attrs}
    if "nodes" in resolved:
        nodes = []
        for n in resolved["nodes"]:
            row = {"name": n["name"], "kind": n["kind"], "groups": ",".join(n.get("groups", []))}
            for k, v in n.get("set", {}).items():
                cls, _, attr = k.partition(".")
                row[f"{classes[cls]}::{attr}"] = str(v)
            nodes.append(row)
        links = []
        for i, link in enumerate(resolved["links"]):
            row = {
                "a": link["a"],
                "b": link["b"],
                "where": link.get("where", f"topology.links[{i}]"),
            }
            for k in ("speed", "length", "delay"):
                if k in link:
                    row[k] = str(link[k])
            for k, v in link.get("set", {}).items():
                cls, _, attr = k.partition(".")
                row[f"{classes[cls]}::{attr}"] = str(v)
            links.append(row)
        out["tables"] = {"nodes": nodes, "links": links}
    return out


# ---------------------------------------------------------------------------------------------
# Workloads


FLOW_FILES = (
    "a YAML list of flows, a CSV or Parquet table of flows (.csv, .parquet) or an HPCC flow.txt"
)


def _flow_file(f: Any, key: str, base_dir: Path | None, sha256: Any = None) -> list | dict:
    """A flow file -> its flows: a YAML list embedded (checked as inline flows), a table
    (CSV, Parquet, HPCC) checked and referred to by path and SHA-256."""
    if not isinstance(f, str) or not f:
        raise ScenarioError(f"{key}: got {quote(f)}; accepted: {FLOW_FILES}")
    path = Path(f)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise ScenarioError(f"{key}: file '{path}' does not exist; accepted: {FLOW_FILES}")
    if flows.is_table(path):
        return flows.resolve_file(path.resolve(), key, sha256)
    raw = read_yaml(path)
    if not isinstance(raw, list):
        raise ScenarioError(f"{path}: got {quote(raw)}; accepted: a YAML list of flows")
    return raw


_FLOW_KEYS = flows.FLOW_KEYS
_FLOW_INTS = flows.FLOW_INTS
_FLOW_KEYSET = frozenset((*_FLOW_KEYS, "where"))


def _flow_list(raw: Any, key: str) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(
            f"{key}: got {quote(raw)}; accepted: a list of flows, each {{src: h1, dst: h0, "
            "size: 65536, start: 1ms}} (size, start, messages, depth and priority optional)"
        )
    flows = []
    for i, f in enumerate(raw):
        flow = _plain_flow(f)
        if flow is None:
            flow = _flow(f, _where(f, f"{key}[{i}]"))
        elif type(f) is Located:
            flow["where"] = f"{f.source} line {f.line}, {key}[{i}]"
        flows.append(flow)
    return flows


def _plain_flow(f: Any) -> dict | None:
    """A flow as most are (a mapping of host names, integers and a time, each in range),
    checked in a few steps; None for anything else, which _flow checks and names. Lists of
    a million flows pass here."""
    if (type(f) is not Located and type(f) is not dict) or not f.keys() <= _FLOW_KEYSET:
        return None
    src, dst = f.get("src"), f.get("dst")
    if type(src) is not str or type(dst) is not str:
        return None
    flow = {"src": src, "dst": dst}
    for k, lo, hi in _FLOW_INTS:
        v = f.get(k)
        if v is not None:
            if type(v) is not int or not lo <= v <= hi:
                return None
            flow[k] = v
        elif k in f:
            return None
    start = f.get("start")
    if start is not None:
        seconds = time_seconds(start)
        if seconds is None or not 0 <= seconds <= TIME_MAX_S:
            return None
        flow["start"] = start.strip()
    elif "start" in f:
        return None
    return flow


def _flow(f: Any, where: str) -> dict:
    """One flow of any form (``'SRC>DST'``, host ids as integers), checked key by key."""
    if isinstance(f, str):
        a, sep, b = f.partition(">")
        if not sep:
            raise ScenarioError(f"{where}: got {quote(f)}; accepted: 'SRC>DST' or a mapping")
        f = {"src": a.strip(), "dst": b.strip()}
    if not isinstance(f, dict):
        raise ScenarioError(f"{where}: got {quote(f)}; accepted: {{src: h1, dst: h0, ...}}")
    extra = set(f) - _FLOW_KEYSET
    if extra:
        raise ScenarioError(
            f"{where}: key '{sorted(extra)[0]}' does not exist; accepted: {', '.join(_FLOW_KEYS)}"
        )
    flow: dict[str, Any] = {}
    for k in ("src", "dst"):
        if not isinstance(f.get(k), str | int):
            raise ScenarioError(f"{where}.{k}: got {quote(f.get(k))}; accepted: a host name")
        flow[k] = str(f[k])
    for k, lo, hi in _FLOW_INTS:
        if k in f:
            v = f[k]
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ScenarioError(
                    f"{where}.{k}: got {quote(v)}; accepted: an integer in {lo}..{hi}"
                )
            flow[k] = v
    if "start" in f:
        flow["start"] = check_time(f["start"], f"{where}.start")
    if getattr(f, "line", None) is not None:
        flow["where"] = where  # read from a file: its line, for errors at build time
    return flow


def resolve_workloads(raw: Any, fabric: str, base_dir: Path | None) -> dict[str, dict]:
    """The scenario's ``workload:`` -> name -> resolved item (pattern and every attribute; a flow
    list embedded)."""
    patterns = _patterns()
    form = (
        "a mapping of workload names to {pattern: NAME, ...attributes}, e.g. "
        "{incast: {pattern: Incast, Hosts: h1-h16, Destinations: h0}}"
    )
    if not isinstance(raw, dict) or not raw:
        raise ScenarioError(f"workload: got {quote(raw)}; accepted: {form}")
    out: dict[str, dict] = {}
    for name, item in raw.items():
        key = f"workload.{name}"
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise ScenarioError(
                f"workload: name {quote(name)} is not a name; accepted: letters, digits, '_', "
                "'-' and '.'"
            )
        if not isinstance(item, dict):
            raise ScenarioError(f"{key}: got {quote(item)}; accepted: {form}")
        item = dict(item)
        pattern = item.pop(PATTERN, None)
        if pattern not in patterns:
            raise ScenarioError(
                f"{key}.{PATTERN}: got {quote(pattern)}; accepted: one of {', '.join(patterns)}"
            )
        info = patterns[pattern]
        if info["fabrics"] and fabric not in info["fabrics"]:
            raise ScenarioError(
                f"{key}.{PATTERN}: got {quote(pattern)} with fabric {fabric}; accepted: fabric "
                f"{', '.join(info['fabrics'])} for this pattern"
            )
        listed = None
        if "file" in item:
            f = item.pop("file")
            if pattern != FLOWS:
                raise ScenarioError(
                    f"{key}.file: got {quote(f)}; accepted: a flow file with pattern Flows"
                )
            listed = _flow_file(f, f"{key}.file", base_dir)
        if "flows" in item:
            if pattern != FLOWS or listed is not None:
                raise ScenarioError(
                    f"{key}.flows: accepted only with pattern Flows, and not with file"
                )
            listed = item.pop("flows")
            if isinstance(listed, dict):  # {file: FLOWS.csv, sha256: HEX} (a resolved table)
                extra = set(listed) - {"file", "sha256", "count"}
                if extra or "file" not in listed:
                    raise ScenarioError(
                        f"{key}.flows: got {quote(listed)}; accepted: a list of flows or "
                        "{file: FILE} (a CSV, Parquet or HPCC flow table; sha256 optional)"
                    )
                sha = listed.get("sha256")
                listed = _flow_file(listed["file"], f"{key}.flows.file", base_dir, sha)
        flows_ = listed
        if isinstance(listed, list):
            flows_ = _flow_list(listed, f"{key}.flows")
        if pattern == FLOWS and flows_ is None:
            raise ScenarioError(
                f"{key}: pattern Flows without flows; accepted: flows: [{{src: h1, dst: h0}}, "
                "...] or file: FILE"
            )
        resolved: dict[str, Any] = {PATTERN: pattern}
        resolved.update(_resolve_attributes(key, info["type_id"], item, f"pattern {pattern}"))
        _resolve_size_cdf(resolved, base_dir)
        if flows_ is not None:
            resolved["flows"] = flows_
        out[name] = resolved
    return out


SIZE_CDF = "SizeCdf"


def _resolve_size_cdf(item: dict, base_dir: Path | None) -> None:
    """A ``SizeCdf`` that names a file (it has a '/' or a '.', unlike the built-in websearch and
    hadoop) is read from the scenario's directory, as topology and flow files are: the resolved
    form keeps its absolute path."""
    value = item.get(SIZE_CDF)
    if not value or base_dir is None or not any(c in value for c in "/."):
        return
    path = Path(value)
    if not path.is_absolute() and (base_dir / path).is_file():
        item[SIZE_CDF] = str((base_dir / path).resolve())


def workloads_core(resolved: dict[str, dict]) -> list[dict]:
    patterns = _patterns()
    out = []
    for name, item in resolved.items():
        attrs = {k: v for k, v in item.items() if k not in WORKLOAD_KEYS}
        entry: dict[str, Any] = {
            "name": name,
            "type_id": patterns[item[PATTERN]]["type_id"],
            "attributes": attrs,
        }
        listed = item.get("flows")
        if isinstance(listed, dict):  # a table read from its file when the run is built
            key = f"workload.{name}.flows"
            table = flows.read_table(Path(listed["file"]), key, listed["sha256"])
            entry["tables"] = {"flows": table.core_rows(key)}
        elif listed is not None:
            entry["tables"] = {"flows": [{k: str(v) for k, v in f.items()} for f in listed]}
        out.append(entry)
    return out


# ---------------------------------------------------------------------------------------------
# Modes and overrides


def _same_shape(base: dict, mode: dict, key: str) -> bool:
    """Whether a mode's section refines the base's (merged attribute by attribute) rather than
    replacing it (another generator or pattern, or another graph)."""
    for k in (key, "file", "nodes", "links", "hosts"):
        if k in mode and mode.get(k) != base.get(k):
            return False
    return True


def merge_topology(base: Any, mode: Any) -> Any:
    if isinstance(base, dict) and isinstance(mode, dict) and _same_shape(base, mode, GENERATOR):
        return {**base, **mode}
    return copy.deepcopy(mode)


def merge_workloads(base: Any, mode: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(mode, dict):
        return copy.deepcopy(mode)
    out = dict(base)
    for name, item in mode.items():
        if item is None:
            out.pop(name, None)  # a mode removes a workload with `name: null`
        elif (
            isinstance(out.get(name), dict)
            and isinstance(item, dict)
            and _same_shape(out[name], item, PATTERN)
        ):
            out[name] = {**out[name], **item}
        else:
            out[name] = copy.deepcopy(item)
    return out


def apply_override(raw: dict, key: str, value: Any) -> None:
    """``topology.Attr`` or ``workload.NAME.Attr`` set in the raw scenario."""
    part, _, rest = key.partition(".")
    if part == "topology":
        if not rest or "." in rest:
            raise ScenarioError(f"{key}: accepted: topology.Attribute, e.g. topology.Leaves")
        section = raw.get("topology")
        if not isinstance(section, dict):
            raise ScenarioError(f"{key}: the scenario has no topology; accepted: a topology")
        raw["topology"] = {**section, rest: value}
        return
    name, _, attr = rest.partition(".")
    section = raw.get("workload")
    if not name or not attr or "." in attr:
        raise ScenarioError(f"{key}: accepted: workload.NAME.Attribute, e.g. workload.incast.Load")
    if not isinstance(section, dict) or name not in section or not isinstance(section[name], dict):
        names = ", ".join(section) if isinstance(section, dict) else "(none)"
        raise ScenarioError(f"{key}: workload '{name}' does not exist; accepted: one of {names}")
    raw["workload"] = {**section, name: {**section[name], attr: value}}
