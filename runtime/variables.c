/* The context's UCFT_* variables (runtime/variables.h); the communicator
 * layer's are comm/variables.c's. */
#include "runtime/variables.h"

#include <stddef.h>

static const char *const log_levels[] = {"none",  "error", "warn", "info",
                                         "debug", "trace", NULL};
static const char *const wait_modes[] = {"spin", "sleep", "hybrid", NULL};

#define F(field) offsetof(rt_config_t, field)

static const ucft_config_field_t rt_fields[] = {
    {"LOG_LEVEL", "warn", "log level: none|error|warn|info|debug|trace",
     ucft__config_parse_enum, F(log_level), log_levels},
    {"WAIT", "hybrid",
     "how blocking calls wait: spin (busy poll), sleep (on the event fd at "
     "once) or hybrid (busy poll for UCFT_SPIN_TIME, then poll and yield "
     "the core for UCFT_YIELD_TIME, then sleep)",
     ucft__config_parse_enum, F(wait_mode), wait_modes},
    {"SPIN_TIME", "0",
     "hybrid wait: how long to busy-poll without yielding the core first "
     "(only worth it with a core per rank: a rank that spins holds a core "
     "that another rank may need)",
     ucft__config_parse_time, F(spin_ns), NULL},
    {"YIELD_TIME", "2ms",
     "hybrid wait: then how long to keep polling, yielding the core "
     "(sched_yield) whenever a poll finds nothing, before sleeping on the "
     "event fd (a wakeup costs tens of microseconds on a busy node)",
     ucft__config_parse_time, F(yield_ns), NULL},
    {"MATE_SPIN_TIME", "20us",
     "hybrid wait, for a rank bound to a core that exactly one other rank "
     "of the job shares: while the collective it waits for needs messages "
     "only from ranks on other cores, poll without yielding for up to this "
     "long after the last progress (a yield would only run the other rank "
     "of the core, which cannot send them); 0: always yield",
     ucft__config_parse_time, F(mate_spin_ns), NULL},
    {"POLL_TIMEOUT", "100ms",
     "longest single sleep on the event fd (a bound, so that a missed wakeup "
     "costs at most this)",
     ucft__config_parse_time, F(poll_ns), NULL},
    {"SLICE", "100us",
     "time slice asked for the thread that calls ucft_init and the threads "
     "it starts later (Linux 6.12+, older kernels ignore it; given back at "
     "ucft_finalize; 0: leave the thread alone). On an oversubscribed node "
     "a rank woken by a message or a failure notice then runs within about "
     "0.1 ms instead of after another task's whole slice (1.5 ms or more)",
     ucft__config_parse_time, F(slice_ns), NULL},
    {"UCX_KEEPALIVE", "1s",
     "UCX keepalive interval: how soon UCX notices a dead peer on shared "
     "memory (ignored when UCX_KEEPALIVE_INTERVAL is set; 0 = UCX default)",
     ucft__config_parse_time, F(keepalive_ns), NULL},
    {"SHM_PROBE", "500ms",
     "after a failure, each rank checks that its shared-memory receive "
     "FIFOs still deliver (a process killed inside a send can block one "
     "for good, docs/transport.md): a probe from a private worker that has "
     "not arrived after this long means the rank can no longer hear its "
     "node, and it stops (fail-stop, logged), unless UCFT_SHM_MEND mends "
     "the FIFO; 0: no check",
     ucft__config_parse_time, F(shm_probe_ns), NULL},
    {"SHM_MEND", "y",
     "when the self-probe finds a FIFO blocked by a sender that died "
     "between claiming a slot and writing it, write that slot with a copy "
     "of the probe so that the messages behind it are read (logged; UCX "
     "1.13's FIFO layout, docs/transport.md); n: stop the rank instead",
     ucft__config_parse_bool, F(shm_mend), NULL},
    {"INIT_TIMEOUT", "60s", "bound on the wire-up exchange in ucft_init",
     ucft__config_parse_time, F(init_timeout_ns), NULL},
    {"FINALIZE_TIMEOUT", "30s",
     "bound on the flush and synchronisation in ucft_finalize",
     ucft__config_parse_time, F(finalize_timeout_ns), NULL},
    {"FINALIZE_FAILED_TIMEOUT", "3s",
     "bound on the synchronisation in ucft_finalize once failures are known "
     "(some PMIx servers never end a fence that includes a dead rank)",
     ucft__config_parse_time, F(finalize_failed_ns), NULL},
    {"DETECTOR", "y",
     "heartbeat failure detector: every rank is watched by its ring "
     "successor and every failure is broadcast to every survivor",
     ucft__config_parse_bool, F(detector), NULL},
    {"DETECTOR_THREAD", "y",
     "run heartbeats on a thread with its own UCX worker, so that a rank "
     "that computes for minutes without calling ucft is not suspected (n: "
     "heartbeats ride on ucft_context_progress)",
     ucft__config_parse_bool, F(detector_thread), NULL},
    {"DETECTOR_FASTPATH", "y",
     "also declare a rank failed at once on a launcher death event, the "
     "kernel's word or a UCX endpoint error about a rank of this node; an "
     "endpoint error about another rank is confirmed by the indirect "
     "probes first (n: only heartbeats decide; for testing)",
     ucft__config_parse_bool, F(detector_fastpath), NULL},
    {"DETECTOR_PIDFD", "y",
     "fast path: the heartbeat thread watches the processes of the ranks on "
     "this node, through a robust mutex each holds (io_uring futex waits, "
     "Linux 6.7+: woken as the process starts dying, ~0.1 ms) and through "
     "pidfds (Linux 5.3+: once it is gone), before any launcher event "
     "(needs UCFT_DETECTOR_FASTPATH and the heartbeat thread)",
     ucft__config_parse_bool, F(detector_pidfd), NULL},
    {"DETECTOR_EVENTS", "y",
     "with the fast path: a launcher's death event declares its rank at "
     "once (n: such events are ignored, so that the kernel, transport and "
     "heartbeat paths can be measured alone)",
     ucft__config_parse_bool, F(detector_events), NULL},
    {"HB_PERIOD", "20ms",
     "heartbeat period (eta); a rank sends one heartbeat per period to its "
     "observer",
     ucft__config_parse_time, F(hb_period_ns), NULL},
    {"HB_TIMEOUT", "100ms",
     "heartbeat timeout (delta): silence after which the observer declares "
     "the rank failed; must exceed the period and the scheduling jitter of "
     "a loaded node",
     ucft__config_parse_time, F(hb_timeout_ns), NULL},
    {"HB_PROBES", "3",
     "indirect probes: an observer that has not heard a rank (with no "
     "word from the kernel) for UCFT_HB_TIMEOUT - UCFT_HB_CONFIRM asks this "
     "many other ranks per round to reach it, and declares it at the "
     "timeout only when none did; a lossy or slow link then costs no live "
     "rank (0: declare at the timeout; at most 8)",
     ucft__config_parse_uint, F(hb_probes), NULL},
    {"HB_CONFIRM", "0",
     "the window of the indirect probes (UCFT_HB_PROBES), ending at the "
     "timeout, with a new round every UCFT_HB_PERIOD; also the time a "
     "rank gets to answer when it becomes the observed rank after its "
     "successor was declared (0: half of UCFT_HB_TIMEOUT; must be below "
     "it)",
     ucft__config_parse_time, F(hb_confirm_ns), NULL},
    {"HB_RUN", "16",
     "indirect probes: how many consecutive ranks one suspicion probes "
     "together, the silent rank and the ranks before it as far as they are "
     "silent too (a vanished host), so that a host of several ranks is "
     "declared at once (1: the silent rank alone; at most 16)",
     ucft__config_parse_uint, F(hb_run), NULL},
    {"QUORUM", "n",
     "no split brain: a rank whose detector holds alive no strict majority "
     "of the last agreed membership (in a tie: not its lowest rank) fences "
     "itself, as a rank declared failed does (docs/detector.md)",
     ucft__config_parse_bool, F(quorum), NULL},
    {"QUORUM_SETTLE", "0",
     "UCFT_QUORUM: a failure view unchanged this long becomes the agreed "
     "membership the next majority is counted against (0: never; the "
     "membership stays the world until agreement sets it; a value below "
     "the time one partition takes to be detected whole is unsafe)",
     ucft__config_parse_time, F(quorum_settle_ns), NULL},
    {"HB_LOCAL_LIMIT", "5s",
     "a rank on this node whose heartbeats are late but which the kernel "
     "shows alive (runnable, or its heartbeat thread turning) is not "
     "declared before this much silence (UCFT_DETECTOR_PIDFD; a stopped, "
     "dead or stuck rank is declared after UCFT_HB_TIMEOUT as before); "
     "must be at least UCFT_HB_TIMEOUT",
     ucft__config_parse_time, F(hb_local_limit_ns), NULL},
    {"HB_START_GRACE", "1s",
     "no suspicion this soon after the detector starts: ranks finish "
     "start-up at different times on a loaded node",
     ucft__config_parse_time, F(hb_grace_ns), NULL},
    {"HB_NICE", "0",
     "nice value of the heartbeat thread (its own, not the process's; 0: "
     "leave it alone). Below 0 needs CAP_SYS_NICE or RLIMIT_NICE; its "
     "weight slows every collective of an oversubscribed node, which "
     "UCFT_HB_SLICE avoids",
     ucft__config_parse_int, F(hb_nice), NULL},
    {"HB_SLICE", "100us",
     "time slice of the heartbeat thread (Linux 6.12+, older kernels "
     "ignore it; 0: that of the thread that started it, UCFT_SLICE): a "
     "short slice gets the thread scheduled as soon as it wakes on an "
     "oversubscribed node, so that a descheduled heartbeat does not look "
     "like a dead rank",
     ucft__config_parse_time, F(hb_slice_ns), NULL},
    {NULL, NULL, NULL, NULL, 0, NULL},
};

const ucft_config_table_t rt_config_table = {"runtime", rt_fields};
