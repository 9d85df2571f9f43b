#!/usr/bin/env bash
# ucftrun integration tests: run_launcher_test.sh CASE UCFTRUN CLIENT
#
# Each case runs the real launcher with the plain PMIx test client
# (pmix_client.c) and asserts outcomes: exit status, the launcher's lines,
# the events the survivors received, that no rank survives and that the
# rendezvous directory is gone. Every case runs with TMPDIR set to a fresh
# directory, which must be empty again at the end (ucftrun removed what it
# created there).
set -u

CASE=$1
UCFTRUN=$2
CLIENT=$3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ucftrun-test.XXXXXX")
RUNTMP=$WORK/tmp
mkdir -p "$RUNTMP"
BG_PID=

cleanup() {
    if [ -n "$BG_PID" ]; then
        kill -KILL "$BG_PID" 2>/dev/null
        wait "$BG_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
    echo "FAIL [$CASE]: $*" >&2
    for f in out err; do
        if [ -s "$WORK/$f" ]; then
            echo "--- ucftrun std$f:" >&2
            head -n 60 "$WORK/$f" >&2
        fi
    done
    exit 1
}

# run ARGS...: runs ucftrun with a hard bound; sets RC and ELAPSED (ms).
run() {
    local t0 t1
    t0=$(date +%s%N)
    TMPDIR=$RUNTMP timeout -k 5 45 "$UCFTRUN" "$@" >"$WORK/out" 2>"$WORK/err"
    RC=$?
    t1=$(date +%s%N)
    ELAPSED=$(((t1 - t0) / 1000000))
}

