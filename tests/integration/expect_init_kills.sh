#!/usr/bin/env bash
# Kills while the job starts (ranks connecting, publishing, in the start-up
# fence): K jobs of it_faults (it_faults.sh, UCFT_IT_WHEN=init), the
# first half with the kill at 20, 24, ..., ms, the second at 100, 150,
# 225, ... ms (x 1.5), so that some kills land after start-up also when
# other jobs load the machine and start-up takes several times its idle
# 0.1 s (twelve kills at 20-64 ms all landed in a start-up of a loaded
# full test run, and none went on). Each job must end on its own well within the
# bound: either every survivor's ucft_init fails with a reason, or every
# survivor goes on and checks every result; and at least MIN_ON jobs must
# go on (a ucft_init that fails whenever a rank dies early, or always, must
# not pass). Guards against four faults seen here: survivors split on whether
# start-up succeeded, a launcher that never exits (PMIx_server_finalize
# deadlock), lookups of a rank that never published its address blocking
# for seconds, and lookups that found no peer at all.
# Usage: expect_init_kills.sh UCFTRUN IT_FAULTS N K [MIN_ON]  (MIN_ON: how
# many jobs must go on past ucft_init, default 0; UCFT_IT_BOUND: seconds
# after which a job is killed as hung, default 60)
set -u
ucftrun=$1 prog=$2 n=$3 k=$4 min_on=${5:-0}
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
went_on=0
for ((i = 0; i < k; i++)); do
  if (( 2 * i < k )); then
    t=$(( 20 + 4 * i ))
  else
    t=100
    for ((j = 2 * i; j >= k + 2; j -= 2)); do t=$(( t * 3 / 2 )); done
  fi
  seed=$(( 7 * (150 * (i + 1) + t) + i % 7 )) # the victim varies
  start=$(date +%s)
  UCFT_IT_WHEN=init UCFT_IT_SEED=$seed UCFT_IT_KILL_MS=$t UCFT_IT_TIMEOUT=30 \
    timeout -s KILL ${UCFT_IT_BOUND:-60} bash "$here/it_faults.sh" "$ucftrun" "$prog" "$n" barrier corrected kill >"$log" 2>&1
  rc=$?
  cat "$log"
  el=$(( $(date +%s) - start ))
  [ "$rc" -ne 137 ] || fail "seed $seed: the launcher did not end (killed after 60 s)"
  [ "$rc" -eq 0 ] || fail "seed $seed: it_faults.sh failed"
  [ "$el" -le 20 ] || fail "seed $seed: took ${el} s"
  grep -q "ucft_init failed at every survivor" "$log" || went_on=$((went_on + 1))
done
[ "$went_on" -ge "$min_on" ] ||
  fail "only $went_on of $k jobs went on after the kill (at least $min_on should); the rest failed ucft_init"
echo "PASS: $k jobs with a kill during start-up, $went_on went on past ucft_init"
