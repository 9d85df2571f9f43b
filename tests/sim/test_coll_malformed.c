/* Collectives given messages that no correct peer sends (a sender that is
 * no rank of the job, a short or oversized payload, a list longer than its
 * message, a rank outside the job in a failure list, an up-correction
 * from outside the receiver's group, a kind the algorithm does not have,
 * flags of another operation), on the sim transport with the runtime's
 * identity placement map. Each such message is injected ahead of the real
 * traffic; the test asserts that it is dropped (every rank ends with the
 * correct value) or, for a payload of another size, that the receiving
 * rank ends with UCFT_ERR_TRUNCATED instead of using it, and that nobody
 * hangs: the time bound of every run is checked. */
#include "simrun/oracle.h"
#include "collectives/coll_op.h"
#include "collectives/copy_chan.h"
#include "collectives/dtype.h"
#include "collectives/itree.h"
#include "transport/sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MS     1000000ull
#define MAXN   16
#define BCAST  16 /* bytes */
#define K_UP   (COLL_KIND_REDUCE_CORRECTED_FIRST + 0)
#define K_TREE (COLL_KIND_REDUCE_CORRECTED_FIRST + 1)

typedef struct harness {
    sim_world_t *w;
    const coll_op_ops_t *op;
    int n;
    coll_args_t a;
    coll_map_t map;
    int ident[MAXN];
    void *st[MAXN];
    void *cs[MAXN]; /* communicator states (op->comm), or NULL */
    unsigned char *buf[MAXN];
    int done[MAXN];
    ucft_status_t status[MAXN];
    uint8_t dead[MAXN];
    tp_req_t inj[8];
    unsigned ninj;
    unsigned char body[8][256];
} harness_t;

static void done_cb(void *arg, int rank, ucft_status_t st)
{
    harness_t *h = arg;
    h->done[rank] = 1;
    h->status[rank] = st;
}

static void noop_cb(tp_req_t *req)
{
    (void)req;
}

/* n ranks of op/alg; reductions: int32 sums, one counting element per
 * rank (rc_fill), so a value included twice or never shows. */
static void h_setup(harness_t *h, const char *op, const char *alg, int n)
{
    sim_params_t sp;

    memset(h, 0, sizeof(*h));
    h->n = n;
    h->op = coll_op_find(op, alg);
    assert_non_null(h->op);
    sim_params_default(&sp, n);
    sp.notify = SIM_NOTIFY_NONE; /* the test tells of failures */
    assert_int_equal(sim_world_create(&sp, &h->w), UCFT_OK);
    for (int r = 0; r < n; r++)
        h->ident[r] = r;
    h->map = (coll_map_t){.n = n, .rank = h->ident, .pos = h->ident};
    /* Communicator states (the copy channel of corrected-batched): one
     * block, rank r's at r * stride, nothing held (batch 1). */
    size_t css = h->op->comm ? (h->op->comm->size + 15) & ~(size_t)15 : 0;
    unsigned char *csb = css ? calloc((size_t)n, css) : NULL;
    coll_comm_params_t cp = {.map = &h->map, .batch = 1};
    for (int r = 0; css && r < n; r++) {
        h->cs[r] = csb + (size_t)r * css;
        assert_int_equal(
            h->op->comm->init(h->cs[r], sim_world_tp(h->w, r), &cp), UCFT_OK);
    }
    int bc = strcmp(op, "bcast") == 0;
    h->a = (coll_args_t){.root = 0,
                         .len = bc ? BCAST : (size_t)n * 4,
                         .seq = 3,
                         .f = 1,
                         .count = bc ? BCAST : (size_t)n,
                         .dtype = bc ? COLL_DTYPE_UINT8 : COLL_DTYPE_INT32,
                         .redop = COLL_REDOP_SUM,
                         .map = &h->map,
                         .comm_state = h->cs[0],
                         .comm_stride = css,
                         .done_cb = done_cb,
                         .done_arg = h};
    for (int r = 0; r < n; r++) {
        h->st[r] = calloc(1, h->op->state_size);
        h->buf[r] = calloc(h->op->buf_mult ? h->op->buf_mult : 1, h->a.len);
        assert_non_null(h->st[r]);
        assert_non_null(h->buf[r]);
        coll_oracle_of(h->op)->fill(h->buf[r], &h->a, r, n);
        assert_int_equal(
            h->op->init(h->st[r], sim_world_tp(h->w, r), &h->a, h->buf[r]),
            UCFT_OK);
    }
}

/* A crafted message with this tag's sequence field: `from` sends it to
 * `to` with `src` in the tag's source field. */
