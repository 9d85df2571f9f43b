#!/usr/bin/env bash
# A real multi-host launch on one machine: Open MPI's mpirun starts one
# orted per host, each host a network namespace made here, through a
# remote-shell agent that enters the host's namespace (ip netns exec),
# with a hostfile; the ucft program runs across the hosts over TCP.
#
# Layout (as ucftrun --netns, docs/launcher.md): hosts h0..h(K-1) hold
# 198.51.100.<k+1>/24 on eth0, veths to a bridge in a hub namespace that
# holds .254, where mpirun itself runs (so that its out-of-band channel
# reaches the orteds). Addresses only inside these namespaces; all of
# them removed on exit (trap), also after a failure.
#
# Usage: mpirun_netns.sh HOSTS RANKS_PER_HOST PROGRAM [ARGS...]
# Each mpirun is bounded (--timeout 50: a hang ends it, and the trap
# still removes the namespaces).
# Exit: the job's status; 77 (CTest SKIP) with the reason when this
# process cannot create namespaces.
set -uo pipefail
hosts=$1 per=$2
shift 2
prefix=ucftmr$$
work=$(mktemp -d)

cleanup() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' |
              grep "^${prefix}\(hub\|h[0-9]*\)$"); do
    ip netns del "$ns"
  done
  rm -rf "$work"
}
trap cleanup EXIT

if ! ip netns add "${prefix}hub" 2>"$work/err"; then
  echo "SKIP: cannot create a network namespace (needs CAP_NET_ADMIN and CAP_SYS_ADMIN): $(cat "$work/err")"
  exit 77
fi
set -e
hub=${prefix}hub
ip -n "$hub" link set lo up
ip -n "$hub" link add br0 type bridge
ip -n "$hub" addr add 198.51.100.254/24 dev br0
ip -n "$hub" link set br0 up
: >"$work/hostfile"
for k in $(seq 0 $((hosts - 1))); do
  ns=${prefix}h$k
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip -n "$hub" link add "v$k" type veth peer name eth0 netns "$ns"
  ip -n "$hub" link set "v$k" master br0 up
  ip -n "$ns" addr add "198.51.100.$((k + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  echo "198.51.100.$((k + 1)) slots=$per" >>"$work/hostfile"
done
# The agent: "AGENT [options] HOST COMMAND...", as ssh is called; HOST is
# an address of the range, whose last byte names the namespace.
cat >"$work/agent" <<AGENT
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1; shift
k=\$((\${host##*.} - 1))
# Each host its own session directory: the hosts share /tmp and a
# hostname, and two daemons creating the same one at once fail (EEXIST).
mkdir -p "$work/tmp\$k"
exec ip netns exec ${prefix}h\$k env OMPI_MCA_orte_tmpdir_base="$work/tmp\$k" sh -c "\$*"
AGENT
chmod +x "$work/agent"
run() {
  ip netns exec "$hub" mpirun --allow-run-as-root --oversubscribe --timeout 50 \
    --hostfile "$work/hostfile" -np $((hosts * per)) \
    --mca plm_rsh_agent "$work/agent" \
    --mca oob_tcp_if_include 198.51.100.0/24 \
    --mca btl_tcp_if_include 198.51.100.0/24 \
    -x UCX_TLS=tcp -x UCX_NET_DEVICES=eth0 -x UCX_TCP_CONN_NB=y \
    -x UCFT_LOG_LEVEL=warn "$@"
}
set +e
# Where the ranks run: each host's address, RANKS_PER_HOST times.
run sh -c 'ip -o -4 addr show dev eth0' >"$work/where" 2>&1
want=$(for k in $(seq 1 "$hosts"); do echo "$per 198.51.100.$k"; done)
got=$(grep -o '198\.51\.100\.[0-9]*/' "$work/where" | tr -d / | sort | uniq -c |
      awk '{print $1, $2}')
if [ "$got" != "$want" ]; then
  echo "FAIL: ranks not spread over the hosts as asked:"; cat "$work/where"
  exit 1
fi
echo "mpirun_netns: ranks placed: $(echo "$got" | tr '\n' ' ')"
run "$@"
rc=$?
echo "mpirun_netns: $hosts hosts x $per ranks, status $rc"
exit $rc
