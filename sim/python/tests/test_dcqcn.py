"""DCQCN from YAML, CLI and Python: presets, and what it does to the incast scenario."""

import pandas as pd
import pytest

import lfsim
from lfsim import core as lfcore

KMIN = 5 * 1024  # RoceSwitch defaults: the paper's marking band
KMAX = 200 * 1024


def _preset(name):
    return {(t, a): v for t, a, v in lfcore.presets("ns3::Dcqcn")[name]["values"]}


@pytest.mark.parametrize("preset", ["paper", "nic_default"])
def test_a_preset_sets_every_value_it_names(preset):
    sc = lfsim.load_scenario("dcqcn", {"Dcqcn.Preset": preset})
    want = _preset(preset)
    assert ("ns3::RdmaNic", "CnpInterval") in want  # the notification point is in the preset
    for (type_id, attr), value in want.items():
        assert sc.config[lfcore.short_name(type_id)][attr] == value, (type_id, attr)
    assert "Preset" not in sc.config["Dcqcn"]  # the values are kept, not the key


def test_presets_differ_where_the_paper_and_the_firmware_differ():
    paper, nic = _preset("paper"), _preset("nic_default")
    assert paper[("ns3::Dcqcn", "rpg_ai_rate")] == "40Mbps"
    assert nic[("ns3::Dcqcn", "rpg_ai_rate")] == "5Mbps"
    assert paper[("ns3::Dcqcn", "dce_tcp_g")] == "1020"  # g = 1/256
    assert nic[("ns3::Dcqcn", "rpg_time_reset")] == "300us"


def test_explicit_values_beat_the_preset_in_any_class():
    sc = lfsim.load_scenario(
        "dcqcn",
        {
            "Dcqcn.Preset": "nic_default",
            "Dcqcn.rpg_ai_rate": "10Mbps",
            "RdmaNic.CnpInterval": "7us",
        },
    )
    assert sc.config["Dcqcn"]["rpg_ai_rate"] == "10Mbps"
    assert sc.config["RdmaNic"]["CnpInterval"] == "7us"
    assert (
        sc.config["Dcqcn"]["rpg_hai_rate"] == _preset("nic_default")[("ns3::Dcqcn", "rpg_hai_rate")]
    )


def test_the_resolved_config_reruns_identically(tmp_path):
    short = {"stop_time": "3ms", "Report.Warmup": "1ms"}
    first = lfsim.run("dcqcn", {"Dcqcn.Preset": "nic_default", **short}, out=tmp_path / "a")
    again = lfsim.run(tmp_path / "a" / "config.yaml", out=tmp_path / "b")
    assert again.config == first.config
    assert again.metrics == first.metrics


def test_an_unknown_preset_is_one_line_exit_2_and_nothing_written(cli, tmp_path):
    r = cli("run", "dcqcn", "--set", "Dcqcn.Preset=fast", "--out", "out")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert "Dcqcn.Preset" in lines[0] and "paper, nic_default" in lines[0]
    assert not (tmp_path / "out").exists()


def test_preset_on_a_class_without_presets_is_an_unknown_attribute():
    with pytest.raises(lfsim.ScenarioError, match=r"RoceSwitch\.Preset does not exist"):
        lfsim.load_scenario("dcqcn", {"RoceSwitch.Preset": "paper"})
    with pytest.raises(lfsim.ScenarioError, match=r"accepted: .*Preset"):
        lfsim.load_scenario("dcqcn", {"Dcqcn.rpg_nonsense": "1"})


def test_same_seed_same_output_other_seed_other_marks():
    a = lfsim.run("dcqcn", {"stop_time": "5ms", "Report.Warmup": "1ms"})
    b = lfsim.run("dcqcn", {"stop_time": "5ms", "Report.Warmup": "1ms"})
    c = lfsim.run("dcqcn", {"stop_time": "5ms", "Report.Warmup": "1ms"}, seed=2)
    assert a.metrics == b.metrics
    pd.testing.assert_frame_equal(a.timeseries("cc"), b.timeseries("cc"))
    assert a.metrics["ecn_marked"] != c.metrics["ecn_marked"]  # RED marking draws from the seed