static void h_inject_seq(harness_t *h, int from, int to, uint32_t src,
                         uint32_t seq, unsigned kind, const void *body,
                         size_t len)
{
    assert_true(h->ninj < 8 && len <= sizeof(h->body[0]));
    unsigned i = h->ninj++;
    memcpy(h->body[i], body, len);
    h->inj[i] = (tp_req_t){.cb = noop_cb, .buffered = 1};
    uint64_t tag = ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, src,
                                 ucft_tag_coll_payload(seq, kind));
    ucft_status_t st =
        tp_send(sim_world_tp(h->w, from), to, tag, h->body[i], len, &h->inj[i]);
    assert_true(st == UCFT_OK || st == UCFT_INPROGRESS);
    sim_world_run(h->w, sim_world_now(h->w) + 1 * MS, UINT64_MAX);
}

/* A crafted message of this instance. */
static void h_inject(harness_t *h, int from, int to, uint32_t src,
                     unsigned kind, const void *body, size_t len)
{
    h_inject_seq(h, from, to, src, h->a.seq, kind, body, len);
}

static void h_start(harness_t *h, int skip)
{
    for (int r = 0; r < h->n; r++) {
        if (r == skip)
            continue;
        ucft_status_t st = h->op->start(h->st[r]);
        if (st != UCFT_INPROGRESS)
            done_cb(h, r, st);
    }
}

static void h_run(harness_t *h)
{
    sim_world_run(h->w, sim_world_now(h->w) + 2000 * MS, UINT64_MAX);
}

/* Rank r is dead: the sim kills it and every other rank is told. */
static void h_kill(harness_t *h, int r)
{
    assert_int_equal(sim_world_kill(h->w, r), UCFT_OK);
    h->dead[r] = 1;
    for (int q = 0; q < h->n; q++) {
        if (!h->dead[q] && h->cs[q] != NULL)
            h->op->comm->on_failure(h->cs[q], r);
        if (!h->dead[q] && h->op->on_failure != NULL)
            h->op->on_failure(h->st[q], r);
    }
}

/* Every live rank except `except` finished OK with a value the
 * operation's own check accepts. */
static void h_assert_correct(harness_t *h, int except)
{
    for (int r = 0; r < h->n; r++) {
        if (h->dead[r] || r == except)
            continue;
        assert_true(h->done[r]);
        assert_int_equal(h->status[r], UCFT_OK);
        assert_true(
            coll_oracle_of(h->op)->check(h->buf[r], &h->a, r, h->n, h->dead));
    }
}

static void h_destroy(harness_t *h)
{
    for (int r = 0; r < h->n; r++)
        h->op->cleanup(h->st[r]);
    for (int r = 0; r < h->n; r++)
        if (h->cs[r] != NULL)
            h->op->comm->cleanup(h->cs[r]);
    sim_world_run(h->w, sim_world_now(h->w) + 10 * MS, UINT64_MAX);
    sim_world_destroy(h->w);
    for (int r = 0; r < h->n; r++)
        if (h->cs[r] != NULL)
            h->op->comm->destroy(h->cs[r]);
    free(h->cs[0]);
    for (int r = 0; r < h->n; r++) {
        if (h->op->destroy != NULL) /* what a dead rank's cleanup kept */
            h->op->destroy(h->st[r]);
        free(h->st[r]);
        free(h->buf[r]);
    }
}

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

/* Runs the set-up job: every injected message is dropped, every rank
 * ends with a correct value. */
static void h_expect_dropped(harness_t *h)
{
    h_start(h, -1);
    h_run(h);
    h_assert_correct(h, -1);
    h_destroy(h);
}

/* Runs the set-up job: the k ranks listed end with UCFT_ERR_TRUNCATED;
 * once they are gone (their callers see the error and leave, and the
 * others are told) every other rank completes with a correct value. */
static void h_expect_mismatch(harness_t *h, const int *ranks, int k)
{
    h_start(h, -1);
    h_run(h);
    for (int i = 0; i < k; i++) {
        assert_true(h->done[ranks[i]]);
        assert_int_equal(h->status[ranks[i]], UCFT_ERR_TRUNCATED);
    }
    for (int i = 0; i < k; i++)
        h_kill(h, ranks[i]);
    h_run(h);
    h_assert_correct(h, -1);
    h_destroy(h);
}

/* A short tree message from the parent, ahead of the real one: the rank
 * does not take it as the data; it ends with UCFT_ERR_TRUNCATED (the size
 * says the ranks disagree), and once it is gone (its caller sees the error
 * and leaves) the others complete with the root's data. */
static void test_bcast_corrected_short(void **state)
{
    harness_t h;
    static const unsigned char three[3] = {9, 9, 9};
    (void)state;
    h_setup(&h, "bcast", "corrected", 8);
    h_inject(&h, 0, 1, 0, 16, three, sizeof(three));
    h_expect_mismatch(&h, (const int[]){1}, 1);
}

