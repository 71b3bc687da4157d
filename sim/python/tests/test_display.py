"""What lfsim run and lfsim sweep print: labelled vectors, no metric that does not apply,
a compact sweep table with units, integers as integers and a dash for what a fabric lacks."""

import json
import math
import re

import pandas as pd
from conftest import SMALL

import lfsim
from lfsim.display import applies, fmt_number, format_sweep_table, format_vector


def test_numbers_are_rounded_to_what_people_read():
    assert fmt_number(124.0) == "124"  # a count, not 124.0
    assert fmt_number(24.5039104) == "24.5"
    assert fmt_number(3444.32) == "3444"  # never fewer digits than the integer part
    assert fmt_number(0.9659614) == "0.966"
    assert fmt_number(2.0001) == "2"
    assert fmt_number(0.000012345) == "1.23e-05"
    assert fmt_number(math.nan) == "-" and fmt_number(None) == "-"
    assert fmt_number(True) == "yes" and fmt_number(False) == "no"


def test_a_statistic_over_nothing_does_not_apply():
    m = {"messages_completed": 0.0, "fct_p99_us": 0.0, "victim_messages_completed": 3.0,
         "victim_fct_p99_us": 0.0, "read_ios": 0.0, "read_lat_p99_us": 0.0,
         "write_ios": 5.0, "write_lat_p99_us": 80.0, "fct_slowdown_p99": math.nan,
         "pause_frames_sent": 0.0, "drops": 0.0, "deadlock": False}  # fmt: skip
    assert not applies("fct_p99_us", m)  # no message completed: no FCT
    assert applies("victim_fct_p99_us", m)  # its own workload completed some
    assert not applies("read_lat_p99_us", m) and applies("write_lat_p99_us", m)
    assert not applies("fct_slowdown_p99", m)  # NaN (null in summary.json)
    assert applies("drops", m) and applies("deadlock", m)  # a real 0 and a real False
    assert applies("pause_frames_sent", m, "roce") and not applies("pause_frames_sent", m, "fc")
    assert not applies("no_such_metric", m)


def test_vectors_print_with_their_labels():
    assert format_vector("stall_us", [0.0, 5296.16], ["h0", "h1"]) == "stall_us: h0 0, h1 5296"
    values = [float(i % 4) for i in range(12)]  # 3 zeros
    labels = [f"p{i}" for i in range(12)]
    assert format_vector("t", values, labels) == (
        "t (12): p3 3, p7 3, p11 3, p2 2, p6 2, 4 more down to 1; 3 zero"
    )
    assert format_vector("t", [0.0] * 12, labels) == "t: 0 for all 12"
    # Labels that do not fit the vector are not used.
    assert format_vector("t", [1.0, 2.0], ["a"]) == "t: 1, 2"


def test_sweep_table_units_integers_and_dashes():
    rows = [
        {"mode": "lossy", "total_goodput_Gbps": 24.3, "drops": 124.0, "pause_frames_sent": 0.0,
         "retransmitted_packets": 101.0, "deadlock": 0.0, "packet_hops": 57711.0,
         "fct_p99_us": 0.0, "messages_completed": 0.0},
        {"mode": "fc", "total_goodput_Gbps": 26.41756, "drops": 0.0, "pause_frames_sent": 0.0,
         "retransmitted_packets": math.nan, "deadlock": 1.0, "packet_hops": 43492.0,
         "fct_p99_us": 0.0, "messages_completed": 0.0},
    ]  # fmt: skip
    text = format_sweep_table(rows, ["mode"], ["roce", "fc"], {"deadlock"})
    lines = [re.split(r"\s{2,}", ln.strip()) for ln in text.splitlines()]
    assert lines == [
        ["mode", "goodput Gb/s", "PAUSE sent", "drops", "retransmits", "deadlock"],
        ["lossy", "24.3", "0", "124", "101", "no"],
        ["fc", "26.4", "-", "0", "-", "yes"],
    ]  # no FCT column: no point completed a message; packet_hops is not a column people read


def test_run_prints_vector_metrics_with_port_labels(cli, tmp_path):
    p = cli("run", "fc_distance", *SMALL, "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    stall = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]["credit_stall_us"]
    # One line per vector, each value with its port (the two N_Ports of the link).
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("    credit_stall_us:"))
    assert line == f"    credit_stall_us: h0 {fmt_number(stall[0])}, h1 {fmt_number(stall[1])}"
    assert stall[1] > 0


def test_run_omits_what_does_not_apply_but_summary_json_keeps_it(cli, tmp_path):
    p = cli("run", "fc_credit_loop", "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    printed = {ln.split()[0] for ln in p.stdout.splitlines()[1:] if ln.startswith("  ")}
    m = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]
    assert m["messages_completed"] == 0 and m["fct_p99_us"] == 0  # as the core reports it
    assert m["fct_slowdown_p99"] is None and m["pause_frames_sent"] == 0
    assert "messages_completed" in printed and "deadlock" in printed
    for absent in ("fct_p50_us", "fct_p99_us", "fct_mean_us", "fct_slowdown_p99",
                   "pause_frames_sent"):  # fmt: skip
        assert absent not in printed, absent
    assert "nan" not in p.stdout and "deadlock                    yes" in p.stdout
    assert "  deadlock_cycle: ring0/p1, ring1/p1, ring2/p1, ring3/p1" in p.stdout


def test_result_knows_the_labels_of_its_vector_metrics():
    r = lfsim.run("fc_credit_loop")
    flows = r.table("flows")
    assert r.metric_labels("per_flow_goodput_Gbps") == list(
        flows.loc[flows["workload"] == 0, "label"].astype(str)
    )
    assert r.metric_labels("paused_time_us") == r.labels("ports")
    assert r.metric_labels("credit_stall_us") == r.labels("ports")[:4]
    assert r.metric_labels("deadlock_cycle") is None  # labels already
    assert r.metric_labels("no_such_metric") is None


def test_sweep_prints_a_compact_table(cli, tmp_path):
    out = tmp_path / "sweep"
    p = cli(
        "sweep", "incast", "--set", "stop_time=2ms", "--set", "Report.Warmup=1ms",
        "--grid", "mode=lossy,fc", "--jobs", "2", "--out", str(out),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    header = re.split(r"\s{2,}", lines[0].strip())
    rows = {r[0]: dict(zip(header, r, strict=True)) for r in
            (re.split(r"\s{2,}", ln.strip()) for ln in lines[1:3])}  # fmt: skip
    assert header[:3] == ["mode", "goodput Gb/s", "victim Gb/s"]
    assert {"p99 FCT us", "PAUSE sent", "drops", "peak queue KiB", "deadlock"} <= set(header)
    csv = pd.read_csv(out / "sweep.csv")
    lossy = csv.set_index("mode").loc["lossy"]
    assert lossy["drops"] > 0  # the lossy fabric drops: an integer, printed as one
    assert rows["lossy"]["drops"] == str(int(lossy["drops"]))
    assert rows["fc"]["PAUSE sent"] == "-" and rows["fc"]["retransmits"] == "-"
    assert rows["lossy"]["deadlock"] == rows["fc"]["deadlock"] == "no"
    assert not any(re.search(r"\d\.0\b", ln) for ln in lines[:3])
    assert lines[3] == f"every metric: {out / 'sweep.csv'}"
    # The full table is still in sweep.csv.
    assert len(csv.columns) > 40 and "packet_hops" in csv.columns
    assert max(len(ln) for ln in lines[:3]) < 160
