#!/usr/bin/env bash
# The main demo: installs what is missing, builds, then runs 4 ranks under
# ucftrun that say hello and pass a token around a ring, and a job in which
# one rank dies and every survivor is told.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/bootstrap.sh"
"$root/scripts/build.sh" "$root/build" >/dev/null
b=$root/build
echo
echo "== 4 ranks: hello and a token around the ring"
"$b/bin/ucftrun" -n 4 --tag-output "$b/examples/hello"
echo
echo "== 4 ranks: rank 3 kills itself; the others were waiting for it"
"$b/bin/ucftrun" -n 4 --tag-output "$b/examples/failure" || true
echo
echo "(ucftrun reports the rank that died and exits with its status; the"
echo " survivors above ended their receive with ERR_PROC_FAILED.)"
