"""Writes the table of metrics in docs/usage.md ("Metrics and units") from lfsim.metrics, the one
list of every metric's unit, type and meaning (which ``lfsim run``'s summary groups by). The
table sits between the markers <!-- metrics --> and <!-- /metrics -->; ``--check`` fails if it
differs from what lfsim.metrics gives.

Run: .venv/bin/python scripts/metric_table.py [--check]"""

from __future__ import annotations

import sys
from pathlib import Path

from lfsim.metrics import markdown_table

DOC = Path(__file__).resolve().parents[1] / "docs" / "usage.md"
BEGIN, END = "<!-- metrics -->", "<!-- /metrics -->"


def updated(text: str) -> str:
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise SystemExit(f"{DOC}: needs one {BEGIN} and one {END}")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{markdown_table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    new = updated(text)
    if "--check" in argv:
        if new != text:
            print(f"{DOC}: the metrics table is stale; run scripts/metric_table.py")
            return 1
        return 0
    if new != text:
        DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
