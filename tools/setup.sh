#!/usr/bin/env bash
# Installs what ftuner needs on a fresh Debian 12 machine (as root), idempotently.
# Debian packages: LLVM/MLIR 22 (FileCheck, mlir-opt-22 as the upstream reference),
# OpenBLAS (benchmark baseline); PyPI: lit; and the Python environment of the `ftuner`
# package (python/requirements.txt: torch, torch-mlir, ...) in $FTUNER_VENV
# (default ~/.cache/ftuner/venv, outside the checkout so that a fresh clone reuses it),
# re-installed only when the requirements change.
set -euo pipefail
pkgs=(llvm-22-dev libmlir-22-dev mlir-22-tools libpolly-22-dev libclang1-22
      libclang-common-22-dev libzstd-dev zlib1g-dev libopenblas-dev pkg-config)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  # libmlir-19-dev conflicts with libmlir-22-dev.
  if dpkg-query -W libmlir-19-dev >/dev/null 2>&1; then $SUDO apt-get remove -y libmlir-19-dev; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! command -v lit >/dev/null 2>&1 && ! python3 -c 'import lit' >/dev/null 2>&1; then
  python3 -m pip install -q lit
fi

venv="${FTUNER_VENV:-$HOME/.cache/ftuner/venv}"
req="$(dirname "$0")/../python/requirements.txt"
stamp="$venv/.ftuner-requirements"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! cmp -s "$req" "$stamp"; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
  cp "$req" "$stamp"
fi
