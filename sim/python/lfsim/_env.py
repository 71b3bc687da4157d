"""The process environment a simulation runs best in, for the processes lfsim starts itself (the
CLI, a sweep's points, make bench).

- ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``: malloc asks for transparent huge pages for its heap.
  A large fabric's per-packet state (ports, queues, packets, events) spreads over tens of MiB;
  with 4 KiB pages nearly every event misses the TLB. Measured on an open-loop load over 1,024
  hosts: 0.71 of the wall time (docs/bench.md); no change on small fabrics. glibc reads it only
  at process start, so it cannot be set from inside a running interpreter.
- ``OPENBLAS_NUM_THREADS=1``: a simulation is one thread; numpy's BLAS pool would only compete
  with it for the cores.
"""

from __future__ import annotations

import os
import sys

HUGETLB = "glibc.malloc.hugetlb=1"


def simulation_env(base: dict | None = None) -> dict:
    env = dict(os.environ if base is None else base)
    tunables = env.get("GLIBC_TUNABLES", "")
    if "glibc.malloc.hugetlb" not in tunables:
        env["GLIBC_TUNABLES"] = f"{tunables}:{HUGETLB}" if tunables else HUGETLB
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def reexec_in_simulation_env() -> None:
    """Starts this command again (same process id, same arguments) with simulation_env() when
    the process did not start with it; returns without doing anything when it did."""
    if "glibc.malloc.hugetlb" in os.environ.get("GLIBC_TUNABLES", ""):
        return
    os.execve(sys.executable, [sys.executable, "-m", "lfsim", *sys.argv[1:]], simulation_env())
