"""A run's tables and series as files, written from the C++ arrays without pandas.

Importing pandas costs about half of a short run's start-up, and an output directory needs
none of it: the Parquet files get the same bytes as ``DataFrame.to_parquet`` (pyarrow, with the
``pandas`` schema metadata pyarrow would add) and the CSV files those of ``DataFrame.to_csv``
(the standard csv writer, each value formatted as pandas formats it). tests/test_tables.py
compares both with pandas' own. What this module does not know (a column of another dtype, a
label column without labels) it leaves to pandas: ``columns_of`` then returns None.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# The dtypes the core's arrays have, and pandas' / pyarrow's names for them.
_KINDS = {"int64": "int64", "float64": "float64", "bool": "bool"}


@dataclass
class Labels:
    """A label column: ``codes`` (int64, -1 where an id has none) into ``categories``."""

    codes: np.ndarray
    categories: list[str]


def label_codes(ids: np.ndarray, labels: list[str] | None) -> Labels:
    """The labels of the ids (a float or int ``id`` column); ids without a label show as their
    number, repeated names get their id (categories must be unique)."""
    import numpy as np

    codes = np.where(np.isfinite(ids), ids, -1).astype(np.int64)
    top = int(codes.max()) + 1 if len(codes) else 0
    names = list(labels or [])
    names += [str(i) for i in range(len(names), top)]
    categories: list[str] = []
    seen: set[str] = set()
    for i, name in enumerate(names):
        categories.append(name if name not in seen else f"{name} ({i})")
        seen.add(categories[-1])
    return Labels(np.where(codes >= 0, codes, -1), categories)


def frame_columns(
    columns: Mapping[str, np.ndarray],
    labels: list[str] | None,
    refs: Mapping[str, list[str] | None] | None = None,
) -> dict[str, np.ndarray | Labels]:
    """The columns of a table in order: a ``label`` after ``id`` if there is one, and a
    ``<column>_label`` after each column of ``refs`` (column -> the labels its ids index)."""
    names = list(columns)
    out: dict[str, np.ndarray | Labels] = dict(columns)
    if "id" in out and "label" not in out:
        names.insert(names.index("id") + 1, "label")
        out["label"] = label_codes(columns["id"], labels)
    for column, ref in (refs or {}).items():
        if column in out and f"{column}_label" not in out:
            names.insert(names.index(column) + 1, f"{column}_label")
            out[f"{column}_label"] = label_codes(columns[column], ref)
    return {n: out[n] for n in names}


def _codes_dtype(n: int) -> str:
    """The dtype pandas gives a Categorical's codes for n categories (coerce_indexer_dtype)."""
    for dtype, top in (("int8", 127), ("int16", 32767), ("int32", 2147483647)):
        if n < top:
            return dtype
    return "int64"


def writable(cols: Mapping[str, np.ndarray | Labels]) -> bool:
    """Whether this module writes these columns as pandas would (otherwise pandas writes)."""
    if not cols:
        return False
    for value in cols.values():
        if isinstance(value, Labels):
            if not value.categories:  # pandas writes a column of type null then
                return False
        elif getattr(value, "ndim", 0) != 1 or str(value.dtype) not in _KINDS:
            return False
    return len({len(v.codes if isinstance(v, Labels) else v) for v in cols.values()}) == 1


@functools.cache
def _pandas_version() -> str:
    """The version pandas would write, from its installed metadata as importlib.metadata finds
    it (the first pandas-*.dist-info on sys.path), without importing importlib.metadata: that
    costs 10-20 ms of a short run."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.lower().startswith("pandas-") and name.endswith(".dist-info"):
                try:
                    with open(os.path.join(entry or ".", name, "METADATA"), encoding="utf-8") as f:
                        for line in f:
                            if line.startswith("Version:"):
                                return line.split(":", 1)[1].strip()
                            if not line.strip():
                                break  # the end of the headers
                except OSError:
                    pass
    from importlib.metadata import version

    return version("pandas")


def _array(pa, np, values: np.ndarray, valid: np.ndarray | None = None):
    """An Arrow array over a numpy array (null where ``valid`` is False). Not ``pa.array``:
    that imports pandas to ask whether its argument is a pandas object."""
    validity = None
    if valid is not None and not valid.all():
        validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
    if values.dtype == np.bool_:
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
        kind = pa.bool_()
    else:
        data = pa.py_buffer(np.ascontiguousarray(values))
        kind = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(kind, len(values), [validity, data])


def _strings(pa, np, names: list[str]):
    """large_string, the type of pandas' str dtype (pyarrow storage)."""
    data = [n.encode("utf-8") for n in names]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
    return pa.Array.from_buffers(pa.large_string(), len(data), buffers)


def arrow_table(cols: Mapping[str, np.ndarray | Labels]):
    """As ``pa.Table.from_pandas(pd.DataFrame(cols), preserve_index=False)``: NaN as null, the
    pandas metadata included."""
    import numpy as np
    import pyarrow as pa

    arrays = []
    described = []
    for name, value in cols.items():
        if isinstance(value, Labels):
            dtype = _codes_dtype(len(value.categories))
            codes = value.codes.astype(dtype)
            arrays.append(
                pa.DictionaryArray.from_arrays(
                    _array(pa, np, codes, codes != -1),
                    _strings(pa, np, value.categories),
                    ordered=False,
                )
            )
            kind, numpy_type = "categorical", dtype
            meta = {"num_categories": len(value.categories), "ordered": False}
        else:
            valid = ~np.isnan(value) if value.dtype.kind == "f" else None
            arrays.append(_array(pa, np, value, valid))
            kind = numpy_type = _KINDS[str(value.dtype)]
            meta = None
        described.append(
            {
                "name": name,
                "field_name": name,
                "pandas_type": kind,
                "numpy_type": numpy_type,
                "metadata": meta,
            }
        )
    pandas_meta = {
        "index_columns": [],
        "column_indexes": [],
        "columns": described,
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": _pandas_version(),
    }
    return pa.Table.from_arrays(
        arrays, names=list(cols), metadata={b"pandas": json.dumps(pandas_meta).encode("utf8")}
    )


def write_parquet(cols: Mapping[str, np.ndarray | Labels], path: Path) -> None:
    """As ``pd.DataFrame(cols).to_parquet(path, index=False)`` (snappy, NaN as null)."""
    import pyarrow.parquet as pq

    with open(path, "wb") as f:
        pq.write_table(arrow_table(cols), f, compression="snappy")


def write_csv(cols: Mapping[str, np.ndarray | Labels], path: Path) -> None:
    """As ``pd.DataFrame(cols).to_csv(path, index=False)``: floats as numpy prints them, NaN
    and missing labels empty, booleans True/False."""
    import numpy as np

    values = []
    for value in cols.values():
        if isinstance(value, Labels):
            names = value.categories
            values.append([names[c] if c >= 0 else "" for c in value.codes.tolist()])
        elif value.dtype.kind == "f":
            text = value.astype(str)
            text[np.isnan(value)] = ""
            values.append(text.tolist())
        else:
            values.append(value.tolist())
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(list(cols))
        writer.writerows(zip(*values, strict=True))


def label_strings(value: Labels) -> list[str]:
    """Each row's label as ``str()`` of pandas' Categorical value gives it ('nan' if none)."""
    return [value.categories[c] if c >= 0 else "nan" for c in value.codes.tolist()]
