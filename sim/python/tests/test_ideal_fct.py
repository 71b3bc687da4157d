"""ideal_fct_us of RoCE flows: the flow alone on its path, frame by frame (store and forward,
the switch's forwarding latency, each link free again after a frame's inter-frame gap, ACKs
queueing on the way back), in integer picoseconds. The run computes a long message's middle
packets in closed form (roce-fabric.cc: IdealFct); this file schedules every frame, one at a
time, from the definition, on paths whose slowest link comes first (the closed form applies)
and last (it does not), for WRITE with ACK intervals 1 and 3 and for READ."""

import pytest

import lfsim

ETH, IPV4, UDP, BTH, ICRC, RETH, AETH = 14, 20, 8, 12, 4, 16, 4
BASE = ETH + IPV4 + UDP + BTH + ICRC
PS_PER_BYTE = {"100GbE": 80, "25GbE": 320}
PROP_PS = 7 * 5000  # 7 m at 5 ns/m
FWD_PS = 300_000  # RoceSwitch.ForwardingLatency
MTU = 1024


def line(frame: int) -> int:
    return max(frame + 4, 64) + 8 + 12  # FCS, minimum frame, preamble and SFD, gap


def padded(p: int) -> int:
    return p + (4 - p % 4) % 4


def through(hops: list[list[int]], ready: int, nbytes: int) -> int:
    """A frame ready at `ready` through hops [ps per byte, after, free]; its arrival."""
    for h in hops:
        start = max(ready, h[2])
        h[2] = start + nbytes * h[0]
        ready = start + (nbytes - 12) * h[0] + h[1]
    return ready


def ideal_ps(size: int, speeds: list[str], op: str, interval: int) -> int:
    # Host -> switch -> host: the switch's latency counts on the hop that reaches it.
    out = [[PS_PER_BYTE[speeds[0]], PROP_PS + FWD_PS, 0], [PS_PER_BYTE[speeds[1]], PROP_PS, 0]]
    back = [[PS_PER_BYTE[speeds[1]], PROP_PS + FWD_PS, 0], [PS_PER_BYTE[speeds[0]], PROP_PS, 0]]
    n = max(1, -(-size // MTU))
    rest = size - (n - 1) * MTU
    first_extra = RETH if op == "Write" else AETH
    last_extra = AETH if op == "Read" else 0
    first = line(BASE + first_extra + padded(MTU if n > 1 else rest))
    middle = line(BASE + padded(MTU))
    last = line(BASE + (last_extra if n > 1 else first_extra) + padded(rest))
    sizes = [first] + [middle] * (n - 2) + ([last] if n > 1 else [])
    if op == "Read":
        at = through(back, 0, line(BASE + RETH))
        done = 0
        for b in sizes:
            done = through(out, at, b)
        return done
    done = 0
    for j, b in enumerate(sizes):
        arrived = through(out, 0, b)
        if (j + 1) % interval == 0 or j == n - 1:
            done = through(back, arrived, line(BASE + AETH))
    return done


def scenario(op: str, interval: int, sizes: list[int]) -> dict:
    flows = []
    for i, size in enumerate(sizes):
        # One flow at a time, each direction: h0 -> h1 leaves on the fast link (the slow one
        # last), h1 -> h0 on the slow one (first).
        src, dst = ("h0", "h1") if i % 2 == 0 else ("h1", "h0")
        flows.append({"src": src, "dst": dst, "size": size, "start": f"{i * 10}ms"})
    return {
        "fabric": "roce",
        "stop_time": "1us",  # the ideal FCT needs no traffic: a flow's is known when it is made
        "topology": {
            "hosts": ["h0", "h1"],
            "switches": ["sw"],
            "links": [
                {"a": "h0", "b": "sw", "speed": "100GbE"},
                {"a": "sw", "b": "h1", "speed": "25GbE"},
            ],
        },
        "workload": {"f": {"pattern": "Flows", "Operation": op, "flows": flows}},
        "RoceChannel": {"Length": 7},
        "RoceSwitch": {"ForwardingLatency": "300ns"},
        "RdmaNic": {"PathMtu": MTU, "AckInterval": interval},
    }


SIZES = [1, 1024, 1025, 3000, 5 * 1024, 3_000_017, 10_000_000]


@pytest.mark.parametrize(("op", "interval"), [("Write", 1), ("Write", 3), ("Read", 1)])
def test_ideal_fct_is_the_frame_by_frame_schedule(op, interval):
    r = lfsim.run(scenario(op, interval, SIZES))
    flows = r.table("flows")
    assert len(flows) == len(SIZES)
    for i, (size, got) in enumerate(zip(SIZES, flows["ideal_fct_us"], strict=True)):
        speeds = ["100GbE", "25GbE"] if i % 2 == 0 else ["25GbE", "100GbE"]
        want = ideal_ps(size, speeds, op, interval) / 1e6
        assert got == pytest.approx(want, rel=1e-12, abs=1e-9), (size, speeds)
