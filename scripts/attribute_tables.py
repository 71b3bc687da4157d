"""Regenerates the attribute tables of docs/scenarios.md from the ns-3 TypeIds, so the reference
never drifts from the code. Each table sits between two markers, <!-- attributes:NAME --> and
<!-- /attributes:NAME -->, where NAME is

- ``topology``: ns3::Topology (the attributes every generator takes) and each registered
  generator (``_core.topologies()``) with its own attributes;
- ``workload``: ns3::Workload, ns3::MessageWorkload and each registered pattern
  (``_core.workloads()``) with its own attributes and the fabrics it is tied to;
- ``report``: the classes every open fabric shares (ns3::Report);
- ``stacks``: each registered storage stack (a value of StorageWorkload.Stack), its class, the
  ancestors with attributes of their own (once) and the classes it brings (once);
- a fabric's name: the classes of that fabric (``_core.fabrics()``).

A generator or pattern also takes the attributes of its ancestors (``_core.parents``); its
entry names them, and each ancestor that is not documented elsewhere in the same block gets its
rows inline, marked with the class they come from. A marker without a block in the file, or a
block without a marker, is an error of ``--check``.

The documentation site (``make docs``) takes its attribute reference from here too, one page per
class as ns-3's own attribute documentation has (``class_pages``, read by scripts/docs_hooks.py).

Run: .venv/bin/python scripts/attribute_tables.py [--check]"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import lfsim._core as core
import lfsim.core as lfsim_core
from lfsim.core import SHARED_CLASSES
from lfsim.values import UNIT_ATTRIBUTES

README = Path(__file__).resolve().parents[1] / "docs" / "scenarios.md"
INT_MAX = {"uint8_t": 255, "uint16_t": 65535, "uint32_t": 2**32 - 1, "uint64_t": 2**64 - 1}
HEADER = ["| attribute | default | accepted | meaning |", "|---|---|---|---|"]


# Values the scenario loader reads with units the attribute itself does not parse (values.py).
UNIT_NOTES = {
    "length": " (metres), or with a unit: 50km, 300m, 75cm",
    "fio_size": ", or with fio's suffix: 4k, 1m (x 1024), 4kib (x 1000)",
    "fio_time": "; as fio: a bare number is {bare}, units us, ms, s, m, h, d too",
    "fio_jobs": "; fio's units in bs, size, thinktime, thinktime_spin",
}


def accepted(a: dict, type_id: str = "") -> str:
    kind = UNIT_ATTRIBUTES.get((type_id, a["name"]))
    if kind is None:
        return _accepted(a, type_id)
    bare = "seconds" if kind[1] == "s" else "microseconds"
    return _accepted(a, type_id) + UNIT_NOTES[kind[0]].format(bare=bare)


def _accepted(a: dict, type_id: str = "") -> str:
    t = a["value_type"].removeprefix("ns3::")
    info = a["info"]
    if t == "TypeIdValue" and type_id:
        # A class chosen by name (e.g. RdmaNic.CongestionControl): the registered names.
        phrase = core.check_value(type_id, a["name"], "") or info
        return phrase.removeprefix("one of ")
    if t == "EnumValue":
        return ", ".join(info.split("|"))
    if t == "BooleanValue":
        return "true, false"
    if t == "TimeValue":
        return "time with unit, >= 0" if "+0" in info.split(":")[0] else "time with unit, > 0"
    if t == "StringValue":
        return "text"
    m = re.fullmatch(r"(\w+) ([-+\d.e]+):([-+\d.e]+)", info)
    if m and t in ("UintegerValue", "IntegerValue"):
        lo, hi = int(m.group(2)), int(m.group(3))
        return f"integer >= {lo}" if hi == INT_MAX.get(m.group(1)) else f"integer {lo}..{hi}"
    if m and t == "DoubleValue":
        return f"number {float(m.group(2)):g}..{float(m.group(3)):g}"
    return info


def short(type_id: str) -> str:
    return type_id.removeprefix("ns3::")


def rows(type_id: str, origin: str = "") -> list[str]:
    """One table row per attribute of the TypeId itself (``origin``: the class named after the
    meaning of an inherited row)."""
    out = []
    for a in core.attributes(type_id):
        help_ = " ".join(a["help"].split()).replace("|", "\\|")
        if origin:
            help_ += f" (from {origin})"
        default = f"`{a['default']}`" if str(a["default"]) else "(empty)"
        out.append(f"| {a['name']} | {default} | {accepted(a, type_id)} | {help_} |")
    return out


def parts_note(type_id: str) -> list[str]:
    """A class built of parts (lfsim::RegisterParts: RoceSwitch of SwitchMmu, ...): which part
    declares which of the attributes listed under the class, and the name C++ gives them."""
    parts: dict[str, list[str]] = {}
    for a in core.attributes(type_id):
        owner = a.get("declared_by", type_id)
        if owner != type_id:
            parts.setdefault(owner, []).append(a["name"])
    if not parts:
        return []
    listed = "; ".join(f"{short(p)}: {', '.join(names)}" for p, names in parts.items())
    first = next(iter(parts))
    return [
        f"{short(type_id)} is built of parts, each declaring its own attributes ({listed}). "
        f"Scenarios, `--set` and Python set them as {short(type_id)}'s, as listed here; C++ "
        f"`Config::SetDefault` names the part that declares them (`{first}::"
        f"{parts[first][0]}`).",
        "",
    ]


def presets(type_id: str) -> list[str]:
    found = core.presets(type_id)
    if not found:
        return []
    names = [p["name"] for p in found]
    out = [
        f"| Preset | (none) | {', '.join(names)} | sets the values below; values given "
        "explicitly win |",
        "",
        f"Presets of {short(type_id)}:",
        "",
        "| attribute | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    values: dict[str, dict[str, str]] = {}
    for p in found:
        for tid, attr, value in p["values"]:
            values.setdefault(f"{short(tid)}.{attr}", {})[p["name"]] = value
    for key, by_preset in values.items():
        out.append(f"| {key} | " + " | ".join(f"`{by_preset.get(n, '')}`" for n in names) + " |")
    return out


def bold(type_id: str) -> str:
    return f"**{short(type_id)}**"


def class_table(
    type_id: str, title: str, documented: set[str] = frozenset(), ref=bold
) -> list[str]:
    """A class's table: its own attributes, then those of ancestors not in ``documented``;
    ancestors that are documented are named (``ref``: how) in a line above the table instead."""
    parents = core.parents(type_id)
    table = rows(type_id) + presets(type_id)
    table += [r for p in parents if p not in documented for r in rows(p, short(p))]
    refs = " and ".join(ref(p) for p in parents if p in documented)
    out = [title, ""]
    if refs and table:
        out += [f"Takes the attributes of {refs}, and:", ""]
    elif refs:
        out += [f"Takes the attributes of {refs}; none of its own.", ""]
    elif not table:
        out += ["No attributes.", ""]
    if table:
        out += [*HEADER, *table, ""]
    return out


def topology_block() -> str:
    base = "ns3::Topology"
    out = class_table(base, f"**{short(base)}**: the attributes of every generator")
    for t in core.topologies():
        title = f"**{t['name']}** (`generator: {t['name']}`, {t['type_id']}): {t['description']}"
        out += class_table(t["type_id"], title, {base})
    return "\n".join(out)


def workload_block() -> str:
    bases = ["ns3::Workload", "ns3::MessageWorkload", "ns3::StorageWorkload"]
    patterns = core.workloads()
    out = class_table(bases[0], f"**{short(bases[0])}**: the attributes of every pattern")
    for base, what in ((bases[1], "of messages"), (bases[2], "of storage I/O")):
        users = [w["name"] for w in patterns if base in core.parents(w["type_id"])]
        out += class_table(
            base,
            f"**{short(base)}**: the attributes of the patterns {what} ({', '.join(users)})",
            {bases[0]},
        )
    for w in patterns:
        where = f"fabric {', '.join(w['fabrics'])} only" if w["fabrics"] else "every open fabric"
        # The description of a tied pattern starts with "FC only: ", which `where` says.
        about = re.sub(r"^\w+ only: ", "", w["description"]) if w["fabrics"] else w["description"]
        title = f"**{w['name']}** (`pattern: {w['name']}`, {w['type_id']}; {where}): {about}"
        out += class_table(w["type_id"], title, set(bases))
        for tid in w.get("classes", []):
            out += class_table(
                tid, f"**{short(tid)}** (a section of a scenario with a {w['name']} workload)"
            )
    return "\n".join(out)


STACK = ("ns3::StorageWorkload", "Stack")


def stacks() -> list[dict]:
    """The registered storage stacks, each with ``classes``: the scenario sections it brings
    (its class's ancestors with attributes of their own, its class, those it registered)."""
    return list(lfsim_core.choices(*STACK).values())


def stack_users() -> dict[str, list[str]]:
    """Class -> the stacks that bring it."""
    users: dict[str, list[str]] = {}
    for s in stacks():
        for tid in s["classes"]:
            users.setdefault(tid, []).append(s["name"])
    return users


def stack_block() -> str:
    users = stack_users()
    documented: set[str] = set()
    out = []
    for s in stacks():
        title = (
            f"**{s['name']}** (`Stack: {s['name']}`, {s['type_id']}; fabric "
            f"{', '.join(s['fabrics'])}): {s['description']}. Its sections: "
            + ", ".join(f"`{short(t)}`" for t in s["classes"])
        )
        out += [title, ""]
        for tid in s["classes"]:
            if tid in documented:
                continue
            documented.add(tid)
            with_ = " or ".join(f"`{u}`" for u in users[tid])
            out += class_table(tid, f"**{short(tid)}** (with Stack {with_})", documented)
    return "\n".join(out)


def report_block() -> str:
    out = []
    for tid in SHARED_CLASSES:
        out += class_table(tid, f"**{short(tid)}**")
    return "\n".join(out)


def fabrics() -> dict[str, dict]:
    return {f["name"]: f for f in core.fabrics()}


def fabric_block(fabric: str) -> str:
    info = fabrics()[fabric]
    out = []
    for tid in info["type_ids"]:
        out += [f"**{short(tid)}**", "", *parts_note(tid), *HEADER, *rows(tid), *presets(tid), ""]
    if info.get("open"):
        shared = ", ".join(f"`{short(t)}`" for t in SHARED_CLASSES)
        out += [
            f"The fabric also takes the classes every open fabric shares ({shared}), a "
            "`topology:` and a `workload:` (above).",
            "",
        ]
    return "\n".join(out)


def blocks() -> dict[str, str]:
    out = {
        "topology": topology_block(),
        "workload": workload_block(),
        "stacks": stack_block(),
        "report": report_block(),
    }
    for fabric in fabrics():
        out[fabric] = fabric_block(fabric)
    return out


# ---------------------------------------------------------------------------------------------
# The site's attribute reference: one page per class.


def class_groups() -> list[tuple[str, list[tuple[str, str]]]]:
    """(group, [(TypeId, what it is)]) for every class a scenario can configure, grouped as
    docs/scenarios.md groups its tables: topology, workload, report, then each fabric."""
    topo = [("ns3::Topology", "the attributes of every topology generator")]
    topo += [
        (t["type_id"], f"`generator: {t['name']}`: {t['description']}") for t in core.topologies()
    ]
    work = [
        ("ns3::Workload", "the attributes of every workload pattern"),
        ("ns3::MessageWorkload", "the attributes of the patterns of messages"),
        ("ns3::StorageWorkload", "the attributes of the patterns of storage I/O"),
    ]
    for w in core.workloads():
        where = f" (fabric {', '.join(w['fabrics'])} only)" if w["fabrics"] else ""
        work.append((w["type_id"], f"`pattern: {w['name']}`{where}: {w['description']}"))
        work += [
            (c, f"a section of a scenario with a {w['name']} workload")
            for c in w.get("classes", [])
        ]
    users = stack_users()
    stack_classes = [
        (t, f"a section of a scenario whose Fio workload has Stack {' or '.join(u)}")
        for t, u in users.items()
    ]
    groups = [("Topology", topo), ("Workload", work), ("Storage stacks", stack_classes)]
    groups.append(("Report", [(t, "shared by every open fabric") for t in SHARED_CLASSES]))
    for name, info in fabrics().items():
        groups.append(
            (
                fabric_title(name, info["description"]),
                [(t, info["description"]) for t in info["type_ids"]],
            )
        )
    return groups


def fabric_title(name: str, description: str) -> str:
    """A fabric's heading: what it is in a few words (its description up to the first colon,
    comma or parenthesis), then the name a scenario gives it (`fabric: NAME`)."""
    head = re.split(r"[:,(]", description, maxsplit=1)[0].strip()
    return f"{head} (fabric {name})"


def how_to_set(type_id: str, attr: str) -> str:
    """One sentence: where a class's attributes go in a scenario and on the command line."""
    name = short(type_id)
    generators = {t["type_id"]: t["name"] for t in core.topologies()}
    patterns = {w["type_id"]: w["name"] for w in core.workloads()}
    if type_id == "ns3::Topology" or type_id in generators:
        where = f"`topology: {{generator: {generators.get(type_id, 'NAME')}, {attr}: ...}}`"
        return f"Set in a scenario as {where}, on the command line as `--set topology.{attr}=V`."
    if type_id in ("ns3::Workload", "ns3::MessageWorkload", "ns3::StorageWorkload") or (
        type_id in patterns
    ):
        item = f"{{pattern: {patterns.get(type_id, 'NAME')}, {attr}: ...}}"
        return (
            f"Set in a workload item, `workload: {{ITEM: {item}}}`, on the command line as "
            f"`--set workload.ITEM.{attr}=V`."
        )
    return (
        f"Set in a scenario as `{name}: {{{attr}: ...}}`, on the command line as "
        f"`--set {name}.{attr}=V`."
    )


def class_pages() -> dict[str, str]:
    """Short class name -> its Markdown page (title, where it is used, how to set it, the table of
    its attributes and presets; ancestors link to their own pages)."""
    used: dict[str, list[tuple[str, str]]] = {}
    for group, members in class_groups():
        for tid, about in members:
            used.setdefault(tid, []).append((group, about))
    pages = {}
    for tid, where in used.items():
        name = short(tid)
        lines = [f"# {name}", "", f"`{tid}`", ""]
        lines += [f"- **{group}**: {about}" for group, about in where]
        attrs = core.attributes(tid)
        if attrs:
            lines += ["", how_to_set(tid, attrs[0]["name"])]
        lines.append("")
        lines += parts_note(tid)
        table = class_table(
            tid, "## Attributes", set(used), lambda p: f"[{short(p)}]({short(p)}.md)"
        )
        pages[name] = "\n".join(lines + table)
    return pages


def reference_index() -> str:
    """The reference's first page: every class, grouped, with what it is."""
    lines = [
        "# Attribute reference",
        "",
        "One page per ns-3 class a scenario can configure, generated from the classes' TypeIds "
        "by `scripts/attribute_tables.py` when the site is built, so it is always the code's. "
        "Each attribute has the same name in YAML, on the command line (`--set "
        "Class.Attribute=VALUE`), in Python and in C++. How a scenario is written: "
        "[the scenario reference](../scenarios.md).",
        "",
    ]
    for group, members in class_groups():
        lines += [f"## {group}", "", "| class | what it is |", "|---|---|"]
        for tid, about in members:
            about = about.replace("|", "\\|")
            lines.append(f"| [{short(tid)}]({short(tid)}.md) | {about} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    text = README.read_text()
    new = text
    missing = []
    for name, block in blocks().items():
        pat = re.compile(rf"(<!-- attributes:{name} -->\n).*?(<!-- /attributes:{name} -->)", re.S)
        if not pat.search(new):
            missing.append(name)
            continue
        new = pat.sub(lambda m, b=block: m.group(1) + b + m.group(2), new)
    unknown = sorted(set(re.findall(r"<!-- attributes:([\w-]+) -->", text)) - set(blocks()))
    if "--check" in sys.argv:
        problems = []
        if new != text:
            problems.append("the attribute tables are out of date: run scripts/attribute_tables.py")
        if unknown:
            problems.append(f"markers of no class group: {', '.join(unknown)}")
        for p in problems:
            print(f"docs/scenarios.md: {p}")
        return 1 if problems else 0
    README.write_text(new)
    if missing:
        # A fabric without a table (iscsi_burst) is allowed; say so rather than fail.
        print(f"docs/scenarios.md has no markers for: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
