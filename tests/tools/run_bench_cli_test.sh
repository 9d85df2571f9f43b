#!/usr/bin/env bash
# ucft-bench option errors: each bad value exits 2 with one line naming the
# option, before any process of the job is started or any init is done.
set -u
bench=$1
fails=0

expect_bad() { # option to name, then the arguments
  local name=$1 out rc
  shift
  out=$("$bench" "$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: ucft-bench $*: exit $rc, expected 2"
    fails=$((fails + 1))
  elif ! grep -q -- "$name" <<<"$out"; then
    echo "FAIL: ucft-bench $*: no line naming $name: $(head -1 <<<"$out")"
    fails=$((fails + 1))
  fi
}

expect_bad --sizes pt2pt --sizes 8,,64
expect_bad --sizes pt2pt --sizes 8,
expect_bad --sizes pt2pt --sizes ,8
expect_bad --sizes pt2pt --sizes "$(printf '\t-1')"
expect_bad --sizes pt2pt --sizes " 8"
expect_bad --sizes pt2pt --sizes 65m
expect_bad --iters pt2pt --iters 0
expect_bad --f coll --f 0
expect_bad --f coll --f 65
expect_bad --f coll --f " 2"
expect_bad --size coll --size -8
expect_bad --alg coll --op allreduce --alg nosuch
expect_bad nosuch nosuch

if [ "$fails" -ne 0 ]; then
  echo "$fails case(s) failed"
  exit 1
fi
echo "all bad options refused with exit 2"