expect_rc() {
    [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"
}

# expect_line FILE REGEX [COUNT]: REGEX matches exactly COUNT (default 1)
# lines of FILE.
expect_line() {
    local n
    n=$(grep -cE -- "$2" "$WORK/$1")
    [ "$n" -eq "${3:-1}" ] || fail "'$2' matched $n lines of std$1, expected ${3:-1}"
}

expect_no_line() {
    if grep -qE -- "$2" "$WORK/$1"; then
        fail "unexpected line matching '$2' in std$1"
    fi
}

# The rendezvous directory is gone: nothing left in the run's TMPDIR.
expect_tmp_clean() {
    local left
    left=$(ls -A "$RUNTMP")
    [ -z "$left" ] || fail "left behind in TMPDIR: $left"
}

# No process of the given pids (from "-v" debug lines) is alive.
expect_ranks_gone() {
    local pid
    for pid in $(sed -n 's/.*rank [0-9]* is pid \([0-9]*\).*/\1/p' "$WORK/err"); do
        if kill -0 "$pid" 2>/dev/null || pgrep -g "$pid" >/dev/null; then
            fail "rank process (group) $pid survived"
        fi
    done
}

# expect_events N DEAD TEXT CODE: every rank except DEAD got event TEXT
# about DEAD with exit code CODE.
expect_events() {
    local r
    for ((r = 0; r < $1; r++)); do
        [ "$r" -eq "$2" ] && continue
        expect_line out "^rank $r got $3 for rank $2 \(exit code $4,"
    done
    expect_no_line err "FAIL"
}

case_fence() {
    local n=$1 r
    run -n "$n" "$CLIENT" fence
    expect_rc 0
    for ((r = 0; r < n; r++)); do
        expect_line out "^rank $r ok$"
    done
    expect_line out "." "$n"
    [ -s "$WORK/err" ] && fail "unexpected stderr"
    expect_tmp_clean
}

case_bind_core() {
    local ncores want got
    UCFT_TEST_EXPECT_BIND=1 run -n 4 --bind-to core "$CLIENT" fence
    expect_rc 0
    expect_line out "^rank [0-3] ok$" 4
    expect_line out "^rank [0-3] cpuset .* locality .*CR" 4
    # Rank i is on core i mod ncores: as many distinct cpusets as cores.
    ncores=$(lscpu -p=CORE 2>/dev/null | grep -v '^#' | sort -u | wc -l)
    if [ "$ncores" -ge 1 ]; then
        want=$((ncores < 4 ? ncores : 4))
        got=$(sed -n 's/^rank [0-9]* cpuset \([^ ]*\) .*/\1/p' "$WORK/out" | sort -u | wc -l)
        [ "$got" -eq "$want" ] || fail "$got distinct cpusets, expected $want"
    fi
    # Unbound: the client checks that PMIX_CPUSET is absent.
    run -n 2 --bind-to none "$CLIENT" fence
    expect_rc 0
    expect_tmp_clean
}

case_death() {
    local how=$1 n=4 rc=$2 text=$3 code=$4 line=$5
    run -n "$n" -v "$CLIENT" death "$how"
    expect_rc "$rc"
    expect_events "$n" $((n - 1)) "$text" "$code"
    if [ -n "$line" ]; then
        expect_line err "^ucftrun: rank 3 $line$"
    else
        expect_no_line err "^ucftrun: rank"
    fi
    expect_ranks_gone
    expect_tmp_clean
}

# Pretend nodes: every rank checks what PMIx says about itself and every
# peer (node id, hostname, local and node rank, local peers, number of
# nodes) against the map it computes from UCFT_TEST_EXPECT_NODES/MAP, then
# fences and reads every peer's modex data.
case_nodes_map() {
    local n k map
    for map in slot node; do
        for n_k in 16:4 7:3 5:5 3:1; do
            n=${n_k%:*}
            k=${n_k#*:}
            UCFT_TEST_EXPECT_NODES=$k UCFT_TEST_EXPECT_MAP=$map \
                run -n "$n" --nodes "$k" --map-by "$map" "$CLIENT" fence
            expect_rc 0
            expect_line out "^rank [0-9]+ ok$" "$n"
            expect_line out "^rank [0-9]+ node [0-9]+ host .*-n[0-9]+ " "$n"
            [ -s "$WORK/err" ] && fail "unexpected stderr ($n ranks, $k nodes by $map)"
        done
    done
    # 16 ranks by slot: rank 13 is the second rank of node 3; by node:
    # the fourth rank of node 1.
    UCFT_TEST_EXPECT_NODES=4 run -n 16 --nodes 4 "$CLIENT" fence
    expect_line out "^rank 13 node 3 host [^ ]+-n3 local rank 1 peers 12,13,14,15$"
    UCFT_TEST_EXPECT_NODES=4 UCFT_TEST_EXPECT_MAP=node \
        run -n 16 --nodes 4 --map-by node "$CLIENT" fence
    expect_line out "^rank 13 node 1 host [^ ]+-n1 local rank 3 peers 1,5,9,13$"
    # Data collected by the fence, and the PMIx library's own fence path.
    PMIX_MCA_pmix_server_fence_localonly_opt=0 UCFT_TEST_EXPECT_NODES=2 \
        run -n 4 --nodes 2 "$CLIENT" fence
    expect_rc 0
    expect_line out "^rank [0-3] ok$" 4
    # Bound: each pretend node is a copy of this machine, so a rank's core
    # follows its local rank: ranks 0 and 1 (local rank 0 on nodes 0 and
    # 1) share a cpuset, and so do ranks 2 and 3.
    UCFT_TEST_EXPECT_BIND=1 UCFT_TEST_EXPECT_NODES=2 UCFT_TEST_EXPECT_MAP=node \
        run -n 4 --nodes 2 --map-by node --bind-to core "$CLIENT" fence
    expect_rc 0
    local c0 c1 c2 c3
    c0=$(sed -n 's/^rank 0 cpuset \([^ ]*\) .*/\1/p' "$WORK/out")
    c1=$(sed -n 's/^rank 1 cpuset \([^ ]*\) .*/\1/p' "$WORK/out")
    c2=$(sed -n 's/^rank 2 cpuset \([^ ]*\) .*/\1/p' "$WORK/out")
    c3=$(sed -n 's/^rank 3 cpuset \([^ ]*\) .*/\1/p' "$WORK/out")
    [ -n "$c0" ] && [ "$c0" = "$c1" ] && [ -n "$c2" ] && [ "$c2" = "$c3" ] ||
        fail "cpusets by local rank: '$c0' '$c1' '$c2' '$c3'"
    expect_tmp_clean
}

# --kill-node K@S kills exactly node K's ranks, all at once; every
# survivor is told of each of them; the job still succeeds (the kills were
# on purpose). The kill comes late enough that all 16 ranks have passed
# their modex fence even under ASan on a loaded machine (a rank killed
# during the fence ends the others' fence with PARTIAL-SUCCESS).
case_kill_node() {
    local map victims r v n t
    for map in slot node; do
        if [ "$map" = slot ]; then victims="4 5 6 7"; else victims="1 5 9 13"; fi
        UCFT_TEST_EXPECT_NODES=4 UCFT_TEST_EXPECT_MAP=$map \
            run -n 16 -v --nodes 4 --map-by "$map" --kill-node 1@4 \
            --timeout 40 "$CLIENT" survive-node 1
        expect_rc 0
        expect_line err "rank [0-9]+ killed by signal 9 \(SIGKILL\) \(injected\)" 4
        for v in $victims; do
            expect_line err "rank $v killed by signal 9 \(SIGKILL\) \(injected\)"
        done
        expect_line err "--kill-node 1@4.000: signalled 4 rank\(s\)"
        for ((r = 0; r < 16; r++)); do
            case " $victims " in *" $r "*) continue ;; esac
            for v in $victims; do
                expect_line out "^rank $r got PROC-ABORTED-BY-SIG for rank $v \(exit code 137\)$"
            done
        done
        expect_line out " got " 48
        expect_no_line err "^ucftrun: rank"
        expect_no_line err "FAIL"
        [ "$ELAPSED" -ge 4000 ] || fail "node killed before 4 s ($ELAPSED ms)"
        expect_ranks_gone
        expect_tmp_clean
    done
    # The injection log has one line per killed rank, all with the same
    # time (one clock reading for the node). Node 1 holds ranks 1 and 3.
    run -n 4 --nodes 2 --map-by node --kill-node 1@0.5 --timeout 20 \
        sh -c 'case $PMIX_RANK in 1 | 3) exec sleep 30 ;; esac
               sleep "$1"
               sed "s/^/rank $PMIX_RANK read: /" "$UCFTRUN_INJECT_LOG"' sh 1.5
    expect_rc 0
    expect_line out "^rank [02] read: kill [13] [0-9]+$" 4
    expect_line out "^rank 0 read: kill 1 " 1
    expect_line out "^rank 0 read: kill 3 " 1
    n=$(sed -n 's/^rank [02] read: kill [13] //p' "$WORK/out" | sort -u | wc -l)
    [ "$n" -eq 1 ] || fail "the node's kills were logged at $n different times"
    expect_tmp_clean
}

case_kill_inject() {
    # Late enough that every rank has passed its fence even on a loaded
    # machine under ASan: a rank killed before it connects to the server
    # leaves the others' fence waiting for it (PMIx 4.2.2 counts it as a
    # local participant), see docs/launcher.md.
    run -n 4 -v --kill 2@1.5 "$CLIENT" survive 2
    expect_rc 0
    expect_events 4 2 "PROC-ABORTED-BY-SIG" 137
    expect_no_line err "^ucftrun: rank"
    [ "$ELAPSED" -ge 1500 ] || fail "rank killed before 1.5 s ($ELAPSED ms)"
    expect_ranks_gone
    expect_tmp_clean
}

# --times-from connected: the kill's 0.8 s count from the moment the last
# rank connected. Rank 0 sleeps 1 s before it starts the client, so the
# kill comes after 1.8 s (without the option it lands at 0.8 s, before
# rank 0 has connected, and the job fails).
case_kill_times_from() {
    run -n 4 -v --times-from connected --kill 2@0.8 --timeout 30 \
        sh -c '[ "$PMIX_RANK" = 0 ] && sleep 1; exec "$1" survive 2' sh "$CLIENT"
    expect_rc 0
    expect_events 4 2 "PROC-ABORTED-BY-SIG" 137
    expect_line err "every rank connected or ended [0-9.]+ s after the start"
    expect_line err "--kill 2@0.800: signalled 1 rank\(s\)"
    expect_no_line err "^ucftrun: rank"
    [ "$ELAPSED" -ge 1800 ] || fail "rank killed before 1.8 s ($ELAPSED ms)"
    expect_ranks_gone
    expect_tmp_clean
}

# The injection log: every rank is told its path (inside the private
# rendezvous directory, created before the ranks start); a --kill or
# --stop appends "kill|stop RANK NS" before the signal, NS on the
# monotonic clock. The ranks print what they see; rank 2 is the victim.
INJECT_SCRIPT='
log=$UCFTRUN_INJECT_LOG
case $log in "$PMIX_SERVER_TMPDIR"/*) where=inside ;; *) where=outside ;; esac
[ -f "$log" ] && echo "rank $PMIX_RANK log exists $where"
[ "$PMIX_RANK" = 2 ] && exec sleep 30
sleep "$1"
sed "s/^/rank $PMIX_RANK read: /" "$log"
'

case_inject_log() {
    local kind n t
    # No injection: the file exists and stays empty.
    run -n 2 sh -c '[ -f "$UCFTRUN_INJECT_LOG" ] && [ ! -s "$UCFTRUN_INJECT_LOG" ] && echo "rank $PMIX_RANK empty log"'
    expect_rc 0
    expect_line out "^rank [01] empty log$" 2
    expect_tmp_clean
    for kind in kill stop; do
        run -n 3 -v --"$kind" 2@0.5 --timeout 20 sh -c "$INJECT_SCRIPT" sh 1.5
        expect_rc 0
        expect_line out "^rank [0-2] log exists inside$" 3
        expect_line out "^rank [01] read: $kind 2 [0-9]+$" 2
        expect_line out "read:" 2
        # Both survivors read the same line.
        n=$(sed -n 's/^rank [01] read: //p' "$WORK/out" | sort -u | wc -l)
        [ "$n" -eq 1 ] || fail "survivors read different lines"
        t=$(sed -n 's/^rank [01] read: [a-z]* 2 //p' "$WORK/out" | head -n 1)
        [ "$t" -gt 0 ] || fail "bad time '$t'"
        expect_no_line err "^ucftrun: rank"
        expect_ranks_gone
        expect_tmp_clean
    done
}

case_stop_timeout() {
    local dir
    run -n 3 -v --stop 1@0 --timeout 2 "$CLIENT" fence
    expect_rc 124
    expect_line err "^ucftrun: timeout after 2 s, killing the job$"
    [ "$ELAPSED" -ge 2000 ] && [ "$ELAPSED" -lt 15000 ] ||
        fail "took $ELAPSED ms with --timeout 2"
    dir=$(sed -n 's/.*rendezvous directory \([^ ]*\).*/\1/p' "$WORK/err")
    [ -n "$dir" ] || fail "no rendezvous directory in the debug output"
    [ -e "$dir" ] && fail "rendezvous directory $dir still exists"
    expect_ranks_gone
    expect_tmp_clean
    # Stopped, and everybody else ends: the stopped rank is killed, on
    # purpose, and the job succeeds.
    run -n 3 -v --stop 1@0.2 sh -c 'sleep 0.6'
    expect_rc 0
    expect_line err "rank 1 is still stopped: killing it"
    expect_no_line err "^ucftrun: rank"
    expect_ranks_gone
    expect_tmp_clean
}

