"""The validation harness, on a tiny example validation folder built in tmp_path."""

import textwrap

import pytest
from conftest import run_cli

from lfsim import validate

# 2GFC: 2.125 GBd with 8b/10b coding = 212.5 MB/s on the line. A full frame is
# SOF 4 + header 24 + payload 2112 + CRC 4 + EOF 4 = 2148 bytes, followed by at least
# 6 idle words (24 bytes): at most 2112/2172 of the line carries payload.
MEASURED_CSV = """\
# Source: FC-FS-3 frame format and FC-PI 2GFC line rate (computed by hand, not measured)
# payload_MBps = 212.5 * 2112 / (2148 + 24)
link,payload_MBps
2GFC,206.63
"""

CASES_PY = """
from lfsim.validate import Case, Row, read_measured


def _short_link(ctx):
    measured = read_measured("link")
    r = ctx.run("fc_distance", {"stop_time": "2ms", "Report.Warmup": "200us",
                                "FcChannel.Length": 10})
    again = ctx.run("fc_distance", {"stop_time": "2ms", "Report.Warmup": "200us",
                                    "FcChannel.Length": 10})
    assert again is r  # identical runs are cached
    credits = r.timeseries("credits")["credits"]
    fig_path = ctx.plot_path("credits")
    from matplotlib.figure import Figure
    fig = Figure()
    fig.subplots().plot(credits.to_numpy())
    fig.savefig(fig_path)
    return [
        Row("payload throughput", "MB/s", float(measured["payload_MBps"][0]),
            r.metrics["throughput_MiBps"] * 2**20 / 1e6, tolerance=0.02, evidence="closed_form"),
        Row("credit never negative", "", None, float(credits.min()), kind="shape",
            passed=bool(credits.min() >= 0), criterion="min credits >= 0",
            evidence="consistency"),
    ]


def _wrong(ctx):
    r = ctx.run("fc_distance", {"stop_time": "2ms", "Report.Warmup": "200us",
                                "FcChannel.Length": 10})
    return [Row("throughput vs a wrong value", "MB/s", 100.0, r.metrics["throughput_MiBps"],
                tolerance=1.0, kind="absolute", evidence="closed_form")]


def _broken(ctx):
    raise RuntimeError("boom")


def _explained(ctx):
    return [Row("a model disagreement", "KB", 10.0, 14.0, tolerance=0.15,
                known_deviation="the other model has no marking noise", evidence="predicted",
                point="link:2GFC")]


def _fixed(ctx):
    return [Row("a disagreement that went away", "KB", 10.0, 10.5, tolerance=0.15,
                known_deviation="stale note", evidence="closed_form")]


def _on_its_calibration(ctx):
    ctx.run(CALIBRATED_YAML)
    return [
        Row("the point it was solved on", "MB/s", 206.63, 206.63, tolerance=0.01,
            evidence="calibrated", point="link:2GFC"),
        Row("a prediction on the same point", "MB/s", 206.63, 206.63, tolerance=0.01,
            evidence="predicted", point="link:2GFC"),
    ]


def _undeclared(ctx):
    return [Row("a calibration no scenario declares", "MB/s", 206.63, 206.63, tolerance=0.01,
                evidence="calibrated", point="link:2GFC")]


def _declared_by_case(ctx):
    ctx.calibrated("Some.Parameter", "link:2GFC")
    return [Row("solved here", "MB/s", 206.63, 206.6, tolerance=0.01, evidence="calibrated",
                point="link:2GFC")]


def _other_way(ctx):
    # Within 30 % of the measured ratio, but on the other side of 1: the effect is reversed.
    return [Row("B/A ratio", "ratio", 0.846, 1.03, tolerance=0.3, evidence="predicted",
                point="link:2GFC", baseline=1.0)]


def _against_reference(ctx):
    # Another simulator's result on the same inputs (the reference file is in the fixture).
    return [
        Row("FCT p50 against the other code", "ratio", 1.30, 1.35, tolerance=0.25,
            evidence="reference", point="ref/fct.txt"),
        Row("FCT p99 against the other code", "ratio", 5.0, 9.0, tolerance=0.25,
            evidence="reference", point="ref/fct.txt", known_deviation="a named miss"),
    ]


def _missing_reference(ctx):
    return [Row("against a file that is not there", "ratio", 1.3, 1.3, tolerance=0.25,
                evidence="reference", point="ref/none.txt")]


CASES = [
    Case("short_link", source="link.csv row 2GFC", note="nothing calibrated",
         evaluate=_short_link),
    Case("wrong_value", source="none", note="a deliberately wrong expectation",
         evaluate=_wrong),
    Case("broken", source="none", note="raises", evaluate=_broken),
    Case("explained", source="none", note="known deviation", evaluate=_explained),
    Case("fixed", source="none", note="known deviation that now passes", evaluate=_fixed),
    Case("self_predicted", source="link.csv", note="calibrated on link:2GFC",
         evaluate=_on_its_calibration),
    Case("undeclared", source="link.csv", note="-", evaluate=_undeclared),
    Case("declared_by_case", source="link.csv", note="-", evaluate=_declared_by_case),
    Case("other_way", source="link.csv", note="-", evaluate=_other_way),
    Case("against_reference", source="ref/fct.txt", note="-", evaluate=_against_reference),
    Case("missing_reference", source="ref/none.txt", note="-", evaluate=_missing_reference),
]
"""


