"""Scenario files: loading, validation and resolution into the configuration handed to C++.

Everything here runs before a simulation starts or a file is written, so that bad input ends
in one ``ScenarioError`` line and nothing else.
"""

from __future__ import annotations

import copy
import enum
import json
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

from . import core as _core
from . import parts
from .errors import OVERRIDES_ACCEPTED, ScenarioError, mapping_arg, quote
from .hpcc_check import resolve as resolve_hpcc_output
from .paths import scenarios_dir

# The bottom layer's names, kept importable from here (display, animate, the CLI, traces).
from .values import (  # noqa: F401
    NAME_RE,
    TIME_MAX_S,
    attribute_text,
    check_time,
    split_time,
    time_form,
    time_seconds,
    to_core_string,
    unit_seconds,
)
from .yamlio import MAX_DEPTH, MAX_VALUES, Located, check_size, copy_data, paused_gc, read_yaml  # noqa: F401

# ---------------------------------------------------------------------------------------------
# The fixed top-level part: each key's check (_Fixed), then one optional mapping per class.
# Messages come from ACCEPTED, so that each error names the key and the accepted form in one
# line. (It was a pydantic model: importing pydantic and building the model cost a quarter of a
# short run's start-up. The checks are those the model made, in its order: fields first, in
# the order below, then unknown keys in the scenario's order; test_fixed_part compares.)

TOP_LEVEL = (
    "description",
    "fabric",
    "mode",
    "modes",
    "seed",
    "stop_time",
    "sample_interval",
    "record",
    "stop_on_deadlock",
    "SchedulerType",
    "name",
    "topology",
    "workload",
    "calibrated",
    "faults",
    "hpcc_output",
)
# Top-level keys that --set / overrides / --grid may change (fabric and description may not).
OVERRIDABLE = tuple(
    k
    for k in TOP_LEVEL
    if k not in ("description", "fabric", "modes", "topology", "workload", "calibrated")
)
# Top-level keys a mode may set (besides class sections); they replace the base scenario's.
MODE_KEYS = tuple(k for k in TOP_LEVEL if k not in ("mode", "modes"))
# ns-3's MRG32k3a takes a seed below its second modulus, m2 = 4294944443 (rng-stream.cc
# CheckSeed aborts on any larger one).
SEED_MAX = 4294944442
MAX_SAMPLES = 10_000_000
FAULT_KEYS = {
    "at", "what", "where", "until", "period", "count", "every", "probability", "rate", "size",
}  # fmt: skip
_NAME_RE = NAME_RE
HPCC_OUTPUT_KEYS = ("fct", "pfc", "flow_file")
_OUT_PART_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _hpcc_output_name(name: str) -> bool:
    """A file name inside the output folder that none of lfsim's own files has: relative,
    plain parts (no '..', no hidden part), ending in .txt."""
    parts_ = name.split("/")
    return name.endswith(".txt") and all(_OUT_PART_RE.fullmatch(p) for p in parts_)


_POINT_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*:\S.*")

ACCEPTED = {
    "description": "one line of text",
    "seed": f"an integer in 1..{SEED_MAX}",
    "stop_time": time_form("> 0", "2ms"),
    "sample_interval": (
        f"{time_form('>= 0', '1us')}, or 0s to record on change; at least stop_time / "
        f"{MAX_SAMPLES:,} (one series holds at most {MAX_SAMPLES:,} samples)"
    ),
    "stop_on_deadlock": "true or false",
    "SchedulerType": (
        "the TypeId of an ns-3 event scheduler, e.g. ns3::LfsimScheduler (the default), "
        "ns3::PriorityQueueScheduler, ns3::CalendarScheduler, ns3::HeapScheduler, ns3::MapScheduler"
    ),
    "name": "a name of letters, digits, '_', '-' and '.'",
    "faults": (
        "a list of {at, what, where, ...}: what one of link_down, link_up, link_flap (period, "
        "count), drop (every or probability), ber (rate), lose_r_rdy (every) with where a link "
        "A-B, or node_down, node_up, pfc_storm, receiver_not_ready, buffer (size) with where "
        "a node; optional until; e.g. "
        "[{at: 1ms, what: link_down, where: sw0-h1, until: 2ms}]"
    ),
    "hpcc_output": (
        "true (fct.txt and pfc.txt), or a mapping with fct and/or pfc, each a file name ending "
        "in .txt inside the run's output folder (subfolders allowed, e.g. mix/fct.txt), and "
        "optionally flow_file, the HPCC flow.txt of the flows (fct.txt takes its DPORT column); "
        "e.g. {fct: fct.txt, pfc: pfc.txt}"
    ),
    "calibrated": (
        "a mapping of parameter (Class.Attribute, workload.ITEM.Attribute or "
        "topology.Attribute) to the measured point it was calibrated on, '<data file>:<row>' "
        "(or a list of them)"
    ),
}