/* The same with an oversized message (longer than the receive). */
static void test_bcast_corrected_long(void **state)
{
    harness_t h;
    static unsigned char big[2 * BCAST];
    (void)state;
    h_setup(&h, "bcast", "corrected-opportunistic", 8);
    h_inject(&h, 0, 2, 0, 16, big, sizeof(big));
    h_expect_mismatch(&h, (const int[]){2}, 1);
}

/* After a failure the broadcast receives from any source: a sender that
 * is no rank of the job, and kind 19 (inside the receive's mask, not a
 * kind of the broadcast), are dropped. */
static void test_bcast_corrected_bad_source_and_kind(void **state)
{
    harness_t h;
    static unsigned char data[BCAST];
    (void)state;
    h_setup(&h, "bcast", "corrected", 8);
    h_start(&h, 5);
    h_kill(&h, 5);
    h_inject(&h, 2, 3, 1000000, 17, data, sizeof(data));
    h_inject(&h, 2, 3, 2, 19, data, sizeof(data));
    h_inject(&h, 4, 6, 4000, 18, data, sizeof(data));
    h_run(&h);
    h_assert_correct(&h, -1);
    h_destroy(&h);
}

/* corrected-batched's copy channel (copy_chan.h): batch messages as
 * message 0 of link right-1 (kind COLL_KIND_BCAST_BATCH, sequence field
 * = batch number 0), each from the receiver's left neighbour, taken by the
 * standing receive before the neighbour's real copy: a truncated entry
 * header, an entry longer than 64 bytes, an entry whose length runs past
 * the message, and a good entry for an instance that has not started.
 * The first three are dropped with a warning and counted; every rank gets
 * the data from its tree message. */
static void test_bcast_batched_bad_batches(void **state)
{
    harness_t h;
    unsigned char m[64];
    const unsigned k = COLL_KIND_BCAST_BATCH;
    (void)state;
    h_setup(&h, "bcast", "corrected-batched", 8);
    memset(m, 0, sizeof(m));
    put32(m, h.a.seq);
    h_inject_seq(&h, 2, 3, 2, 0, k, m, 4);
    put32(m + 4, 200);
    h_inject_seq(&h, 4, 5, 4, 0, k, m, 8 + 56);
    put32(m + 4, 16);
    h_inject_seq(&h, 5, 6, 5, 0, k, m, 8 + 8);
    put32(m, h.a.seq + 40);
    put32(m + 4, BCAST);
    h_inject_seq(&h, 6, 7, 6, 0, k, m, 8 + BCAST);
    h_start(&h, -1);
    h_run(&h);
    h_assert_correct(&h, -1);
    for (int r = 3; r <= 7; r++) {
        const cc_chan_t *ch = h.cs[r];
        assert_int_equal(ch->stats.bad, r == 3 || r == 5 || r == 6);
        assert_int_equal(ch->stats.offered, 0);
    }
    h_destroy(&h);
}

/* A well-formed copy of this instance of another size, at a rank that
 * lacks the data (its tree message comes later): taken as the payload it
 * is not; the rank ends with UCFT_ERR_TRUNCATED, the others with the
 * data. */
static void test_bcast_batched_copy_size(void **state)
{
    harness_t h;
    unsigned char m[64];
    (void)state;
    h_setup(&h, "bcast", "corrected-batched", 8);
    memset(m, 0, sizeof(m));
    put32(m, h.a.seq);
    put32(m + 4, BCAST / 2);
    h_inject_seq(&h, 6, 7, 6, 0, COLL_KIND_BCAST_BATCH, m, 8 + BCAST / 2);
    h_expect_mismatch(&h, (const int[]){7}, 1);
}

/* Binomial broadcast: a short message from the parent is not taken as
 * the data; the rank ends with UCFT_ERR_TRUNCATED and its child, told by
 * an error message, with UCFT_ERR_PROC_FAILED. */
static void test_bcast_binomial_short(void **state)
{
    harness_t h;
    static const unsigned char three[3] = {9, 9, 9};
    (void)state;
    h_setup(&h, "bcast", "binomial", 4);
    h_inject(&h, 0, 1, 0, COLL_KIND_BCAST_BINOMIAL, three, sizeof(three));
    h_start(&h, -1);
    h_run(&h);
    assert_true(h.done[1]);
    assert_int_equal(h.status[1], UCFT_ERR_TRUNCATED);
    assert_true(h.done[3]);
    assert_int_equal(h.status[3], UCFT_ERR_PROC_FAILED);
    /* Ranks 0 and 2 are correct. */
    for (int r = 0; r <= 2; r += 2) {
        assert_int_equal(h.status[r], UCFT_OK);
        assert_true(
            coll_oracle_of(h.op)->check(h.buf[r], &h.a, r, h.n, h.dead));
    }
    h_destroy(&h);
}

