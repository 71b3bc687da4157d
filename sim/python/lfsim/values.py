"""Values of a scenario, the bottom layer of the loader: units (times, lengths, fio's sizes and
times), the text each value is handed to C++ as, and the one check of an attribute's value.

Every reader of values (scenario sections, overrides, a topology's or a workload's attributes,
a node's or a link's ``set:``, flow lists, HPCC files, fio job specs) parses units here, so a
unit means the same everywhere and each error says the same accepted form. This module
imports nothing of lfsim but ``errors`` and ``core``; the loader's other modules import it.
"""

from __future__ import annotations

import numbers
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from . import core as _core
from .errors import ScenarioError, quote

NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")

# ---------------------------------------------------------------------------------------------
# Times: ns-3 parses "<number><unit>" with no space; a bare number would silently mean seconds,
# so a unit is required.

TIME_UNITS = {
    "d": 86400.0,
    "h": 3600.0,
    "min": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "ns": 1e-9,
    "ps": 1e-12,
    "fs": 1e-15,
}
TIME_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
TIME_UNIT = "d|h|min|s|ms|us|ns|ps|fs"
TIME_RE = re.compile(f"({TIME_NUMBER})({TIME_UNIT})")
# ns-3's Time (at lfsim's picosecond resolution) is a signed 64-bit count: at most 2^63 - 1 ps
# = 9,223,372.036854775807 s. The C++ side (lfsim::ParseTime, CheckValue) refuses anything
# beyond 9.2e6 s, a round bound just below it; both sides use the same number.
TIME_MAX_S = 9.2e6
TIME_MAX_TEXT = "9.2e6 s (ns-3's Time: a 64-bit count of picoseconds, at most 9,223,372 s)"
TIME_FORM = "a time with a unit (d, h, min, s, ms, us, ns, ps), e.g. 2ms"


def split_time(text: Any) -> tuple[float, str] | None:
    """``"2ms"`` -> ``(2.0, "ms")``; None if it is not an ns-3 time with a unit."""
    if not isinstance(text, str):
        return None
    m = TIME_RE.fullmatch(text.strip())
    if not m:
        return None
    return float(m.group(1)), m.group(2)


def time_seconds(text: Any) -> float | None:
    parts = split_time(text)
    return None if parts is None else parts[0] * TIME_UNITS[parts[1]]


def unit_seconds(unit: str) -> float:
    return TIME_UNITS[unit]


def time_form(minimum: str = ">= 0", example: str = "1ms") -> str:
    """The accepted form of a time, with its real bounds."""
    return (
        f"a time {minimum} with a unit (d, h, min, s, ms, us, ns, ps), e.g. {example}, at most "
        f"{TIME_MAX_TEXT}"
    )


def check_time(value: Any, key: str, positive: bool = False, example: str = "1ms") -> str:
    """A time value (a scenario's stop_time, a flow's start, a link's delay, a fault's at):
    its text, stripped; else a ScenarioError naming ``key`` and the range ns-3 can hold."""
    seconds = time_seconds(value)
    if seconds is None or seconds < 0 or (positive and seconds == 0) or seconds > TIME_MAX_S:
        form = time_form("> 0" if positive else ">= 0", example)
        raise ScenarioError(f"{key}: got {quote(value)}; accepted: {form}")
    return value.strip()


# ---------------------------------------------------------------------------------------------
# Lengths: metres, or a number with a unit as times have (no space): 50km, 2.5m, 30cm.

LENGTH_UNITS = {"km": Decimal(1000), "m": Decimal(1), "cm": Decimal("0.01"), "mm": Decimal("0.001")}
LENGTH_RE = re.compile(r"((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(km|m|cm|mm)?")
LENGTH_FORM = "metres, or a number with a unit km, m, cm or mm (no space), e.g. 50km"


