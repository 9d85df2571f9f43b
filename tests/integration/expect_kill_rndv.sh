#!/usr/bin/env bash
# A kill under rendezvous-sized corrected-ring allreduces over shared
# memory (64 KiB, 4 ranks, rank 2 killed): the ring's receive from the
# victim can be matched to its rendezvous message when it dies, and UCX
# ties that receive to the endpoint it made for the victim's connection.
# Before the transport closed that endpoint too (docs/transport.md,
# "A matched rendezvous receive of a dead sender"), about 1 job in 5 hung
# for seconds or until the timeout, or aborted in finalize. RUNS jobs
# (default 6): each must exit 0 with 3 survivors, every result right, and
# the first result without the victim within 1 s of the kill.
set -u
ucftrun=$1
bench=$2
runs=${RUNS:-6}
fail() { echo "FAIL: $*"; exit 1; }
medians=""
for ((i = 1; i <= runs; i++)); do
  out=$(UCFT_ALLREDUCE_ALG=corrected-ring "$ucftrun" -n 4 --timeout 60 \
    --times-from connected --kill 2@1 "$bench" coll --kill-to-result \
    --size 65536 --json 2>&1) || fail "job $i: exit $?: $(tail -5 <<<"$out")"
  line=$(grep '^{' <<<"$out") || fail "job $i: no result: $(tail -5 <<<"$out")"
  [[ $line == *'"survivors":3'* ]] || fail "job $i: not 3 survivors: $line"
  [[ $line == *'"bad":0'* ]] || fail "job $i: wrong or missing results: $line"
  excl=$(sed -n 's/.*"excluded_ms":{"median":\([0-9.]*\).*/\1/p' <<<"$line")
  awk -v m="$excl" 'BEGIN { exit !(m > 0 && m < 1000) }' ||
    fail "job $i: kill -> result without the victim: '$excl' ms"
  medians="$medians $excl"
done
echo "PASS: $runs jobs, 64 KiB corrected-ring, kill -> result without the" \
  "victim (median per job, ms):$medians"
