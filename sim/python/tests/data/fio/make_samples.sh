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