def length_metres(value: Any) -> Decimal | None:
    """``50km`` -> 50000, ``12`` -> 12 (metres); None if it is not a length."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        text = repr(float(value)) if not isinstance(value, numbers.Integral) else str(int(value))
    elif isinstance(value, str):
        text = value.strip()
    else:
        return None
    m = LENGTH_RE.fullmatch(text)
    if not m:
        return None
    try:
        metres = Decimal(m.group(1)) * LENGTH_UNITS[m.group(2) or "m"]
    except InvalidOperation:
        return None
    return metres if metres.is_finite() else None


def decimal_text(d: Decimal) -> str:
    """A Decimal as the text a C++ number parser reads, exactly when it is an integer."""
    if d == d.to_integral_value():
        return str(int(d))
    return repr(float(d))


# ---------------------------------------------------------------------------------------------
# fio's units (HOWTO "Parameter types" and parse.c, fio 3.33). Sizes: an integer (or 0x hex)
# with an optional suffix k, m, g, t, p, each with an optional b (powers of 1024 under fio's
# default kb_base=1024), or kib, mib, gib, tib, pib (powers of 1000 there: fio's compatibility
# mode takes IEC prefixes as decimal), or b; case does not matter. Times: a number with an
# optional unit us/usec, ms/msec, s/sec, m/min, h, d (case does not matter); without a unit
# the option's own default: seconds for runtime and ramp_time, microseconds for thinktime.

_FIO_SIZE_RE = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)(?:([kmgtp])(i?b)?|(b))?", re.IGNORECASE)
FIO_SIZE_FORM = (
    "a number of bytes, optionally with fio's suffix k, m, g, t or p (x 1024 each, as fio's "
    "default kb_base=1024: 4k = 4096, 1m = 1048576; kb, mb... the same; kib, mib... x 1000 "
    "each, as fio reads them), e.g. 4k"
)
_FIO_TIME_RE = re.compile(
    r"(\d+(?:\.\d*)?|\.\d+) *(us|usec|ms|msec|s|sec|m|min|h|d)?", re.IGNORECASE
)
# fio's time unit -> the ns-3 unit with the same meaning.
_FIO_TIME_UNITS = {
    "us": "us", "usec": "us", "ms": "ms", "msec": "ms", "s": "s", "sec": "s",
    "m": "min", "min": "min", "h": "h", "d": "d",
}  # fmt: skip


def fio_bytes(value: Any) -> int | None:
    """A fio size (``4k``, ``1m``, ``4096``, ``8KiB``) -> bytes; None if fio would not read it as
    one (fractions: fio's strtoll would silently drop them)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value) if value >= 0 else None
    if not isinstance(value, str):
        return None
    m = _FIO_SIZE_RE.fullmatch(value.strip())
    if not m:
        return None
    number = int(m.group(1), 16) if m.group(1)[:2].lower() == "0x" else int(m.group(1))
    if m.group(2) and m.group(1)[:2].lower() == "0x":
        return None  # fio reads "0x10k" as 16: refused rather than guessed
    prefix = (m.group(2) or "").lower()
    if not prefix:
        return number
    base = 1000 if (m.group(3) or "").lower() == "ib" else 1024
    return number * base ** ("kmgtp".index(prefix) + 1)


def fio_time_text(value: Any, default_unit: str) -> str | None:
    """A fio time -> the ns-3 time text of the same duration (``10m`` -> ``10min``, ``2`` ->
    ``2s`` for runtime, ``5`` -> ``5us`` for thinktime); an ns-3 time with a unit (``2ms``,
    ``500ns``) as it is. None if it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        value = to_core_string(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if TIME_RE.fullmatch(text) and not text.startswith(("+", "-")):
        return text
    m = _FIO_TIME_RE.fullmatch(text)
    if not m:
        return None
    unit = _FIO_TIME_UNITS[(m.group(2) or default_unit).lower()]
    return f"{m.group(1)}{unit}"


def fio_seconds(value: Any, key: str, default_unit: str = "s") -> float:
    """A fio time option (``ramp_time``, ``runtime``) in seconds; a bare number means seconds,
    as in fio."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value < 0:
        value = None
    text = fio_time_text(value, default_unit)
    seconds = time_seconds(text) if text is not None else None
    if seconds is None or not 0 <= seconds <= TIME_MAX_S:
        raise ScenarioError(f"{key}: got {quote(value)}; accepted: {fio_time_form(default_unit)}")
    return seconds


def fio_time_form(default_unit: str) -> str:
    bare = "seconds" if default_unit == "s" else "microseconds"
    return (
        f"a fio time >= 0: a number ({bare}) or a number with a unit us, ms, s, m (minutes), h "
        f"or d, e.g. 500ms, at most {TIME_MAX_TEXT}"
    )


# ---------------------------------------------------------------------------------------------
# Values handed to C++ are strings; YAML scalars are turned into the text ns-3 parses.


def to_core_string(value: Any) -> str | None:
    """YAML/Python scalar -> attribute string; None for anything that is not a scalar."""
    if isinstance(value, str):
        return value
    # numpy.bool_ is not a bool subclass; compare by name to avoid importing numpy here.
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        # repr of a Python float is the shortest text that round-trips exactly.
        return repr(float(value))
    return None


# Attributes whose values take units C++ does not parse: converted here, in the one place where
# values with units are read, into the unit the attribute holds. (kind, default unit).
UNIT_ATTRIBUTES: dict[tuple[str, str], tuple[str, str]] = {
    ("ns3::FcChannel", "Length"): ("length", "m"),
    ("ns3::RoceChannel", "Length"): ("length", "m"),
    # fio's option names take fio's units (FioJob's global options; the Jobs sections are
    # rewritten by fio_jobs_text).
    ("ns3::FioJob", "bs"): ("fio_size", ""),
    ("ns3::FioJob", "size"): ("fio_size", ""),
    ("ns3::FioJob", "runtime"): ("fio_time", "s"),
    ("ns3::FioJob", "ramp_time"): ("fio_time", "s"),
    ("ns3::FioJob", "thinktime"): ("fio_time", "us"),
    ("ns3::FioJob", "thinktime_spin"): ("fio_time", "us"),
    ("ns3::FioWorkload", "Jobs"): ("fio_jobs", ""),
}
FIO_OPTIONS = {attr: kind for (tid, attr), kind in UNIT_ATTRIBUTES.items() if tid == "ns3::FioJob"}
_FIO_SECTION_OPTIONS = ("bs", "size", "thinktime", "thinktime_spin")


def _convert_units(type_id: str, attr: str, text: str, key: str = "") -> str | None:
    """The text C++ takes for a value with units; None when the value has no such form (the
    caller then reports C++'s accepted form with the units added)."""
    kind, unit = UNIT_ATTRIBUTES[(type_id, attr)]
    if kind == "fio_jobs":
        return fio_jobs_text(text, key)
    if kind == "length":
        metres = length_metres(text)
        return None if metres is None else decimal_text(metres)
    if kind == "fio_size":
        n = fio_bytes(text)
        return None if n is None else str(n)
    return fio_time_text(text, unit)


def _unit_form(type_id: str, attr: str, phrase: str) -> str:
    kind, unit = UNIT_ATTRIBUTES[(type_id, attr)]
    if kind == "length":
        return f"{phrase}: {LENGTH_FORM}"
    if kind == "fio_size":
        return f"{phrase}: {FIO_SIZE_FORM}"
    return f"{phrase}; as fio: {fio_time_form(unit)}"


def attribute_text(type_id: str, attr: str, value: Any, key: str) -> str:
    """The one check of an attribute's value, wherever it is given (a class section, an
    override, a topology's or workload's attribute, a node's or link's ``set:``): the scalar's
    text, its units converted to what the attribute holds, checked by C++'s own check
    (``_core.check_value``, the one that knows ns-3's parsers and never aborts). Raises a
    ScenarioError naming ``key`` otherwise."""
    text = to_core_string(value)
    if text is None:
        # Not a scalar: ask C++ what it accepts, using the value's text as the probe.
        phrase = _core.check_value(type_id, attr, str(value)) or "a single value"
        raise ScenarioError(f"{key}: got {quote(value)}; accepted: {phrase}")
    converted = text
    if (type_id, attr) in UNIT_ATTRIBUTES:
        converted = _convert_units(type_id, attr, text, key)
    phrase = _core.check_value(type_id, attr, converted if converted is not None else text)
    if converted is None or phrase is not None:
        if phrase is None:
            phrase = _core.check_value(type_id, attr, "") or "a value"
        if (type_id, attr) in UNIT_ATTRIBUTES:
            phrase = _unit_form(type_id, attr, phrase)
        raise ScenarioError(f"{key}: got {quote(text)}; accepted: {phrase}")
    return converted


# runtime and ramp_time are global: C++ refuses them in a section, with that reason.
_JOB_OPTION_RE = re.compile(r"(?<![^\s:;])(" + "|".join(_FIO_SECTION_OPTIONS) + r")=([^\s;]*)")


def fio_jobs_text(text: str, key: str) -> str:
    """A Fio workload's ``Jobs`` ("reader: rw=randread bs=8k; writer: ...") with fio's units of
    bs, size, thinktime and thinktime_spin converted as in FioJob's own attributes (the rest
    of the text is C++'s to check: lfsim::ParseSections, FioJob's checks)."""

    def convert(m: re.Match) -> str:
        option, value = m.group(1), m.group(2)
        converted = _convert_units("ns3::FioJob", option, value)
        if converted is None:
            kind, unit = FIO_OPTIONS[option]
            form = FIO_SIZE_FORM if kind == "fio_size" else fio_time_form(unit)
            raise ScenarioError(f"{key}: got {option}={value}; accepted: {option}={form}")
        return f"{option}={converted}"

    return _JOB_OPTION_RE.sub(convert, text)


# ---------------------------------------------------------------------------------------------


def name_list(names: list[str], limit: int = 8, what: str = "nodes") -> str:
    """The first names of a list, for an accepted form: 'h0, h1, sw0' or 'h0, ..., (40 nodes)'."""
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])}, ... ({len(names)} {what})"
