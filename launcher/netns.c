/* Pretend nodes as network hosts: see netns.h. */
#include "launcher/netns.h"
#include "launcher/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAP_NET_ADMIN_BIT 12
#define CAP_SYS_ADMIN_BIT 21
#define MAX_ARGS          24
/* UCX 1.13's TCP transport connects with a blocking connect(): a rank
 * that sends to a peer behind a cut or a partition for the first time
 * (the detector re-targeting its heartbeats) blocks for as long as the
 * kernel retries the SYN, about 2 minutes by default. One retry bounds
 * that to about 3 s in the nodes' namespaces (a per-namespace setting). */
#define NETNS_SYN_RETRIES "1"

/* nftables set-up of a node's namespace: a set of blocked addresses
 * (partitions) and the chains that drop to and from them. */
static const char nft_setup[] =
    "add table inet ucft; "
    "add set inet ucft blocked { type ipv4_addr; }; "
    "add chain inet ucft in { type filter hook input priority 0; "
    "policy accept; }; "
    "add chain inet ucft out { type filter hook output priority 0; "
    "policy accept; }; "
    "add rule inet ucft in ip saddr @blocked drop; "
    "add rule inet ucft out ip daddr @blocked drop";

int ucftrun_netns_check_caps(char *err, size_t errlen)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long eff = 0;
    int found = 0;

    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "CapEff: %llx", &eff) == 1)
            found = 1;
    if (f != NULL)
        fclose(f);
    if (found && (eff >> CAP_NET_ADMIN_BIT & 1) &&
        (eff >> CAP_SYS_ADMIN_BIT & 1))
        return 0;
    snprintf(err, errlen,
             "--netns needs CAP_NET_ADMIN and CAP_SYS_ADMIN (run ucftrun "
             "as root) to create network namespaces");
    return -1;
}

/* Runs argv (ip or nft), in namespace `nsfd` when >= 0. Returns 0 when it
 * exits 0; else -1 with the first line it printed in err. */
static int run(int nsfd, char *const argv[], char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 ||
            dup2(p[1], 2) < 0)
            _exit(127);
        if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) != 0)
            _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    char out[256];
    size_t n = 0;
    ssize_t got;
    while ((got = read(p[0], out + n, sizeof(out) - 1 - n)) > 0 ||
           (got < 0 && errno == EINTR))
        n += got > 0 ? (size_t)got : 0;
    close(p[0]);
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
        return 0;
    snprintf(err, errlen, "'%s %s %s' failed (%s%d): %s", argv[0],
             argv[1] != NULL ? argv[1] : "",
             argv[1] != NULL && argv[2] != NULL ? argv[2] : "",
             WIFEXITED(ws) ? "status " : "signal ",
             WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws), out);
    return -1;
}

