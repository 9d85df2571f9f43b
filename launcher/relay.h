/*
 * Delay on a pretend node's link (--netem K:delay=D[,jitter=J]) without
 * sch_netem, which this kind of kernel lacks (docs/launcher.md, "Delay").
 *
 * A relay process per delayed node, in that node's network namespace:
 * it makes a TUN device, "dly0", and the launcher then redirects every IP
 * packet arriving on the node's eth0 to it (tc ingress qdisc, u32 match
 * all, mirred egress redirect). The relay reads each packet from the
 * TUN, holds it until arrival + D + a uniform draw in [-J, J] (never
 * before the packet ahead of it: no reordering), and writes it back into
 * the TUN, where the kernel receives it as if it had come in on dly0 and
 * delivers it locally (reverse-path filtering is turned off in the node's
 * namespace for that). So node K's incoming packets are delayed: between
 * two delayed nodes a round trip costs 2 D. ARP is not delayed.
 *
 * The relay runs at SCHED_FIFO priority 1 (else nice -20), so that the
 * ranks' load does not lengthen the delay. It holds at most
 * UCFTRUN_RELAY_SLOTS packets (more are dropped,
 * counted on its stderr at exit); it dies with the launcher
 * (PR_SET_PDEATHSIG) and is killed by ucftrun_relay_stop.
 */
#ifndef UCFTRUN_RELAY_H
#define UCFTRUN_RELAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UCFTRUN_RELAY_SLOTS 4096
#define UCFTRUN_RELAY_DEV   "dly0"

/* Forks the relay into namespace `nsfd` and waits until its TUN device is
 * up. 0 and *pid, or -1 with the reason in err. */
int ucftrun_relay_start(int nsfd, uint64_t delay_ns, uint64_t jitter_ns,
                        uint64_t seed, pid_t *pid, char *err, size_t errlen);

/* SIGKILLs and reaps the relay (pid <= 0: nothing). */
void ucftrun_relay_stop(pid_t pid);

/* The relay's release time for a packet read at `now`, after the one
 * released at `prev`: now + delay + a draw in [-jitter, jitter] (the
 * draw is (r mod (2 jitter + 1)) - jitter), never before prev, never
 * before now. Pure: for tests. */
uint64_t ucftrun_relay_release(uint64_t now, uint64_t prev, uint64_t delay_ns,
                               uint64_t jitter_ns, uint64_t r);

#endif
