#!/usr/bin/env python3
"""Checks that every job sending a real SIGKILL over shared memory is in
the set of tests that scripts/test.sh retries once (UCX 1.13's blocked
FIFO, docs/transport.md), so a new kill job cannot fail CI by chance.

Reads `ctest --show-only=json-v1` on stdin; the set's regular expression
is the first argument. Prints each job that is missing; exits 1 if any is.

Usage: ctest --test-dir BUILD --show-only=json-v1 | check_shm_kills.py RE
"""
import json
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_shm_kills.py REGEX < ctest-json")
    retried = re.compile(sys.argv[1])
    missing = []
    for test in json.load(sys.stdin).get("tests", []):
        cmd = " ".join(test.get("command", []))
        env = " ".join(v for p in test.get("properties", [])
                       if p["name"] == "ENVIRONMENT" for v in p["value"])
        tls = re.search(r"UCX_TLS=([^ ;]*)", env)
        over_shm = tls is None or "tcp" not in tls.group(1)
        if "--kill" in cmd and over_shm and not retried.search(test["name"]):
            missing.append(test["name"])
    for name in missing:
        print(f"check_shm_kills: {name} kills a rank over shared memory "
              "but is not in scripts/test.sh's shm_kills set")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