CALIBRATED_SCENARIO = """\
fabric: fc
stop_time: 200us
topology: {generator: PointToPoint}
workload: {s: {pattern: FcStream, Hosts: h0, Destinations: h1}}
FcChannel: {Length: 10}
calibrated:
  FcChannel.Length: link:2GFC
"""


@pytest.fixture
def vdir(tmp_path, monkeypatch):
    d = tmp_path / "validation"
    (d / "cases").mkdir(parents=True)
    (d / "data").mkdir()
    (d / "data" / "link.csv").write_text(MEASURED_CSV)
    (d / "data" / "ref").mkdir()
    (d / "data" / "ref" / "fct.txt").write_text("0b000001 0b000101 10000 100 1000 0 2000 1500\n")
    (d / "calibrated.yaml").write_text(CALIBRATED_SCENARIO)
    (d / "cases" / "example.py").write_text(
        f"CALIBRATED_YAML = {str(d / 'calibrated.yaml')!r}\n" + textwrap.dedent(CASES_PY)
    )
    monkeypatch.setenv("LFSIM_VALIDATION", str(d))
    return d


def test_read_measured_skips_source_lines(vdir):
    df = validate.read_measured("link")
    assert list(df.columns) == ["link", "payload_MBps"]
    assert df["payload_MBps"][0] == pytest.approx(212.5 * 2112 / 2172, abs=0.01)
    assert validate.measured_source("link")[0].startswith("Source: FC-FS-3")


def test_row_tolerances():
    cf = {"evidence": "closed_form"}
    assert validate.Row("q", "MB/s", 100.0, 102.9, tolerance=0.03, **cf).passed
    assert not validate.Row("q", "MB/s", 100.0, 103.1, tolerance=0.03, **cf).passed
    assert validate.Row("q", "us", 10.0, 10.4, tolerance=0.5, kind="absolute", **cf).passed
    nan = float("nan")
    assert not validate.Row("q", "us", 10.0, nan, tolerance=0.5, kind="absolute", **cf).passed
    with pytest.raises(ValueError):
        validate.Row("q", "", None, 1.0, kind="shape", **cf)  # a shape row must say passed


def test_every_row_says_what_it_is_evidence_of():
    with pytest.raises(ValueError, match="evidence"):
        validate.Row("q", "MB/s", 100.0, 100.0, tolerance=0.03)
    # A prediction compares a value within a tolerance, never a sign or a shape ...
    with pytest.raises(ValueError, match="within a tolerance"):
        validate.Row(
            "gain > 0", "%", 21.4, 9.6, kind="shape", passed=True, evidence="predicted", point="x:y"
        )
    # ... and names the measured point it predicts.
    with pytest.raises(ValueError, match="point"):
        validate.Row("q", "MB/s", 100.0, 100.0, tolerance=0.03, evidence="predicted")


def test_a_reported_comparison_explains_itself_and_is_never_judged():
    # The DCQCN fluid model's queue (validation/cases/dcqcn.py): shown with its explanation,
    # outside the tolerance or within it, never a failure, counted apart from the evidence.
    far = validate.Row("q", "KiB", 100.0, 60.0, 0.15, evidence="reported", explanation="why")
    near = validate.Row("q", "KiB", 100.0, 101.0, 0.15, evidence="reported", explanation="why")
    assert far.ok and near.ok
    assert far.verdict == "REPORTED (outside tolerance)"
    assert near.verdict == "REPORTED (within tolerance)"
    with pytest.raises(ValueError, match="explains itself"):
        validate.Row("q", "KiB", 100.0, 60.0, 0.15, evidence="reported")
    with pytest.raises(ValueError, match="never a known deviation"):
        validate.Row(
            "q", "KiB", 1.0, 2.0, 0.1, evidence="reported", explanation="x", known_deviation="y"
        )
    case = validate.Case("c", source="s", note="n", evaluate=lambda ctx: [])
    outcome = validate.Outcome(case, rows=[far])
    assert outcome.passed and validate.case_status(outcome) == "PASS"
    assert "1 reported comparisons" in validate.tally([outcome])
    assert "predictions within tolerance: 0 of 0" in validate.tally([outcome])


