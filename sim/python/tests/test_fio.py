"""The fio-compatible JSON (lfsim.fio) against real fio 3.33 output, fio's own json+ reader,
fio's documented histogram arithmetic, and hand-computed workloads; and ``lfsim compare-fio``.

The real samples in data/fio were made by Debian's fio on this machine (see data/fio/README.md).
They are used for what fio computed from its own numbers (percentiles from its histogram, bw
from io_bytes and runtime) and for their layout, never as expected performance.
"""

import copy
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from lfsim.errors import ScenarioError
from lfsim.fio import (
    DEFAULT_PERCENTILES,
    PLAT_NR,
    bw_agg_percent,
    ddir_rates,
    fio_json,
    job_options,
    load_fio_json,
    percentile_key,
    plat_histogram,
    plat_idx_to_val,
    plat_percentiles,
    plat_val_to_idx,
    write_fio_json,
)

DATA = Path(__file__).parent / "data" / "fio"
SAMPLES = {
    "randread_libaio.json": False,
    "randread_psync_plus.json": True,
    "randrw_numjobs2_plus.json": True,
}
# fio's own reader of json+ output, shipped by Debian's fio package. Its "#!/usr/bin/env python3"
# may find an interpreter without six, so it is run with Debian's python3 (python3-six).
CLAT2CSV = shutil.which("fio_jsonplus_clat2csv")
DEBIAN_PY = "/usr/bin/python3"


def _sample(name):
    return json.loads((DATA / name).read_text())


def closed_loop(
    job, ios_per_slot, iodepth, lat_ns, read_every=1, bs=4096, slat_ns=None, t0=0
):  # fmt: skip
    """A closed-loop job: ``iodepth`` slots, each submitting its next I/O when the previous one
    completes. Latencies cycle through ``lat_ns``; every ``read_every``-th I/O of a slot is a
    read, the others writes. With ``slat_ns`` the table has an issue_ns column."""
    rows = []
    for slot in range(iodepth):
        t = t0 + slot  # 1 ns apart, so that no two slots complete in the same nanosecond
        for k in range(ios_per_slot):
            lat = lat_ns[(slot + k) % len(lat_ns)]
            op = "read" if k % read_every == 0 else "write"
            issue = t + (slat_ns or 0)
            rows.append((job, op, bs, t, issue, issue + lat))
            t = issue + lat
    df = pd.DataFrame(rows, columns=["job", "op", "bytes", "submit_ns", "issue_ns", "complete_ns"])
    return df if slat_ns is not None else df.drop(columns="issue_ns")


LATS = [30_000, 45_000, 80_000, 120_000, 200_000, 350_000, 900_000, 2_500_000]


def _sim_for(name):
    """A simulated run shaped like the real sample ``name`` (same jobs, options, engine kind)."""
    if name == "randread_libaio.json":
        jobs = [{"name": "r", "rw": "randread", "bs": "4k", "iodepth": 4, "runtime": 1}]
        ios = closed_loop(0, 4000, 4, LATS, slat_ns=5_000)
        return fio_json(jobs, ios, 1.0), 1
    if name == "randread_psync_plus.json":
        jobs = [{"name": "r", "rw": "randread", "bs": "4k", "iodepth": 1, "runtime": 1}]
        ios = closed_loop(0, 4000, 1, LATS)  # no issue_ns: a synchronous engine, no slat
        return fio_json(jobs, ios, 1.0, plus=True), 1
    spec = {"name": "mix", "rw": "randrw", "rwmixread": 70, "numjobs": 2}
    ios = pd.concat([closed_loop(j, 3000, 8, LATS, read_every=2, slat_ns=2_000) for j in (0, 1)])
    glob = {"size": "8M", "bs": "4k", "ioengine": "lfsim", "runtime": 2, "iodepth": 8}
    return fio_json([spec, spec], ios, 2.0, plus=True, global_options=glob), 2


# ---------------------------------------------------------------------------------------------
# fio's histogram: the documented bucket math (stat.h) and the real samples' percentiles.


