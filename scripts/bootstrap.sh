#!/usr/bin/env bash
# Idempotent set-up shared by `make demo`, `make test` and `make bench`:
# Debian packages if missing, the Python venv with pinned requirements, configure and build.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(ns3 libns3-dev libgsl-dev libsqlite3-dev libxml2-dev libboost-dev pybind11-dev
              cmake ninja-build g++ python3 python3-dev python3-venv tshark
              fio python3-six)
# fio: real fio JSON samples and fio's own json+ reader (fio_jsonplus_clat2csv, which imports
# six without Debian's fio package depending on python3-six) for the fio-compatible output.
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # tshark asks whether non-root users may capture; answer no so the install never prompts.
  echo "wireshark-common wireshark-common/install-setuid boolean false" |
    $SUDO debconf-set-selections
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Debian's python3 (3.11) so the extension is built against the interpreter the venv uses.
PY=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.requirements.sha
want=$(sha256sum requirements.txt sim/python/pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing Python requirements"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  .venv/bin/python -m pip install -q --no-build-isolation -e sim/python
  echo "$want" > "$stamp"
fi

if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DPython3_EXECUTABLE="$PWD/.venv/bin/python" >/dev/null
fi
cmake --build build -j "$(nproc)"
