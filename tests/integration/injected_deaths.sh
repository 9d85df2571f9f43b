# Sourced by the scripts whose victims die by UCFT_INJECT: the launcher did
# not kill them, so it reports them (exit status 137), and nothing else
# may have failed.
# expect_injected_deaths RC OUT VICTIM...: RC is 137; each victim was
# killed by SIGKILL and logged its injection; no other rank failed. On a
# mismatch prints OUT and "FAIL: why", and exits 1.
expect_injected_deaths() {
  local rc=$1 out=$2 r pat
  shift 2
  _inj_fail() { cat "$out"; echo "FAIL: $*"; exit 1; }
  [ "$rc" -eq 137 ] || _inj_fail "exit status $rc, expected 137 (the injected deaths)"
  for r in "$@"; do
    grep -q "^ucftrun: rank $r killed by signal 9" "$out" || _inj_fail "rank $r did not die"
  done
  [ "$(grep -c 'UCFT_INJECT: killing myself' "$out")" -eq $# ] ||
    _inj_fail "not $# injected deaths"
  pat="^ucftrun: rank ($(IFS='|'; echo "$*")) killed by signal 9"
  grep -E "^ucftrun: rank [0-9]+ (exited|killed)" "$out" | grep -vE "$pat" &&
    _inj_fail "a survivor failed"
  return 0
}
