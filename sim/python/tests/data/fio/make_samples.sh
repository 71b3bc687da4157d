#!/usr/bin/env bash
# Regenerates the real fio samples in this directory with the fio on this machine (Debian's
# fio package). Small jobs on a temporary 8 MiB file; the numbers depend on the machine.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FIO_FILE="$tmp/f"
fio --name=r --filename="$FIO_FILE" --size=8M --bs=4k --rw=randread --iodepth=4 \
    --ioengine=libaio --direct=0 --runtime=1 --time_based \
    --output-format=json --output=randread_libaio.json
fio --name=r --filename="$FIO_FILE" --size=8M --bs=4k --rw=randread --iodepth=1 \
    --ioengine=psync --direct=0 --runtime=1 --time_based \
    --output-format=json+ --output=randread_psync_plus.json
fio randrw.fio --output-format=json+ --output=randrw_numjobs2_plus.json
# Latency log (--write_lat_log): one line per I/O, "msec, nsec, ddir, bs, offset, prio".
fio --name=r --filename="$FIO_FILE" --size=8M --bs=4k --rw=randread --iodepth=1 \
    --ioengine=psync --direct=0 --runtime=1 --time_based --write_lat_log=randread_psync \
    --log_avg_msec=0 --output-format=json --output=randread_psync_latlog.json
rm -f randread_psync_lat.1.log randread_psync_slat.1.log
