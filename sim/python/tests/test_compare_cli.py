"""The command family ``lfsim compare {fio,perftest,capture,counters}``, ``lfsim perftest`` and
``lfsim replay``: one report (table, JSON, files), --tolerance as the exit code, bad input as
one line with exit code 2."""

import json

import pytest

from lfsim.paths import validation_dir

TRACES = validation_dir() / "data" / "traces"
WRITE_BW = TRACES / "perftest" / "cx5-100g-baremetal-write-bw-mtu1024.txt"


def _sim_perftest(tmp_path, bw_avg, peak=11000.0):
    text = WRITE_BW.read_text().replace("11023.87            11023.48", f"{peak:.2f}  {bw_avg:.2f}")
    p = tmp_path / "sim.txt"
    p.write_text(text)
    return p


def test_compare_perftest_rows_errors_and_tolerance(cli, tmp_path):
    sim = _sim_perftest(tmp_path, 10000.0)
    p = cli("compare", "perftest", str(WRITE_BW), str(sim), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["kind"] == "perftest"
    rows = {r["metric"]: r for r in doc["rows"]}
    avg = rows["BW average"]
    assert (avg["item"], avg["unit"], avg["hw"], avg["sim"]) == ("65536", "MB/sec", 11023.48, 10000)
    assert avg["err_pct"] == pytest.approx((10000 - 11023.48) / 11023.48 * 100)
    assert rows["BW peak"]["hw"] == 11023.87 and rows["BW peak"]["sim"] == 11000
    # beyond a 5 % tolerance (-9.3 %): exit 1, with the table still printed
    p = cli("compare", "perftest", str(WRITE_BW), str(sim), "--tolerance", "5", "--out", "cmp")
    assert p.returncode == 1 and "beyond --tolerance 5 %" in p.stderr
    assert p.stdout.splitlines()[0].split() == ["item", "metric", "unit", "HW", "SIM", "err", "%"]
    for f in ("comparison.txt", "comparison.json", "comparison.png"):
        assert (tmp_path / "cmp" / f).is_file()
    assert json.loads((tmp_path / "cmp" / "comparison.json").read_text())["beyond_tolerance"] == 1
    p = cli("compare", "perftest", str(WRITE_BW), str(sim), "--tolerance", "10")
    assert p.returncode == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["compare", "perftest", "none.txt", "x"], "HW: no such file 'none.txt'"),
        (["compare", "perftest", str(WRITE_BW), "x", "--tolerance", "-1"],
         "--tolerance: got '-1'; accepted: a percentage >= 0"),
        (["compare", "counters", str(TRACES / "counters" / "mlnx_qos-att-netarbiter-dscp-pfc3.txt"),
          "."], "is an mlnx_qos report (settings, not counters"),
        (["compare", "capture", "none.pcap", "."], "CAPTURE: no such file"),
        (["compare", "fio", "none.json", "x.json"], "no such file"),
        (["perftest", "ib_atomic_bw"], "TOOL: got 'ib_atomic_bw'"),
        (["perftest", "ib_write_bw", "-a", "-s", "8"], "-a: given with -s"),
        (["replay", "none.pcap", "-o", "s.yaml"], "CAPTURE: no such file"),
        (["replay", str(TRACES / "pcap" / "tcpdump-tests-dcb_pfc-lldp-dcbx.pcap"), "-o", "s.yaml"],
         "has no RoCEv2 message and no iSCSI command"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_exit_2(cli, tmp_path, args, needle):
    p = cli(*args)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lfsim: error: ") and needle in lines[0]
    assert not (tmp_path / "s.yaml").exists()


def test_compare_fio_kind_uses_the_report(cli, tmp_path):
    hw = validation_dir().parent / "sim" / "python" / "tests" / "data" / "fio"
    p = cli("compare", "fio", str(hw / "randrw_numjobs2_plus.json"),
            str(hw / "randrw_numjobs2_plus.json"), "--json", "--tolerance", "0")  # fmt: skip
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["rows"]
    assert len(rows) == 24 and all(r["err_pct"] == 0.0 for r in rows)
    assert {r["item"] for r in rows} == {"mix#0 read", "mix#0 write", "mix#1 read", "mix#1 write"}


def test_perftest_command_writes_perftests_report(cli, tmp_path):
    p = cli("perftest", "ib_send_lat", "-n", "20", "--topology", "b2b", "--out", "pt")
    assert p.returncode == 0, p.stderr
    assert "Send Latency Test" in p.stdout and "t_typical[usec]" in p.stdout
    from lfsim.traces import read_perftest

    r = read_perftest(tmp_path / "pt" / "perftest.txt")
    assert (r.verb, r.test, r.sizes) == ("send", "lat", [2])
    assert r.results["iterations"].iloc[0] == 20 and r.results["t_typical_us"].iloc[0] > 0
    # compared with itself through the CLI: no error anywhere
    p = cli("compare", "perftest", "pt/perftest.txt", "pt", "--json")
    assert p.returncode == 0 and all(r["err_pct"] == 0 for r in json.loads(p.stdout)["rows"])


def test_compare_perftest_runs_the_simulation_when_no_sim_is_given(cli, tmp_path):
    e810 = TRACES / "perftest" / "intel-e810-irdma-ib_write_bw-mtu1024.txt"
    p = cli("compare", "perftest", str(e810), "--speed", "10GbE", "--set",
            "workload.perftest.Messages=200", "--json")  # fmt: skip
    assert p.returncode == 0, p.stderr
    rows = {r["metric"]: r for r in json.loads(p.stdout)["rows"]}
    # 10 Gb/s, MTU 1024 framing: 64 x (1024 + 82) + 16 line bytes per 64 KiB message
    limit = 65536 / ((64 * 1106 + 16) * 8 / 10e9) / 2**20
    assert rows["BW average"]["sim"] == pytest.approx(limit, rel=0.01)
    assert rows["BW average"]["hw"] == 1103.38


def test_replay_and_compare_capture_on_the_real_nic_capture(cli, tmp_path):
    cap = TRACES / "pcap" / "huawei-hiroce-rocev2-send-imm-proxy.pcap"
    p = cli("replay", str(cap), "-o", "s.yaml", "--speed", "25GbE")
    assert p.returncode == 0, p.stderr
    assert "35 roce messages; hosts 192.168.70.4=h0, 192.168.70.6=h1" in p.stdout
    p = cli("run", "s.yaml", "--out", "o", "--quiet")
    assert p.returncode == 0, p.stderr
    p = cli("compare", "capture", str(cap), "o", "--speed", "25GbE", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    rows = [r for r in doc["rows"] if r["metric"] == "completion"]
    assert len(rows) == 35 and all(r["hw"] > 0 and r["sim"] > 0 for r in rows)
    icrc = next(r for r in doc["rows"] if r["metric"] == "ICRC errors")
    assert icrc["hw"] == 0


def test_compare_counters_cli(cli, tmp_path):
    p = cli("run", "incast", "--set", "stop_time=500us", "--set", "Report.Warmup=0s", "--out", "o",
            "--quiet")  # fmt: skip
    assert p.returncode == 0, p.stderr
    f = TRACES / "counters" / "sonic-mellanox-sdk-pfc-rx-1234-frames.txt"
    p = cli("compare", "counters", str(f), "o", "--port", "nic=h0", "--json")
    assert p.returncode == 0, p.stderr
    rows = {r["metric"]: r for r in json.loads(p.stdout)["rows"]}
    assert rows["PFC pause frames received"]["hw"] == 1234
    p = cli("compare", "counters", str(f), "o")
    assert p.returncode == 2 and "--port: none given" in p.stderr