/* Corrected reduce, 9 ranks, f = 1: tree messages to the root with a
 * failure list longer than the message, a listed rank outside the job,
 * flags of the allreduce, and up-corrections from a sender that is no rank
 * and from ranks outside the receiver's group. Each is dropped: the root's
 * sum counts every rank exactly once. */
static void test_reduce_corrected_bad_messages(void **state)
{
    harness_t h;
    unsigned char m[256];
    (void)state;
    h_setup(&h, "reduce", "corrected", 9);
    size_t val = h.a.len;
    memset(m, 0, sizeof(m));
    put32(m + 4, 0x40000000u); /* list count, no entries */
    h_inject(&h, 1, 0, 1, K_TREE, m, 8 + val);
    memset(m, 0, sizeof(m));
    put32(m + 4, 1);
    put32(m + 8 + val, 0x7fffffffu); /* a rank outside the job */
    h_inject(&h, 1, 0, 1, K_TREE, m, 8 + val + 4);
    memset(m, 0, sizeof(m));
    put32(m, 4); /* RC_F_DECIDED: allreduce only */
    h_inject(&h, 1, 0, 1, K_TREE, m, 8 + val);
    memset(m, 0x7f, sizeof(m));
    h_inject(&h, 2, 3, 1000, K_UP, m, val);
    h_inject(&h, 6, 3, 6, K_UP, m, val);
    h_inject(&h, 5, 4, 5, K_UP, m, val);
    h_expect_dropped(&h);
}

/* The same kind of tree message to an inner rank (rank 1, parent of 5 in
 * the I(f)-tree of 9 ranks) listing a rank outside the job: dropped, not
 * forwarded to the root. */
static void test_reduce_corrected_bad_list_inner(void **state)
{
    harness_t h;
    unsigned char m[256];
    (void)state;
    h_setup(&h, "allreduce", "corrected", 9);
    size_t val = h.a.len;
    memset(m, 0, sizeof(m));
    put32(m + 4, 1);
    put32(m + 8 + val, 0x7fffffffu);
    assert_int_equal(itree_parent(5, 1), 1);
    h_inject(&h, 5, 1, 5, K_TREE, m, 8 + val + 4);
    h_expect_dropped(&h);
}

/* Corrected reduce: an up-correction of another size from the rank's
 * group member, and a tree message of another size from a child, end
 * their receivers with UCFT_ERR_TRUNCATED; once those are gone the others
 * complete, every live value exactly once. */
static void test_reduce_corrected_size_mismatch(void **state)
{
    harness_t h;
    unsigned char m[256];
    (void)state;
    h_setup(&h, "allreduce", "corrected", 9);
    size_t val = h.a.len;
    memset(m, 0, sizeof(m));
    h_inject(&h, 4, 3, 4, K_UP, m, 4 + val + 4);   /* 4 bytes too many */
    h_inject(&h, 5, 1, 5, K_TREE, m, 8 + val + 2); /* not 4-byte entries */
    h_expect_mismatch(&h, (const int[]){1, 3}, 2);
}

/* The star allreduce, 4 ranks: a short value to the root ends the root
 * with UCFT_ERR_TRUNCATED, and its error message ends every other rank
 * with UCFT_ERR_PROC_FAILED (nobody waits for ever); a long result to a
 * rank ends that rank alone, the others complete correctly. */
static void test_allreduce_linear_sizes(void **state)
{
    harness_t h;
    unsigned char m[256];
    (void)state;
    memset(m, 0, sizeof(m));
    h_setup(&h, "allreduce", "linear", 4);
    h_inject(&h, 2, 0, 2, COLL_KIND_LINEAR, m, h.a.len - 4);
    h_start(&h, -1);
    h_run(&h);
    for (int r = 0; r < h.n; r++) {
        assert_true(h.done[r]);
        assert_int_equal(h.status[r],
                         r == 0 ? UCFT_ERR_TRUNCATED : UCFT_ERR_PROC_FAILED);
    }
    h_destroy(&h);
    h_setup(&h, "allreduce", "linear", 4);
    h_inject(&h, 0, 3, 0, COLL_KIND_LINEAR, m, h.a.len + 4);
    h_expect_mismatch(&h, (const int[]){3}, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcast_corrected_short),
        cmocka_unit_test(test_bcast_corrected_long),
        cmocka_unit_test(test_bcast_corrected_bad_source_and_kind),
        cmocka_unit_test(test_bcast_binomial_short),
        cmocka_unit_test(test_bcast_batched_bad_batches),
        cmocka_unit_test(test_bcast_batched_copy_size),
        cmocka_unit_test(test_reduce_corrected_bad_messages),
        cmocka_unit_test(test_reduce_corrected_bad_list_inner),
        cmocka_unit_test(test_reduce_corrected_size_mismatch),
        cmocka_unit_test(test_allreduce_linear_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
