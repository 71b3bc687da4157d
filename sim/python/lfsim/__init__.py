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

from ._version import __version__
from .errors import CoreUnavailable, ScenarioError, SimulationError
from .runner import Result, run
from .scenario import Scenario, list_scenarios, load_scenario
from .sweep import sweep

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
