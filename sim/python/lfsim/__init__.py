"""lfsim: discrete-event simulator for lossless storage fabrics (ns-3.37 core).

    import lfsim
    r = lfsim.run("fc_distance", {"FcChannel.Length": 5000}, seed=2)
    r.metrics, r.timeseries("credits"), r.table(...)
    df = lfsim.sweep("fc_distance", {"FcNetDevice.BbCredit": [4, 8, 16]})
    r = lfsim.run("incast", {"mode": "pfc"}, out="results/x", pcap="all")  # modes, captures
    df = lfsim.sweep("incast", {"mode": ["lossy", "pfc"]})

Scenarios are YAML files (see scenarios/); every parameter is an ns-3 attribute named as in
C++. Bad input raises ``lfsim.ScenarioError`` with a one-line message.
"""

# The names below are imported on first use (PEP 562), not here: the `lfsim` command imports
# this package before it starts itself again in the simulation's environment (lfsim._env), and
# the loader and the runner would otherwise be imported twice per run.
import importlib
import sys
import types
from typing import TYPE_CHECKING

from ._version import __version__

_WHERE = {
    "CoreUnavailable": "errors",
    "ScenarioError": "errors",
    "SimulationError": "errors",
    "Result": "runner",
    "run": "runner",
    "Scenario": "scenario",
    "list_scenarios": "scenario",
    "load_scenario": "scenario",
    "sweep": "sweep",
}

__all__ = [
    "CoreUnavailable",
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "list_scenarios",
    "load_scenario",
    "run",
    "sweep",
]

if TYPE_CHECKING:
    from .errors import CoreUnavailable, ScenarioError, SimulationError
    from .runner import Result, run
    from .scenario import Scenario, list_scenarios, load_scenario
    from .sweep import sweep


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    else:
        try:  # a submodule, as lfsim.scenario was after `import lfsim` when imported eagerly
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value) -> None:
        # Importing the submodule lfsim.sweep sets the attribute `sweep` of this package to
        # that module; `lfsim.sweep` stays the function, as when it was imported eagerly.
        if name == "sweep" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