case_exit_status() {
    run -n 4 "$CLIENT" exit 3 2
    expect_rc 3
    expect_line err "^ucftrun: rank 2 exited with status 3$"
    expect_line err "^ucftrun: rank" 1
    expect_tmp_clean
    # A program the kernel cannot run: its path and why, status 127.
    local bad="$WORK/bad-interp"
    printf '#!/nonexistent/interpreter\n' >"$bad"
    chmod +x "$bad"
    run -n 2 "$bad"
    expect_rc 127
    expect_line err "^ucftrun: cannot execute $bad: not found \(or its #! interpreter is missing\)$" 2
    head -c 64 /dev/zero >"$bad"
    run -n 1 "$bad"
    expect_rc 127
    expect_line err "^ucftrun: cannot execute $bad: not an executable format$" 1
    rm -f "$bad"
}

case_abort_on_failure() {
    run -n 4 -v --abort-on-failure "$CLIENT" exit 4 1 sleep
    expect_rc 4
    expect_line err "^ucftrun: rank 1 exited with status 4$"
    expect_line err "^ucftrun: --abort-on-failure: killing the other 3 ranks$"
    [ "$ELAPSED" -lt 20000 ] || fail "took $ELAPSED ms"
    expect_ranks_gone
    expect_tmp_clean
    # Without the option the job keeps running: the others are told, finish
    # and the status is still the failing rank's.
    run -n 3 "$CLIENT" death exit3
    expect_rc 3
    expect_events 3 2 "PROC-EXIT-NONZERO-TERM" 3
    expect_tmp_clean
}

