"""The ``lfsim`` command end to end, through a subprocess, on the real simulator."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import MODES_YAML, SMALL

import lfsim


def _summary(out):
    return json.loads((out / "summary.json").read_text())


def test_run_writes_summary_config_and_series(cli, tmp_path):
    out = tmp_path / "r"
    p = cli("run", "fc_distance", *SMALL, "--set", "record=credits,rx_buffers", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert str(out) in p.stdout and "throughput_MiBps" in p.stdout

    s = _summary(out)
    for key in ("scenario", "seed", "sim_time_s", "wall_time_s", "events", "metrics"):
        assert key in s
    assert s["scenario"] == "fc_distance" and s["fabric"] == "fc"
    assert s["lfsim_version"] == lfsim.__version__
    assert s["sim_time_s"] == pytest.approx(2e-3)
    assert s["events"] > 0

    cfg = yaml.safe_load((out / "config.yaml").read_text())
    assert cfg["stop_time"] == "2ms" and cfg["Report"]["Warmup"] == "200us"
    assert cfg["record"] == ["credits", "rx_buffers"]
    assert "FcSwitch" in cfg  # every class, even one this topology does not use

    for name in ("credits", "rx_buffers"):
        df = pd.read_parquet(out / "series" / f"{name}.parquet")
        assert list(df.columns[:3]) == ["time_s", "id", "label"]
        assert len(df) > 0
        # Labels name the ports; every id has one.
        assert df["label"].notna().all()
        assert df.groupby("id")["label"].nunique().eq(1).all()
        assert df["time_s"].is_monotonic_increasing
        assert df["time_s"].max() <= 2e-3
    # Nothing else left next to the output (the temporary directory was renamed).
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r"]


def test_credit_series_respects_bb_credit(cli, tmp_path):
    """Protocol check on the written series: available credit stays within 0..BB_Credit."""
    out = tmp_path / "r"
    p = cli(
        "run",
        "fc_distance",
        *SMALL,
        "--set",
        "FcNetDevice.BbCredit=5",
        "--out",
        str(out),
        "--quiet",
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    credits = pd.read_parquet(out / "series" / "credits.parquet")["credits"]
    assert credits.min() >= 0 and credits.max() == 5


RERUNS = {
    "builtin": ("fc_distance", [*SMALL], None),
    # A mode that changes an attribute, and an override on top of it.
    "mode": ("modes.yaml", ["--set", "mode=far", "--set", "FcChannel.Length=5000"], "far"),
}


@pytest.mark.parametrize("case", list(RERUNS))
def test_rerun_of_config_yaml_reproduces_metrics(cli, tmp_path, case):
    scenario, args, mode = RERUNS[case]
    (tmp_path / "modes.yaml").write_text(MODES_YAML)
    a, b = tmp_path / "a", tmp_path / "b"
    p = cli("run", scenario, *args, "--seed", "3", "--out", str(a))
    assert p.returncode == 0, p.stderr
    p = cli("run", str(a / "config.yaml"), "--out", str(b))
    assert p.returncode == 0, p.stderr
    assert _summary(a)["metrics"] == _summary(b)["metrics"]
    assert _summary(b)["seed"] == 3 and _summary(b)["scenario"] == Path(scenario).stem
    assert _summary(a)["mode"] == _summary(b)["mode"] == mode
    if mode:
        cfg = yaml.safe_load((a / "config.yaml").read_text())
        assert cfg["mode"] == mode and cfg["modes"] == {mode: {}}
        # far's BbCredit and the override's Length are merged into the classes.
        assert cfg["FcNetDevice"]["BbCredit"] == "2" and cfg["FcChannel"]["Length"] == "5000"
        assert f"mode {mode}" in p.stdout
    # The resolved configuration is a fixed point.
    assert yaml.safe_load((a / "config.yaml").read_text()) == yaml.safe_load(
        (b / "config.yaml").read_text()
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(a / "series" / "credits.parquet"),
        pd.read_parquet(b / "series" / "credits.parquet"),
    )


def test_same_seed_twice_gives_identical_metrics(cli, tmp_path):
    for d in ("x", "y"):
        p = cli("run", "fc_incast", "--set", "stop_time=3ms", "--seed", "5", "--out", d)
        assert p.returncode == 0, p.stderr
    assert _summary(tmp_path / "x")["metrics"] == _summary(tmp_path / "y")["metrics"]


def test_default_out_dir_and_replacement(cli, tmp_path):
    # results/<scenario>[-<mode>][-<hash of the overrides>]: the same run replaces its own
    # folder, another mode or other overrides write another one (issue 19: a run never
    # overwrites another silently).
    assert cli("run", "fc_distance", *SMALL, "--quiet").returncode == 0
    (out,) = (tmp_path / "results").iterdir()
    assert re.fullmatch(r"fc_distance-[0-9a-f]{8}", out.name), out.name
    first = _summary(out)
    (out / "stale.txt").write_text("from an earlier run")
    assert cli("run", "fc_distance", *SMALL, "--quiet").returncode == 0
    assert not (out / "stale.txt").exists()  # the directory was replaced, not merged
    p = cli("run", "fc_distance", *SMALL, "--set", "FcNetDevice.BbCredit=2", "--quiet")
    assert p.returncode == 0, p.stderr
    (other,) = set((tmp_path / "results").iterdir()) - {out}
    # 10 km at 2GFC: 2 credits cannot cover the round trip that 8 nearly do.
    assert _summary(other)["metrics"]["throughput_MiBps"] < first["metrics"]["throughput_MiBps"]
    timings = {k: v for k, v in _summary(out).items() if "wall" in k}  # wall clock
    assert _summary(out) == first | timings


def test_a_mode_is_named_and_a_rerun_lands_beside_its_folder(cli, tmp_path):
    small = ["--set", "stop_time=1ms", "--set", "Report.Warmup=100us", "--quiet"]
    for mode in ("fc", "pfc"):
        assert cli("run", "incast", "--set", f"mode={mode}", *small).returncode == 0
    names = sorted(x.name for x in (tmp_path / "results").iterdir())
    assert [n.rsplit("-", 1)[0] for n in names] == ["incast-fc", "incast-pfc"]
    first = tmp_path / "results" / names[0]
    assert cli("run", str(first / "config.yaml"), "--quiet").returncode == 0
    rerun = first.with_name(f"{first.name}-rerun")
    assert _summary(rerun)["metrics"] == _summary(first)["metrics"]
    assert len(list((tmp_path / "results").iterdir())) == 3  # the original is untouched


def test_plot_writes_one_png_per_series_and_table(cli, tmp_path):
    p = cli("run", "fc_incast", "--set", "stop_time=3ms", "--out", "inc", "--plot", "--quiet")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "inc"
    s = _summary(out)
    assert s["series"] and s["tables"]
    pngs = sorted(x.stem for x in (out / "plots").glob("*.png"))
    # The links table is drawn as the topology and a histogram of the links' utilisation.
    assert "links" in s["tables"]
    assert pngs == sorted({*s["series"], *s["tables"], "topology", "link_util"} - {"links"})
    for png in (out / "plots").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for table in s["tables"]:
        df = pd.read_parquet(out / f"{table}.parquet")
        csv = pd.read_csv(out / f"{table}.csv")
        assert list(csv.columns) == list(df.columns)
        assert len(csv) == len(df)


def test_plot_of_a_run_with_flows_has_their_slowdown_by_size(cli, tmp_path):
    p = cli("run", "incast", "--set", "stop_time=1100us", "--out", "inc", "--plot", "--quiet")
    assert p.returncode == 0, p.stderr
    plots = tmp_path / "inc" / "plots"
    for name in ("flows", "slowdown_by_size", "link_util", "topology", "switches"):
        assert (plots / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name


def test_list_and_version(cli):
    p = cli("list")
    assert p.returncode == 0
    names = [line.split()[0] for line in p.stdout.splitlines()]
    assert "fc_distance" in names
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("fc_distance "))
    assert lfsim.list_scenarios()["fc_distance"] in line
    v = cli("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"lfsim {lfsim.__version__}"
    m = subprocess.run([sys.executable, "-m", "lfsim", "--version"], capture_output=True, text=True)
    assert m.returncode == 0 and m.stdout == v.stdout


BAD_FILES = {
    "unknown_key.yaml": "fabric: fc\nstop_time: 1ms\nfoo: 1\n",
    "bad_yaml.yaml": "fabric: fc\nstop_time: [1ms\n",
    "bad_fabric.yaml": "fabric: nosuch\nstop_time: 1ms\n",
    "bad_section.yaml": "fabric: fc\nstop_time: 1ms\nFcNetDevice: 5\n",
    "duplicate.yaml": "fabric: fc\nstop_time: 1ms\nstop_time: 2ms\n",
    "missing_stop.yaml": "fabric: fc\n",
    "not_mapping.yaml": "- fabric\n- fc\n",
    "modes.yaml": MODES_YAML,
    "bad_modes.yaml": "fabric: fc\nstop_time: 1ms\nmodes: [a, b]\n",
}

BAD_INPUTS = [
    (
        ["run", "fc_distance", "--set", "FcNetDevice.BbCredit=-3"],
        "FcNetDevice.BbCredit: got '-3'; accepted: an integer in 1..32767",
    ),
    (
        ["run", "fc_distance", "--set", "FcNetDevice.Foo=1"],
        "FcNetDevice.Foo does not exist; accepted: BbCredit, ",
    ),
    (
        ["run", "fc_distance", "--set", "stop_time=5 parsecs"],
        "stop_time: got '5 parsecs'; accepted: a time > 0 with a unit (d, h, min, s, ms, us, ns, "
        "ps), e.g. 2ms",
    ),
    (["run", "fc_distance", "--set", "sample_interval=fast"], "sample_interval: got 'fast'"),
    (["run", "fc_distance", "--set", "record=nosuch"], "record: recorder 'nosuch' does not exist"),
    (["run", "fc_distance", "--set", "FcNetDevice.Speed=3GFC"], "FcNetDevice.Speed: got '3GFC'"),
    (["run", "fc_distance", "--set", "Nope.Attr=1"], "Nope.Attr: class Nope does not exist"),
    (["run", "fc_distance", "--set", "fabric=roce"], "override key 'fabric' does not exist"),
    (["run", "fc_distance", "--set", "BbCredit"], "--set: got 'BbCredit'; accepted: KEY=VALUE"),
    (["run", "fc_distance", "--seed", "0"], "seed: got '0'; accepted: an integer in 1.."),
    (["run", "fc_distance", "--seed", "abc"], "--seed"),
    (["run", "fc_distance", "--no-such-option"], "unrecognized arguments"),
    (["run", "no_such_scenario"], "scenario 'no_such_scenario' is neither a file nor a built-in"),
    (["run", "missing/file.yaml"], "scenario file 'missing/file.yaml' does not exist"),
    (["run", "unknown_key.yaml"], "scenario key 'foo' does not exist; accepted: description, "),
    (["run", "bad_yaml.yaml"], "bad YAML at line 3"),
    (["run", "bad_fabric.yaml"], "fabric: got 'nosuch'; accepted: one of fc"),
    (["run", "bad_section.yaml"], "FcNetDevice: got '5'; accepted: a mapping of FcNetDevice"),
    (["run", "duplicate.yaml"], "key 'stop_time' appears twice"),
    (["run", "missing_stop.yaml"], "scenario key 'stop_time' is missing"),
    (["run", "not_mapping.yaml"], "accepted: a YAML mapping of scenario keys"),
    (["run", "fc_distance", "--out", "a_file"], "out: got 'a_file', which is a file"),
    (
        ["sweep", "fc_distance", "--grid", "FcNetDevice.BbCredit=4,8,0"],
        "FcNetDevice.BbCredit: got '0'",
    ),
    (["sweep", "fc_distance", "--grid", "FcNetDevice.BbCredit"], "--grid: got"),
    (["run", "modes.yaml", "--set", "mode=nope"], "mode: got 'nope'; accepted: one of near, far"),
    (["run", "bad_modes.yaml"], "modes: got '['a', 'b']'; accepted: a mapping of mode names"),
    (["run", "fc_distance", "--set", "mode=x"], "mode: got 'x'; accepted: the name of a mode"),
    (
        ["run", "modes.yaml", "--set", "mode=far", "--set", "FcNetDevice.BbCredit=0"],
        "mode far: FcNetDevice.BbCredit: got '0'; accepted: an integer in 1..32767",
    ),
    (["sweep", "modes.yaml", "--grid", "mode=near,nope"], "mode: got 'nope'; accepted: one of"),
    (
        ["run", "fc_distance", "--pcap", "h0,,h1"],
        "--pcap: got 'h0,,h1'; accepted: all or a comma-separated list of port labels",
    ),
    (["run", "fc_distance", "--pcap", "all,h0"], "--pcap: got 'all,h0'; accepted: 'all' alone"),
    (["run", "fc_distance", "--pcap", ""], "--pcap: got ''; accepted: all or a comma-separated"),
    (["sweep", "fc_distance"], "--grid: none given"),
    (["sweep", "fc_distance", "--grid", "seed=1", "--jobs", "0"], "--jobs"),
    (
        ["run", "fc_distance", "--set", "Report.Warmup=30ms"],
        "Report.Warmup: got '30ms'; accepted: a time shorter than stop_time (20ms)",
    ),
    (
        ["run", "incast", "--set", "stop_time=500us"],
        "Report.Warmup: got '1ms'; accepted: a time shorter than stop_time (500us)",
    ),
    (
        ["run", "dcqcn", "--set", "Report.Warmup=-1us"],
        "Report.Warmup: got '-1us'; accepted: a time >= 0 with a unit",
    ),
    (["run", "dcqcn", "--set", "Dcqcn.rpg_time_reset=0s"], "accepted: a time >= 1ns with a unit"),
    (
        ["run", "dcqcn", "--set", "RoceSwitch.PfcEnabled=maybe"],
        "RoceSwitch.PfcEnabled: got 'maybe'; accepted: true or false",
    ),
    # A host-interface value that can never be right is refused even with the interface off.
    (
        ["run", "incast", "--set", "stop_time=3ms", "--set", "RdmaNic.MaxPayloadSize=300"],
        "RdmaNic.MaxPayloadSize: got 300; accepted: 128, 256, 512, 1024, 2048 or 4096",
    ),
    (
        ["run", "incast", "--set", "stop_time=3ms", "--set", "RdmaNic.PcieLanes=3"],
        "RdmaNic.PcieLanes: got 3; accepted: 1, 2, 4, 8 or 16",
    ),
]


@pytest.mark.parametrize(("args", "expected"), BAD_INPUTS, ids=lambda x: " ".join(x)[:60])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(cli, tmp_path, args, expected):
    for name, text in BAD_FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "a_file").write_text("not a directory")
    before = sorted(x.name for x in tmp_path.iterdir())
    p = cli(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("lfsim: error: ")
    assert expected in lines[0]
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert sorted(x.name for x in tmp_path.iterdir()) == before  # no results/, no temp dir


def test_builtin_scenarios_come_from_lfsim_scenarios(cli, tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "tiny.yaml").write_text(
        "description: a tiny test scenario\nfabric: fc\nstop_time: 1ms\n"
        "topology: {generator: PointToPoint}\nFcNetDevice:\n  Speed: 1GFC\n"
    )
    env = {"LFSIM_SCENARIOS": str(d)}
    p = cli("list", env=env)
    assert p.returncode == 0 and p.stdout.split() == ["tiny", "a", "tiny", "test", "scenario"]
    p = cli("run", "tiny", "--quiet", env=env)
    assert p.returncode == 0, p.stderr
    cfg = yaml.safe_load((tmp_path / "results" / "tiny" / "config.yaml").read_text())
    assert cfg["name"] == "tiny" and cfg["FcNetDevice"]["Speed"] == "1GFC"


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_set_help_names_every_overridable_key(cli, command):
    from lfsim.scenario import OVERRIDABLE

    p = cli(command, "--help")
    text = " ".join(p.stdout.split())
    listed = text[text.index("KEY is ") :].split(" or Class.Attribute")[0]
    for key in OVERRIDABLE:
        assert key in listed, key


def _command_paths(parser, prefix=()):
    """Every command and subcommand of the parser, as argument lists (issue 40 item 1)."""
    import argparse

    yield list(prefix)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _command_paths(sub, (*prefix, name))


def test_help_of_every_command_prints(capsys):
    """`--help` formats every option's help (a bare % in one once raised ValueError)."""
    from lfsim.cli import build_parser

    paths = list(_command_paths(build_parser()))
    assert ["compare", "perftest"] in paths and len(paths) > 10
    for path in paths:
        with pytest.raises(SystemExit) as e:
            build_parser().parse_args([*path, "--help"])
        assert e.value.code == 0, path
        assert "usage: lfsim" in capsys.readouterr().out, path
