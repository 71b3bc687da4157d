"""Access to the compiled extension ``lfsim._core``, imported on first use so that pure-Python
parts (``lfsim list``, ``--help``, unit tests) work before the C++ side is built."""

import importlib
from functools import cache
from types import ModuleType

from .errors import CoreUnavailable


@cache
def core() -> ModuleType:
    try:
        return importlib.import_module("lfsim._core")
    except ImportError as exc:
        raise CoreUnavailable(
            f"the C++ extension lfsim._core is not available ({exc}); build it with "
            "scripts/bootstrap.sh"
        ) from None


@cache
def fabrics() -> dict[str, dict]:
    """Fabric name -> description dict from ``_core.fabrics()``."""
    return {f["name"]: f for f in core().fabrics()}


@cache
def attributes(type_id: str) -> tuple[dict, ...]:
    return tuple(core().attributes(type_id))


def instance_attributes(type_id: str) -> tuple[dict, ...]:
    """The attributes an instance of ``type_id`` takes: its ancestors' (below ns3::Object), then
    its own."""
    return tuple(a for t in [*core().parents(type_id), type_id] for a in attributes(t))


@cache
def presets(type_id: str) -> dict[str, dict]:
    """Preset name -> {"description", "values": [(TypeId, attribute, value), ...]}."""
    return {p["name"]: p for p in core().presets(type_id)}


def check_value(type_id: str, attribute: str, value: str) -> str | None:
    return core().check_value(type_id, attribute, value)


def short_name(type_id: str) -> str:
    return type_id.rsplit("::", 1)[-1]


# Classes every fabric built on the shared topology, workload and report parts also takes: the
# report's, and those of the Fio workload (its jobs' global options, its targets' device), which
# runs on every such fabric and keeps them when a mode switches the fabric.
SHARED_CLASSES = ("ns3::Report",)


def is_open(fabric: str) -> bool:
    """Whether the fabric builds on the shared topology, workloads and report."""
    return bool(fabrics()[fabric].get("open", False))


@cache
def patterns() -> dict[str, dict]:
    """Workload pattern name -> {"type_id", "description", "fabrics", "classes"}."""
    return {w["name"]: w for w in core().workloads()}


def pattern_classes() -> tuple[str, ...]:
    """Every class some workload pattern lets a scenario configure (e.g. FioJob)."""
    out: list[str] = []
    for w in patterns().values():
        out += [c for c in w.get("classes", []) if c not in out]
    return tuple(out)


@cache
def choices(type_id: str, attribute: str) -> dict[str, dict]:
    """For an attribute that picks an implementation by name (RdmaNic.CongestionControl,
    StorageWorkload.Stack): name -> {"type_id", "description", "fabrics", "classes"}, where
    ``classes`` are the classes a scenario may configure when an instance picks it: the
    implementation's own and its ancestors' that have attributes, then those it registered."""
    out = {}
    for c in core().choices(type_id, attribute):
        tid = c["type_id"]
        own = [t for t in [*core().parents(tid), tid] if attributes(t)]
        out[c["name"]] = {**c, "classes": tuple(dict.fromkeys([*own, *c["classes"]]))}
    return out


def _chosen_classes(type_id: str, item: dict) -> list[str]:
    """The classes the implementations an instance of ``type_id`` picks bring (its attributes
    with registered choices, as given in ``item`` or by default)."""
    out: list[str] = []
    for a in instance_attributes(type_id):
        picks = choices(type_id, a["name"]) if a["value_type"].endswith("TypeIdValue") else {}
        chosen = picks.get(str(item.get(a["name"], a["default"]))) if picks else None
        if chosen:
            out += [c for c in chosen["classes"] if c not in out]
    return out


def chosen_by(short_class: str) -> list[str]:
    """The choices that bring a class (e.g. ["Stack iscsi", "Stack nvmeof_tcp"] for
    RoceHostIp): for errors about a section that the scenario's choices do not offer."""
    out: list[str] = []
    for p in patterns().values():
        for a in instance_attributes(p["type_id"]):
            if not a["value_type"].endswith("TypeIdValue"):
                continue
            for name, c in choices(p["type_id"], a["name"]).items():
                pick = f"{a['name']} {name}"  # patterns sharing a parent's attribute: once
                if any(short_name(t) == short_class for t in c["classes"]) and pick not in out:
                    out.append(pick)
    return out


def fabric_classes(fabric: str, workload: object = None) -> dict[str, str]:
    """Short class name (YAML key) -> full TypeId name, in the fabric's order; for a fabric built
    on the shared parts, then the shared classes, the classes of the patterns `workload`
    (a scenario's workload: mapping) uses, and those of the implementations its items pick (a
    Fio workload's Stack)."""
    ids = list(fabrics()[fabric]["type_ids"])
    if is_open(fabric):
        ids += [t for t in SHARED_CLASSES if t not in ids]
        items = workload.values() if isinstance(workload, dict) else ()
        for item in items:
            name = item.get("pattern") if isinstance(item, dict) else None
            pattern = patterns().get(name, {}) if isinstance(name, str) else {}
            extra = list(pattern.get("classes", []))
            if pattern:
                extra += _chosen_classes(pattern["type_id"], item)
            ids += [c for c in dict.fromkeys(extra) if c not in ids]
    return {short_name(t): t for t in ids}


@cache
def schedulers() -> tuple[str, ...]:
    """The ns-3 event schedulers (TypeId names) a scenario's SchedulerType may name."""
    return tuple(core().schedulers())


def default_scheduler() -> str:
    return str(core().DEFAULT_SCHEDULER)
