"""What the tshark tests (test_tshark*.py) share: tshark on a capture file, the frames it calls
malformed or flags, the records of a pcap file, the ICRC a RoCEv2 frame must carry, and a
storage run captured at every port next to the same run without captures."""

import io
import shutil
import struct
import subprocess
import zlib

import pandas as pd

import lfsim

TSHARK = shutil.which("tshark")
# Malformed, or an expert item of severity warning or error (a bad checksum or CRC among them).
CHECK = "_ws.malformed || _ws.expert.severity >= warning"
ETH, UDP, ICRC = 14, 8, 4


def tshark(path, *args, prefs=()) -> str:
    p = subprocess.run(
        [TSHARK, "-n", "-r", str(path), *prefs, *args], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def fields(path, names, *args, prefs=(), every=False) -> pd.DataFrame:
    """One row per frame (those `args` such as -Y select), a column of strings per field of
    `names` (empty where absent); with `every`, each field's occurrences joined by ';' (a frame
    may carry several PDUs)."""
    many = ["-E", "occurrence=a", "-E", "aggregator=;"] if every else []
    out = tshark(
        path,
        *args,
        "-T",
        "fields",
        "-E",
        "header=y",
        *many,
        *[x for f in names for x in ("-e", f)],
        prefs=prefs,
    )
    return pd.read_csv(io.StringIO(out), sep="\t", dtype=str, keep_default_na=False)


def problems(path, prefs=()) -> list[str]:
    """Numbers of the frames tshark calls malformed or flags with an expert warning or error."""
    return tshark(path, "-Y", CHECK, "-T", "fields", "-e", "frame.number", prefs=prefs).split()


def records(path) -> list[bytes]:
    """The frames of a little-endian pcap file, in order."""
    data = path.read_bytes()
    assert struct.unpack_from("<I", data)[0] == 0xA1B23C4D  # nanosecond timestamps
    frames, off = [], 24
    while off < len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        frames.append(data[off + 16 : off + 16 + incl])
        off += 16 + incl
    return frames


def rocev2_icrc(frame: bytes) -> tuple[bytes, bytes] | None:
    """(ICRC in the frame, ICRC it should carry) of a RoCEv2 frame, None for any other.

    IBTA Vol. 1 Annex A17 (RoCEv2): CRC-32 over 64 bits of ones (for the LRH), the IPv4 header
    with TOS, TTL and checksum set to ones, the UDP header with its checksum set to ones, the BTH
    with its byte 4 (FECN, BECN, resv6a) set to ones, and the rest up to the ICRC; sent low byte
    first, as an Ethernet FCS (Linux rdma_rxe's rxe_icrc_generate)."""
    if frame[12:14] != b"\x08\x00":
        return None
    ip = bytearray(frame[ETH:])
    ihl = (ip[0] & 0x0F) * 4
    total = int.from_bytes(ip[2:4], "big")
    if ip[9] != 17 or int.from_bytes(ip[ihl + 2 : ihl + 4], "big") != 4791:
        return None
    masked = ip[:total]
    masked[1] = masked[8] = 0xFF
    masked[10:12] = masked[ihl + 6 : ihl + 8] = b"\xff\xff"
    masked[ihl + UDP + 4] = 0xFF
    want = struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(masked[:-ICRC])))
    return bytes(ip[total - ICRC : total]), want


def storage_captures(tmp_path_factory, overrides: dict, probe: bool = True) -> dict:
    """storage_qd1 with `overrides`, captured at its 4 ports ({label: path}), and (`probe`) the
    same run without captures, which must come out the same."""
    r = lfsim.run(
        "storage_qd1", overrides, out=tmp_path_factory.mktemp("captures") / "o", pcap="all"
    )
    labels = r.labels("ports")
    assert labels == ["h0", "h1", "sw0/p0", "sw0/p1"]
    path = {p.stem.replace("_", "/"): p for p in r.pcap_files}
    assert sorted(path) == sorted(labels)
    return {
        "probe": lfsim.run("storage_qd1", overrides) if probe else None,
        "result": r,
        "path": path,
    }
