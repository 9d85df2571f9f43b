#!/usr/bin/python3
# Round trips between two pretend network hosts (ucftrun --netns, one rank
# per node): rank 0 echoes UDP datagrams on its node's address, rank 1
# sends N of them, one at a time, and prints one line:
#   rtt_ms n=<answered> lost=<lost> min=<ms> p50=<ms> p90=<ms> max=<ms>
# Used by expect_netns.sh (mode delay) to check that --netem delay=
# really delays. Usage: netem_rtt.py [N]
import os
import socket
import statistics
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
rank = int(os.environ.get("PMIX_RANK", "-1"))
server = ("198.51.100.1", 9999)  # node 0's address (launcher/netns.h)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if rank == 0:
    s.bind(server)
    s.settimeout(5.0)
    try:
        while True:
            data, peer = s.recvfrom(64)
            if data == b"end":
                break
            try:
                s.sendto(data, peer)
            except PermissionError:  # dropped on the way out (loss)
                pass
    except socket.timeout:
        pass
    sys.exit(0)
time.sleep(0.5)  # rank 0 binds first
s.settimeout(0.25)
rtts, lost = [], 0
for i in range(n):
    t = time.monotonic()
    try:
        s.sendto(b"%d" % i, server)  # EPERM: dropped on the way out (loss)
        while s.recvfrom(64)[0] != b"%d" % i:
            pass
        rtts.append((time.monotonic() - t) * 1e3)
    except (socket.timeout, PermissionError):
        lost += 1
    time.sleep(0.005)
for _ in range(5):
    try:
        s.sendto(b"end", server)
    except PermissionError:
        pass
rtts.sort()
if not rtts:
    print(f"rtt_ms n=0 lost={lost}")
    sys.exit(1)
p90 = rtts[min(len(rtts) - 1, int(0.9 * len(rtts)))]
print(f"rtt_ms n={len(rtts)} lost={lost} min={rtts[0]:.3f} "
      f"p50={statistics.median(rtts):.3f} p90={p90:.3f} max={rtts[-1]:.3f}")
