#!/usr/bin/env bash
# Runs `ucft-bench detector` under ucftrun over the cases of the detector
# targets and prints one summary table, then a soak.
#
#   off/kill  UCFT_DETECTOR_FASTPATH=n, --kill VICTIM@AT (heartbeats only)
#   off/stop  UCFT_DETECTOR_FASTPATH=n, --stop VICTIM@AT
#   on/kill   UCFT_DETECTOR_FASTPATH=y, --kill VICTIM@AT (pidfd watch and
#             launcher event, whichever comes first)
#   on/event  the same with UCFT_DETECTOR_PIDFD=n (launcher event only)
#   nodet     UCFT_DETECTOR=n, --kill: no heartbeats (CPU baseline of the
#             helper threads; told comes from the launcher event)
#   soak      every rank computes SOAK seconds without calling ucft
#
# usage: tools/bench/detector_matrix.sh [-b BENCH] [-n N] [-r RUNS]
#            [-a AT] [-s SOAK | -L] [-S] [-k]
#   -b BENCH  the ucft-bench binary (default: build/bin/ucft-bench); ucftrun
#             is taken from the same directory
#   -n N      ranks (default 16); the victim is rank N-1
#   -r RUNS   runs per case (default 5)
#   -a AT     injection time in seconds after start (default 3: after the
#             1 s start-up grace and a ~2 s CPU window)
#   -s SOAK   soak seconds (default 60); -L: 600 (the 10-minute target)
#   -S        skip the soak;  -k: print the raw JSON lines to stderr
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/build/bin/ucft-bench"
n=16
runs=5
at=3
soak=60
do_soak=1
keep=0
while getopts "b:n:r:a:s:LSkh" opt; do
    case $opt in
    b) bench=$OPTARG ;;
    n) n=$OPTARG ;;
    r) runs=$OPTARG ;;
    a) at=$OPTARG ;;
    s) soak=$OPTARG ;;
    L) soak=600 ;;
    S) do_soak=0 ;;
    k) keep=1 ;;
    h) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "detector_matrix.sh: bad option (see -h)" >&2; exit 2 ;;
    esac
done
launcher=$(dirname "$bench")/ucftrun
for x in "$bench" "$launcher"; do
    if [[ ! -x $x ]]; then
        echo "detector_matrix.sh: no $x (build it or use -b)" >&2
        exit 2
    fi
done
victim=$((n - 1))

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.err"' EXIT

# run_one CELL INJECT ENV... -> one JSON line tagged with the cell in $tmp.
# The bench exits non-zero when a target-relevant event happened (false
# suspicion, a survivor not told); its JSON line still counts.
run_one() {
    local cell=$1 inject=$2 line
    shift 2
    line=$(env "$@" "$launcher" -n "$n" --timeout 120 $inject \
        "$bench" detector --json --bound 15 2>"$tmp.err" | grep '^{' || true)
    if [[ -z $line ]]; then
        echo "detector_matrix.sh: $cell: no result" >&2
        tail -n 5 "$tmp.err" >&2
        line='{"failed_run":1}'
    fi
    echo "$line" | sed "s|^{|{\"cell\":\"$cell\",\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",|" >>"$tmp"
}

echo "# ucft-bench detector matrix: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc)" \
    "cores, load $(cut -d' ' -f1-3 /proc/loadavg), N=$n, victim $victim at" \
    "${at}s, $runs run(s) per case"
for ((i = 0; i < runs; i++)); do
    # Interleaved, so that changing machine load hits every case alike.
    run_one off/kill "--kill $victim@$at" UCFT_DETECTOR_FASTPATH=n
    run_one off/stop "--stop $victim@$at" UCFT_DETECTOR_FASTPATH=n
    run_one on/kill "--kill $victim@$at" UCFT_DETECTOR_FASTPATH=y
    run_one on/event "--kill $victim@$at" UCFT_DETECTOR_FASTPATH=y UCFT_DETECTOR_PIDFD=n
    run_one nodet "--kill $victim@$at" UCFT_DETECTOR=n
done
[[ $keep == 1 ]] && cat "$tmp" >&2

