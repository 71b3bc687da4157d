"""Deadlock plots: the pause map of the ``blocked`` recorder and the topology with the cycle.

The real simulator runs scenarios/pfc_deadlock.yaml for 3 ms: four switches in a ring, each
host writing to the host two switches clockwise (mode ``deadlock``), and the same with up*/down*
routing (mode ``updown``), which cannot form a cycle of buffer dependencies.
"""

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyArrowPatch

import lfsim
from lfsim import plotdata, plotting
from lfsim.runner import make_frame

SHORT = {"stop_time": "3ms"}
RING = [f"ring{i}" for i in range(4)]
CLOCKWISE = [(RING[i], RING[(i + 1) % 4]) for i in range(4)]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def deadlock(tmp_path_factory):
    out = tmp_path_factory.mktemp("deadlock") / "run"
    return lfsim.run("pfc_deadlock", {**SHORT, "mode": "deadlock"}, out=out, plot=True)


@pytest.fixture(scope="module")
def updown(tmp_path_factory):
    out = tmp_path_factory.mktemp("updown") / "run"
    return lfsim.run("pfc_deadlock", {**SHORT, "mode": "updown"}, out=out, plot=True)


def _ports(result):
    return plotdata.labels_of(result, "links")


def _cycle_arrows(fig):
    """The bold red arrows of the topology figure (routes are thin and of other colours)."""
    red = to_rgba(plotting.CYCLE_COLOR)
    return [
        p
        for p in fig.axes[0].patches
        if isinstance(p, FancyArrowPatch) and np.allclose(p.get_edgecolor()[:3], red[:3])
    ]


def _rotated_to(edges, first):
    """The cyclic list of edges starting at the one that leaves ``first``."""
    starts = [u for u, _ in edges]
    k = starts.index(first)
    return edges[k:] + edges[:k]


def test_pause_map_and_topology_are_written(deadlock):
    plots = deadlock.out / "plots"
    for name in ("blocked.png", "topology.png"):
        assert (plots / name).read_bytes()[:8] == PNG
    # The topology replaces the meaningless line plot of the links table's two index columns.
    assert not (plots / "links.png").exists()


def test_the_cycle_is_the_four_clockwise_ring_links(deadlock):
    m = deadlock.metrics
    assert m["deadlock"] is True
    edges = plotdata.cycle_edges(m["deadlock_cycle"], deadlock.table("links"), _ports(deadlock))
    assert _rotated_to(edges, "ring0") == CLOCKWISE
    # Every edge is a real cable between two switches of the ring.
    g = plotdata.topology_graph(deadlock.table("links"), _ports(deadlock))
    assert all(g.has_edge(u, v) for u, v in edges)
    assert {g.nodes[n]["kind"] for e in edges for n in e} == {"switch"}
    fig = plotting.topology_figure(deadlock.table("links"), _ports(deadlock), metrics=m)
    assert len(_cycle_arrows(fig)) == 4


def test_ring_layout_is_a_circle_in_clockwise_order(deadlock):
    g = plotdata.topology_graph(deadlock.table("links"), _ports(deadlock))
    pos = plotdata.topology_layout(g)
    radius = [np.hypot(*pos[s]) for s in RING]
    assert np.allclose(radius, radius[0])
    angles = np.unwrap([np.arctan2(pos[s][1], pos[s][0]) for s in RING])
    assert np.all(np.diff(angles) < 0)  # ring0 -> ring1 -> ... turns clockwise
    for i in range(4):  # host i hangs outside ring i
        h, s = np.array(pos[f"h{i}"]), np.array(pos[RING[i]])
        assert np.hypot(*h) > np.hypot(*s)
        assert np.dot(h, s) / (np.hypot(*h) * np.hypot(*s)) == pytest.approx(1.0)


def test_cycle_members_are_blocked_from_before_the_deadlock_to_the_end(deadlock):
    m = deadlock.metrics
    end = deadlock.summary["sim_time_s"]
    formed = m["deadlock_time_us"] * 1e-6
    assert formed < end
    spells = plotdata.blocked_spells(deadlock.timeseries("blocked"), end)
    assert (spells["end_s"] >= spells["start_s"]).all()
    for queue in m["deadlock_cycle"]:
        last = spells[spells["queue"] == queue].iloc[-1]
        assert last["start_s"] <= formed + 1e-12
        assert last["end_s"] == end
        assert bool(last["ongoing"])
        assert last["bytes"] > 0  # a blocked queue of the cycle holds data
    # Nothing that is not blocked to the end is marked as ongoing.
    assert (spells.loc[~spells["ongoing"], "end_s"] < end).all()


