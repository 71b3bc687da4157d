"""Flow tables read from files: a CSV or Parquet table of flows (columns src, dst and optionally
size, start, messages, depth, priority, as the keys of a flow in YAML), or an HPCC flow.txt.

A table of a million flows is read and checked column by column, in seconds; an error names
the file, the line (a CSV's, an HPCC file's) or row (Parquet's), the column and what is
accepted. The resolved scenario refers to such a file by its absolute path and its SHA-256
(``flows: {file: PATH, sha256: HEX, count: N}``) instead of embedding its rows: config.yaml
stays small, and a rerun reads the file again, refused if it changed.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import hpcc
from .errors import ScenarioError, quote
from .values import TIME_MAX_S, TIME_NUMBER, TIME_UNIT, TIME_UNITS, time_form

FLOW_KEYS = ("src", "dst", "size", "start", "messages", "depth", "priority")
# Integer fields of a flow and their ranges (those of the C++ Flows workload).
FLOW_INTS = (("size", 1, 2**31), ("messages", 0, 10**9), ("depth", 1, 4096), ("priority", 0, 7))
CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
TABLE_FORM = (
    "a table with columns src and dst (host names) and optionally size, start (a time with a "
    "unit), messages, depth and priority"
)


@dataclass(frozen=True)
class FlowTable:
    """Checked flows by column, each a list of the text handed to C++ ("" where a row leaves
    a field to the workload's attributes)."""

    path: Path
    sha256: str
    columns: dict[str, list[str]]
    # Where each row is, for errors found when the run is built: a line number per row (CSV,
    # HPCC) or None (Parquet: the row number).
    lines: list[int] | None

    def __len__(self) -> int:
        return len(self.columns["src"])

    def where(self, i: int, key: str) -> str:
        at = f"line {self.lines[i]}" if self.lines is not None else f"row {i + 1}"
        return f"{self.path} {at}, {key}[{i}]"

    def core_rows(self, key: str) -> list[dict[str, str]]:
        """The rows ``_core.run`` takes (a field left out is the empty text, which the Flows
        workload reads as not given)."""
        names = [*self.columns, "where"]
        wheres = [self.where(i, key) for i in range(len(self))]
        rows = zip(*self.columns.values(), wheres, strict=True)
        return [dict(zip(names, row, strict=True)) for row in rows]


def is_table(path: Path) -> bool:
    """Whether a flow file is a table (CSV, Parquet, HPCC flow.txt) rather than a YAML list."""
    return path.suffix not in (".yaml", ".yml")


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_cache: dict[tuple[str, str], FlowTable] = {}


def read_table(path: Path, key: str, sha256: str | None = None) -> FlowTable:
    """A flow file's checked table; with ``sha256``, refused unless the file still has it. The
    last tables read are kept (a run reads its table when it is loaded and when it starts)."""
    try:
        digest = file_sha256(path)
    except OSError as exc:
        raise ScenarioError(
            f"{key}: cannot read '{path}' ({exc.strerror or exc}); accepted: a readable flow file"
        ) from None
    if sha256 is not None and digest != sha256:
        raise ScenarioError(
            f"{key}: '{path}' has changed since the scenario was resolved (SHA-256 "
            f"{digest[:12]}..., was {str(sha256)[:12]}...); accepted: the file as it was, or no "
            "sha256 to read it as it is now"
        )
    cached = _cache.get((str(path), digest))
    if cached is not None:
        return cached
    if path.suffix in CSV_SUFFIXES:
        columns, lines = _read_csv(path)
    elif path.suffix in PARQUET_SUFFIXES:
        columns, lines = _read_parquet(path), None
    else:
        columns, lines = hpcc.read_flow_columns(path)
    table = FlowTable(path, digest, columns, lines)
    _cache.clear()  # one table at a time: a million flows' texts are a few hundred MB
    _cache[(str(path), digest)] = table
    return table


def _read_csv(path: Path) -> tuple[dict[str, list[str]], list[int]]:
    import pyarrow as pa
    from pyarrow import csv

    try:
        table = csv.read_csv(
            path,
            convert_options=csv.ConvertOptions(
                column_types={k: pa.string() for k in FLOW_KEYS}, strings_can_be_null=False
            ),
        )
    except (pa.ArrowException, OSError) as exc:
        raise ScenarioError(
            f"{path}: bad CSV ({' '.join(str(exc).split())}); accepted: a header line, then "
            f"one flow a line, comma-separated: {TABLE_FORM}"
        ) from None
    # Line 1 is the header; rows are one line each (a quoted field across lines would shift
    # the numbers of the lines after it).
    columns = _check_columns(path, table, lambda i: f"line {i + 2}")
    return columns, list(range(2, table.num_rows + 2))


def _read_parquet(path: Path) -> dict[str, list[str]]:
    import pyarrow as pa
    from pyarrow import parquet

    try:
        table = parquet.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise ScenarioError(
            f"{path}: bad Parquet ({' '.join(str(exc).split())}); accepted: a Parquet file of "
            f"{TABLE_FORM}"
        ) from None
    return _check_columns(path, table, lambda i: f"row {i + 1}")


def _check_columns(path: Path, table: Any, at: Any) -> dict[str, list[str]]:
    """The columns (integers or text) as text, checked all at once by Arrow's compute
    functions: the first bad row is named by ``at(row)``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = table.column_names
    unknown = [c for c in names if c not in FLOW_KEYS]
    if unknown or "src" not in names or "dst" not in names:
        what = f"column {quote(unknown[0])}" if unknown else "no column src and dst"
        raise ScenarioError(f"{path}: {what}; accepted: {TABLE_FORM}")
    if table.num_rows == 0:
        raise ScenarioError(f"{path}: no flows; accepted: {TABLE_FORM}, one flow a row")
    columns: dict[str, list[str]] = {}

    def first_bad(name: str, given: Any, bad: Any, accepted: str) -> None:
        i = pc.index(pc.fill_null(bad, True), True).as_py()
        if i >= 0:
            raise ScenarioError(
                f"{path} {at(i)}, column {name}: got {quote(given[i].as_py())}; accepted: "
                f"{accepted}"
            )

    for name in names:
        raw = table[name]
        kind = raw.type
        if pa.types.is_floating(kind):  # integers with a missing value, as pandas writes them
            whole = pc.or_kleene(pc.is_null(raw), pc.equal(raw, pc.round(raw)))
            first_bad(name, raw, pc.invert(whole), "an integer")
            raw = pc.cast(pc.cast(raw, pa.int64()), pa.string())
        elif not (pa.types.is_integer(kind) or pa.types.is_string(kind)) and not (
            pa.types.is_large_string(kind)
        ):
            raise ScenarioError(
                f"{path}: column {name} holds {kind}; accepted: {TABLE_FORM} (integers or text)"
            )
        col = pc.fill_null(pc.utf8_trim_whitespace(pc.cast(raw, pa.string())), "")
        given = pc.not_equal(col, "")
        if name in ("src", "dst"):
            first_bad(name, col, pc.invert(given), "a host name")
        elif name == "start":
            parts = pc.extract_regex(col, f"^(?P<n>{TIME_NUMBER})(?P<u>{TIME_UNIT})$")
            number = pc.cast(pc.struct_field(parts, "n"), pa.float64())
            units, scale = _arrow_units()
            unit = pc.take(scale, pc.index_in(pc.struct_field(parts, "u"), units))
            seconds = pc.multiply(number, unit)
            ok = pc.and_(pc.greater_equal(seconds, 0.0), pc.less_equal(seconds, TIME_MAX_S))
            first_bad(name, col, pc.and_(given, pc.invert(pc.fill_null(ok, False))), time_form())
        else:
            lo, hi = next((lo, hi) for k, lo, hi in FLOW_INTS if k == name)
            digits = pc.match_substring_regex(col, r"^[0-9]{1,12}$")
            number = pc.cast(pc.if_else(digits, col, "0"), pa.int64())
            ok = pc.and_(digits, pc.and_(pc.greater_equal(number, lo), pc.less_equal(number, hi)))
            first_bad(name, col, pc.and_(given, pc.invert(ok)), f"an integer in {lo}..{hi}")
            col = pc.if_else(digits, pc.cast(number, pa.string()), col)  # "007" as YAML reads it
        columns[name] = col.to_pylist()
    return columns


@functools.cache
def _arrow_units() -> tuple[Any, Any]:
    import pyarrow as pa

    return pa.array(list(TIME_UNITS)), pa.array(list(TIME_UNITS.values()), pa.float64())


def resolve_file(path: Path, key: str, sha256: Any = None) -> dict:
    """A flow table file -> the resolved ``flows:`` mapping, its rows checked."""
    if sha256 is not None and not isinstance(sha256, str):
        raise ScenarioError(f"{key}.sha256: got {quote(sha256)}; accepted: a SHA-256 in hex")
    table = read_table(path, key, sha256)
    return {"file": str(path), "sha256": table.sha256, "count": len(table)}
