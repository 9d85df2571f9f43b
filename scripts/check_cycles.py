#!/usr/bin/env python3
"""Finds cycles of calls between the files and the folders of libucft.

Reads the object files of a build (nm: which file defines and which uses
each symbol), draws an arrow from a file to every file whose functions or
data it uses, and reports every cycle: among the files of one folder, and
among folders. Exits 1 when there is one.

Usage: scripts/check_cycles.py BUILD_DIR [SOURCE_DIR]
(SOURCE_DIR: the tree the objects were built from; default: this one)
"""
import os
import subprocess
import sys
from collections import defaultdict

# The object libraries of libucft (cmake/library.cmake) and their folders.
TARGETS = {
    "ucft_base_obj": "runtime/base",
    "ucft_tp_ucp_obj": "transport/ucp",
    "ucft_coll_obj": "collectives",
    "ucft_boot_obj": "bootstrap",
    "ucft_place_obj": "placement",
    "ucft_detector_obj": "runtime/detector",
    "ucft_linux_obj": "runtime/linux",
    "ucft_rt_obj": "runtime",
    "ucft_comm_obj": "comm",
}


# Files that are one unit: an algorithm split over two files around a
# private header, whose parts call each other by design.
UNITS = {
    "collectives/bcast_corrected_recv": "collectives/bcast_corrected",
    "runtime/detector/probe_origin": "runtime/detector/probe",
    # The corrected reduce/allreduce: its message handlers, and the
    # majority gate, itself a corrected allreduce run inside one.
    "collectives/reduce_corrected_phase": "collectives/reduce_corrected",
    "collectives/coll_gate": "collectives/reduce_corrected",
    # The agreement and its confirmation under the majority gate, itself
    # an agreement run inside one.
    "collectives/agree_gate": "collectives/agree",
}

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def objects(build, src):
    """(folder, file name, path) of every object of the targets whose
    source still exists (a build directory keeps the objects of files
    that were moved or removed)."""
    found = []
    for root, _, files in os.walk(build):
        for t, folder in TARGETS.items():
            if f"/{t}.dir/" not in root + "/":
                continue
            for f in files:
                if f.endswith(".c.o") and os.path.exists(
                        os.path.join(src, folder, f[:-2])):
                    found.append((folder, f[:-4], os.path.join(root, f)))
    return found


def symbols(path):
    out = subprocess.run(["nm", path], check=True, capture_output=True,
                         text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCG":
            defined.add(parts[2])
    return defined, used


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    objs = objects(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else SRC)
    if not objs:
        sys.exit(f"check_cycles: no object files of libucft under {sys.argv[1]}")
    owner, uses = {}, {}
    for folder, name, path in objs:
        node = f"{folder}/{name}"
        node = UNITS.get(node, node)
        defined, used = symbols(path)
        for s in defined:
            owner[s] = node
        uses[node] = uses.get(node, set()) | used
    files, folders = defaultdict(set), defaultdict(set)
    for node, used in uses.items():
        files[node]
        folders[os.path.dirname(node)]
        for s in used:
            dst = owner.get(s)
            if dst is None or dst == node:
                continue
            a, b = os.path.dirname(node), os.path.dirname(dst)
            if a == b:
                files[node].add(dst)
            else:
                folders[a].add(b)
    bad = 0
    for comp in cycles(files):
        print("cycle of files: " + " <-> ".join(comp))
        bad = 1
    for comp in cycles(folders):
        print("cycle of folders: " + " <-> ".join(comp))
        bad = 1
    if not bad:
        print(f"check_cycles: {len(uses)} files in {len(folders)} folders, "
              "no cycle")
    return bad


if __name__ == "__main__":
    sys.exit(main())
