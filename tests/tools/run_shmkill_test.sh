#!/usr/bin/env bash
# ucft-shmkill: bad options exit 2 naming the problem; a short measurement
# kills one sender per trial and reports every trial and the total;
# claim: every victim claims a slot of the receiver's FIFO and dies without
# writing it (ucft-shmkill --claim): every trial is cut off, the ucft
# transport mends the FIFO, every survivor is heard again after it, and no
# survivor's message is lost, repeated or reordered; claim_nomend: the same
# with mending off, every trial cut off and the probe BLOCKED;
# claim_stopped: the same with another sender SIGSTOPped first (it may be
# the one inside a send): not mended, the probe BLOCKED, naming it.
# cut_off: ucft's transport (mending off), told of each death, runs its own
# FIFO self-probe, which must call a receiver cut off exactly when the
# surviving senders get nothing through (real kills on shared memory,
# until one cut-off happens: about 1 kill in 10 with 4 KB messages
# before control messages became active messages; none in about 550 since:
# then the run passes on every trial's agreement, with a note).
# Usage: run_shmkill_test.sh CASE UCFT_SHMKILL
set -u
case_=$1 tool=$2
fail() { echo "FAIL: $*"; exit 1; }
case $case_ in
  bad_options)
    for args in "--trials 0" "--senders 1" "--senders 17" "--payload 4" \
                "--payload 4097" "--wait 0" "--wait 61" "--wait x" "--bogus" \
                "stray"; do
      # shellcheck disable=SC2086
      out=$("$tool" $args 2>&1); rc=$?
      [ "$rc" -eq 2 ] || fail "'$args': exit $rc, expected 2"
      grep -q "ucft-shmkill: \|unrecognized option" <<<"$out" ||
        fail "'$args': no message naming the problem: $out"
    done
    "$tool" --help | grep -q "^usage: ucft-shmkill" || fail "--help"
    ;;
  measure)
    out=$(timeout 60 "$tool" --trials 2 --senders 2 --wait 0.3 --seed 7 2>&1)
    rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fail "exit $rc"
    [ "$(grep -c '^trial [01]: sender [01] killed after [0-9]* ms; after the kill: .* -> \(ok\|CUT OFF\), self-probe \(arrived\|BLOCKED\)$' <<<"$out")" -eq 2 ] ||
      fail "expected one line per trial"
    grep -q "^ucft-shmkill: survivors cut off in [0-2] of 2 trials; self-probe blocked in [0-2]; the two agree in [0-2] of 2$" <<<"$out" ||
      fail "no summary"
    # Every sender of each trial was reaped: none is left running.
    ! pgrep -f "^$tool " >/dev/null || fail "senders left running"
    ;;
  cut_off)
    out=$(UCX_TLS=sm,self timeout 170 "$tool" --ucft --no-mend --payload 4096 \
          --wait 0.3 --trials 150 --until-cut --seed 11 2>&1)
    rc=$?
    grep -v "ok, self-probe arrived$" <<<"$out"
    [ "$rc" -eq 0 ] || fail "exit $rc"
    grep -q "ucft transport receiver" <<<"$out" || fail "not the ucft receiver"
    sum=$(grep "^ucft-shmkill: survivors cut off in" <<<"$out") ||
      fail "no summary"
    # Every trial's probe verdict must match the survivors' deliveries.
    # Since control messages travel as UCP active messages (the receiver's
    # context asks for UCP_FEATURE_AM), UCX no longer blocked a FIFO in
    # about 550 trials of this seed (about 1 in 10 before, docs/transport.md):
    # a run without a cut-off passes on the agreement alone, and says so.
    [[ $sum =~ cut\ off\ in\ ([01])\ of\ ([0-9]+)\ trials\;\ self-probe\ blocked\ in\ ([01])\;\ the\ two\ agree\ in\ ([0-9]+)\ of\ ([0-9]+)$ ]] ||
      fail "unexpected summary: $sum"
    [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[3]}" ] ||
      fail "cut-off and self-probe verdicts differ: $sum"
    [ "${BASH_REMATCH[4]}" = "${BASH_REMATCH[2]}" ] ||
      fail "the probe's verdict differs from the survivors' deliveries: $sum"
    [ "${BASH_REMATCH[1]}" = 1 ] ||
      echo "NOTE: no cut-off happened in ${BASH_REMATCH[2]} trials: the blocked case was not exercised"
    ! pgrep -f "^$tool " >/dev/null || fail "senders left running"
    ;;
  claim|claim_nomend)
    # 4 KB messages: the slots hold descriptors (copied sends), not inline
    # data; 8 bytes: inline. Two of each.
    mend=() want="mended"
    [ "$case_" = claim_nomend ] && mend=(--no-mend) want="BLOCKED"
    for payload in 8 4096; do
      out=$(UCX_TLS=sm,self timeout 80 "$tool" --ucft "${mend[@]}" --claim \
            --senders 3 --payload $payload --wait 0.3 --trials 2 --seed 21 2>&1)
      rc=$?
      echo "$out"
      [ "$rc" -eq 0 ] || fail "exit $rc"
      [ "$(grep -c "^trial [01]: .* -> CUT OFF, self-probe $want" <<<"$out")" -eq 2 ] ||
        fail "$payload bytes: expected 2 trials cut off, self-probe $want"
      grep -q "^ucft-shmkill: messages out of their sender's sequence in 0 of 2 trials$" <<<"$out" ||
        fail "$payload bytes: a survivor's message lost, repeated or reordered"
      if [ "$case_" = claim ]; then
        grep -q "^ucft-shmkill: mended in 2 of 2 trials, the survivors heard again in 2 of them$" <<<"$out" ||
          fail "$payload bytes: not mended, or the survivors not heard after it"
      fi
    done
    ! pgrep -f "^$tool " >/dev/null || fail "senders left running"
    ;;
  claim_stopped)
    out=$(UCX_TLS=sm,self timeout 80 "$tool" --ucft --claim --stop-other \
          --senders 3 --wait 0.3 --trials 2 --seed 23 2>&1)
    rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fail "exit $rc"
    [ "$(grep -c "^trial [01]: .* -> CUT OFF, self-probe BLOCKED$" <<<"$out")" -eq 2 ] ||
      fail "expected 2 trials cut off and not mended"
    [ "$(grep -c "^ucft-shmkill: not mended: process [0-9]*, which maps the FIFO, is stopped" <<<"$out")" -eq 2 ] ||
      fail "expected the stopped sender named twice"
    ! pgrep -f "^$tool " >/dev/null || fail "senders left running"
    ;;
  *) fail "unknown case $case_" ;;
esac
echo PASS
