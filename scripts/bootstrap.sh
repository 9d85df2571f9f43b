#!/usr/bin/env bash
# Installs the Debian 12 packages ucft needs, only those that are missing.
# Needs root or sudo when something is missing; does nothing otherwise.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libucx-dev ucx-utils libpmix-dev
      libhwloc-dev hwloc libcmocka-dev openmpi-bin libopenmpi-dev procps
      python3 python3-numpy binutils libuv1-dev gnuplot-nox graphviz help2man
      clang libclang-rt-14-dev iproute2 nftables)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all packages present"
  exit 0
fi
echo "bootstrap: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
