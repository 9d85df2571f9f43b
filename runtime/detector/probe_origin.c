/* Indirect probes, the origin's side: the run of silent ranks that a
 * suspicion probes together, transport-evidence suspicions, rounds and
 * confirmations (probe.h; the helper and suspect roles: probe.c). */
#include "runtime/detector/probe.h"

#include <string.h>

void pb__reset(pb_t *pb)
{
    pb->nrun = 0;
    pb->boundary = -1;
    pb->suspect = -1;
}

/* Candidate helper c (0 .. 2 levels - 1) for probing `suspect`: this
 * rank's binomial link +-2^(c/2), the live neighbour at distance 1; -1
 * when it is no use. */
static int pb_candidate(const pb_t *pb, unsigned c, int suspect)
{
    const int n = pb->mb->size;
    long dist = 1L << (c / 2);
    int dir = (c & 1) ? -1 : +1;
    int t;

    if (dist == 1)
        t = mb_live_step(pb->mb, pb->me, dir);
    else
        t = (int)(((long)pb->me + dir * (dist % n) + n) % n);
    if (t < 0 || t == pb->me || t == suspect || mb_is_failed(pb->mb, t))
        return -1;
    return t;
}

static unsigned pb_ncandidates(const pb_t *pb)
{
    unsigned levels = 0;
    for (long d = 1; d <= pb->mb->size / 2; d *= 2)
        levels++;
    return 2 * levels;
}

/* Asks the entry's next `helpers` candidates (distinct) to probe it;
 * returns how many were asked. */
static int pb_ask(pb_t *pb, pb_entry_t *e, uint64_t now)
{
    unsigned nc = pb_ncandidates(pb);
    int asked[PB_MAX_HELPERS], na = 0;
    uint64_t silent = now > e->since ? (now - e->since) / 1000000 : 0;
    uint32_t silent_ms = silent > UINT32_MAX ? UINT32_MAX : (uint32_t)silent;

    for (unsigned tried = 0; tried < nc && na < pb->params.helpers; tried++) {
        int h = pb_candidate(pb, e->cursor++ % nc, e->rank);
        int dup = h < 0;
        for (int i = 0; i < na && !dup; i++)
            dup = asked[i] == h;
        if (dup)
            continue;
        asked[na++] = h;
        if (pb__post(pb, h, CTRL_PROBE_REQ, pb->me, e->rank, e->nonce,
                     silent_ms))
            pb->stats.requests++;
    }
    return na;
}

static int pb_in_run(const pb_t *pb, int rank)
{
    for (int i = 0; i < pb->nrun; i++)
        if (pb->run[i].rank == rank)
            return i;
    return -1;
}

static pb_entry_t *pb_ev_find(pb_t *pb, int rank)
{
    for (int i = 0; i < PB_MAX_EVIDENCE; i++)
        if (pb->ev[i].rank == rank && rank >= 0)
            return &pb->ev[i];
    return NULL;
}

static int pb_pending(const pb_t *pb)
{
    if (pb->nrun > 0)
        return 1;
    for (int i = 0; i < PB_MAX_EVIDENCE; i++)
        if (pb->ev[i].rank >= 0)
            return 1;
    return 0;
}

/* The timer for the next round or the earliest confirmation. */
static void pb_arm(pb_t *pb)
{
    if (!pb->recv.on || !pb_pending(pb)) {
        if (pb->timer_on)
            tp_timer_stop(pb->tp, &pb->timer);
        pb->timer_on = 0;
        return;
    }
    uint64_t next = pb->params.round_ns > 0 ? pb->next_round : UINT64_MAX;
    if (pb->nrun > 0 && pb->run[0].deadline < next)
        next = pb->run[0].deadline;
    for (int i = 0; i < PB_MAX_EVIDENCE; i++)
        if (pb->ev[i].rank >= 0 && pb->ev[i].deadline < next)
            next = pb->ev[i].deadline;
    pb->timer_on = tp_timer_start(pb->tp, &pb->timer, next) == UCFT_OK;
}

/* Rounds go on every round_ns while anything is pending; a new suspicion
 * asks at once and keeps the cadence. */
static void pb_keep_cadence(pb_t *pb, uint64_t now)
{
    if (pb->next_round <= now || !pb->timer_on)
        pb->next_round = now + pb->params.round_ns;
}

static pb_entry_t pb_entry(pb_t *pb, int rank, uint64_t since, uint64_t now,
                           uint64_t window)
{
    return (pb_entry_t){.rank = rank,
                        .nonce = ++pb->nonces,
                        .since = since,
                        .added = now,
                        .deadline = now + window};
}

