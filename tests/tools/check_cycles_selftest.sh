#!/usr/bin/env bash
# The cycle check (scripts/check_cycles.py) must fail on a cycle: two
# runtime files that call each other, and two folders that do.
set -u
here=$(cd "$(dirname "$0")" && pwd)
check="$here/../../scripts/check_cycles.py"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src/runtime" "$t/src/comm" "$t/b/r/ucft_rt_obj.dir" "$t/b/c/ucft_comm_obj.dir"
cat >"$t/src/runtime/a.c" <<'C'
void b_fn(void);
void c_fn(void);
void a_fn(void) { b_fn(); c_fn(); }
C
cat >"$t/src/runtime/b.c" <<'C'
void a_fn(void);
void b_fn(void) { a_fn(); }
C
cat >"$t/src/comm/c.c" <<'C'
void a_fn(void);
void c_fn(void) { a_fn(); }
C
cc -c "$t/src/runtime/a.c" -o "$t/b/r/ucft_rt_obj.dir/a.c.o" &&
  cc -c "$t/src/runtime/b.c" -o "$t/b/r/ucft_rt_obj.dir/b.c.o" &&
  cc -c "$t/src/comm/c.c" -o "$t/b/c/ucft_comm_obj.dir/c.c.o" || exit 1
out=$(python3 "$check" "$t/b" "$t/src")
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
grep -q "cycle of files: runtime/a <-> runtime/b" <<<"$out" ||
  { echo "FAIL: the file cycle was not reported"; exit 1; }
grep -q "cycle of folders: comm <-> runtime" <<<"$out" ||
  { echo "FAIL: the folder cycle was not reported"; exit 1; }
echo "PASS: the check reports both cycles"
