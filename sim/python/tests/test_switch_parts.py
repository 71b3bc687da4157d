"""RoceSwitch is built of parts (SwitchMmu, SwitchMarker, PfcWatchdog: issue 39), each an ns-3
object declaring its own attributes. A scenario, ``--set`` and Python keep writing them as
RoceSwitch's, as before the split; each is declared once, by its part."""

from __future__ import annotations

import pytest

import lfsim
from lfsim import core
from lfsim.errors import ScenarioError

# RoceSwitch's attributes before the split (commit bbbd8ec), by the part that declares them now.
BEFORE = {
    "ns3::SwitchMmu": [
        "BufferSize",
        "ReservedBytes",
        "Alpha",
        "Headroom",
        "XonOffset",
        "PfcEnabled",
        "LosslessPriorities",
        "PauseQuanta",
    ],
    "ns3::SwitchMarker": ["EcnEnabled", "Kmin", "Kmax", "Pmax", "EcnMarkingPoint"],
    "ns3::RoceSwitch": ["ForwardingLatency", "TrustPcp", "DscpMap"],
    "ns3::PfcWatchdog": [
        "PfcWatchdog",
        "PfcWatchdogDetectionTime",
        "PfcWatchdogRestorationTime",
        "PfcWatchdogAction",
    ],
}


def test_every_key_of_before_the_split_is_still_roceswitchs_and_declared_once():
    listed = {a["name"]: a["declared_by"] for a in core.attributes("ns3::RoceSwitch")}
    assert listed == {name: owner for owner, names in BEFORE.items() for name in names}
    # Each part declares its own and nothing else; RoceSwitch's own list is the rest.
    for owner, names in BEFORE.items():
        own = [a["name"] for a in core.attributes(owner) if a["declared_by"] == owner]
        assert own == names, owner


def _marks(**switch) -> int:
    r = lfsim.run(
        "incast", {"mode": "pfc_ecn", **{f"RoceSwitch.{k}": v for k, v in switch.items()}}
    )
    return r.metrics["ecn_marked"]


def test_a_parts_key_set_under_roceswitch_reaches_the_part():
    # SwitchMarker's Kmin/Kmax as RoceSwitch's: no queue of incast@pfc_ecn reaches 100 MB.
    assert _marks() > 0
    assert _marks(Kmin="100000000", Kmax="100000000") == 0
    # SwitchMmu's BufferSize as RoceSwitch's: the lossy incast (PfcEnabled false, also the
    # MMU's) drops 124 frames with 12 MiB switches, thousands with 700 kB ones.
    lossy = lfsim.run("incast", {"mode": "lossy"}).metrics["drops"]
    small = lfsim.run("incast", {"mode": "lossy", "RoceSwitch.BufferSize": "700000"})
    assert 0 < lossy < small.metrics["drops"]
    assert lfsim.run("incast", {"mode": "pfc"}).metrics["drops"] == 0


def test_a_parts_value_is_checked_by_its_part_under_roceswitchs_name():
    with pytest.raises(ScenarioError) as e:
        lfsim.load_scenario("incast", {"RoceSwitch.PauseQuanta": 1})
    assert str(e.value).endswith(
        "RoceSwitch.PauseQuanta: got '1'; accepted: an integer in 2..65535"
    )
    with pytest.raises(ScenarioError) as e:
        lfsim.load_scenario("incast", {"RoceSwitch.EcnMarkingPoint": "Later"})
    assert str(e.value).endswith(
        "RoceSwitch.EcnMarkingPoint: got 'Later'; accepted: one of Enqueue|Dequeue"
    )
    # A name no part declares is refused, the accepted names the parts' too.
    with pytest.raises(ScenarioError, match=r"RoceSwitch\.Kmid does not exist; accepted: .*Kmin"):
        lfsim.load_scenario("incast", {"RoceSwitch.Kmid": 1})
