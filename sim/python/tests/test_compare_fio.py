"""lfsim compare fio: a run's fio.json is json+ (fio's own reader reads it), echoes only the
options the job set, pairs with a measured file by name or options; fio latency logs are read
(the real log made by fio, values read by hand) and compared as CDFs."""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lfsim
from lfsim import fio
from lfsim.errors import ScenarioError

DATA = Path(__file__).parent / "data" / "fio"
CLAT2CSV = shutil.which("fio_jsonplus_clat2csv")


@pytest.fixture(scope="module")
def qd1(tmp_path_factory):
    out = tmp_path_factory.mktemp("qd1") / "o"
    lfsim.run("storage_qd1", {"FioJob.runtime": "5ms", "stop_time": "8ms"}, out=out)
    return out


def test_fio_json_of_a_run_is_json_plus_with_only_the_given_options(qd1):
    doc = json.loads((qd1 / "fio.json").read_text())
    job = doc["jobs"][0]
    # scenarios/storage_qd1.yaml sets rw, bs, iodepth, numjobs, runtime and ramp_time under
    # FioJob (runtime overridden here); fio echoes what it was given, nothing else.
    assert doc["global options"] == {
        "rw": "randread", "bs": "4096", "iodepth": "1", "numjobs": "1", "runtime": "5ms",
        "ramp_time": "1ms",
    }  # fmt: skip
    assert job["job options"] == {"name": "storage_qd1"}
    assert job["jobname"] == "h0/job0"
    clat = job["read"]["clat_ns"]
    assert clat["N"] == job["read"]["total_ios"] > 0
    assert sum(clat["bins"].values()) == clat["N"]  # fio's histogram: every I/O in a bin


@pytest.mark.skipif(CLAT2CSV is None, reason="fio (Debian package) is not installed")
def test_fios_own_reader_reads_a_runs_fio_json(qd1, tmp_path):
    p = subprocess.run(["/usr/bin/python3", CLAT2CSV, str(qd1 / "fio.json"),
                        str(tmp_path / "out.csv")], capture_output=True, text=True,
                       timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    csv = pd.read_csv(tmp_path / "out_job0.csv", skipinitialspace=True)
    counts = pd.to_numeric(csv["read_clat_ns_count"], errors="coerce").dropna()
    doc = json.loads((qd1 / "fio.json").read_text())
    assert counts.sum() == doc["jobs"][0]["read"]["total_ios"] > 0


def test_real_latency_log_as_written_by_fio():
    log = fio.read_lat_log(DATA / "randread_psync_clat.1.log")
    assert len(log) == 6874  # wc -l
    first = log.iloc[0]
    assert (first.time_ms, first.lat_ns, first.ddir, first.bs, first.offset) == (
        0, 213902, "read", 4096, 0,
    )  # fmt: skip
    assert list(log["lat_ns"][:3]) == [213902, 62567, 47920]
    # fio's own JSON of the same run counted the same I/Os
    doc = json.loads((DATA / "randread_psync_latlog.json").read_text())
    assert doc["jobs"][0]["read"]["total_ios"] == len(log)


def test_latency_cdfs_compare_by_hand():
    hw = pd.DataFrame({"time_ms": 0, "lat_ns": np.arange(1, 101) * 1000, "ddir": "read",
                       "bs": 4096})  # fmt: skip
    sim = hw.assign(lat_ns=hw["lat_ns"] * 2)
    rows = {r["metric"]: r for r in fio.compare_lat_logs(hw, sim) if r["dir"] == "read"}
    # exact order statistics with linear interpolation: p50 of 1..100 us is 50.5 us
    assert rows["clat_p50_us"]["hw"] == pytest.approx(50.5)
    assert rows["clat_p50_us"]["sim"] == pytest.approx(101.0)
    # KS: at 50 us, HW has 50 % below, SIM (2..200 us) 25 %: the largest gap is 0.5 at 100 us
    assert rows["ks_distance"]["sim"] == pytest.approx(0.5)
    assert rows["ios"]["hw"] == rows["ios"]["sim"] == 100


def test_compare_fio_latency_log_against_a_run(cli, qd1):
    p = cli("compare", "fio", str(DATA / "randread_psync_clat.1.log"), str(qd1), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    rows = {(r["item"], r["metric"]): r for r in doc["rows"]}
    ios = pd.read_parquet(qd1 / "ios.parquet")
    assert rows[("read", "ios")]["sim"] == len(ios)
    lat = (ios["complete_ns"] - ios["submit_ns"]).to_numpy()
    assert rows[("read", "clat_p50_us")]["sim"] == pytest.approx(np.percentile(lat, 50) / 1000)


def test_lat_log_bad_input(tmp_path):
    (tmp_path / "x.log").write_text("a, b, c\n")
    with pytest.raises(ScenarioError, match="is not a fio latency log"):
        fio.read_lat_log(tmp_path / "x.log")
    with pytest.raises(ScenarioError, match="HW: no such file"):
        fio.read_lat_log(tmp_path / "none.log")


def test_compare_fio_a_run_folder_against_real_fio(cli, qd1):
    p = cli("compare", "fio", str(DATA / "randread_psync_plus.json"), str(qd1), "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    assert {r["item"] for r in rows} == {"h0/job0/r read"}
    assert "paired with HW job 'r' by options" in p.stderr
    # the two jobs differ in ioengine (psync vs lfsim's default) only where set
    sim = json.loads((qd1 / "fio.json").read_text())["jobs"][0]["read"]
    iops = next(r for r in rows if r["metric"] == "iops")
    assert iops["sim"] == sim["iops"]