case_pmix_abort() {
    run -n 3 -v "$CLIENT" abort 5
    expect_rc 5
    expect_line err "^ucftrun: rank 0 called PMIx_Abort with status 5: test abort$"
    expect_no_line err "^ucftrun: rank [0-9]+ (exited|killed)"
    [ "$ELAPSED" -lt 20000 ] || fail "took $ELAPSED ms"
    expect_ranks_gone
    expect_tmp_clean
}

case_tag_output() {
    local r
    run -n 4 --tag-output "$CLIENT" print 200
    expect_rc 0
    expect_line out "." 800
    for r in 0 1 2 3; do
        local c
        c=$(printf "\\x$(printf %x $((97 + r)))")
        # Whole lines only: prefix, the rank's text, its letter to the end.
        expect_line out "^\[$r\] rank $r line [0-9]+ ${c}+$" 200
        # In order within a rank.
        grep "^\[$r\] " "$WORK/out" | sed 's/.* line \([0-9]*\) .*/\1/' |
            sort -n -c 2>/dev/null || fail "rank $r's lines out of order"
        [ "$(grep "^\[$r\] " "$WORK/out" | sed 's/.* line \([0-9]*\) .*/\1/' |
            head -n 1)" = 0 ] || fail "rank $r's first line is not line 0"
    done
    awk 'length($0) != 103 { exit 1 }' "$WORK/out" || fail "a line was cut or merged"
    run -n 2 "$CLIENT" print 3
    expect_rc 0
    expect_line out "^rank [01] line [0-2] [ab]+$" 6
    expect_tmp_clean
}

