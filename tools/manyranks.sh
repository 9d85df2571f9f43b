#!/usr/bin/env bash
# Many ranks on few cores: the figures of docs/detector.md ("Many ranks on
# few cores"). For each N, three jobs of build/bin/ucft-manyranks under
# ucftrun: no kill; two kills (ranks 1 and N/2 + 1, one second apart);
# one whole pretend node killed (--nodes N/8, node 1: 8 ranks). Prints one
# table row per job:
#   N, scenario, live ranks falsely declared (in some survivor's failed
#   set without having been killed, or fenced), ranks that stopped on
#   UCX's blocked shared-memory FIFO (fifo; not counted as false, nor
#   as survivors), survivors whose every
#   result was correct, the longest pause between two results a survivor
#   saw before the first kill (gap: pace included) and in the 3 s after a
#   kill (stall), start-up (longest ucft_init) and finalize (longest
#   ucft_finalize), kill -> told and kill -> result (median / max over
#   survivors of each survivor's latest), the CPU time the kills cost each
#   survivor beyond its pace (cpu_ms, median / max; ucft-manyranks'
#   death_cpu_ms), launcher status, wall time, and
#   the load average when the job started (other work on the machine).
# Kills are placed 1.5 s after the longest start-up of the no-kill job.
#
# Usage: tools/manyranks.sh [-b BUILD] [-n "16 32 64 128 256"]
#                           [-s "none kill2 node"] [-k DIR]
#   -k DIR  keep each job's output in DIR
set -u
build=build
ns="16 32 64 128 256"
scen="none kill2 node"
keep=
while getopts "b:n:s:k:" o; do
  case $o in
    b) build=$OPTARG ;;
    n) ns=$OPTARG ;;
    s) scen=$OPTARG ;;
    k) keep=$OPTARG ;;
    *) echo "usage: $0 [-b BUILD] [-n NS] [-s SCENARIOS] [-k DIR]" >&2; exit 2 ;;
  esac
done
run=$build/bin/ucftrun
prog=$build/bin/ucft-manyranks
[ -x "$run" ] && [ -x "$prog" ] || { echo "$0: build $build first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$keep" ] && mkdir -p "$keep"

# stats FILE FIELD: "median/max" of a MANY field over the lines (>= 0).
stats() {
  awk -v f="$2" '/^MANY /{for(i=1;i<NF;i++) if($i==f && $(i+1)>=0) print $(i+1)}' "$1" |
    sort -n | awk '{v[NR]=$1} END{if(NR==0){print "-"; exit}
      printf "%.1f/%.1f", v[int((NR+1)/2)], v[NR]}'
}
maxof() {
  awk -v f="$2" '/^MANY /{for(i=1;i<NF;i++) if($i==f) print $(i+1)}' "$1" |
    sort -n | tail -1
}

printf "%-4s %-6s %5s %4s %8s %7s %8s %8s %7s %13s %13s %13s %4s %6s %s\n" \
  N job false fifo correct gap_ms stall_ms init_ms fin_ms told_ms result_ms cpu_ms rc wall_s load
for n in $ns; do
  t_kill=""
  for s in $scen; do
    args=() kills=() extra=(--f 2)
    case $s in
      none) ;;
      kill2)
        a=$((t_kill)); b=$((t_kill + 1))
        kills=(1 $((n / 2 + 1)))
        args=(--kill "1@$a" --kill "$((n / 2 + 1))@$b")
        extra=(--f 2 --kills 2) ;;
      node)
        nodes=$((n / 8)); [ "$nodes" -lt 2 ] && nodes=2
        per=$((n / nodes))
        for ((r = per; r < 2 * per; r++)); do kills+=("$r"); done
        args=(--nodes "$nodes" --kill-node "1@$t_kill")
        extra=(--f "$per" --kills "$per") ;;
      *) echo "$0: unknown scenario $s" >&2; exit 2 ;;
    esac
    if [ "$s" != none ] && [ -z "$t_kill" ]; then
      echo "$0: run 'none' first (it places the kills)" >&2; exit 2
    fi
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    out=$tmp/$n.$s.out err=$tmp/$n.$s.err
    t0=$(date +%s.%N)
    "$run" -n "$n" --timeout 600 "${args[@]}" "$prog" "${extra[@]}" \
      --min 3 --after 3 --bound 300 >"$out" 2>"$err"
    rc=$?
    wall=$(echo "$(date +%s.%N) - $t0" | bc)
    if [ "$s" = none ]; then
      init=$(maxof "$out" init_ms)
      t_kill=$(awk -v i="${init:-5000}" 'BEGIN{printf "%d", i / 1000 + 2.5}')
    fi
    # Ranks that stopped themselves on UCX's blocked shared-memory FIFO
    # (docs/transport.md: a rank died inside a send to them): a failure
    # UCX caused, counted apart (fifo), not as a false declaration.
    fifo=$(sed -n 's/^\[ucft rank \([0-9]*\)\] error: this rank.s shared-memory receive FIFO is blocked.*/\1/p' "$err" | sort -u)
    nfifo=$(echo "$fifo" | grep -c . || true)
    killed=" ${kills[*]} $(echo $fifo) "
    # Falsely declared: in a survivor's failed set, never killed; or fenced.
    false=$(awk -v k="$killed" '/^MANY /{n=split($NF,a,","); for(i=1;i<=n;i++)
              if(a[i]!="-" && index(k," "a[i]" ")==0) f[a[i]]=1}
              END{c=0; for(x in f) c++; print c}' "$out")
    fenced=$(grep -c "declared failed by the job" "$err")
    false=$((false + fenced))
    survivors=$((n - ${#kills[@]} - nfifo))
    correct=$(awk '/^MANY /{for(i=1;i<NF;i++){if($i=="bad")b=$(i+1); if($i=="errors")e=$(i+1)}
               if(b==0&&e==0) c++} END{print c+0}' "$out")
    printf "%-4s %-6s %5s %4s %8s %7s %8s %8s %7s %13s %13s %13s %4s %6.1f %s\n" \
      "$n" "$s" "$false" "$nfifo" "$correct/$survivors" "$(maxof "$out" gap_ms)" \
      "$(maxof "$out" stall_ms)" "$(maxof "$out" init_ms)" \
      "$(maxof "$out" fin_ms)" "$(stats "$out" told_ms)" \
      "$(stats "$out" result_ms)" "$(stats "$out" death_cpu_ms)" "$rc" "$wall" "$load"
    [ -n "$keep" ] && cp "$out" "$err" "$keep/"
  done
done
