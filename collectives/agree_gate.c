/*
 * The agreement under the majority gate (coll_args_t.gate, UCFT_QUORUM;
 * docs/comms.md, "Agreement under a partition").
 *
 * Without it, a partition lets each side's coordinator decide on its own:
 * each side declares the other failed, so each decides F = the other side,
 * and a shrink would make two communicators, one per side, that both go
 * on. The gate delivers a decision only once a second agreement (the
 * confirmation: the same algorithm, kinds 24..31, same sequence number)
 * shows that the ranks that contributed to it
 *  - all hold the same decision (its 64-bit hash h: the AND of h and the
 *    AND of ~h are complements exactly when every contribution was h), and
 *  - are a majority of the communicator: more than half of its n ranks, or
 *    exactly half with rank 0 among them (the tie rule of
 *    runtime/quorum.h, on the communicator's membership as made).
 * Else the agreement ends with UCFT_ERR_PROC_FAILED, logged.
 *
 * Why at most one decision is ever delivered: a rank decides once per
 * agreement and contributes its decision's hash once to the confirmation,
 * and delivers only when the confirmation's common hash is its own; two
 * sets of contributors that are each a majority of the same n ranks (or
 * halves holding rank 0) share a rank, so two delivered decisions would
 * have one rank holding both. Every rank of one side gets the same
 * confirmation outcome (it is an agreement), so a side delivers all or
 * none. Liveness: without a partition every live rank holds the one
 * decision and contributes, so the decision is delivered while a
 * majority of the communicator lives (the price: a communicator that
 * loses half its ranks or more at once, rank 0 among them in a tie, can
 * no longer agree, shrink included). The failure-free cost is a second
 * recursive-doubling exchange of 24 bytes.
 */
#include "agree_impl.h"
#include "runtime/base/fnv.h"

#include <string.h>

/* FNV-1a over the decision: value words, error bit, F (nothing when F is
 * empty: coll_agree_failed is NULL then at every rank alike). */
static uint64_t decision_hash(const agree_t *s)
{
    uint8_t err = (uint8_t)s->hdr->err;
    const uint8_t *f = coll_agree_failed(s);
    uint64_t h =
        ucft_fnv1a(UCFT_FNV_BASIS, s->val, s->words * sizeof(uint32_t));
    h = ucft_fnv1a(h, &err, 1);
    return f != NULL ? ucft_fnv1a(h, f, coll_agree_bm_bytes(s->n)) : h;
}

static void verdict(agree_t *s)
{
    const agree_t *c = s->conf;
    if (s->done || !c->done)
        return;
    if (c->status != UCFT_OK) {
        ag_finish(s, c->status);
        return;
    }
    const uint32_t *v = c->val, *mine = c->orig; /* its own contribution */
    /* Every contributor holds one decision, and it is this rank's: a
     * rank may take a confirmation decided without it (its coordinator
     * adopted another's), which then vouches for another decision. */
    int same = (v[0] | v[2]) == UINT32_MAX && (v[1] | v[3]) == UINT32_MAX &&
               v[0] == mine[0] && v[1] == mine[1];
    const uint8_t *f = coll_agree_failed(c);
    int k = s->n - (int)c->hdr->nfailed;
    int tie = f == NULL || !ag_bm_get(f, 0);
    if (same && (2 * k > s->n || (2 * k == s->n && tie))) {
        ag_finish(s, UCFT_OK);
        return;
    }
    ucft_warn(s->tp->log,
              "agreement %u: %s (%d of %d ranks; UCFT_QUORUM): "
              "UCFT_ERR_PROC_FAILED",
              (unsigned)s->args->seq,
              same ? "the ranks holding its decision are no majority of the "
                     "communicator"
                   : "ranks hold different decisions",
              k, s->n);
    ag_finish(s, UCFT_ERR_PROC_FAILED);
}

static void confirm_done(void *arg, int rank, ucft_status_t st)
{
    (void)rank;
    (void)st;
    verdict(arg);
}

void ag_confirm_start(agree_t *s)
{
    agree_pair_t *pair = (agree_pair_t *)s; /* the agreement is its first */
    if (s->conf != NULL || s->done)
        return;
    pair->cargs = *s->args;
    pair->cargs.len = coll_agree_len(AG_CONFIRM_WORDS);
    pair->cargs.gate = NULL;
    pair->cargs.done_cb = confirm_done;
    pair->cargs.done_arg = s;
    pair->cargs.ready_cb = NULL;
    agree_t *c = &pair->c;
    ucft_status_t st = ag_era_init(c, s->tp, &pair->cargs, pair->cbuf);
    if (st != UCFT_OK) {
        ag_finish(s, st);
        return;
    }
    c->kb = AG_CONFIRM_KB;
    s->conf = c;
    uint64_t h = decision_hash(s);
    c->val[0] = (uint32_t)h;
    c->val[1] = (uint32_t)(h >> 32);
    c->val[2] = ~c->val[0];
    c->val[3] = ~c->val[1];
    ag_era_start(c);
    /* The failures this rank knows are news to it too (as the driver
     * tells a new instance after its start), also when it decided inside
     * its start: it runs on and may be queried by a later coordinator. */
    for (int r = 0; s->lfail != NULL && r < s->n; r++)
        if (ag_bm_get(s->lfail, r))
            ag_era_failure(c, r);
    verdict(s); /* done inside its start: no callback came */
}