/* The window of a rank probed beyond the head: asked in two rounds, and
 * half a round for the answers to the second (bounded by the suspicion's
 * window). The ranks added when the run widens are asked in the same
 * rounds as the rank beyond them whose answer is the proof (pb_confirm),
 * so a live one had the same time to answer; and with the default window
 * (2.5 rounds) the ranks added one round after the head end with it. */
static uint64_t pb_companion_window(const pb_t *pb)
{
    uint64_t w = pb->params.round_ns * 3 / 2;
    return w > 0 && w < pb->params.window_ns ? w : pb->params.window_ns;
}

/* Adds up to `want` live predecessors beyond the run's last entry. A rank
 * this rank's kernel can see ends the run: it is probed (its answer is
 * the proof that answers come through) but never declared here. */
static void pb_widen(pb_t *pb, uint64_t now, int want)
{
    for (int k = 0; k < want && pb->nrun < pb->params.run; k++) {
        const pb_entry_t *last = &pb->run[pb->nrun - 1];
        if (last->viewed)
            return;
        int r = mb_live_step(pb->mb, last->rank, -1);
        if (r < 0 || r == pb->me || pb_in_run(pb, r) >= 0)
            return;
        pb_entry_t *e = &pb->run[pb->nrun++];
        *e = pb_entry(pb, r, pb->run[0].since, now, pb_companion_window(pb));
        e->viewed = pb->ops.vouch_cb != NULL &&
                    pb->ops.vouch_cb(pb->ops.arg, r, 0) != HB_VOUCH_NONE;
        pb->stats.widened++;
    }
}

/* One round: when the run's farthest rank was silent for a whole round
 * too, it widens to its full length at once (the ranks beyond the first
 * that answers are dropped again: the cost is bounded by the silent run,
 * paid once), so that every silent rank's two rounds end within a round
 * of the head's window; then every unanswered entry is asked again. */
static void pb_round(pb_t *pb, uint64_t now)
{
    pb->stats.rounds++;
    if (pb->nrun > 0) {
        const pb_entry_t *last = &pb->run[pb->nrun - 1];
        if (pb->boundary < 0 && !last->answered &&
            now - last->added >= pb->params.round_ns)
            pb_widen(pb, now, pb->params.run);
        for (int i = 0; i < pb->nrun; i++)
            if (!pb->run[i].answered)
                pb_ask(pb, &pb->run[i], now);
    }
    for (int i = 0; i < PB_MAX_EVIDENCE; i++)
        if (pb->ev[i].rank >= 0)
            pb_ask(pb, &pb->ev[i], now);
    pb->next_round = now + pb->params.round_ns;
}

/* The head's window ended unanswered. The ranks between it and the
 * boundary (the first that answered) whose own windows ended too are
 * declared with it; those whose windows go on stay, the first of them
 * the new head (the owner presumes it: pb_suspect finds it pending).
 * Without a boundary nothing but the head: no answer came at all, which
 * this rank's own deafness or starvation would also explain. */
static void pb_confirm(pb_t *pb, uint64_t now)
{
    int head = pb->run[0].rank, list[PB_MAX_RUN], n = 0, j = 1;
    const int b = pb->boundary;

    if (b > 0)
        for (; j < b; j++) {
            const pb_entry_t *e = &pb->run[j];
            if (e->deadline > now || e->viewed)
                break;
            list[n++] = e->rank;
        }
    int cont = b > 0 && j < b && !pb->run[j].viewed;
    pb->alive = b > 0 && j == b ? pb->run[b].rank : -1;
    pb->stats.confirmed++;
    pb->stats.with_run += (uint64_t)n;
    if (cont) {
        memmove(&pb->run[0], &pb->run[j],
                (size_t)(b - j + 1) * sizeof(pb->run[0]));
        pb->nrun = b - j + 1;
        pb->boundary = b - j;
        pb->suspect = pb->run[0].rank;
        pb->nonce = pb->run[0].nonce;
    } else {
        pb__reset(pb);
    }
    if (!pb->ops.confirmed_cb(pb->ops.arg, head, list, n) && cont)
        pb__reset(pb);
}

static void pb_confirm_evidence(pb_t *pb, uint64_t now)
{
    for (int i = 0; i < PB_MAX_EVIDENCE; i++) {
        pb_entry_t *e = &pb->ev[i];
        if (e->rank < 0 || e->deadline > now)
            continue;
        int r = e->rank;
        uint64_t since = e->since;
        e->rank = -1;
        pb->stats.ev_confirmed++;
        if (pb->ops.evidence_cb != NULL)
            pb->ops.evidence_cb(pb->ops.arg, r, 1, since);
        if (!pb->recv.on)
            return;
    }
}

