"""One sweep point in a fresh interpreter: ``python -m lfsim._worker IN OUT``.

IN holds the pickled core configuration; OUT receives a pickled ``{"ok": result}`` or
``{"error": kind, "message": text}``. A separate interpreter started this way (not a
multiprocessing child) never re-imports the caller's ``__main__``, so a script calling
``lfsim.sweep`` needs no ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import os
import pickle
import sys
import time


def run_point(core_config: dict) -> dict:
    """One simulation; only scalar results travel back."""
    from . import core as _core

    t0 = time.perf_counter()
    raw = _core.core().run(core_config, None)
    wall = time.perf_counter() - t0
    metrics = {}
    bools = []  # the boolean metrics, named so that the printed table says yes/no
    for k, v in (raw.get("metrics") or {}).items():
        if hasattr(v, "ndim") and v.ndim == 0:
            v = v.item()
        # As the core typed them: a count stays an int, a flag a bool (not 0.0/1.0).
        if isinstance(v, str | int | float):
            metrics[str(k)] = v
            if isinstance(v, bool):
                bools.append(str(k))
    return {"metrics": metrics, "bools": bools, "wall_time_s": wall, "events": int(raw["events"])}


def main(argv: list[str]) -> int:
    src, dst = argv
    with open(src, "rb") as f:
        config = pickle.load(f)
    try:
        reply = {"ok": run_point(config)}
    except ValueError as exc:  # the core's std::invalid_argument: bad input found late
        reply = {"error": "value", "message": str(exc)}
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it
        reply = {"error": "simulation", "message": f"{type(exc).__name__}: {exc}"}
    tmp = f"{dst}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(reply, f)
    os.replace(tmp, dst)  # the parent sees a whole reply or none
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