class _Fixed:
    """The checks of the fixed keys: each takes the value given and returns the value to use,
    or raises ValueError (the key's ACCEPTED message is given then)."""

    @staticmethod
    def _hpcc_output(v: Any) -> dict[str, str] | None:
        if isinstance(v, str):  # from --set: YAML flow text, or true / false
            try:
                v = yaml.safe_load(v)
            except yaml.YAMLError:
                raise ValueError("hpcc_output") from None
        if v is None or v is False:
            return None
        if v is True:
            return {"fct": "fct.txt", "pfc": "pfc.txt"}
        if not isinstance(v, dict) or not v or not set(v) <= set(HPCC_OUTPUT_KEYS):
            raise ValueError("hpcc_output")
        out = {}
        for key, value in v.items():
            if not isinstance(value, str) or not value.strip():
                raise ValueError("hpcc_output")
            value = value.strip()
            if key != "flow_file" and not _hpcc_output_name(value):
                raise ValueError("hpcc_output")
            out[key] = value
        if not {"fct", "pfc"} & set(out) or out.get("fct") == out.get("pfc"):
            raise ValueError("hpcc_output")
        return out

    @staticmethod
    def _faults(v: Any) -> list[dict[str, str]]:
        if isinstance(v, str):  # from --set: YAML flow text
            try:
                v = yaml.safe_load(v)
            except yaml.YAMLError:
                raise ValueError("faults") from None
        if v is None:
            return []
        if not isinstance(v, list):
            raise ValueError("faults")
        out = []
        for item in v:
            if not isinstance(item, dict) or not set(item) <= FAULT_KEYS:
                raise ValueError("faults")
            entry = {str(k): to_core_string(x) for k, x in item.items()}
            if any(x is None for x in entry.values()):
                raise ValueError("faults")
            for key in ("at", "until", "period"):
                if key in entry:
                    t = time_seconds(entry[key])
                    if t is None or not 0 <= t <= TIME_MAX_S:
                        raise ValueError("faults")
            out.append(entry)
        return out

    @staticmethod
    def _calibrated(v: Any) -> dict[str, list[str]]:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise ValueError("calibrated")
        out = {}
        for key, points in v.items():
            points = [points] if isinstance(points, str) else points
            if (
                not isinstance(key, str)
                or not isinstance(points, list)
                or not points
                or not all(isinstance(p, str) and _POINT_RE.fullmatch(p.strip()) for p in points)
            ):
                raise ValueError("calibrated")
            out[key.strip()] = [p.strip() for p in points]
        return out

    @staticmethod
    def _description(v: Any) -> str:
        if v is None:
            return ""
        if not isinstance(v, str) or "\n" in v.strip():
            raise ValueError("description")
        return v.strip()

    @staticmethod
    def _seed(v: Any) -> int:
        if isinstance(v, str) and re.fullmatch(r"[0-9]+", v.strip()):  # ASCII digits only
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= v <= SEED_MAX:
            raise ValueError("seed")
        return int(v)

    @staticmethod
    def _stop_time(v: Any) -> str:
        seconds = time_seconds(v)
        if seconds is None or not 0 < seconds <= TIME_MAX_S:
            raise ValueError("stop_time")
        return v.strip()

    @staticmethod
    def _sample_interval(v: Any) -> str:
        seconds = time_seconds(v)
        if seconds is None or not 0 <= seconds <= TIME_MAX_S:
            raise ValueError("sample_interval")
        return v.strip()

    @staticmethod
    def _record(v: Any) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):  # "a,b" from --set or a one-name shorthand in YAML
            return [p.strip() for p in v.split(",") if p.strip()]
        if isinstance(v, list) and all(isinstance(p, str) for p in v):
            return [p.strip() for p in v]
        raise ValueError("record")

    @staticmethod
    def _stop_on_deadlock(v: Any) -> bool:
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            return v.strip().lower() == "true"
        if not isinstance(v, bool):
            raise ValueError("stop_on_deadlock")
        return v

    @staticmethod
    def _scheduler_type(v: Any) -> str | None:
        if v is None:
            return None
        if not isinstance(v, str) or v.strip() not in _core.schedulers():
            raise ValueError("SchedulerType")
        return v.strip()

    @staticmethod
    def _name(v: Any) -> str | None:
        if v is None:
            return None
        if not isinstance(v, str) or not _NAME_RE.fullmatch(v):
            raise ValueError("name")
        return v