void pb__timer_cb(ucft_timer_t *t)
{
    pb_t *pb = t->arg;
    uint64_t now = tp_now(pb->tp);

    pb->timer_on = 0;
    if (!pb->recv.on)
        return;
    pb_confirm_evidence(pb, now);
    if (pb->recv.on && pb->nrun > 0 && now >= pb->run[0].deadline)
        pb_confirm(pb, now);
    if (!pb->recv.on)
        return;
    if (pb_pending(pb) && pb->params.round_ns > 0 && now >= pb->next_round)
        pb_round(pb, now);
    pb_arm(pb);
}

void pb_suspect(pb_t *pb, int suspect, uint64_t since, uint64_t window_ns)
{
    uint64_t now = tp_now(pb->tp);

    if (pb->nrun > 0 && pb->run[0].rank == suspect)
        return; /* the head of a run that goes on */
    pb__reset(pb);
    pb->run[0] = pb_entry(pb, suspect, since, now,
                          window_ns > 0 ? window_ns : pb->params.window_ns);
    pb->nrun = 1;
    pb->suspect = suspect;
    pb->nonce = pb->run[0].nonce;
    pb->stats.suspicions++;
    pb->stats.rounds++;
    if (pb->params.run > 1)
        pb_widen(pb, now, 1);
    /* Nobody else to ask (every helper failed, or N <= 3): the window
     * still passes, for the rank's own heartbeat; a later round may find
     * a helper. Confirming at once would declare a rank before its
     * deadline, or a presumed one before it could answer. */
    if (pb_ask(pb, &pb->run[0], now) == 0)
        pb->stats.alone++;
    for (int i = 1; i < pb->nrun; i++)
        pb_ask(pb, &pb->run[i], now);
    pb_keep_cadence(pb, now);
    pb_arm(pb);
}

int pb_evidence(pb_t *pb, int rank)
{
    uint64_t now = tp_now(pb->tp);

    if (!pb_enabled(pb) || !pb->recv.on || rank < 0 || rank == pb->me ||
        rank >= pb->mb->size || mb_is_failed(pb->mb, rank))
        return 0;
    if (pb_in_run(pb, rank) >= 0 || pb_ev_find(pb, rank) != NULL)
        return 1;
    pb_entry_t *e = NULL;
    for (int i = 0; i < PB_MAX_EVIDENCE && e == NULL; i++)
        if (pb->ev[i].rank < 0)
            e = &pb->ev[i];
    if (e == NULL) {
        pb->stats.ev_full++;
        return 0;
    }
    *e = pb_entry(pb, rank, now, now, pb->params.window_ns);
    pb->stats.evidence++;
    pb_ask(pb, e, now);
    pb_keep_cadence(pb, now);
    pb_arm(pb);
    return 1;
}

void pb_cancel(pb_t *pb, int rank)
{
    if (rank < 0)
        return;
    int i = pb_in_run(pb, rank);
    if (i == 0) {
        pb__reset(pb);
    } else if (i > 0) {
        memmove(&pb->run[i], &pb->run[i + 1],
                (size_t)(pb->nrun - i - 1) * sizeof(pb->run[0]));
        pb->nrun--;
        if (pb->boundary == i) { /* the rank beyond the run is gone */
            pb->boundary = -1;
            pb->nrun = i;
        } else if (pb->boundary > i) {
            pb->boundary--;
        }
    }
    pb_entry_t *e = pb_ev_find(pb, rank);
    if (e != NULL)
        e->rank = -1;
    pb_arm(pb);
}

int pb_answered(const pb_t *pb, int rank)
{
    int i = pb_in_run(pb, rank);
    return i >= 0 && pb->run[i].answered;
}

/* A helper relayed an answer of `suspect` carrying `nonce`. */
void pb__relay(pb_t *pb, int helper, int suspect, uint32_t nonce)
{
    int i = pb_in_run(pb, suspect);
    if (i >= 0 && pb->run[i].nonce == nonce && !pb->run[i].answered) {
        if (i == 0) { /* the head is alive: the rest is its business */
            pb__reset(pb);
            pb->stats.refuted++;
            pb_arm(pb);
            pb->ops.refuted_cb(pb->ops.arg, suspect, helper);
            return;
        }
        pb->run[i].answered = 1;
        if (pb->boundary < 0 || i < pb->boundary) {
            pb->boundary = i;
            pb->nrun = i + 1; /* beyond a live rank: its own observer's */
            pb->stats.boundary++;
        }
        return;
    }
    pb_entry_t *e = pb_ev_find(pb, suspect);
    if (e != NULL && e->nonce == nonce) {
        uint64_t since = e->since;
        e->rank = -1;
        pb->stats.ev_refuted++;
        pb_arm(pb);
        if (pb->ops.evidence_cb != NULL)
            pb->ops.evidence_cb(pb->ops.arg, suspect, 0, since);
        return;
    }
    pb->stats.stale++;
}
