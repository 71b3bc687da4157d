"""Where lfsim writes (issue 40 items 12 and 13): onto anything but a regular file or a new
path, into a folder where nothing can be made, onto a full disk — one line naming the argument,
exit code 2, no traceback, and nothing half-written: no temporary file left, an earlier output
left as it was.

A full disk is stood in for by a file size limit (RLIMIT_FSIZE): a write beyond it fails with
EFBIG as a write onto a full disk fails with ENOSPC (Python ignores SIGXFSZ, so the write
returns the error instead of killing the process).
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SMALL

ROOT = Path(__file__).resolve().parents[3]
CAPTURE = ROOT / "validation/data/traces/pcap/huawei-hiroce-rocev2-send-imm-proxy.pcap"
PERFTEST = ROOT / "validation/data/traces/perftest/cx5-100g-baremetal-write-bw-mtu1024.txt"
HPCC = ROOT / "scenarios/hpcc"
# /proc takes no new files or folders, whoever asks (root's permission bits would not stop it).
NOWHERE = "/proc/lfsim-no-such-dir/out"


def lfsim(*args, cwd, max_file_bytes: int | None = None) -> subprocess.CompletedProcess:
    def limit():
        if max_file_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run(
        [sys.executable, "-m", "lfsim.cli", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit,
    )


def refused(p: subprocess.CompletedProcess, *expected: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr)
    # Warnings about the input may come first; the error is one line.
    lines = [x for x in p.stderr.splitlines() if not x.startswith("lfsim: warning:")]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_replay_refuses_a_device_or_pipe_and_leaves_it_alone(tmp_path):
    """Onto a character device (as root, `-o /dev/full` would replace the device node): a
    named pipe stands in for it here, so that the unfixed code could do no harm."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    p = lfsim("replay", CAPTURE, "-o", fifo, cwd=tmp_path)
    refused(p, "-o", "named pipe", "accepted: a regular file")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    p = lfsim("replay", CAPTURE, "-o", "/dev/null", cwd=tmp_path)
    refused(p, "-o", "character device")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_convert_refuses_a_pipe(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    p = lfsim("convert", "hpcc", HPCC / "topology.txt", HPCC / "flow.txt", "-o", fifo,
              cwd=tmp_path)  # fmt: skip
    refused(p, "--out", "named pipe")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.parametrize(
    "args",
    [
        ["replay", CAPTURE, "-o", f"{NOWHERE}/s.yaml"],
        ["convert", "hpcc", HPCC / "topology.txt", HPCC / "flow.txt", "-o", f"{NOWHERE}/s.yaml"],
        ["compare", "perftest", PERFTEST, "--out", NOWHERE],
    ],
    ids=["replay", "convert", "compare"],
)
def test_unwritable_folder_is_one_line(args, tmp_path):
    line = refused(lfsim(*args, cwd=tmp_path))
    assert "lfsim-no-such-dir" in line


def test_compare_out_onto_a_file_is_refused_before_the_work(tmp_path):
    (tmp_path / "taken").write_text("mine\n")
    p = lfsim("compare", "perftest", PERFTEST, "--out", "taken", cwd=tmp_path)
    refused(p, "--out", "which is a file")
    assert (tmp_path / "taken").read_text() == "mine\n"
    assert p.stdout == ""  # refused before the simulation ran


@pytest.mark.parametrize("command", ["replay", "convert"])
def test_a_full_disk_leaves_no_temporary_file_and_the_old_file(command, tmp_path):
    (tmp_path / "s.yaml").write_text("old: yes\n")
    if command == "replay":
        args = ["replay", CAPTURE, "-o", "s.yaml"]
    else:
        args = ["convert", "hpcc", HPCC / "topology.txt", HPCC / "flow.txt", "-o", "s.yaml"]
    p = lfsim(*args, cwd=tmp_path, max_file_bytes=200)
    refused(p, "s.yaml", "File too large")
    assert (tmp_path / "s.yaml").read_text() == "old: yes\n"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("command", ["replay", "convert"])
def test_written_files_get_the_usual_permissions(command, tmp_path):
    """mkstemp makes 0600 files (private, for secrets); a scenario is shared like any file."""
    if command == "replay":
        args = ["replay", CAPTURE, "-o", "s.yaml"]
    else:
        args = ["convert", "hpcc", HPCC / "topology.txt", HPCC / "flow.txt", "-o", "s.yaml"]
    old = os.umask(0o022)
    try:
        p = lfsim(*args, cwd=tmp_path)
    finally:
        os.umask(old)
    assert p.returncode == 0, p.stderr
    assert stat.S_IMODE((tmp_path / "s.yaml").stat().st_mode) == 0o644


def test_compare_writes_all_or_nothing(tmp_path):
    """comparison.json is not replaced when comparison.txt or the plot cannot be written."""
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "comparison.json").write_text('{"old": true}')
    p = lfsim("compare", "perftest", PERFTEST, "--out", out, cwd=tmp_path, max_file_bytes=1500)
    refused(p, "--out", "File too large")
    assert (out / "comparison.json").read_text() == '{"old": true}'
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "limit"),
    [
        # Tables and series written by pyarrow at the end (its errors name no file).
        (["fc_distance", *SMALL, "--set", "record=credits,rx_buffers"], 4096),
        # A series spilled to raw files by the C++ core while it runs (2^18 rows, 2 MiB a
        # column at a time).
        (["fat_tree_websearch", "--set", "stop_time=1ms", "--set", "record=queue"], 1_000_000),
    ],
    ids=["tables", "spill"],
)
def test_run_onto_a_full_disk_is_one_line_and_writes_nothing(args, limit, tmp_path):
    p = lfsim("run", *args, "--out", "r", cwd=tmp_path, max_file_bytes=limit)
    refused(p, "out", "File too large")
    assert sorted(x.name for x in tmp_path.iterdir()) == []


def test_a_full_disk_leaves_no_folder_made_for_the_file(tmp_path):
    """The folders made for a new file's path go again when the file cannot be written."""
    p = lfsim("replay", CAPTURE, "-o", "new/sub/s.yaml", cwd=tmp_path, max_file_bytes=200)
    refused(p, "s.yaml", "File too large")
    assert list(tmp_path.iterdir()) == []
