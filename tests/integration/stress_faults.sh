#!/usr/bin/env bash
# Many seeded it_faults runs (it_faults.sh) over a plan of configurations:
# hunts hangs and wrong results of the collectives under real kills.
#
# Usage: stress_faults.sh [options] [CONFIG...]
#   -b DIR    build directory (default: ./build of the repository)
#   -r R      runs per configuration (default 3)
#   -j J      jobs at once (default 1; at most 2 on a shared 2-core box)
#   -s SEED   first seed (default: the clock); run i uses SEED + i * 7919
#   -o DIR    where to write results (default: a new /tmp/stress_faults.*)
#   -t S      the launcher's --timeout per run (default 40)
#   -l        list the default plan and exit
# A CONFIG is "N OP EXPECT HOW [VAR=value ...]" in one word with ':' for
# spaces, e.g. 6:allreduce:corrected:kill:UCFT_F=2:UCFT_IT_KILLS=2 or
# 8:reduce:baseline:inject:UCFT_REDUCE_ALG=binomial:UCX_TLS=tcp (UCX_TLS
# defaults to shm). Without CONFIGs the default plan runs (-l shows it):
# every operation x {kill, inject} x N in {4, 6, 8, 12} on shm, N = 6 on
# tcp, f = 2 with two victims, kills during start-up, deaths inside
# ucft_finalize, kills of rank 0 (allreduce's first candidate root), and
# the baselines.
#
# Output: OUT/summary.tsv (config, seed, verdict, seconds; verdict PASS,
# FAIL, HANG, CRASH (a rank died of a signal it did not get from the test),
# or SUSPECT when a live rank was declared failed before any hang was
# reported, i.e. the detector's false suspicion on an overloaded node),
# OUT/fail-<n>.log for each failure (the command to replay it and the full output of the job),
# and a count per configuration at the end. Exit status 1 if any run
# failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build runs=3 jobs=1 seed=$(( $(date +%s) % 1000000 ))
out="" tmo=40 list=0
while getopts "b:r:j:s:o:t:l" o; do
  case $o in
    b) build=$OPTARG ;; r) runs=$OPTARG ;; j) jobs=$OPTARG ;;
    s) seed=$OPTARG ;; o) out=$OPTARG ;; t) tmo=$OPTARG ;; l) list=1 ;;
    *) sed -n '2,24p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

default_plan() {
  local op how n
  for op in bcast reduce allreduce barrier; do
    for how in kill inject; do
      for n in 4 6 8 12; do echo "$n:$op:corrected:$how"; done
      echo "6:$op:corrected:$how:UCX_TLS=tcp"
      for n in 6 8 12; do
        echo "$n:$op:corrected:$how:UCFT_F=2:UCFT_IT_KILLS=2"
      done
    done
    echo "4:$op:corrected:kill:UCFT_IT_WHEN=init"
    echo "8:$op:corrected:kill:UCFT_IT_WHEN=init"
    echo "4:$op:corrected:inject:UCFT_IT_WHEN=finalize"
    echo "8:$op:corrected:inject:UCFT_IT_WHEN=finalize"
    echo "8:$op:corrected:inject:UCFT_IT_WHEN=finalize:UCFT_F=2:UCFT_IT_KILLS=2"
  done
  # Rank 0: the first candidate root of allreduce and barrier, and a
  # broadcast or reduce root in turn.
  for op in allreduce barrier bcast reduce; do
    for how in kill inject; do
      echo "6:$op:corrected:$how:UCFT_IT_ROOTKILL=1"
      echo "8:$op:corrected:$how:UCFT_IT_ROOTKILL=1:UCFT_F=2:UCFT_IT_KILLS=2"
    done
  done
  for how in kill inject; do
    echo "6:allreduce:baseline:$how:UCFT_ALLREDUCE_ALG=recdbl"
    echo "8:barrier:baseline:$how:UCFT_BARRIER_ALG=recdbl"
    echo "8:allreduce:baseline:$how:UCFT_ALLREDUCE_ALG=recexch"
    echo "6:barrier:baseline:$how:UCFT_BARRIER_ALG=recexch"
    echo "6:allreduce:baseline:$how:UCFT_ALLREDUCE_ALG=linear"
    echo "8:reduce:baseline:$how:UCFT_REDUCE_ALG=binomial"
  done
}

