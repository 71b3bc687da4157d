"""What lfsim run prints: labelled vectors, no metric that does not apply."""

import json
import math

from conftest import SMALL

import lfsim
from lfsim.display import applies, fmt_number, format_vector


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


def test_run_prints_vector_metrics_with_port_labels(cli, tmp_path):
    p = cli("run", "fc_distance", *SMALL, "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    stall = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]["credit_stall_us"]
    # One line per vector, each value with its port (the two N_Ports of the link).
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("  credit_stall_us:"))
    assert line == f"  credit_stall_us: h0 {fmt_number(stall[0])}, h1 {fmt_number(stall[1])}"
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