def test_bucket_math_follows_fios_documented_layout():
    # Groups 0 and 1 ([0, 127]) are exact: the index is the value.
    small = np.arange(128)
    assert (plat_val_to_idx(small) == small).all()
    assert (plat_idx_to_val(small) == small).all()
    # Group 2 holds [128, 255] in 64 buckets of 2 ns, reported at their middle.
    assert plat_val_to_idx(128) == 128 and plat_idx_to_val(128) == 129
    assert plat_val_to_idx(255) == 191 and plat_idx_to_val(191) == 255
    # Group 3 holds [256, 511] in buckets of 4 ns: 256..259 -> 258.
    assert plat_val_to_idx(259) == 192 and plat_idx_to_val(192) == 258
    # 100 us by hand: msb 16, error bits 10, base (10 + 1) * 64 = 704, offset (100000 >> 10) & 63
    # = 33: bucket 737, reported as 2**16 + 33.5 * 2**10 = 99840 ns.
    assert plat_val_to_idx(100_000) == 737 and plat_idx_to_val(737) == 99_840
    # Everything from 2**34 ns (msb 34 > the last group's 33) lands in the last bucket.
    assert plat_val_to_idx([2**34 - 1, 2**34, 10**13]).tolist() == [PLAT_NR - 1] * 3


def test_bucket_value_is_within_fios_stated_error():
    """stat.h: the error of a reported value is about 1 / 2**(PLAT_BITS + 1) of the value."""
    rng = np.random.default_rng(3)
    v = np.unique(rng.integers(128, 2**34, 200_000))
    idx = plat_val_to_idx(v)
    assert (np.diff(idx) >= 0).all()  # monotonic
    rep = plat_idx_to_val(idx)
    assert (np.abs(rep - v) / v <= 1 / 128).all()
    # the reported value of a bucket lies in that bucket
    assert (plat_val_to_idx(rep) == idx).all()


def test_percentile_is_the_first_bucket_reaching_the_share():
    """calc_clat_percentiles stops at the first bucket whose cumulative count is >= p/100 * N:
    of two I/Os, the 50th percentile is the faster one. By hand: 1000 ns is in bucket 317
    (msb 9, 3 error bits, base 256, offset (1000 >> 3) & 63 = 61), reported as
    512 + 61.5 * 8 = 1004; 2000 ns in bucket 381, reported as 1024 + 61.5 * 16 = 2008."""
    got = dict(
        zip(DEFAULT_PERCENTILES, plat_percentiles(plat_histogram([2000, 1000])), strict=True)
    )
    assert {p: v for p, v in got.items() if p <= 50} == dict.fromkeys(
        [p for p in DEFAULT_PERCENTILES if p <= 50], 1004
    )
    assert {v for p, v in got.items() if p > 50} == {2008}


@pytest.mark.parametrize("name", [n for n, plus in SAMPLES.items() if plus])
def test_percentiles_from_bins_equal_real_fios(name):
    """fio wrote both its histogram (bins) and the percentiles it computed from it: the same
    computation here must give fio's numbers exactly, for every job and direction."""
    checked = 0
    for job in _sample(name)["jobs"]:
        for ddir in ("read", "write"):
            clat = job[ddir]["clat_ns"]
            if not clat["N"]:
                continue
            bins = {int(k): c for k, c in clat["bins"].items()}
            idx = plat_val_to_idx(list(bins))
            # every key fio wrote is the value of its own bucket
            assert plat_idx_to_val(idx).tolist() == list(bins)
            hist = np.zeros(PLAT_NR, np.int64)
            hist[idx] = list(bins.values())
            assert hist.sum() == clat["N"]
            want = [clat["percentile"][percentile_key(p)] for p in DEFAULT_PERCENTILES]
            assert plat_percentiles(hist) == want
            checked += 1
    assert checked >= 1


@pytest.mark.parametrize("name", SAMPLES)
def test_rates_reproduce_real_fio_arithmetic(name):
    doc = _sample(name)
    for ddir in ("read", "write"):
        jobs = [j[ddir] for j in doc["jobs"] if j[ddir]["runtime"]]
        if not jobs:
            continue
        agg = sum(d["io_bytes"] for d in jobs) * 1000 // max(d["runtime"] for d in jobs)
        for d in jobs:
            r = ddir_rates(d["io_bytes"], d["total_ios"], d["runtime"])
            assert r["bw_bytes"] == d["bw_bytes"] and r["bw"] == d["bw"]
            assert r["iops"] == pytest.approx(d["iops"], abs=1e-6)  # fio prints %f
            assert bw_agg_percent(d["bw_mean"], agg) == pytest.approx(d["bw_agg"], abs=1e-6)


# ---------------------------------------------------------------------------------------------
# The layout, key by key, against the real samples; fio's own reader.

DATA_DICTS = {"job options", "global options", "bins"}  # keys are data, not layout


