#!/usr/bin/env bash
# The export check (scripts/check_exports.py) must fail on a library that
# exports an internal function, or misses a declared one.
set -u
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cat >"$t/h.h" <<'C'
#define UCFT_API __attribute__((visibility("default")))
UCFT_API int ucft_init(void);
UCFT_API int ucft_finalize(int x, /* a comment ( */
                           int y);
C
cat >"$t/l.c" <<'C'
int ucft_init(void) { return 0; }
int rt_internal(void) { return 1; }
C
cc -shared -fPIC -o "$t/libx.so" "$t/l.c" || exit 1
out=$(python3 "$here/../../scripts/check_exports.py" "$t/libx.so" "$t/h.h")
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
grep -q "exported but not in ucft.h: rt_internal" <<<"$out" ||
  { echo "FAIL: the internal export was not reported"; exit 1; }
grep -q "declared in ucft.h but not exported: ucft_finalize" <<<"$out" ||
  { echo "FAIL: the missing export was not reported"; exit 1; }
echo "PASS: the check reports both differences"
