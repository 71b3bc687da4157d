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
            r.metrics["throughput_MBps"], tolerance=0.02),
        Row("credit never negative", "", None, float(credits.min()), kind="shape",
            passed=bool(credits.min() >= 0), criterion="min credits >= 0"),
    ]


def _wrong(ctx):
    r = ctx.run("fc_distance", {"stop_time": "2ms", "Report.Warmup": "200us",
                                "FcChannel.Length": 10})
    return [Row("throughput vs a wrong value", "MB/s", 100.0, r.metrics["throughput_MBps"],
                tolerance=1.0, kind="absolute")]


def _broken(ctx):
    raise RuntimeError("boom")


def _explained(ctx):
    return [Row("a model disagreement", "KB", 10.0, 14.0, tolerance=0.15,
                known_deviation="the other model has no marking noise")]


def _fixed(ctx):
    return [Row("a disagreement that went away", "KB", 10.0, 10.5, tolerance=0.15,
                known_deviation="stale note")]


CASES = [
    Case("short_link", source="link.csv row 2GFC", note="nothing calibrated",
         evaluate=_short_link),
    Case("wrong_value", source="none", note="a deliberately wrong expectation",
         evaluate=_wrong),
    Case("broken", source="none", note="raises", evaluate=_broken),
    Case("explained", source="none", note="known deviation", evaluate=_explained),
    Case("fixed", source="none", note="known deviation that now passes", evaluate=_fixed),
]
"""


@pytest.fixture
def vdir(tmp_path, monkeypatch):
    d = tmp_path / "validation"
    (d / "cases").mkdir(parents=True)
    (d / "data").mkdir()
    (d / "data" / "link.csv").write_text(MEASURED_CSV)
    (d / "cases" / "example.py").write_text(textwrap.dedent(CASES_PY))
    monkeypatch.setenv("LFSIM_VALIDATION", str(d))
    return d


def test_read_measured_skips_source_lines(vdir):
    df = validate.read_measured("link")
    assert list(df.columns) == ["link", "payload_MBps"]
    assert df["payload_MBps"][0] == pytest.approx(212.5 * 2112 / 2172, abs=0.01)
    assert validate.measured_source("link")[0].startswith("Source: FC-FS-3")


def test_row_tolerances():
    assert validate.Row("q", "MB/s", 100.0, 102.9, tolerance=0.03).passed
    assert not validate.Row("q", "MB/s", 100.0, 103.1, tolerance=0.03).passed
    assert validate.Row("q", "us", 10.0, 10.4, tolerance=0.5, kind="absolute").passed
    assert not validate.Row("q", "us", 10.0, float("nan"), tolerance=0.5, kind="absolute").passed
    with pytest.raises(ValueError):
        validate.Row("q", "", None, 1.0, kind="shape")  # a shape row must say passed


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
    assert any(ln.endswith("FAIL (known deviation)") for ln in p.stdout.splitlines())
    text = report.read_text()
    assert "## explained — PASS with known deviations" in text
    assert "FAIL (known deviation)" in text
    assert "the other model has no marking noise" in text
    assert "1 failed (1 of them known deviations)" in text


def test_a_known_deviation_that_passes_fails_the_run(vdir, tmp_path):
    p = run_cli("validate", "--report", str(tmp_path / "r.md"), "--case", "fixed", cwd=tmp_path)
    assert p.returncode == 1
    assert any(ln.endswith("UNEXPECTED PASS") for ln in p.stdout.splitlines())


def test_unknown_case_is_a_usage_error(vdir, tmp_path):
    p = run_cli("validate", "--case", "nope", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "lfsim: error: --case: got 'nope'; accepted: short_link, wrong_value, broken, explained, "
        "fixed"
    ]