# The ranks run without PMIx's shared-memory job-data store (its locks stay
# held when a rank is killed while it reads: launcher/server.c), unless the
# user chose a store; the full modex works either way.
case_job_store() {
    local show='echo "gds=$PMIX_GDS_MODULE ds21=${PMIX_DSTORE_21_BASE_PATH:-none}"; exec "$0" fence'
    run -n 4 -v sh -c "$show" "$CLIENT"
    expect_rc 0
    expect_line out "^gds=hash ds21=none$" 4
    expect_line out "^rank [0-3] ok$" 4
    expect_line err "PMIx job-data store: hash"
    expect_tmp_clean
    PMIX_MCA_gds=ds21,hash run -n 2 sh -c "$show" "$CLIENT"
    expect_rc 0
    expect_line out "^gds=ds21,hash ds21=/" 2
    expect_line out "^rank [01] ok$" 2
    expect_tmp_clean
}

case_bad_options() {
    local notexec=$WORK/notexec
    : >"$notexec"
    chmod 644 "$notexec"
    local -a cmds=(
        "-n 0 $CLIENT|bad number of ranks '0'"
        "-n two $CLIENT|bad number of ranks 'two'"
        "$CLIENT|missing -n N"
        "-n 2|missing program"
        "-n 2 --frob $CLIENT|unknown option '--frob'"
        "-n 2 --kill 1 $CLIENT|bad --kill value '1'"
        "-n 2 --stop 1@x $CLIENT|bad --stop value '1@x'"
        "-n 2 --kill 2@1 $CLIENT|--kill rank 2 is out of range"
        "-n 2 --timeout -1 $CLIENT|bad --timeout value '-1'"
        "-n 2 --bind-to numa $CLIENT|bad --bind-to value 'numa'"
        "-n 2 --kill-node 0@1 $CLIENT|--kill-node 0 needs --nodes K"
        "-n 4 --nodes 2 --kill-node 2@1 $CLIENT|--kill-node node 2 is out of range"
        "-n 4 --nodes 5 $CLIENT|--nodes 5 is more than the number of ranks (4)"
        "-n 4 --map-by socket $CLIENT|bad --map-by value 'socket'"
        "-n 2 --timeout|option '--timeout' needs a value"
        "-n 2 ucftrun-no-such-program|program 'ucftrun-no-such-program' not found in PATH"
        "-n 2 $notexec|is not executable"
        "-n 2 $WORK|is not a regular file"
    )
    local entry args msg
    for entry in "${cmds[@]}"; do
        args=${entry%%|*}
        msg=${entry#*|}
        # shellcheck disable=SC2086
        run $args
        expect_rc 2
        grep -qF -- "$msg" "$WORK/err" || fail "'$args': no '$msg'"
        expect_line err "^ucftrun: "
        expect_line err "^Try 'ucftrun --help' for more information.$"
        expect_line err "." 2
        [ -s "$WORK/out" ] && fail "'$args': output on stdout"
    done
    run --help
    expect_rc 0
    expect_line out "^Usage: ucftrun -n N"
    run --version
    expect_rc 0
    expect_line out "^ucftrun \(ucft\) [0-9]+\.[0-9]+\.[0-9]+, PMIx "
    expect_tmp_clean
}

# Starts ucftrun in the background; waits until NLINES lines are on stdout.
start_bg() {
    local nlines=$1 i
    shift
    # Empty the files first: the background job truncates them only once it
    # runs, and stale lines must not count as this run's.
    : >"$WORK/out"
    : >"$WORK/err"
    TMPDIR=$RUNTMP "$UCFTRUN" "$@" >>"$WORK/out" 2>>"$WORK/err" &
    BG_PID=$!
    for ((i = 0; i < 200; i++)); do
        [ "$(grep -c . "$WORK/out")" -ge "$nlines" ] && return 0
        sleep 0.05
    done
    fail "ranks did not start"
}

stop_bg() {
    local sig=$1 i
    kill -"$sig" "$BG_PID"
    for ((i = 0; i < 300; i++)); do
        kill -0 "$BG_PID" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$BG_PID" 2>/dev/null && fail "ucftrun still running after SIG$sig"
    wait "$BG_PID"
    RC=$?
    BG_PID=
}

case_sigterm_cleanup() {
    local dir t0 t1
    start_bg 3 -n 3 -v "$CLIENT" sleep
    dir=$(sed -n 's/.* tmpdir \([^ ]*\)$/\1/p' "$WORK/out" | sort -u)
    [ -d "$dir" ] || fail "rendezvous directory '$dir' not found while running"
    [ "$(stat -c %a "$dir")" = 700 ] || fail "$dir is not private (mode 0700)"
    stop_bg TERM
    [ "$RC" -eq 143 ] || fail "exit status $RC after SIGTERM, expected 143"
    expect_line err "^ucftrun: received SIGTERM, forwarding it to the ranks$"
    [ -e "$dir" ] && fail "rendezvous directory $dir still exists"
    for pid in $(sed -n 's/^rank [0-9]* pid \([0-9]*\) .*/\1/p' "$WORK/out"); do
        kill -0 "$pid" 2>/dev/null && fail "rank pid $pid survived SIGTERM"
    done
    expect_ranks_gone
    expect_tmp_clean

    # Ranks that ignore the signal are killed after the grace period.
    start_bg 2 -n 2 -v sh -c 'trap "" INT TERM; echo ready; exec sleep 30'
    t0=$(date +%s%N)
    stop_bg INT
    t1=$(date +%s%N)
    [ "$RC" -eq 130 ] || fail "exit status $RC after SIGINT, expected 130"
    [ $(((t1 - t0) / 1000000)) -lt 10000 ] || fail "grace period too long"
    expect_line err "grace period over"
    expect_ranks_gone
    expect_tmp_clean
}

case "$CASE" in
fence_1) case_fence 1 ;;
fence_2) case_fence 2 ;;
fence_4) case_fence 4 ;;
fence_8) case_fence 8 ;;
fence_upcall)
    # Make the PMIx library hand local fences to the fence_nb upcall.
    export PMIX_MCA_pmix_server_fence_localonly_opt=0
    case_fence 4
    ;;
bind_core) case_bind_core ;;
death_kill) case_death kill 137 "PROC-ABORTED-BY-SIG" 137 "killed by signal 9 \(SIGKILL\)" ;;
death_exit) case_death exit3 3 "PROC-EXIT-NONZERO-TERM" 3 "exited with status 3" ;;
death_nofin) case_death nofin 0 "PROC TERMINATED WITHOUT SYNC" 0 "" ;;
death_fin) case_death fin 0 "PROC TERMINATED" 0 "" ;;
kill_inject) case_kill_inject ;;
kill_times_from) case_kill_times_from ;;
nodes_map) case_nodes_map ;;
kill_node) case_kill_node ;;
inject_log) case_inject_log ;;
stop_timeout) case_stop_timeout ;;
exit_status) case_exit_status ;;
abort_on_failure) case_abort_on_failure ;;
pmix_abort) case_pmix_abort ;;
tag_output) case_tag_output ;;
job_store) case_job_store ;;
bad_options) case_bad_options ;;
sigterm_cleanup) case_sigterm_cleanup ;;
*) fail "unknown case" ;;
esac
echo "PASS [$CASE]"
exit 0