_NO_DEFAULT = object()
# Key, default (_NO_DEFAULT: required), check (None: any value).
_FIELDS = (
    ("description", "", _Fixed._description),
    ("fabric", _NO_DEFAULT, None),  # checked before (_check_fabric)
    ("seed", 1, _Fixed._seed),
    ("stop_time", _NO_DEFAULT, _Fixed._stop_time),
    ("sample_interval", "0s", _Fixed._sample_interval),
    ("record", [], _Fixed._record),
    ("stop_on_deadlock", False, _Fixed._stop_on_deadlock),
    ("SchedulerType", None, _Fixed._scheduler_type),
    ("name", None, _Fixed._name),
    ("topology", None, None),
    ("workload", None, None),
    ("calibrated", {}, _Fixed._calibrated),
    ("faults", [], _Fixed._faults),
    ("hpcc_output", None, _Fixed._hpcc_output),
)


class _Invalid(Exception):
    """The first key that failed: ``kind`` is "missing", "unknown" or "invalid"."""

    def __init__(self, key: str, kind: str):
        super().__init__(key)
        self.key, self.kind = key, kind


def _lax_str(key: Any) -> str:
    """A mapping key as a string, as pydantic's (lax) str took it: a str, an enum's str value,
    or UTF-8 bytes."""
    if isinstance(key, enum.Enum):
        key = key.value
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, bytes | bytearray):
        return bytes(key).decode("utf-8")  # UnicodeDecodeError is a ValueError
    raise ValueError(key)


def _parse_fixed(raw: Mapping[str, Any], classes: Mapping[str, str]) -> SimpleNamespace:
    """The fixed keys checked and completed with their defaults, and each class's mapping
    (None when not given); raises _Invalid naming the first key that failed."""
    out = {}
    for key, default, check in _FIELDS:
        if key not in raw:
            if default is _NO_DEFAULT:
                raise _Invalid(key, "missing")
            out[key] = copy.copy(default)
            continue
        value = raw[key]
        try:
            out[key] = value if check is None else check(value)
        except (ValueError, AssertionError):
            raise _Invalid(key, "invalid") from None
    for cls in classes:
        value = raw.get(cls)
        if value is not None:
            if not isinstance(value, Mapping):
                raise _Invalid(cls, "invalid")
            try:
                value = {_lax_str(k): v for k, v in value.items()}
            except ValueError:
                raise _Invalid(cls, "invalid") from None
        out[cls] = value
    known = {key for key, _, _ in _FIELDS} | set(classes)
    for key in raw:
        if key not in known:
            raise _Invalid(str(key), "unknown" if isinstance(key, str) else "invalid")
    return SimpleNamespace(**out)


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    """What a Scenario was resolved from, so that it can be resolved again with other
    overrides (e.g. another mode in a sweep): the raw mapping, its default name, the
    overrides already applied (``seed`` included)."""

    raw: dict
    default_name: str | None
    overrides: dict