def test_cuts_follow_cnps_and_alpha_stays_in_range():
    r = lfsim.run("dcqcn", {"stop_time": "5ms", "Report.Warmup": "1ms"})
    cc = r.timeseries("cc")
    assert r.metrics["cnps_sent"] > 0
    assert cc["alpha"].between(0, 1).all()
    assert (cc["current_Gbps"] <= cc["target_Gbps"] + 1e-9).all()  # R_C never passes R_T
    assert cc["current_Gbps"].min() < 40 * 0.9  # the flows were cut


# ---------------------------------------------------------------------------------------------
# The incast scenario: 16 senders and a victim on a 2-leaf x 4-spine 25GbE fabric.

LONG = "30ms"  # DCQCN recovers by R_AI per T: ~0.7 Gb/s per ms with the paper's values
VICTIM = "h17>h18"  # the flow of workload victim: h17 (leaf 1) -> h18 (leaf 0)


@pytest.fixture(scope="module")
def incast():
    rec = {"record": ["queue", "goodput"]}
    return {
        "pfc": lfsim.run("incast", {"mode": "pfc", **rec}),
        "pfc_dcqcn": lfsim.run("incast", {"mode": "pfc_dcqcn", **rec}),
        "pfc_long": lfsim.run("incast", {"mode": "pfc", "stop_time": LONG, **rec}),
        "dcqcn_long": lfsim.run("incast", {"mode": "pfc_dcqcn", "stop_time": LONG, **rec}),
        # The victim's path without the incast: one incast sender only.
        "alone_long": lfsim.run(
            "incast", {"mode": "pfc", "stop_time": LONG, "workload.incast.Hosts": "h1", **rec}
        ),
    }


def _bottleneck_queue(r, after_s):
    q = r.timeseries("queue")
    q = q[(q["label"] == r.metrics["bottleneck_port"]) & (q["time_s"] >= after_s)]
    return q["bytes"]


def test_dcqcn_cuts_pfc_pauses_by_an_order_of_magnitude(incast):
    pfc, dcqcn = incast["pfc"], incast["pfc_dcqcn"]
    assert pfc.metrics["pause_frames_sent"] >= 10
    assert dcqcn.metrics["pause_frames_sent"] * 10 <= pfc.metrics["pause_frames_sent"]
    assert dcqcn.metrics["drops"] == 0 and pfc.metrics["drops"] == 0


def test_the_bottleneck_queue_sits_in_the_marking_band_not_at_the_pfc_threshold(incast):
    pfc = _bottleneck_queue(incast["pfc"], 1e-3)
    # PFC alone: the queue holds megabytes, far above the marking band.
    assert pfc.median() > 10 * KMAX
    # DCQCN, once the start burst's queue (1.7 MB) has drained and the flows have climbed back
    # from the cuts it caused (the paper's notification point cuts every flow every 50 us while
    # the queue is above Kmax): the queue moves around the band, its median inside, most of the
    # time below Kmax, and it does rise above Kmin (the marks that drive the control).
    dcqcn = _bottleneck_queue(incast["dcqcn_long"], 5e-3)
    assert KMIN <= dcqcn.median() <= KMAX
    assert (dcqcn <= KMAX).mean() >= 0.8
    assert (dcqcn > KMIN).mean() >= 0.3
    assert KMIN / 1024 <= incast["dcqcn_long"].metrics["mean_queue_KiB"] <= KMAX / 1024


def test_the_victim_recovers_most_of_its_goodput(incast):
    """The start burst congests the uplinks the victim shares, so DCQCN cuts it too; it then
    climbs back by additive increase. Over the last 5 ms of a 30 ms run it gets most of what it
    gets alone, and clearly more than under PFC, whose pauses keep spreading to it."""

    def late_victim(r):
        g = r.timeseries("goodput")
        g = g[(g["label"] == VICTIM) & (g["time_s"] > 25e-3)]
        return g["goodput_Gbps"].mean()

    alone = late_victim(incast["alone_long"])
    dcqcn = late_victim(incast["dcqcn_long"])
    pfc = late_victim(incast["pfc_long"])
    assert alone > 20  # a 25GbE path to itself
    assert dcqcn >= 0.6 * alone
    assert dcqcn >= 1.3 * pfc


def test_a_marking_band_upside_down_is_bad_input(cli, tmp_path):
    r = cli("run", "dcqcn", "--set", "RoceSwitch.Kmin=300000", "--out", "out")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "lfsim: error: RoceSwitch.Kmin: got 300000 above Kmax 204800; accepted: Kmin <= Kmax "
        "(bytes)"
    ]
    assert not (tmp_path / "out").exists()
