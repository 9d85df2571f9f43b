#!/usr/bin/env python3
"""Checks that libucft.so exports exactly the public API.

Every function declared with UCFT_API in include/ucft.h must be exported,
and nothing else may be (internal functions are hidden by
-fvisibility=hidden). Prints what differs; exits 1 if anything does.

Usage: scripts/check_exports.py LIBUCFT_SO [HEADER]
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def declared(header):
    text = open(header).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    # Preprocessor lines (with their continuations) declare nothing.
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    names = set()
    for m in re.finditer(r"\bUCFT_API\b([^;{]*?)\(", text):
        ident = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1))
        if ident:
            names.add(ident[-1])
    return names


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtDdBbRrVvWwiu":
            names.add(parts[2].split("@")[0])
    # Symbols every shared object carries, not ours.
    return {n for n in names if n not in ("_init", "_fini")}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    header = (sys.argv[2] if len(sys.argv) == 3 else
              os.path.join(HERE, "..", "include", "ucft.h"))
    pub, exp = declared(header), exported(sys.argv[1])
    if not pub:
        sys.exit(f"check_exports: no UCFT_API declaration in {header}")
    extra, missing = sorted(exp - pub), sorted(pub - exp)
    for n in extra:
        print(f"exported but not in ucft.h: {n}")
    for n in missing:
        print(f"declared in ucft.h but not exported: {n}")
    if extra or missing:
        return 1
    print(f"check_exports: {len(exp)} symbols exported, exactly the "
          f"{len(pub)} functions ucft.h declares")
    return 0


if __name__ == "__main__":
    sys.exit(main())