@dataclass(frozen=True)
class Scenario:
    """A validated, fully resolved scenario.

    ``config`` has the layout of a scenario file (short class names) with every class of the
    fabric and every attribute present, attribute values as strings; it is what
    ``config.yaml`` contains. A scenario with modes is resolved for one of them: ``config``
    then holds the merged result, ``mode: NAME`` and ``modes: {NAME: {}}`` (so that rerunning
    it resolves to the same configuration).
    """

    name: str
    path: Path | None
    config: dict
    source: _Source | None = field(default=None, repr=False, compare=False)

    @property
    def fabric(self) -> str:
        return self.config["fabric"]

    @property
    def mode(self) -> str | None:
        """The mode this scenario was resolved for; None if it defines no modes."""
        return self.config.get("mode")

    @property
    def description(self) -> str:
        return self.config["description"]

    @property
    def seed(self) -> int:
        return self.config["seed"]

    @property
    def stop_time(self) -> str:
        return self.config["stop_time"]

    def core_config(self) -> dict:
        """The dict ``_core.run`` takes: attributes keyed by full TypeId name."""
        cfg = self.config
        classes = _core.fabric_classes(cfg["fabric"], cfg.get("workload"))
        shared = {}
        if "topology" in cfg:
            shared["topology"] = parts.topology_core(cfg["topology"], classes)
            shared["workloads"] = parts.workloads_core(cfg.get("workload") or {})
        core = {
            **shared,
            "fabric": cfg["fabric"],
            "seed": cfg["seed"],
            "stop_time": cfg["stop_time"],
            "sample_interval": cfg["sample_interval"],
            "record": list(cfg["record"]) + _hidden_recorders(cfg),
            "stop_on_deadlock": bool(cfg.get("stop_on_deadlock", False)),
            "SchedulerType": cfg.get("SchedulerType") or _core.default_scheduler(),
            "faults": [dict(f) for f in cfg.get("faults", [])],
            "attributes": {
                tid: dict(cfg[cls])
                for cls, tid in _core.fabric_classes(cfg["fabric"], cfg.get("workload")).items()
            },
        }
        if "fct" in (cfg.get("hpcc_output") or {}) and "ns3::Report" in core["attributes"]:
            # fct.txt has a line per message (a flow of several has one each): the messages
            # table, which config.yaml need not show.
            core["attributes"]["ns3::Report"]["MessageTable"] = "true"
        return core


def _hidden_recorders(cfg: dict) -> list[str]:
    """Recorders the run needs beyond ``record``: pfc.txt of hpcc_output is made from the PFC
    frames of the ``pause`` recorder (not written as a series unless recorded)."""
    if "pfc" in (cfg.get("hpcc_output") or {}) and "pause" not in cfg["record"]:
        return ["pause"]
    return []


def builtin_names() -> list[str]:
    d = scenarios_dir()
    return sorted(p.stem for p in d.glob("*.yaml")) if d.is_dir() else []


def find_scenario(ref: str | Path) -> Path:
    """A path to a YAML file, or the name of a built-in scenario."""
    text = str(ref)
    path = Path(text)
    names = builtin_names()
    accepted_names = ", ".join(names) if names else f"(none in {scenarios_dir()})"
    looks_like_path = path.suffix in (".yaml", ".yml") or "/" in text or "\\" in text
    if path.is_file():
        return path
    if looks_like_path:
        raise ScenarioError(
            f"scenario file '{text}' does not exist; accepted: a path to a scenario .yaml file "
            f"or a built-in name: {accepted_names}"
        )
    builtin = scenarios_dir() / f"{text}.yaml"
    if text and builtin.is_file():
        return builtin
    raise ScenarioError(
        f"scenario '{text}' is neither a file nor a built-in scenario; accepted: a path to a "
        f".yaml file or one of: {accepted_names}"
    )


def list_scenarios() -> dict[str, str]:
    """Built-in scenario name -> one-line description."""
    out = {}
    for name in builtin_names():
        path = scenarios_dir() / f"{name}.yaml"
        raw = read_yaml(path)
        if not isinstance(raw, dict):
            raise ScenarioError(f"{path}: got {quote(raw)}; accepted: a mapping of scenario keys")
        out[name] = " ".join(str(raw.get("description") or "").split())
    return out


def _split_key(key: str, classes: Mapping[str, str], fabric: str) -> tuple[str, str | None]:
    """Override key -> (top-level key, None) or (class, attribute); errors name the key."""
    if not isinstance(key, str):
        key = str(key)
    if key.startswith(("topology.", "workload.")):
        return key, "."
    if "." in key:
        cls, attr = key.split(".", 1)
        if cls not in classes:
            raise ScenarioError(
                f"{key}: class {cls} {_not_here(cls, fabric)}; accepted: "
                f"{', '.join(sorted(classes))}"
            )
        if not attr:
            raise ScenarioError(f"{key}: no attribute given; accepted: {cls}.Attribute")
        return cls, attr
    if key not in OVERRIDABLE:
        raise ScenarioError(
            f"override key '{key}' does not exist; accepted: {', '.join(OVERRIDABLE)} or "
            f"Class.Attribute with Class one of {', '.join(sorted(classes))}"
        )
    return key, None