/* run() of a command given as words, ended by NULL. */
static int runv(int nsfd, char *err, size_t errlen, ...)
{
    char *argv[MAX_ARGS];
    va_list ap;
    int n = 0;

    va_start(ap, errlen);
    while (n < MAX_ARGS - 1 && (argv[n] = va_arg(ap, char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    return run(nsfd, argv, err, errlen);
}

static void name_of(const ucftrun_netns_t *ns, int node, char *buf, size_t len)
{
    if (node < 0)
        snprintf(buf, len, "%shub", ns->prefix);
    else
        snprintf(buf, len, "%sn%d", ns->prefix, node);
}

void ucftrun_netns_addr(int node, char *buf, size_t len)
{
    snprintf(buf, len, UCFTRUN_NETNS_SUBNET ".%d", node + 1);
}

/* Adds namespace `node` (-1: the hub) and opens it. */
static int add_ns(ucftrun_netns_t *ns, int node, int *fd, char *err,
                  size_t errlen)
{
    char name[64], path[128];

    name_of(ns, node, name, sizeof(name));
    if (runv(-1, err, errlen, "ip", "netns", "add", name, NULL) != 0)
        return -1;
    if (node < 0)
        ns->made_hub = 1;
    else
        ns->made = node + 1;
    snprintf(path, sizeof(path), "/run/netns/%s", name);
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        snprintf(err, errlen, "open %s: %s", path, strerror(errno));
        return -1;
    }
    return runv(*fd, err, errlen, "ip", "link", "set", "lo", "up", NULL);
}

static int make_node(ucftrun_netns_t *ns, int k, char *err, size_t errlen)
{
    char name[64], port[16], addr[32];

    if (add_ns(ns, k, &ns->node_fd[k], err, errlen) != 0)
        return -1;
    name_of(ns, k, name, sizeof(name));
    snprintf(port, sizeof(port), "v%d", k);
    ucftrun_netns_addr(k, addr, sizeof(addr));
    strcat(addr, "/24");
    if (runv(ns->hub_fd, err, errlen, "ip", "link", "add", port, "type", "veth",
             "peer", "name", "eth0", "netns", name, NULL) != 0 ||
        runv(ns->hub_fd, err, errlen, "ip", "link", "set", port, "master",
             "br0", "up", NULL) != 0 ||
        runv(ns->node_fd[k], err, errlen, "ip", "addr", "add", addr, "dev",
             "eth0", NULL) != 0 ||
        runv(ns->node_fd[k], err, errlen, "ip", "link", "set", "eth0", "up",
             NULL) != 0 ||
        runv(ns->node_fd[k], err, errlen, "nft", nft_setup, NULL) != 0 ||
        runv(ns->node_fd[k], err, errlen, "sysctl", "-q", "-w",
             "net.ipv4.tcp_syn_retries=" NETNS_SYN_RETRIES, NULL) != 0)
        return -1;
    return 0;
}

int ucftrun_netns_create(ucftrun_netns_t *ns, int nnodes, char *err,
                         size_t errlen)
{
    memset(ns, 0, sizeof(*ns));
    ns->hub_fd = ns->root_fd = -1;
    if (nnodes < 1 || nnodes > UCFTRUN_NETNS_MAX_NODES) {
        snprintf(err, errlen, "--netns: %d nodes (1 to %d)", nnodes,
                 UCFTRUN_NETNS_MAX_NODES);
        return -1;
    }
    if (ucftrun_netns_check_caps(err, errlen) != 0)
        return -1;
    ns->nnodes = nnodes;
    snprintf(ns->prefix, sizeof(ns->prefix), "ucft%d", (int)getpid());
    ns->node_fd = malloc((size_t)nnodes * sizeof(*ns->node_fd));
    ns->relay_pid = calloc((size_t)nnodes, sizeof(*ns->relay_pid));
    if (ns->node_fd == NULL || ns->relay_pid == NULL) {
        free(ns->node_fd);
        free(ns->relay_pid);
        ns->node_fd = NULL;
        ns->relay_pid = NULL;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < nnodes; k++)
        ns->node_fd[k] = -1;
    ns->root_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (add_ns(ns, -1, &ns->hub_fd, err, errlen) != 0 ||
        runv(ns->hub_fd, err, errlen, "ip", "link", "add", "br0", "type",
             "bridge", NULL) != 0 ||
        runv(ns->hub_fd, err, errlen, "ip", "addr", "add",
             UCFTRUN_NETNS_SUBNET ".254/24", "dev", "br0", NULL) != 0 ||
        runv(ns->hub_fd, err, errlen, "ip", "link", "set", "br0", "up", NULL) !=
            0)
        goto err_destroy;
    for (int k = 0; k < nnodes; k++)
        if (make_node(ns, k, err, errlen) != 0)
            goto err_destroy;
    return 0;

err_destroy:
    ucftrun_netns_destroy(ns);
    return -1;
}

int ucftrun_netns_enter_hub(ucftrun_netns_t *ns, char *err, size_t errlen)
{
    if (setns(ns->hub_fd, CLONE_NEWNET) != 0) {
        snprintf(err, errlen, "setns into the hub: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static int link_set(ucftrun_netns_t *ns, int node, const char *state)
{
    char port[16], err[256];

    if (node < 0 || node >= ns->nnodes)
        return -1;
    snprintf(port, sizeof(port), "v%d", node);
    if (runv(ns->hub_fd, err, sizeof(err), "ip", "link", "set", port, state,
             NULL) != 0) {
        fprintf(stderr, "ucftrun: --netns: %s\n", err);
        return -1;
    }
    return 0;
}

int ucftrun_netns_cut(ucftrun_netns_t *ns, int node)
{
    return link_set(ns, node, "down");
}

/* Node k's blocked set becomes exactly the nodes in `mask` (partitions
 * have at most 64 nodes). */
static int set_blocked(ucftrun_netns_t *ns, int k, uint64_t mask)
{
    char cmd[4096], addr[32], err[256];
    size_t off;

    off = (size_t)snprintf(cmd, sizeof(cmd), "flush set inet ucft blocked");
    for (int j = 0; j < ns->nnodes && j < 64 && off < sizeof(cmd) - 64; j++) {
        if (!(mask >> j & 1))
            continue;
        ucftrun_netns_addr(j, addr, sizeof(addr));
        off += (size_t)snprintf(cmd + off, sizeof(cmd) - off,
                                "; add element inet ucft blocked { %s }", addr);
    }
    if (runv(ns->node_fd[k], err, sizeof(err), "nft", cmd, NULL) != 0) {
        fprintf(stderr, "ucftrun: --netns: %s\n", err);
        return -1;
    }
    return 0;
}

int ucftrun_netns_heal(ucftrun_netns_t *ns, int node)
{
    int rc = link_set(ns, node, "up");
    /* Partition rules naming it, on both sides. */
    if (set_blocked(ns, node, 0) != 0)
        rc = -1;
    return rc;
}

int ucftrun_netns_partition(ucftrun_netns_t *ns, uint64_t side)
{
    uint64_t all = ns->nnodes >= 64 ? ~0ull : (1ull << ns->nnodes) - 1;
    int rc = 0;

    for (int k = 0; k < ns->nnodes && k < 64; k++) {
        uint64_t other = (side >> k & 1) ? all & ~side : side & all;
        if (set_blocked(ns, k, other) != 0)
            rc = -1;
    }
    return rc;
}

int ucftrun_netns_loss(ucftrun_netns_t *ns, int node, int percent)
{
    char cmd[512], err[256];

    if (node < 0 || node >= ns->nnodes || percent < 0 || percent > 100)
        return -1;
    snprintf(cmd, sizeof(cmd),
             "add rule inet ucft in iifname != \"lo\" numgen random mod 100 "
             "< %d drop; add rule inet ucft out oifname \"eth0\" numgen "
             "random mod 100 < %d drop",
             percent, percent);
    if (runv(ns->node_fd[node], err, sizeof(err), "nft", cmd, NULL) != 0) {
        fprintf(stderr, "ucftrun: --netns: %s\n", err);
        return -1;
    }
    return 0;
}

/* Node k's incoming IP packets go to its relay's TUN (relay.h), which
 * gives them back to the kernel later; its reverse-path filter must then
 * accept packets from eth0's subnet arriving on the TUN. */
int ucftrun_netns_delay(ucftrun_netns_t *ns, int node, uint64_t delay_ns,
                        uint64_t jitter_ns)
{
    char err[256];

    if (node < 0 || node >= ns->nnodes || ns->relay_pid[node] > 0)
        return -1;
    if (ucftrun_relay_start(ns->node_fd[node], delay_ns, jitter_ns,
                            (uint64_t)getpid() * 1000 + (uint64_t)node,
                            &ns->relay_pid[node], err, sizeof(err)) != 0 ||
        runv(ns->node_fd[node], err, sizeof(err), "sysctl", "-q", "-w",
             "net.ipv4.conf.all.rp_filter=0",
             "net.ipv4.conf." UCFTRUN_RELAY_DEV ".rp_filter=0", NULL) != 0 ||
        runv(ns->node_fd[node], err, sizeof(err), "tc", "qdisc", "add", "dev",
             "eth0", "ingress", NULL) != 0 ||
        runv(ns->node_fd[node], err, sizeof(err), "tc", "filter", "add", "dev",
             "eth0", "parent", "ffff:", "protocol", "ip", "u32", "match", "u32",
             "0", "0", "action", "mirred", "egress", "redirect", "dev",
             UCFTRUN_RELAY_DEV, NULL) != 0) {
        fprintf(stderr, "ucftrun: --netns: node %d: %s\n", node, err);
        return -1;
    }
    return 0;
}

void ucftrun_netns_stop_relays(ucftrun_netns_t *ns)
{
    for (int k = 0; ns->relay_pid != NULL && k < ns->nnodes; k++) {
        ucftrun_relay_stop(ns->relay_pid[k]);
        ns->relay_pid[k] = 0;
    }
}

void ucftrun_netns_destroy(ucftrun_netns_t *ns)
{
    char name[64], err[256];

    if (ns->node_fd == NULL)
        return; /* never created (or destroyed already) */
    ucftrun_netns_stop_relays(ns);
    for (int k = 0; k < ns->made; k++) {
        if (ns->node_fd != NULL && ns->node_fd[k] >= 0)
            close(ns->node_fd[k]);
        name_of(ns, k, name, sizeof(name));
        if (runv(-1, err, sizeof(err), "ip", "netns", "del", name, NULL) != 0)
            fprintf(stderr, "ucftrun: --netns: %s\n", err);
    }
    if (ns->made_hub) {
        if (ns->hub_fd >= 0)
            close(ns->hub_fd);
        name_of(ns, -1, name, sizeof(name));
        if (runv(-1, err, sizeof(err), "ip", "netns", "del", name, NULL) != 0)
            fprintf(stderr, "ucftrun: --netns: %s\n", err);
    }
    if (ns->root_fd >= 0)
        close(ns->root_fd);
    free(ns->node_fd);
    free(ns->relay_pid);
    ns->node_fd = NULL;
    ns->relay_pid = NULL;
    ns->made = ns->made_hub = 0;
    ns->hub_fd = ns->root_fd = -1;
}