def test_pause_map_puts_the_cycle_on_top_in_red_with_its_instants(deadlock):
    m = deadlock.metrics
    df = deadlock.timeseries("blocked")
    fig = plotting.blocked_figure(df, "blocked", deadlock.summary["sim_time_s"], m)
    ax = fig.axes[0]
    rows = [t.get_text().split("  ")[0] for t in ax.get_yticklabels()]
    n = len(m["deadlock_cycle"])
    assert rows[::-1][:n] == m["deadlock_cycle"]  # top rows, in wait-for order
    assert set(rows) == set(plotdata.blocked_spells(df)["queue"])
    red = to_rgba(plotting.CYCLE_COLOR)
    red_rows = [c for c in ax.collections if np.allclose(c.get_facecolor()[0], red)]
    assert len(red_rows) == n
    # ms axis: the lines at the instants the cycle formed and was detected.
    xs = {round(float(line.get_xdata()[0]), 9) for line in ax.get_lines()}
    for key in ("deadlock_time_us", "deadlock_detected_us"):
        assert round(m[key] * 1e-3, 9) in xs


def test_no_cycle_is_drawn_without_a_deadlock(updown):
    m = updown.metrics
    assert m["deadlock"] is False
    assert (updown.out / "plots" / "topology.png").read_bytes()[:8] == PNG
    fig = plotting.topology_figure(updown.table("links"), _ports(updown), metrics=m)
    assert _cycle_arrows(fig) == []
    df = updown.timeseries("blocked")
    spells = plotdata.blocked_spells(df, updown.summary["sim_time_s"])
    assert len(spells)  # up*/down* still pauses, only no cycle forms
    pause_map = plotting.blocked_figure(df, "blocked", updown.summary["sim_time_s"], m)
    ax = pause_map.axes[0]
    red = to_rgba(plotting.CYCLE_COLOR)
    assert not [c for c in ax.collections if np.allclose(c.get_facecolor()[0], red)]
    assert ax.get_lines() == []  # no deadlock instants
    assert "no deadlock" in pause_map.get_suptitle()


def test_spells_from_an_unsorted_series():
    # Queue 0: blocked 1..3 ms and from 4 ms to the end; queue 1: 2..2.5 ms; queue 2 never.
    rows = [(2e-3, 1, 1), (1e-3, 0, 1), (3e-3, 0, 0), (2.5e-3, 1, 0), (4e-3, 0, 1)]
    t, ids, blocked = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
    df = make_frame(
        {"time_s": t, "id": ids, "blocked": blocked, "bytes": 100 * blocked}, ["q0", "q1", "q2"]
    )
    spells = plotdata.blocked_spells(df, 5e-3)
    got = [(r.queue, r.start_s, r.end_s, r.ongoing) for r in spells.itertuples()]
    assert got == [
        ("q0", 1e-3, 3e-3, False),
        ("q1", 2e-3, 2.5e-3, False),
        ("q0", 4e-3, 5e-3, True),
    ]


def test_pause_map_of_many_queues_and_of_none():
    n = 300
    t = np.repeat(np.arange(n) * 1e-6, 2) + np.tile([0.0, 1e-6], n)
    ids = np.repeat(np.arange(n, dtype=float), 2)
    blocked = np.tile([1.0, 0.0], n)
    labels = [f"sw{i // 8}/p{i % 8}/prio3" for i in range(n)]
    df = make_frame({"time_s": t, "id": ids, "blocked": blocked, "bytes": blocked}, labels)
    fig = plotting.blocked_figure(df, "blocked", 1e-3, {"deadlock": False})
    assert len(fig.axes[0].get_yticklabels()) == plotting.MAX_BLOCKED_ROWS
    assert f"{n} queues ever blocked" in fig.get_suptitle()
    empty = make_frame({c: np.array([]) for c in ("time_s", "id", "blocked", "bytes")}, [])
    fig = plotting.blocked_figure(empty, "blocked", 1e-3, {"deadlock": False})
    assert any("no queue was ever blocked" in x.get_text() for x in fig.axes[0].texts)
    assert len(plotdata.blocked_spells(empty)) == 0


def test_watchdog_release_ends_the_cycle_spells_and_is_drawn():
    wd = lfsim.run(
        "pfc_deadlock",
        {
            "mode": "deadlock",
            "stop_time": "4ms",
            "RoceSwitch.PfcWatchdog": True,
            "RoceSwitch.PfcWatchdogDetectionTime": "1ms",
            "RoceSwitch.PfcWatchdogRestorationTime": "1ms",
        },
    )
    m = wd.metrics
    end = wd.summary["sim_time_s"]
    formed, cleared = m["deadlock_time_us"] * 1e-6, m["deadlock_cleared_us"] * 1e-6
    assert formed < cleared < end
    spells = plotdata.blocked_spells(wd.timeseries("blocked"), end)
    for queue in m["deadlock_cycle"]:
        own = spells[spells["queue"] == queue]
        during = own[(own["start_s"] <= formed + 1e-12) & (own["end_s"] >= formed)]
        assert len(during) == 1  # the spell in which the cycle formed ...
        assert during["end_s"].iloc[0] < end  # ... ended: the watchdog released the queue
    fig = plotting.blocked_figure(wd.timeseries("blocked"), "blocked", end, m)
    xs = {round(float(line.get_xdata()[0]), 9) for line in fig.axes[0].get_lines()}
    assert round(m["deadlock_cleared_us"] * 1e-3, 9) in xs
