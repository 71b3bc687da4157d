"""Packet captures (``--pcap`` / ``pcap=``): option form, output placement, errors.

The Python side is exercised with a stand-in for ``_core.run`` that follows the contract of
sim/CORE_API.md (one file per port in ``pcap_dir``, '/' in a label becomes '_'). The test on the
real core covers every registered fabric: it either rejects an unknown port or says it writes
no captures, and one that captures writes valid pcap files (what they hold: test_tshark.py for
roce, test_tshark_fc.py for fc).
"""

import struct
from pathlib import Path

import lfsim._core as real_core
import pytest
import yaml

import lfsim
from lfsim import core as lfcore
from lfsim.paths import scenarios_dir
from lfsim.runner import parse_pcap

PCAP_MAGICS = {0xA1B2C3D4, 0xA1B23C4D}  # microsecond and nanosecond resolution


def test_pcap_forms():
    assert parse_pcap("all") == ["all"]
    assert parse_pcap("h0, leaf0/p1") == ["h0", "leaf0/p1"]
    assert parse_pcap(["h1", "h1", "h2"]) == ["h1", "h2"]
    for bad in ("", "h0,", "h0,,h1", "all,h0", "h 0", ["h0", ""], ["a,b"], 5, [1]):
        with pytest.raises(lfsim.ScenarioError) as err:
            parse_pcap(bad)
        assert str(err.value).startswith("pcap: got ")


def test_pcap_needs_an_output_directory():
    with pytest.raises(lfsim.ScenarioError, match=r"^pcap: needs an output directory"):
        lfsim.run("fc_distance", pcap="all")


class FakeCore:
    """``_core`` with a ``run`` that writes a pcap header per requested port, as a fabric does
    after ``CheckPcapPorts``; everything else is the real extension."""

    LABELS = ["h0", "h1", "sw0/p0", "sw0/p1"]

    def __init__(self):
        self.configs = []

    def __getattr__(self, name):
        return getattr(real_core, name)

    def run(self, config, progress=None):
        self.configs.append(config)
        pcap_dir = config.get("pcap_dir")
        ports = config.get("pcap_ports") or []
        for p in ports:
            if p != "all" and p not in self.LABELS:
                raise ValueError(
                    f"--pcap: port '{p}' does not exist; accepted: all or a comma-separated "
                    f"list of: {', '.join(self.LABELS)}"
                )
        if pcap_dir:
            for label in self.LABELS:
                if "all" in ports or label in ports:
                    path = Path(pcap_dir) / (label.replace("/", "_") + ".pcap")
                    path.write_bytes(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        return {"sim_time_s": 1e-3, "events": 1, "metrics": {}, "series": {}, "tables": {}}


@pytest.fixture
def fake_core(monkeypatch):
    fake = FakeCore()
    monkeypatch.setattr(lfcore, "core", lambda: fake)
    return fake


def test_captures_land_in_out_pcap(fake_core, tmp_path):
    out = tmp_path / "run"
    r = lfsim.run("fc_distance", out=out, pcap="h1,sw0/p1")
    cfg = fake_core.configs[-1]
    assert cfg["pcap_ports"] == ["h1", "sw0/p1"]
    # C++ wrote into the temporary directory that then became the output.
    assert Path(cfg["pcap_dir"]).parent != out and Path(cfg["pcap_dir"]).name == "pcap"
    assert r.pcap_files == [out / "pcap" / "h1.pcap", out / "pcap" / "sw0_p1.pcap"]
    assert all(p.is_file() for p in r.pcap_files)
    assert r.summary["pcap_files"] == ["pcap/h1.pcap", "pcap/sw0_p1.pcap"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["run"]
    # A run without captures passes no capture keys.
    lfsim.run("fc_distance", out=tmp_path / "plain")
    assert "pcap_dir" not in fake_core.configs[-1]
    assert not (tmp_path / "plain" / "pcap").exists()


def test_cli_pcap_all(fake_core, tmp_path, monkeypatch, capsys):
    from lfsim.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["run", "fc_distance", "--pcap", "all", "--out", "o"]) == 0
    assert sorted(p.name for p in (tmp_path / "o" / "pcap").iterdir()) == [
        "h0.pcap",
        "h1.pcap",
        "sw0_p0.pcap",
        "sw0_p1.pcap",
    ]
    assert "packet captures: 4 files in o/pcap" in capsys.readouterr().out


def test_unknown_port_is_one_line_and_leaves_nothing(fake_core, tmp_path, monkeypatch, capsys):
    from lfsim.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["run", "fc_distance", "--pcap", "h0,h9", "--out", "deep/er/o"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "lfsim: error: --pcap: port 'h9' does not exist; accepted: all or a comma-separated "
        "list of: h0, h1, sw0/p0, sw0/p1"
    ]
    assert list(tmp_path.iterdir()) == []  # not even the parent directories


def _one_scenario_per_fabric():
    seen = {}
    for path in sorted(scenarios_dir().glob("*.yaml")):
        raw = yaml.safe_load(path.read_text())
        fabric = raw.get("fabric") if isinstance(raw, dict) else None
        if fabric and fabric not in seen:
            seen[fabric] = path.stem
    return sorted(seen.items())


WARMUP_CLASS = {"roce": ("Report",), "fc": ("Report",)}


@pytest.mark.parametrize(("fabric", "scenario"), _one_scenario_per_fabric())
def test_every_fabric_checks_the_requested_ports(cli, tmp_path, fabric, scenario):
    p = cli("run", scenario, "--pcap", "no_such_port", "--out", "o")
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr
    captures = "--pcap: port 'no_such_port' does not exist; accepted: all or a" in lines[0]
    if not captures:
        assert f"--pcap: fabric {fabric} writes no packet captures" in lines[0]
    assert list(tmp_path.iterdir()) == []
    if captures:
        # A short run; statistics windows (Warmup) would outlast it, so they start at 0.
        warmup = [f"--set={cls}.Warmup=0s" for cls in WARMUP_CLASS.get(fabric, ())]
        p = cli("run", scenario, "--pcap", "all", "--set", "stop_time=100us", *warmup, "--out", "o")
        assert p.returncode == 0, p.stderr
        files = sorted((tmp_path / "o" / "pcap").glob("*.pcap"))
        assert files
        for f in files:
            magic = f.read_bytes()[:4]
            assert {struct.unpack("<I", magic)[0], struct.unpack(">I", magic)[0]} & PCAP_MAGICS
