"""``lfsim animate``: what the frames show, read back from the real simulator's results folders.

- scenarios/pfc_deadlock.yaml for 3 ms (four switches in a ring, PFC deadlocks), with the
  ``queue`` recorder added: the cycle's ports turn red exactly from the frame of detection on;
- scenarios/fc_distance.yaml for 400 us (one sender, 10 km of fibre, 8 BB_Credits): the
  sender runs out of credit once per round trip, and its arrow shows exactly then;
- a hand-made folder for the PFC pause spells (XOFF to XON, or the quanta running out).
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

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
    assert r.stderr == ""  # nothing to say: 5 frames at the default step fit
    text = html.read_text()
    assert "<input" in text and 'type="range"' in text  # the time slider
    data = player_data(text)
    assert len(data["t"]) == 5 and len(data["q"]) == 5 and len(data["s"]) == 5
    assert "data:image/png" not in text  # no frame as a picture: one still SVG, then numbers
    assert text.count("data:image/svg+xml;base64,") == 1
    assert not re.search(r"(src|href)=.http", text)  # plays offline: nothing fetched
    gif = tmp_path / "a.gif"
    assert cli("animate", str(fc.out), "--out", str(gif), "--max-frames", "4").returncode == 0
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames == 4
    png = tmp_path / "a.png"
    assert cli("animate", str(fc.out), "--out", str(png), "--at", "100us").returncode == 0
    assert png.read_bytes().startswith(PNG)


def player_data(html: str) -> dict:
    """The frames an HTML animation holds (its JSON)."""
    m = re.search(r'<script type="application/json">(.*?)</script>', html, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


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


# ---------------------------------------------------------------------------------------------
# The arrows run as topology.png's wait-for cycle (issue 40 item 3).


def _directed(arrows, g, pos) -> set[tuple[str, str]]:
    """Each arrow (a FancyArrowPatch) as the cable it lies along, directed as it points: the
    edge of ``g`` nearest to its middle, in the order its tail -> tip runs."""
    edges = set()
    for arrow in arrows:
        path = arrow.get_path()  # data coordinates; a closed head ends with a CLOSEPOLY
        v = path.vertices if path.codes is None else path.vertices[path.codes != path.CLOSEPOLY]
        tail = v[0]
        tip = v[np.argmax(np.hypot(*(v - tail).T))]
        mid = (tail + tip) / 2

        def gap(pair, mid=mid):
            a, b = np.asarray(pos[pair[0]]), np.asarray(pos[pair[1]])
            d = b - a
            s = np.clip(np.dot(mid - a, d) / np.dot(d, d), 0, 1)
            return np.hypot(*(mid - (a + s * d)))

        u, w = min(g.edges(), key=gap)
        along = np.dot(tip - tail, np.asarray(pos[w]) - np.asarray(pos[u]))
        edges.add((u, w) if along > 0 else (w, u))
    return edges


def test_cycle_arrows_run_as_on_topology_png(deadlock):
    from matplotlib.patches import FancyArrowPatch

    from lfsim import plotdata, plotting

    m = deadlock.metrics
    ports = plotdata.labels_of(deadlock, "links")
    links = deadlock.table("links")
    g = plotdata.topology_graph(links, ports)
    pos = plotdata.topology_layout(g)
    red = to_rgba(plotting.CYCLE_COLOR)
    static = plotting.topology_figure(links, ports, metrics=m)
    drawn = [
        p
        for p in static.axes[0].patches
        if isinstance(p, FancyArrowPatch) and to_rgba(p.get_edgecolor()) == red
    ]
    on_topology = _directed(drawn, g, pos)
    # Independently of both drawings: each member's switch -> the switch its port sends to.
    assert on_topology == set(plotdata.cycle_edges(m["deadlock_cycle"], links, ports))
    assert len(on_topology) == 4 and not any((v, u) in on_topology for u, v in on_topology)
    anim = an.Animation(an.load_run(deadlock.out))
    fig, update = anim.figure()
    update(len(anim.times) - 1)  # after the detection: the cycle's arrows in red
    arrows = update.__self__.arrows
    animated = [a for a in arrows.values() if a.get_visible() and to_rgba(a.get_edgecolor()) == red]
    assert _directed(animated, g, pos) == on_topology
    # The HTML player draws the same arrows, in its pixels (y down).
    data = an._Player(anim, 10).data()[0]
    last = data["s"][-1]
    for i, port in enumerate(data["ports"]):
        (tail, head) = update.__self__.arrow_ends[port]
        x0, y0, x1, y1 = data["arrows"][i]
        assert np.dot([x1 - x0, y0 - y1], head - tail) > 0, port
        assert (last[i] == "2") == (port in anim.cycle_ports)


# ---------------------------------------------------------------------------------------------
# FC's credit loop: what it records over time is drawn (issue 40 item 3).


def test_fc_credit_loop_animates_its_credits_and_queues(tmp_path):
    r = lfsim.run("fc_credit_loop", out=tmp_path / "loop")
    assert {"blocked", "credits", "tx_queue"} <= set(r.series_names)
    anim = an.Animation(an.load_run(r.out))
    assert anim.queue_name == "tx_queue" and anim.line_name == "credits"
    fig, update = anim.figure()
    bottom = fig.axes[1]
    assert not [t for t in bottom.texts if "nothing recorded" in t.get_text()]
    # The line: the credits of the cycle's ports (each ran out), read back from the series.
    credits = r.timeseries("credits")
    cycle = set(r.metrics["deadlock_cycle"])
    lines = {ln.get_label(): ln for ln in bottom.get_lines() if ln.get_label() in cycle}
    assert set(lines) == cycle
    for label, line in lines.items():
        own = credits[credits["label"].astype(str) == label]
        assert list(line.get_ydata()[:-1]) == list(own["credits"])  # + the last, held to the end
    # After the detection the cycle's queues hold frames and are red.
    k = len(anim.times) - 1
    update(k)
    f = anim.frame(k)
    assert f.red == anim.cycle_ports and all(f.queue[p] > 0 for p in anim.cycle_ports)


def test_without_a_line_series_the_blocked_queues_are_counted(tmp_path):
    r = lfsim.run("fc_credit_loop", {"record": "blocked"}, out=tmp_path / "blocked")
    anim = an.Animation(an.load_run(r.out))
    assert anim.line_name == "blocked"
    fig, _ = anim.figure()
    (line,) = fig.axes[1].get_lines()[:1]
    # At the end: as many queues blocked as the series leaves at 1 (each queue's last value).
    b = r.timeseries("blocked").sort_values("time_s", kind="stable")
    still = int((b.groupby("label", observed=True)["blocked"].last() > 0.5).sum())
    assert still >= 4 and line.get_ydata()[-1] == still


# ---------------------------------------------------------------------------------------------
# What the animation did other than asked is said, in one line each (issue 40 item 3).


def test_a_step_the_frame_cap_enlarges_is_said(fc, cli, tmp_path):
    out = tmp_path / "a.html"
    r = cli("animate", str(fc.out), "--step", "1us", "--max-frames", "5", "--out", str(out))
    assert r.returncode == 0 and out.is_file()
    (line,) = r.stderr.splitlines()
    # 400 us from the first credit sample (t = 0) to the end: 401 frames asked, 5 allowed, so
    # 100 us apart.
    assert line.startswith("lfsim: warning: --step 1 µs")
    assert "401 frames" in line and "--max-frames 5" in line and "100 µs apart" in line
    r = cli("animate", str(fc.out), "--step", "100us", "--max-frames", "5", "--out", str(out))
    assert r.returncode == 0 and r.stderr == ""  # 5 frames: as asked


def test_an_instant_outside_the_run_is_said(fc, cli, tmp_path):
    png = tmp_path / "a.png"
    r = cli("animate", str(fc.out), "--out", str(png), "--at", "1ms")
    assert r.returncode == 0 and png.read_bytes().startswith(PNG)
    (line,) = r.stderr.splitlines()
    assert line == (
        "lfsim: warning: --at 1 ms is after the end of the run (400 µs): the frame shows the "
        "end, 400 µs"
    )
    r = cli("animate", str(fc.out), "--out", str(tmp_path / "a.html"), "--at", "100us")
    assert r.returncode == 0
    assert r.stderr.splitlines() == [
        "lfsim: warning: --at applies to a .png (one frame); .html shows every frame"
    ]


def test_png_shows_the_instant_asked(fc, tmp_path):
    # The frame at --at itself, not the nearest of the animation's frames.
    anim = an.Animation(an.load_run(fc.out))
    assert not np.isclose(anim.times, 300e-6).any()
    fig, update = anim.figure()
    update(anim.frame_at(300e-6))
    assert fig.texts[0].get_text().startswith("fc_distance: t = 300 µs")


# ---------------------------------------------------------------------------------------------
# Colours as the legend says (issue 40 item 3).


def _legend_colour(fig, starts: str):
    (handle,) = [
        h for h in fig.axes[0].get_legend().legend_handles if h.get_label().startswith(starts)
    ]
    return to_rgba(
        handle.get_facecolor() if hasattr(handle, "get_facecolor") else handle.get_color()
    )


def test_bars_have_the_colour_of_their_legend(fc, deadlock):
    anim = an.Animation(an.load_run(fc.out), step_s=1e-6, max_frames=1000)
    fig, update = anim.figure()
    credit = _legend_colour(fig, "BB_Credit in use")
    stopped = [k for k in range(len(anim.times)) if "h1" in anim.frame(k).stopped]
    assert stopped  # the sender waits for R_RDYs: the bar is full and the arrow shows
    for k in (stopped[0], stopped[-1], 0):
        update(k)
        line = update.__self__.bars["h1"][0]
        assert to_rgba(line.get_color()) == credit
    anim = an.Animation(an.load_run(deadlock.out))
    fig, update = anim.figure()
    queue = _legend_colour(fig, "egress queue")
    cycle = _legend_colour(fig, "deadlock")
    update(len(anim.times) - 1)
    for port, (line, _, _) in update.__self__.bars.items():
        want = cycle if port in anim.cycle_ports else queue
        assert to_rgba(line.get_color()) == want, port


# ---------------------------------------------------------------------------------------------
# Output in proportion (issue 40 item 3): HTML is the frames as numbers, drawn by a player;
# GIF and MP4 frames drawn incrementally.


def test_html_is_the_frames_as_numbers_over_one_still_picture(deadlock, monkeypatch):
    from matplotlib.figure import Figure

    saved = []
    real_savefig = Figure.savefig
    monkeypatch.setattr(
        Figure,
        "savefig",
        lambda self, *a, **k: saved.append(k.get("format")) or real_savefig(self, *a, **k),
    )
    anim = an.Animation(an.load_run(deadlock.out))
    html = anim.to_html()
    assert saved == ["svg"]  # the figure is rendered once, whatever the number of frames
    data = player_data(html)
    assert data["t"] == [float(f"{t:.9g}") for t in anim.times]
    for k in (0, len(anim.times) // 2, len(anim.times) - 1):
        f = anim.frame(k)
        for i, port in enumerate(data["ports"]):
            assert data["q"][k][i] == round(1000 * f.queue.get(port, 0.0))
            state = "2" if port in f.red else "1" if port in f.stopped else "0"
            assert data["s"][k][i] == state
        assert data["title"][k] == update_title(anim, k)
    # Its size is the data's: a few bytes per port and frame over one still picture.
    few = an.Animation(an.load_run(deadlock.out), max_frames=10).to_html()
    per_cell = (len(html) - len(few)) / ((len(anim.times) - 10) * len(data["ports"]))
    assert per_cell < 40
    assert len(html) < 200_000  # was 8.9 MB: 150 PNG frames


def update_title(anim, k):
    fig, update = anim.figure()
    update(k)
    return fig.texts[0].get_text()


PLAYER_STUB = Path(__file__).parent / "data" / "animate_player_stub.js"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the player's script")
def test_the_player_script_draws_the_frame(deadlock, tmp_path):
    anim = an.Animation(an.load_run(deadlock.out))
    html = tmp_path / "a.html"
    html.write_text(anim.to_html())
    data = player_data(html.read_text())
    k = len(anim.times) - 1
    r = subprocess.run(
        ["node", str(PLAYER_STUB), str(html), str(k)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    drawn = json.loads(r.stdout)
    assert drawn["info"] == f"frame {k + 1} of {len(anim.times)}"
    # Bars: one stroke per port with a queue, red for the cycle's, from the bar's start.
    strokes = drawn["strokes"]
    f = anim.frame(k)
    bars = [s for s in strokes if s["width"] == an.BAR_WIDTH]
    held = [p for p in data["ports"] if f.queue.get(p, 0.0) >= 0.0005]
    assert len(bars) == len(held)
    for s, port in zip(bars, held, strict=True):
        i = data["ports"].index(port)
        assert s["points"][0] == data["bars"][i][:2]
        assert s["color"] == (data["color"]["cycle"] if port in f.red else data["color"]["queue"])
    # Arrows: one shaft per port stopped or in the cycle, heads filled.
    shafts = [s for s in strokes if s["width"] == an.ARROW_WIDTH]
    assert len(shafts) == len(f.stopped | f.red) == len(drawn["fills"])
    assert drawn["texts"][-1] == data["title"][k]


def test_gif_frames_are_drawn_incrementally(fc, tmp_path, monkeypatch):
    from matplotlib.figure import Figure
    from PIL import Image

    draws = []
    real_draw = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, r: draws.append(1) or real_draw(self, r))
    out = tmp_path / "a.gif"
    an.animate(fc.out, out, max_frames=40)
    with Image.open(out) as im:
        assert im.n_frames == 40
    assert len(draws) <= 2  # the still picture (for the palette's sample, then for the frames)
    # A frame drawn over the still picture is the frame drawn whole.
    anim = an.Animation(an.load_run(fc.out), max_frames=40)
    w, h, (fast,) = anim.rgba_frames(60, [20])
    drawing = an._Drawing(anim, 60)
    fig = drawing.build()
    drawing.freeze()
    drawing.update(20)
    for artist in drawing.moving():
        artist.set_animated(False)
    fig.canvas.draw()
    whole = np.asarray(fig.canvas.buffer_rgba())
    same = np.all(np.frombuffer(fast, np.uint8).reshape(h, w, 4) == whole, axis=2)
    assert same.mean() > 0.995


FAKE_FFMPEG = """#!{python}
import json, sys
data = sys.stdin.buffer.read()
json.dump({{"args": sys.argv[1:], "bytes": len(data)}}, open(sys.argv[-1], "w"))
"""


def test_mp4_frames_go_to_ffmpeg_once_each(fc, tmp_path, monkeypatch):
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ffmpeg = bin_dir / "ffmpeg"
    ffmpeg.write_text(FAKE_FFMPEG.format(python=sys.executable))
    ffmpeg.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    out = an.animate(fc.out, tmp_path / "a.mp4", max_frames=7, fps=5)
    seen = json.loads(out.read_text())
    args = seen["args"]
    w, h = map(int, args[args.index("-s") + 1].split("x"))
    assert args[args.index("-r") + 1] == "5" and args[args.index("-pix_fmt") + 1] == "rgba"
    assert seen["bytes"] == 7 * w * h * 4
