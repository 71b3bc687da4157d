"""config.yaml is written with libyaml's emitter: the same text as pyyaml's own (yaml.safe_dump,
which wrote it before) for every built-in scenario, and for any value a text that loads back
the same."""

import math
from pathlib import Path

import pytest
import yaml

import lfsim
from lfsim.runner import config_yaml

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


def python_emitter(config: dict) -> str:
    text = config_yaml(config)
    header = "".join(line for line in text.splitlines(True) if line.startswith("#"))
    return header + yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=100)


def cases():
    for path in SCENARIOS:
        raw = yaml.safe_load(path.read_text())
        for mode in list((raw.get("modes") or {}).keys()) or [None]:
            yield pytest.param(path, mode, id=f"{path.stem}@{mode}" if mode else path.stem)


@pytest.mark.parametrize(("path", "mode"), list(cases()))
def test_every_scenario_as_before(path, mode):
    config = lfsim.load_scenario(path, {"mode": mode} if mode else None).config
    assert config_yaml(config) == python_emitter(config)


@pytest.mark.parametrize("name", ["fc_pingpong", "fat_tree_websearch"])
def test_a_run_with_every_attribute_as_before(name, tmp_path):
    # A run's config holds every attribute of every class, and the topology's links.
    r = lfsim.run(ROOT / "scenarios" / f"{name}.yaml", {"stop_time": "2us"})
    assert len(r.config) > 10
    assert config_yaml(r.config) == python_emitter(r.config)


ODD = {
    "name": "ünïcode — x",
    "long": "word " * 60,
    "reserved": ["yes", "no", "null", "~", "True", "1e3", "0o17", "2026-12-07"],
    "punctuation": ["a: b", "a #b", "- a", "*a", "&a", "?", "%x", "@x", "`x", " x", "x ", ""],
    "controls": ["line1\nline2\n", "a\tb", "\x07bell", "a\r\nb", "a\u00a0b"],
    "numbers": [2**70, -0.0, 1e-300, float("inf"), float("-inf")],
    "nested": {"on": 1, "off": [None, True, {"k": "x" * 150}]},
}


def test_odd_values_as_before_and_back():
    assert config_yaml(ODD) == python_emitter(ODD)
    assert yaml.safe_load(config_yaml(ODD)) == ODD


def test_beyond_the_bmp_escaped_and_back():
    value = {"name": "emoji 😀 𝔘", "nan": float("nan")}
    text = config_yaml(value)
    assert "\\U0001F600" in text  # libyaml escapes it; pyyaml's emitter wrote it as is
    back = yaml.safe_load(text)
    assert back["name"] == value["name"] and math.isnan(back["nan"])
