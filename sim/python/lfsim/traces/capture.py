"""Packet captures (pcap and pcapng, read with scapy): RoCEv2, PFC and iSCSI over TCP.

``read_capture(path)`` gives one row per frame: time, Ethernet and 802.1Q (VLAN, PCP), IPv4 or
IPv6 (DSCP, ECN codepoint), UDP or TCP, and for RoCEv2 (UDP port 4791) the BTH (opcode, QP,
PSN, AckReq, FECN/BECN), RETH (virtual address, R_Key, DMA length), AETH (syndrome, MSN),
ImmDt, the payload bytes and whether the ICRC is right (``icrc_ok``; IBTA Annex 17: computed
by scapy's RoCE layer over the masked IP/UDP/BTH and payload); for 802.1Qbb PFC frames (MAC
control opcode 0x0101) the class-enable vector and the eight pause timers.

``messages(frames)`` groups RoCE packets into messages per QP (first and last PSN of a
SEND/WRITE/READ, bytes, first packet time, the ACK or last read response that completes it);
``iscsi_commands(path)`` reassembles each iSCSI session's TCP stream (RFC 7143 PDUs, digests as
its login negotiated) and gives per SCSI command its size, direction, start and completion.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ScenarioError, quote

ROCEV2_PORT = 4791
ISCSI_PORT = 3260
CAPTURE_FORM = "a packet capture (pcap or pcapng, e.g. from tcpdump, Wireshark or lfsim --pcap)"

# IBTA Vol. 1 Table 38 (RC opcodes) and Annex 17 (CNP 0x81).
OPCODES = {
    0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_IMM",
    0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM", 0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE",
    0x08: "WRITE_LAST", 0x09: "WRITE_LAST_IMM", 0x0A: "WRITE_ONLY", 0x0B: "WRITE_ONLY_IMM",
    0x0C: "READ_REQUEST", 0x0D: "READ_RESPONSE_FIRST", 0x0E: "READ_RESPONSE_MIDDLE",
    0x0F: "READ_RESPONSE_LAST", 0x10: "READ_RESPONSE_ONLY", 0x11: "ACKNOWLEDGE",
    0x12: "ATOMIC_ACKNOWLEDGE", 0x13: "COMPARE_SWAP", 0x14: "FETCH_ADD",
    0x16: "SEND_LAST_INV", 0x17: "SEND_ONLY_INV", 0x81: "CNP",
}  # fmt: skip
CNP = 0x81
ACK = 0x11
READ_REQUEST = 0x0C
_RETH = {0x06, 0x0A, 0x0B, 0x0C}
_IMM = {0x03, 0x05, 0x09, 0x0B}
_AETH = {0x0D, 0x0F, 0x10, 0x11, 0x12}
_IETH = {0x16, 0x17}
_FIRST = {0x00, 0x04, 0x05, 0x06, 0x0A, 0x0B, 0x16, 0x17}
_LAST = {0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0A, 0x0B, 0x16, 0x17}
_READ_RESP = {0x0D, 0x0E, 0x0F, 0x10}
_DATA = set(range(0x00, 0x0C)) | _IETH | _READ_RESP


def _verb(op: int) -> str:
    if op <= 0x05 or op in _IETH:
        return "send"
    if op <= 0x0B:
        return "write"
    return "read"


def _layers():
    """scapy's layers, and the RDMA extension headers scapy has no layer for, declared as
    scapy layers (IBTA Vol. 1, 9.3.3: RETH 16 bytes, ImmDt 4, IETH 4)."""
    from scapy.fields import IntField, XIntField, XLongField
    from scapy.packet import Packet

    class RETH(Packet):
        name = "RETH"
        fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dlen", 0)]

    class ImmDt(Packet):
        name = "ImmDt"
        fields_desc = [XIntField("imm", 0)]

    return RETH, ImmDt


_COLUMNS = [
    "time_s", "frame_len", "src_mac", "dst_mac", "vlan", "pcp", "ethertype", "ip_src", "ip_dst",
    "dscp", "ecn", "proto", "sport", "dport", "opcode", "dest_qp", "psn", "ack_req", "fecn",
    "becn", "va", "rkey", "dma_len", "syndrome", "msn", "imm", "payload", "icrc_ok",
    "pfc_enable", *[f"pfc_quanta{p}" for p in range(8)], "tcp_seq", "tcp_flags", "tcp_len",
]  # fmt: skip


def _open(path, key: str):
    from scapy.utils import PcapNgReader, PcapReader

    p = Path(path)
    if not p.is_file():
        raise ScenarioError(f"{key}: no such file {quote(str(p))}; accepted: {CAPTURE_FORM}")
    try:
        head = p.open("rb").read(4)
    except OSError as exc:
        raise ScenarioError(
            f"{key}: cannot read {quote(str(p))} ({exc.__class__.__name__}); accepted: "
            f"{CAPTURE_FORM}"
        ) from None
    magic = struct.unpack("<I", head)[0] if len(head) == 4 else 0
    pcap = {0xA1B2C3D4, 0xD4C3B2A1, 0xA1B23C4D, 0x4D3CB2A1}
    try:
        if magic == 0x0A0D0D0A:
            return PcapNgReader(str(p))
        if magic in pcap:
            return PcapReader(str(p))
    except Exception as exc:  # scapy raises its own Scapy_Exception and others
        raise ScenarioError(
            f"{key}: {quote(str(p))} is not a readable capture ({exc}); accepted: {CAPTURE_FORM}"
        ) from None
    raise ScenarioError(
        f"{key}: {quote(str(p))} is not a pcap or pcapng file; accepted: {CAPTURE_FORM}"
    )


def read_capture(path: str | os.PathLike, key: str = "CAPTURE") -> pd.DataFrame:
    """One row per frame (see the module doc); ``attrs["path"]`` names the file."""
    from scapy.contrib.mac_control import MACControlClassBasedFlowControl
    from scapy.contrib.roce import BTH
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.packet import bind_layers

    bind_layers(UDP, BTH, dport=ROCEV2_PORT)  # scapy's roce module does; made sure here
    RETH, ImmDt = _layers()
    rows = []
    reader = _open(path, key)
    with reader:
        for pkt in reader:
            if Ether not in pkt:
                continue
            eth = pkt[Ether]
            r = dict.fromkeys(_COLUMNS)
            r.update(time_s=float(pkt.time), frame_len=len(pkt), src_mac=eth.src, dst_mac=eth.dst)
            r["ethertype"] = eth.type
            if Dot1Q in pkt:
                r["vlan"], r["pcp"] = pkt[Dot1Q].vlan, pkt[Dot1Q].prio
                r["ethertype"] = pkt[Dot1Q].type
            if MACControlClassBasedFlowControl in pkt:
                pfc = pkt[MACControlClassBasedFlowControl]
                r["pfc_enable"] = sum(getattr(pfc, f"c{p}_enabled") << p for p in range(8))
                for p in range(8):
                    r[f"pfc_quanta{p}"] = getattr(pfc, f"c{p}_pause_time")
            ip = pkt[IP] if IP in pkt else (pkt[IPv6] if IPv6 in pkt else None)
            if ip is not None:
                tos = ip.tos if IP in pkt else ip.tc
                r.update(ip_src=ip.src, ip_dst=ip.dst, dscp=tos >> 2, ecn=tos & 3)
            if TCP in pkt:
                tcp = pkt[TCP]
                r.update(proto="tcp", sport=tcp.sport, dport=tcp.dport, tcp_seq=tcp.seq,
                         tcp_flags=int(tcp.flags), tcp_len=len(bytes(tcp.payload)))  # fmt: skip
            elif UDP in pkt:
                r.update(proto="udp", sport=pkt[UDP].sport, dport=pkt[UDP].dport)
            if BTH in pkt and ip is not None:
                _bth(pkt[BTH], r, RETH, ImmDt)
            rows.append(r)
    df = pd.DataFrame(rows, columns=_COLUMNS)
    for c in _COLUMNS:
        if c not in _TEXT:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype(np.float64)
    df["icrc_ok"] = df["icrc_ok"].astype("boolean") if len(df) else df["icrc_ok"]
    df.attrs["path"] = str(path)
    return df


_TEXT = {"src_mac", "dst_mac", "ip_src", "ip_dst", "proto", "icrc_ok"}


def _bth(bth, r: dict, RETH, ImmDt) -> None:
    op = int(bth.opcode)
    r.update(
        opcode=op, dest_qp=int(bth.dqpn), psn=int(bth.psn), ack_req=int(bth.ackreq),
        fecn=int(bth.fecn), becn=int(bth.becn),
    )  # fmt: skip
    rest = bytes(bth.payload)  # after the BTH, before the ICRC (scapy's FCS field)
    # An ICRC the frame carries, against the one scapy computes (the invariant fields).
    try:
        r["icrc_ok"] = bth.icrc is not None and bth.compute_icrc(None) == struct.pack(
            "!I", bth.icrc
        )
    except Exception:
        r["icrc_ok"] = False
    if op == CNP:
        r["payload"] = 0
        return
    at = 0
    if op in _RETH and len(rest) >= 16:
        h = RETH(rest[:16])
        r.update(va=h.va, rkey=h.rkey, dma_len=h.dlen)
        at = 16
    if op in _AETH and len(rest) >= at + 4:
        syn, m1, m2, m3 = rest[at], rest[at + 1], rest[at + 2], rest[at + 3]
        r.update(syndrome=syn, msn=m1 << 16 | m2 << 8 | m3)
        at += 4
    if op in _IMM and len(rest) >= at + 4:
        r["imm"] = ImmDt(rest[at : at + 4]).imm
        at += 4
    if op in _IETH:
        at += 4
    if op == 0x12:
        at += 8  # AtomicAckETH
    if op in (0x13, 0x14):
        at += 28  # AtomicETH
    r["payload"] = max(len(rest) - at - int(bth.padcount), 0) if op in _DATA else 0


def roce(frames: pd.DataFrame) -> pd.DataFrame:
    return frames[frames["opcode"].notna()]


def icrc_errors(frames: pd.DataFrame) -> int:
    """RoCE frames whose ICRC is wrong (a capture that truncated frames counts them too)."""
    r = roce(frames)
    return int((~r["icrc_ok"].fillna(False).astype(bool)).sum())


# ---------------------------------------------------------------------------------------------
# Messages: what a verbs consumer posted, seen on the wire.


@dataclass
class _Open:
    key: tuple
    verb: str
    src: str
    dst: str
    qp: int
    first_psn: int
    start: float
    bytes: int
    npkts: int
    dma_len: int


def messages(frames: pd.DataFrame) -> pd.DataFrame:
    """One row per RDMA message: ``src``/``dst`` (the data's sender and receiver IP), ``qp``
    (the destination QP of its requests), ``verb``, ``bytes`` (payload; a READ: the DMA
    length), ``start_s`` (its first request packet), ``last_s`` (its last data packet),
    ``complete_s`` (the first ACK, or the last read response, covering its last PSN; NaN if the
    capture has none), ``first_psn``/``last_psn``, ``packets`` and ``retransmitted`` (data
    packets seen again with a PSN already seen)."""
    r = roce(frames).sort_values("time_s", kind="stable")
    out = []
    opened: dict[tuple, _Open] = {}
    seen: dict[tuple, set] = {}
    pending: dict[tuple, list] = {}  # (requester ip, responder ip) -> messages waiting for ACK
    reads: dict[tuple, list] = {}  # (requester, responder) -> READ messages awaiting responses
    for row in r.itertuples(index=False):
        op = int(row.opcode)
        if op == CNP:
            continue
        flow = (row.ip_src, row.ip_dst, int(row.dest_qp))
        if op in _DATA and op not in _READ_RESP:
            psns = seen.setdefault(flow, set())
            retx = int(row.psn) in psns
            psns.add(int(row.psn))
            if op in _FIRST and flow not in opened:
                opened[flow] = _Open(flow, _verb(op), row.ip_src, row.ip_dst, int(row.dest_qp),
                                     int(row.psn), row.time_s, 0, 0,
                                     _int(row.dma_len))  # fmt: skip
            m = opened.get(flow)
            if m is None:
                continue  # a middle or last packet of a message that began before the capture
            if not retx:
                m.bytes += _int(row.payload)
                m.npkts += 1
            if op in _LAST:
                msg = {
                    "src": m.src, "dst": m.dst, "qp": m.qp, "verb": m.verb, "bytes": m.bytes,
                    "start_s": m.start, "last_s": row.time_s, "complete_s": np.nan,
                    "first_psn": m.first_psn, "last_psn": int(row.psn), "packets": m.npkts,
                    "retransmitted": 0,
                }  # fmt: skip
                out.append(msg)
                pending.setdefault((row.ip_src, row.ip_dst), []).append(msg)
                del opened[flow]
            elif retx and m is not None:
                pass
        elif op == READ_REQUEST:
            msg = {
                "src": row.ip_dst, "dst": row.ip_src, "qp": int(row.dest_qp), "verb": "read",
                "bytes": int(row.dma_len), "start_s": row.time_s, "last_s": np.nan,
                "complete_s": np.nan, "first_psn": int(row.psn), "last_psn": int(row.psn),
                "packets": 0, "retransmitted": 0,
            }  # fmt: skip
            out.append(msg)
            reads.setdefault((row.ip_src, row.ip_dst), []).append(msg)
        elif op in _READ_RESP:
            waiting = reads.get((row.ip_dst, row.ip_src), [])
            if waiting:
                msg = waiting[0]
                msg["packets"] += 1
                if op in (0x0F, 0x10):
                    msg["last_s"] = msg["complete_s"] = row.time_s
                    waiting.pop(0)
        elif op == ACK and _int(row.syndrome, 0xFF) >> 5 == 0:
            # An ACK from the responder covers every message up to its PSN (mod 2^24).
            waiting = pending.get((row.ip_dst, row.ip_src), [])
            psn = int(row.psn)
            while waiting and _psn_le(waiting[0]["last_psn"], psn):
                waiting.pop(0)["complete_s"] = row.time_s
    df = pd.DataFrame(out, columns=["src", "dst", "qp", "verb", "bytes", "start_s", "last_s",
                                    "complete_s", "first_psn", "last_psn", "packets",
                                    "retransmitted"])  # fmt: skip
    df = df.sort_values("start_s", kind="stable").reset_index(drop=True)
    df["fct_us"] = (df["complete_s"] - df["start_s"]) * 1e6
    return df


def _int(v, default: int = 0) -> int:
    return default if v is None or v != v else int(v)


def _psn_le(a: int, b: int) -> bool:
    """a <= b in 24-bit PSN arithmetic."""
    return ((b - a) & 0xFFFFFF) < 0x800000


# ---------------------------------------------------------------------------------------------
# Summary statistics of a capture (the same function reads measured and simulated ones).


PAUSE_QUANTUM_BITS = 512  # 802.1Qbb: a quantum is 512 bit times


def summary(frames: pd.DataFrame, speed_bps: float | None = None) -> dict:
    """Counts a comparison needs: frames, RoCE packets, CNPs, ECN-capable and CE-marked data
    packets (the marked fraction), PFC frames per priority (XOFF: timer > 0) and, given the
    link rate, the pause time they asked for, ICRC errors."""
    r = roce(frames)
    data = r[r["opcode"].isin(list(_DATA))]
    out = {
        "frames": len(frames),
        "roce_packets": len(r),
        "data_packets": len(data),
        "cnps": int((r["opcode"] == CNP).sum()),
        "ecn_capable": int((data["ecn"] > 0).sum()),
        "ecn_ce": int((data["ecn"] == 3).sum()),
        "icrc_errors": icrc_errors(frames),
    }
    out["ecn_marked_fraction"] = out["ecn_ce"] / out["ecn_capable"] if out["ecn_capable"] else 0.0
    pfc = frames[frames["pfc_enable"].notna()]
    out["pfc_frames"] = len(pfc)
    for p in range(8):
        on = (pfc["pfc_enable"].to_numpy(dtype=np.int64) >> p & 1) == 1
        q = pfc.loc[on, f"pfc_quanta{p}"]
        out[f"pfc_xoff_prio{p}"] = int((q > 0).sum())
        if speed_bps:
            out[f"pfc_pause_us_prio{p}"] = float(q.sum()) * PAUSE_QUANTUM_BITS / speed_bps * 1e6
    return out


def per_qp(msgs: pd.DataFrame) -> pd.DataFrame:
    """Per QP (data sender, receiver, QP): messages, bytes and throughput (bytes over the span
    from the first message's start to the last one's completion)."""
    if msgs.empty:
        return pd.DataFrame(columns=["src", "dst", "qp", "messages", "bytes", "gbps"])
    g = msgs.groupby(["src", "dst", "qp"], sort=False)
    df = g.agg(messages=("bytes", "size"), bytes=("bytes", "sum"), t0=("start_s", "min"),
               t1=("complete_s", "max")).reset_index()  # fmt: skip
    span = df["t1"] - df["t0"]
    df["gbps"] = np.where(span > 0, df["bytes"] * 8 / span / 1e9, np.nan)
    return df.drop(columns=["t0", "t1"])


# ---------------------------------------------------------------------------------------------
# iSCSI over TCP (RFC 7143): SCSI commands per session.


def iscsi_commands(frames: pd.DataFrame, path: str | os.PathLike) -> pd.DataFrame:
    """Per SCSI command of every iSCSI session in the capture (TCP port 3260): ``initiator``,
    ``target`` (IPs), ``session`` (initiator port), ``itt``, ``verb`` (read or write),
    ``bytes`` (Expected Data Transfer Length), ``start_s`` (its SCSI Command PDU),
    ``complete_s`` (its SCSI Response, or the Data-In carrying status)."""
    from scapy.layers.inet import IP, TCP

    streams: dict[tuple, dict] = {}
    reader = _open(path, "CAPTURE")
    with reader:
        for pkt in reader:
            if TCP not in pkt or IP not in pkt:
                continue
            tcp = pkt[TCP]
            if ISCSI_PORT not in (tcp.sport, tcp.dport):
                continue
            data = bytes(tcp.payload)
            key = (pkt[IP].src, tcp.sport, pkt[IP].dst, tcp.dport)
            s = streams.setdefault(key, {})
            if data and tcp.seq not in s:
                s[tcp.seq] = (float(pkt.time), data)
    # Digests: what each session's login negotiated (the target's Login Response text).
    out = []
    for (src, sport, dst, dport), segs in streams.items():
        if dport != ISCSI_PORT:
            continue
        back = streams.get((dst, dport, src, sport), {})
        to_target = list(_pdus(segs))
        to_initiator = list(_pdus(back))
        hd, dd = _digests(to_initiator)
        to_target = list(_pdus(segs, hd, dd))
        to_initiator = list(_pdus(back, hd, dd))
        cmds = {}
        for t, bhs, _ in to_target:
            if bhs[0] & 0x3F == 0x01:  # SCSI Command
                itt = struct.unpack("!I", bhs[16:20])[0]
                flags = bhs[1]
                cmds[itt] = {
                    "initiator": src, "target": dst, "session": sport, "itt": itt,
                    "verb": "read" if flags & 0x40 else "write",
                    "bytes": struct.unpack("!I", bhs[20:24])[0], "start_s": t,
                    "complete_s": np.nan,
                }  # fmt: skip
        for t, bhs, _ in to_initiator:
            op = bhs[0] & 0x3F
            itt = struct.unpack("!I", bhs[16:20])[0]
            status = op == 0x21 or (op == 0x25 and bhs[1] & 0x01)
            if status and itt in cmds and np.isnan(cmds[itt]["complete_s"]):
                cmds[itt]["complete_s"] = t
        out.extend(cmds.values())
    df = pd.DataFrame(out, columns=["initiator", "target", "session", "itt", "verb", "bytes",
                                    "start_s", "complete_s"])  # fmt: skip
    df = df.sort_values("start_s", kind="stable").reset_index(drop=True)
    df["fct_us"] = (df["complete_s"] - df["start_s"]) * 1e6
    return df


def _pdus(segs: dict, header_digest: bool = False, data_digest: bool = False):
    """The PDUs of one direction's byte stream (segments by sequence number, each byte once):
    (time of the segment completing the BHS, the 48-byte BHS, the data segment)."""
    stream = bytearray()
    times = []  # (end offset, time)
    nxt = None
    for seq in sorted(segs, key=lambda s: s if nxt is None else (s - nxt) & 0xFFFFFFFF):
        t, data = segs[seq]
        if nxt is None:
            nxt = seq
        skip = (nxt - seq) & 0xFFFFFFFF
        if skip >= len(data) or skip > 0x7FFFFFFF:
            if ((seq - nxt) & 0xFFFFFFFF) < 0x7FFFFFFF and seq != nxt:
                break  # a hole: the rest cannot be framed
            continue
        stream += data[skip:]
        nxt = (seq + len(data)) & 0xFFFFFFFF
        times.append((len(stream), t))
    at = 0
    while at + 48 <= len(stream):
        bhs = bytes(stream[at : at + 48])
        ahs = bhs[4] * 4
        dlen = int.from_bytes(bhs[5:8], "big")
        padded = dlen + (-dlen) % 4
        end_hdr = at + 48 + ahs + (4 if header_digest else 0)
        total = end_hdr + padded + (4 if data_digest and dlen else 0)
        if total > len(stream):
            break
        t = next(tt for end, tt in times if end >= at + 48)
        yield t, bhs, bytes(stream[end_hdr : end_hdr + dlen])
        at = total


def _digests(pdus) -> tuple[bool, bool]:
    hd = dd = False
    for _, bhs, data in pdus:
        if bhs[0] & 0x3F == 0x23:  # Login Response
            text = data.decode("ascii", "replace")
            hd = hd or "HeaderDigest=CRC32C" in text
            dd = dd or "DataDigest=CRC32C" in text
    return hd, dd
