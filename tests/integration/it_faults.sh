#!/usr/bin/env bash
# Runs it_faults (a loop of one collective, every survivor checking every
# result) while one rank is killed, and checks the job's end.
# Usage: it_faults.sh UCFTRUN IT_FAULTS N OP corrected|baseline kill|inject
#   kill    ucftrun --kill V@S, S in [1.2, 2.7) s
#   inject  UCFT_INJECT: V dies before message K (1..3) of its C-th call
#           (2..13) of OP, or failing that (it sent fewer) at call C+1's
#           first message, or at the start of call C+2
# The victim V (1..N-1) and the moment come from a seed: UCFT_IT_SEED, or
# the clock; the seed is printed so that a failure can be replayed.
set -u
ucftrun=$1 prog=$2 n=$3 op=$4 expect=$5 how=$6
seed=${UCFT_IT_SEED:-$(( $(date +%s%N) % 1000000007 ))}
victim=$(( 1 + seed % (n - 1) ))
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL (seed $seed, reproduce with UCFT_IT_SEED=$seed): $*"; exit 1; }
if [ "$how" = kill ]; then
  at=$(( 120 + (seed / 7) % 150 ))
  at="$(( at / 100 )).$(printf %02d $(( at % 100 )))"
  echo "it_faults.sh: seed $seed: $n ranks, $op ($expect), --kill $victim@$at"
  "$ucftrun" -n "$n" --timeout 40 --kill "$victim@$at" "$prog" "$op" "$victim" "$expect" >"$out" 2>&1
  rc=$?
  want_rc=0
else
  c=$(( 2 + (seed / 7) % 12 )) k=$(( 1 + (seed / 11) % 3 ))
  spec="rank=$victim,op=$op,call=$c,msg=$k;rank=$victim,op=$op,call=$((c + 1)),msg=1;rank=$victim,op=$op,call=$((c + 2)),msg=0"
  echo "it_faults.sh: seed $seed: $n ranks, $op ($expect), UCFT_INJECT='$spec'"
  UCFT_INJECT="$spec" "$ucftrun" -n "$n" --timeout 40 "$prog" "$op" "$victim" "$expect" >"$out" 2>&1
  rc=$?
  want_rc=137 # the launcher did not inject this SIGKILL: it reports it
fi
cat "$out"
[ "$rc" -ne 124 ] || fail "the job hung (launcher timeout)"
[ "$rc" -eq "$want_rc" ] || fail "exit status $rc, expected $want_rc"
if [ "$how" = inject ]; then
  grep -q "UCFT_INJECT: killing myself" "$out" || fail "no injection line"
  [ "$(grep -c '^ucftrun: rank' "$out")" -eq 1 ] &&
    grep -q "^ucftrun: rank $victim killed by signal 9" "$out" ||
    fail "expected exactly one failed rank, $victim by SIGKILL"
fi
ok=$(grep -c "^it_faults: rank .* all checked" "$out")
[ "$ok" -eq $(( n - 1 )) ] || fail "$ok of $(( n - 1 )) survivors checked everything"
grep -q "^it_faults: rank $victim:" "$out" && fail "the victim survived"
echo "PASS: seed $seed"
