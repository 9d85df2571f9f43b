#!/usr/bin/env bash
# Runs it_faults (a loop of one collective, every survivor checking every
# result) while ranks are killed, and checks the job's end.
# Usage: it_faults.sh UCFTRUN IT_FAULTS N OP corrected|baseline kill|inject
#   kill    ucftrun --kill V@S, S in [1.2, 2.7) s after every rank connected
#   inject  UCFT_INJECT: V dies before message K (1..3) of its C-th call
#           (2..13) of OP, or failing that (it sent fewer) at call C+1's
#           first message, or at the start of call C+2
# Environment (all optional):
#   UCFT_IT_SEED   the seed (default: the clock); victims and moments come
#                  from it, and it is printed so that a failure can be
#                  replayed with the same environment
#   UCFT_IT_KILLS  number of victims (default 1; run with UCFT_F >= it for
#                  corrected algorithms), each with its own moment
#   UCFT_IT_WHEN   run (default) | init | finalize
#                  init:     kill: S in [0, 0.15) s, while the job starts
#                            (UCFT_IT_KILL_MS: at that many ms instead);
#                            either every survivor's ucft_init fails with a
#                            reason, or the run goes on as usual
#                  finalize: inject only: a fixed number of iterations, then
#                            V dies in ucft_finalize's barrier (call 1 or 2,
#                            message 1..3, or failing that at the start of
#                            call 2); every survivor must finalize cleanly
#   UCFT_IT_ROOTKILL 1: the first victim is rank 0, the first candidate
#                  root of allreduce and barrier (bcast and reduce roots are
#                  never victims)
#   UCFT_IT_SPEC   inject only: this UCFT_INJECT instead of one drawn from
#                  the seed (e.g. a placement found on the sim); the
#                  victims are the ranks it names
#   UCFT_IT_TIMEOUT the launcher's --timeout (default 40 s)
#   UCFT_IT_BIND   the launcher's --bind-to (default: its own, none)
#   UCFT_IT_MENDS  at least this many "Mended" lines (a survivor mending a
#                  shared-memory FIFO the victim blocked, UCFT_INJECT
#                  hold=1; docs/transport.md), and none that stops a rank
set -u
ucftrun=$1 prog=$2 n=$3 op=$4 expect=$5 how=$6
seed=${UCFT_IT_SEED:-$(( $(date +%s%N) % 1000000007 ))}
kills=${UCFT_IT_KILLS:-1}
when=${UCFT_IT_WHEN:-run}
tmo=${UCFT_IT_TIMEOUT:-40}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL (seed $seed, reproduce with UCFT_IT_SEED=$seed${UCFT_IT_KILLS:+ UCFT_IT_KILLS=$kills}${UCFT_IT_WHEN:+ UCFT_IT_WHEN=$when}${UCFT_IT_ROOTKILL:+ UCFT_IT_ROOTKILL=$UCFT_IT_ROOTKILL}): $*"; exit 1; }
[ "$kills" -ge 1 ] && [ "$kills" -lt "$n" ] || fail "UCFT_IT_KILLS=$kills with $n ranks"
case "$when/$how" in
  run/*|init/kill|finalize/inject) ;;
  *) fail "UCFT_IT_WHEN=$when does not go with $how" ;;
esac
# Victims: distinct ranks in 1..n-1 drawn from the seed (or rank 0 first,
# see UCFT_IT_ROOTKILL); x walks a linear
# congruential sequence so that each victim has its own numbers.
x=$seed victims=() args=() spec=""
rnd() { x=$(( (x * 1103515245 + 12345) % 2147483648 )); r=$(( x / 65536 )); }
for ((i = 0; i < kills; i++)); do
  if [ "$i" -eq 0 ]; then
    v=$(( 1 + seed % (n - 1) )) r=$seed
    [ "${UCFT_IT_ROOTKILL:-0}" = 1 ] && v=0
  else
    while :; do
      rnd; v=$(( 1 + r % (n - 1) ))
      [[ " ${victims[*]} " == *" $v "* ]] || break
    done
    rnd
  fi
  victims+=("$v")
  if [ "$how" = kill ]; then
    if [ "$when" = init ]; then # milliseconds: start-up takes ~0.1 s
      ms=${UCFT_IT_KILL_MS:-$(( (r / 7) % 150 ))}
      args+=(--kill "$v@$(( ms / 1000 )).$(printf %03d $(( ms % 1000 )))")
    else
      at=$(( 120 + (r / 7) % 150 ))
      args+=(--kill "$v@$(( at / 100 )).$(printf %02d $(( at % 100 )))")
    fi
  elif [ "$when" = finalize ]; then
    c=$(( 1 + (r / 7) % 2 )) k=$(( 1 + (r / 11) % 3 ))
    spec+="rank=$v,op=finalize,call=$c,msg=$k;rank=$v,op=finalize,call=2,msg=0;"
  else
    c=$(( 2 + (r / 7) % 12 )) k=$(( 1 + (r / 11) % 3 ))
    spec+="rank=$v,op=$op,call=$c,msg=$k;rank=$v,op=$op,call=$((c + 1)),msg=1;rank=$v,op=$op,call=$((c + 2)),msg=0;"
  fi
done
if [ -n "${UCFT_IT_SPEC:-}" ]; then
  [ "$how" = inject ] || fail "UCFT_IT_SPEC needs inject"
  spec=$UCFT_IT_SPEC
  mapfile -t victims < <(grep -o 'rank=[0-9]*' <<<"$spec" | cut -d= -f2 | sort -un)
  kills=${#victims[@]}
fi
vlist=$(IFS=,; echo "${victims[*]}")
# Kills meant for the run count from the moment every rank has connected
# (a start-up slowed by load must not take them); kills meant for the
# start-up count from the launch.
from=(--times-from connected)
[ "$when" = init ] && from=()
iters=()
[ "$when" = finalize ] && iters=($(( 5 + seed % 20 )))
env_note="UCFT_F=${UCFT_F:-1}${UCX_TLS:+ UCX_TLS=$UCX_TLS}"
if [ "$how" = kill ]; then
  echo "it_faults.sh: seed $seed: $n ranks, $op ($expect), $env_note, ${args[*]}"
  "$ucftrun" -n "$n" --timeout "$tmo" "${from[@]}" "${args[@]}" ${UCFT_IT_BIND:+--bind-to "$UCFT_IT_BIND"} "$prog" "$op" "$vlist" "$expect" "${iters[@]}" >"$out" 2>&1
  rc=$?
  want_rc=0
else
  spec=${spec%;}
  echo "it_faults.sh: seed $seed: $n ranks, $op ($expect), $env_note, UCFT_INJECT='$spec'${iters:+, $iters iterations}"
  UCFT_INJECT="$spec" "$ucftrun" -n "$n" --timeout "$tmo" ${UCFT_IT_BIND:+--bind-to "$UCFT_IT_BIND"} "$prog" "$op" "$vlist" "$expect" "${iters[@]}" >"$out" 2>&1
  rc=$?
  want_rc=137 # the launcher did not inject this SIGKILL: it reports it
fi
cat "$out"
[ "$rc" -ne 124 ] || fail "the job hung (launcher timeout)"
if [ "$when" = init ] && grep -q "^it_faults: ucft_init failed" "$out"; then
  # The death came before the start-up exchange completed: every survivor
  # must have failed ucft_init with a reason, none may have gone on.
  nf=$(grep -c "^it_faults: ucft_init failed" "$out")
  [ "$nf" -eq $(( n - kills )) ] ||
    fail "$nf of $(( n - kills )) survivors failed ucft_init (others went on)"
  grep -q "died during start-up\|did not complete within UCFT_INIT_TIMEOUT\|(PMIx fence) failed" "$out" ||
    fail "no line saying why ucft_init failed"
  echo "PASS: seed $seed (ucft_init failed at every survivor)"
  exit 0
fi
[ "$rc" -eq "$want_rc" ] || fail "exit status $rc, expected $want_rc"
if [ "$how" = inject ]; then
  [ "$(grep -c "UCFT_INJECT: killing myself" "$out")" -eq "$kills" ] ||
    fail "expected $kills injection lines"
  [ "$(grep -c '^ucftrun: rank' "$out")" -eq "$kills" ] ||
    fail "expected exactly $kills failed ranks"
  for v in "${victims[@]}"; do
    grep -q "^ucftrun: rank $v killed by signal 9" "$out" ||
      fail "rank $v was not killed by SIGKILL"
  done
fi
for ((r = 0; r < n; r++)); do
  [[ " ${victims[*]} " == *" $r "* ]] && continue
  grep -q "^it_faults: rank $r: .* all checked" "$out" ||
    fail "survivor $r did not check everything"
  grep -q "^it_faults: rank $r: finalize: OK" "$out" ||
    fail "survivor $r did not finalize cleanly"
done
if [ -n "${UCFT_IT_MENDS:-}" ]; then
  nm=$(grep -c "receive FIFO was blocked: .* Mended" "$out")
  [ "$nm" -ge "$UCFT_IT_MENDS" ] ||
    fail "$nm FIFOs mended, expected at least $UCFT_IT_MENDS"
  ! grep -q "stopping this rank" "$out" || fail "a survivor stopped itself"
fi
for v in "${victims[@]}"; do
  grep -q "^it_faults: rank $v: finalize" "$out" && fail "victim $v survived"
  [ "$when" = finalize ] || ! grep -q "^it_faults: rank $v:" "$out" ||
    fail "victim $v survived the loop"
done
echo "PASS: seed $seed"
