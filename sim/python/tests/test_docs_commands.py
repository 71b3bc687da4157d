"""Every command and Python snippet that README.md and docs/usage.md tell a user to run is run
here as written (extracted from the Markdown's ```sh and ```python blocks), in document order, in
a fresh folder that looks like the repository's root, and what the text promises of it is checked
(issue 40 item 2: the README's snippet once raised KeyError, its animation showed no queues).

A command with no entry in PROMISES fails the test: a new command in the documents needs a check.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCUMENTS = ["README.md", "docs/usage.md"]
# Not run here: they are the two commands CI itself runs (make test runs this file).
NOT_RUN = {"make demo", "make test"}
# Files a document names as the user's own; a real tool output of that kind stands in for them.
USER_FILES = {"hw-fio.json": "sim/python/tests/data/fio/randread_libaio.json"}

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(doc: str) -> list[tuple[str, str]]:
    """The document's runnable blocks in order: ("sh", one command) or ("python", a snippet)."""
    out = []
    for lang, body in _FENCE.findall((ROOT / doc).read_text()):
        if lang == "python":
            out.append(("python", body))
        elif lang == "sh":
            for line in body.replace("\\\n", " ").splitlines():
                command = line.split(" #")[0].strip()
                if command and command not in NOT_RUN:
                    out.append(("sh", " ".join(command.split())))
    return out


class Ran:
    """One command's outcome, as the checks see it."""

    def __init__(self, cwd: Path, proc: subprocess.CompletedProcess):
        self.cwd, self.rc, self.out, self.err = cwd, proc.returncode, proc.stdout, proc.stderr

    def summary(self, folder: str) -> dict:
        return json.loads((self.cwd / folder / "summary.json").read_text())

    def files(self, folder: str) -> set[str]:
        return {p.name for p in (self.cwd / folder).iterdir()}


def _deadlock_run(r: Ran, folder: str) -> None:
    assert "deadlock_cycle" in r.out and "ring0/p1/prio3" in r.out
    s = r.summary(folder)
    assert s["metrics"]["deadlock"]
    series = r.files(f"{folder}/series")
    # What the animation shows: queues as bars, pauses as arrows, the cycle (blocked) in red.
    assert {"queue.parquet", "blocked.parquet", "pause.parquet"} <= series


def _plots_of_deadlock(r: Ran) -> None:
    _deadlock_run(r, "results/pfc_deadlock-deadlock")
    assert {"blocked.png", "pause.png", "topology.png"} <= r.files(
        "results/pfc_deadlock-deadlock/plots"
    )


def _animation(folder: str) -> Callable[[Ran], None]:
    def check(r: Ran) -> None:
        html = (r.cwd / folder / "animation.html").read_text()
        assert "queues not recorded" not in r.out + r.err + html
        assert "nothing recorded" not in r.out + r.err + html

    return check


def _gif(name: str) -> Callable[[Ran], None]:
    def check(r: Ran) -> None:
        assert (r.cwd / name).read_bytes()[:6] in (b"GIF89a", b"GIF87a")

    return check


