"""``lfsim animate``: what the frames show, read back from the real simulator's results folders.

- scenarios/pfc_deadlock.yaml for 3 ms (four switches in a ring, PFC deadlocks), with the
  ``queue`` recorder added: the cycle's ports turn red exactly from the frame of detection on;
- scenarios/fc_distance.yaml for 400 us (one sender, 10 km of fibre, 8 BB_Credits): the
  sender runs out of credit once per round trip, and its arrow shows exactly then;
- a hand-made folder for the PFC pause spells (XOFF to XON, or the quanta running out).
"""

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.colors import to_rgba

import lfsim
from lfsim import animate as an
from lfsim.plotdata import queue_port

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def deadlock(tmp_path_factory):
    out = tmp_path_factory.mktemp("anim") / "deadlock"
    overrides = {"stop_time": "3ms", "mode": "deadlock", "record": "blocked,pause,goodput,queue"}
    return lfsim.run("pfc_deadlock", overrides, out=out)


@pytest.fixture(scope="module")
def fc(tmp_path_factory):
    out = tmp_path_factory.mktemp("anim") / "fc"
    return lfsim.run("fc_distance", {"stop_time": "400us", "Report.Warmup": "0s"}, out=out)


def test_frames_span_the_series_at_the_sample_interval(deadlock):
    anim = an.Animation(an.load_run(deadlock.out), max_frames=10_000)
    # Independently: the first instant of the animated series, the run's end, 10 us apart.
    first = min(
        pd.read_parquet(deadlock.out / "series" / f"{n}.parquet")["time_s"].min()
        for n in ("queue", "blocked", "goodput")
    )
    end = json.loads((deadlock.out / "summary.json").read_text())["sim_time_s"]
    assert anim.times[0] == pytest.approx(first)
    assert len(anim.times) == int(np.floor((end - first) / 10e-6 + 1e-9)) + 1
    assert np.allclose(np.diff(anim.times), 10e-6)
    # With a cap, the step grows and the frames still reach the end.
    capped = an.Animation(an.load_run(deadlock.out), max_frames=50)
    assert len(capped.times) == 50
    assert capped.times[-1] == pytest.approx(end)


def test_cycle_turns_red_from_the_detection_on(deadlock):
    m = deadlock.metrics
    assert m["deadlock"]
    anim = an.Animation(an.load_run(deadlock.out), max_frames=400)
    ports = anim.port_set
    cycle = {queue_port(q, ports) for q in m["deadlock_cycle"]}
    assert len(cycle) == 4 and anim.cycle_ports == cycle
    detected = m["deadlock_detected_us"] * 1e-6
    fig, update = anim.figure()
    before = [k for k, t in enumerate(anim.times) if t < detected]
    after = [k for k, t in enumerate(anim.times) if t >= detected]
    assert before and after
    red = to_rgba(an.CYCLE_COLOR)
    for k in (before[-1], after[0], after[-1]):
        update(k)
        frame = anim.frame(k)
        assert frame.red == (cycle if k in after else set())
        for port in cycle:
            arrow = drawing_arrow(update, port)
            assert (to_rgba(arrow.get_edgecolor()) == red) == (k in after)
            if k in after:
                assert arrow.get_visible()
    # Before the deadlock the ring's ports are paused in turn; after it, the cycle is frozen:
    # its ports are paused (blocked) in every frame and hold bytes.
    for k in after:
        frame = anim.frame(k)
        assert cycle <= frame.stopped
        assert all(frame.queue.get(p, 0) > 0 for p in cycle)


def drawing_arrow(update, port):
    return update.__self__.arrows[port]


def test_queue_bars_are_the_recorded_bytes(deadlock):
    anim = an.Animation(an.load_run(deadlock.out))
    q = pd.read_parquet(deadlock.out / "series" / "queue.parquet")
    peak = q["bytes"].max()
    k = len(anim.times) // 2
    t = anim.times[k]
    last = q[q["time_s"] <= t].groupby("label", observed=True)["bytes"].last()
    frame = anim.frame(k)
    for label, value in last.items():
        assert frame.queue[str(label)] == pytest.approx(value / peak)


def test_fc_sender_arrow_shows_when_out_of_credit(fc):
    anim = an.Animation(an.load_run(fc.out), step_s=1e-6, max_frames=1000)
    credits = pd.read_parquet(fc.out / "series" / "credits.parquet")
    sender = credits[credits["label"].astype(str) == "h1"].sort_values("time_s", kind="stable")
    assert sender["credits"].max() == 8
    fig, update = anim.figure()
    zero_frames = 0
    for k, t in enumerate(anim.times):
        now = sender[sender["time_s"] <= t]["credits"]
        expected = len(now) > 0 and now.iloc[-1] == 0
        frame = anim.frame(k)
        assert ("h1" in frame.stopped) == expected
        if expected:
            zero_frames += 1
            # All 8 credits are in use: the bar is full.
            assert frame.queue["h1"] == pytest.approx(1.0)
    # 10 km at 2GFC: the round trip (~100 us) is longer than 8 frames (~8 x 10.6 us), so the
    # sender waits for R_RDYs for most of each round trip.
    assert zero_frames > len(anim.times) / 2
    update(int(np.argmax([("h1" in anim.frame(k).stopped) for k in range(len(anim.times))])))
    assert update.__self__.arrows["h1"].get_visible()
    assert update.__self__.texts["h1"].get_text() == "credit 0/8"
    assert "h0" not in update.__self__.texts  # the receiver sends nothing: no credit shown


