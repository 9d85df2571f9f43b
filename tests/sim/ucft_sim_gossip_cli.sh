#!/usr/bin/env bash
# ucft-sim's gossip and bit-flip options: bad values exit 2 with a line
# naming the option; one flipped exponent bit leaves PFLC within eps at all
# 32 ranks (exit 0) and push-flow wrong (exit 1, data errors), and with
# --checksum push-flow right (the flipped message caught and lost) and the
# binomial broadcast ended (half its ranks with an error, none waiting);
# --runs prints one CSV line per seed.
set -u
sim=$1
fail() { echo "FAIL: $*"; exit 1; }
for bad in "--eps 2" "--eps x" "--tau -1" "--topo torus" "--flip 3@" \
  "--flip 2000000" "--flip 3@0:0" "--flip-rate 1.5" "--dtype int" \
  "--runs 0" "--rounds 0"; do
  opt=${bad%% *}
  out=$("$sim" --op allreduce_approx --alg pflc --ranks 4 $bad 2>&1)
  [ $? -eq 2 ] || fail "'$bad' not refused with status 2"
  grep -q -- "$opt" <<<"$out" || fail "'$bad': no line naming $opt: $out"
done
out=$("$sim" --op allreduce_approx --alg hps --ranks 4 --topo ring 2>&1)
[ $? -eq 2 ] || fail "hps on a ring accepted: $out"
j=$("$sim" --op allreduce_approx --alg pflc --ranks 32 --eps 1e-10 \
  --rounds 250 --flip 62@0:20 --json) || fail "pflc after a flip: $j"
[[ $j == *'"delivered":32,'* && $j == *'"data_errors":0,'* &&
  $j == *'"flips":1,'* && $j == *'"detected":1,'* ]] || fail "pflc: $j"
j=$("$sim" --op allreduce_approx --alg pf --ranks 32 --eps 1e-10 \
  --rounds 250 --flip 62@0:20 --json)
[ $? -eq 1 ] || fail "pf after an exponent flip did not exit 1: $j"
[[ $j == *'"data_errors":32,'* ]] || fail "pf: $j"
j=$("$sim" --op allreduce_approx --alg pf --ranks 32 --eps 1e-10 \
  --rounds 250 --flip 62@0:20 --checksum --json) || fail "pf, checksum: $j"
[[ $j == *'"delivered":32,'* && $j == *'"data_errors":0,'* &&
  $j == *'"csum_caught":1'* ]] || fail "pf, checksum: $j"
j=$("$sim" --op bcast --alg binomial --ranks 8 --flip 3@0:1 --checksum \
  --json) || fail "bcast binomial, checksum: $j"
[[ $j == *'"delivered":4,"live":8,"failed_ops":4,"data_errors":0,'* ]] ||
  fail "bcast binomial, checksum: $j"
n=$("$sim" --op allreduce_approx --alg hpflc --ranks 16 --eps 1e-3 \
  --runs 3 | wc -l)
[ "$n" -eq 4 ] || fail "--runs 3: $n lines (header + 3 expected)"
echo "PASS: gossip options checked, PFLC corrected a flip PF did not," \
  "the checksums made PF right and ended the binomial broadcast"