if [ $# -gt 0 ]; then plan=("$@"); else mapfile -t plan < <(default_plan); fi
if [ "$list" = 1 ]; then printf '%s\n' "${plan[@]}"; exit 0; fi
ucftrun=$build/bin/ucftrun prog=$build/tests/it_faults
[ -x "$ucftrun" ] && [ -x "$prog" ] || { echo "no $ucftrun or $prog (build first)"; exit 2; }
[ -n "$out" ] || out=$(mktemp -d /tmp/stress_faults.XXXXXX)
mkdir -p "$out"
summary=$out/summary.tsv
: >"$summary"
echo "stress_faults: ${#plan[@]} configurations x $runs runs, $jobs at once, first seed $seed, results in $out"

# One run: CONFIG SEED INDEX. Appends one line to the summary (short
# lines in append mode do not interleave).
one() {
  local cfg=$1 s=$2 idx=$3 f log t0 rc verdict
  IFS=: read -r -a f <<<"$cfg"
  local n=${f[0]} op=${f[1]} expect=${f[2]} how=${f[3]} vars=("UCX_TLS=shm")
  vars+=("${f[@]:4}")
  log=$out/run-$idx.log
  t0=$(date +%s.%N)
  {
    echo "replay: env ${vars[*]} UCFT_IT_SEED=$s UCFT_IT_TIMEOUT=$tmo bash $here/it_faults.sh $ucftrun $prog $n $op $expect $how"
    env "${vars[@]}" UCFT_IT_SEED="$s" UCFT_IT_TIMEOUT="$tmo" \
      bash "$here/it_faults.sh" "$ucftrun" "$prog" "$n" "$op" "$expect" "$how"
  } >"$log" 2>&1
  rc=$?
  verdict=PASS
  if [ $rc -ne 0 ]; then
    verdict=FAIL
    grep -q "hung (launcher timeout)\|still pending after" "$log" && verdict=HANG
    # A live rank declared failed (heartbeats starved): the detector's
    # false suspicion, kept apart from the collectives' own failures. Not
    # when a hang was reported first: a hung rank leaves after its report,
    # and the others then see a non-victim die.
    hang_at=$(grep -n "hung (launcher timeout)\|still pending after" "$log" |
      head -1 | cut -d: -f1)
    susp_at=$(grep -n "not a victim: declared failed\|declared failed by the job" \
      "$log" | head -1 | cut -d: -f1)
    [ -n "$susp_at" ] && { [ -z "$hang_at" ] || [ "$susp_at" -lt "$hang_at" ]; } &&
      verdict=SUSPECT
    # A rank that crashed (the victims die by SIGKILL, fenced ranks abort
    # after saying so).
    grep -q "killed by signal 11\|Caught signal\|killed by signal 6" "$log" &&
      ! grep -q "declared failed by the job" "$log" && verdict=CRASH
    mv "$log" "$out/fail-$idx.log"
  else
    rm -f "$log"
  fi
  printf '%s\t%s\t%s\t%.1f\n' "$cfg" "$s" "$verdict" \
    "$(echo "$(date +%s.%N) - $t0" | bc)" >>"$summary"
}

idx=0
for ((i = 0; i < runs; i++)); do
  for cfg in "${plan[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    one "$cfg" $(( seed + idx * 7919 )) "$idx" &
    idx=$((idx + 1))
  done
done
wait
echo "configuration	runs	pass	fail	hang	suspect	crash"
awk -F'\t' '{ n[$1]++; c[$1, $3]++ } END {
  for (k in n) printf "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", k, n[k], c[k, "PASS"],
    c[k, "FAIL"], c[k, "HANG"], c[k, "SUSPECT"], c[k, "CRASH"] }' \
  "$summary" | sort
total=$(wc -l <"$summary") bad=$(grep -vc "	PASS	" "$summary")
echo "stress_faults: $total runs, $bad failed; failures: $(ls "$out"/fail-*.log 2>/dev/null | wc -l) logs in $out"
[ "$bad" -eq 0 ]