awk '
function num(key,   m) {
    if (match($0, "\"" key "\":[-0-9.e+]+")) {
        m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:/, "", m); return m + 0
    }
    return -1
}
function str(key,   m) {
    if (match($0, "\"" key "\":\"[^\"]*\"")) {
        m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:"/, "", m)
        sub(/"$/, "", m); return m
    }
    return "?"
}
function arr(key,   m) {
    if (match($0, "\"" key "\":\\[[^]]*\\]")) {
        m = substr($0, RSTART, RLENGTH); sub(/^[^[]*\[/, "", m)
        sub(/\]$/, "", m); gsub(/,/, " ", m); return m
    }
    return ""
}
function sorted(list, a,   n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n
}
function q(list, p,   a, n, k) { # nearest rank; median averages two
    n = sorted(list, a)
    if (n == 0) return -1
    if (p == 0.5 && n % 2 == 0) return (a[n / 2] + a[n / 2 + 1]) / 2
    k = int(p * n + 0.999999); if (k < 1) k = 1; if (k > n) k = n
    return a[k]
}
{
    c = str("cell")
    if (!(c in seen)) { seen[c] = 1; order[++nc] = c }
    nrun[c]++
    if (num("failed_run") == 1) { bad[c]++; next }
    if (num("results") <= 0) { bad[c]++; next }
    p99s[c] = p99s[c] " " num("p99_ms")
    p50s[c] = p50s[c] " " num("p50_ms")
    t = arr("told_ms"); ntold = split(t, tt, " ")
    for (i = 1; i <= ntold; i++) if (tt[i] >= 0) all[c] = all[c] " " tt[i]
    t = arr("event_ms"); nev = split(t, tt, " ")
    for (i = 1; i <= nev; i++) if (tt[i] >= 0) evs[c] = evs[c] " " tt[i]
    fs[c] += num("false_suspicions"); nt[c] += num("not_told")
    if (match($0, /"hb_cpu_pct":\{"mean":[0-9.]+,"max":[0-9.]+/)) {
        m = substr($0, RSTART, RLENGTH); gsub(/[^0-9.,]/, "", m)
        split(m, hm, ","); cpu[c] += hm[1]; cn[c]++
        if (hm[2] > cmax[c]) cmax[c] = hm[2]
    }
    eta[c] = num("eta_ms"); delta[c] = num("delta_ms")
}
END {
    printf "%-9s %4s %7s %8s %8s %8s | %8s %8s %8s | %7s %7s | %5s %5s %7s %7s | %-9s %s\n",
        "case", "runs", "p50", "p99_p50", "p99_p99", "p99_max", "all_p50",
        "all_p99", "all_max", "ev_p50", "ev_max", "false", "notld",
        "cpu_avg", "cpu_max", "target", "met"
    for (i = 1; i <= nc; i++) {
        c = order[i]
        if (c ~ /^off/) target = delta[c] + 2 * eta[c] + 10
        else if (c ~ /^on\//) target = 3
        else target = -1
        ap99 = q(all[c], 0.99)
        met = target < 0 ? "-" : (ap99 <= target && ap99 >= 0 ? "yes" : "NO")
        if (bad[c] > 0) met = met " (" bad[c] " failed runs)"
        printf "%-9s %4d %7.2f %8.2f %8.2f %8.2f | %8.2f %8.2f %8.2f | %7.2f %7.2f | %5d %5d %7.3f %7.3f | %-9s %s\n",
            c, nrun[c], q(p50s[c], 0.5), q(p99s[c], 0.5), q(p99s[c], 0.99),
            q(p99s[c], 1.0), q(all[c], 0.5), ap99, q(all[c], 1.0),
            q(evs[c], 0.5), q(evs[c], 1.0), fs[c],
            nt[c], cn[c] ? cpu[c] / cn[c] : -1, cmax[c],
            target < 0 ? "-" : sprintf("<=%.0fms", target), met
    }
    print "# p50, p99_*: over runs of each run'"'"'s p50/p99 (ms); all_*: over every"
    print "# (survivor, run) sample; ev_*: the launcher'"'"'s death event at the ranks'"'"'"
    print "# PMIx thread (SIGKILL; -1: none); cpu: % of a core, threads other than main,"
    print "# mean over runs of the mean over ranks, and the max over ranks and runs"
}' "$tmp"

if [[ $do_soak == 1 ]]; then
    echo "# soak: $n ranks compute ${soak}s without calling ucft" \
        "(load $(cut -d' ' -f1-3 /proc/loadavg))"
    line=$("$launcher" -n "$n" --timeout $((soak * 2 + 60)) \
        "$bench" detector --soak "$soak" --json 2>"$tmp.err" | grep '^{' ||
        true)
    [[ $keep == 1 ]] && echo "$line" >&2
    if [[ -z $line ]]; then
        echo "soak: no result"
        tail -n 5 "$tmp.err"
    else
        echo "$line" | awk '
        function num(key,   m) {
            if (match($0, "\"" key "\":[-0-9.e+]+")) {
                m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:/, "", m)
                return m + 0
            }
            return -1
        }
        {
            fr = "none"
            if (match($0, /"false_ranks":\[[^]]*\]/)) {
                fr = substr($0, RSTART + 15, RLENGTH - 16)
                if (fr == "") fr = "none"
            }
            match($0, /"hb_cpu_pct":\{"mean":[0-9.]+,"max":[0-9.]+/)
            m = substr($0, RSTART, RLENGTH); gsub(/[^0-9.,]/, "", m)
            split(m, hm, ",")
            match($0, /"main_cpu_pct":\{"mean":[0-9.]+,"max":[0-9.]+/)
            m2 = substr($0, RSTART, RLENGTH); gsub(/[^0-9.,]/, "", m2)
            split(m2, mm, ",")
            printf "soak %.0fs: false suspicions %d (ranks %s), results from %d ranks, hb_cpu mean %.3f%% max %.3f%%, main mean %.1f%% max %.1f%%, target 0: %s\n",
                num("soak_s"), num("false_suspicions"), fr, num("results"),
                hm[1], hm[2], mm[1], mm[2],
                num("false_suspicions") == 0 ? "met" : "NOT met"
        }'
    fi
    grep -c "declared failed by the job" "$tmp.err" |
        sed 's/^/soak: fenced (aborted) ranks: /'
fi
