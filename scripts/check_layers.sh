#!/usr/bin/env bash
# The layer check (CTest: check.layers). Outside transport/ucp/ no file of
# ucft includes a UCX header (ucp/, uct/, ucs/), neither directly nor
# through a header of transport/ucp/ that does (fifo_probe.h,
# tp_ucp_diag.h, tp_ucp_priv.h, ...; found by looking, not listed here).
# The rest of the tree reaches UCX through the transport interface
# (transport/transport.h) and creates the backend with transport/ucp/tp_ucp.h,
# which includes no UCX header.
#
# Every .c and .h file of the source tree is checked (.git and build trees,
# the folders that hold a CMakeCache.txt, are skipped), so a new folder is
# covered without touching this script. The exceptions are the allow-list
# below: the backend itself and the tools and tests that are raw-UCX
# baselines or UCX diagnostics by design.
#
# Usage: scripts/check_layers.sh [SOURCE_ROOT]
# Prints file:line: include for each offence and exits 1; exits 0 when the
# tree is clean.
set -euo pipefail

root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# Paths relative to the root ([[ == ]] patterns: * matches / as well).
allow=(
  'transport/ucp/*'               # the UCP backend
  'tools/bench/raw_ucp.*'         # ucft-bench pt2pt's raw-UCP baseline
  'tools/shmkill/*'               # ucft-shmkill: raw-UCP senders, the probe
                                  # run by hand, the backend's diagnostics
  'tools/info/*'                  # ucft-info: UCX's version and resources
  'tests/integration/it_forged.c' # forged messages from a raw UCP worker
)

allowed() {
  local f=$1 p
  for p in "${allow[@]}"; do
    [[ $f == $p ]] && return 0
  done
  return 1
}

files=()
while IFS= read -r -d '' f; do
  files+=("${f#./}")
done < <(find . \( -name .git -o -type d -exec test -e '{}/CMakeCache.txt' \; \) \
  -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)

inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*'
ucx="$inc[<\"](ucp|uct|ucs)/"

# The headers of transport/ucp/ that bring UCX in, directly or through one
# another (until no new one is found).
ucx_headers=()
while :; do
  pattern=$ucx
  for h in "${ucx_headers[@]}"; do
    pattern+="|$inc\"([^\"]*/)?transport/ucp/${h//./\\.}\""
  done
  found=()
  for f in transport/ucp/*.h; do
    if grep -qE "$pattern" "$f"; then
      found+=("$(basename "$f")")
    fi
  done
  [[ ${#found[@]} -eq ${#ucx_headers[@]} ]] && break
  ucx_headers=("${found[@]}")
done

bad=0
for f in "${files[@]}"; do
  allowed "$f" && continue
  if grep -nHE "$pattern" "$f"; then
    bad=1
  fi
done

if [[ $bad -ne 0 ]]; then
  echo "check_layers: the files above include UCX outside transport/ucp/" \
    "(headers that bring UCX in: ${ucx_headers[*]} and <ucp|uct|ucs/...>);" \
    "go through transport/transport.h, or add a genuine raw-UCX tool or" \
    "test to the allow-list in scripts/check_layers.sh" >&2
  exit 1
fi
echo "check_layers: ${#files[@]} files, none includes UCX outside" \
  "transport/ucp/ and the allow-list"