def _png(r: Ran) -> None:
    assert (r.cwd / "frame.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _listed(r: Ran) -> None:
    names = [line.split()[0] for line in r.out.splitlines() if line.strip()]
    assert {"incast", "pfc_deadlock", "fc_distance", "fat_tree_websearch"} <= set(names)


def _metric(folder: str, name: str, test: Callable[[float], bool]) -> Callable[[Ran], None]:
    def check(r: Ran) -> None:
        value = r.summary(folder)["metrics"][name]
        assert test(value), (name, value)

    return check


def _config_has(folder: str, **expected) -> Callable[[Ran], None]:
    import yaml

    def check(r: Ran) -> None:
        cfg = yaml.safe_load((r.cwd / folder / "config.yaml").read_text())
        for dotted, value in expected.items():
            node = cfg
            for part in dotted.split("__"):
                node = node[part]
            assert str(node) == str(value), (dotted, node)

    return check


def _rerun(r: Ran) -> None:
    a = r.summary("results/long")
    b = r.summary("results/long-rerun")
    assert a["metrics"] == b["metrics"] and a["events"] == b["events"]


def _fio_json(folder: str) -> Callable[[Ran], None]:
    def check(r: Ran) -> None:
        fio = json.loads((r.cwd / folder / "fio.json").read_text())
        assert (
            fio["jobs"]
            and fio["jobs"][0]["read"]["io_bytes"] + fio["jobs"][0]["write"]["io_bytes"] > 0
        )

    return check


def _pcaps(*names: str) -> Callable[[Ran], None]:
    def check(r: Ran) -> None:
        folders = [p for p in (r.cwd / "results").iterdir() if (p / "pcap").is_dir()]
        written = {f.name for p in folders for f in (p / "pcap").iterdir()}
        for n in names:
            assert any(w.startswith(n) for w in written), (n, sorted(written))

    return check


def _sweep(folder_glob: str, points: int) -> Callable[[Ran], None]:
    def check(r: Ran) -> None:
        (folder,) = (r.cwd / "results").glob(folder_glob)
        assert len(pd.read_csv(folder / "sweep.csv")) == points

    return check


def _compared(r: Ran) -> None:
    rows = [line.split() for line in r.out.splitlines() if line.startswith("65536")]
    assert rows and all(abs(float(row[-1])) <= 1 for row in rows), r.out


def _replayed(r: Ran) -> None:
    assert (r.cwd / "replay.yaml").is_file() and "roce messages" in r.out


def _scenario_file(name: str) -> Callable[[Ran], None]:
    def check(r: Ran) -> None:
        import yaml

        assert yaml.safe_load((r.cwd / name).read_text())["workload"]

    return check


def _converted_incast8(r: Ran) -> None:
    # config-incast8.txt's keys reach the scenario: CC_MODE 1, KMIN_MAP 400 KB, BUFFER_SIZE 4 MB
    # less headroom, the DCQCN timer, a 1024 B payload... as scenarios/bench_dcqcn_incast8.yaml.
    import yaml

    got = yaml.safe_load((r.cwd / "incast8.yaml").read_text())
    want = yaml.safe_load((ROOT / "scenarios/bench_dcqcn_incast8.yaml").read_text())
    for cls in ("RoceSwitch", "RdmaNic", "Dcqcn"):
        assert {k: str(v) for k, v in got[cls].items()} == {
            k: str(v) for k, v in want[cls].items()
        }, cls


def _simulated_perftest(r: Ran) -> None:
    row = [line.split() for line in r.out.splitlines() if line.split()[:1] == ["65536"]][0]
    assert 11000 < float(row[3]) < 12500  # MB/s of 100GbE's goodput for 64 KiB writes, MTU 1024


def _wrote(plots=(), series=(), **config) -> Callable[[Ran], None]:
    """The run printed where it wrote (`results: DIR`), and DIR holds these plots and series,
    and its config.yaml the values the command set (Class__Attribute=value)."""
    import yaml

    def check(r: Ran) -> None:
        (folder,) = re.findall(r"^results: (\S+)$", r.out, re.M)
        out = r.cwd / folder
        assert {f"{p}.png" for p in plots} <= {x.name for x in (out / "plots").glob("*.png")}
        if series:
            assert {f"{s}.parquet" for s in series} <= {x.name for x in (out / "series").iterdir()}
        cfg = yaml.safe_load((out / "config.yaml").read_text())
        for dotted, value in config.items():
            node = cfg
            for part in dotted.split("__"):
                node = node[part]
            assert str(node) == str(value), (dotted, node)

    return check


def _replay_ran(r: Ran) -> None:
    """The capture's 35 messages (as replay said) each a flow of the run."""
    (folder,) = re.findall(r"^results: (\S+)$", r.out, re.M)
    assert len(pd.read_parquet(r.cwd / folder / "flows.parquet")) == 35


def _validated(r: Ran) -> None:
    assert "predictions" in r.out or "within tolerance" in r.out


def _compare_fio(r: Ran) -> None:
    # A row per job, direction and metric: HW, SIM and the error of one against the other.
    assert re.search(r"^h0/job0/r\s+read\s+iops\s+\S+\s+\S+\s+[-+]\d", r.out, re.M), r.out


def _hpcc_files(r: Ran) -> None:
    """fct.txt: a line per flow of scenarios/hpcc/flow.txt (sip dip sport dport size start fct
    standalone_fct, hex addresses); pfc.txt: 'time node nodetype ifindex type' lines."""
    (folder,) = re.findall(r"^results: (\S+)$", r.out, re.M)
    flows = int((ROOT / "scenarios/hpcc/flow.txt").read_text().split()[0])
    fct = [line.split() for line in (r.cwd / folder / "fct.txt").read_text().splitlines()]
    assert len(fct) == flows
    assert all(len(f) == 8 and all(re.fullmatch(r"[0-9a-f]{8}", x) for x in f[:2]) for f in fct)
    assert all(int(f[6]) >= int(f[7]) > 0 for f in fct)  # fct >= standalone_fct
    pfc = [line.split() for line in (r.cwd / folder / "pfc.txt").read_text().splitlines()]
    assert all(len(f) == 5 and all(x.isdigit() for x in f) for f in pfc)


# Appended to the Python snippet (which must also run without an exception): what it promises.
PYTHON_PROMISE = """
assert r.metrics["fct_slowdown_p99"] >= 1
assert {"p50", "p99"} <= set(r.table("slowdown_by_size").columns)
assert len(r.timeseries("queue")) > 0 and (r.timeseries("queue")["bytes"] > 0).any()
assert len(df) == 5 and df["throughput_MiBps"].is_monotonic_increasing
"""


# Substring of a command (after whitespace is normalised) -> what the document promises of it.
PROMISES: dict[str, Callable[[Ran], None]] = {
    "lfsim list": _listed,
    "lfsim run pfc_deadlock --plot": _plots_of_deadlock,
    "lfsim animate results/pfc_deadlock-deadlock --out ring.gif": _gif("ring.gif"),
    "lfsim animate results/pfc_deadlock-deadlock": _animation("results/pfc_deadlock-deadlock"),
    "lfsim run fc_distance --set FcChannel.Length=50000 --set FcNetDevice.BbCredit=32 --seed 7": (
        _config_has("results/long", FcChannel__Length=50000, seed=7)
    ),
    "lfsim run fc_distance --set FcChannel.Length=50000 --set FcNetDevice.BbCredit=32": (
        _wrote(FcChannel__Length=50000, FcNetDevice__BbCredit=32)
    ),
    "lfsim run incast --set mode=pfc_dcqcn --set stop_time=3ms --plot": _wrote(
        plots=["goodput", "topology"], mode="pfc_dcqcn", stop_time="3ms"
    ),
    "lfsim sweep fc_distance --grid FcNetDevice.BbCredit=2,8,32": _sweep("fc_distance_sweep-*", 6),
    "lfsim perftest ib_write_bw": _simulated_perftest,
    "lfsim compare perftest": _compared,
    "lfsim replay": _replayed,
    "lfsim run replay.yaml": _replay_ran,
    "lfsim run fat_tree_websearch --plot": _wrote(plots=["slowdown_by_size", "topology"]),
    "lfsim sweep fat_tree_websearch": _sweep("fat_tree_websearch_sweep-*", 6),
    "lfsim run incast --set topology.Spines=2 --set workload.incast.QueueDepth=4": _wrote(
        topology__Spines=2, workload__incast__QueueDepth=4
    ),
    "lfsim run results/long/config.yaml": _rerun,
    "lfsim run san_seed000 --set mode=fcp": _fio_json("results/san_seed000-fcp"),
    "lfsim convert hpcc": _scenario_file("mine.yaml"),
    "lfsim run mine.yaml --hpcc-output": _hpcc_files,
    "lfsim convert hpcc bench/ns3-datacenter": _converted_incast8,
    "lfsim run faults --set mode=storm_pfc": _metric(
        "results/faults-storm_pfc", "pfc_storm_pauses_sent", lambda v: v > 0
    ),
    "lfsim run incast --pcap h0,leaf0/p0": _pcaps("h0", "leaf0"),
    "lfsim run storage_qd1 --set mode=fcp --pcap all": _pcaps("h0"),
    "lfsim run storage_qd1 --pcap all": _pcaps("h0"),
    "lfsim compare-fio": _compare_fio,
    "lfsim validate": _validated,
    "lfsim run pfc_deadlock --out results/ring": lambda r: _deadlock_run(r, "results/ring"),
    "lfsim animate results/ring": _animation("results/ring"),
    "lfsim run fc_distance --out results/credits": _wrote(series=["credits"]),
    "lfsim animate results/credits --step 5us --out credits.gif": _gif("credits.gif"),
    "lfsim animate results/credits --out frame.png --at 300us": _png,
}


def promise(command: str) -> Callable[[Ran], None]:
    for key in sorted(PROMISES, key=len, reverse=True):  # the most specific entry first
        if key in command:
            return PROMISES[key]
    raise AssertionError(f"no check for the documented command: {command}")


def test_every_documented_command_has_a_check():
    for doc in DOCUMENTS:
        for lang, text in blocks(doc):
            if lang == "sh":
                promise(text)


def _root_like(tmp: Path) -> Path:
    """A folder where the documents' relative paths resolve as at the repository's root."""
    for name in (".venv", "scenarios", "validation", "bench"):
        (tmp / name).symlink_to(ROOT / name)
    for name, src in USER_FILES.items():
        shutil.copy(ROOT / src, tmp / name)
    return tmp


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_documented_commands_run_as_written(doc, tmp_path):
    cwd = _root_like(tmp_path)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    for lang, text in blocks(doc):
        if lang == "python":
            proc = subprocess.run(
                [sys.executable, "-c", text + PYTHON_PROMISE],
                cwd=cwd,
                capture_output=True,
                text=True,
                env=env,
            )
            assert proc.returncode == 0, f"{doc}: the Python snippet failed:\n{proc.stderr}"
            continue
        proc = subprocess.run(
            ["bash", "-c", text], cwd=cwd, capture_output=True, text=True, env=env, timeout=900
        )
        assert proc.returncode == 0, f"{doc}: `{text}` exited {proc.returncode}:\n{proc.stderr}"
        assert "Traceback" not in proc.stderr, proc.stderr
        promise(text)(Ran(cwd, proc))


def test_replay_of_the_real_nic_capture_as_docs_traces_shows_it(tmp_path):
    """docs/traces.md's replay of the Huawei capture, run as written, prints the rows of its
    table: the items as named there (QPs in hex) and the SIM values it quotes (issue 40 item 10:
    the page said 25GbE where the command ran 100GbE, and "QP 0x45" where the report said 69)."""
    text = (ROOT / "docs/traces.md").read_text()
    commands = [c for lang, c in blocks("docs/traces.md") if lang == "sh" and "hiroce" in c]
    assert [c.split()[1] for c in commands] == ["replay", "run", "compare"]
    cwd = _root_like(tmp_path)
    for command in commands:
        proc = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    rows = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(.+?)\s{2,}(\S.*?)\s{2,}(\S+)?\s+(\S+)\s+(\S+)\s+(\S+)$", line)
        if m:
            rows[(m[1], m[2])] = m[5]
    quoted = {
        ("all messages", "completion mean"): "| 35 messages | completion mean | 20.20 µs | 2.36 µs",
        ("h1>h0 qp 0x45", "throughput"): "| h1>h0 qp 0x45 (34 SENDs, 67037 B) | throughput over",
        (
            "h0>h1 qp 0x48",
            "throughput",
        ): "| h0>h1 qp 0x48 (1 SEND, 141 B) | throughput | 0.054 Gb/s | 0.92 Gb/s",
    }
    for key, doc_row in quoted.items():
        assert doc_row in text, doc_row
        assert key in rows, (key, sorted(rows))
    assert float(rows[("all messages", "completion mean")]) == pytest.approx(2.36, abs=0.005)
    assert float(rows[("h0>h1 qp 0x48", "throughput")]) == pytest.approx(0.92, abs=0.005)