def test_the_measured_effect_the_other_way_fails_whatever_the_tolerance():
    row = validate.Row(
        "FC/RoCE",
        "ratio",
        0.846,
        1.03,
        tolerance=0.5,
        evidence="predicted",
        point="x:y",
        baseline=1.0,
    )
    assert row.error_pct < 50 and not row.passed and row.verdict == "FAIL wrong direction"
    same_side = validate.Row(
        "FC/RoCE",
        "ratio",
        0.846,
        0.99,
        tolerance=0.5,
        evidence="predicted",
        point="x:y",
        baseline=1.0,
    )
    assert same_side.passed


def test_passing_case_exit_0_with_report_and_figure(vdir, tmp_path):
    report = tmp_path / "out" / "report.md"
    p = run_cli("validate", "--report", str(report), "--case", "short_link", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = [ln for ln in p.stdout.splitlines() if ln.startswith("short_link")]
    assert len(rows) == 2 and all(ln.endswith("PASS") for ln in rows)
    text = report.read_text()
    assert "## short_link — PASS" in text and "link.csv row 2GFC" in text
    assert "| payload throughput | MB/s | 206.63 |" in text
    assert "![short_link: short_link-credits](report_files/short_link-credits.png)" in text
    assert (report.parent / "report_files" / "short_link-credits.png").is_file()


def test_failing_rows_exit_1(vdir, tmp_path):
    report = tmp_path / "report.md"
    p = run_cli("validate", "--report", str(report), cwd=tmp_path)
    assert p.returncode == 1
    assert any(ln.startswith("wrong_value") and ln.endswith("FAIL") for ln in p.stdout.splitlines())
    assert "RuntimeError: boom" in p.stdout
    text = report.read_text()
    assert "## wrong_value — FAIL" in text and "## broken — FAIL" in text
    assert "## short_link — PASS" in text  # the other cases still ran


def test_a_known_deviation_shows_fail_but_does_not_fail_the_run(vdir, tmp_path):
    report = tmp_path / "report.md"
    p = run_cli("validate", "--report", str(report), "--case", "explained", cwd=tmp_path)
    assert p.returncode == 0
    assert any(ln.endswith("MISS (known deviation)") for ln in p.stdout.splitlines())
    text = report.read_text()
    assert "## explained — MISS (named known deviations)" in text
    assert "MISS (known deviation)" in text
    assert "the other model has no marking noise" in text
    assert "predictions within tolerance: 0 of 1 (1 named misses)" in text


def test_the_headline_counts_predictions_only(vdir, tmp_path):
    # Two passing checks (closed form, consistency) and one failed prediction: the headline
    # says 0 of 1 predictions; the checks are counted apart and never make it a PASS.
    report = tmp_path / "report.md"
    p = run_cli(
        "validate",
        "--report",
        str(report),
        "--case",
        "short_link",
        "--case",
        "explained",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    last = p.stdout.splitlines()[-1]
    assert "predictions within tolerance: 0 of 1 (1 named misses)" in last
    assert "closed form 1 of 1; consistency 1 of 1" in last
    # The report opens with the predictions alone.
    text = report.read_text()
    section = text.split("## Predictions", 1)[1].split("\n## ", 1)[0]
    assert "| explained | a model disagreement | KB | 10 | 14 |" in section
    assert "payload throughput" not in section and "credit never negative" not in section


def test_rows_against_a_reference_implementation_are_counted_apart(vdir, tmp_path):
    # A reference row compares with another simulator, not with a measurement: the headline's
    # predictions do not count it, the totals give it a count of its own, the report a table.
    report = tmp_path / "report.md"
    p = run_cli(
        "validate",
        "--report",
        str(report),
        "--case",
        "against_reference",
        "--case",
        "explained",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    last = p.stdout.splitlines()[-1]
    assert "predictions within tolerance: 0 of 1 (1 named misses)" in last
    assert "against a reference implementation, within tolerance: 1 of 2 (1 named misses)" in last
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("against_reference")]
    assert len(lines) == 2 and lines[0].split()[1] == "reference"
    text = report.read_text()
    assert "Rows are of six kinds" in text
    predictions = text.split("## Predictions", 1)[1].split("\n## ", 1)[0]
    assert "against the other code" not in predictions
    section = text.split("## Against a reference implementation", 1)[1].split("\n## ", 1)[0]
    assert "| case | quantity | unit | reference | simulated |" in section
    assert "| against_reference | FCT p50 against the other code | ratio | 1.3 | 1.35 |" in section
    assert "a model disagreement" not in section


def test_a_reference_row_names_a_reference_file_that_is_there(vdir, tmp_path):
    with pytest.raises(ValueError, match="point"):
        validate.Row("q", "ratio", 1.3, 1.3, tolerance=0.25, evidence="reference")
    with pytest.raises(ValueError, match="within a tolerance"):
        validate.Row("q", "", 1.3, 1.3, kind="shape", passed=True, evidence="reference", point="f")
    p = run_cli(
        "validate", "--report", str(tmp_path / "r.md"), "--case", "missing_reference", cwd=tmp_path
    )
    assert p.returncode == 1
    (line,) = [ln for ln in p.stdout.splitlines() if ln.startswith("missing_reference")]
    assert line.endswith("FAIL (point names no reference file validation/data/ref/none.txt)")


def test_a_prediction_on_its_own_calibration_point_fails(vdir, tmp_path):
    p = run_cli(
        "validate", "--report", str(tmp_path / "r.md"), "--case", "self_predicted", cwd=tmp_path
    )
    assert p.returncode == 1
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("self_predicted")]
    assert lines[0].endswith("PASS")  # the calibration is declared by the scenario
    assert lines[1].endswith(
        "FAIL (predicted on its own calibration point (calibrated: FcChannel.Length))"
    )


def test_a_calibration_must_be_declared(vdir, tmp_path):
    p = run_cli(
        "validate", "--report", str(tmp_path / "r.md"), "--case", "undeclared", cwd=tmp_path
    )
    assert p.returncode == 1
    assert "calibration point not declared" in p.stdout
    p = run_cli(
        "validate", "--report", str(tmp_path / "r.md"), "--case", "declared_by_case", cwd=tmp_path
    )
    assert p.returncode == 0, p.stdout


def test_a_reversed_effect_fails_the_case(vdir, tmp_path):
    report = tmp_path / "r.md"
    p = run_cli("validate", "--report", str(report), "--case", "other_way", cwd=tmp_path)
    assert p.returncode == 1
    assert "## other_way — FAIL" in report.read_text()


def test_a_known_deviation_that_passes_fails_the_run(vdir, tmp_path):
    p = run_cli("validate", "--report", str(tmp_path / "r.md"), "--case", "fixed", cwd=tmp_path)
    assert p.returncode == 1
    assert any(ln.endswith("UNEXPECTED PASS") for ln in p.stdout.splitlines())


def test_unknown_case_is_a_usage_error(vdir, tmp_path):
    p = run_cli("validate", "--case", "nope", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "lfsim: error: --case: got 'nope'; accepted: short_link, wrong_value, broken, explained, "
        "fixed, self_predicted, undeclared, declared_by_case, other_way, against_reference, "
        "missing_reference"
    ]


def test_calibrated_names_a_parameter_of_the_scenario(tmp_path):
    bad = CALIBRATED_SCENARIO.replace("FcChannel.Length: link:2GFC", "FcChannel.Lenght: link:2GFC")
    (tmp_path / "s.yaml").write_text(bad)
    p = run_cli("run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert p.returncode == 2 and not (tmp_path / "o").exists()
    assert p.stderr.splitlines() == [
        "lfsim: error: calibrated: got 'FcChannel.Lenght'; accepted: a parameter of this "
        "scenario as Class.Attribute, workload.ITEM.Attribute or topology.Attribute"
    ]


def test_without_report_it_writes_to_the_current_directory(vdir, tmp_path):
    # The validation folder stands in for the repository's: its report must stay as it was.
    (vdir / "report.md").write_text("the committed report\n")
    work = tmp_path / "elsewhere"
    work.mkdir()
    p = run_cli("validate", "--case", "short_link", cwd=work)
    assert p.returncode == 0, p.stderr
    assert "## short_link — PASS" in (work / "report.md").read_text()
    assert (work / "report_files" / "short_link-credits.png").is_file()
    assert p.stdout.splitlines()[-1].endswith("; report: report.md")
    assert (vdir / "report.md").read_text() == "the committed report\n"
    assert not (vdir / "report_files").exists()
