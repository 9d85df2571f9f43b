#!/usr/bin/env bash
# Configures and builds ucft into a build directory.
# Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}
shift || true
mkdir -p "$dir"
cmake -S "$root" -B "$dir" -DUCFT_WERROR=ON "$@" >"$dir/configure.log" 2>&1 || {
  cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$(nproc)"