def _assert_layout(real, sim, path="$"):
    if isinstance(real, dict):
        assert isinstance(sim, dict), f"{path}: {type(sim).__name__}, fio has an object"
        if path.rsplit(".", 1)[-1] in DATA_DICTS:
            for k, v in sim.items():
                want = type(next(iter(real.values())))
                assert type(v) is want, f"{path}.{k}: {type(v).__name__}, fio has {want.__name__}"
            return
        missing = [k for k in real if k not in sim]
        assert not missing, f"{path}: missing {missing}"
        extra = [k for k in sim if k not in real and k not in ("global options",)]
        assert not extra, f"{path}: keys fio 3.33 does not write: {extra}"
        assert [k for k in sim if k in real] == list(real), f"{path}: key order differs"
        for k in real:
            _assert_layout(real[k], sim[k], f"{path}.{k}")
    elif isinstance(real, list):
        assert isinstance(sim, list) and sim, f"{path}: empty or not a list"
        for i, item in enumerate(sim):
            _assert_layout(real[min(i, len(real) - 1)], item, f"{path}[{i}]")
    else:
        assert type(sim) is type(real), f"{path}: {type(sim).__name__}, fio has {type(real)}"


@pytest.mark.parametrize("name", SAMPLES)
def test_layout_equals_real_fio(name, tmp_path):
    real = _sample(name)
    sim, n_jobs = _sim_for(name)
    # through a file and back, as any reader sees it
    sim = json.loads(write_fio_json(sim, tmp_path / "fio.json").read_text())
    assert len(sim["jobs"]) == len(real["jobs"]) == n_jobs
    assert ("global options" in sim) == ("global options" in real)
    _assert_layout(real, sim)
    assert sim["fio version"].startswith("lfsim ") and "fio 3.33 json layout" in sim["fio version"]


