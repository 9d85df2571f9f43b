#!/usr/bin/env bash
# The kernel watch of local ranks: rank 3 is SIGKILLed; every survivor's
# heartbeat thread must see its process die (a debug line per survivor):
# through its alive slot (robust mutex released by the dying thread) where
# the kernel has io_uring futex waits (Linux >= 6.7), else through its
# pidfd. The job must pass its own checks (every survivor told, the failed
# set exact; it_detect told). Then the same with two pretend nodes of one
# machine (--nodes 2): rank 3 is on the other node of ranks 0 and 2, whose
# kernel still shows its death (a pidfd, no slot); only network
# namespaces hide a rank from the kernel view.
set -u
ucftrun=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
UCFT_LOG_LEVEL=debug "$ucftrun" -n 4 --times-from connected --kill 3@1.5 --timeout 50 "$prog" told 5 \
  >"$out" 2>&1 || fail "the job failed"
slots=0
for r in 0 1 2; do
  line=$(grep "ucft rank $r\] debug: watching 3 rank(s) of this machine through pidfds (3 local)" "$out") ||
    fail "rank $r does not watch its 3 local peers"
  grep -q "ucft rank $r\] debug: rank 3: its process is dying or ended" "$out" ||
    fail "rank $r did not see rank 3's process die"
  if [[ $line == *", 3 slot(s)"* ]]; then
    slots=$((slots + 1))
    grep -q "ucft rank $r\] debug: rank 3: its heartbeat thread is dying" "$out" ||
      fail "rank $r watches rank 3's alive slot but was not woken by it"
  fi
done
if ((slots == 3)); then
  echo "PASS: every survivor saw the death through its alive slot"
else
  echo "PASS: every survivor saw the death through its pidfd ($slots/3 with slots)"
fi

# (told, then 2 s before finalizing: without an alive slot the pidfd
# fires only once the dead process is torn down, which may come after the
# news from rank 3's node-mate.)
UCFT_LOG_LEVEL=debug "$ucftrun" -n 4 --nodes 2 --map-by node --times-from connected --kill 3@1.5 \
  --timeout 50 "$prog" told 5 2 >"$out" 2>&1 || fail "the job on two nodes failed"
for r in 0 1 2; do
  grep -q "ucft rank $r\] debug: watching 3 rank(s) of this machine through pidfds (1 local)" "$out" ||
    fail "rank $r does not watch the 3 ranks of both pretend nodes"
  grep -q "ucft rank $r\] debug: rank 3: its process is dying or ended" "$out" ||
    fail "rank $r did not see rank 3's process die (pretend nodes)"
done
echo "PASS: the ranks of the other pretend node are watched too"
