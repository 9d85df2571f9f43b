/*
 * Pretend nodes as network hosts (--netns, docs/launcher.md): each node of
 * --nodes K gets a network namespace of its own, "ucft<PID>n<k>", whose
 * only link, eth0 (198.51.100.<k+1>/24), is one end of a veth pair; the
 * other ends are ports of a bridge in a hub namespace, "ucft<PID>hub",
 * which holds 198.51.100.254 and the launcher's PMIx listener. The
 * addresses exist only inside these namespaces (a documentation range; no
 * route, no link to anything outside), so nothing leaves the machine.
 *
 * The launcher itself moves into the hub before it starts its PMIx
 * server, so that the server's socket listens there; each rank enters its
 * node's namespace between fork and exec (ucftrun_proc_t.netns_fd).
 *
 * Faults on the links, at chosen times (launcher/job.c):
 *   cut K       node K's veth port goes down: no packet in or out, no RST,
 *               its processes keep running (also cut off from PMIx);
 *   heal K      the port comes back up and K's partition rules go;
 *   partition   nftables rules in each node's namespace drop packets to
 *               and from the other side's addresses;
 *   loss K:P    nftables drops P % of K's packets at random, both ways
 *               (numgen random mod 100 < P), from the start;
 *   delay K:D,J K's incoming packets are held D +- J by a relay process
 *               in its namespace (launcher/relay.h), from the start.
 *
 * The namespaces are made by running ip(8) and nft(8) (iproute2,
 * nftables) and removed by ucftrun_netns_destroy on every exit of the
 * launcher: normal end, failure, timeout, signal. A launcher that is
 * itself SIGKILLed leaves them: `ip netns list | grep ucft<PID>`.
 * Needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root): without them
 * ucftrun_netns_create fails with a message saying so.
 */
#ifndef UCFTRUN_NETNS_H
#define UCFTRUN_NETNS_H

#include <stddef.h>
#include <stdint.h>

#define UCFTRUN_NETNS_MAX_NODES 200
#define UCFTRUN_NETNS_SUBNET    "198.51.100"

typedef struct ucftrun_netns {
    int nnodes;
    char prefix[32]; /* "ucft<PID>" */
    int made_hub;    /* the hub namespace exists (remove it) */
    int made;        /* node namespaces made so far (remove them) */
    int hub_fd;      /* open handle of the hub namespace, or -1 */
    int *node_fd;    /* [nnodes]: open handles, or -1 */
    int root_fd;     /* the namespace the launcher started in, or -1 */
    int *relay_pid;  /* [nnodes]: delay relays, 0 none */
} ucftrun_netns_t;

/* 0 if this process may create namespaces, else -1 with the reason. */
int ucftrun_netns_check_caps(char *err, size_t errlen);

/* Makes the hub and `nnodes` node namespaces with their links. Returns 0,
 * or -1 with a message in err (whatever was made is removed again). */
int ucftrun_netns_create(ucftrun_netns_t *ns, int nnodes, char *err,
                         size_t errlen);

/* Moves the calling thread into the hub (before the PMIx server starts,
 * while the launcher has no other thread). 0 or -1. */
int ucftrun_netns_enter_hub(ucftrun_netns_t *ns, char *err, size_t errlen);

/* Node k's address "198.51.100.<k+1>" in buf. */
void ucftrun_netns_addr(int node, char *buf, size_t len);

/* Faults (see above). Each returns 0 or -1 (logged by the caller). */
int ucftrun_netns_cut(ucftrun_netns_t *ns, int node);
int ucftrun_netns_heal(ucftrun_netns_t *ns, int node);
/* Nodes whose bit is set in `side` against all the others. */
int ucftrun_netns_partition(ucftrun_netns_t *ns, uint64_t side);
int ucftrun_netns_loss(ucftrun_netns_t *ns, int node, int percent);
int ucftrun_netns_delay(ucftrun_netns_t *ns, int node, uint64_t delay_ns,
                        uint64_t jitter_ns);
/* Kills the delay relays (before the launcher reaps all its children;
 * ucftrun_netns_destroy does it too). */
void ucftrun_netns_stop_relays(ucftrun_netns_t *ns);

/* Removes every namespace made (idempotent; safe on a zeroed struct with
 * nnodes 0). */
void ucftrun_netns_destroy(ucftrun_netns_t *ns);

#endif