def _not_here(cls: str, fabric: str | None = None) -> str:
    """Why a class is not a section here: no such class in the fabric, or it comes with a
    choice (a storage stack) that no workload of the scenario makes."""
    owners = _core.chosen_by(cls)
    if owners:
        return (
            f"is used only with {' or '.join(owners)}, which no workload of this scenario chooses"
        )
    return f"does not exist in fabric {fabric}"


def _check_fabric(raw: dict) -> str:
    known = _core.fabrics()
    accepted = ", ".join(sorted(known))
    if "fabric" not in raw:
        raise ScenarioError(f"scenario key 'fabric' is missing; accepted: one of {accepted}")
    fabric = raw["fabric"]
    if not isinstance(fabric, str) or fabric not in known:
        raise ScenarioError(f"fabric: got {quote(fabric)}; accepted: one of {accepted}")
    return fabric


def _fixed_error(exc: _Invalid, raw: dict, classes: Mapping[str, str]) -> ScenarioError:
    key, kind = exc.key, exc.kind
    all_keys = ", ".join([*TOP_LEVEL, *sorted(classes)])
    if kind == "unknown":
        owners = _core.chosen_by(key)
        if owners:
            return ScenarioError(f"{key}: class {key} {_not_here(key)}; accepted: {all_keys}")
        return ScenarioError(f"scenario key '{key}' does not exist; accepted: {all_keys}")
    if key in classes:
        names = ", ".join(sorted(a["name"] for a in _core.attributes(classes[key])))
        return ScenarioError(
            f"{key}: got {quote(raw.get(key))}; accepted: a mapping of {key} attributes ({names})"
        )
    accepted = ACCEPTED.get(key, "see the scenario documentation")
    if kind == "missing":
        return ScenarioError(f"scenario key '{key}' is missing; accepted: {accepted}")
    return ScenarioError(f"{key}: got {quote(raw.get(key))}; accepted: {accepted}")


def _raw_from(scenario: Any) -> tuple[dict, str | None, Path | None, dict]:
    """Scenario reference -> (raw mapping, default name, path, overrides already applied)."""
    if isinstance(scenario, Scenario):
        if scenario.source is not None:
            src = scenario.source
            return (
                src.raw,  # read-only: resolving builds new mappings, never changes it
                src.default_name,
                scenario.path,
                dict(src.overrides),
            )
        return copy_data(scenario.config), scenario.name, scenario.path, {}
    if isinstance(scenario, Mapping):
        check_size(dict(scenario), "scenario")
        return copy_data(dict(scenario)), None, None, {}
    if isinstance(scenario, str | Path):
        path = find_scenario(scenario)
        raw = read_yaml(path)
        if not isinstance(raw, dict):
            raise ScenarioError(
                f"{path}: got {quote(raw)}; accepted: a YAML mapping of scenario keys"
            )
        return raw, path.stem, path, {}
    raise ScenarioError(
        f"scenario: got {quote(type(scenario).__name__)}; accepted: a built-in name, a path, "
        "a mapping or an lfsim.Scenario"
    )


_MODES_FORM = (
    "a mapping of mode names to mappings of scenario keys, e.g. "
    "modes: {lossy: {RoceNetDevice: {PfcEnabled: false}}, pfc: {}}"
)


def _parse_modes(raw: dict) -> dict[str, dict] | None:
    """The ``modes:`` block checked for shape (its contents are checked when a mode is used):
    mode name -> mapping; None when the scenario defines no modes."""
    if "modes" not in raw:
        return None
    modes = raw["modes"]
    if not isinstance(modes, dict) or not modes:
        raise ScenarioError(f"modes: got {quote(modes)}; accepted: {_MODES_FORM}")
    out: dict[str, dict] = {}
    for name, body in modes.items():
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise ScenarioError(
                f"modes: mode name {quote(name)} is not a name; accepted: {_MODES_FORM}, with "
                "names of letters, digits, '_', '-' and '.'"
            )
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise ScenarioError(
                f"modes.{name}: got {quote(body)}; accepted: a mapping of scenario keys "
                f"({', '.join(MODE_KEYS)} or class sections), e.g. "
                "{RoceSwitch: {EcnEnabled: true}}"
            )
        for key in body:
            if not isinstance(key, str) or key in ("mode", "modes"):
                raise ScenarioError(
                    f"modes.{name}: key {quote(key)} is not allowed in a mode; accepted: "
                    f"{', '.join(MODE_KEYS)} or class sections"
                )
        out[name] = body
    return out


