#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds consumers
# outside the tree, with CMake (find_package(ucft)) and with pkg-config,
# and runs them; among them one that calls the deprecated names, which
# must also be exported by the shared library and warn when called.
set -eu
build=$1
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/b" >/dev/null
"$tmp/b/consumer"
"$tmp/b/consumer_static"
"$tmp/b/consumer_compat"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
cc -std=c11 -o "$tmp/pc" "$src/consumer.c" $(pkg-config --cflags --libs ucft)
"$tmp/pc"
# The consumer uses none of the deprecated names: it builds with them
# hidden.
cc -std=c11 -Wall -Werror -DUCFT_NO_DEPRECATED -o "$tmp/pc_new" \
  "$src/consumer.c" $(pkg-config --cflags --libs ucft)
# The deprecated names are exported functions of the shared library, and
# a call to one warns, naming the new call.
lib=$(find "$tmp/prefix" -name libucft.so | head -n 1)
for f in ucft_progress ucft_context_fd ucft_failed_ranks ucft_set_failure_cb; do
  nm -D --defined-only "$lib" | grep -q " T $f\$" ||
    { echo "FAIL: $f is not exported by $lib"; exit 1; }
done
printf '#include <ucft.h>\nint f(ucft_context_h c) { return ucft_progress(c); }\n' >"$tmp/old.c"
if cc -std=c11 -Werror=deprecated-declarations -c -o "$tmp/old.o" \
  $(pkg-config --cflags ucft) "$tmp/old.c" 2>"$tmp/old.err"; then
  echo "FAIL: a call to ucft_progress compiled without a deprecation warning"
  exit 1
fi
grep -q "use ucft_context_progress" "$tmp/old.err" ||
  { echo "FAIL: the deprecation warning does not name the new call"; cat "$tmp/old.err"; exit 1; }
# Man pages of the tools (help2man), when help2man was there at build.
if command -v help2man >/dev/null; then
  for t in ucftrun ucft-info ucft-bench ucft-sim ucft-topo; do
    page="$tmp/prefix/share/man/man1/$t.1"
    grep -q "^\.TH \"\?${t^^}" "$page" 2>/dev/null ||
      { echo "FAIL: no man page $page"; exit 1; }
  done
  echo "PASS: man pages of the 5 tools installed"
fi
# The Python package, from the installed copy alone: no UCFT_LIBRARY, it
# finds the prefix's libucft through _config.py (Debian's python3).
py=/usr/bin/python3
if [ -x "$py" ] && "$py" -c "import numpy" 2>/dev/null; then
  pydir=$(find "$tmp/prefix" -type d -name dist-packages | head -n 1)
  [ -f "$pydir/ucft/_config.py" ] || { echo "FAIL: no installed ucft package"; exit 1; }
  out=$(cd "$tmp" && env -u UCFT_LIBRARY -u PYTHONPATH PYTHONPATH="$pydir" "$py" -c '
import os, ucft, ucft._lib as L
print(os.path.realpath(L._library_path()))
with ucft.init() as ctx:
    import numpy as np
    print(int(ctx.world.allreduce(np.array([41], np.int64))[0]) + 1)
')
  echo "$out" | head -n 1 | grep -q "^$tmp/prefix/" ||
    { echo "FAIL: the installed package did not load the prefix's libucft: $out"; exit 1; }
  [ "$(echo "$out" | tail -n 1)" = 42 ] || { echo "FAIL: installed package: $out"; exit 1; }
  ucftrun=$build/bin/ucftrun
  (cd "$tmp" && env -u UCFT_LIBRARY PYTHONPATH="$pydir" "$ucftrun" -n 4 \
     --timeout 60 "$py" -m ucft.examples.allreduce) >"$tmp/py.out" 2>&1 ||
    { echo "FAIL: installed ucft.examples.allreduce"; cat "$tmp/py.out"; exit 1; }
  [ "$(grep -c 'iteration 79: sum  10 of 4 live ranks (correct)' "$tmp/py.out")" = 4 ] ||
    { echo "FAIL: installed ucft.examples.allreduce output"; cat "$tmp/py.out"; exit 1; }
  echo "PASS: installed Python package (ucft.examples.allreduce under ucftrun)"
fi
echo "PASS: installed ucft found by CMake and pkg-config"