def test_cli_writes_html_gif_and_png(fc, tmp_path, cli):
    html = tmp_path / "a.html"
    r = cli("animate", str(fc.out), "--out", str(html), "--max-frames", "5")
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    assert "<input" in text and 'type="range"' in text  # the time slider
    assert text.count("data:image/png;base64") == 5
    assert "http" not in text and "fa-play" not in text  # plays offline: no CDN icons
    gif = tmp_path / "a.gif"
    assert cli("animate", str(fc.out), "--out", str(gif), "--max-frames", "4").returncode == 0
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames == 4
    png = tmp_path / "a.png"
    assert cli("animate", str(fc.out), "--out", str(png), "--at", "100us").returncode == 0
    assert png.read_bytes().startswith(PNG)


def test_missing_recorders_one_line_exit_2(tmp_path, cli):
    out = tmp_path / "plain"
    lfsim.run("fc_distance", {"stop_time": "100us", "record": "", "Report.Warmup": "0s"}, out=out)
    r = cli("animate", str(out))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1
    assert "record" in r.stderr and "credits" in r.stderr
    assert not (out / "animation.html").exists()


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["nowhere"], "RESULT_DIR"),
        (["{out}", "--out", "x.avi"], "--out"),
        (["{out}", "--step", "10"], "--step"),
    ],
)
def test_bad_input_one_line_exit_2(fc, cli, args, key):
    r = cli("animate", *[a.format(out=fc.out) for a in args])
    assert r.returncode == 2
    assert r.stderr.startswith(f"lfsim: error: {key}") and r.stderr.count("\n") == 1


def fake_run(tmp_path, pause_rows, topology):
    """A results folder of two switches on one cable (s0/p0 - s1/p0), a host on each, with the
    given PFC frames (time_s, port id, prio, quanta, dir)."""
    out = tmp_path / "fake"
    (out / "series").mkdir(parents=True)
    summary = {"scenario": "fake", "fabric": "roce", "sim_time_s": 1e-3, "metrics": {}}
    (out / "summary.json").write_text(json.dumps(summary))
    (out / "config.yaml").write_text(yaml.safe_dump({"topology": topology}))
    labels = ["s0/p0", "s1/p0", "h0", "h1", "s0/p1", "s1/p1"]
    ids = [float(i) for i in range(len(labels))]
    pd.DataFrame({"id": ids, "label": labels}).to_parquet(out / "ports.parquet")
    links = {"a": [0.0, 2.0, 3.0], "b": [1.0, 4.0, 5.0], "util_ab": [0.0] * 3}
    pd.DataFrame(links).to_parquet(out / "links.parquet")
    cols = ["time_s", "id", "prio", "quanta", "dir"]
    df = pd.DataFrame(pause_rows, columns=cols)
    df.insert(2, "label", [labels[int(i)] for i in df["id"]])
    df.to_parquet(out / "series" / "pause.parquet")
    return out


def test_pause_spells_from_xoff_to_xon_or_quanta(tmp_path):
    # s1/p0 sends XOFF at 100 us and XON at 300 us: s0/p0 (its peer) is paused in between.
    # s0/p0 sends one XOFF of 1000 quanta at 500 us and no XON: at 25GbE it lasts
    # 1000 x 512 bit / 25 Gbit/s = 20.48 us.
    rows = [
        (100e-6, 1, 3, 65535, 0),
        (300e-6, 1, 3, 0, 0),
        (500e-6, 0, 3, 1000, 0),
        (500e-6, 1, 3, 1000, 1),  # received: not a pause this port sends
    ]
    out = fake_run(tmp_path, rows, {"generator": "Graph", "HostSpeed": "25GbE"})
    anim = an.Animation(an.load_run(out))
    assert anim._pause["s0/p0"] == [(100e-6, 300e-6)]
    assert anim._pause["s1/p0"][0] == pytest.approx((500e-6, 500e-6 + 1000 * 512 / 25e9))
    assert anim._stopped(200e-6) == {"s0/p0"}
    assert anim._stopped(310e-6) == set()
    assert anim._stopped(510e-6) == {"s1/p0"}
    assert anim._stopped(530e-6) == set()


def test_frame_times():
    assert len(an.frame_times((0.0, 1e-3), 1e-4, 100)) == 11
    assert len(an.frame_times((0.0, 1e-3), 1e-6, 100)) == 100
    assert len(an.frame_times((2e-4, 1e-3), 3e-4, 100)) == 3  # 0.2, 0.5, 0.8 ms