def _merge_mode(base: dict, body: dict) -> dict:
    """A mode over the base scenario: class sections merge attribute by attribute, top-level
    keys replace. A mode that changes the fabric inherits only the base's top-level keys."""
    out = {k: v for k, v in base.items() if k not in ("mode", "modes")}
    if "fabric" in body and "fabric" in base and body["fabric"] != base["fabric"]:
        # The shared parts (topology, workload, Report) carry over; the fabric's classes not.
        shared = {_core.short_name(t) for t in (*_core.SHARED_CLASSES, *_core.pattern_classes())}
        out = {k: v for k, v in out.items() if k in MODE_KEYS or k in shared}
    for key, value in body.items():
        mine = out.get(key)
        if key == "topology" and key in out:
            out[key] = parts.merge_topology(mine, value)
        elif key == "workload" and key in out:
            out[key] = parts.merge_workloads(mine, value)
        elif key not in TOP_LEVEL and isinstance(value, dict | None) and isinstance(mine, dict):
            out[key] = {**mine, **(value or {})}
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_scenario(
    scenario: str | Path | Mapping | Scenario,
    overrides: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> Scenario:
    """Validate and resolve a scenario.

    ``scenario`` is a built-in name, a path to a YAML file, a mapping with the file's layout or
    an already resolved ``Scenario``. ``overrides`` maps top-level keys (mode, seed, stop_time,
    sample_interval, record, name) or ``"Class.Attribute"`` to values; ``seed`` wins over both.
    A scenario with ``modes:`` is resolved for ``overrides["mode"]``, else its ``mode:``, else
    its first mode: the mode is merged over the base, then the overrides applied.
    Raises ``ScenarioError`` (one line) on any bad input.
    """
    overrides = mapping_arg(overrides, "overrides", OVERRIDES_ACCEPTED)
    with paused_gc():
        return _load(scenario, overrides, seed)


def _load(scenario: Any, overrides: Mapping[str, Any] | None, seed: int | None) -> Scenario:
    raw, default_name, path, prior = _raw_from(scenario)
    for key in raw:
        if not isinstance(key, str):
            raise ScenarioError(
                f"scenario key {quote(key)} is not a name; accepted: {', '.join(TOP_LEVEL)} or "
                "a class of the fabric"
            )
    applied = {**prior, **{str(k): v for k, v in (overrides or {}).items()}}
    if seed is not None:
        applied["seed"] = seed
    # Kept as it is: the raw mapping is this loader's own (read from a file or copied by
    # _raw_from), and resolving it builds new mappings instead of changing it.
    source = _Source(raw, default_name, dict(applied))

    modes = _parse_modes(raw)
    rest = {k: v for k, v in applied.items() if k != "mode"}
    if modes is None:
        requested = applied.get("mode", raw.get("mode"))
        if requested is not None:
            raise ScenarioError(
                f"mode: got {quote(requested)}; accepted: the name of a mode under modes:, "
                "and this scenario defines no modes"
            )
        config = _resolve(raw, default_name, rest, base_dir=_base_dir(path))
        return Scenario(name=config["name"], path=path, config=config, source=source)

    mode = applied.get("mode", raw.get("mode"))
    if mode is None:
        mode = next(iter(modes))
    if not isinstance(mode, str) or mode not in modes:
        raise ScenarioError(f"mode: got {quote(mode)}; accepted: one of {', '.join(modes)}")
    merged = _merge_mode(raw, modes[mode])
    try:
        config = _resolve(merged, default_name, rest, mode, _base_dir(path))
    except ScenarioError as exc:
        raise ScenarioError(f"mode {mode}: {exc}") from None
    _check_other_modes(raw, modes, mode, default_name, _base_dir(path))
    return Scenario(name=config["name"], path=path, config=config, source=source)


_checked_modes: set[str] = set()


def _check_other_modes(
    raw: dict, modes: dict, chosen: str, default_name: str | None, base_dir: Path
) -> None:
    """A mistake in a mode that was not selected is still a mistake: every mode is resolved
    once (without the run's overrides, which may belong to the chosen mode only)."""
    key = json.dumps([raw, str(base_dir)], sort_keys=True, default=str)
    if key in _checked_modes:
        return
    for name, body in modes.items():
        if name == chosen:
            continue
        try:
            _resolve(_merge_mode(raw, body), default_name, {}, name, base_dir)
        except ScenarioError as exc:
            raise ScenarioError(f"mode {name}: {exc}") from None
    _checked_modes.add(key)


def _base_dir(path: Path | None) -> Path:
    """Where a scenario's relative file names (topology, flows) start from."""
    return path.parent if path is not None else Path.cwd()


def _resolve(
    raw: dict,
    default_name: str | None,
    overrides: Mapping[str, Any],
    mode: str | None = None,
    base_dir: Path | None = None,
) -> dict:
    """A scenario mapping without modes (or one mode merged in) -> the resolved config."""
    fabric = _check_fabric(raw)
    raw = {k: v for k, v in raw.items() if k not in ("mode", "modes")}
    # Overrides of the workload may bring a pattern, and with it its classes.
    for key, value in overrides.items():
        if key.startswith("workload."):
            parts.apply_override(raw, key, value)
    overrides = {k: v for k, v in overrides.items() if not k.startswith("workload.")}
    classes = _core.fabric_classes(fabric, raw.get("workload"))

    for key, value in overrides.items():
        target, attr = _split_key(key, classes, fabric)
        if attr == ".":
            parts.apply_override(raw, key, value)
        elif attr is None:
            raw[target] = value
        else:
            section = raw.get(target)
            if section is None:
                section = {}
            elif not isinstance(section, dict):
                raise ScenarioError(
                    f"{target}: got {quote(section)}; accepted: a mapping of {target} attributes"
                )
            raw[target] = {**section, attr: value}

    try:
        parsed = _parse_fixed(raw, classes)
    except _Invalid as exc:
        raise _fixed_error(exc, raw, classes) from None

    interval = time_seconds(parsed.sample_interval)
    if interval and time_seconds(parsed.stop_time) / interval > MAX_SAMPLES:
        raise ScenarioError(
            f"sample_interval: got {quote(parsed.sample_interval)}; accepted: "
            f"{ACCEPTED['sample_interval']}"
        )
    recorders = _core.fabrics()[fabric].get("recorders", {})
    for rec in parsed.record:
        if rec not in recorders:
            raise ScenarioError(
                f"record: recorder '{rec}' does not exist in fabric {fabric}; accepted: "
                f"{', '.join(recorders) or '(none)'}"
            )

    config: dict[str, Any] = {
        "name": parsed.name or default_name or "scenario",
        "description": parsed.description,
        "fabric": fabric,
    }
    if mode is not None:
        # Kept so that summary and reruns know the mode; the one mode left is empty because
        # everything it set is already merged into the classes below.
        config["mode"] = mode
        config["modes"] = {mode: {}}
    config.update(
        {
            "seed": parsed.seed,
            "stop_time": parsed.stop_time,
            "sample_interval": parsed.sample_interval,
            "record": list(dict.fromkeys(parsed.record)),  # drop repeats, keep order
            "stop_on_deadlock": parsed.stop_on_deadlock,
            "SchedulerType": parsed.SchedulerType or _core.default_scheduler(),
        }
    )
    if _core.is_open(fabric):
        if parsed.topology is None:
            raise ScenarioError(
                f"scenario key 'topology' is missing; accepted: a mapping with generator: (one "
                f"of {', '.join(t['name'] for t in _core.core().topologies())}) and its "
                "attributes, or nodes: and links:, or file:"
            )
        config["topology"] = parts.resolve_topology(parsed.topology, classes, base_dir)
        config["workload"] = (
            parts.resolve_workloads(parsed.workload, fabric, base_dir)
            if parsed.workload is not None
            else {}
        )
    else:
        for key in ("topology", "workload"):
            if getattr(parsed, key) is not None:
                raise ScenarioError(
                    f"{key}: fabric {fabric} builds its own network; accepted: no {key} with "
                    f"this fabric"
                )
    sections = _expand_presets({cls: dict(getattr(parsed, cls) or {}) for cls in classes}, classes)
    for cls, tid in classes.items():
        config[cls] = _resolve_class(cls, tid, sections[cls])
    if parsed.faults:
        config["faults"] = parsed.faults
    if parsed.hpcc_output:
        config["hpcc_output"] = resolve_hpcc_output(parsed.hpcc_output, config, base_dir)
    if parsed.calibrated:
        for key in parsed.calibrated:
            _check_calibrated(key, config)
        config["calibrated"] = parsed.calibrated
    return config


def _check_calibrated(key: str, config: Mapping[str, Any]) -> None:
    """A calibrated parameter must be one this (mode of the) scenario has."""
    parts_ = key.split(".")
    node: Any = config
    if parts_[0] in ("workload", "topology") or parts_[0] in config:
        for part in parts_:
            node = node.get(part) if isinstance(node, dict) else None
    else:
        node = None
    if parts_[0] in ("name", "description", "fabric", "mode", "modes", "calibrated") or (
        node is None or isinstance(node, dict)
    ):
        raise ScenarioError(
            f"calibrated: got '{key}'; accepted: a parameter of this scenario as "
            "Class.Attribute, workload.ITEM.Attribute or topology.Attribute"
        )


PRESET = "Preset"


def _expand_presets(sections: dict[str, dict], classes: Mapping[str, str]) -> dict[str, dict]:
    """``Class: {Preset: NAME}`` -> the preset's values, under anything given explicitly (in
    any class). The resolved configuration keeps the values, not the key, so that it reruns
    identically and does not claim a preset its explicit values may have overridden."""
    out = {cls: dict(v) for cls, v in sections.items()}
    short = {tid: cls for cls, tid in classes.items()}
    for cls, tid in classes.items():
        if PRESET not in sections[cls]:
            continue
        value = sections[cls][PRESET]
        known = _core.presets(tid)
        if not known:
            continue  # reported as an unknown attribute by _resolve_class
        name = to_core_string(value)
        if name not in known:
            raise ScenarioError(f"{cls}.{PRESET}: got {quote(value)}; accepted: {', '.join(known)}")
        del out[cls][PRESET]
        for type_id, attr, text in known[name]["values"]:
            target = short.get(type_id)
            if target is not None and attr not in sections[target]:
                out[target][attr] = text
    return out


def _resolve_class(cls: str, type_id: str, given: Mapping[str, Any]) -> dict[str, str]:
    attrs = _core.attributes(type_id)
    known = {a["name"] for a in attrs}
    values: dict[str, str] = {}
    for attr, value in given.items():
        attr = str(attr)
        if attr not in known:
            names = sorted(known) + ([PRESET] if _core.presets(type_id) else [])
            raise ScenarioError(
                f"{cls}.{attr} does not exist; accepted: {', '.join(names) or '(none)'}"
            )
        values[attr] = attribute_text(type_id, attr, value, f"{cls}.{attr}")
    return {a["name"]: values.get(a["name"], str(a["default"])) for a in attrs}


# ---------------------------------------------------------------------------------------------
# Command-line forms: KEY=VALUE (--set) and KEY=V1,V2,... (--grid).

_SET_FORM = (
    f"KEY=VALUE with KEY one of {', '.join(OVERRIDABLE)} or Class.Attribute, e.g. "
    "FcNetDevice.BbCredit=16"
)


def parse_assignment(text: str, option: str = "--set") -> tuple[str, str]:
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key or any(c.isspace() for c in key):
        raise ScenarioError(f"{option}: got {quote(text)}; accepted: {_SET_FORM}")
    return key, value


def parse_overrides(items: Iterable[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, value = parse_assignment(item)
        out[key] = value
    return out


def parse_grid(items: Iterable[str] | None) -> dict[str, list[str]]:
    grid: dict[str, list[str]] = {}
    for item in items or ():
        key, value = parse_assignment(item, "--grid")
        values = [v.strip() for v in value.split(",")]
        if not value.strip() or any(v == "" for v in values):
            raise ScenarioError(
                f"--grid: got {quote(item)}; accepted: KEY=V1,V2,... with non-empty values"
            )
        if key in grid:
            raise ScenarioError(
                f"--grid: key '{key}' given twice; accepted: each key once, values comma-separated"
            )
        grid[key] = values
    return grid


def given_fio_options(scenario: Any) -> set | None:
    """The FioJob options a scenario set: its FioJob section, its mode's, and ``FioJob.x``
    overrides; None when it cannot tell."""
    src = getattr(scenario, "source", None)
    if src is None:
        return None
    raw = src.raw if isinstance(src.raw, dict) else {}
    keys = set((raw.get("FioJob") or {}).keys())
    mode = scenario.config.get("mode")
    body = (raw.get("modes") or {}).get(mode) if mode else None
    if isinstance(body, dict):
        keys |= set((body.get("FioJob") or {}).keys())
    for k in src.overrides or {}:
        if str(k).startswith("FioJob."):
            keys.add(str(k).split(".", 1)[1])
    return keys
