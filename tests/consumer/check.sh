#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds two
# consumers outside the tree: one with CMake (find_package(ucft)), one with
# pkg-config, and runs them.
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
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
cc -std=c11 -o "$tmp/pc" "$src/consumer.c" $(pkg-config --cflags --libs ucft)
"$tmp/pc"
echo "PASS: installed ucft found by CMake and pkg-config"
