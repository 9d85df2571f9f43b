#!/usr/bin/env bash
# Flow control of reduce loops (comm/coll_post.c): with a slow root, no
# rank may run more than two windows of reduces ahead of it. 6 ranks, the
# root sleeping 300 us before each of 600 reduces; for each reduce
# algorithm, with UCFT_REDUCE_WINDOW=16 every rank's largest lead over the
# root must stay within 2 * 16 + 2. The same run without flow control
# (window 0) must exceed it, which shows that the check can fail.
set -u
ucftrun=$1
prog=$2
W=16
bound=$((2 * W + 2))
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { tail -30 "$dir/out"; echo "FAIL: $*"; exit 1; }
run() { # ALG WINDOW -> largest lead over the ranks
    truncate -s 0 "$dir/map" && truncate -s 4096 "$dir/map"
    UCFT_REDUCE_ALG=$1 UCFT_REDUCE_WINDOW=$2 \
        "$ucftrun" -n 6 --timeout 100 "$prog" "$dir/map" 600 300 \
        >"$dir/out" 2>&1 || fail "$1, window $2: the job failed"
    [ "$(grep -c '^flow: rank' "$dir/out")" = 6 ] ||
        fail "$1, window $2: not every rank reported"
    sed -n 's/^flow: rank [0-9]* lead \([0-9-]*\)$/\1/p' "$dir/out" |
        sort -n | tail -1
}
for alg in corrected binomial; do
    lead=$(run "$alg" "$W")
    echo "$alg, window $W: largest lead over the root $lead reduces"
    [ "$lead" -le "$bound" ] || fail "$alg: lead $lead > $bound with window $W"
    lead=$(run "$alg" 0)
    echo "$alg, no flow control: largest lead $lead reduces"
    [ "$lead" -gt "$bound" ] || fail "$alg: lead $lead <= $bound without flow control: the check proves nothing"
done
echo "PASS: reduce loops stay within two windows of a slow root"