def _clat2csv(src: Path, dest: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [DEBIAN_PY, CLAT2CSV, str(src), str(dest), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(CLAT2CSV is None, reason="fio (Debian package) is not installed")
@pytest.mark.parametrize("name", [n for n, plus in SAMPLES.items() if plus])
def test_fios_jsonplus_reader_reads_real_and_simulated(name, tmp_path):
    sim, n_jobs = _sim_for(name)
    sim_path = write_fio_json(sim, tmp_path / "sim.json")
    for src, stub in ((DATA / name, "real"), (sim_path, "sim")):
        dest = tmp_path / f"{stub}.csv"
        p = _clat2csv(src, dest)
        assert p.returncode == 0, p.stderr
        assert p.stdout.count("generated") == n_jobs
        p = _clat2csv(src, dest, "--validate")
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.count("validated") == n_jobs
    # What the reader made of the simulated file: per job, the read clat counts add up to the
    # job's simulated reads, and the last cumulative percentile is 1.
    for j, job in enumerate(sim["jobs"]):
        csv = pd.read_csv(tmp_path / f"sim_job{j}.csv", skipinitialspace=True)
        counts = pd.to_numeric(csv["read_clat_ns_count"], errors="coerce").dropna()
        assert counts.sum() == job["read"]["total_ios"] > 0
        pct = pd.to_numeric(csv["read_clat_ns_percentile"], errors="coerce").dropna()
        assert pct.iloc[-1] == pytest.approx(1.0) and pct.is_monotonic_increasing


# ---------------------------------------------------------------------------------------------
# Workloads computed by hand.


def _steady(n=1000, period_ns=1_000_000, lat_ns=100_000, op="read", job=0, bs=4096):
    """One I/O every ``period_ns``, each taking ``lat_ns``; the k-th completes at k periods."""
    complete = np.arange(1, n + 1, dtype=np.int64) * period_ns
    return pd.DataFrame(
        {"job": job, "op": op, "bytes": bs, "submit_ns": complete - lat_ns,
         "complete_ns": complete}
    )  # fmt: skip


def test_steady_workload_numbers_by_hand():
    doc = fio_json([{"name": "s", "rw": "read", "bs": 4096}], _steady(), 1.0)
    job = doc["jobs"][0]
    r = job["read"]
    # 1000 I/Os of 4 KiB in 1000 ms
    assert r["total_ios"] == 1000 and r["io_bytes"] == 4_096_000 and r["io_kbytes"] == 4000
    assert r["runtime"] == 1000 and r["iops"] == 1000.0
    assert r["bw_bytes"] == 4_096_000 and r["bw"] == 4000
    # every clat is 100 us: bucket value 99840 (see the bucket math test) at every percentile
    assert r["clat_ns"]["min"] == r["clat_ns"]["max"] == 100_000 and r["clat_ns"]["N"] == 1000
    assert r["clat_ns"]["stddev"] == 0.0
    assert set(r["clat_ns"]["percentile"].values()) == {99_840}
    assert list(r["clat_ns"]["percentile"]) == [f"{p:f}" for p in DEFAULT_PERCENTILES]
    assert r["slat_ns"]["N"] == 0 and r["lat_ns"] == {k: r["clat_ns"][k] for k in r["lat_ns"]}
    # one 500 ms window before the end of the 1 s run: 500 I/Os -> 4000 KiB/s, 1000 IOPS
    assert (r["bw_samples"], r["bw_min"], r["bw_max"], r["bw_mean"]) == (1, 4000, 4000, 4000.0)
    assert (r["iops_samples"], r["iops_min"], r["iops_mean"]) == (1, 1000, 1000.0)
    assert r["bw_agg"] == pytest.approx(4000 * 100 / 4000)  # the only job: the whole group
    assert job["write"]["total_ios"] == 0 and "percentile" not in job["write"]["clat_ns"]
    # 100 us is in fio's 100..249 us bucket; one I/O in flight at a time
    assert job["latency_us"]["250"] == 100.0
    assert sum(job["latency_us"].values()) == 100.0 and not any(job["latency_ms"].values())
    assert job["iodepth_level"]["1"] == 100.0 and job["iodepth_complete"]["4"] == 100.0
    # busy 100 us of every 1 ms
    assert doc["disk_util"][0]["util"] == pytest.approx(10.0, abs=0.01)
    assert doc["disk_util"][0]["read_ios"] == 1000


def test_ramp_time_excludes_ios_completed_before_it():
    # 1.5 s of I/O, ramp 500 ms, then 1 s measured: the first 500 completions do not count
    doc = fio_json([{"name": "s", "rw": "read", "ramp_time": "500ms"}], _steady(n=1500), 1.0)
    r = doc["jobs"][0]["read"]
    assert r["total_ios"] == 1000 and r["iops"] == 1000.0
    # completions after ramp + runtime do not count either
    doc = fio_json([{"name": "s", "rw": "read", "ramp_time": 0.5}], _steady(n=1800), 1.0)
    assert doc["jobs"][0]["read"]["total_ios"] == 1000


def test_rate_samples_follow_bwavgtime_and_vary_with_load():
    # 2 s: 1 I/O per ms for the first second, 1 per 2 ms for the second
    fast = _steady(n=1000)
    slow = _steady(n=500, period_ns=2_000_000)
    slow["complete_ns"] += 1_000_000_000
    slow["submit_ns"] += 1_000_000_000
    ios = pd.concat([fast, slow])
    doc = fio_json([{"name": "s", "rw": "read", "bwavgtime": 250}], ios, 2.0)
    r = doc["jobs"][0]["read"]
    # 250 ms windows ending before 2000 ms: 7; 4 at 1000 IOPS (4000 KiB/s), 3 at 500
    assert r["bw_samples"] == 7 and r["bw_min"] == 2000 and r["bw_max"] == 4000
    assert r["bw_mean"] == pytest.approx((4 * 4000 + 3 * 2000) / 7)
    assert r["bw_dev"] == pytest.approx(np.std([4000] * 4 + [2000] * 3, ddof=1))
    # iops keeps the default 500 ms: windows ending at 500, 1000, 1500 ms
    assert r["iops_samples"] == 3 and (r["iops_min"], r["iops_max"]) == (500, 1000)


def test_submission_latency_and_depth_from_a_closed_loop():
    ios = closed_loop(0, 2000, 8, [50_000], slat_ns=3_000)
    doc = fio_json([{"name": "q", "rw": "randread", "iodepth": 8}], ios, 0.1)
    job = doc["jobs"][0]
    r = job["read"]
    assert r["slat_ns"]["min"] == r["slat_ns"]["max"] == 3_000 == r["slat_ns"]["mean"]
    assert r["clat_ns"]["min"] == 50_000 and r["lat_ns"]["min"] == 53_000
    # 8 slots each completing every 53 us: 100 ms / 53 us * 8 I/Os
    assert r["total_ios"] == pytest.approx(8 * 100_000_000 / 53_000, abs=8)
    # eight I/Os always in flight: the 8..15 depth bucket
    assert job["iodepth_level"]["8"] == pytest.approx(100.0, abs=0.2)
    assert job["latency_depth"] == 8


def test_mixed_reads_and_writes_and_groups():
    spec = {"name": "m", "rw": "randrw", "rwmixread": 50, "bwavgtime": 10}
    ios = pd.concat([closed_loop(j, 500, 2, [100_000], read_every=2) for j in (0, 1)])
    doc = fio_json([spec, spec], ios, 0.05)
    for job in doc["jobs"]:
        assert job["jobname"] == "m" and job["job options"]["rwmixread"] == "50"
        # every other I/O of a slot is a write: as many as reads, give or take one per slot
        assert abs(job["read"]["total_ios"] - job["write"]["total_ios"]) <= 2
        assert job["write"]["total_ios"] > 400
        # two equal jobs: each has half of the group's aggregate bandwidth
        assert job["read"]["bw_agg"] == pytest.approx(50.0, abs=1.0)
    assert doc["disk_util"][0]["read_ios"] == sum(j["read"]["total_ios"] for j in doc["jobs"])


def test_disk_util_counts_overlapping_ios_once():
    # in flight 0-10 ms, 5-15 ms (two jobs) and 20-30 ms: busy 25 ms of the 100 ms run
    ms = 1_000_000
    ios = pd.DataFrame(
        {"job": [0, 1, 0], "op": ["read", "write", "read"], "bytes": [4096] * 3,
         "submit_ns": [0, 5 * ms, 20 * ms], "complete_ns": [10 * ms, 15 * ms, 30 * ms]}
    )  # fmt: skip
    disk = fio_json([{"name": "a"}, {"name": "b"}], ios, 0.1)["disk_util"][0]
    assert disk["util"] == pytest.approx(25.0)
    assert (disk["read_ios"], disk["write_ios"]) == (2, 1)
    assert (disk["read_ticks"], disk["write_ticks"], disk["in_queue"]) == (20, 10, 30)


def test_latency_buckets_take_fios_edges():
    lats = [1, 2, 999, 1_000, 999_999, 1_000_000, 1_999_999_999, 2_000_000_000]
    n = len(lats)
    ios = pd.DataFrame(
        {"job": [0] * n, "op": ["read"] * n, "bytes": [512] * n, "submit_ns": [10**9] * n,
         "complete_ns": [10**9 + lat for lat in lats]}
    )  # fmt: skip
    job = fio_json([{"name": "e"}], ios, 3.0)["jobs"][0]
    one = 100.0 / len(lats)
    # ns: 0..1 -> "2", 2..3 -> "4", 750..999 -> "1000"; us: 1 -> "2", 999 -> "1000";
    # ms: 1 -> "2", 1999 -> "2000", 2000 -> ">=2000"
    assert job["latency_ns"] == pytest.approx({**dict.fromkeys(job["latency_ns"], 0.0),
                                               "2": one, "4": one, "1000": one})  # fmt: skip
    assert job["latency_us"]["2"] == one and job["latency_us"]["1000"] == one
    assert job["latency_ms"]["2"] == one and job["latency_ms"]["2000"] == one
    assert job["latency_ms"][">=2000"] == one


def test_small_shares_are_raised_to_fios_display_floor():
    ios = _steady(n=1000)
    ios.loc[10, "submit_ns"] = ios.loc[10, "complete_ns"] - 5_000_000  # one 5 ms I/O of 1000
    job = fio_json([{"name": "s"}], ios, 1.0)["jobs"][0]
    assert job["latency_ms"]["10"] == 0.1  # 1/1000 = 0.1 %: above the 0.01 floor, unchanged
    many = _steady(n=20000, period_ns=50_000, lat_ns=10_000)
    many.loc[200, "submit_ns"] = many.loc[200, "complete_ns"] - 5_000_000
    job = fio_json([{"name": "s"}], many, 1.0)["jobs"][0]
    assert job["latency_ms"]["10"] == 0.01  # 1/20000 = 0.005 % is shown as 0.01, as fio


def test_jsonplus_bins_hold_every_io():
    doc = fio_json([{"name": "p"}], closed_loop(0, 300, 2, LATS), 1.0, plus=True)
    clat = doc["jobs"][0]["read"]["clat_ns"]
    assert sum(clat["bins"].values()) == clat["N"] == 600
    # one bin per distinct latency (the LATS lie in distinct buckets), keyed by bucket value
    assert len(clat["bins"]) == len(LATS)
    assert [int(k) for k in clat["bins"]] == plat_idx_to_val(plat_val_to_idx(LATS)).tolist()
    plain = fio_json([{"name": "p"}], closed_loop(0, 3, 1, LATS), 1.0)
    assert "bins" not in plain["jobs"][0]["read"]["clat_ns"]


@pytest.mark.parametrize(
    ("jobs", "ios", "runtime", "needle"),
    [
        ([], None, 1.0, "jobs: got an empty list"),
        ([{"rw": "read"}], None, 1.0, "jobs[0].name"),
        ([{"name": "a", "rw": "sideways"}], None, 1.0, "jobs[0].rw: got 'sideways'"),
        ([{"name": "a", "ramp_time": "soon"}], None, 1.0, "jobs[0].ramp_time: got 'soon'"),
        ([{"name": "a", "iodepth": 0}], None, 1.0, "jobs[0].iodepth: got '0'"),
        ([{"name": "a"}], "drop", 1.0, "ios: no column complete_ns"),
        ([{"name": "a"}], "op", 1.0, "ios.op: got 'trim'"),
        ([{"name": "a"}], "job", 1.0, "ios.job: got '3'; accepted: the index of a job spec, 0..0"),
        ([{"name": "a"}], "order", 1.0, "submit_ns <= issue_ns <= complete_ns"),
        ([{"name": "a"}], None, 0, "runtime_s: got '0'"),
    ],
)
def test_bad_input_is_one_line_naming_the_key(jobs, ios, runtime, needle):
    df = _steady(n=10)
    if ios == "drop":
        df = df.drop(columns="complete_ns")
    elif ios == "op":
        df.loc[3, "op"] = "trim"
    elif ios == "job":
        df.loc[3, "job"] = 3
    elif ios == "order":
        df.loc[3, "submit_ns"] = df.loc[3, "complete_ns"] + 1
    with pytest.raises(ScenarioError) as exc:
        fio_json(jobs, df, runtime)
    msg = str(exc.value)
    assert needle in msg and "\n" not in msg and "accepted" in msg


def test_write_is_atomic(tmp_path):
    path = tmp_path / "fio.json"
    with pytest.raises(TypeError):
        write_fio_json({"jobs": [object()]}, path)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# lfsim compare-fio


def _write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_compare_fio_against_itself_has_zero_error(cli):
    hw = DATA / "randrw_numjobs2_plus.json"
    p = cli("compare-fio", str(hw), str(hw), "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    # 2 clones x read/write x 6 metrics
    assert len(rows) == 24 and {r["job"] for r in rows} == {"mix#0", "mix#1"}
    assert all(r["rel_err_pct"] == 0.0 for r in rows)


def test_compare_fio_relative_errors(cli, tmp_path):
    hw = _sample("randread_libaio.json")
    sim = copy.deepcopy(hw)
    read = sim["jobs"][0]["read"]
    read["iops"] *= 1.10
    read["bw_bytes"] = int(read["bw_bytes"] * 0.75)
    read["clat_ns"]["percentile"]["99.000000"] *= 2
    sim_path, hw_path = _write(tmp_path, "sim.json", sim), _write(tmp_path, "hw.json", hw)
    p = cli("compare-fio", str(sim_path), str(hw_path), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    rows = {(r["dir"], r["metric"]): r for r in out["rows"]}
    assert out["sim"] == str(sim_path) and out["hw"] == str(hw_path)
    assert {d for d, _ in rows} == {"read"}  # the write side did no I/O in either file
    assert rows["read", "iops"]["rel_err_pct"] == pytest.approx(10.0)
    assert rows["read", "bw_MiBps"]["rel_err_pct"] == pytest.approx(-25.0, abs=1e-3)
    assert rows["read", "clat_p99_us"]["rel_err_pct"] == pytest.approx(100.0)
    assert rows["read", "clat_p50_us"]["rel_err_pct"] == 0.0
    p99 = hw["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"]
    assert rows["read", "clat_p99_us"]["hw"] == pytest.approx(p99 / 1000)
    # the text table: header, then one aligned row per metric, HW before SIM
    p = cli("compare-fio", str(sim_path), str(hw_path))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["job", "dir", "metric", "HW", "SIM", "err", "%"]
    iops = next(line for line in lines if " iops " in line)
    assert iops.split()[:3] == ["r", "read", "iops"] and iops.endswith("+10.00")
    assert len({len(line) for line in lines}) == 1  # aligned: every line as long


def test_compare_fio_simulated_against_real(cli, tmp_path):
    sim, _ = _sim_for("randrw_numjobs2_plus.json")
    sim_path = write_fio_json(sim, tmp_path / "sim.json")
    p = cli("compare-fio", str(sim_path), str(DATA / "randrw_numjobs2_plus.json"), "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    hw = _sample("randrw_numjobs2_plus.json")
    r = next(r for r in rows if (r["job"], r["dir"], r["metric"]) == ("mix#1", "write", "iops"))
    want_hw, want_sim = hw["jobs"][1]["write"]["iops"], sim["jobs"][1]["write"]["iops"]
    assert r["hw"] == want_hw and r["sim"] == want_sim
    assert r["rel_err_pct"] == pytest.approx((want_sim - want_hw) / want_hw * 100)


def test_compare_fio_skips_text_before_the_json(cli, tmp_path):
    text = (DATA / "randread_libaio.json").read_text()
    noisy = tmp_path / "stdout.txt"
    noisy.write_text("note: both iodepth >= 1 and synchronous I/O engine are selected\n" + text)
    assert load_fio_json(noisy, "HW")["jobs"][0]["jobname"] == "r"
    p = cli("compare-fio", str(noisy), str(DATA / "randread_libaio.json"))
    assert p.returncode == 0, p.stderr


def test_compare_fio_match_by_order(cli, tmp_path):
    hw = _sample("randread_libaio.json")
    sim = copy.deepcopy(hw)
    sim["jobs"][0]["jobname"] = "simulated"
    sim["jobs"][0]["job options"]["name"] = "simulated"
    sim_path, hw_path = _write(tmp_path, "sim.json", sim), _write(tmp_path, "hw.json", hw)
    # No job of the same name: paired by its options, and said so.
    p = cli("compare-fio", str(sim_path), str(hw_path), "--json")
    assert p.returncode == 0, p.stderr
    assert "paired with HW job 'r' by options" in p.stderr
    assert {r["job"] for r in json.loads(p.stdout)["rows"]} == {"simulated/r"}
    p = cli("compare-fio", str(sim_path), str(hw_path), "--match", "order", "--json")
    assert p.returncode == 0, p.stderr
    assert {r["job"] for r in json.loads(p.stdout)["rows"]} == {"simulated/r"}
    assert p.stderr == ""  # the same options: nothing to warn about


def test_compare_fio_warns_on_every_differing_option(cli, tmp_path):
    # The case of the issue: a QD1 randread simulation against the randrw QD8 numjobs=2 file.
    sim = _sample("randread_libaio.json")
    sim["jobs"][0]["job options"].update(iodepth="1", name="storage_qd1")
    sim["jobs"][0]["jobname"] = "h0/job0"
    sim_path = _write(tmp_path, "sim.json", sim)
    p = cli("compare-fio", str(sim_path), str(DATA / "randrw_numjobs2_plus.json"), "--match",
            "order", "--json")  # fmt: skip
    assert p.returncode == 2 and "SIM has 1 jobs, HW has 2" in p.stderr
    p = cli("compare-fio", str(sim_path), str(DATA / "randrw_numjobs2_plus.json"))
    assert p.returncode == 0, p.stderr
    warn = [line for line in p.stderr.splitlines() if "different jobs" in line]
    assert len(warn) == 1
    for text in ("rw randread vs randrw", "iodepth 1 vs 8", "numjobs 1 vs 2",
                 "rwmixread - vs 70"):  # fmt: skip
        assert text in warn[0]
    assert "HW job 'mix' has no SIM job left to pair" in p.stderr
    # A simulated job answers to its name option (the scenario's name) as well.
    hw = copy.deepcopy(sim)
    hw["jobs"][0]["jobname"] = "storage_qd1"
    hw_path = _write(tmp_path, "hw.json", hw)
    p = cli("compare-fio", str(sim_path), str(hw_path), "--json")
    assert p.returncode == 0 and p.stderr == ""
    assert {r["job"] for r in json.loads(p.stdout)["rows"]} == {"h0/job0/storage_qd1"}


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("missing", "HW: no such file"),
        ("not_json", "HW: 'hw.json' is not fio JSON"),
        ("no_jobs", "HW: 'hw.json' has no jobs"),
        ("no_read", "HW: 'hw.json' jobs[0] has no 'read' object"),
        ("order_count", "--match order: SIM has 1 jobs, HW has 2"),
        ("bad_match", "argument --match: invalid choice: 'size'"),
    ],
)
def test_compare_fio_bad_input(cli, tmp_path, case, needle):
    sim = DATA / "randread_libaio.json"
    hw = tmp_path / "hw.json"
    extra = []
    doc = _sample("randread_libaio.json")
    if case == "not_json":
        hw.write_text("READ: bw=53.9MiB/s\n")
    elif case == "no_jobs":
        _write(tmp_path, "hw.json", {**doc, "jobs": []})
    elif case == "no_read":
        del doc["jobs"][0]["read"]
        _write(tmp_path, "hw.json", doc)
    elif case == "order_count":
        doc["jobs"] *= 2
        _write(tmp_path, "hw.json", doc)
        extra = ["--match", "order"]
    elif case == "bad_match":
        hw = sim
        extra = ["--match", "size"]
    p = cli("compare-fio", str(sim), "hw.json" if hw.name == "hw.json" else str(hw), *extra)
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lfsim: error: ") and needle in lines[0]


def test_a_run_shorter_than_half_a_millisecond_writes_fio_json(tmp_path):
    # Found by the fuzz test: fio's runtime is whole milliseconds, so a 300 us job has
    # runtime 0 and no bandwidth (fio's integer arithmetic); the I/Os are still counted.
    (tmp_path / "s.yaml").write_text(
        "fabric: roce\nseed: 1\ntopology: {generator: Star, Hosts: 2, HostSpeed: 25GbE}\n"
        "workload:\n  fio: {pattern: Fio, Hosts: h0, Destinations: h1}\n"
    )
    p = run_cli("run", "s.yaml", "--out", "o", "--quiet", "--set", "stop_time=300us", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    job = json.loads((tmp_path / "o" / "fio.json").read_text())["jobs"][0]
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]
    assert job["read"]["runtime"] == 0 and job["read"]["bw"] == 0
    assert job["read"]["total_ios"] == summary["read_ios"] > 0
    assert job["read"]["io_bytes"] == 4096 * summary["read_ios"]


# Issue 40, item 9: fio's option names take fio's units (fio 3.33 HOWTO "Parameter types":
# sizes with k/m/g/t/p, x 1024 each under the default kb_base=1024, kib/mib... x 1000 each in
# that compatibility mode; times: a bare number is seconds for runtime and ramp_time,
# microseconds for thinktime; units us/usec, ms/msec, s/sec, m (minutes), h, d, any case).


@pytest.mark.parametrize(
    ("option", "given", "want"),
    [
        ("bs", "4k", "4096"), ("bs", "4K", "4096"), ("bs", "8kb", "8192"), ("bs", "8KB", "8192"),
        ("bs", "1m", "1048576"), ("bs", "4KiB", "4000"), ("bs", "4096", "4096"),
        ("bs", "4096b", "4096"), ("bs", "0x1000", "4096"), ("size", "1g", "1073741824"),
        ("size", "2MiB", "2000000"), ("runtime", "2", "2s"), ("runtime", 2, "2s"),
        ("runtime", "10m", "10min"), ("runtime", "500ms", "500ms"), ("runtime", "1 h", "1h"),
        ("ramp_time", "250msec", "250ms"), ("ramp_time", "3S", "3s"),
        ("thinktime", "5", "5us"), ("thinktime", "5ms", "5ms"), ("thinktime_spin", "2usec", "2us"),
        ("thinktime", "30ns", "30ns"),  # ns-3's own units still read
    ],
)  # fmt: skip
def test_fiojob_options_take_fios_units(option, given, want):
    from lfsim import load_scenario

    sc = load_scenario("storage_qd1", {f"FioJob.{option}": given, "FioJob.thinktime_spin": "1us"}
                       if option == "thinktime" else {f"FioJob.{option}": given})  # fmt: skip
    assert sc.config["FioJob"][option] == want
    assert sc.core_config()["attributes"]["ns3::FioJob"][option] == want


def test_a_fio_job_sections_options_take_fios_units():
    from lfsim import load_scenario

    jobs = "a: rw=read bs=8k; b: rw=write bs=1m size=2g thinktime=5 thinktime_spin=1"
    sc = load_scenario("storage_qd1", {"workload.fio.Jobs": jobs})
    assert sc.config["workload"]["fio"]["Jobs"] == (
        "a: rw=read bs=8192; b: rw=write bs=1048576 size=2147483648 thinktime=5us "
        "thinktime_spin=1us"
    )


@pytest.mark.parametrize(
    ("key", "given", "accepted"),
    [
        ("FioJob.bs", "1.5k", "FioJob.bs: got '1.5k'; accepted: an integer in 512..67108864: a "
         "number of bytes, optionally with fio's suffix k"),
        ("FioJob.bs", "4 k", "FioJob.bs: got '4 k'; accepted: an integer in"),
        ("FioJob.bs", "64g", "FioJob.bs: got '64g'; accepted: an integer in 512..67108864"),
        ("FioJob.runtime", "2 fortnights", "FioJob.runtime: got '2 fortnights'; accepted: a time"),
        ("workload.fio.Jobs", "a: bs=4x", "workload.fio.Jobs: got bs=4x; accepted: bs=a number of "
         "bytes"),
    ],
)  # fmt: skip
def test_a_fio_value_fio_would_not_read_is_refused_by_name(key, given, accepted):
    from lfsim import load_scenario

    with pytest.raises(ScenarioError) as err:
        load_scenario("storage_qd1", {key: given})
    assert str(err.value).startswith(f"mode nvmeof_rdma: {accepted}"), str(err.value)


def test_hardware_fio_sizes_compare_by_fios_rules():
    doc = {"global options": {"bs": "4KiB"}, "jobs": []}
    assert job_options(doc, {"job options": {}})["bs"] == "4000"
    assert job_options(doc, {"job options": {"bs": "8k"}})["bs"] == "8192"
