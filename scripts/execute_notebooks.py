"""Executes notebooks top to bottom and saves them with their outputs, so that their figures show
on a code host (``make notebooks-outputs``). ``make test`` re-executes them (pytest --nbmake)
without saving. Every notebook in notebooks/ unless some are named.

Outputs are kept reproducible: no per-cell timing metadata, and the kernel's own metadata as
the notebook already had it. A notebook that fails is not written and the script exits 1.

Run: .venv/bin/python scripts/execute_notebooks.py [notebooks/NAME.ipynb ...]"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 1800  # per cell; the longest cells run sweeps


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=TIMEOUT_S,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},  # cells run in notebooks/
    )
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    nbformat.validate(nb)
    nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    failed = []
    for path in paths:
        start = time.monotonic()
        try:
            execute(path)
        except CellExecutionError as exc:
            failed.append(path)
            print(f"{path}: FAILED, not written\n{exc}", file=sys.stderr)
            continue
        print(f"{path}: executed and saved in {time.monotonic() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
